//! Codec tests on a synthetic moving sequence. Each codec test is skipped
//! (with a message) when this build lacks the codec's library, unless
//! `RTCC_REQUIRE_CODECS=1`, which turns the skip into a failure.

use std::time::Instant;

use super::*;
use crate::picture::Picture;

const FPS: f64 = 30.0;

/// Returns false (and prints why) when `codec` cannot be tested here.
fn require(codec: Codec) -> bool {
    match codec.available() {
        Ok(()) => true,
        Err(e) => {
            if std::env::var("RTCC_REQUIRE_CODECS").map(|v| v == "1").unwrap_or(false) {
                panic!("RTCC_REQUIRE_CODECS=1 but {codec} is unavailable: {e}");
            }
            eprintln!("skipping {codec} test: {e}");
            false
        }
    }
}

/// splitmix64: seeded, portable noise.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d1_049e_b133_11eb);
    z ^ (z >> 31)
}

/// Frame `n` of a synthetic camera-like sequence: a diagonal gradient with a
/// slowly panning sinusoidal texture, three textured squares moving at
/// different speeds, and seeded per-frame noise (±3 luma levels).
fn test_frame(width: u32, height: u32, n: u32, seed: u64) -> Picture {
    let (w, h) = (width as usize, height as usize);
    let (cw, ch) = chroma_size(width, height);
    let (cw, ch) = (cw as usize, ch as usize);
    let t = n as f64;
    let side = (h / 4).max(4).min(w).min(h);
    // (x0, y0, vx, vy) per square, in pixels and pixels/frame.
    let squares = [(0.1, 0.2, 3.0, 1.0), (0.6, 0.5, -2.0, 1.5), (0.3, 0.6, 1.0, -2.5)];
    let pos = |i: usize| -> (usize, usize) {
        let (x0, y0, vx, vy) = squares[i];
        let bounce = |start: f64, v: f64, range: usize| -> usize {
            let range = range.max(1) as f64;
            let p = (start * range + v * t * (width as f64 / 640.0)).rem_euclid(2.0 * range);
            (if p > range { 2.0 * range - p } else { p }) as usize
        };
        (bounce(x0, vx, w.saturating_sub(side)), bounce(y0, vy, h.saturating_sub(side)))
    };
    let placed: Vec<(usize, usize)> = (0..squares.len()).map(pos).collect();
    let in_square = |x: usize, y: usize| -> Option<usize> {
        placed.iter().position(|&(sx, sy)| x >= sx && x < sx + side && y >= sy && y < sy + side)
    };
    let scale = 640.0 / width as f64; // same picture content at every size

    let mut y_plane = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let (fx, fy) = (x as f64 * scale, y as f64 * scale);
            let mut v = match in_square(x, y) {
                Some(i) => {
                    let (sx, sy) = placed[i];
                    let cell = ((x - sx) * 8 / side + (y - sy) * 8 / side + i) % 2;
                    if cell == 0 {
                        60.0 + 30.0 * i as f64
                    } else {
                        200.0 - 20.0 * i as f64
                    }
                }
                None => {
                    40.0 + 110.0 * fx / 640.0
                        + 60.0 * fy / 360.0
                        + 18.0 * ((fx + 1.5 * t) / 9.0).sin() * ((fy - 0.5 * t) / 13.0).cos()
                }
            };
            let r = mix(seed ^ (u64::from(n) << 32) ^ (y * w + x) as u64);
            v += (r % 7) as f64 - 3.0;
            y_plane[y * w + x] = v.round().clamp(0.0, 255.0) as u8;
        }
    }
    let mut u_plane = vec![0u8; cw * ch];
    let mut v_plane = vec![0u8; cw * ch];
    for y in 0..ch {
        for x in 0..cw {
            let (lx, ly) = ((2 * x).min(w - 1), (2 * y).min(h - 1));
            let (u, v) = match in_square(lx, ly) {
                Some(0) => (90.0, 200.0),
                Some(1) => (180.0, 80.0),
                Some(_) => (70.0, 100.0),
                None => {
                    let (fx, fy) = (lx as f64 * scale / 640.0, ly as f64 * scale / 360.0);
                    (128.0 + 40.0 * (fx * std::f64::consts::PI).sin() - 20.0 * fy, 128.0 + 30.0 * (fy * 3.0).cos())
                }
            };
            u_plane[y * cw + x] = u as u8;
            v_plane[y * cw + x] = v as u8;
        }
    }
    Picture { width, height, y: y_plane, u: u_plane, v: v_plane }
}

