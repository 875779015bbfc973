//! Cross traffic sharing the bottleneck: textbook TCP behaviour (fill,
//! fairness, the Mathis law, BBR's queue and its coexistence with Cubic),
//! UDP and web-like flows, reverse flows, video against TCP — each asserted
//! with the numbers the literature gives.

use rtcc_sim::output::Output;
use rtcc_sim::scenario::Scenario;
use rtcc_sim::sim::Simulation;

fn run(text: &str) -> Output {
    let sc = Scenario::parse(text, "traffic.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(sc, None).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim.output()
}

/// Mean of time-series column `col` of flow `flow` (or the link table's, for
/// `None`) over bins ending in `(from, to]` seconds.
fn mean_over(out: &Output, flow: Option<i64>, col: &str, from: f64, to: f64) -> f64 {
    let t = if flow.is_some() { &out.timeseries } else { &out.link };
    let ts = t.f64("t_s").expect("t_s");
    let v = t.f64(col).unwrap_or_else(|| panic!("no column {col}"));
    let flows: Option<Vec<i64>> = flow.map(|_| match t.get("flow") {
        Some(rtcc_sim::metrics::Column::I64(f)) => f.clone(),
        _ => panic!("no flow column"),
    });
    let (mut s, mut n) = (0.0, 0);
    for i in 0..ts.len() {
        let mine = flows.as_ref().is_none_or(|f| Some(f[i]) == flow);
        if mine && ts[i] > from && ts[i] <= to && v[i].is_finite() {
            s += v[i];
            n += 1;
        }
    }
    assert!(n > 0, "no bins of {col}");
    s / n as f64
}

fn bulk(cc: &str, extra: &str) -> String {
    format!("[[flow]]\nkind = \"tcp\"\ncc = \"{cc}\"\n{extra}\n")
}

/// 10 Mbps, 20 ms one way (RTT 40 ms, BDP 50 kB), drop-tail of `queue`.
fn dumbbell(duration: u32, queue: &str, flows: &str) -> String {
    format!(
        "duration = \"{duration}s\"\n[link]\ncapacity = \"10Mbps\"\ndelay = \"20ms\"\nqueue = {queue}\n\
         [record]\npackets = false\n{flows}"
    )
}

#[test]
fn one_cubic_flow_fills_a_drop_tail_link_and_its_queue() {
    let out = run(&dumbbell(40, "\"50kB\"", &bulk("cubic", "")));
    let util = mean_over(&out, None, "delivered_kbps", 5.0, 40.0) / 10_000.0;
    assert!(util >= 0.95, "utilisation after slow start {util:.3}");
    // A loss-based flow fills the buffer: the queue reaches most of 50 kB (40 ms).
    let qmax = out.summary.link.queue_ms_max.expect("queue");
    assert!(qmax > 30.0, "queue max {qmax} ms");
    let f = &out.summary.flows[0];
    assert_eq!(f.kind, "tcp");
    assert_eq!(f.cc.as_deref(), Some("cubic"));
    assert!(f.retransmits > 0 && f.packets_dropped > 0, "a full drop-tail queue drops");
    assert!(f.goodput_kbps > 9_000.0, "goodput {}", f.goodput_kbps);
    // RTT samples from ACKs of new data: 40 ms + queue (≤ 40 ms) + a delayed ACK (≤ 40 ms).
    let rtt = f.rtt_ms_mean.expect("rtt");
    let p95 = f.rtt_ms_p95.expect("rtt");
    assert!((40.0..90.0).contains(&rtt) && p95 <= 121.0, "RTT {rtt} ms, p95 {p95} ms");
    // The time series' smoothed RTT agrees with the samples.
    let srtt = mean_over(&out, Some(0), "rtt_ms", 5.0, 40.0);
    assert!((srtt / rtt - 1.0).abs() < 0.15, "srtt {srtt} vs samples {rtt}");
}

#[test]
fn two_flows_of_one_kind_share_fairly() {
    // NewReno proper (RFC 6582, no SACK), Linux's SACK path, and Cubic.
    for (cc, sack) in [("reno", "false"), ("reno", "true"), ("cubic", "true")] {
        let flow = |name: &str, extra: &str| bulk(cc, &format!("name = \"{name}\"\nsack = {sack}\n{extra}"));
        let flows = flow("a", "") + &flow("b", "start = \"1s\"");
        let out = run(&dumbbell(60, "\"50kB\"", &flows));
        let a = mean_over(&out, Some(0), "goodput_kbps", 5.0, 60.0);
        let b = mean_over(&out, Some(1), "goodput_kbps", 5.0, 60.0);
        let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
        assert!(jain >= 0.95, "{cc}: {a:.0} vs {b:.0} kbps, Jain {jain:.3}");
        assert!(a + b > 9_000.0, "{cc}: together {:.0} kbps", a + b);
    }
}

/// Mathis et al. 1997: rate = MSS/RTT · sqrt(3/2)/sqrt(p). Linux counts
/// acknowledged segments (not ACKs) when growing the window, so delayed
/// ACKs leave the constant at sqrt(3/2).
#[test]
fn reno_under_random_loss_follows_the_mathis_law() {
    for (p, secs) in [(0.001f64, 300), (0.005, 120), (0.02, 120)] {
        let text = format!(
            "duration = \"{secs}s\"\n[link]\ncapacity = \"500Mbps\"\ndelay = \"20ms\"\nqueue = \"10MB\"\n\
             loss = {p}\n[record]\npackets = false\n{}",
            bulk("reno", "")
        );
        let out = run(&text);
        let f = &out.summary.flows[0];
        let rtt = 0.040;
        let mathis = 1448.0 * 8.0 / rtt * (1.5f64).sqrt() / p.sqrt() / 1e3;
        let ratio = f.goodput_kbps / mathis;
        assert!((0.7..=1.3).contains(&ratio), "p = {p}: {:.0} kbps vs Mathis {mathis:.0} ({ratio:.2})", f.goodput_kbps);
    }
}

#[test]
fn udp_sends_its_rate_and_web_flows_report_completion_times() {
    let flows = "[[flow]]\nname = \"cbr\"\nkind = \"udp\"\nrate = \"2Mbps\"\n\
                 [[flow]]\nname = \"onoff\"\nkind = \"udp\"\nrate = \"2Mbps\"\non_time = \"1s\"\noff_time = \"1s\"\n\
                 [[flow]]\nname = \"web\"\nkind = \"web\"\nthink_time = \"1s\"\n";
    let out = run(&dumbbell(120, "\"50kB\"", flows));
    let s = &out.summary.flows;
    // Goodput counts wire bytes, as video's does.
    assert!((s[0].goodput_kbps / 2000.0 - 1.0).abs() < 0.01, "cbr {}", s[0].goodput_kbps);
    assert!((s[1].goodput_kbps / 1000.0 - 1.0).abs() < 0.2, "on/off {}", s[1].goodput_kbps);
    let w = &s[2];
    assert_eq!(w.kind, "web");
    // About one 40 kB download per (think + completion) ≈ 1.1 s.
    assert!(w.objects_completed > 60, "{} downloads", w.objects_completed);
    assert!(w.objects_started - w.objects_completed <= 1);
    let fct = w.fct_ms_mean.expect("completion times");
    // 30–50 kB is 21–35 segments: at least IW10's round trip (40 ms), the
    // rest's serialisation (1.2 ms each) and the last one's 20 ms trip.
    assert!((70.0..1000.0).contains(&fct), "FCT {fct} ms");
    assert!(w.fct_ms_p95.unwrap() >= w.fct_ms_p50.unwrap());
    let by = &out.summary.link.utilization_by_kind;
    assert!(by["udp"] > 0.25 && by["web"] > 0.0 && by["tcp"] == 0.0, "{by:?}");
}

#[test]
fn a_reverse_tcp_flow_shares_the_feedback_path() {
    let text = "duration = \"30s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\nreverse_capacity = \"1Mbps\"\n\
                reverse_queue = \"30kB\"\n[record]\npackets = false\n\
                [[flow]]\nname = \"call\"\ncontroller = \"gcc\"\nencoder = \"ideal\"\n\
                [[flow]]\nname = \"upload\"\nkind = \"tcp\"\ndirection = \"reverse\"\nstart = \"10s\"\n";
    let out = run(text);
    let rev = out.summary.reverse_link.as_ref().expect("reverse link");
    // The upload fills the 1 Mbps reverse link; the call's reports queue behind it.
    assert!(rev.utilization_by_kind["tcp"] > 0.5, "{rev:?}");
    assert!(rev.utilization_by_kind["feedback"] > 0.0);
    let up = &out.summary.flows[1];
    assert_eq!(up.direction, "reverse");
    assert!(up.goodput_kbps > 800.0 * 20.0 / 30.0 * 0.9, "upload {}", up.goodput_kbps);
    // Its share is of the 1 Mbps it crosses, not of the forward 3 Mbps.
    assert!(up.utilization > 0.5, "upload utilisation {}", up.utilization);
    // Its ACKs cross the forward bottleneck as feedback: far more than the
    // call's sender reports there (about 84 B a second, 0.0002 of 3 Mbps).
    assert!(out.summary.link.utilization_by_kind["feedback"] > 0.002, "{:?}", out.summary.link);
    let call = &out.summary.flows[0];
    assert!(call.reports_sent > 0 && call.goodput_kbps > 500.0, "{call:?}");
}

#[test]
fn gcc_call_against_one_cubic_flow_gets_a_measured_share() {
    // PIBES §V: WebRTC held about 24 % of a 4 Mbps link against one Cubic flow.
    let text = "duration = \"60s\"\n[link]\ncapacity = \"4Mbps\"\ndelay = \"20ms\"\nqueue = \"100kB\"\n\
                [record]\npackets = false\n\
                [[flow]]\nname = \"call\"\ncontroller = \"gcc\"\nencoder = \"ideal\"\n\
                [[flow]]\nname = \"bulk\"\nkind = \"tcp\"\ncc = \"cubic\"\nstart = \"5s\"\n";
    let out = run(text);
    let call = mean_over(&out, Some(0), "goodput_kbps", 15.0, 60.0);
    let tcp = mean_over(&out, Some(1), "goodput_kbps", 15.0, 60.0);
    let share = call / 4000.0;
    // Delay-based GCC yields to a loss-based flow that keeps the queue full,
    // but is not starved (measured: 14 %; the paper's testbed, 24 %).
    eprintln!("GCC call's share against one Cubic flow: {:.1} % (cubic {:.1} %)", share * 100.0, tcp / 40.0);
    assert!((0.05..0.5).contains(&share) && tcp > call, "call {call:.0} kbps ({share:.2}), cubic {tcp:.0}");
    assert!(call + tcp > 3_400.0, "link used {:.0}", call + tcp);
}

#[test]
fn cross_traffic_is_deterministic_for_a_seed() {
    let flows = bulk("cubic", "") + "[[flow]]\nkind = \"web\"\nthink_time = \"500ms\"\n[[flow]]\nkind = \"udp\"\non_time = \"1s\"\noff_time = \"2s\"\n";
    let text = dumbbell(20, "\"30kB\"", &flows);
    let a = run(&text).summary;
    let b = run(&text).summary;
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.link, b.link);
}

