//! A new controller family needs nothing changed outside its own module: a
//! toy controller defined in this file alone sends every frame as one burst
//! and picks an FEC plan per report, is registered through the registry's
//! extension point, and runs through the simulator by name; a second one
//! brings its own receiver-side estimator.

use rtcc_core::controller::{
    self, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FecPlan, FrameSchedule, Param, Params,
    ReceiverEstimator,
};
use rtcc_core::feedback::Feedback;
use rtcc_core::packet::{Packet, PacketKind};
use rtcc_core::units::{DataRate, Time};
use rtcc_sim::metrics::{Column, Table};
use rtcc_sim::run_text;

/// Whole-frame bursts at a fixed rate; FEC group 2 until `switch` reports
/// have arrived, then group 5.
struct ToyBurst {
    rate: DataRate,
    reports: u32,
    switch: u32,
}

impl Controller for ToyBurst {
    fn name(&self) -> &str {
        "toy-burst"
    }
    fn on_feedback(&mut self, _now: Time, _fb: &Feedback) {
        self.reports += 1;
    }
    fn decision(&self) -> Decision {
        Decision {
            schedule: FrameSchedule::Burst,
            fec: Some(FecPlan { group: if self.reports < self.switch { 2 } else { 5 } }),
            ..Decision::rates(self.rate, self.rate)
        }
    }
}

const RATE: Param<DataRate> =
    Param::rate("rate", DataRate::from_kbps(2400), DataRate::ZERO, DataRate::MAX, "target and pacing rate");
const SWITCH: Param<u32> = Param::integer("switch", 100, 1, 1_000_000, "reports before the FEC group grows");

fn create(p: &Params, _ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(ToyBurst { rate: p.get(&RATE)?, reports: 0, switch: p.get(&SWITCH)? }))
}

const INFO: ControllerInfo = ControllerInfo {
    name: "toy-burst",
    summary: "test: whole-frame bursts, FEC group 2 then 5",
    params: &[RATE.info(), SWITCH.info()],
    create,
    receiver: None,
    pushback: rtcc_core::controller::Pushback::InFlight,
    needs_arrivals: true,
    report_format: rtcc_core::feedback::ReportFormat::Twcc,
};

