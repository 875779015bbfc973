//! The Dumbo thesis's pulse-link claims (§3.1, §6.2.1), with the lagging
//! encoder at the thesis's lag (VP8 "nearly 3 s" to follow 500 kbps → 2 Mbps,
//! τ_up 1.3 s, as `rtcc reproduce dumbo` uses): 3 Mbps ↔ 500 kbps every 40 s,
//! 25 ms one-way delay.

use rtcc_sim::{run_text, Output};

fn pulse(controller: &str, secs: u32) -> Output {
    let text = format!(
        r#"duration = "{secs}s"
[link]
capacity = {{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }}
delay = "25ms"
[[flow]]
controller = "{controller}"
encoder = {{ kind = "lagging", tau_up = "1.3s", tau_down = "0.3s", sigma = 0.1, key_ratio = 5 }}
resolution = "dumbo"
[record]
bin = "100ms"
"#
    );
    run_text(&text, "pulse.toml", None).unwrap_or_else(|e| panic!("{e}"))
}

fn col<'a>(o: &'a Output, name: &str) -> &'a [f64] {
    o.timeseries.f64(name).unwrap_or_else(|| panic!("no column {name}"))
}

/// Seconds after the step up at 80 s until the flow's received rate first
/// reaches 90 % of its maximum over the 40 s that follow (§6.2.1).
fn converge_up(o: &Output) -> f64 {
    let t = col(o, "t_s");
    let recv = col(o, "recv_kbps");
    let cap = o.link.f64("capacity_kbps").unwrap();
    let util: Vec<(f64, f64)> = t.iter().zip(recv).zip(cap).map(|((t, r), c)| (*t, r / c)).collect();
    let after: Vec<&(f64, f64)> = util.iter().filter(|(t, _)| *t > 80.0 && *t <= 120.0).collect();
    let max = after.iter().map(|x| x.1).fold(0.0, f64::max);
    let first = after.iter().find(|x| x.1 >= 0.9 * max).expect("reaches 90 %");
    first.0 - 80.0
}

#[test]
fn dumbo_converges_within_a_second_and_plain_window_controllers_do_not() {
    let copa_dumbo = pulse("copa+dumbo", 120);
    let rocc_dumbo = pulse("rocc+dumbo", 120);
    let copa = pulse("copa", 120);
    let rocc = pulse("rocc", 120);
    let gcc = pulse("gcc", 120);
    let up = |o: &Output| converge_up(o);
    let (cd, rd, c, r, g) = (up(&copa_dumbo), up(&rocc_dumbo), up(&copa), up(&rocc), up(&gcc));
    eprintln!("converge up: copa+dumbo {cd} s, rocc+dumbo {rd} s, copa {c} s, rocc {r} s, gcc {g} s");
    // Thesis §6.2.1: 250 ms and 700 ms with Dumbo, 2.8 s (Copa) and 21.1 s
    // (RoCC) without, 16.6 s for GCC.
    // rtcc measures 0.8 s and 1.0–1.1 s: convergence is read off 100 ms
    // bins, and µs-level changes of send times (e.g. when the scheduler
    // offers the pacer a transmit opportunity) move RoCC+Dumbo by one bin.
    assert!(cd <= 1.0, "copa+dumbo {cd} s");
    assert!(rd <= 1.2, "rocc+dumbo {rd} s");
    // Plain Copa's window only holds the pacer (thesis §4, §5.1: no
    // pushback): its received rate follows the step at once (0.7 s here,
    // thesis 2.8 s, not reproduced) while its frames wait in the pacer
    // queue (mean frame latency 3.6 s against 0.12 s with Dumbo).
    let lat = |o: &Output| o.summary.flows[0].frame_latency_ms_mean.unwrap();
    assert!(lat(&copa) > 5.0 * lat(&copa_dumbo), "copa {c} s, {} ms; copa+dumbo {} ms", lat(&copa), lat(&copa_dumbo));
    assert!(r > 2.0, "rocc without dummy {r} s (thesis 21.1 s)");
    assert!(g > 5.0 * cd.max(rd), "gcc {g} s (thesis 16.6 s)");
    assert!(r > 3.0 * rd, "dummy traffic speeds RoCC up: {r} s vs {rd} s");
}

#[test]
fn dummy_traffic_appears_after_the_step_and_stays_small() {
    for name in ["copa+dumbo", "rocc+dumbo"] {
        let o = pulse(name, 160);
        let t = col(&o, "t_s");
        let pad = col(&o, "padding_kbps");
        let after_step: f64 = t.iter().zip(pad).filter(|(t, _)| **t > 80.0 && **t <= 82.0).map(|(_, p)| p).sum();
        // 100 ms bins: the mean padding rate over the 2 s.
        let mean = after_step / 20.0;
        eprintln!("{name}: {mean:.0} kbps of padding in the 2 s after the step up");
        // The dummy stream fills what the lagging encoder leaves of the new
        // 3 Mbps (measured ~1 Mbps for both).
        assert!(mean >= 300.0, "{name}: {mean} kbps of padding in the 2 s after the step up");
        let f = &o.summary.flows[0];
        let share = f.padding_kbps / (f.padding_kbps + f.video_kbps);
        eprintln!("{name}: padding {:.1} % of bytes (thesis 3.8 %)", share * 100.0);
        assert!(share <= 0.10, "{name}: padding {share}");
        assert!(f.utilization > 0.9, "{name}: utilisation {}", f.utilization);
    }
}

/// GCC's congestion window (goog_cc's default trial: 350 ms queue, DropFrame)
/// acts through frame drops: after the step down at 40 s the window fills,
/// libwebrtc's encoder drops frames and lowers its target, and the queue
/// drains sooner than with the drops switched off.
#[test]
fn gccs_window_drops_frames_after_the_step_down_and_shortens_the_queue() {
    let gcc = pulse("gcc", 60);
    let text = |drop: bool| {
        format!(
            r#"duration = "60s"
[link]
capacity = {{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }}
delay = "25ms"
[[flow]]
controller = {{ name = "gcc", drop_frames = {drop} }}
encoder = {{ kind = "lagging", tau_up = "1.3s", tau_down = "0.3s", sigma = 0.1, key_ratio = 5 }}
resolution = "dumbo"
"#
        )
    };
    let off = run_text(&text(false), "pulse.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let (on, off) = (&gcc.summary.flows[0], &off.summary.flows[0]);
    let q = |f: &rtcc_sim::output::FlowSummary| f.queue_delay_ms_mean.unwrap();
    eprintln!(
        "drops on: {} cwnd drops, {} skipped, queue {:.0} ms, latency {:.0} ms; off: {} drops, queue {:.0} ms, latency {:.0} ms",
        on.cwnd_drops,
        on.frames_skipped,
        q(on),
        on.frame_latency_ms_mean.unwrap(),
        off.cwnd_drops,
        q(off),
        off.frame_latency_ms_mean.unwrap()
    );
    assert!(on.cwnd_drops >= 10, "{} drops", on.cwnd_drops);
    assert!(on.frames_skipped >= on.cwnd_drops);
    assert_eq!(off.cwnd_drops, 0);
    assert!(q(on) < q(off), "queue {} ms with drops, {} ms without", q(on), q(off));
}
