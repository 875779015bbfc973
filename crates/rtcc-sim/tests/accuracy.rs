//! Accuracy metrics: a controller's `capacity_estimate_kbps` against the
//! capacity of its bottleneck, its `competition` state against whether
//! another flow's data crossed that bottleneck, and every flow's share of
//! the data its bottleneck carried. A probe controller defined here reports
//! constant states, so the expected numbers follow from the scenario alone.

mod common;

use std::sync::Once;

use common::{f64s, i64s, run};
use rtcc_core::controller::{
    self, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, Params,
};
use rtcc_core::units::DataRate;
use rtcc_sim::Output;

/// Sends at a fixed rate and reports the estimates it was given, each only
/// if set (not negative).
struct Probe {
    rate: DataRate,
    estimate_kbps: f64,
    competition: f64,
}

impl Controller for Probe {
    fn name(&self) -> &str {
        "accuracy-probe"
    }
    fn decision(&self) -> Decision {
        Decision::rates(self.rate, self.rate)
    }
    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("probe_rate_kbps", self.rate.kbps_f64());
        if self.estimate_kbps >= 0.0 {
            out("capacity_estimate_kbps", self.estimate_kbps);
        }
        if self.competition >= 0.0 {
            out("competition", self.competition);
        }
    }
}

const RATE: Param<DataRate> =
    Param::rate("rate", DataRate::from_kbps(1000), DataRate::ZERO, DataRate::MAX, "target and pacing rate");
const ESTIMATE: Param<f64> =
    Param::number("estimate_kbps", -1.0, -1.0, 1e9, "capacity_estimate_kbps to report; negative: none");
const COMPETITION: Param<f64> = Param::number("competition", -1.0, -1.0, 1.0, "competition to report; negative: none");

fn create(p: &Params, _: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Probe { rate: p.get(&RATE)?, estimate_kbps: p.get(&ESTIMATE)?, competition: p.get(&COMPETITION)? }))
}

const INFO: ControllerInfo = ControllerInfo {
    name: "accuracy-probe",
    summary: "test: fixed rate, constant capacity estimate and competition state",
    params: &[RATE.info(), ESTIMATE.info(), COMPETITION.info()],
    create,
    receiver: None,
    pushback: rtcc_core::controller::Pushback::InFlight,
    needs_arrivals: true,
    report_format: rtcc_core::feedback::ReportFormat::Twcc,
};

fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| controller::register(INFO).unwrap());
}

/// A `[[flow]]` of the probe: `params` go into its controller table.
fn probe(params: &str, lines: &str) -> String {
    format!("[[flow]]\ncontroller = {{ name = \"accuracy-probe\", {params} }}\nencoder = \"ideal\"\n{lines}\n")
}

fn scenario(duration: &str, link: &str, flows: &str) -> String {
    format!("duration = \"{duration}\"\n[link]\ndelay = \"20ms\"\n{link}\n[record]\npackets = false\n{flows}")
}

fn simulate(text: &str) -> Output {
    register();
    run(text)
}

/// Flow `flow`'s rows of the time series: (t_s, column).
fn rows(out: &Output, flow: i64, col: &str) -> Vec<(f64, f64)> {
    let (t, f, v) = (f64s(&out.timeseries, "t_s"), i64s(&out.timeseries, "flow"), f64s(&out.timeseries, col));
    (0..t.len()).filter(|&i| f[i] == flow).map(|i| (t[i], v[i])).collect()
}

#[test]
fn a_constant_estimate_is_checked_against_each_bins_capacity() {
    // 2 Mbps, nothing for a second, 2 Mbps, then 4 Mbps; the probe says
    // 2.2 Mbps throughout: +10 % while the link has 2 Mbps, −45 % at 4 Mbps,
    // undefined in the outage.
    let link = "capacity = { kind = \"step\", steps = [[\"0s\", \"2Mbps\"], [\"4s\", \"0bps\"], [\"5s\", \"2Mbps\"], \
                [\"10s\", \"4Mbps\"]] }";
    let out = simulate(&scenario("20s", link, &probe("rate = \"1Mbps\", estimate_kbps = 2200", "")));
    let cap = rows(&out, 0, "capacity_kbps");
    let err = rows(&out, 0, "capacity_error");
    assert_eq!(cap.len(), 200);
    for (&(t, c), &(_, e)) in cap.iter().zip(&err) {
        let (want_c, want_e) = match t {
            t if t <= 4.0 + 1e-9 || (t > 5.05 && t <= 10.0 + 1e-9) => (2000.0, 0.1),
            t if t > 4.05 && t <= 5.0 + 1e-9 => (0.0, f64::NAN),
            t if t > 10.05 => (4000.0, -0.45),
            _ => continue, // bins straddling a step (none here: steps fall on bin ends)
        };
        assert!((c - want_c).abs() < 1e-6, "t={t}: capacity {c} kbps, want {want_c}");
        if want_e.is_nan() {
            assert!(e.is_nan(), "t={t}: error {e} without capacity");
        } else {
            assert!((e - want_e).abs() < 1e-9, "t={t}: error {e}, want {want_e}");
        }
    }
    // The link table says the same capacity.
    assert_eq!(f64s(&out.link, "capacity_kbps"), cap.iter().map(|r| r.1).collect::<Vec<_>>().as_slice());
    // 90 bins at +10 %, 100 at −45 %; the 10 outage bins are left out.
    let f = &out.summary.flows[0];
    let mean = f.capacity_estimate_error.expect("reported");
    assert!((mean - (90.0 * 0.1 + 100.0 * 0.45) / 190.0).abs() < 1e-9, "{mean}");
    let within = f.capacity_estimate_within_10.expect("reported");
    assert!((within - 90.0 / 190.0).abs() < 1e-9, "{within}");
    // No competition state, no competition columns.
    assert_eq!(f.competition_accuracy, None);
    assert!(out.timeseries.get("competition_truth").is_none());
}

