//! The wire's 16-bit numbers wrap in a long call: the receiving end
//! unwraps transport and media sequence numbers, the sender's adapter
//! unwraps what the reports carry, and nothing is lost or repeated on the
//! way round.

mod common;

use common::Call;

/// 8 Mbps of 1,200 B packets: about 830 a second, so both the transport
/// and the media sequence numbers wrap after about 80 s.
fn long_call(controller: &str, loss: f64) -> rtcc_sim::Output {
    Call::new("200s", r#""20Mbps""#)
        .seed(7)
        .link(&format!("loss = {loss}\nqueue = \"100ms\""))
        .flow(&format!("{controller}\nencoder = \"ideal\"\nnack = true"))
        .run()
}

#[test]
fn sequence_numbers_wrap_twice_and_repair_goes_on() {
    let out = long_call(r#"controller = { name = "fixed", rate = "8Mbps", pacing_factor = 1.5 }"#, 0.01);
    let f = &out.summary.flows[0];
    assert!(f.packets_sent > 2 * 65_536, "only {} packets", f.packets_sent);
    // NACKs name media sequence numbers across both wraps: each loss is
    // repaired, and every frame shown.
    assert!((0.008..0.012).contains(&f.loss_rate), "loss {}", f.loss_rate);
    let shown = f.frames_displayed as f64 / f.frames_sent as f64;
    assert!(shown > 0.995, "shown {shown} ({} of {})", f.frames_displayed, f.frames_sent);
    assert!(f.rtx_packets as f64 > 0.9 * 0.01 * f.packets_sent as f64, "{} retransmissions", f.rtx_packets);
    // A frame waits for two rounds of repair at most (a retransmission lost
    // too: about 0.3 % of 28-packet frames); a NACK or a report misread at
    // a wrap would leave frames waiting for good.
    assert!(f.frames_lost <= 3, "{} frames lost", f.frames_lost);
    assert!(f.frame_delay_ms_max.is_some_and(|d| d < 400.0), "{:?}", f.frame_delay_ms_max);
}

#[test]
fn a_controller_reads_reports_across_the_wrap() {
    // GCC's delay-based estimate holds the rate near capacity only if every
    // report's 16-bit sequences map back to the packets sent.
    let out = long_call(r#"controller = "gcc""#, 0.0);
    let f = &out.summary.flows[0];
    assert!(f.packets_sent > 65_536, "only {} packets", f.packets_sent);
    assert!(f.utilization > 0.6, "utilization {}", f.utilization);
    assert!(f.loss_rate < 0.01, "loss {}", f.loss_rate);
    assert!(f.frame_delay_ms_p95.is_some_and(|d| d < 300.0), "{:?}", f.frame_delay_ms_p95);
}