fn col<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    t.f64(name).unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn a_toy_family_registers_and_runs_with_bursts_and_fec_plans() {
    controller::register(INFO).unwrap();
    assert!(controller::listed_names().iter().any(|n| n == "toy-burst"));
    // Built-in names stay built in.
    assert!(controller::register(ControllerInfo { name: "gcc", ..INFO }).is_err());

    // 2.4 Mbps at 30 fps on a 20 Mbps link: 10 kB frames of 9 packets.
    let text = r#"duration = "10s"
seed = 3
[link]
capacity = "20Mbps"
delay = "20ms"
[[flow]]
controller = { name = "toy-burst", switch = 100 }
encoder = "ideal"
"#;
    let out = run_text(text, "toy.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let p = &out.packets;
    let (send, kind) = (col(p, "send_s"), p.get("kind"));
    let (Some(Column::U8(kind)), Some(Column::I64(frame))) = (kind, p.get("frame")) else { panic!("packet table") };

    // Whole-frame bursts: all media packets of a frame leave at one instant.
    // Paced at 2.4 Mbps the 9 packets would span ~33 ms.
    let mut spans = std::collections::BTreeMap::<i64, (f64, f64)>::new();
    for i in 0..send.len() {
        if kind[i] == PacketKind::Media as u8 {
            let e = spans.entry(frame[i]).or_insert((send[i], send[i]));
            e.0 = e.0.min(send[i]);
            e.1 = e.1.max(send[i]);
        }
    }
    assert!(spans.len() > 250, "{} frames", spans.len());
    let widest = spans.values().map(|(a, b)| b - a).fold(0.0, f64::max);
    assert!(widest < 1e-6, "a frame's packets spread over {widest} s");

    // One FEC plan per report: group 2 (5 parities per 9-packet frame) for
    // the first 100 reports (5 s at 50 ms), group 5 (2 per frame) after.
    let ratio = |lo: f64, hi: f64| {
        let n = |k: PacketKind| (0..send.len()).filter(|&i| kind[i] == k as u8 && (lo..hi).contains(&send[i])).count();
        n(PacketKind::Fec) as f64 / n(PacketKind::Media) as f64
    };
    let (early, late) = (ratio(0.5, 4.5), ratio(6.0, 10.0));
    assert!((early - 5.0 / 9.0).abs() < 0.02, "early FEC/media {early}");
    assert!((late - 2.0 / 9.0).abs() < 0.02, "late FEC/media {late}");
    assert!(out.summary.flows[0].fec_packets > 0);
}

/// Receiver side of a REMB-like toy: the rate received over each report
/// interval, put into the report.
struct ToyRemb {
    bytes: u64,
    since: Option<Time>,
}

impl ReceiverEstimator for ToyRemb {
    fn on_packet(&mut self, now: Time, packet: &Packet) {
        self.since.get_or_insert(now);
        self.bytes += packet.size.bytes();
    }
    fn estimate(&mut self, now: Time) -> Option<DataRate> {
        let since = self.since.replace(now)?;
        let secs = (now - since).as_secs_f64();
        let rate = (secs > 0.0).then(|| DataRate::from_bps_f64(self.bytes as f64 * 8.0 / secs));
        self.bytes = 0;
        rate
    }
}

/// Sends at 1.5 Mbps and follows nothing; it only keeps what the reports
/// carried, as the time series shows it.
struct ToyFollower {
    estimate: Option<DataRate>,
    owd_min_ms: f64,
    /// Reports seen, and those without an estimate.
    reports: u32,
    without: u32,
}

impl Controller for ToyFollower {
    fn name(&self) -> &str {
        "toy-remb"
    }
    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        self.reports += 1;
        self.without += u32::from(fb.estimate.is_none());
        self.estimate = fb.estimate.or(self.estimate);
        if let Some(d) = fb.stats.owd_min {
            self.owd_min_ms = d.as_millis_f64();
        }
    }
    fn decision(&self) -> Decision {
        Decision::rates(DataRate::from_kbps(1500), DataRate::from_kbps(1500))
    }
    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("estimate_kbps", self.estimate.map_or(f64::NAN, |r| r.kbps_f64()));
        out("owd_min_ms", self.owd_min_ms);
        out("reports", self.reports as f64);
        out("reports_without_estimate", self.without as f64);
    }
}

fn create_remb(_: &Params, _: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(ToyFollower { estimate: None, owd_min_ms: f64::NAN, reports: 0, without: 0 }))
}

fn create_remb_receiver(_: &Params, _: &ControllerContext) -> Result<Box<dyn ReceiverEstimator>, ConfigError> {
    Ok(Box::new(ToyRemb { bytes: 0, since: None }))
}

#[test]
fn a_receiver_side_estimate_rides_in_every_report() {
    controller::register(ControllerInfo {
        name: "toy-remb",
        summary: "test: receiver-side rate estimate",
        params: &[],
        create: create_remb,
        receiver: Some(create_remb_receiver),
        pushback: rtcc_core::controller::Pushback::InFlight,
        needs_arrivals: true,
        report_format: rtcc_core::feedback::ReportFormat::Twcc,
    })
    .unwrap();
    let text = r#"duration = "10s"
[link]
capacity = "10Mbps"
delay = "30ms"
[[flow]]
controller = "toy-remb"
encoder = "ideal"
"#;
    let out = run_text(text, "remb.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let t = col(&out.timeseries, "t_s");
    let est = col(&out.timeseries, "estimate_kbps");
    let owd = col(&out.timeseries, "owd_min_ms");
    // After the first second the receiver sees the 1.5 Mbps it is sent
    // (media only: no padding, FEC or audio).
    let late: Vec<f64> = t.iter().zip(est).filter(|(t, _)| **t > 2.0).map(|(_, e)| *e).collect();
    assert!(!late.is_empty());
    for e in &late {
        assert!((e / 1500.0 - 1.0).abs() < 0.1, "estimate {e} kbps");
    }
    // Every report carried one.
    let n = col(&out.timeseries, "reports");
    let without = col(&out.timeseries, "reports_without_estimate");
    assert!(n[n.len() - 1] > 100.0, "{} reports", n[n.len() - 1]);
    assert_eq!(without[without.len() - 1], 0.0);
    // The report's one-way delay: propagation plus one packet's serialisation.
    let o = owd[owd.len() - 1];
    assert!((30.0..31.5).contains(&o), "owd_min {o} ms");
}
