//! Eqs. 1–6 and every Fig. 4 transition with hand-computed values, then the
//! whole controller over `Pair`. Eq. 7 is the `noise` encoder's (its test
//! sits in encoder.rs).

use super::*;
use crate::controller::testing::{params, us};
use crate::packet::FramePos;
use crate::pair::Pair;

const PKT: DataSize = DataSize::from_bytes(1200);

fn config(given: &[(&str, &str)]) -> PibesConfig {
    PibesConfig::from_params(&params(given), &ControllerContext::default()).unwrap()
}

fn cfg() -> ShareConfig {
    config(&[]).share
}

#[test]
fn params_are_checked() {
    let ctx = ControllerContext::default();
    let err = |g: &[(&str, &str)]| PibesConfig::from_params(&params(g), &ctx).unwrap_err().to_string();
    assert!(err(&[("n_min", "7")]).contains("n_min"), "{}", err(&[("n_min", "7")]));
    assert!(err(&[("s_min", "0.9")]).contains("s_min"));
    assert!(err(&[("s_share", "0.99")]).contains("s_share"));
    assert!(err(&[("alpha", "0")]).contains("alpha"));
    assert!(err(&[("min_rate", "2Mbps"), ("max_rate", "1Mbps")]).contains("min_rate"));
    let c = config(&[]);
    assert_eq!((c.n_min, c.n_max, c.alpha, c.beta, c.fec, c.round_up), (3, 6, 0.1, 0.1, 0.1, false));
    assert!(err(&[("rounding", "down")]).contains("rounding"));
    assert_eq!(
        c.share,
        ShareConfig { s_max: 0.95, s_share: 0.8, s_min: 0.5, delta: 0.05, delta_up: 0.01, delta_down: 0.05 }
    );
}

#[test]
fn eq1_burst_size() {
    // n_b = max(3, min(⌈n_f/2⌉, 6)), never more than the frame.
    let s = FrameSchedule::HalfBurst { min: 3, max: 6 };
    let got: Vec<u16> = [1, 2, 3, 5, 6, 7, 8, 12, 13, 20].iter().map(|&n| s.burst_packets(n)).collect();
    assert_eq!(got, [1, 2, 3, 3, 3, 4, 4, 6, 6, 6]);
    assert_eq!(config(&[]).schedule(), s);
}

#[test]
fn eq2_and_eq4_ewma() {
    // d_0 = 1; d_1 = 0.1·2 + 0.9·1 = 1.1; d_2 = 0.1·0.5 + 0.9·1.1 = 1.04.
    let mut e = Ewma::default();
    assert_eq!(e.get(), None);
    for (x, want) in [(1.0, 1.0), (2.0, 1.1), (0.5, 1.04)] {
        e.add(0.1, x);
        assert!((e.get().unwrap() - want).abs() < 1e-12, "{:?} vs {want}", e.get());
    }
}

/// A media packet `index` of a `count`-packet frame, arriving at `at_us`.
fn media(seq: u64, frame: u32, index: u16, count: u16, size: u64, at_us: Option<i64>) -> PacketResult {
    PacketResult {
        seq,
        kind: PacketKind::Media,
        size: DataSize::from_bytes(size),
        arrival: at_us.map(us),
        pos: FramePos { frame, index, count },
        ..PacketResult::default()
    }
}

/// One frame of `count` 1200 B packets: burst gaps `burst_us`, paced gaps
/// `paced_us`, starting at `t0`.
fn frame(first_seq: u64, frame: u32, count: u16, t0: i64, burst_us: i64, paced_us: i64) -> Vec<PacketResult> {
    let nb = config(&[]).schedule().burst_packets(count);
    let mut t = t0;
    (0..count)
        .map(|i| {
            if i > 0 {
                t += if i < nb { burst_us } else { paced_us };
            }
            media(first_seq + u64::from(i), frame, i, count, 1200, Some(t))
        })
        .collect()
}

fn feed(est: &mut InterArrival, packets: &[PacketResult]) {
    let c = config(&[]);
    for p in packets {
        est.on_packet(p, c.part(p));
    }
}