#[test]
fn bad_cross_traffic_fields_are_refused_by_name() {
    let cases = [
        ("kind = \"tcp\"\ncc = \"vegas\"\n", "flow[0].cc"),
        ("kind = \"tcp\"\nrate = \"1Mbps\"\n", "flow[0].rate"),
        ("kind = \"udp\"\ncc = \"cubic\"\n", "flow[0].cc"),
        ("kind = \"udp\"\non_time = \"1s\"\n", "flow[0].off_time"),
        ("kind = \"web\"\nobject_size = \"zipf\"\n", "flow[0].object_size"),
        ("kind = \"web\"\nobject_size = \"pareto\"\nobject_shape = 1.0\n", "flow[0].object_shape"),
        ("kind = \"tcp\"\ndirection = \"reverse\"\n", "flow[0].direction"),
        ("kind = \"tcp\"\ndirection = \"up\"\n", "flow[0].direction"),
        ("kind = \"ftp\"\n", "flow[0].kind"),
        ("kind = \"tcp\"\nfps = 30\n", "flow[0].fps"),
        ("kind = 3\n", "flow[0].kind"),
        ("kind = \"tcp\"\nstart = \"20s\"\n", "flow[0].start"),
    ];
    for (flow, field) in cases {
        let text = format!("duration = \"10s\"\n[link]\ncapacity = \"10Mbps\"\n[[flow]]\n{flow}");
        let e = match Scenario::parse(&text, "bad.toml") {
            Ok(_) => panic!("accepted: {flow}"),
            Err(e) => e,
        };
        assert_eq!(e.field, field, "{flow}: {e}");
        assert!(e.to_string().starts_with(&format!("bad.toml: {field}: ")), "{e}");
    }
}