#[test]
fn an_estimate_of_one_point_one_times_a_fixed_link_is_ten_percent_off() {
    let out = simulate(&scenario("10s", "capacity = \"3Mbps\"", &probe("estimate_kbps = 3300", "")));
    let f = &out.summary.flows[0];
    assert!((f.capacity_estimate_error.expect("reported") - 0.1).abs() < 1e-9);
    assert_eq!(f.capacity_estimate_within_10, Some(1.0));
    assert!(rows(&out, 0, "capacity_error").iter().all(|(_, e)| (e - 0.1).abs() < 1e-9));
}

#[test]
fn competition_truth_follows_a_tcp_flow_from_its_start_to_its_stop() {
    // A 1 Mbps call that always says "alone", and a Cubic download from
    // 10 s to 20 s on 10 Mbps (50 kB of queue: 40 ms to drain at its stop).
    let flows =
        probe("competition = 0", "") + "[[flow]]\nkind = \"tcp\"\ncc = \"cubic\"\nstart = \"10s\"\nstop = \"20s\"\n";
    let out = simulate(&scenario("30s", "capacity = \"10Mbps\"\nqueue = \"50kB\"", &flows));
    let truth = rows(&out, 0, "competition_truth");
    assert_eq!(truth.len(), 300);
    for &(t, v) in &truth {
        if t <= 10.0 + 1e-9 || t > 20.15 {
            assert_eq!(v, 0.0, "t={t}: nobody else on the link");
        } else if t > 10.05 && t <= 20.0 + 1e-9 {
            assert_eq!(v, 1.0, "t={t}: the download runs");
        }
    }
    // "Alone" is right exactly in the bins where the truth is 0.
    let alone = truth.iter().filter(|r| r.1 == 0.0).count() as f64;
    let acc = out.summary.flows[0].competition_accuracy.expect("reported");
    assert!((acc - alone / 300.0).abs() < 1e-12, "{acc} vs {alone} of 300 bins");
    assert!((acc - 2.0 / 3.0).abs() < 0.01, "{acc}");
    // The call reports no capacity estimate.
    assert_eq!(out.summary.flows[0].capacity_estimate_error, None);
    assert!(out.timeseries.get("capacity_error").is_none());
    // The TCP flow's rows have no accuracy columns; its summary has nulls.
    assert!(rows(&out, 1, "competition_truth").iter().all(|r| r.1.is_nan()));
    assert_eq!(out.summary.flows[1].competition_accuracy, None);
}

#[test]
fn reverse_traffic_competes_only_on_the_reverse_bottleneck() {
    // Forward 10 Mbps; reverse 2 Mbps, filled by an upload. A forward call
    // sees only the upload's ACKs (not competition); a reverse call shares
    // the reverse bottleneck with the upload, and its capacity is that one's.
    let link = "capacity = \"10Mbps\"\nreverse_capacity = \"2Mbps\"\nreverse_queue = \"30kB\"";
    let flows = probe("estimate_kbps = 11000, competition = 0", "name = \"fwd\"")
        + "[[flow]]\nname = \"upload\"\nkind = \"tcp\"\ndirection = \"reverse\"\n"
        + &probe(
            "rate = \"500kbps\", estimate_kbps = 2200, competition = 1",
            "name = \"rev\"\ndirection = \"reverse\"",
        );
    let out = simulate(&scenario("20s", link, &flows));
    assert!(rows(&out, 0, "competition_truth").iter().all(|r| r.1 == 0.0));
    let [fwd, upload, rev] = &out.summary.flows[..] else { panic!("three flows") };
    assert_eq!(fwd.competition_accuracy, Some(1.0));
    assert!((fwd.capacity_estimate_error.unwrap() - 0.1).abs() < 1e-9);
    assert!(rows(&out, 2, "capacity_kbps").iter().all(|r| (r.1 - 2000.0).abs() < 1e-6));
    assert!((rev.capacity_estimate_error.unwrap() - 0.1).abs() < 1e-9);
    let acc = rev.competition_accuracy.unwrap();
    assert!(acc > 0.97, "the upload runs all along: {acc}");
    // Shares of each bottleneck's data: the forward call is alone on its
    // own (ACKs and reports are not data); the reverse one splits.
    assert_eq!(fwd.link_share, Some(1.0));
    let (u, r) = (upload.link_share.unwrap(), rev.link_share.unwrap());
    assert!((u + r - 1.0).abs() < 1e-12, "{u} + {r}");
    // The call sends 500 kbps of the 2 Mbps; the upload takes the rest.
    assert!((0.2..0.3).contains(&r), "reverse call's share {r}");
}

