//! The recorder in the simulator's runs: the same with or without the time
//! series, and queue delay left undefined where there is no capacity to
//! drain the queue. (Events alone, without a simulator: rtcc-record's tests.)

use rtcc_core::units::{Duration, Time};
use rtcc_sim::metrics::Column;
use rtcc_sim::{run_text, Output};

fn run(text: &str) -> Output {
    run_text(text, "test.toml", None).unwrap_or_else(|e| panic!("{e}"))
}

fn overload(record: &str) -> String {
    format!(
        r#"duration = "10s"
{record}
[link]
capacity = {{ kind = "step", steps = [["0s", "2Mbps"], ["4s", "0bps"], ["5s", "2Mbps"]] }}
[[flow]]
controller = {{ name = "fixed", rate = "2.5Mbps" }}
encoder = "ideal"
"#
    )
}

#[test]
fn link_queue_summary_does_not_need_the_time_series() {
    let with = run(&overload(""));
    let without = run(&overload("[record]\ntimeseries = false"));
    assert!(without.timeseries.columns.is_empty() && without.link.columns.is_empty());
    let (a, b) = (&with.summary.link, &without.summary.link);
    assert!(a.queue_ms_mean.is_some());
    assert_eq!(a.queue_ms_mean, b.queue_ms_mean);
    assert_eq!(a.queue_ms_max, b.queue_ms_max);
}

#[test]
fn queue_delay_is_undefined_without_capacity() {
    let out = run(&overload(""));
    let t = out.link.f64("t_s").unwrap();
    let q = out.link.f64("queue_ms").unwrap();
    let bytes = out.link.f64("queue_bytes").unwrap();
    for (i, &ts) in t.iter().enumerate() {
        // Bins wholly inside the outage hold a queue that nothing drains.
        if ts > 4.05 && ts < 5.05 {
            assert!(bytes[i] > 0.0 && q[i].is_nan(), "t={ts}: {} B, {} ms", bytes[i], q[i]);
        } else {
            assert!(q[i].is_finite(), "t={ts}: {}", q[i]);
        }
    }
    // 0.5 Mbps excess for 10 s plus a 1 s outage drains in seconds, not hours.
    let max = out.summary.link.queue_ms_max.unwrap();
    assert!(max < 60_000.0, "{max}");
    let finite: Vec<f64> = q.iter().copied().filter(|x| x.is_finite()).collect();
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    assert!((out.summary.link.queue_ms_mean.unwrap() - mean).abs() < 1e-9);
}

/// Cross eq. 6 counts what the receivers got: loss after the queue used the
/// link (`utilization`) but is not received (`utilization_received`), and
/// a loss with a `start` leaves the time before it alone.
#[test]
fn received_utilization_leaves_out_what_random_loss_took() {
    let text = |loss: &str| {
        format!(
            r#"duration = "20s"
[link]
capacity = "2Mbps"
queue = "100ms"
loss = {loss}
[[flow]]
controller = {{ name = "fixed", rate = "2.5Mbps" }}
encoder = "ideal"
nack = false
"#
        )
    };
    let clean = run(&text("0.0")).summary.link;
    assert!(clean.utilization > 0.97, "{clean:?}");
    assert!((clean.utilization_received - clean.utilization).abs() < 0.01, "{clean:?}");
    let lossy = run(&text("{ kind = \"bernoulli\", p = 0.1, start = \"10s\" }")).summary.link;
    assert!(lossy.utilization > 0.97, "{lossy:?}");
    // Half the run at 10 % loss: about 5 % of the capacity not received.
    let missing = lossy.utilization - lossy.utilization_received;
    assert!((0.035..0.065).contains(&missing), "{missing} of {lossy:?}");
}

/// `flow`'s rows of `t` (all rows for a table without a flow column).
fn rows_of(t: &rtcc_sim::metrics::Table, flow: Option<i64>) -> Vec<(String, Vec<u64>)> {
    let keep: Vec<bool> = match (flow, t.get("flow")) {
        (Some(i), Some(Column::I64(f))) => f.iter().map(|x| *x == i).collect(),
        _ => vec![true; t.columns.first().map_or(0, |(_, c)| c.len())],
    };
    t.columns
        .iter()
        .map(|(n, c)| {
            let bits: Vec<u64> = match c {
                Column::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                Column::I64(v) => v.iter().map(|x| *x as u64).collect(),
                Column::U8(v) => v.iter().map(|x| *x as u64).collect(),
            };
            (n.clone(), bits.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(b, _)| b).collect())
        })
        .collect()
}

