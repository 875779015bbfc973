//! Scenario tests of the media pipeline: retransmission, FEC, key frames,
//! audio, the pacer's queue-time limit, caps and the resolution policy.

mod common;

use common::{f64s, i64s, u8s, Call};
use rtcc_sim::Output;

fn lossy_fixed(nack: bool) -> Output {
    Call::new("60s", r#""10Mbps""#)
        .seed(4)
        .link("loss = 0.05")
        .flow(&format!(
            r#"controller = {{ name = "fixed", rate = "2Mbps", pacing_factor = 1.5 }}
encoder = "ideal"
nack = {nack}"#
        ))
        .run()
}

#[test]
fn nack_repairs_five_percent_loss() {
    let out = lossy_fixed(true);
    let f = &out.summary.flows[0];
    let shown = f.frames_displayed as f64 / f.frames_sent as f64;
    assert!(shown >= 0.99, "displayed {shown}");
    // Each loss costs one retransmission (5 %), and 5 % of those are lost again.
    let rtx_share = f.rtx_kbps / f.video_kbps;
    assert!((0.045..0.06).contains(&rtx_share), "rtx share {rtx_share}");
    assert!(f.nacks_sent > 0);
}

#[test]
fn without_nack_frame_loss_follows_packet_loss_arithmetic() {
    let out = lossy_fixed(false);
    let complete = f64s(&out.frames, "complete_s");
    let packets = i64s(&out.frames, "packets");
    let status = u8s(&out.frames, "status");
    let (mut expected, mut incomplete, mut n) = (0.0, 0.0, 0.0);
    for i in 0..complete.len() {
        if status[i] >= 3 {
            continue;
        }
        n += 1.0;
        expected += 1.0 - 0.95f64.powi(packets[i] as i32);
        incomplete += if complete[i].is_nan() { 1.0 } else { 0.0 };
    }
    let (e, m) = (expected / n, incomplete / n);
    // ≈ 30 % of 7-packet frames lose at least one packet.
    assert!((m - e).abs() < 0.02, "incomplete {m} vs expected {e}");
    let f = &out.summary.flows[0];
    assert!(f.plis_sent > 10, "{}", f.plis_sent);
    assert_eq!(f.rtx_kbps, 0.0);
}

#[test]
fn queue_time_limit_bounds_the_pacer_queue() {
    let run = |limit: &str| {
        Call::new("20s", r#""10Mbps""#)
            .flow(&format!(
                r#"controller = {{ name = "fixed", rate = "6Mbps", pacing_factor = 0.3333333 }}
encoder = "ideal"
queue_time_limit = "{limit}""#
            ))
            .run()
    };
    let on = run("2s");
    // Time from capture until a frame's last packet left the pacer.
    let cap = f64s(&on.frames, "capture_s");
    let last = f64s(&on.frames, "last_sent_s");
    let worst = cap.iter().zip(last).map(|(c, l)| l - c).filter(|x| x.is_finite()).fold(0.0, f64::max);
    assert!((0.5..=2.05).contains(&worst), "media waited up to {worst} s in the pacer");
    assert!(on.summary.flows[0].frames_skipped > 0);
    let off = run("off");
    let q = f64s(&off.timeseries, "pacer_queue_bytes");
    // 6 Mbps in, 2 Mbps out: 500 kB more every second.
    let growth = (q[q.len() - 1] - q[q.len() / 2]) / 10.0;
    assert!((480_000.0..520_000.0).contains(&growth), "{growth} B/s");
}

#[test]
fn audio_shares_the_budget() {
    let out = Call::new("20s", r#""3Mbps""#).fixed("1Mbps", r#"audio = { rate = "64kbps", ptime = "20ms" }"#).run();
    let f = &out.summary.flows[0];
    assert!((f.audio_kbps - 64.0).abs() < 1.0, "{}", f.audio_kbps);
    assert!((f.video_kbps - 936.0).abs() < 10.0, "{}", f.video_kbps);
}

#[test]
fn webrtc_caps_limit_the_video_rate() {
    let out = Call::new("40s", r#""10Mbps""#)
        .flow(
            r#"controller = "gcc"
encoder = "ideal"
caps = "webrtc"
resolution = "720p""#,
        )
        .run();
    let f = &out.summary.flows[0];
    assert!(f.video_kbps <= 2500.0, "{}", f.video_kbps);
    assert!(f.target_kbps_mean.unwrap() <= 2500.0);
    assert!(f.utilization < 0.3);
}

#[test]
fn dumbo_resolution_policy_follows_the_pulse() {
    let pulse = r#"{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }"#;
    let out = Call::new("80s", pulse).flow("controller = \"gcc\"\nresolution = \"dumbo\"").run();
    let t = f64s(&out.timeseries, "t_s");
    let res = f64s(&out.timeseries, "resolution_p");
    let at = |s: f64| res[t.iter().position(|x| (*x - s).abs() < 1e-9).unwrap()];
    assert!(at(35.0) >= 720.0, "720p or more at ~3 Mbps, got {}", at(35.0));
    assert!(at(75.0) <= 360.0, "360p or less at 500 kbps, got {}", at(75.0));
    assert!(out.summary.flows[0].resolution_switches >= 2);
    assert!(out.summary.flows[0].key_frames >= 3);
}

#[test]
fn fec_recovers_random_losses() {
    let out =
        Call::new("30s", r#""10Mbps""#).link("loss = 0.01").fixed("2Mbps", "nack = false\nfec = { group = 10 }").run();
    let f = &out.summary.flows[0];
    assert!(f.fec_recovered > 20, "{}", f.fec_recovered);
    // A parity per ≤10 media packets of ~1190 B.
    let share = f.fec_kbps / f.video_kbps;
    assert!((0.1..0.2).contains(&share), "fec share {share}");
}

#[test]
fn codel_bounds_the_queue_that_drop_tail_lets_grow() {
    let run = |queue: &str| {
        Call::new("30s", r#""1Mbps""#).link(&format!("queue = {queue}")).fixed("2Mbps", "nack = false").run()
    };
    let codel = run(r#"{ kind = "codel" }"#);
    let f = &codel.summary.flows[0];
    // A 2x unresponsive overload: CoDel's drop rate ramps up and holds the
    // sojourn time bounded (≈0.1 s); drop-tail's grows by a second per second.
    assert!(f.queue_delay_ms_mean.unwrap() < 200.0, "{:?}", f.queue_delay_ms_mean);
    assert!((f.loss_rate - 0.5).abs() < 0.05, "{}", f.loss_rate);
    let tail = run(r#""unlimited""#);
    assert!(tail.summary.flows[0].queue_delay_ms_mean.unwrap() > 5_000.0);
}

#[test]
fn fq_codel_protects_a_light_flow() {
    let out = Call::new("30s", r#""2Mbps""#)
        .link(r#"queue = { kind = "fq_codel" }"#)
        .fixed("3Mbps", "name = \"heavy\"\nnack = false")
        .fixed("500kbps", "name = \"light\"\nnack = false")
        .run();
    let (heavy, light) = (&out.summary.flows[0], &out.summary.flows[1]);
    assert_eq!(light.packets_dropped, 0);
    assert!(light.queue_delay_ms_p95.unwrap() < 15.0, "{:?}", light.queue_delay_ms_p95);
    assert!((heavy.goodput_kbps - 1500.0).abs() < 60.0, "{}", heavy.goodput_kbps);
}

#[test]
fn bulk_source_is_always_backlogged() {
    let flow = r#"controller = { name = "fixed", rate = "2Mbps", pacing_factor = 1 }
source = "bulk""#;
    let out = Call::new("20s", r#""3Mbps""#).flow(flow).run();
    let f = &out.summary.flows[0];
    // Paced at exactly the fixed rate from the first instant, with no frames.
    assert!((f.goodput_kbps - 2000.0).abs() < 15.0, "{}", f.goodput_kbps);
    assert_eq!(f.frames_sent, 0);
    assert!(f.frame_latency_ms_mean.is_none());
}

#[test]
fn lost_feedback_does_not_stall_a_window() {
    // A lost report must not leave its packets "in flight": with 2 % of
    // reports lost a window-based flow still fills the link (0.35 before the
    // sender settled unreported packets).
    let out = Call::new("60s", r#""3Mbps""#)
        .link("reverse_loss = 0.02")
        .flow("controller = \"rocc+dumbo\"\nencoder = \"ideal\"")
        .run();
    let f = &out.summary.flows[0];
    assert!(f.utilization > 0.85, "utilisation {}", f.utilization);
}

#[test]
fn a_call_that_never_shows_a_frame_is_all_freeze() {
    let out = Call::new("10s", r#""3Mbps""#)
        .link("loss = 1.0")
        .flow(r#"controller = { name = "fixed", rate = "1Mbps" }"#)
        .run();
    let f = &out.summary.flows[0];
    assert_eq!(f.frames_displayed, 0);
    assert_eq!(f.freeze_ratio, Some(1.0));
}

/// A whole call (senders, receivers, real codecs, quality meters) can move to
/// another thread; checked at compile time.
#[test]
fn a_simulation_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<rtcc_sim::Simulation>();
}

/// BurstRTC §II-C: the share of time the send buffer is empty or holds
/// more than 150 ms. An ideal 1 Mbps encoder's 4-packet frames paced at
/// 2.5 Mbps: the first packet leaves at once, the last 3/4 of 40 % of the
/// frame interval later, so the buffer is empty 70 % of the time. Paced at
/// 0.5 Mbps, the buffer only grows.
#[test]
fn send_buffer_overshoot_and_undershoot_are_shares_of_time() {
    let run = |factor: f64| {
        // Exact timing: the shares are the pacer's arithmetic.
        let text = Call::new("10s", "\"20Mbps\"")
            .exact()
            .flow(&format!(
                "controller = {{ name = \"fixed\", rate = \"1Mbps\", pacing_factor = {factor} }}\n\
                 encoder = \"ideal\"\naudio = false\nqueue_time_limit = \"off\""
            ))
            .text();
        let out = common::run(&text);
        let f = &out.summary.flows[0];
        (f.send_buffer_overshoot.unwrap(), f.send_buffer_undershoot.unwrap())
    };
    let (over, empty) = run(2.5);
    assert_eq!(over, 0.0);
    assert!((empty - 0.7).abs() < 0.01, "empty {empty}");
    let (over, empty) = run(0.5);
    // Over 150 ms of queue from 0.3 s on (the backlog grows at 0.5 Mbps).
    assert!(over > 0.95, "over {over}");
    assert!(empty < 0.01, "empty {empty}");
    // Cross traffic has no send buffer.
    let out =
        common::run(&Call::new("2s", "\"20Mbps\"").fixed("1Mbps", "").flow("kind = \"udp\"\nrate = \"1Mbps\"").text());
    assert_eq!(out.summary.flows[1].send_buffer_overshoot, None);
}

/// FBRA §5's cut-off: packets older than `max_delay` on arrival are
/// discarded (reported as late, never decoded); none without it.
#[test]
fn max_delay_discards_packets_that_arrive_too_old() {
    let run = |max_delay: &str| {
        let text = Call::new("5s", "\"5Mbps\"").delay("200ms").fixed("1Mbps", max_delay).text();
        common::run(&text).summary.flows[0].clone()
    };
    let cut = run("max_delay = \"150ms\"");
    assert_eq!(cut.frames_displayed, 0);
    // Every frame misses its packets: none complete, none shown.
    assert!(cut.frames_lost + cut.frames_late >= cut.frames_sent - 1, "{cut:?}");
    assert_eq!(cut.packets_lost, 0);
    assert_eq!(cut.discard_rate, 1.0);
    let kept = run("max_delay = \"400ms\"");
    assert!(kept.frames_displayed > 140, "{}", kept.frames_displayed);
    assert_eq!((kept.frames_late, kept.discard_rate), (0, 0.0));
    let text = Call::new("1s", "\"5Mbps\"").fixed("1Mbps", "max_delay = \"0ms\"").text();
    let err = rtcc_sim::run_text(&text, "t.toml", None).err().expect("refused").to_string();
    assert!(err.contains("max_delay"), "{err}");
}

/// FBRA §4.1 (RFC 4585 §3.5): a discard past `max_delay` sends a report at
/// once, but at most one early report every two intervals.
#[test]
fn early_reports_on_discards_come_at_most_every_other_interval() {
    let reports = |early: bool| {
        let lines = format!("max_delay = \"150ms\"\nfeedback_interval = \"100ms\"\nearly_reports = {early}");
        let text = Call::new("10s", "\"5Mbps\"").delay("200ms").fixed("1Mbps", &lines).text();
        common::run(&text).summary.flows[0].reports_sent
    };
    let (plain, early) = (reports(false), reports(true));
    // 100 regular reports over 10 s (less the first 200 ms without packets);
    // every packet is discarded, so an early one every 200 ms on top.
    assert!((95..=101).contains(&plain), "{plain}");
    assert!(early > plain + 40 && early <= plain + 50, "{plain} regular, {early} with early ones");
}

/// RTCP RR + XR (RFC 3550, RFC 3611 Loss RLE): a report's size follows its
/// runs of losses, not its packet count as RFC 8888's does.
#[test]
fn rtcp_xr_reports_cost_less_than_per_packet_feedback_at_high_rates() {
    let run = |format: &str| {
        let lines = format!("feedback_interval = \"100ms\"\nreport_format = \"{format}\"");
        let text = Call::new("10s", "\"20Mbps\"").fixed("8Mbps", &lines).text();
        common::run(&text).summary.flows[0].clone()
    };
    let (per_packet, xr) = (run("rfc8888"), run("rtcp-xr"));
    assert_eq!(per_packet.reports_sent, xr.reports_sent);
    // 8 Mbps of 1200 B packets: ~83 per report, 2 bytes each in RFC 8888
    // (about 48 + 168 B a report); RR + XR: IPv4/UDP 28, RR 32, XR header 8,
    // one Loss RLE block 16, the OWD block 24 = 108 B.
    let per_report = |f: &rtcc_sim::output::FlowSummary| f.report_kbps * 1e3 / 8.0 * 10.0 / f.reports_sent as f64;
    assert!((per_report(&xr) - 108.0).abs() < 2.0, "{}", per_report(&xr));
    assert!(per_report(&per_packet) > 200.0, "{}", per_report(&per_packet));
    let text = Call::new("1s", "\"5Mbps\"").fixed("1Mbps", "report_format = \"rr\"").text();
    let err = rtcc_sim::run_text(&text, "t.toml", None).err().expect("refused").to_string();
    assert!(err.contains("report_format") && err.contains("rtcp-xr"), "{err}");
}

/// FFRE (FBRA §5): protected frames rebuilt from parity over protected
/// frames that lost a packet. With a parity per frame of ~7 packets, a frame
/// is lost only when two of its packets (or one and the parity) are.
#[test]
fn ffre_counts_frames_parity_rebuilt_against_those_it_could_not() {
    let run = |loss: f64, fec: &str| {
        let text = Call::new("30s", r#""10Mbps""#)
            .link(&format!("loss = {loss}"))
            .fixed("2Mbps", &format!("nack = false\n{fec}"))
            .text();
        common::run(&text).summary.flows[0].clone()
    };
    let low = run(0.01, "fec = { group = 10 }");
    let high = run(0.1, "fec = { group = 10 }");
    let (a, b) = (low.ffre.expect("frames lost"), high.ffre.expect("frames lost"));
    // 1 %: P(≥ 2 of 8 lost | ≥ 1 lost) ≈ 4 %; 10 %: ≈ 30 %.
    assert!(a > 0.9, "ffre {a} at 1 %");
    assert!((0.5..0.85).contains(&b), "ffre {b} at 10 %");
    assert!(high.fec_unrepaired > low.fec_unrepaired);
    assert_eq!(run(0.01, "").ffre, None);
}

/// A fixed 2 Mbps flow on a 3 Mbps link with 5 % random loss and default
/// settings: paced at 2.5 × the target as libwebrtc paces, retransmissions
/// and key frames pass the video in time and nearly every frame is shown;
/// paced at exactly the target they wait behind it until too old.
#[test]
fn nack_repairs_random_loss_when_paced_as_libwebrtc() {
    let text = |extra: &str| {
        format!(
            "duration = \"30s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\nloss = 0.05\n[[flow]]\n\
             controller = {{ name = \"fixed\", rate = \"2Mbps\"{extra} }}\n"
        )
    };
    let run = |extra: &str| rtcc_sim::run_text(&text(extra), "nack.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let (paced, tight) = (run(""), run(", pacing_factor = 1"));
    let shown = |o: &Output| {
        let f = &o.summary.flows[0];
        f.frames_displayed as f64 / f.frames_sent as f64
    };
    eprintln!("shown: default {:.3}, pacing_factor 1 {:.3}", shown(&paced), shown(&tight));
    assert!(shown(&paced) >= 0.99, "{}", shown(&paced));
    assert!(shown(&tight) < 0.9, "{}", shown(&tight));
}

/// libwebrtc's PCC pads up to its sending rate, so each monitor interval's
/// rate r·(1±ε) is on the wire even when the encoder lags behind the
/// target; without the padding the utility gradients compare rates that
/// were never sent.
#[test]
fn vivace_pads_its_monitor_intervals_up_to_their_rate() {
    let text = |padding: bool| {
        format!(
            "duration = \"30s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\n\
             controller = {{ name = \"vivace\", padding = {padding} }}\n\
             encoder = {{ kind = \"lagging\", tau_up = \"1.3s\", tau_down = \"0.3s\", sigma = 0.1, key_ratio = 5 }}\n"
        )
    };
    let run = |padding: bool| rtcc_sim::run_text(&text(padding), "pcc.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let (on, off) = (run(true), run(false));
    let share = |o: &Output| {
        let f = &o.summary.flows[0];
        f.send_kbps / f.target_kbps_mean.unwrap()
    };
    let (fon, foff) = (&on.summary.flows[0], &off.summary.flows[0]);
    eprintln!(
        "padding: sent/target {:.3}, padding {:.0} kbps; without: sent/target {:.3}, padding {:.0} kbps",
        share(&on),
        fon.padding_kbps,
        share(&off),
        foff.padding_kbps
    );
    assert!(share(&on) > 0.95, "{}", share(&on));
    assert!(fon.padding_kbps > 0.0 && foff.padding_kbps == 0.0);
    assert!(share(&on) > share(&off), "{} vs {}", share(&on), share(&off));
}

/// WebRTC's jitter buffer and render timing at the receiver: on a jittery
/// link a frame waits after it completes (decode, render and the jitter
/// margin), so frame latency > frame delay > transport delay; `immediate`
/// shows it on completion. The jitter buffer's delay follows the jitter the
/// receiver sees: 15 ms of link jitter holds frames longer than none (20-100
/// s, between key frames). A key frame raises it too, on a link without
/// jitter: the estimate's frame-size term (the Kalman slope times the
/// largest frame over the average) takes the larger frame, whose maximum
/// decays by kPsi = 0.9999 a frame, and VCMTiming's current delay comes
/// down only when a late frame snaps it to the target, so it holds for the
/// rest of the run (the encoder's key frames fall at 100 and 200 s).
#[test]
fn the_jitter_buffer_holds_frames_by_the_jitter_it_sees() {
    let text = |playout: &str| {
        format!(
            "duration = \"240s\"\nmodel_timing = \"exact\"\n[link]\ncapacity = \"4Mbps\"\ndelay = \"25ms\"\njitter = \"5ms\"\nqueue = \"60ms\"\n\
             [[flow]]\ncontroller = {{ name = \"fixed\", rate = \"1Mbps\" }}\nplayout = \"{playout}\"\n\
             [[flow]]\nkind = \"tcp\"\ncc = \"cubic\"\nstart = \"120s\"\nstop = \"150s\"\n"
        )
    };
    let run = |p: &str| rtcc_sim::run_text(&text(p), "jitter.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let (webrtc, immediate) = (run("webrtc"), run("immediate"));
    let f = &webrtc.summary.flows[0];
    let (latency, delay, transport) =
        (f.frame_latency_ms_mean.unwrap(), f.frame_delay_ms_mean.unwrap(), f.transport_delay_ms_mean.unwrap());
    let i = &immediate.summary.flows[0];
    eprintln!(
        "webrtc: latency {latency:.1}, delay {delay:.1}, transport {transport:.1}, playout {:?}; immediate: latency {:.1}, delay {:.1}, playout {:?}",
        f.playout_delay_ms_mean,
        i.frame_latency_ms_mean.unwrap(),
        i.frame_delay_ms_mean.unwrap(),
        i.playout_delay_ms_mean
    );
    assert!(latency > delay && delay > transport, "{latency} {delay} {transport}");
    assert!(f.playout_delay_ms_mean.unwrap() >= 15.0, "{:?}", f.playout_delay_ms_mean);
    // Shown when decoded: only a frame that waited for its reference
    // waits at all.
    let ip = i.playout_delay_ms_mean.unwrap();
    assert!(ip < 5.0, "{ip}");
    assert!((i.frame_latency_ms_mean.unwrap() - i.frame_delay_ms_mean.unwrap() - ip).abs() < 0.5);
    // The jitter buffer's delay (frames table), flow 0's mean over a span of
    // capture times, on the link alone with `jitter` of its own.
    let buffer = |jitter: &str, from: f64, to: f64| {
        let text = format!(
            "duration = \"130s\"\nmodel_timing = \"exact\"\n[link]\ncapacity = \"4Mbps\"\ndelay = \"25ms\"\njitter = \"{jitter}\"\n\
             queue = \"60ms\"\n[[flow]]\ncontroller = {{ name = \"fixed\", rate = \"1Mbps\" }}\nplayout = \"webrtc\"\n"
        );
        let out = rtcc_sim::run_text(&text, "jitter.toml", None).unwrap_or_else(|e| panic!("{e}"));
        let (capture, jb) = (f64s(&out.frames, "capture_s"), f64s(&out.frames, "jitter_buffer_ms"));
        let v: Vec<f64> = (0..jb.len())
            .filter(|&k| capture[k] >= from && capture[k] < to && jb[k].is_finite())
            .map(|k| jb[k])
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let (calm, jittery) = (buffer("0ms", 20.0, 100.0), buffer("15ms", 20.0, 100.0));
    let (before_key, after_key) = (buffer("0ms", 80.0, 100.0), buffer("0ms", 100.0, 120.0));
    eprintln!(
        "jitter buffer, 20-100 s: {calm:.1} ms without link jitter, {jittery:.1} ms with 15 ms; \
         around the 100 s key frame without jitter: {before_key:.1} -> {after_key:.1} ms"
    );
    assert!(jittery > calm + 5.0, "{calm} -> {jittery}");
    assert!(after_key > before_key + 5.0, "{before_key} -> {after_key}");
}
