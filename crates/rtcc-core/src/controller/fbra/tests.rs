use super::*;
use crate::controller::testing::ms;
use crate::feedback::{PacketResult, ReportStats};
use crate::packet::FramePos;
use crate::units::DataSize;

fn fbra(params: &[(&str, f64)]) -> Fbra {
    let mut p = Params::new();
    for &(k, v) in params {
        p = p.with(k, crate::controller::ParamValue::Num(v));
    }
    // Reports every 100 ms, as the paper's runs have them.
    let ctx = ControllerContext {
        start_rate: DataRate::from_kbps(100),
        feedback_interval: Duration::from_millis(100),
        ..ControllerContext::DEFAULT
    };
    Fbra::new(FbraConfig::from_params(&p, &ctx).unwrap())
}

fn clean(sent: f64, goodput: f64, c: f64) -> Report {
    Report { c_lo: c, c_hi: c, sent, goodput, ..Default::default() }
}

#[test]
fn stay_probes_then_up_turns_the_fec_into_media() {
    let mut f = fbra(&[]);
    // One clean report is not enough (the draft's two); at the second the
    // 2 s maximum is R itself, so STAY waits one more report (R above 90 %
    // of it), then probes with N from rate/reference = 1.
    f.on_report(ms(100), &clean(100e3, 100e3, 1.0));
    assert_eq!((f.state, f.fec(), f.waited), (State::Stay, None, false));
    f.on_report(ms(200), &clean(100e3, 100e3, 1.0));
    assert_eq!((f.state, f.fec(), f.waited), (State::Stay, None, true));
    f.on_report(ms(300), &clean(100e3, 100e3, 1.0));
    assert_eq!((f.state, f.fec()), (State::Probe, Some(14)));
    assert_eq!(f.probes, 1);
    // A clean PROBE report: media × (1 + 1/14), FEC off, UP.
    f.on_report(ms(400), &clean(107e3, 100e3, 1.0));
    assert_eq!((f.state, f.fec()), (State::Up, None));
    assert!((f.rate() - 100e3 * 15.0 / 14.0).abs() < 1e-6, "{}", f.rate());
    // UP → STAY when the next report is clean.
    f.on_report(ms(500), &clean(107e3, 107e3, 1.05));
    assert_eq!(f.state, State::Stay);
    assert_eq!(f.probes_up, 1);
}

#[test]
fn probe_needs_two_clean_reports_in_a_row() {
    // draft-singh-rmcat-adaptive-fec §3.1: no congestion for two reporting
    // intervals. R far below the 2 s maximum, so §4.3's extra wait is off.
    let run = |params: &[(&str, f64)], reports: &[f64]| {
        let mut f = fbra(params);
        f.on_report(ms(0), &clean(400e3, 400e3, 1.0));
        for (i, &c) in reports.iter().enumerate() {
            f.on_report(ms(100 * (i as i64 + 1)), &clean(100e3, 100e3, c));
        }
        f.state
    };
    // The first report was clean: one more clean one probes.
    assert_eq!(run(&[], &[1.0]), State::Probe);
    // DOWN's clean report counts as the first; an older loss in STAY
    // stays there and starts the count over.
    let mut f = fbra(&[]);
    f.state = State::Down;
    f.rate = 400e3; // R (100 kbps) far below the 2 s maximum: no extra wait
    f.on_report(ms(100), &clean(100e3, 100e3, 1.0));
    assert_eq!((f.state, f.clean), (State::Stay, 1));
    f.on_report(ms(200), &Report { loss: true, ..clean(100e3, 100e3, 1.0) });
    assert_eq!((f.state, f.clean), (State::Stay, 0), "an older loss stays and resets the count");
    f.on_report(ms(300), &clean(100e3, 100e3, 1.0));
    assert_eq!(f.state, State::Stay);
    f.on_report(ms(400), &clean(100e3, 100e3, 1.0));
    assert_eq!(f.state, State::Probe);
    // probe_after = 1 probes on the first clean report (R well below the
    // 400 kbps media rate, so no extra wait); the default does not.
    let first = |params: &[(&str, f64)]| {
        let mut g = fbra(params);
        g.rate = 400e3;
        g.on_report(ms(100), &clean(100e3, 100e3, 1.0));
        g.state
    };
    assert_eq!(first(&[("probe_after", 1.0)]), State::Probe);
    assert_eq!(first(&[]), State::Stay);
    // probe_after = 3 waits for three.
    assert_eq!(run(&[("probe_after", 3.0)], &[1.0]), State::Stay);
    assert_eq!(run(&[("probe_after", 3.0)], &[1.0, 1.0]), State::Probe);
}