fn psnr_y(a: &Picture, b: &Picture) -> f64 {
    assert_eq!((a.width, a.height), (b.width, b.height), "PSNR of different sizes");
    psnr(&a.y, &b.y)
}

/// PSNR of one plane (8-bit).
fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let se: u64 = a.iter().zip(b).map(|(&p, &q)| (i64::from(p) - i64::from(q)).pow(2) as u64).sum();
    let mse = se as f64 / a.len() as f64;
    if mse == 0.0 {
        99.0
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}

fn encode(enc: &mut dyn VideoEncoder, pic: &Picture, force_key: bool) -> Option<EncodedPicture> {
    enc.encode(pic, force_key).unwrap_or_else(|e| panic!("encode failed: {e}"))
}

fn decode(dec: &mut dyn VideoDecoder, frame: &EncodedPicture) -> Picture {
    dec.decode(&frame.data).unwrap_or_else(|e| panic!("decode failed: {e}")).expect("decoder output no picture")
}

/// An encoder with settings `s` and a decoder of its codec.
fn encoder_and_decoder(s: &EncoderSettings) -> (Box<dyn VideoEncoder>, Box<dyn VideoDecoder>) {
    (new_encoder(s).unwrap(), new_decoder(s.codec).unwrap())
}

/// Each test once per codec, skipped where the codec cannot be tested.
macro_rules! per_codec {
    ($($name:ident),* $(,)?) => {
        mod vp8 {
            $( #[test] fn $name() { if super::require(super::Codec::Vp8) { super::$name(super::Codec::Vp8) } } )*
        }
        mod h264 {
            $( #[test] fn $name() { if super::require(super::Codec::H264) { super::$name(super::Codec::H264) } } )*
        }
    };
}

per_codec!(
    roundtrip_psnr_360p_1mbps,
    first_frame_and_forced_frames_are_key,
    periodic_key_frames,
    frame_dropping_follows_the_setting,
    set_rates_raises_the_rate,
    set_size_reconfigures_with_a_key_frame,
    deterministic_output,
    bad_input_gives_errors,
    timing_640x360,
);

fn roundtrip_psnr_360p_1mbps(codec: Codec) {
    let s = EncoderSettings::webrtc(codec, 640, 360, FPS, 1_000_000);
    let (mut enc, mut dec) = encoder_and_decoder(&s);
    let frames = 90;
    let max_qp = if codec == Codec::Vp8 { 127 } else { 51 };
    let (mut bytes, mut psnrs, mut chroma) = (0usize, Vec::new(), f64::INFINITY);
    for n in 0..frames {
        let src = test_frame(640, 360, n, 1);
        let Some(f) = encode(enc.as_mut(), &src, false) else { continue };
        bytes += f.data.len();
        assert!((0..=max_qp).contains(&f.qp), "{codec}: qp {}", f.qp);
        let out = decode(dec.as_mut(), &f);
        assert_eq!((out.width, out.height), (640, 360));
        assert_eq!(out.u.len(), 320 * 180);
        psnrs.push(psnr_y(&src, &out));
        chroma = chroma.min(psnr(&src.u, &out.u)).min(psnr(&src.v, &out.v));
    }
    let mean = psnrs.iter().sum::<f64>() / psnrs.len() as f64;
    let min = psnrs.iter().cloned().fold(f64::INFINITY, f64::min);
    let kbps = bytes as f64 * 8.0 / (frames as f64 / FPS) / 1000.0;
    println!(
        "{codec} 640x360 @1 Mbps: {} of {frames} frames encoded, {kbps:.0} kbps, luma PSNR mean {mean:.2} dB, min {min:.2} dB, \
         chroma min {chroma:.2} dB",
        psnrs.len()
    );
    assert!(chroma > 30.0, "{codec}: chroma PSNR {chroma:.2} dB");
    assert!(psnrs.len() >= frames as usize * 9 / 10, "{codec}: too many dropped frames");
    assert!(mean > 30.0, "{codec}: mean PSNR {mean:.2} dB <= 30 dB");
    assert!(min > 25.0, "{codec}: min PSNR {min:.2} dB");
    assert!((600.0..1400.0).contains(&kbps), "{codec}: {kbps:.0} kbps for a 1000 kbps target");
}

fn first_frame_and_forced_frames_are_key(codec: Codec) {
    let s = EncoderSettings::webrtc(codec, 320, 180, FPS, 500_000);
    let (mut enc, mut dec) = encoder_and_decoder(&s);
    let mut keys = Vec::new();
    for n in 0..30 {
        let force = n == 10 || n == 20;
        let f = encode(enc.as_mut(), &test_frame(320, 180, n, 2), force).expect("frame dropped");
        decode(dec.as_mut(), &f);
        if f.key {
            keys.push(n);
        }
    }
    assert_eq!(keys, vec![0, 10, 20], "{codec}: key frames");
}

fn periodic_key_frames(codec: Codec) {
    for key_interval in [0, 15] {
        let mut s = EncoderSettings::webrtc(codec, 320, 180, FPS, 500_000);
        s.key_interval = key_interval;
        let mut enc = new_encoder(&s).unwrap();
        let keys: Vec<u32> = (0..61)
            .filter(|&n| encode(enc.as_mut(), &test_frame(320, 180, n, 3), false).is_some_and(|f| f.key))
            .collect();
        println!("{codec} key_interval {key_interval}: key frames at {keys:?}");
        if key_interval == 0 {
            assert_eq!(keys, vec![0], "{codec}: unexpected key frames");
        } else {
            assert!(keys.len() >= 4, "{codec}: key frames {keys:?}");
            assert!(keys.windows(2).all(|p| p[1] - p[0] == key_interval), "{codec}: key frames {keys:?}");
        }
    }
}

fn frame_dropping_follows_the_setting(codec: Codec) {
    // 640x360 noisy content at 60 kbps: far too little for every frame.
    let mut dropped = Vec::new();
    for frame_dropping in [true, false] {
        let mut s = EncoderSettings::webrtc(codec, 640, 360, FPS, 60_000);
        s.frame_dropping = frame_dropping;
        let (mut enc, mut dec) = encoder_and_decoder(&s);
        let mut n_dropped = 0;
        for n in 0..60 {
            match encode(enc.as_mut(), &test_frame(640, 360, n, 9), false) {
                Some(f) => assert_eq!(decode(dec.as_mut(), &f).width, 640),
                None => n_dropped += 1,
            }
        }
        dropped.push(n_dropped);
    }
    println!("{codec} at 60 kbps: {} of 60 frames dropped with frame dropping, {} without", dropped[0], dropped[1]);
    assert!(dropped[0] >= 5, "{codec}: rate control dropped only {} frames", dropped[0]);
    assert_eq!(dropped[1], 0, "{codec}: frames dropped with frame dropping off");
}

fn set_rates_raises_the_rate(codec: Codec) {
    let s = EncoderSettings::webrtc(codec, 640, 360, FPS, 500_000);
    let mut enc = new_encoder(&s).unwrap();
    let before_frames = 120; // 4 s at 500 kbps
    let after_frames = 90; // 3 s at 2 Mbps
    let mut sizes = Vec::new(); // bytes per input frame, 0 when dropped
    let mut qps = Vec::new(); // (frame, qp) of encoded frames
    for n in 0..before_frames + after_frames {
        if n == before_frames {
            enc.set_rates(2_000_000, FPS).unwrap();
            assert_eq!(enc.settings().target_bps, 2_000_000);
        }
        let f = encode(enc.as_mut(), &test_frame(640, 360, n, 4), false);
        if let Some(f) = &f {
            qps.push((n, f.qp));
        }
        sizes.push(f.map_or(0, |f| f.data.len()));
    }
    let mean_qp = |range: std::ops::Range<u32>| {
        let q: Vec<i32> = qps.iter().filter(|(n, _)| range.contains(n)).map(|&(_, q)| q).collect();
        q.iter().sum::<i32>() as f64 / q.len() as f64
    };
    let (qp_before, qp_after) = (mean_qp(30..before_frames), mean_qp(before_frames + 30..before_frames + after_frames));
    let mean = |s: &[usize]| s.iter().sum::<usize>() as f64 / s.len() as f64;
    // Skip the first second (key frame, start-up) for the 500 kbps level.
    let before = mean(&sizes[30..before_frames as usize]);
    let after = mean(&sizes[before_frames as usize..]);
    let kbps = |bytes_per_frame: f64| bytes_per_frame * 8.0 * FPS / 1000.0;
    // Step response: seconds after the step until the trailing 1 s window
    // reaches 90 % of 2 Mbps (the window still holds 500 kbps frames at
    // first, so even an instant step takes ~0.87 s).
    let per_sec = FPS as usize;
    let step = before_frames as usize;
    let reached = (step + 1..=sizes.len()).find(|&end| {
        let bits = sizes[end - per_sec..end].iter().sum::<usize>() * 8;
        bits as f64 >= 0.9 * 2_000_000.0
    });
    let seconds: Vec<String> =
        (0..3).map(|i| format!("{:.0}", kbps(mean(&sizes[step + i * per_sec..step + (i + 1) * per_sec])))).collect();
    println!(
        "{codec} set_rates 500 kbps -> 2 Mbps: mean frame {before:.0} B ({:.0} kbps) -> {after:.0} B ({:.0} kbps), \
         x{:.2}; per second after the step: [{}] kbps; trailing 1 s rate >= 1.8 Mbps after {}; \
         mean qp {qp_before:.1} -> {qp_after:.1}",
        kbps(before),
        kbps(after),
        after / before,
        seconds.join(", "),
        reached.map_or("never (within 3 s)".to_string(), |end| format!("{:.2} s", (end - step) as f64 / FPS)),
    );
    assert!(after >= 2.0 * before, "{codec}: mean frame size only x{:.2} after set_rates", after / before);
    assert!(kbps(before) < 800.0, "{codec}: {:.0} kbps at a 500 kbps target", kbps(before));
    assert!(kbps(after) < 3000.0, "{codec}: {:.0} kbps at a 2 Mbps target", kbps(after));
    assert!(qp_after < qp_before - 2.0, "{codec}: qp {qp_before:.1} -> {qp_after:.1} after raising the rate");
}

fn set_size_reconfigures_with_a_key_frame(codec: Codec) {
    let s = EncoderSettings::webrtc(codec, 640, 360, FPS, 1_000_000);
    let (mut enc, mut dec) = encoder_and_decoder(&s);
    let mut n = 0;
    // 640x360 -> 320x180 (smaller: VP8 in place) -> 640x360 (back to the
    // initial size) -> 1280x720 (larger than initial: VP8 re-creates).
    for (w, h) in [(640, 360), (320, 180), (640, 360), (1280, 720)] {
        if n > 0 {
            enc.set_size(w, h).unwrap();
            assert_eq!((enc.settings().width, enc.settings().height), (w, h));
            let stale = if w == 640 { test_frame(320, 180, n, 5) } else { test_frame(640, 360, n, 5) };
            assert!(
                matches!(enc.encode(&stale, false), Err(CodecError::WrongSize { .. })),
                "{codec}: stale size accepted"
            );
        }
        for i in 0..8 {
            let src = test_frame(w, h, n, 5);
            n += 1;
            let f = encode(enc.as_mut(), &src, false).expect("frame dropped");
            assert_eq!(f.key, i == 0, "{codec} {w}x{h} frame {i}: key = {}", f.key);
            let out = decode(dec.as_mut(), &f);
            assert_eq!((out.width, out.height), (w, h), "{codec}: decoded size");
            let p = psnr_y(&src, &out);
            assert!(p > 22.0, "{codec} {w}x{h} frame {i}: PSNR {p:.2} dB");
        }
    }
}

fn deterministic_output(codec: Codec) {
    let run = || {
        let s = EncoderSettings::webrtc(codec, 640, 360, FPS, 800_000);
        let mut enc = new_encoder(&s).unwrap();
        let mut out = Vec::new();
        for n in 0..60 {
            if n == 20 {
                enc.set_rates(1_500_000, 25.0).unwrap();
            }
            let (w, h) = if n >= 45 {
                if n == 45 {
                    enc.set_size(320, 180).unwrap();
                }
                (320, 180)
            } else {
                (640, 360)
            };
            out.push(encode(enc.as_mut(), &test_frame(w, h, n, 6), n == 30));
        }
        out
    };
    let (a, b) = (run(), run());
    let total: usize = a.iter().flatten().map(|f| f.data.len()).sum();
    println!("{codec}: two runs of 60 frames, {total} bytes each, identical: {}", a == b);
    assert!(total > 10_000, "{codec}: suspiciously little output");
    assert!(a == b, "{codec}: two identical runs produced different bitstreams");
}

fn bad_input_gives_errors(codec: Codec) {
    let good = EncoderSettings::webrtc(codec, 320, 180, FPS, 500_000);
    let bad_settings: Vec<(&str, EncoderSettings)> = vec![
        ("zero width", EncoderSettings { width: 0, ..good.clone() }),
        ("huge height", EncoderSettings { height: 100_000, ..good.clone() }),
        ("fps 0.5", EncoderSettings { fps: 0.5, ..good.clone() }),
        ("fps NaN", EncoderSettings { fps: f64::NAN, ..good.clone() }),
        ("zero bitrate", EncoderSettings { target_bps: 0, ..good.clone() }),
        ("zero threads", EncoderSettings { threads: 0, ..good.clone() }),
    ];
    for (what, s) in bad_settings {
        match new_encoder(&s) {
            Err(CodecError::InvalidSettings { .. }) => {}
            Err(e) => panic!("{codec} {what}: wrong error {e}"),
            Ok(_) => panic!("{codec} {what}: accepted"),
        }
    }
    if codec == Codec::Vp8 {
        assert!(new_encoder(&EncoderSettings { speed: 17, ..good.clone() }).is_err());
        // VP8 takes odd and tiny sizes.
        for (w, h) in [(321, 181), (1, 1)] {
            let mut enc = new_encoder(&EncoderSettings { width: w, height: h, ..good.clone() }).unwrap();
            let f = encode(enc.as_mut(), &test_frame(w, h, 0, 7), false).expect("dropped");
            let out = decode(new_decoder(codec).unwrap().as_mut(), &f);
            assert_eq!((out.width, out.height), (w, h));
        }
    } else {
        assert!(new_encoder(&EncoderSettings { speed: 3, ..good.clone() }).is_err());
        for speed in [-6, 0, 1, 2] {
            let mut enc = new_encoder(&EncoderSettings { speed, ..good.clone() }).unwrap();
            assert!(encode(enc.as_mut(), &test_frame(320, 180, 0, 7), false).is_some_and(|f| f.key));
        }
        for (w, h) in [(321, 180), (320, 181), (8, 8)] {
            let e = new_encoder(&EncoderSettings { width: w, height: h, ..good.clone() }).err();
            assert!(matches!(e, Some(CodecError::InvalidSettings { .. })), "{w}x{h}: {e:?}");
        }
    }

    let mut enc = new_encoder(&good).unwrap();
    let e = enc.encode(&test_frame(640, 360, 0, 7), false).expect_err("wrong size accepted");
    assert!(matches!(e, CodecError::WrongSize { .. }), "{e}");
    println!("{codec} wrong size: {e}");
    let mut broken = test_frame(320, 180, 0, 7);
    broken.u.truncate(10);
    let e = enc.encode(&broken, false).expect_err("short chroma plane accepted");
    assert!(matches!(e, CodecError::BadPicture { .. }), "{e}");
    assert!(enc.set_rates(0, FPS).is_err());
    assert!(enc.set_rates(500_000, f64::INFINITY).is_err());
    assert!(enc.set_size(0, 180).is_err());
    assert_eq!((enc.settings().width, enc.settings().target_bps), (320, 500_000));
    // Still usable after the rejected calls.
    let frames: Vec<EncodedPicture> =
        (0..3).map(|n| encode(enc.as_mut(), &test_frame(320, 180, n, 7), false).expect("dropped")).collect();

    let mut dec = new_decoder(codec).unwrap();
    assert!(matches!(dec.decode(&[]), Err(CodecError::BadBitstream { .. })));
    // A delta frame before any key frame, garbage, and a truncated key frame
    // must not panic (errors or no output are both fine).
    let _ = dec.decode(&frames[1].data);
    let mut noise = vec![0u8; 4000];
    for (i, b) in noise.iter_mut().enumerate() {
        *b = mix(i as u64) as u8;
    }
    let garbage = dec.decode(&noise);
    println!("{codec} garbage decode: {:?}", garbage.as_ref().map(|p| p.as_ref().map(|p| (p.width, p.height))));
    let _ = dec.decode(&frames[0].data[..frames[0].data.len() / 3]);
    // A fresh decoder still decodes the real stream.
    let mut dec = new_decoder(codec).unwrap();
    for f in &frames {
        assert_eq!(decode(dec.as_mut(), f).width, 320);
    }
}

fn timing_640x360(codec: Codec) {
    let s = EncoderSettings::webrtc(codec, 640, 360, FPS, 1_000_000);
    let (mut enc, mut dec) = encoder_and_decoder(&s);
    let pics: Vec<Picture> = (0..150).map(|n| test_frame(640, 360, n, 8)).collect();
    let (mut t_enc, mut t_dec, mut decoded) = (0.0, 0.0, 0);
    for p in &pics {
        let t0 = Instant::now();
        let f = encode(enc.as_mut(), p, false);
        t_enc += t0.elapsed().as_secs_f64();
        if let Some(f) = f {
            let t1 = Instant::now();
            decode(dec.as_mut(), &f);
            t_dec += t1.elapsed().as_secs_f64();
            decoded += 1;
        }
    }
    println!(
        "{codec} timing 640x360 @1 Mbps, speed {}: encode {:.2} ms/frame, decode {:.2} ms/frame ({} frames{})",
        s.speed,
        t_enc * 1000.0 / pics.len() as f64,
        t_dec * 1000.0 / decoded.max(1) as f64,
        pics.len(),
        if cfg!(debug_assertions) { ", debug build" } else { "" },
    );
}

#[test]
fn names_and_availability() {
    for c in [Codec::Vp8, Codec::H264] {
        assert_eq!(Codec::parse(c.name()), Some(c));
        assert_eq!(Codec::parse(&c.name().to_uppercase()), Some(c));
    }
    assert_eq!(Codec::parse("H.264"), Some(Codec::H264));
    assert_eq!(Codec::parse("vp9"), None);
    assert_eq!((Codec::Vp8.to_string(), Codec::H264.to_string()), ("VP8".to_string(), "H.264".to_string()));

    let s = EncoderSettings::webrtc(Codec::Vp8, 640, 360, 30.0, 1_000_000);
    assert_eq!((s.speed, s.key_interval, s.frame_dropping, s.threads), (-6, 3000, true, 1));

    for (c, compiled) in [(Codec::Vp8, cfg!(rtcc_vpx)), (Codec::H264, cfg!(rtcc_h264))] {
        assert_eq!(c.available().is_ok(), compiled);
        let s = EncoderSettings::webrtc(c, 320, 180, 30.0, 300_000);
        match (new_encoder(&s), new_decoder(c)) {
            (Ok(_), Ok(_)) if compiled => {}
            (Err(e), Err(d)) if !compiled => {
                let msg = e.to_string();
                println!("{msg}");
                assert!(matches!(e, CodecError::Unavailable { .. }));
                assert!(msg.contains(c.library()) && msg.contains("apt-get install"), "{msg}");
                assert_eq!(msg, d.to_string());
            }
            (e, d) => panic!("{c}: compiled {compiled} but encoder {:?} / decoder {:?}", e.err(), d.err()),
        }
    }
}