#[test]
fn eq3_bandwidth_from_burst_gaps() {
    // 12 packets: a 6-packet burst 1 ms apart (5 samples), then paced 1 ms.
    // d = 1 ms → B = 1200 B / 1 ms = 9.6 Mbps.
    let mut est = InterArrival::new(0.1, 0.1, PKT);
    feed(&mut est, &frame(0, 0, 12, 0, 1000, 1000));
    assert_eq!(est.samples(), (5, 5));
    assert_eq!(est.burst(), Some(Duration::from_millis(1)));
    assert_eq!(DataRate::from_size_per(PKT, est.burst().unwrap()), DataRate::from_kbps(9600));
    assert!(!est.competing());
}

#[test]
fn eq4_competition_needs_more_than_beta() {
    // Paced gaps 1.2 ms vs burst 1 ms: 20 % > β = 10 % → competing.
    let mut est = InterArrival::new(0.1, 0.1, PKT);
    feed(&mut est, &frame(0, 0, 12, 0, 1000, 1200));
    assert!(est.competing());
    // 1.09 ms is within 10 %.
    let mut est = InterArrival::new(0.1, 0.1, PKT);
    feed(&mut est, &frame(0, 0, 12, 0, 1000, 1090));
    assert!(!est.competing());
}

#[test]
fn pairs_need_consecutive_sequences_of_one_part_and_frame() {
    let mut est = InterArrival::new(0.1, 0.1, PKT);
    let c = config(&[]);
    // A 2-packet frame gives nothing (§IV-A: under n_min packets).
    feed(&mut est, &frame(0, 0, 2, 0, 1000, 1000));
    assert_eq!(est.samples(), (0, 0));
    // Lost packet 11: pairs (10, 11) and (11, 12) are gone.
    let mut f = frame(10, 1, 6, 10_000, 1000, 1000);
    f[1].arrival = None;
    feed(&mut est, &f);
    // Burst part is 3 packets (10, 11, 12): no pair left; paced 13, 14, 15: two.
    assert_eq!(est.samples(), (0, 2));
    // A parity packet between two media packets breaks the pair.
    let parity = PacketResult { seq: 21, kind: PacketKind::Fec, arrival: Some(us(30_500)), ..f[0] };
    let a = media(20, 2, 3, 8, 1200, Some(30_000));
    let b = media(22, 2, 4, 8, 1200, Some(31_000));
    assert_eq!(c.part(&parity), None);
    feed(&mut est, &[a, parity, b]);
    assert_eq!(est.samples(), (0, 2));
    // Different frames never pair, even on consecutive sequences.
    feed(&mut est, &[media(30, 3, 7, 8, 1200, Some(40_000)), media(31, 4, 0, 8, 1200, Some(40_100))]);
    assert_eq!(est.samples(), (0, 2));
}

#[test]
fn gaps_scale_to_the_nominal_packet() {
    // 600 B packets 0.5 ms apart are a 1200 B packet per 1 ms: 9.6 Mbps.
    let mut est = InterArrival::new(0.1, 0.1, PKT);
    let f: Vec<_> = (0..8).map(|i| media(i, 0, i as u16, 8, 600, Some(500 * i as i64))).collect();
    feed(&mut est, &f);
    assert_eq!(est.burst(), Some(Duration::from_millis(1)));
}

#[test]
fn eq5_rate_within_encoder_range() {
    // s·B = 0.95 · 4 Mbps = 3.8 Mbps; R_max = 3 Mbps caps it; R_min lifts.
    let mk = |g: &[(&str, &str)], b: u64| {
        let mut p = Pibes::new(config(g));
        p.estimate = DataRate::from_kbps(b);
        p.update();
        p.rate
    };
    assert_eq!(mk(&[], 4000), DataRate::from_kbps(3800));
    assert_eq!(mk(&[("max_rate", "3Mbps")], 4000), DataRate::from_kbps(3000));
    assert_eq!(mk(&[("min_rate", "1.5Mbps")], 1000), DataRate::from_kbps(1500));
}

