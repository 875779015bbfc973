//! `salsify` on the links of the PIBES paper (pibes.txt §V): alone on a fixed
//! 3 Mbps link with 20 ms one-way delay (Fig. 10), and against a Cubic flow
//! on 4 Mbps (Table 1). Both with the ideal encoder, which sizes each frame
//! exactly as asked, as Salsify's frame-size choice does.

mod common;

use common::Call;
use rtcc_sim::output::FlowSummary;
use rtcc_sim::Output;

fn alone(controller: &str) -> Output {
    Call::new("30s", r#""3Mbps""#)
        .delay("20ms")
        .flow(&format!("controller = \"{controller}\"\nencoder = \"ideal\""))
        .run()
}

/// A video flow and one bulk Cubic flow from the start, on 4 Mbps with 20 ms
/// one-way delay and a drop-tail queue of 250 ms.
fn against_cubic(controller: &str) -> Output {
    Call::new("60s", r#""4Mbps""#)
        .delay("20ms")
        .link("queue = \"250ms\"")
        .flow(&format!("controller = \"{controller}\"\nencoder = \"ideal\""))
        .flow("kind = \"tcp\"\ncc = \"cubic\"")
        .run()
}

fn describe(f: &FlowSummary) -> String {
    format!(
        "utilisation {:.3}, frame delay mean {:.1} ms, p95 {:.1} ms",
        f.utilization,
        f.frame_delay_ms_mean.unwrap_or(f64::NAN),
        f.frame_delay_ms_p95.unwrap_or(f64::NAN)
    )
}

/// Fig. 10: Salsify alone fills the link, its frame delay near the least a
/// frame can take at 95 % of it (20 ms + 0.95 × 3 Mbps × 33.3 ms / 3 Mbps =
/// 51.7 ms). The budget keeps everything in flight within what the link
/// drains in 100 ms, so a frame waits at most about that beyond the one-way
/// delay. (On this link rtcc's gcc holds a shorter queue, about 10 ms, and
/// its frames arrive sooner: 53 ms mean against salsify's 64 ms; PIBES
/// measured no WebRTC frame delay, §V-B a.)
#[test]
fn salsify_fills_a_fixed_3mbps_link_within_its_delay_target() {
    let out = alone("salsify");
    let f = &out.summary.flows[0];
    let gcc = alone("gcc");
    eprintln!("salsify: {}; gcc: {}", describe(f), describe(&gcc.summary.flows[0]));
    assert!(f.utilization >= 0.8, "{}", describe(f));
    assert!(f.frame_delay_ms_mean.unwrap() < 80.0, "{}", describe(f));
    assert!(f.frame_delay_ms_p95.unwrap() < 20.0 + 100.0, "{}", describe(f));
    assert_eq!(f.frames_lost, 0);
}

/// Table 1: Salsify keeps more of the link than WebRTC against one TCP
/// flow (37 % against 24 % of 4 Mbps), but less than half: once Cubic's
/// queue passes what the budget allows, Salsify's frames shrink.
#[test]
fn salsify_loses_bandwidth_to_cubic_but_less_than_gcc() {
    let share = |o: &Output| o.summary.flows[0].goodput_kbps / 4000.0;
    let (salsify, gcc) = (against_cubic("salsify"), against_cubic("gcc"));
    let (s, g) = (share(&salsify), share(&gcc));
    let tcp = salsify.summary.flows[1].goodput_kbps / 4000.0;
    eprintln!("against cubic: salsify {s:.3} of the link (cubic {tcp:.3}), gcc {g:.3}");
    assert!(s < 0.5 && tcp > s, "salsify {s}, cubic {tcp}");
    assert!(s > 2.0 * g, "salsify {s}, gcc {g}");
}
