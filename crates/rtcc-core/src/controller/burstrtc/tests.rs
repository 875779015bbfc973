//! Eqs. 3–13 and §IV-A1's rules with hand-computed values, then the whole
//! controller on hand-made reports and over `Pair`.

use super::*;
use crate::controller::testing::{fixed_link, params};
use crate::controller::FramePos;
use crate::feedback::PacketResult;
use crate::packet::PacketKind;

fn ms(v: f64) -> Time {
    Time::from_micros((v * 1000.0).round() as i64)
}

fn config(given: &[(&str, &str)]) -> BurstRtcConfig {
    BurstRtcConfig::from_params(&params(given), &ControllerContext::default()).unwrap()
}

fn state(c: &dyn Controller, key: &str) -> f64 {
    let mut v = f64::NAN;
    c.state(&mut |k, x| v = if k == key { x } else { v });
    v
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn params_are_checked() {
    let ctx = ControllerContext::default();
    let err = |g: &[(&str, &str)]| BurstRtcConfig::from_params(&params(g), &ctx).unwrap_err().to_string();
    let e = err(&[("max_burst", "3")]);
    assert!(e.contains("max_burst") && e.contains("min_part"), "{e}");
    assert!(err(&[("min_rate", "2Mbps"), ("max_rate", "1Mbps")]).contains("min_rate"));
    for (k, v) in [
        ("beta", "-1"),
        ("step", "0"),
        ("window", "0"),
        ("fit_frames", "2"),
        ("sigma_alpha", "1.5"),
        ("l", "0"),
        ("min_part", "0"),
        ("d_min_window", "0s"),
        ("loss_frames", "0"),
        ("delay_bin", "0ms"),
        ("average", "median"),
        ("size_model", "x"),
    ] {
        assert!(err(&[(k, v)]).contains(k), "{k} = {v}: {}", err(&[(k, v)]));
    }
    assert!(crate::controller::create("burstrtc", &params(&[("gamma", "1")]), &ctx).is_err());
    let c = config(&[]);
    assert_eq!((c.beta, c.step, c.window, c.l), (0.15, DataRate::from_kbps(100), 10, 1));
    assert_eq!(c.size, SizeConfig { frames: 30, alpha: 0.8, content: true });
    assert_eq!((c.min_part, c.max_burst, c.d_min_window), (4, 20, Duration::from_secs(10)));
    assert_eq!((c.average, c.loss_frames, c.min_frame_packets), (Average::Time, 30, 2));
    assert_eq!(c.log_base, std::f64::consts::E);
    assert_eq!(config(&[("log_base", "10")]).log_base, 10.0);
    assert!(err(&[("log_base", "3")]).contains("log_base"));
    let c = config(&[("size_model", "target"), ("l", "30"), ("average", "rate")]);
    assert_eq!((c.size.content, c.l, c.average), (false, 30, Average::Rate));
}

/// §IV-A1: two halves, at least 4 packets each; under 8 packets the frame
/// is one part, burst or paced as the controller says; a burst of at most
/// 20, the excess paced. The burst is the end of the frame.
#[test]
fn burst_lengths_follow_section_iv_a1() {
    let s = |small_burst| FrameSchedule::PacedThenBurst { min: 4, max: 20, small_burst };
    let n = [1, 3, 7, 8, 9, 16, 40, 41, 100];
    let burst: Vec<u16> = n.iter().map(|&n| s(false).burst_packets(n)).collect();
    assert_eq!(burst, [0, 0, 0, 4, 4, 8, 20, 20, 20]);
    let burst: Vec<u16> = n.iter().map(|&n| s(true).burst_packets(n)).collect();
    assert_eq!(burst, [1, 3, 7, 4, 4, 8, 20, 20, 20]);
    let flags: Vec<bool> = (0..9).map(|i| s(false).is_burst(i, 9)).collect();
    assert_eq!(flags, [false, false, false, false, false, true, true, true, true]);
    assert!((0..7).all(|i| s(true).is_burst(i, 7) && !s(false).is_burst(i, 7)));
}

/// A media packet of `frame` (`index` of `count`), `bytes` long, sent and
/// arrived at the given ms.
fn pkt(seq: u64, frame: u32, index: u16, count: u16, bytes: u64, sent: f64, arrival: Option<f64>) -> PacketResult {
    PacketResult {
        seq,
        kind: PacketKind::Media,
        size: DataSize::from_bytes(bytes),
        send_time: ms(sent),
        arrival: arrival.map(ms),
        probe_cluster: -1,
        pos: FramePos { frame, index, count },
        late: false,
        ..Default::default()
    }
}

fn feedback(at: f64, packets: Vec<PacketResult>) -> Feedback {
    Feedback { report_time: ms(at), received_at: ms(at), packets, ..Feedback::default() }
}

/// One frame of eight 1000 B packets encoded at `at` ms: four paced 2 ms
/// apart (S = 3000 B / 6 ms = 4 Mbps) that arrive 2.5 ms apart behind a
/// 1 Mbps background (R = 3000 B / 7.5 ms = 3.2 Mbps), then four at once
/// that arrive 2 ms apart (Ĉ = 3000 B / 6 ms = 4 Mbps); 20 ms one way.
fn fig7_frame(frame: u32, at: f64) -> Vec<PacketResult> {
    let seq = u64::from(frame) * 8;
    let mut v = vec![];
    for i in 0..4u16 {
        let sent = at + 2.0 * f64::from(i);
        v.push(pkt(seq + u64::from(i), frame, i, 8, 1000, sent, Some(at + 20.0 + 2.5 * f64::from(i))));
    }
    for i in 4..8u16 {
        let arrival = at + 29.5 + 2.0 * f64::from(i - 4);
        v.push(pkt(seq + u64::from(i), frame, i, 8, 1000, at + 6.0, Some(arrival)));
    }
    v
}

/// Eqs. 3–6: Ĉ = 4 Mbps, S = 4 Mbps, R = 3.2 Mbps, B̂ = 4·(4/3.2 − 1) = 1 Mbps.
#[test]
fn eqs_3_to_6_on_a_hand_made_frame() {
    let mut log = FrameLog::default();
    assert!(log.on_encoded(0, ms(0.0), 8, 4).is_empty());
    let fb = feedback(60.0, fig7_frame(0, 0.0));
    let rep = log.on_feedback(&fb);
    // D = first arrival − encode = 20 ms.
    assert_eq!(rep.first, vec![(0, ms(0.0), Duration::from_millis(20))]);
    assert_eq!(rep.settled.len(), 1);
    let f = &rep.settled[0];
    let burst = train(&f.burst).unwrap();
    let paced = train(&f.paced).unwrap();
    assert_eq!(burst.send, None);
    assert!(close(burst.recv_rate(), 500_000.0, 1e-6), "Ĉ {}", burst.recv_rate());
    assert!(close(paced.send_rate().unwrap(), 500_000.0, 1e-6));
    assert!(close(paced.recv_rate(), 400_000.0, 1e-6));
    assert!(close(background(500_000.0, 500_000.0, 400_000.0), 125_000.0, 1e-6));
    assert_eq!(f.bytes(), (8000, 8000));
    let mut s = Sampler::new(10, Average::Time);
    assert_eq!(s.background(), None);
    s.on_frame(f);
    assert!(close(s.capacity().unwrap(), 500_000.0, 1e-6));
    assert!(close(s.background().unwrap(), 125_000.0, 1e-6));
}

/// Eq. 6 clamps: a paced part faster than Ĉ is no background, one far
/// slower is at most all of Ĉ.
#[test]
fn eq6_is_clamped_to_the_capacity() {
    assert_eq!(background(4.0, 4.0, 5.0), 0.0);
    assert_eq!(background(4.0, 4.0, 0.5), 4.0);
    assert_eq!(background(4.0, 4.0, 0.0), 4.0);
}

/// The averages over the past frames: Ĉ samples of 3000 B in 6 ms and in
/// 2 ms (0.5 and 1.5 MB/s) average to 1 MB/s by rate and to 6000 B / 8 ms
/// = 0.75 MB/s by time; only the newest `window` count.
#[test]
fn samples_are_averaged_over_the_window() {
    let frame = |id: u32, spacing: f64| Settled {
        frame: id,
        paced: vec![],
        burst: (0..4)
            .map(|i| Some(Seen { bytes: 1000, send: ms(0.0), arrival: Some(ms(20.0 + spacing * f64::from(i))) }))
            .collect(),
    };
    let mut rate = Sampler::new(2, Average::Rate);
    let mut time = Sampler::new(2, Average::Time);
    for s in [&mut rate, &mut time] {
        s.on_frame(&frame(0, 9.0));
        s.on_frame(&frame(1, 2.0));
        s.on_frame(&frame(2, 2.0 / 3.0));
    }
    assert!(close(rate.capacity().unwrap(), 1_000_000.0, 1e-6));
    assert!(close(time.capacity().unwrap(), 750_000.0, 1e-6));
    // Without a paced part, B̂ = 0; no capacity at all before a burst.
    assert_eq!(time.background(), Some(0.0));
    assert_eq!(Sampler::new(10, Average::Time).capacity(), None);
}

/// A part with a lost packet, or of one packet, gives no sample; a frame
/// is settled once whole or once a later frame is reported.
#[test]
fn losses_and_lost_reports_settle_frames_without_samples() {
    let mut log = FrameLog::default();
    log.on_encoded(0, ms(0.0), 8, 4);
    log.on_encoded(1, ms(33.0), 8, 4);
    let mut f0 = fig7_frame(0, 0.0);
    f0[5].arrival = None;
    // Frame 0's first six packets only, the sixth lost: not settled yet.
    let rep = log.on_feedback(&feedback(40.0, f0[..6].to_vec()));
    assert!(rep.settled.is_empty());
    assert_eq!(rep.first.len(), 1);
    // Frame 1 reported, frame 0's other packets never: frame 0 settles.
    let rep = log.on_feedback(&feedback(90.0, fig7_frame(1, 33.0)));
    assert_eq!(rep.settled.iter().map(|s| s.frame).collect::<Vec<_>>(), [0, 1]);
    let f = &rep.settled[0];
    assert!(train(&f.paced).is_some() && train(&f.burst).is_none());
    // 6 reported (one lost), 5000 B arrived.
    assert_eq!(f.bytes(), (6000, 5000));
    assert_eq!(train(&[Some(Seen { bytes: 1, send: ms(0.0), arrival: Some(ms(1.0)) })]), None);
}

/// Eq. 8 on an exact linear set: F = 0.9·T + 20·SI + 50·TI is recovered.
#[test]
fn eq8_least_squares_recovers_an_exact_fit() {
    let mut m = SizeModel::new(SizeConfig { frames: 30, alpha: 0.8, content: true });
    let rows = [(10_000.0, 40.0, 5.0), (12_000.0, 42.0, 9.0), (9_000.0, 55.0, 3.0), (11_000.0, 38.0, 20.0)];
    for (t, si, ti) in rows {
        m.on_frame(t, si, ti, 0.9 * t + 20.0 * si + 50.0 * ti);
    }
    let w = m.weights();
    assert!(m.full());
    assert!(close(w[0], 0.9, 1e-9) && close(w[1], 20.0, 1e-6) && close(w[2], 50.0, 1e-6), "{w:?}");
    assert!(close(m.mean(10_000.0, 50.0, 10.0), 9000.0 + 1000.0 + 500.0, 1e-5));
    // Only the last `frames` rows count.
    let mut short = SizeModel::new(SizeConfig { frames: 3, alpha: 0.8, content: true });
    short.on_frame(10_000.0, 40.0, 5.0, 1.0e6);
    for (t, si, ti) in &rows[1..] {
        short.on_frame(*t, *si, *ti, 0.9 * t + 20.0 * si + 50.0 * ti);
    }
    assert!(close(short.weights()[0], 0.9, 1e-9), "{:?}", short.weights());
}

/// Without SI and TI (0), or with them constant and the target constant,
/// eq. 8 has no unique fit: μ = w·T with w = ΣTF/ΣT².
#[test]
fn eq8_falls_back_to_the_target_alone() {
    let mut m = SizeModel::new(SizeConfig { frames: 30, alpha: 0.8, content: true });
    for (t, f) in [(1000.0, 800.0), (2000.0, 1700.0), (3000.0, 2400.0)] {
        m.on_frame(t, 0.0, 0.0, f);
    }
    // (0.8e6 + 3.4e6 + 7.2e6) / (1e6 + 4e6 + 9e6) = 11.4 / 14.
    assert!(!m.full());
    assert_eq!(m.weights(), [11.4 / 14.0, 0.0, 0.0]);
    let mut flat = SizeModel::new(SizeConfig { frames: 30, alpha: 0.8, content: true });
    for f in [900.0, 1100.0, 1000.0] {
        flat.on_frame(1000.0, 40.0, 6.0, f);
    }
    assert!(!flat.full());
    assert!(close(flat.weights()[0], 1.0, 1e-12));
    // `size_model = "target"` never fits SI and TI.
    let mut target = SizeModel::new(SizeConfig { frames: 30, alpha: 0.8, content: false });
    for (t, si, ti) in [(10_000.0, 40.0, 5.0), (12_000.0, 42.0, 9.0), (9_000.0, 55.0, 3.0)] {
        target.on_frame(t, si, ti, 0.9 * t + 20.0 * si + 50.0 * ti);
    }
    assert!(!target.full());
    assert_eq!(least_squares(&VecDeque::from(vec![[1.0, 0.0, 2.0, 3.0]; 5])), None);
}

/// Eq. 9: σ_i² = 0.8·σ_{i−1}² + 0.2·(μ − F_i)², μ the prediction before
/// frame i. Frame 1: μ = 1000 (w = 1 before any frame), F = 1200: σ² =
/// 0.2·200² = 8000; the fit becomes w = 1.2. Frame 2: μ = 1200, F = 1000:
/// σ² = 0.8·8000 + 0.2·200² = 14 400, σ = 120.
#[test]
fn eq9_sigma_is_an_ewma_of_the_squared_error() {
    let mut m = SizeModel::new(SizeConfig { frames: 30, alpha: 0.8, content: false });
    assert_eq!(m.sigma(), 0.0);
    m.on_frame(1000.0, 0.0, 0.0, 1200.0);
    assert!(close(m.sigma(), 8000f64.sqrt(), 1e-9));
    assert!(close(m.mean(1000.0, 0.0, 0.0), 1200.0, 1e-9));
    m.on_frame(1000.0, 0.0, 0.0, 1000.0);
    assert!(close(m.sigma(), 120.0, 1e-9));
}

/// Eq. 10 at 4 Mbps (500 B/ms) with 1 Mbps of background (125 B/ms) and
/// Δt = 100/3 ms: 10 000 B after a 5 ms queue leave 5 + 28.33 − 33.33 = 0;
/// 15 000 B leave 10 ms; never below D_min.
#[test]
fn eq10_recursion() {
    let dt = 100.0 / 3.0;
    assert!(close(step(5.0, 10_000.0, 500.0, 125.0, dt), 0.0, 1e-9));
    assert!(close(step(5.0, 15_000.0, 500.0, 125.0, dt), 10.0, 1e-9));
    assert_eq!(step(0.0, 0.0, 500.0, 125.0, dt), 0.0);
}

/// Eqs. 11–12: one step from q = 0 gives E[max(0, X)] = m·Φ(m/s) +
/// s·φ(m/s) for X ~ N(m, s); with s = 0 each step adds m exactly.
#[test]
fn eqs_11_12_propagate_the_delay_distribution() {
    assert!(close(normal_cdf(0.0), 0.5, 1e-7));
    assert!(close(normal_cdf(1.0), 0.841_344_746, 1e-7));
    assert!(close(normal_cdf(-2.0), 0.022_750_132, 1e-7));
    let (m, s) = (-3.0, 5.0);
    let z: f64 = m / s;
    let phi = (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let exact = m * normal_cdf(z) + s * phi;
    let d = DelayDist::point(0.0, 0.01).step(m, s);
    assert!(close(d.mean(), exact, 1e-3), "{} vs {exact}", d.mean());
    // Deterministic: 2.5 + 3 × 1.2 = 6.1, kept off the grid by the split.
    let mut d = DelayDist::point(2.5, 1.0);
    for _ in 0..3 {
        d = d.step(1.2, 0.0);
    }
    assert!(close(d.mean(), 6.1, 1e-12));
    // Everything below D_min stays at D_min.
    assert_eq!(DelayDist::point(4.0, 1.0).step(-10.0, 0.0).mean(), 0.0);
    // Over L frames the expected delays grow while frames exceed the link.
    let net = Network { c: 500.0, b: 0.0, dt: 100.0 / 3.0, q0: 0.0, frames: 3, bin: 1.0 };
    let e = expected_delays(&net, 500.0 * 100.0 / 3.0, 3000.0);
    assert!(e[0] > 0.0 && e[0] < e[1] && e[1] < e[2], "{e:?}");
}

/// Eq. 13 and §III-E's search at 4 Mbps (500 B/ms), no background, exact
/// frames (μ = T·Δt/8, σ = 0). With no queue, E[D] = D_min up to T = 4 Mbps:
/// U = ln T, the search stops at C − B. With 10 ms of queue ahead, E[q_1] =
/// max(0, 10 + Δt·(T/4000 − 1)) is 0 up to T = 2800 kbps and above it U
/// falls as T rises (dU/dT = 1/T − 0.15·Δt/4000 < 0 above 800 kbps): the
/// search steps down from 4000 to 2800 exactly.
#[test]
fn eq13_utility_search() {
    let dt = 100.0 / 3.0;
    let mu = |t: f64| t * dt / 8.0;
    let net = Network { c: 500.0, b: 0.0, dt, q0: 0.0, frames: 1, bin: 1.0 };
    let u = |net: Network| move |t: f64| utility(t, 0.15, &expected_delays(&net, mu(t), 0.0));
    assert!(close(u(net)(3000.0), 3000f64.ln(), 1e-12));
    assert_eq!(search(4000.0, 100.0, 30.0, u(net)), 4000.0);
    let queued = Network { q0: 10.0, ..net };
    assert!(close(u(queued)(3400.0), 3400f64.ln() - 0.15 * 5.0, 1e-9));
    assert!(close(search(4000.0, 100.0, 30.0, u(queued)), 2800.0, 1e-9));
    // Never below the floor.
    assert_eq!(search(4000.0, 100.0, 3500.0, u(queued)), 3500.0);
    // Eq. 13's log base weighs the rate term by 1/ln(base): with a queue that
    // never drains (q0 = 200 ms) U peaks at T = 1/(ln(base)·0.15·Δt/4000).
    assert!(close(utility_base(1000.0, 0.0, &[], 10.0), 3.0, 1e-12));
    let deep = Network { q0: 200.0, ..net };
    let by =
        |base: f64| search(4000.0, 100.0, 30.0, |t| utility_base(t, 0.15, &expected_delays(&deep, mu(t), 0.0), base));
    let (two, e, ten) = (by(2.0), by(std::f64::consts::E), by(10.0));
    assert!(close(e, 800.0, 1e-9), "{e}");
    assert!(two > e && e > ten, "{two} {e} {ten}");
    // 1 Mbps of background moves the start, not the answer's shape: C − B.
    let bg = Network { b: 125.0, ..net };
    assert_eq!(search(3000.0, 100.0, 30.0, u(bg)), 3000.0);
}

/// §IV-A1: Loss = 1 − received/sent bytes over the last frames, 0 before any.
#[test]
fn loss_over_the_last_frames() {
    let mut l = Loss::new(2);
    assert_eq!(l.get(), 0.0);
    l.on_frame(10_000, 10_000);
    l.on_frame(10_000, 8_000);
    assert!(close(l.get(), 0.1, 1e-12));
    // A frame with nothing reported says nothing; the oldest frame leaves.
    l.on_frame(0, 0);
    l.on_frame(5_000, 5_000);
    assert!(close(l.get(), 1.0 - 13_000.0 / 15_000.0, 1e-12));
}

/// §IV-A1's D_min: the mean of the longest ascending run that is not skewed
/// right; the first frame's delay at the start; 10 s of delays.
#[test]
fn d_min_is_the_mean_of_the_symmetric_part() {
    let mut v = [22.0, 30.0, 22.0, 40.0, 22.0, 22.0];
    assert_eq!(symmetric_mean(&mut v, 0.0), Some(22.0));
    // 19, 20, 20, 21 is symmetric (skewness 0); 35 skews it right.
    let mut v = [20.0, 35.0, 19.0, 21.0, 20.0];
    assert_eq!(symmetric_mean(&mut v, 0.0), Some(20.0));
    // A set skewed left throughout: all of it.
    let mut v = [10.0, 20.0, 21.0, 21.5];
    assert_eq!(symmetric_mean(&mut v, 0.0), Some(72.5 / 4.0));
    assert_eq!(symmetric_mean(&mut [], 0.0), None);
    let mut d = DMin::new(Duration::from_secs(10), 0.0);
    assert_eq!(d.get(), None);
    d.on_sample(Time::from_millis(0), 30.0);
    assert_eq!(d.get(), Some(30.0));
    d.on_sample(Time::from_millis(100), 22.0);
    d.on_sample(Time::from_millis(200), 22.0);
    d.on_sample(Time::from_millis(300), 22.0);
    assert_eq!(d.get(), Some(22.0));
    // 10 s later the early delays are gone.
    d.on_sample(Time::from_millis(10_250), 25.0);
    assert_eq!(d.get(), Some(23.5));
}

fn frame_info(frame: u32, bytes: u64, packets: u16) -> FrameInfo {
    FrameInfo {
        frame,
        capture_time: Time::ZERO,
        size: DataSize::from_bytes(bytes),
        packets,
        key: false,
        si: 0.0,
        ti: 0.0,
    }
}

/// 40 ms frames, so that 300 kbps is a whole 1500 B frame.
fn controller(given: &[(&str, &str)]) -> BurstRtc {
    let ctx = ControllerContext { frame_interval: Duration::from_millis(40), ..ControllerContext::DEFAULT };
    BurstRtc::new(BurstRtcConfig::from_params(&params(given), &ctx).unwrap())
}

/// 300 kbps over 40 ms: every frame exactly its target, so w = 1, σ = 0.
const T0: u64 = 1500;

/// The whole controller on hand-made reports. Before any Ĉ: frames burst,
/// the start rate. Frame 0 (eight 156 B packets, all burst) gives Ĉ; from
/// then frames are paced at Ĉ then burst, small ones alternating by id.
#[test]
fn the_controller_on_hand_made_reports() {
    let mut c = controller(&[]);
    let d = c.decision();
    assert_eq!((d.target_rate, d.schedule, d.cwnd), (DataRate::from_kbps(300), FrameSchedule::Burst, None));
    c.on_frame_encoded(ms(0.0), &frame_info(0, T0, 8));
    let burst: Vec<PacketResult> =
        (0..8).map(|i| pkt(i, 0, i as u16, 8, 156, 0.0, Some(20.0 + 2.0 * i as f64))).collect();
    c.on_feedback(ms(40.0), &feedback(40.0, burst));
    // Ĉ = 7 × 156 B / 14 ms = 78 000 B/s = 624 kbps.
    assert!(close(state(&c, "capacity_estimate_kbps"), 624.0, 1e-9));
    // No paced sample yet: still the start rate, now paced at Ĉ then burst;
    // frame 1 is odd, so paced if small.
    let d = c.decision();
    assert_eq!(d.target_rate, DataRate::from_kbps(300));
    assert_eq!(d.schedule, FrameSchedule::PacedThenBurst { min: 4, max: 20, small_burst: false });
    assert_eq!(d.pacing_rate, DataRate::from_kbps(624));
    c.on_frame_encoded(ms(40.0), &frame_info(1, T0, 8));
    assert_eq!(c.decision().schedule, FrameSchedule::PacedThenBurst { min: 4, max: 20, small_burst: true });
    let f1: Vec<PacketResult> =
        fig7_frame(1, 40.0).into_iter().map(|p| PacketResult { seq: p.seq + 100, ..p }).collect();
    c.on_feedback(ms(90.0), &feedback(90.0, f1));
    // Ĉ over the two bursts: (7·156 + 3000) B / (14 + 6) ms = 204.6 kB/s;
    // S = 4 Mbps, R = 3.2 Mbps: B̂ = 500 000·(204 600/400 000 − 1) < 0 → 0.
    assert!(close(state(&c, "capacity_estimate_kbps"), 1636.8, 1e-9));
    assert_eq!(state(&c, "background_estimate_kbps"), 0.0);
    // D_min: the symmetric part of {20, 20} ms.
    assert_eq!((state(&c, "d_min_ms"), state(&c, "measured_delay_ms"), state(&c, "loss")), (20.0, 20.0, 0.0));
    // No queue (1500 B drain in 7.3 ms of the 40), μ(Ĉ) = Ĉ·Δt exactly:
    // the search keeps its start, Ĉ − B̂.
    assert_eq!(c.decision().target_rate, DataRate::from_bps(1_636_800));
}

/// Each sample its own window: frame 0 all burst, eight 1000 B packets
/// arriving 2 ms apart from 20 ms, reported at 40 ms; frame 1 encoded.
fn after_an_all_burst_frame() -> BurstRtc {
    let mut c = controller(&[("window", "1")]);
    c.on_frame_encoded(ms(0.0), &frame_info(0, T0, 8));
    let f0: Vec<PacketResult> =
        (0..8).map(|i| pkt(i, 0, i as u16, 8, 1000, 0.0, Some(20.0 + 2.0 * i as f64))).collect();
    c.on_feedback(ms(40.0), &feedback(40.0, f0));
    c.on_frame_encoded(ms(40.0), &frame_info(1, T0, 8));
    c
}

/// Fig. 7's frame after an all-burst frame, each sample its own window:
/// Ĉ = 4 Mbps, S = 4 Mbps, R = 3.2 Mbps, B̂ = 1 Mbps; frames of exactly
/// their target (w = 1, σ = 0) and no queue: T = Ĉ − B̂ = 3 Mbps, paced at Ĉ.
#[test]
fn the_target_is_the_available_bandwidth_without_variation() {
    let mut c = after_an_all_burst_frame();
    c.on_feedback(ms(90.0), &feedback(90.0, fig7_frame(1, 40.0)));
    assert!(close(state(&c, "capacity_estimate_kbps"), 4000.0, 1e-9));
    assert!(close(state(&c, "background_estimate_kbps"), 1000.0, 1e-9));
    assert!(close(state(&c, "paced_rate_kbps"), 4000.0, 1e-9));
    assert!(close(state(&c, "paced_receive_kbps"), 3200.0, 1e-9));
    assert_eq!(state(&c, "frame_size_sigma_bytes"), 0.0);
    // The next frame's delay: 1500 B + 1 Mbps × 40 ms drain in 13 ms < 40.
    assert_eq!(state(&c, "predicted_delay_ms"), 20.0);
    let d = c.decision();
    assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_kbps(3000), DataRate::from_kbps(4000)));
    // μ at 3 Mbps: 15 000 B.
    assert_eq!((state(&c, "rate_kbps"), state(&c, "frame_size_mu_bytes")), (3000.0, 15_000.0));
    // A frame of 60 000 B leaves (60 000 + 5000)/500 − 40 = 90 ms of queue
    // for the next frame; the target drops to drain it.
    c.on_frame_encoded(ms(80.0), &frame_info(2, 60_000, 50));
    assert!(close(state(&c, "predicted_delay_ms"), 110.0, 1e-9));
    assert!(c.decision().target_rate < DataRate::from_kbps(1000), "{}", c.decision().target_rate);
}