#[test]
fn eq6_frame_target_in_whole_packets_with_fec() {
    let c = config(&[]);
    let up = config(&[("rounding", "up")]);
    // 3.8 Mbps · 33.333 ms = 15 833 B = 13.19 packets: ⌈·⌉ = 14; nearest
    // 13, or 14 once 600 B are owed from earlier frames.
    let r = DataRate::from_kbps(3800);
    assert_eq!(up.frame_packets(r, 0.0), 14);
    assert_eq!(c.frame_packets(r, 0.0), 13);
    assert_eq!(c.frame_packets(r, 600.0), 14);
    // 10 % FEC: round(N·0.1/1.1) parities, at least one.
    assert_eq!(c.split(14), (13, 1));
    assert_eq!(c.split(23), (21, 2));
    assert_eq!(config(&[("fec", "0")]).split(14), (14, 0));
    // One group per parity, one media packet to spare: 13 media → group 14;
    // 21 media, 2 parities → groups of 11.
    assert_eq!(PibesConfig::fec_group(13, 1), 14);
    assert_eq!(PibesConfig::fec_group(21, 2), 11);
    assert_eq!(PibesConfig::fec_group(14, 0), 0);
    // 300 kbps = 1250 B ≈ 1 packet: media floored at n_min = 3 packets; the
    // paper's eq. 6 alone keeps one media packet and its parity.
    assert_eq!(c.split(c.frame_packets(DataRate::from_kbps(300), 0.0)), (3, 1));
    let bare = config(&[("min_frame_packets", "0")]);
    assert_eq!(bare.split(bare.frame_packets(DataRate::from_kbps(300), 0.0)), (1, 1));
}

#[test]
fn carried_rounding_keeps_the_mean_rate() {
    // R·T = 13.19 packets each frame; over 300 frames the whole-packet
    // frames add up to within one packet of 300 · 13.19 = 3958.
    let mut p = Pibes::new(config(&[]));
    p.estimate = DataRate::from_kbps(4000);
    p.update();
    let mut packets = 0;
    for _ in 0..300 {
        packets += p.frame.0 + p.frame.1;
        p.on_frame_encoded(
            Time::ZERO,
            &FrameInfo { frame: 0, capture_time: Time::ZERO, size: PKT, packets: 1, key: false, si: 0.0, ti: 0.0 },
        );
    }
    let want = 300.0 * 3800e3 / 8.0 / 30.0 / 1200.0;
    assert!((packets as f64 - want).abs() <= 1.5, "{packets} vs {want}");
    // ⌈·⌉ sends 14 every frame: 4.03 Mbps on a 4 Mbps link.
    let mut up = Pibes::new(config(&[("rounding", "up")]));
    up.estimate = DataRate::from_kbps(4000);
    up.update();
    assert_eq!(up.frame, (13, 1));
}

#[test]
fn decision_paces_at_the_estimate_with_fec_and_half_bursts() {
    let mut p = Pibes::new(config(&[]));
    let mut fb = Feedback { report_time: us(100_000), received_at: us(120_000), ..Feedback::default() };
    fb.packets = frame(0, 0, 12, 50_000, 3000, 3000);
    p.on_feedback(us(120_000), &fb);
    // d = 3 ms → B = 3.2 Mbps; R = 0.95 · 3.2 = 3.04 Mbps → 12 667 B →
    // 11 packets, one of them parity (group 11); media 12 000 B per
    // 33.333 ms = 2.88 Mbps.
    let d = p.decision();
    assert_eq!(p.estimate(), Some(DataRate::from_kbps(3200)));
    assert_eq!(d.pacing_rate, DataRate::from_kbps(3200));
    assert_eq!(d.schedule, FrameSchedule::HalfBurst { min: 3, max: 6 });
    assert_eq!(d.fec, Some(FecPlan { group: 11 }));
    assert!((d.target_rate.kbps_f64() - 2880.0).abs() < 1.0, "{}", d.target_rate);
    assert_eq!(d.cwnd, None);
}

// Fig. 4, one transition per test.

#[test]
fn alone_rises_by_delta_to_s_max() {
    let mut s = Share::new(cfg());
    assert_eq!((s.get(), s.mode()), (0.95, Mode::Alone));
    s.s = 0.7;
    s.step(false, Some(1.0));
    assert!((s.get() - 0.75).abs() < 1e-12);
    s.s = 0.93;
    s.step(false, None);
    assert_eq!(s.get(), 0.95);
}

#[test]
fn detection_cuts_to_s_share() {
    let mut s = Share::new(cfg());
    s.step(true, Some(-1.0));
    assert_eq!((s.get(), s.mode()), (0.8, Mode::Sharing));
    // Entering below s_share keeps the lower value.
    let mut s = Share::new(cfg());
    s.s = 0.6;
    s.step(true, None);
    assert_eq!((s.get(), s.mode()), (0.6, Mode::Sharing));
}

