//! The reverse path as a bottleneck of its own: reports cross it as packets
//! of their RTCP size, queue, and are dropped when its queue is full.

use rtcc_sim::{run_text, Output};

fn run(text: &str) -> Output {
    run_text(text, "test.toml", None).unwrap_or_else(|e| panic!("{e}"))
}

fn scenario(controller: &str, reverse: &str) -> String {
    format!(
        r#"duration = "20s"
# Reverse bottlenecks of a few kbps starve the feedback on purpose.
allow_extreme = true
[link]
capacity = "3Mbps"
delay = "25ms"
{reverse}
[[flow]]
controller = {controller}
encoder = "ideal"
"#
    )
}

#[test]
fn a_fast_reverse_bottleneck_changes_nothing_that_matters() {
    // Without frame drops: a nanosecond later report can tip a frame drop,
    // which changes the event count by more than the reports' departures.
    let gcc = "{ name = \"gcc\", drop_frames = false }";
    let plain = run(&scenario(gcc, ""));
    let fast = run(&scenario(gcc, "reverse_capacity = \"1Gbps\""));
    let (a, b) = (&plain.summary.flows[0], &fast.summary.flows[0]);
    assert_eq!((a.reports_lost, b.reports_lost), (0, 0));
    // Every report crossed the reverse bottleneck (one departure each).
    let extra = fast.summary.sim.events as i64 - plain.summary.sim.events as i64;
    assert!(extra as f64 > 0.9 * b.reports_sent as f64, "{extra} more events for {} reports", b.reports_sent);
    assert_eq!(a.reports_sent, b.reports_sent);
    // A 100-byte report takes under a microsecond at 1 Gbps.
    assert!(
        (a.goodput_kbps - b.goodput_kbps).abs() < 0.02 * a.goodput_kbps,
        "{} vs {}",
        a.goodput_kbps,
        b.goodput_kbps
    );
}

#[test]
fn a_slow_reverse_bottleneck_delivers_reports_at_its_rate_and_drops_the_rest() {
    let rev = "reverse_capacity = \"5kbps\"\nreverse_queue = \"4pkt\"";
    let out = run(&scenario("{ name = \"fixed\", rate = \"2Mbps\" }", rev));
    let f = &out.summary.flows[0];
    // About 20 reports a second of at least 28 + 20 bytes (IP/UDP + RFC 8888
    // headers) plus 2 per packet: more than 5 kbps carries.
    let delivered = (f.reports_sent - f.reports_lost) as f64;
    let most = 20.0 * 5_000.0 / (8.0 * 48.0) + 4.0;
    assert!(delivered <= most, "{delivered} reports crossed a 5 kbps path in 20 s (at most {most})");
    assert!(f.reports_lost as f64 > 0.3 * f.reports_sent as f64, "{} of {} lost", f.reports_lost, f.reports_sent);
    // Every report lost here was dropped at the reverse bottleneck, and is
    // counted there; the forward link dropped nothing.
    let rl = out.summary.reverse_link.as_ref().expect("reverse link");
    assert_eq!(rl.drops, f.reports_lost);
    assert_eq!(out.summary.link.drops, 0);
    // The forward direction does not care.
    assert!((f.goodput_kbps - 2000.0).abs() < 30.0, "{}", f.goodput_kbps);
}

#[test]
fn gcc_slows_down_when_its_feedback_is_starved() {
    let plain = run(&scenario("\"gcc\"", ""));
    let rev = "reverse_capacity = \"4kbps\"\nreverse_queue = \"2pkt\"";
    let starved = run(&scenario("\"gcc\"", rev));
    let (a, b) = (&plain.summary.flows[0], &starved.summary.flows[0]);
    // 4 kbps carries about 150 reports of ~64 B in 20 s; the rest are dropped.
    assert_eq!(a.reports_sent, b.reports_sent);
    assert!(b.reports_lost as f64 > 0.5 * b.reports_sent as f64, "{} of {}", b.reports_lost, b.reports_sent);
    // Measured 2771 kbps with full feedback, 1776 kbps starved: GCC's rate
    // grows only on the reports that arrive.
    assert!(a.video_kbps > 2500.0, "plain {}", a.video_kbps);
    assert!(b.video_kbps < 0.75 * a.video_kbps, "starved {} vs plain {}", b.video_kbps, a.video_kbps);
}

#[test]
fn a_reverse_queue_needs_a_reverse_capacity() {
    let e = run_text(&scenario("\"gcc\"", "reverse_queue = \"10pkt\""), "s.toml", None).err().expect("refused");
    let e = e.to_string();
    assert!(e.contains("s.toml") && e.contains("link.reverse_queue") && e.contains("reverse_capacity"), "{e}");
}