#[test]
fn bbr_alone_fills_the_link_and_keeps_the_queue_near_one_bdp() {
    // A deep buffer (10 BDP) that a loss-based flow would fill.
    let out = run(&dumbbell(40, "\"500kB\"", &bulk("bbr", "")));
    let util = mean_over(&out, None, "delivered_kbps", 5.0, 40.0) / 10_000.0;
    assert!(util >= 0.90, "utilisation {util:.3}");
    // In flight ≤ 2 BDP (cwnd gain 2): the standing queue stays ≤ 1 BDP (40 ms).
    let q = mean_over(&out, None, "queue_ms", 5.0, 40.0);
    assert!(q <= 45.0, "mean queue {q:.1} ms");
    let f = &out.summary.flows[0];
    assert_eq!(f.packets_dropped, 0, "BBR never overflows 10 BDP");
    let ts = &out.timeseries;
    assert!(ts.f64("btl_bw_kbps").is_some() && ts.f64("mode").is_some(), "BBR's state is in the time series");
}

/// Hock et al. 2017 and Ware et al. 2019: against Cubic, BBR v1 takes
/// most of a shallow buffer's link and loses in a deep one.
#[test]
fn bbr_against_cubic_depends_on_the_buffer() {
    let flows = bulk("bbr", "name = \"bbr\"") + &bulk("cubic", "name = \"cubic\"");
    let share = |queue: &str| {
        let out = run(&dumbbell(60, queue, &flows));
        let b = mean_over(&out, Some(0), "goodput_kbps", 10.0, 60.0);
        let c = mean_over(&out, Some(1), "goodput_kbps", 10.0, 60.0);
        (b, c)
    };
    let (b, c) = share("\"12kB\"");
    assert!(b > c, "shallow (¼ BDP): bbr {b:.0} vs cubic {c:.0} kbps");
    let (b, c) = share("\"1MB\"");
    assert!(c > b, "deep (20 BDP): bbr {b:.0} vs cubic {c:.0} kbps");
}

