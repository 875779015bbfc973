//! A lost key frame freezes the display until a new key frame, which the
//! receiver's PLI brings one round trip later — not the next GOP boundary.

use std::collections::VecDeque;

use rtcc_core::controller::fixed::Fixed;
use rtcc_core::encoder::{Encoder, EncoderConfig};
use rtcc_core::feedback::ReceiverReport;
use rtcc_core::packet::Packet;
use rtcc_core::receiver::{Receiver, ReceiverConfig};
use rtcc_core::rng::Rng;
use rtcc_core::sender::{Sender, SenderConfig};
use rtcc_core::units::{DataRate, Duration, Time};

#[test]
fn lost_key_frame_is_replaced_after_a_pli_round_trip() {
    let frame_interval = Duration::from_micros(33_333);
    // Periodic key frames every 2 s: frame 60 is one.
    let enc = EncoderConfig::Noise { sigma: 0.0, key_interval: Some(Duration::from_secs(2)), key_ratio: 5.0 };
    let ctrl = Box::new(Fixed::new(DataRate::from_mbps(1), 2.5, DataRate::ZERO));
    let mut s = Sender::new(SenderConfig::default(), ctrl, Box::new(Encoder::new(enc, frame_interval, Rng::new(1))));
    let mut r = Receiver::new(ReceiverConfig::default());
    let one_way = Duration::from_millis(25);
    let mut wire: VecDeque<(Time, Packet)> = VecDeque::new();
    let mut back: VecDeque<(Time, ReceiverReport)> = VecDeque::new();
    let mut displays: Vec<(u32, Time, bool)> = Vec::new();
    let mut now = Time::ZERO;
    let end = Time::from_millis(3500);
    while now < end {
        let next = [s.poll_timeout(), r.poll_timeout(), wire.front().map(|w| w.0), back.front().map(|b| b.0)]
            .into_iter()
            .flatten()
            .min()
            .unwrap();
        now = next.max(now);
        while wire.front().is_some_and(|w| w.0 <= now) {
            let (at, p) = wire.pop_front().unwrap();
            let before = r.frame(p.frame).display;
            r.handle_packet(at, &p);
            if before.is_none() {
                if let Some(d) = r.frame(p.frame).display {
                    displays.push((p.frame, d, r.frame(p.frame).key));
                }
                // A delta frame completing can release frames waiting on it.
                for f in p.frame.saturating_sub(5)..p.frame + 5 {
                    let fr = r.frame(f);
                    if fr.display == Some(at) && !displays.iter().any(|d| d.0 == f) {
                        displays.push((f, at, fr.key));
                    }
                }
            }
        }
        if r.poll_timeout().is_some_and(|t| t <= now) {
            if let Some(rep) = r.poll_report(now) {
                back.push_back((now + one_way, rep));
            }
        }
        while back.front().is_some_and(|b| b.0 <= now) {
            let (_, rep) = back.pop_front().unwrap();
            s.handle_report(now, &rep);
        }
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
        while let Some(p) = s.poll_transmit(now) {
            // Every packet of frame 60, the 2 s key frame, is lost.
            if p.frame != 60 {
                wire.push_back((now + one_way, p));
            }
        }
    }
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
