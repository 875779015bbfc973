//! Real codecs in the loop (VP8 through libvpx, H.264 through OpenH264):
//! decoded-picture quality, loss handling, and the Dumbo pulse experiment.
//! Without the libraries the tests skip, unless RTCC_REQUIRE_CODECS=1 (the
//! test script sets it), which turns a missing library into a failure.

mod common;

use common::{f64s, i64s, run, u8s, Call};
use rtcc_video::codec::Codec;

fn have(codec: Codec) -> bool {
    match codec.available() {
        Ok(()) => true,
        Err(e) if std::env::var("RTCC_REQUIRE_CODECS").as_deref() == Ok("1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// A fixed-rate 360p call with a real codec over 10 Mbps, 20 ms.
fn fixed(codec: &str, rate: &str, secs: u32, content: &str) -> Call {
    Call::new(&format!("{secs}s"), r#""10Mbps""#).delay("20ms").flow(&format!(
        r#"controller = {{ name = "fixed", rate = "{rate}" }}
encoder = "{codec}"
resolution = "360p"
content = "{content}""#
    ))
}

#[test]
fn quality_rises_with_bitrate() {
    for codec in [Codec::Vp8, Codec::H264] {
        if !have(codec) {
            return;
        }
        for content in ["talking-head", "game"] {
            let mut last = (0.0, 0.0);
            for rate in ["500kbps", "1Mbps", "2Mbps", "3Mbps"] {
                let o = fixed(codec.name(), rate, 8, content).run();
                let f = &o.summary.flows[0];
                assert_eq!(f.quality_source, "decoded");
                assert_eq!(f.decode_errors, 0);
                assert_eq!(f.encoder, codec.name());
                let (p, s) = (f.psnr_db_mean.unwrap(), f.ssim_db_mean.unwrap());
                eprintln!("{codec} {content} {rate}: PSNR {p:.2} dB, SSIM {s:.2} dB, video {:.0} kbps", f.video_kbps);
                assert!(p > last.0 && s > last.1, "{codec} {content} {rate}: {p} dB / {s} dB after {last:?}");
                // No loss: the screen is each frame in turn, apart from the
                // few frames the encoder itself drops after its first key
                // frame, which repeat the one before.
                let on_screen = f.psnr_db_displayed.unwrap();
                assert!(on_screen <= p + 0.05 && on_screen > p - 1.5, "{f:?}");
                last = (p, s);
            }
            assert!(last.0 > 35.0 && last.0 < 60.0, "{codec} {content} at 3 Mbps: {} dB", last.0);
        }
    }
}

#[test]
fn a_lost_frame_freezes_the_screen_until_a_key_frame() {
    if !have(Codec::Vp8) {
        return;
    }
    // No retransmission: every loss breaks the reference chain.
    let flow = r#"controller = { name = "fixed", rate = "1Mbps" }
encoder = "vp8"
resolution = "360p"
content = "game"
nack = false"#;
    let o = Call::new("20s", r#""10Mbps""#).delay("20ms").link("loss = 0.01").flow(flow).run();
    let f = &o.summary.flows[0];
    let status = u8s(&o.frames, "status");
    let key = u8s(&o.frames, "key");
    let mut broken = false;
    let (mut resumed, mut lost) = (0, 0);
    for (st, k) in status.iter().zip(key) {
        match *st {
            0 if broken => {
                assert_eq!(*k, 1, "a delta frame was shown after a lost reference");
                broken = false;
                resumed += 1;
            }
            0 => {}
            1 | 2 => {
                broken = true;
                lost += 1;
            }
            _ => {}
        }
    }
    eprintln!(
        "lost/late {lost}, resumed on key frames {resumed}, PLIs {}, freeze {:.1} %, PSNR {:.2} dB per frame, {:.2} dB on screen",
        f.plis_sent,
        f.freeze_ratio.unwrap_or(0.0) * 100.0,
        f.psnr_db_mean.unwrap(),
        f.psnr_db_displayed.unwrap()
    );
    assert!(lost > 10 && resumed > 3, "lost {lost}, resumed {resumed}");
    assert!(f.plis_sent > 0 && f.freeze_ratio.unwrap() > 0.02);
    assert_eq!(f.decode_errors, 0, "the decoder only ever sees complete reference chains");
    // The frozen screen falls behind the moving game scene.
    assert!(f.psnr_db_displayed.unwrap() < f.psnr_db_mean.unwrap() - 1.0, "{f:?}");
}

#[test]
fn fec_rebuilds_lost_packets_bytes_and_the_decoder_shows_them() {
    for codec in [Codec::Vp8, Codec::H264] {
        if !have(codec) {
            continue;
        }
        // 5 % random loss, no retransmission: a frame survives a loss only
        // if its parity rebuilds the lost packet's bytes from the XOR of the
        // others (RFC 5109 §9.1), and only then can the decoder show it.
        let flow = format!(
            r#"controller = {{ name = "fixed", rate = "1Mbps" }}
encoder = "{}"
resolution = "360p"
content = "talking-head"
nack = false
fec = {{ group = 4 }}"#,
            codec.name()
        );
        let o = Call::new("20s", r#""10Mbps""#).delay("20ms").link("loss = 0.05").flow(&flow).run();
        let clean =
            Call::new("20s", r#""10Mbps""#).delay("20ms").flow(&flow).run().summary.flows[0].psnr_db_mean.unwrap();
        let f = &o.summary.flows[0];
        let (status, fec, psnr) = (u8s(&o.frames, "status"), u8s(&o.frames, "fec"), f64s(&o.frames, "psnr_db"));
        let shown = |want: u8| -> Vec<f64> {
            (0..status.len()).filter(|&i| status[i] == 0 && fec[i] == want).map(|i| psnr[i]).collect()
        };
        let (rebuilt, whole) = (shown(1), shown(0));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        eprintln!(
            "{codec}: {} packets rebuilt, {} frames shown with rebuilt bytes (PSNR {:.2} dB), {} without (PSNR {:.2} dB), decode errors {}; no loss: {clean:.2} dB",
            f.fec_recovered,
            rebuilt.len(),
            mean(&rebuilt),
            whole.len(),
            mean(&whole),
            f.decode_errors
        );
        assert!(f.fec_recovered > 40, "{f:?}");
        assert!(rebuilt.len() > 30, "{} frames shown with rebuilt packets", rebuilt.len());
        // A byte wrong or a length off and the decoder fails or draws garbage.
        assert_eq!((f.decode_errors, f.packetize_errors), (0, 0), "{codec}");
        assert!(rebuilt.iter().all(|p| p.is_finite()));
        // The summary reports the same frames' PSNR.
        assert!((f.psnr_db_fec_mean.unwrap() - mean(&rebuilt)).abs() < 1e-9, "{:?}", f.psnr_db_fec_mean);
        assert_eq!(f.frames_unassembled, 0);
        // VP8's decoder draws a corrupted slice without complaint (one flipped
        // bit per rebuilt packet costs 8 dB on every later frame): the
        // pictures must be as good as the same call's without loss.
        for (what, v) in [("rebuilt", &rebuilt), ("whole", &whole)] {
            assert!((mean(v) - clean).abs() < 1.0, "{codec} {what}: {:.2} dB against {clean:.2} dB", mean(v));
        }
    }
}

#[test]
fn same_seed_same_bits() {
    if !have(Codec::Vp8) || !have(Codec::H264) {
        return;
    }
    for codec in ["vp8", "h264"] {
        let text = fixed(codec, "800kbps", 4, "game").text().replace("loss", "") + "nack = true\n";
        let a = run(&text).summary.flows;
        let b = run(&text).summary.flows;
        assert_eq!(a, b, "{codec}");
    }
}

/// Dumbo thesis §3.1 pulse link (3 Mbps ↔ 500 kbps, 25 ms), shortened to
/// 20 s periods, with real VP8: Dumbo's faster ramp-up shows as higher mean
/// PSNR than GCC's (the thesis's +1.5 dB is a cellular-trace average; only
/// the direction is asserted).
#[test]
fn dumbo_beats_gcc_on_decoded_quality() {
    if !have(Codec::Vp8) {
        return;
    }
    let pulse = |controller: &str| {
        let link = r#"{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "20s" }"#;
        let flow = format!(
            "controller = \"{controller}\"\nencoder = \"vp8\"\nresolution = \"360p\"\ncontent = \"talking-head\""
        );
        Call::new("80s", link).flow(&flow).run()
    };
    let d = pulse("copa+dumbo");
    let g = pulse("gcc");
    let (df, gf) = (&d.summary.flows[0], &g.summary.flows[0]);
    eprintln!(
        "copa+dumbo: PSNR {:.2} dB ({:.2} on screen), {:.0} kbps; gcc: PSNR {:.2} dB ({:.2} on screen), {:.0} kbps",
        df.psnr_db_mean.unwrap(),
        df.psnr_db_displayed.unwrap(),
        df.video_kbps,
        gf.psnr_db_mean.unwrap(),
        gf.psnr_db_displayed.unwrap(),
        gf.video_kbps
    );
    assert!(df.psnr_db_mean.unwrap() > gf.psnr_db_mean.unwrap());
    assert!(df.video_kbps > gf.video_kbps);
}

/// Dumbo's resolution policy with real codecs: switches decode cleanly, and
/// the policy never asks for more lines than the source has.
#[test]
fn resolution_switches_stay_within_the_source() {
    for codec in [Codec::Vp8, Codec::H264] {
        if !have(codec) {
            return;
        }
        let link = r#"{ kind = "pulse", high = "4Mbps", low = "300kbps", every = "10s" }"#;
        let flow = format!(
            r#"controller = "copa+dumbo"
encoder = "{}"
resolution = "dumbo"
content = {{ kind = "game", resolution = "720p" }}"#,
            codec.name()
        );
        let o = Call::new("30s", link).flow(&flow).run();
        let f = &o.summary.flows[0];
        let heights = i64s(&o.frames, "height");
        let max = heights.iter().max().copied().unwrap_or(0);
        let min = heights.iter().min().copied().unwrap_or(0);
        eprintln!(
            "{codec}: {} switches, heights {min}..{max}, PSNR {:.2} dB",
            f.resolution_switches,
            f.psnr_db_mean.unwrap()
        );
        assert!(f.resolution_switches >= 2, "{f:?}");
        assert_eq!(max, 720, "never above the 720p source");
        assert!(min < 720);
        assert_eq!(f.decode_errors, 0);
    }
}