/// Appends `part`'s rows to `acc`, column by column; a column `acc` lacks
/// so far is NaN in its earlier rows (as the time series back-fills).
fn append(acc: &mut Vec<(String, Vec<u64>)>, part: Vec<(String, Vec<u64>)>) {
    let before = acc.first().map_or(0, |(_, c)| c.len());
    let n = part.first().map_or(0, |(_, c)| c.len());
    for (name, col) in part {
        match acc.iter_mut().find(|(a, _)| *a == name) {
            Some((_, c)) => c.extend(col),
            None => {
                let mut c = vec![f64::NAN.to_bits(); before];
                c.extend(col);
                acc.push((name, c));
            }
        }
    }
    for (_, c) in acc.iter_mut() {
        c.resize(before + n, f64::NAN.to_bits());
    }
}

#[test]
fn tables_taken_during_the_run_add_up_to_the_tables_at_the_end() {
    // Loss, jitter (reordering), a reverse bottleneck, TCP beside video and
    // a controller whose state columns appear late: every row must come out
    // once, whole, in its flow's order, whenever the tables are taken.
    let text = r#"duration = "12s"
seed = 3
[link]
capacity = { kind = "step", steps = [["0s", "4Mbps"], ["5s", "1Mbps"], ["8s", "4Mbps"]] }
queue = "60kB"
loss = 0.02
jitter = "3ms"
reverse_capacity = "300kbps"
reverse_queue = "20kB"
[[flow]]
controller = "gcc"
encoder = "lagging"
[[flow]]
controller = "vivace"
start = "2s"
[[flow]]
kind = "tcp"
cc = "cubic"
start = "4s"
"#;
    let whole = run(text);
    let mut sim = rtcc_sim::Simulation::new(rtcc_sim::Scenario::parse(text, "t.toml").unwrap(), None).unwrap();
    let mut parts = Vec::new();
    let mut t = Time::ZERO;
    while sim.run_until(t) {
        parts.push(sim.take_tables());
        t = t + Duration::from_millis(730);
    }
    assert!(sim.pending_rows() > 0, "the last flows' rows wait for the end");
    let rest = sim.output();
    let taken: usize = parts.iter().map(|p| p.packets.columns[0].1.len()).sum();
    assert!(taken > whole.packets.columns[0].1.len() / 2, "most packet rows were taken during the run");
    for (name, full, part_of, rest_of) in [
        ("packets", &whole.packets, (|p: &rtcc_sim::output::Tables| &p.packets) as fn(&_) -> &_, &rest.packets),
        ("frames", &whole.frames, |p| &p.frames, &rest.frames),
        ("timeseries", &whole.timeseries, |p| &p.timeseries, &rest.timeseries),
    ] {
        for flow in 0..3 {
            let mut acc = Vec::new();
            for p in &parts {
                append(&mut acc, rows_of(part_of(p), Some(flow)));
            }
            append(&mut acc, rows_of(rest_of, Some(flow)));
            let want = rows_of(full, Some(flow));
            // Columns in the end's order (taken rows may predate a column).
            let got: Vec<_> =
                want.iter().map(|(n, _)| acc.iter().find(|(a, _)| a == n).cloned().unwrap_or_default()).collect();
            assert_eq!(got.len(), acc.len(), "{name}: a column the end does not have");
            // The TCP flow has no frames.
            assert!(!want[0].1.is_empty() || (name, flow) == ("frames", 2), "{name} flow {flow}: no rows");
            assert_eq!(got, want, "{name} flow {flow}");
        }
    }
    let mut link = Vec::new();
    for p in &parts {
        append(&mut link, rows_of(&p.link, None));
    }
    append(&mut link, rows_of(&rest.link, None));
    assert_eq!(link, rows_of(&whole.link, None));
    assert_eq!(rest.summary.flows, whole.summary.flows, "taking rows leaves the summary as it is");
}

/// A flow that stops with frames still in its pacer: the receiver never
/// hears of them, and each is settled as lost 30 s after its capture (the
/// run goes on 50 s past the stop), so every capture is counted.
#[test]
fn frames_the_receiver_never_heard_of_are_lost_once_30_s_old() {
    let out = run("duration = \"70s\"\n[link]\ncapacity = \"2Mbps\"\ndelay = \"30ms\"\nqueue = \"100ms\"\n\
                   [[flow]]\ncontroller = \"gcc\"\n\
                   [[flow]]\ncontroller = \"copa\"\nstart = \"2s\"\nstop = \"20s\"\n\
                   [[flow]]\ncontroller = \"fixed\"\nstop = \"30s\"\n");
    let f = &out.summary.flows[1];
    // 18 s of a 30 fps camera.
    assert_eq!(f.frames_sent + f.frames_skipped, 540, "{f:?}");
    assert_eq!(f.frames_displayed + f.frames_lost + f.frames_late, f.frames_sent, "{f:?}");
    // Copa's sender queue held a tail back when it stopped.
    assert!(f.frames_lost > 200, "{f:?}");
}