#[test]
fn stop_ends_cross_traffic_and_web_downloads_complete_at_the_client() {
    let flows = "[[flow]]\nname = \"tcp\"\nkind = \"tcp\"\nstop = \"10s\"\n\
                 [[flow]]\nname = \"udp\"\nkind = \"udp\"\nrate = \"1Mbps\"\nstart = \"2s\"\nstop = \"12s\"\n\
                 [[flow]]\nname = \"web\"\nkind = \"web\"\nobject_size = \"pareto\"\nobject_mean = \"200kB\"\n\
                 think_time = \"300ms\"\nstop = \"15s\"\n";
    let out = run(&dumbbell(20, "\"50kB\"", flows));
    for (flow, stop) in [(0, 10.0), (1, 12.0), (2, 15.0)] {
        let after = mean_over(&out, Some(flow), "send_kbps", stop + 0.1, 20.0);
        assert_eq!(after, 0.0, "flow {flow} sends after its stop");
        assert!(mean_over(&out, Some(flow), "send_kbps", 2.0, stop) > 100.0, "flow {flow} before its stop");
    }
    let udp = &out.summary.flows[1];
    // 10 s of 1 Mbps over its active time.
    assert!((udp.goodput_kbps / 1000.0 - 1.0).abs() < 0.01, "{}", udp.goodput_kbps);
    let web = &out.summary.flows[2];
    assert!(web.objects_completed >= 5, "{web:?}");
    // A download's completion time includes at least one RTT (40 ms) plus its transfer.
    assert!(web.fct_ms_p50.unwrap() >= 40.0, "{web:?}");
}

#[test]
fn a_reverse_flow_built_in_code_without_a_reverse_link_is_refused() {
    let text = dumbbell(5, "\"50kB\"", &bulk("cubic", ""));
    let mut sc = Scenario::parse(&text, "code.toml").unwrap();
    sc.flows[0].direction = rtcc_sim::scenario::Direction::Reverse;
    match Simulation::new(sc, None) {
        Ok(_) => panic!("accepted"),
        Err(e) => assert_eq!(e.field, "flow[0].direction"),
    }
}

#[test]
fn a_web_client_requests_each_object_over_the_path_back_and_asks_again_when_it_is_lost() {
    // 50 ms each way: a one-segment object takes the request's trip and the
    // data's, a round trip (the server learns of a request only when it arrives).
    let web = "[[flow]]\nname = \"web\"\nkind = \"web\"\nobject_size = \"fixed\"\nobject_mean = \"1kB\"\n\
               think_time = \"500ms\"\n";
    let link = |extra: &str| {
        format!(
            "duration = \"60s\"\n[link]\ncapacity = \"10Mbps\"\ndelay = \"50ms\"\nqueue = \"50kB\"\n{extra}\n\
             [record]\npackets = false\n{web}"
        )
    };
    let out = run(&link(""));
    let w = &out.summary.flows[0];
    assert!(w.objects_completed > 50, "{w:?}");
    let p50 = w.fct_ms_p50.unwrap();
    assert!((100.0..105.0).contains(&p50), "{p50}");
    // Requests lost on the way back are sent again after RFC 6298's 1 s:
    // downloads go on, and the slowest wait a back-off.
    let out = run(&link("reverse_loss = 0.3"));
    let w = &out.summary.flows[0];
    assert!(w.objects_completed > 20, "{w:?}");
    assert!(w.fct_ms_p95.unwrap() >= 1_000.0, "{w:?}");
    assert!(w.fct_ms_p50.unwrap() < 1_000.0, "{w:?}");
}
