//! Scenario tests that check the physics with numbers.

mod common;

use common::{f64s, run, Call};
use rtcc_sim::{run_text, Output};

/// On the exact grid: under realistic timing the first frame shows about
/// 105 ms after the start (capture phase and encode time), which the freeze
/// ratio counts as the screen's leading freeze.
fn fixed(rate: &str, capacity: &str, secs: u32) -> Output {
    Call::new(&format!("{secs}s"), capacity).exact().fixed(rate, "").run()
}

#[test]
fn fixed_2mbps_on_3mbps_sees_no_queue() {
    let out = fixed("2Mbps", "\"3Mbps\"", 30);
    let f = &out.summary.flows[0];
    assert!(f.queue_delay_ms_mean.unwrap() < 0.1, "{:?}", f.queue_delay_ms_mean);
    assert!(f.queue_delay_ms_p95.unwrap() < 0.1, "{:?}", f.queue_delay_ms_p95);
    // 25 ms propagation + at most one packet's serialisation (1191 B at 3 Mbps = 3.2 ms).
    assert!(f.owd_ms_p95.unwrap() < 28.5, "{:?}", f.owd_ms_p95);
    assert!((f.video_kbps - 2000.0).abs() < 20.0, "{}", f.video_kbps);
    assert!((f.goodput_kbps - 2000.0).abs() < 20.0, "{}", f.goodput_kbps);
    assert!((f.utilization - 2.0 / 3.0).abs() < 0.01, "{}", f.utilization);
    assert!((f.utilization_mean.unwrap() - 2.0 / 3.0).abs() < 0.01, "{:?}", f.utilization_mean);
    assert_eq!(f.frames_displayed, f.frames_sent);
    assert_eq!(f.freeze_ratio, Some(0.0));
}

/// 1 Mbps through 3 Mbps for 10 s, then 1 Mbps for 10 s: Σ received over
/// Σ capacity is 20 Mb / 40 Mb = 0.5, the mean of per-bin shares
/// (1/3 + 1)/2 = 0.67 (the Dumbo thesis averages per sample).
#[test]
fn utilisation_per_sample_and_over_the_call_differ_on_a_step() {
    let out = fixed("1Mbps", r#"{ kind = "step", steps = [["0s", "3Mbps"], ["10s", "1Mbps"]] }"#, 20);
    let f = &out.summary.flows[0];
    assert!((f.utilization - 0.5).abs() < 0.01, "{}", f.utilization);
    assert!((f.utilization_mean.unwrap() - 2.0 / 3.0).abs() < 0.02, "{:?}", f.utilization_mean);
}

#[test]
fn fixed_2mbps_on_1mbps_queue_grows_at_1mbps() {
    let out = fixed("2Mbps", "\"1Mbps\"", 20);
    let t = f64s(&out.link, "t_s");
    let q = f64s(&out.link, "queue_bytes");
    let at = |s: f64| q[t.iter().position(|x| (*x - s).abs() < 1e-9).unwrap()];
    // Excess 1 Mbps accumulates 125 kB per second.
    let slope = (at(15.0) - at(5.0)) / 10.0;
    assert!((slope - 125_000.0).abs() < 2_500.0, "slope {slope} B/s");
    assert!((at(10.0) - 1_250_000.0).abs() < 25_000.0, "{}", at(10.0));
    let f = &out.summary.flows[0];
    assert!((f.goodput_kbps - 1000.0).abs() < 20.0, "{}", f.goodput_kbps);
    assert!((out.summary.link.utilization - 1.0).abs() < 0.01);
}

/// On a trace link a packet waits for the next delivery opportunity even
/// with the buffer empty: the queuing delay (until service starts) stays
/// zero while the sojourn (arrival → departure, as Mahimahi logs it) holds
/// the wait, about half the 10 ms between opportunities here.
#[test]
fn a_trace_links_sojourn_holds_the_wait_for_an_opportunity() {
    let dir = std::env::temp_dir().join(format!("rtcc-trace-wait-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ten.trace");
    std::fs::write(&path, "10\n").unwrap();
    let out = fixed("300kbps", &format!("{{ kind = \"trace\", file = {:?} }}", path.to_str().unwrap()), 20);
    let f = &out.summary.flows[0];
    let (queue, sojourn) = (f.queue_delay_ms_mean.unwrap(), f.sojourn_ms_mean.unwrap());
    assert!(queue < 0.5, "queue {queue} ms");
    assert!((3.0..7.0).contains(&sojourn), "sojourn {sojourn} ms");
    assert!(f.sojourn_ms_p95.unwrap() <= 10.0 + 1e-6, "{:?}", f.sojourn_ms_p95);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn mahimahi_trace_of_one_line_delivers_12mbps() {
    let dir = std::env::temp_dir().join(format!("rtcc-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("one.trace");
    std::fs::write(&path, "1\n").unwrap();
    let out = fixed("20Mbps", &format!("{{ kind = \"trace\", file = {:?} }}", path.to_str().unwrap()), 10);
    let l = &out.summary.link;
    assert!((l.capacity_kbps_mean - 12_000.0).abs() < 1.0, "{}", l.capacity_kbps_mean);
    assert!((l.delivered_kbps - 12_000.0).abs() < 120.0, "{}", l.delivered_kbps);
    assert!((out.summary.flows[0].goodput_kbps - 12_000.0).abs() < 150.0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gcc_on_constant_3mbps_settles_within_15_percent_below() {
    let out = Call::new("60s", r#""3Mbps""#).flow("controller = \"gcc\"\nencoder = \"ideal\"").run();
    let t = f64s(&out.timeseries, "t_s");
    let target = f64s(&out.timeseries, "target_kbps");
    let send = f64s(&out.timeseries, "send_kbps");
    let tail = |v: &[f64]| {
        let xs: Vec<f64> = t.iter().zip(v).filter(|(t, _)| **t > 30.0).map(|(_, x)| *x).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let (tt, ts) = (tail(target), tail(send));
    assert!((2550.0..=3000.0).contains(&tt), "target over the last 30 s: {tt} kbps");
    assert!((2550.0..=3060.0).contains(&ts), "sending rate over the last 30 s: {ts} kbps");
}

#[test]
fn same_seed_same_summary() {
    let pulse = r#"{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "5s" }"#;
    let call = Call::new("20s", pulse).seed(9).link("loss = 0.01\njitter = \"2ms\"");
    let text = &call.flow("controller = \"gcc\"\nencoder = \"lagging\"").text();
    let strip = |o: Output| {
        let mut v = serde_json::to_value(&o.summary).unwrap();
        v.as_object_mut().unwrap().remove("sim");
        v.to_string()
    };
    let a = strip(run(text));
    let b = strip(run(text));
    assert_eq!(a, b);
    let c = strip(run_text(text, "test.toml", Some(10)).unwrap());
    assert_ne!(a, c, "a different seed should change a lossy run");
}