/// Loss compensation: two of frame 1's burst packets lost; over frames 0
/// and 1, 14 000 of 16 000 B arrived: T·(1 − 0.125).
#[test]
fn the_target_is_compensated_for_loss() {
    let mut c = after_an_all_burst_frame();
    // The paced part arrives as sent (R = S: no background).
    let mut f1 = fig7_frame(1, 40.0);
    for (i, p) in f1.iter_mut().enumerate().take(4) {
        p.arrival = Some(ms(60.0 + 2.0 * i as f64));
    }
    f1[6].arrival = None;
    f1[7].arrival = None;
    c.on_feedback(ms(90.0), &feedback(90.0, f1));
    assert!(close(state(&c, "loss"), 2000.0 / 16_000.0, 1e-12));
    assert_eq!(state(&c, "background_estimate_kbps"), 0.0);
    // Ĉ from frame 0's burst (frame 1's lost packets give none): 4 Mbps.
    assert_eq!(c.decision().target_rate, DataRate::from_kbps(3500));
}

/// Closed loop over a 3 Mbps FIFO bottleneck, 20 ms each way, ideal
/// encoder: the link fills and frames wait little.
#[test]
fn fills_a_3_mbps_link() {
    let c = BurstRtc::new(config(&[]));
    let (utilisation, mean_owd) = fixed_link(Box::new(c), DataRate::from_mbps(3));
    eprintln!("burstrtc on 3 Mbps: utilisation {utilisation:.3}, mean one-way delay {mean_owd:.1} ms");
    assert!(utilisation > 0.9, "{utilisation}");
    assert!(mean_owd < 40.0, "{mean_owd} ms");
}