#[test]
fn link_shares_split_a_bottleneck_by_data_bytes() {
    let text = |a: &str, b: &str| {
        let flows = format!(
            "[[flow]]\ncontroller = {{ name = \"fixed\", rate = \"{a}\" }}\nencoder = \"ideal\"\n\
             [[flow]]\ncontroller = {{ name = \"fixed\", rate = \"{b}\" }}\nencoder = \"ideal\"\n"
        );
        scenario("20s", "capacity = \"10Mbps\"", &flows)
    };
    let even = simulate(&text("1Mbps", "1Mbps"));
    let uneven = simulate(&text("1Mbps", "3Mbps"));
    for f in &even.summary.flows {
        let s = f.link_share.expect("defined for every flow");
        assert!((s - 0.5).abs() < 0.005, "{s}");
    }
    let s = |o: &Output, i: usize| o.summary.flows[i].link_share.unwrap();
    assert!((s(&uneven, 0) - 0.25).abs() < 0.005 && (s(&uneven, 1) - 0.75).abs() < 0.005);
    assert!((s(&uneven, 0) + s(&uneven, 1) - 1.0).abs() < 1e-12);
    // A controller that reports neither state: null accuracy, no columns.
    for f in &even.summary.flows {
        assert_eq!(
            (f.capacity_estimate_error, f.capacity_estimate_within_10, f.competition_accuracy),
            (None, None, None)
        );
    }
    for col in ["capacity_kbps", "capacity_error", "competition_truth"] {
        assert!(even.timeseries.get(col).is_none(), "{col}");
    }
}

#[test]
fn a_tcp_flow_has_a_link_share_and_the_fields_stay_in_the_schema() {
    let flows = probe("rate = \"2Mbps\", competition = 1", "") + "[[flow]]\nkind = \"tcp\"\n";
    let out = simulate(&scenario("20s", "capacity = \"10Mbps\"\nqueue = \"50kB\"", &flows));
    let (video, tcp) = (out.summary.flows[0].link_share.unwrap(), out.summary.flows[1].link_share.unwrap());
    assert!((video + tcp - 1.0).abs() < 1e-12);
    assert!(tcp > 0.7, "TCP takes what the 2 Mbps call leaves: {tcp}");
    // Nulls are written, not left out: every flow has the same fields.
    let json = serde_json::to_value(&out.summary).unwrap();
    for f in json["flows"].as_array().unwrap() {
        for k in ["capacity_estimate_error", "capacity_estimate_within_10", "competition_accuracy", "link_share"] {
            assert!(f.get(k).is_some(), "{k} missing");
        }
    }
    assert!(json["flows"][1]["competition_accuracy"].is_null());
    assert!(json["flows"][0]["capacity_estimate_error"].is_null());
}

#[test]
fn accuracy_does_not_need_the_time_series() {
    let flows = probe("estimate_kbps = 9000, competition = 1", "")
        + "[[flow]]\nkind = \"udp\"\nrate = \"2Mbps\"\nstart = \"5s\"\nstop = \"15s\"\n";
    let text =
        scenario("20s", "capacity = { kind = \"step\", steps = [[\"0s\", \"10Mbps\"], [\"8s\", \"8Mbps\"]] }", &flows);
    let with = simulate(&text);
    let without = simulate(&text.replace("packets = false", "packets = false\ntimeseries = false"));
    assert!(without.timeseries.columns.is_empty());
    let (a, b) = (&with.summary.flows[0], &without.summary.flows[0]);
    assert_eq!(
        (a.capacity_estimate_error, a.capacity_estimate_within_10, a.competition_accuracy, a.link_share),
        (b.capacity_estimate_error, b.capacity_estimate_within_10, b.competition_accuracy, b.link_share)
    );
    // 8 s at 10 Mbps (−10 %), 12 s at 8 Mbps (+12.5 %); competing 5–15 s.
    let err = a.capacity_estimate_error.unwrap();
    assert!((err - (80.0 * 0.1 + 120.0 * 0.125) / 200.0).abs() < 1e-9, "{err}");
    assert!((a.capacity_estimate_within_10.unwrap() - 0.4).abs() < 1e-9);
    let acc = a.competition_accuracy.unwrap();
    assert!((acc - 0.5).abs() < 0.015, "{acc}");
}
