//! A lost key frame freezes the display until a new key frame, which the
//! receiver's PLI brings one round trip later — not the next GOP boundary.

use rtcc_core::controller::fixed::Fixed;
use rtcc_core::encoder::{Encoder, EncoderConfig};
use rtcc_core::pair::Pair;
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataRate, Duration, Time};

#[test]
fn lost_key_frame_is_replaced_after_a_pli_round_trip() {
    let frame_interval = Duration::from_micros(33_333);
    // Periodic key frames every 2 s: frame 60 is one.
    let enc = EncoderConfig::Noise { sigma: 0.0, key_interval: Some(Duration::from_secs(2)), key_ratio: 5.0 };
    let mut pair = Pair::builder()
        .controller(Box::new(Fixed::new(DataRate::from_mbps(1), 2.5, DataRate::ZERO)))
        .encoder(Box::new(Encoder::new(enc, frame_interval, Rng::new(1))))
        .delay(Duration::from_millis(25))
        // Every packet of frame 60, the 2 s key frame, is lost.
        .drop(|p| p.frame == 60)
        .build();
    pair.run_until(Time::from_millis(3500));
    let displays: Vec<(u32, Time, bool)> = pair.displayed().iter().map(|d| (d.frame, d.at, d.key)).collect();
    let shown = |f: u32| displays.iter().find(|d| d.0 == f);
    let before = shown(59).expect("frame 59 shown").1;
    let resumed = displays.iter().filter(|d| d.1 > before).min_by_key(|d| d.1).expect("display resumes");
    assert!(resumed.2, "display resumes with a key frame, got frame {}", resumed.0);
    // Frame 61 completes ~2.06 s, the PLI follows 200 ms later, the key frame
    // arrives one RTT (50 ms) plus up to a frame interval after that.
    let gap = resumed.1 - before;
    assert!(gap > Duration::from_millis(250) && gap < Duration::from_millis(450), "frozen for {gap}");
    assert!(resumed.1 < Time::from_millis(3900), "well before the next GOP at 4 s");
    for f in 61..resumed.0 {
        assert!(shown(f).is_none(), "frame {f} depends on the lost key frame");
    }
}