#[test]
fn rising_rtt_lowers_by_delta_minus_to_s_min() {
    let mut s = Share::new(cfg());
    s.step(true, None);
    s.step(true, Some(0.001));
    assert!((s.get() - 0.75).abs() < 1e-12);
    s.s = 0.52;
    s.step(true, Some(0.001));
    assert_eq!(s.get(), 0.5);
    s.step(true, Some(0.001));
    assert_eq!(s.get(), 0.5);
}

#[test]
fn falling_rtt_raises_by_delta_plus_to_s_share() {
    let mut s = Share::new(cfg());
    s.step(true, None);
    s.s = 0.75;
    s.step(true, Some(-0.001));
    assert!((s.get() - 0.76).abs() < 1e-12);
    s.s = 0.795;
    s.step(true, Some(-0.001));
    assert_eq!(s.get(), 0.8);
}

#[test]
fn flat_or_unknown_rtt_holds_the_share() {
    let mut s = Share::new(cfg());
    s.step(true, None);
    s.s = 0.7;
    s.step(true, Some(0.0));
    s.step(true, None);
    assert_eq!(s.get(), 0.7);
}

#[test]
fn competition_gone_rises_by_delta() {
    let mut s = Share::new(cfg());
    s.step(true, None);
    s.s = 0.6;
    s.step(false, Some(1.0));
    assert_eq!(s.mode(), Mode::Alone);
    assert!((s.get() - 0.65).abs() < 1e-12);
}

#[test]
fn frame_rtt_is_the_mean_without_hold_time() {
    // Frame 0's two packets: sent at 0 and 1 ms, arrived 20 and 22 ms,
    // report sent 30 ms, received 50 ms: RTTs (50−0)−(30−20) = 40 ms and
    // (50−1)−(30−22) = 41 ms → 40.5 ms once frame 1 shows up.
    let p = |seq, frame, send, arr| PacketResult {
        seq,
        kind: PacketKind::Media,
        send_time: us(send),
        arrival: Some(us(arr)),
        pos: FramePos { frame, index: 0, count: 2 },
        ..PacketResult::default()
    };
    let mut r = FrameRtt::default();
    let fb = Feedback {
        report_time: us(30_000),
        received_at: us(50_000),
        packets: vec![p(0, 0, 0, 20_000), p(1, 0, 1000, 22_000)],
        ..Feedback::default()
    };
    r.on_feedback(&fb);
    assert_eq!(r.finished(), 0);
    let fb2 = Feedback {
        report_time: us(60_000),
        received_at: us(80_000),
        packets: vec![p(2, 1, 33_000, 53_000)],
        ..Feedback::default()
    };
    r.on_feedback(&fb2);
    assert_eq!(r.finished(), 1);
    assert_eq!(r.latest(), Some(Duration::from_micros(40_500)));
    assert_eq!(r.trend(), None);
}

/// 40 s alone on a fixed 4 Mbps link, 20 ms each way: the estimate settles
/// on the capacity, the share stays at s_max, and the flow fills ~95 %.
#[test]
fn alone_on_4_mbps_estimates_the_link() {
    let cap = DataRate::from_kbps(4000);
    let ctl = Pibes::new(config(&[]));
    let mut pair = Pair::builder().controller(Box::new(ctl)).delay(Duration::from_millis(20)).bottleneck(cap).build();
    pair.run_until(Time::from_millis(10_000));
    let c = pair.sender.controller();
    let mut st = std::collections::HashMap::new();
    c.state(&mut |k, v| {
        st.insert(k, v);
    });
    let est = st["capacity_estimate_kbps"];
    assert!((est - 4000.0).abs() < 0.03 * 4000.0, "estimate {est} kbps");
    assert_eq!(st["competition"], 0.0);
    assert_eq!(st["share"], 0.95);
    let bytes: u64 = pair
        .delivered()
        .filter(|t| t.arrival.is_some_and(|a| a >= Time::from_millis(2000)))
        .map(|t| t.packet.size.bytes())
        .sum();
    let util = bytes as f64 * 8.0 / (cap.bps() as f64 * 8.0);
    assert!(util > 0.85 && util < 1.0, "utilisation {util}");
}