#[test]
fn the_fec_reference_is_the_highest_of_sending_rate_media_rate_and_goodput() {
    // §4.2: the history holds goodput, sending rate and combined rate. A
    // first report whose goodput (400 kbps) exceeds its R (100 kbps): the
    // rate 100 kbps against 400 gives N = round(2 + 12 × 0.25) = 5.
    let mut f = fbra(&[]);
    f.on_report(ms(100), &clean(100e3, 400e3, 1.0));
    f.initial_goodput = Some(0.0);
    f.on_report(ms(200), &clean(100e3, 100e3, 1.0));
    assert_eq!(f.fec(), Some(5));
    // The media rate counts too: 150 kbps against the 300 kbps media rate
    // of the first report, R and G at 100 kbps: round(2 + 12 × 0.5) = 8.
    let mut g = fbra(&[]);
    g.rate = 300e3;
    g.on_report(ms(100), &clean(100e3, 100e3, 1.0));
    g.rate = 150e3;
    g.on_report(ms(200), &clean(100e3, 100e3, 1.0));
    assert_eq!(g.fec(), Some(8));
}

#[test]
fn the_constants_are_the_recovered_ones() {
    // docs/fbra-constants.md gives each value's source; a changed default fails here.
    let c = fbra(&[]).cfg;
    assert_eq!((c.low_pct, c.high_pct, c.history), (40.0, 80.0, Duration::from_secs(2)));
    assert_eq!((c.stay, c.probe_fec, c.probe_down, c.up_down, c.down_edge), (1.1, 1.2, 1.6, 1.3, 2.0));
    assert_eq!((c.probe_after, c.probe_share), (2, 0.9));
    assert_eq!((c.undershoot, c.bounce, c.deactivation), (0.9, 0.9, 1.05));
    assert_eq!((c.fec_min, c.fec_max), (2, 14));
    assert_eq!((c.early, c.timeout, c.recent), (0.5, 5.0, 0.5));
    // §4.1: every c threshold within [1, 2].
    for name in ["stay", "probe_fec", "probe_down", "up_down", "down_edge"] {
        let p = Params::new().with(name, crate::controller::ParamValue::Num(2.5));
        let e = FbraConfig::from_params(&p, &ControllerContext::DEFAULT).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
}

#[test]
fn a_low_rate_against_the_history_probes_with_more_fec() {
    let mut f = fbra(&[]);
    f.on_report(ms(100), &clean(400e3, 400e3, 1.0));
    // Rate 100 kbps against a 2 s maximum of 400 kbps: ratio 0.25, N =
    // round(2 + 12 × 0.25) = 5; R well below 90 % of the maximum: no wait.
    f.on_report(ms(200), &clean(100e3, 100e3, 1.0));
    assert_eq!(f.fec(), Some(5));
}

#[test]
fn congestion_in_stay_undershoots_below_the_goodput_and_deactivates() {
    let mut f = fbra(&[]);
    f.rate = 300e3;
    // c_hi 1.2 > 1.1: R = 0.9 × (2 × 250 − 300) = 180 kbps, DOWN.
    f.on_report(ms(100), &clean(300e3, 250e3, 1.2));
    assert_eq!(f.state, State::Down);
    assert!((f.rate() - 180e3).abs() < 1e-6, "{}", f.rate());
    // Deactivated for 1.05 × 100 ms: a report 50 ms later is only noted.
    f.on_report(ms(150), &clean(200e3, 250e3, 3.0));
    assert_eq!((f.state, f.rate()), (State::Down, 180e3));
    // Bounce-back at the first report after: 0.9 × 250 kbps, STAY.
    f.on_report(ms(210), &clean(180e3, 180e3, 1.0));
    assert_eq!(f.state, State::Stay);
    assert!((f.rate() - 225e3).abs() < 1e-6, "{}", f.rate());
    // Never above the 300 kbps that congested the path, never a cut.
    let mut g = fbra(&[]);
    g.rate = 300e3;
    g.on_report(ms(100), &clean(300e3, 250e3, 1.2));
    g.on_report(ms(150), &clean(200e3, 400e3, 3.0));
    g.on_report(ms(210), &clean(180e3, 180e3, 1.0));
    assert_eq!(g.rate(), 300e3);
}

#[test]
fn down_stays_while_losses_or_very_high_delay_persist() {
    let mut f = fbra(&[]);
    f.state = State::Down;
    f.rate = 200e3;
    // An older loss holds DOWN without a new undershoot (§9.0).
    let older = Report { loss: true, ..clean(200e3, 190e3, 1.0) };
    f.on_report(ms(100), &older);
    assert_eq!((f.state, f.rate()), (State::Down, 200e3));
    // c_hi above the edge threshold 2.0 holds too.
    f.on_report(ms(200), &clean(200e3, 190e3, 2.5));
    assert_eq!(f.state, State::Down);
    // A recent loss undershoots again: 0.9 × (2 × 150 − 200) = 90 kbps.
    let recent = Report { loss: true, recent_loss: true, ..clean(200e3, 150e3, 1.0) };
    f.on_report(ms(300), &recent);
    assert!((f.rate() - 90e3).abs() < 1e-6);
    assert_eq!(f.disabled_until, None, "no deactivation in DOWN");
    // A clean report: STAY.
    f.on_report(ms(400), &clean(90e3, 90e3, 1.0));
    assert_eq!(f.state, State::Stay);
}

#[test]
fn probe_backs_off_by_how_bad_the_report_is() {
    let probing = |c_lo: f64, c_hi: f64, older: bool| {
        let mut f = fbra(&[]);
        f.state = State::Probe;
        f.fec_on = true;
        f.fec_interval = 6;
        let r = Report { c_lo, c_hi, sent: 100e3, goodput: 100e3, loss: older, ..Default::default() };
        f.on_report(ms(100), &r);
        f
    };
    // c_hi 1.7 > 1.6: DOWN, counted as a wrong probe.
    let f = probing(1.0, 1.7, false);
    assert_eq!((f.state, f.probes_down), (State::Down, 1));
    // c_hi 1.3 (between 1.1 and 1.6), or an older loss: back to STAY.
    assert_eq!(probing(1.0, 1.3, false).state, State::Stay);
    assert_eq!(probing(1.0, 1.0, true).state, State::Stay);
    // c_lo 1.25 > 1.2 with c_hi fine: one FEC packet less, still PROBE.
    let f = probing(1.25, 1.05, false);
    assert_eq!((f.state, f.fec()), (State::Probe, Some(7)));
}

#[test]
fn up_is_more_sensitive_than_probe() {
    let mut f = fbra(&[]);
    f.state = State::Up;
    f.rate = 200e3;
    // c_hi 1.4 < PROBE's 1.6 but > UP's 1.3: DOWN.
    f.on_report(ms(100), &clean(200e3, 200e3, 1.4));
    assert_eq!(f.state, State::Down);
}

/// A packet as RR + XR report it: received (Loss RLE) or lost, no arrival
/// time; `owd` only says whether it arrived here.
fn packet(seq: u64, send: i64, owd: Option<i64>) -> PacketResult {
    PacketResult {
        seq,
        kind: PacketKind::Media,
        size: DataSize::from_bytes(1000),
        send_time: ms(send),
        arrival: None,
        received_untimed: owd.is_some(),
        pos: FramePos { frame: seq as u32, index: 0, count: 1 },
        ..Default::default()
    }
}

/// An RR + XR report of `packets` (seq, send, OWD if received): the OWD
/// block's newest value is the last received packet's.
fn feedback_owd(at: i64, packets: &[(u64, i64, Option<i64>)]) -> Feedback {
    let newest = packets.iter().rev().find_map(|p| p.2).map(Duration::from_millis);
    Feedback {
        report_time: ms(at),
        received_at: ms(at + 50),
        packets: packets.iter().map(|&(s, t, d)| packet(s, t, d)).collect(),
        stats: ReportStats { owd_newest: newest, ..Default::default() },
        format: crate::feedback::ReportFormat::RtcpXr,
        ..Default::default()
    }
}

#[test]
fn watermarks_are_percentiles_of_loss_free_reports_and_losses_are_recent_in_the_newer_half() {
    let mut f = fbra(&[]);
    // Five loss-free reports with newest OWDs 50..90 ms.
    for (i, d) in [50, 60, 70, 80, 90].into_iter().enumerate() {
        let t = 100 * i as i64;
        f.read(ms(t + 100), &feedback_owd(t, &[(i as u64, t, Some(d))]));
    }
    // 40th percentile of {50..90} by nearest rank: index round(0.4 × 4) = 2 → 70 ms;
    // 80th: index round(3.2) = 3 → 80 ms.
    assert_eq!(f.watermarks, Some((Duration::from_millis(70), Duration::from_millis(80))));
    // A report whose oldest packet is lost: a loss, not recent; its OWD
    // (newest packet, 140 ms) is not added to the history.
    let r = f.read(ms(700), &feedback_owd(600, &[(10, 600, None), (11, 610, Some(140))]));
    assert!(r.loss && !r.recent_loss);
    assert!((r.c_hi - 140.0 / 80.0).abs() < 1e-9, "{}", r.c_hi);
    assert_eq!(f.owd.len(), 5);
    let r = f.read(ms(800), &feedback_owd(700, &[(12, 700, Some(60)), (13, 710, None)]));
    assert!(r.recent_loss);
    // Recency is by sequence (the RLE's order, §4.1), not by where a packet
    // sits in the report: the newest sequence lost, listed first, is recent.
    let r = f.read(
        ms(900),
        &feedback_owd(800, &[(17, 830, None), (14, 800, Some(60)), (15, 810, Some(60)), (16, 820, Some(60))]),
    );
    assert!(r.recent_loss);
    let r = f.read(
        ms(1000),
        &feedback_owd(900, &[(19, 910, Some(60)), (20, 920, Some(60)), (18, 900, None), (21, 930, Some(60))]),
    );
    assert!(r.loss && !r.recent_loss);
}

#[test]
fn discards_are_read_from_the_discard_rle_and_leave_the_goodput() {
    let mut f = fbra(&[]);
    let mut fb = feedback_owd(100, &[(0, 0, Some(20)), (1, 10, Some(20)), (2, 20, Some(20)), (3, 30, Some(20))]);
    fb.packets[3].late = true;
    let r = f.read(ms(150), &fb);
    assert!(r.discard && r.recent_discard && !r.loss);
    // Three 1000 B packets in time over the 500 ms window; four sent.
    assert!((r.goodput - 3.0 * 8000.0 / 0.5).abs() < 1e-6, "{}", r.goodput);
    assert!((r.sent - 4.0 * 8000.0 / 0.5).abs() < 1e-6, "{}", r.sent);
}

#[test]
fn arrival_times_are_not_read() {
    // The same report with and without arrival times gives the same cues:
    // FBRA runs on what RR + XR carry.
    let xr = feedback_owd(100, &[(0, 0, Some(20)), (1, 10, None), (2, 20, Some(25)), (3, 30, Some(30))]);
    let mut timed = xr.clone();
    for p in &mut timed.packets {
        if p.received_untimed {
            p.arrival = Some(p.send_time + Duration::from_millis(1 + p.seq as i64 * 97));
            p.received_untimed = false;
        }
    }
    let (mut a, mut b) = (fbra(&[]), fbra(&[]));
    assert_eq!(a.read(ms(150), &xr), b.read(ms(150), &timed));
    assert_eq!(a.watermarks, b.watermarks);
}

#[test]
fn an_early_report_goes_down_and_silence_halves_the_rate() {
    let mut f = fbra(&[]);
    f.on_feedback(ms(100), &feedback_owd(100, &[(0, 60, Some(40))]));
    assert_eq!(f.state, State::Stay);
    // 30 ms after the last: under half of the 100 ms interval.
    f.on_feedback(ms(130), &feedback_owd(130, &[(1, 90, Some(40))]));
    assert_eq!(f.state, State::Down);
    // No report for 5 intervals: half the rate.
    let rate = f.rate();
    assert_eq!(f.poll_timeout(), Some(ms(130 + 500)));
    f.on_timeout(ms(630));
    assert_eq!(f.rate(), (rate / 2.0).max(30e3));
    assert_eq!(f.state, State::Down);
}

#[test]
fn bad_parameters_name_the_field() {
    let p = Params::new().with("fec_min", crate::controller::ParamValue::Num(20.0));
    let e = FbraConfig::from_params(&p, &ControllerContext::DEFAULT).unwrap_err();
    assert!(e.to_string().contains("fec_min"), "{e}");
    let p = Params::new().with("low_percentile", crate::controller::ParamValue::Num(90.0));
    assert!(FbraConfig::from_params(&p, &ControllerContext::DEFAULT)
        .unwrap_err()
        .to_string()
        .contains("low_percentile"));
}

#[test]
fn a_report_of_losses_only_keeps_the_goodput_of_the_window() {
    let mut f = fbra(&[]);
    // Ten 1000 B packets sent 50 ms apart over 0..450 ms, each received.
    for i in 0..10 {
        let t = 50 * i;
        f.read(ms(t + 70), &feedback_owd(t + 20, &[(i as u64, t, Some(20))]));
    }
    // A report at 480 ms (heard at 530 ms) carrying only a lost packet: the
    // goodput of the reports heard over the last 500 ms is still 10 × 8000
    // bits / 0.5 s, not zero (§4.1 fn. 4: from the sender's history).
    let r = f.read(ms(530), &feedback_owd(480, &[(10, 460, None)]));
    assert!(r.loss);
    assert!((r.goodput - 160e3).abs() < 1e-6, "{}", r.goodput);
}

#[test]
fn goodput_counts_the_reports_of_one_window_not_one_more() {
    let mut f = fbra(&[]);
    // A report every 100 ms, each saying ten 1000 B packets arrived in time:
    // 80 kbit per 100 ms is 800 kbps. The 500 ms window ending at a report
    // holds five reports; the one exactly 500 ms old is out (it would read
    // 960 kbps).
    let mut r = Report::default();
    for k in 0..12i64 {
        let t = 100 * k;
        let pk: Vec<_> = (0..10).map(|j| ((10 * k + j) as u64, t + 10 * j, Some(20))).collect();
        r = f.read(ms(t + 150), &feedback_owd(t + 100, &pk));
    }
    assert!((r.goodput - 800e3).abs() < 1e-6, "{}", r.goodput);
}

#[test]
fn a_report_off_the_schedule_reads_goodput_over_the_arrivals_it_covers() {
    let mut f = fbra(&[]);
    // 800 kbps: ten 1000 B packets per regular 100 ms report, then a PLI-like
    // report 50 ms after the last regular one carrying the five that arrived
    // since. The kept reports cover 550 ms of arrivals: still 800 kbps (a
    // fixed 500 ms divisor would read 880).
    let mut seq = 0u64;
    let mut packets = |t: i64, n: i64| {
        let v: Vec<_> = (0..n).map(|j| (seq + j as u64, t + 10 * j, Some(20))).collect();
        seq += n as u64;
        v
    };
    for k in 0..12i64 {
        let t = 100 * k;
        let pk = packets(t, 10);
        f.read(ms(t + 150), &feedback_owd(t + 100, &pk));
    }
    let pk = packets(1200, 5);
    let r = f.read(ms(1_200 + 100), &feedback_owd(1_250, &pk));
    assert!((r.goodput - 800e3).abs() < 1e-6, "{}", r.goodput);
}
