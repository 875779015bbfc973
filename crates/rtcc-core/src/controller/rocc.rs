//! `rocc`: RoCC as the Dumbo thesis implements it (dumbo.txt §5.2.1,
//! Table A.1), which overrides the kernel variants (ALGORITHMS.md §11):
//!
//! - eq. 5.1: cwnd_t = bytes acknowledged in [t − (1+γ)·min_rtt, t] + C,
//!   γ = 0.1, C = 1500 B. The "delay" mode is the thesis's variant with
//!   γ = desired_qdelay / min_rtt, i.e. a span of min_rtt + desired_qdelay.
//! - eq. 5.2: propagation_time_i = α·rtt_i + (1−α)·propagation_time_{i−1},
//!   rtt_i = mean RTT of the packets in report i, α = 0.95.
//! - eq. 5.3: sending_rate = cwnd / propagation_time; it is both the pacing
//!   rate and the budget told to the encoder ("RoCC sets the pacing rate at
//!   sending_rate"). In equilibrium the queue is γ·min_rtt + C/sending_rate.
//! - RTT samples exclude the receiver's hold time (§5.2.1). Lost packets act
//!   only through eq. 5.1: they are never acknowledged, so they never count.
//!
//! Choices the thesis leaves open:
//! - min_rtt, "the minimum RTT observed in a long period of time", never
//!   expires by default, as in the authors' kernel RoCC (spec §11.3): RoCC
//!   keeps its standing queue and never drains it, so a finite window (10 s,
//!   as Copa's) adopts that queue as min_rtt once it has passed and the queue
//!   ratchets up by γ·min_rtt + C/rate each window. `min_rtt_window` sets one
//!   for paths whose base delay changes.
//! - An acknowledged byte is timed at its virtual ACK time `send_time + rtt`,
//!   so eq. 5.1 counts what the receiver got in the span however reports
//!   batch it.
//! - Reports come every 50–250 ms, not per packet (`hold_compensation`, on
//!   by default): (a) data held at the receiver still counts as in flight,
//!   so the window handed to the pacer adds sending_rate × the largest hold
//!   time of the last second; eq. 5.1 alone caps a 50 ms-report flow at
//!   C/(hold − γ·min_rtt). (b) The rate is updated once per report and a
//!   1.1·min_rtt span then covers one report's worth of deliveries sent at
//!   one earlier rate, which locks into a two-report cycle when the report
//!   interval is near the RTT (35 % of a 3 Mbps link in the test below); the
//!   bytes are therefore counted over span + hold and scaled to the span.
//!   With per-packet feedback the hold is zero and both reduce to eq. 5.1.
//! - Before the first report: cwnd 10 packets (RFC 6928), pacing and target
//!   at the start rate.

use std::collections::VecDeque;

use super::copa::{ack_sample, Windowed, INIT_CWND_PACKETS, MAX_WINDOW, MIN_WINDOW};
use super::{ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo, Params};
use crate::feedback::Feedback;
use crate::units::{DataRate, DataSize, Duration, Time};

/// γ = 0.1 (eq. 5.1, Table A.1).
const GAMMA: Param<f64> =
    Param::number("gamma", 0.1, 0.0, 10.0, "γ: window span (1+γ)·min_rtt, target queue γ·min_rtt (eq. 5.1, Table A.1)");
/// C = 1500 B (eq. 5.1, Table A.1).
const C_BYTES: Param<DataSize> = Param::size(
    "c_bytes",
    DataSize::from_bytes(1500),
    DataSize::from_bytes(1),
    DataSize::from_bytes(1_000_000),
    "C: constant added to the window, for fairness (eq. 5.1, Table A.1)",
);
/// α = 0.95 (eq. 5.2, Table A.1).
pub(super) const ALPHA: Param<f64> =
    Param::number("alpha", 0.95, 0.0, 1.0, "α: EWMA gain of propagation_time per report (eq. 5.2, Table A.1)")
        .above_min();
const MODE: Param<&str> = Param::choice(
    "mode",
    "window",
    &["window", "delay"],
    "\"window\" = fixed γ; \"delay\" = γ = desired_qdelay/min_rtt (thesis §5.2.1 variant)",
);
/// 5 ms = γ·min_rtt on the thesis's 50 ms path (§5.2.1).
const DESIRED_QDELAY: Param<Duration> = Param::duration(
    "desired_qdelay",
    Duration::from_millis(5),
    Duration::ZERO,
    Duration::from_secs(10),
    "queuing delay aimed at in \"delay\" mode (default = γ·min_rtt on the thesis's 50 ms path)",
);
/// Never expires by default, as in the authors' kernel RoCC (spec §11.3).
const MIN_RTT_WINDOW: Param<Option<Duration>> = Param::optional_duration(
    "min_rtt_window",
    None,
    MIN_WINDOW,
    MAX_WINDOW,
    "0s",
    "window of the min_rtt filter; 0s = the whole flow (RoCC never drains its queue)",
);
const HOLD_COMPENSATION: Param<bool> = Param::flag(
    "hold_compensation",
    true,
    "periodic feedback: count deliveries over span + hold, add rate × hold to the window; false = eq. 5.1 verbatim",
);

pub const PARAMS: &[ParamInfo] = &[
    GAMMA.info(),
    C_BYTES.info(),
    ALPHA.info(),
    MODE.info(),
    DESIRED_QDELAY.info(),
    MIN_RTT_WINDOW.info(),
    HOLD_COMPENSATION.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "rocc",
    summary: "RoCC (Dumbo thesis eqs. 5.1-5.3): window = bytes acked in (1+γ)·min_rtt + C, paced at cwnd/RTT",
    params: PARAMS,
    create,
    receiver: None,
    // Dumbo thesis §4, §5.1: the window gates the pacer only; libwebrtc's
    // pushback lives inside goog_cc and is not part of this design.
    pushback: super::Pushback::Off,
    needs_arrivals: true,
    // The Dumbo thesis (§5.2.1, §5.2.2) subtracts the receiver's wait before
    // each report from the RTT; RFC 8888 carries it (§3.1: the report
    // timestamp and each packet's arrival time offset), TWCC does not.
    report_format: crate::feedback::ReportFormat::Rfc8888,
};

/// Span of the hold-time maximum: several WebRTC report intervals (50–250 ms).
const HOLD_WINDOW: Duration = Duration::from_secs(1);

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Rocc::new(RoccConfig::from_params(p)?, ctx)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Fixed γ (eq. 5.1).
    Window,
    /// γ = desired_qdelay / min_rtt.
    Delay,
}

impl Mode {
    /// A `MODE` choice.
    const fn parse(name: &str) -> Mode {
        match super::declaration::same(name, "delay") {
            true => Mode::Delay,
            false => Mode::Window,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoccConfig {
    pub gamma: f64,
    pub c: DataSize,
    pub alpha: f64,
    pub mode: Mode,
    pub desired_qdelay: Duration,
    /// `Duration::MAX`: never expires.
    pub min_rtt_window: Duration,
    pub hold_compensation: bool,
}

impl RoccConfig {
    /// Every parameter at its declared default.
    pub const DEFAULT: RoccConfig = RoccConfig {
        gamma: GAMMA.default(),
        c: C_BYTES.default(),
        alpha: ALPHA.default(),
        mode: Mode::parse(MODE.default()),
        desired_qdelay: DESIRED_QDELAY.default(),
        min_rtt_window: match MIN_RTT_WINDOW.default() {
            Some(w) => w,
            None => Duration::MAX,
        },
        hold_compensation: HOLD_COMPENSATION.default(),
    };

    pub fn from_params(p: &Params) -> Result<Self, ConfigError> {
        Ok(RoccConfig {
            gamma: p.get(&GAMMA)?,
            c: p.get(&C_BYTES)?,
            alpha: p.get(&ALPHA)?,
            mode: Mode::parse(p.get(&MODE)?),
            desired_qdelay: p.get(&DESIRED_QDELAY)?,
            min_rtt_window: p.get(&MIN_RTT_WINDOW)?.unwrap_or(Duration::MAX),
            hold_compensation: p.get(&HOLD_COMPENSATION)?,
        })
    }
}

impl Default for RoccConfig {
    fn default() -> Self {
        RoccConfig::DEFAULT
    }
}

pub struct Rocc {
    cfg: RoccConfig,
    min_rate: DataRate,
    max_rate: DataRate,
    min_filter: Windowed,
    min_rtt: Duration,
    /// propagation_time of eq. 5.2; `None` before the first report.
    propagation: Option<Duration>,
    /// (virtual ACK time, bytes) of acknowledged packets, oldest first.
    acked: VecDeque<(Time, u64)>,
    hold_filter: Windowed,
    hold: Duration,
    /// Eq. 5.1.
    cwnd: DataSize,
    /// Eq. 5.3.
    rate: DataRate,
    decision: Decision,
}

impl Rocc {
    pub fn new(cfg: RoccConfig, ctx: &ControllerContext) -> Self {
        let cwnd = DataSize::from_bytes((INIT_CWND_PACKETS * ctx.mtu.bytes() as f64) as u64);
        Rocc {
            cfg,
            min_rate: ctx.min_rate,
            max_rate: ctx.max_rate,
            min_filter: Windowed::new(true),
            min_rtt: Duration::ZERO,
            propagation: None,
            acked: VecDeque::new(),
            hold_filter: Windowed::new(false),
            hold: Duration::ZERO,
            cwnd,
            rate: ctx.start_rate,
            decision: Decision {
                target_rate: ctx.start_rate,
                pacing_rate: ctx.start_rate,
                cwnd: Some(cwnd),
                padding_rate: DataRate::ZERO,
                ..Decision::default()
            },
        }
    }

    /// The window of eq. 5.1 (without the hold allowance).
    pub fn cwnd(&self) -> DataSize {
        self.cwnd
    }

    /// propagation_time of eq. 5.2, once a report has arrived.
    pub fn propagation_time(&self) -> Option<Duration> {
        self.propagation
    }

    /// (1+γ)·min_rtt, or min_rtt + desired_qdelay in delay mode.
    fn span(&self, min_rtt: Duration) -> Duration {
        match self.cfg.mode {
            Mode::Window => min_rtt.mul_f64(1.0 + self.cfg.gamma),
            Mode::Delay => min_rtt + self.cfg.desired_qdelay,
        }
    }

    /// γ in effect.
    fn gamma(&self) -> f64 {
        match self.cfg.mode {
            Mode::Window => self.cfg.gamma,
            Mode::Delay => self.cfg.desired_qdelay.as_secs_f64() / self.min_rtt.as_secs_f64().max(1e-6),
        }
    }
}

impl Controller for Rocc {
    fn name(&self) -> &str {
        "rocc"
    }

    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        let t = fb.received_at;
        let (mut sum_us, mut n, mut hold) = (0i64, 0i64, Duration::ZERO);
        for p in &fb.packets {
            let Some((at, rtt)) = ack_sample(fb, p) else { continue };
            self.min_rtt = self.min_filter.update(at, rtt, self.cfg.min_rtt_window);
            self.acked.push_back((at, p.size.bytes()));
            sum_us += rtt.as_micros();
            n += 1;
            hold = hold.max(t - at);
        }
        if n > 0 {
            // Eq. 5.2 with rtt_i the report's mean RTT.
            let rtt = Duration::from_micros(sum_us / n);
            self.propagation = Some(match self.propagation {
                None => rtt,
                Some(p) => rtt.mul_f64(self.cfg.alpha) + p.mul_f64(1.0 - self.cfg.alpha),
            });
            self.hold = self.hold_filter.update(t, hold, HOLD_WINDOW);
        }
        let Some(propagation) = self.propagation else { return };
        // Eq. 5.1. With hold compensation the deliveries are counted over
        // span + hold and scaled back to the span (see the module comment).
        let span = self.span(self.min_rtt);
        let hold = if self.cfg.hold_compensation { self.hold } else { Duration::ZERO };
        let counted = span + hold;
        // Kept for the span at the larger of min_rtt and propagation_time, so
        // a min_rtt that expires upward still finds them.
        let keep = self.span(self.min_rtt.max(propagation)) + hold;
        while self.acked.front().is_some_and(|a| a.0 < t - keep) {
            self.acked.pop_front();
        }
        let from = t - counted;
        let acked: u64 = self.acked.iter().filter(|a| a.0 >= from).map(|a| a.1).sum();
        let acked = DataSize::from_bytes(acked).mul_f64(span.as_secs_f64() / counted.as_secs_f64().max(1e-6));
        self.cwnd = acked + self.cfg.c;
        // Eq. 5.3.
        self.rate = DataRate::from_size_per(self.cwnd, propagation.max(Duration::from_micros(1)));
        let allowance = self.rate * hold;
        self.decision = Decision {
            target_rate: self.rate.clamp(self.min_rate, self.max_rate),
            pacing_rate: self.rate.max(self.min_rate),
            cwnd: Some(self.cwnd + allowance),
            padding_rate: DataRate::ZERO,
            ..Decision::default()
        };
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("cwnd_bytes", self.cwnd.bytes() as f64);
        out("window_bytes", self.decision.cwnd.map_or(0.0, |w| w.bytes() as f64));
        out("target_kbps", self.decision.target_rate.kbps_f64());
        out("pacing_kbps", self.decision.pacing_rate.kbps_f64());
        if let Some(p) = self.propagation {
            out("rtt_min_ms", self.min_rtt.as_millis_f64());
            out("rtt_ms", p.as_millis_f64());
            out("dq_ms", (p - self.min_rtt).max(Duration::ZERO).as_millis_f64());
            out("hold_ms", self.hold.as_millis_f64());
            out("gamma", self.gamma());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::copa::tests::{backlogged, Outcome, Path, PATH_3MBPS};
    use crate::controller::testing::{ms, MS};
    use crate::controller::ParamValue;
    use crate::feedback::PacketResult;
    use crate::packet::PacketKind;
    use crate::rng::xorshift;

    fn rocc(cfg: RoccConfig) -> Rocc {
        Rocc::new(cfg, &ControllerContext::default())
    }

    /// A report sent at `report` ms and received 25 ms later, acknowledging
    /// 1200 B packets that arrived at `arrivals` ms after `forward` ms on the
    /// way, so each RTT is forward + 25 ms; `lost` more packets are reported lost.
    fn report(report: i64, arrivals: impl Iterator<Item = i64>, forward: i64, lost: usize) -> Feedback {
        let packet = |arrival: Option<i64>, send: i64| PacketResult {
            seq: 0,
            kind: PacketKind::Media,
            size: DataSize::from_bytes(1200),
            send_time: ms(send),
            arrival: arrival.map(ms),
            probe_cluster: -1,
            ..PacketResult::default()
        };
        let mut packets: Vec<_> = arrivals.map(|a| packet(Some(a), a - forward)).collect();
        packets.extend((0..lost).map(|_| packet(None, report - forward)));
        Feedback { report_time: ms(report), received_at: ms(report + 25), packets, ..Feedback::default() }
    }

    /// The defaults without hold compensation: the equations exactly.
    fn exact() -> RoccConfig {
        RoccConfig { hold_compensation: false, ..RoccConfig::default() }
    }

    /// Report 1: packets arrived every 5 ms at 1001..1096 ms, RTT 50 ms,
    /// received at 1125 ms. Virtual ACK times are arrival + 25 ms, so the
    /// (1+0.1)·50 = 55 ms window [1070, 1125] holds arrivals 1046..1096 ms:
    /// 11 packets. Eq. 5.1: 11·1200 + 1500 = 14 700 B; eq. 5.2: 50 ms;
    /// eq. 5.3: 14 700 B / 50 ms = 294 000 B/s = 2.352 Mbps.
    /// Report 2: 12 packets every 4 ms at 1102..1146 ms with RTT 60 ms,
    /// received at 1175 ms. Eq. 5.2: 0.95·60 + 0.05·50 = 59.5 ms; the window
    /// [1120, 1175] holds those 12 and the 1096 ms one (ACK time 1121):
    /// 13·1200 + 1500 = 17 100 B, and 17 100 B / 59.5 ms = 2.299 Mbps.
    #[test]
    fn equations_5_1_to_5_3() {
        let mut r = rocc(exact());
        assert_eq!(r.decision().cwnd, Some(DataSize::from_bytes(12_000)), "10 packets before any report");
        assert_eq!(r.decision().pacing_rate, DataRate::from_kbps(300));
        r.on_feedback(ms(1125), &report(1100, (0..20).map(|i| 1001 + 5 * i), 25, 0));
        assert_eq!((r.min_rtt, r.propagation), (MS * 50, Some(MS * 50)));
        let d = r.decision();
        assert_eq!(d.cwnd, Some(DataSize::from_bytes(14_700)));
        assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_bps(2_352_000), DataRate::from_bps(2_352_000)));
        r.on_feedback(ms(1175), &report(1150, (0..12).map(|i| 1102 + 4 * i), 35, 0));
        assert_eq!((r.min_rtt, r.propagation), (MS * 50, Some(Duration::from_micros(59_500))));
        assert_eq!(r.cwnd(), DataSize::from_bytes(17_100));
        // 17 100·8 bit / 0.0595 s = 2 299 159.66 bit/s.
        assert_eq!(r.decision().pacing_rate, DataRate::from_bps(2_299_159));
        // Lost packets are never acknowledged: a report of losses alone at
        // 1325 ms finds nothing in [1270, 1325], so cwnd = C and the RTT holds.
        r.on_feedback(ms(1325), &report(1300, std::iter::empty(), 35, 5));
        assert_eq!((r.cwnd(), r.propagation), (DataSize::from_bytes(1500), Some(Duration::from_micros(59_500))));
    }

    /// Delay mode with desired_qdelay 10 ms: γ = 10/50 = 0.2, a 60 ms window
    /// [1065, 1125] holds arrivals 1041..1096 ms: 12·1200 + 1500 = 15 900 B.
    #[test]
    fn delay_mode_sets_gamma_from_the_desired_queuing_delay() {
        let mut r = rocc(RoccConfig { mode: Mode::Delay, desired_qdelay: MS * 10, ..exact() });
        r.on_feedback(ms(1125), &report(1100, (0..20).map(|i| 1001 + 5 * i), 25, 0));
        assert_eq!(r.cwnd(), DataSize::from_bytes(15_900));
        assert!((r.gamma() - 0.2).abs() < 1e-12);
    }

    /// Report 1 again with hold compensation: its oldest packet was held
    /// 1100 − 1001 = 99 ms, so all 20 packets (24 000 B) are counted over
    /// 55 + 99 = 154 ms and scaled to 55 ms: 8571 B, cwnd 10 071 B, rate
    /// 10 071 B / 50 ms = 1.611 Mbps; the window adds 1.611 Mbps · 99 ms =
    /// 19 940 B: 30 011 B.
    #[test]
    fn hold_compensation_covers_the_report_interval() {
        let mut r = rocc(RoccConfig { hold_compensation: true, ..exact() });
        r.on_feedback(ms(1125), &report(1100, (0..20).map(|i| 1001 + 5 * i), 25, 0));
        assert_eq!(r.cwnd(), DataSize::from_bytes(10_071));
        let d = r.decision();
        assert_eq!((d.pacing_rate, d.cwnd), (DataRate::from_bps(1_611_360), Some(DataSize::from_bytes(30_011))));
        let mut hold = 0.0;
        r.state(&mut |k, v| hold = if k == "hold_ms" { v } else { hold });
        assert_eq!(hold, 99.0);
    }

    #[test]
    fn params_are_checked() {
        let ctx = ControllerContext::default();
        let with = |k: &str, v: ParamValue| Params::new().with(k, v);
        assert_eq!(RoccConfig::from_params(&Params::new()).unwrap(), RoccConfig::default());
        let d = RoccConfig::default();
        // Thesis eqs. 5.1-5.3 constants.
        assert_eq!((d.gamma, d.c, d.alpha, d.mode), (0.1, DataSize::from_bytes(1500), 0.95, Mode::Window));
        assert!(d.hold_compensation);
        for (k, v) in [
            ("gamma", ParamValue::Num(-0.1)),
            ("c_bytes", ParamValue::Num(0.0)),
            ("alpha", ParamValue::Num(0.0)),
            ("alpha", ParamValue::Num(1.5)),
            ("mode", ParamValue::Str("rate".into())),
            ("desired_qdelay", ParamValue::Str("1min".into())),
            ("min_rtt_window", ParamValue::Str("2h".into())),
            ("delta", ParamValue::Num(0.5)),
        ] {
            assert!(crate::controller::create("rocc", &with(k, v.clone()), &ctx).is_err(), "{k} = {v:?}");
        }
        let p = with("mode", ParamValue::Str("delay".into())).with("desired_qdelay", ParamValue::Str("20ms".into()));
        let cfg = RoccConfig::from_params(&p).unwrap();
        assert_eq!((cfg.mode, cfg.desired_qdelay), (Mode::Delay, MS * 20));
        assert_eq!(crate::controller::create("rocc", &p, &ctx).unwrap().name(), "rocc");
    }

    fn run(cfg: RoccConfig, report: i64, from: i64, until: i64) -> Outcome {
        let o = backlogged(&mut rocc(cfg), &Path { report: MS * report, ..PATH_3MBPS }, from, until);
        eprintln!("rocc {:?}/{}, reports every {report} ms, {from}-{until} s: {o:?}", cfg.mode, cfg.hold_compensation);
        o
    }

    /// 3 Mbps, 25 ms each way, backlogged: the queue settles near
    /// γ·min_rtt + C/rate = 0.1·53.2 ms + 1500 B / 375 kB/s = 9.3 ms and stays
    /// there (min_rtt never expires), for reports every 5 to 250 ms.
    #[test]
    fn fills_a_3_mbps_link_with_a_gamma_min_rtt_queue() {
        for report in [5, 50, 250] {
            let o = run(RoccConfig::default(), report, 5, 30);
            assert!(o.utilisation > 0.85, "{report} ms reports: {o:?}");
            assert!((4.0..=14.0).contains(&o.qdelay_ms) && o.qdelay_p95_ms < 35.0, "{report} ms reports: {o:?}");
            // Eq. 5.3 is the rate the link carries.
            assert!((2700.0..=3300.0).contains(&o.target_kbps), "{report} ms reports: {o:?}");
        }
        let late = run(RoccConfig::default(), 50, 50, 60);
        assert!(late.utilisation > 0.85 && late.qdelay_ms < 14.0, "no ratchet: {late:?}");
        // desired_qdelay 20 ms: γ = 20/53.2, queue ≈ 20 + 4 ms.
        let delay = run(RoccConfig { mode: Mode::Delay, desired_qdelay: MS * 20, ..RoccConfig::default() }, 50, 5, 30);
        assert!(delay.utilisation > 0.85 && (16.0..=30.0).contains(&delay.qdelay_ms), "{delay:?}");
    }

    /// Why hold compensation is on: eq. 5.1 verbatim with 50 ms reports
    /// locks into a two-report cycle far below the link rate.
    #[test]
    fn verbatim_window_stalls_with_50_ms_reports() {
        let verbatim = RoccConfig { hold_compensation: false, ..RoccConfig::default() };
        assert!(run(verbatim, 50, 5, 30).utilisation < 0.6);
        assert!(run(verbatim, 5, 5, 30).utilisation > 0.85, "per-packet-like feedback needs no compensation");
    }

    /// Reordered, duplicated, lost and clock-skewed reports: no panic, finite
    /// decisions within the flow's rates, windows of at least one packet.
    #[test]
    fn copa_and_rocc_survive_odd_inputs() {
        let ctx = ControllerContext::default();
        let mut rnd = xorshift(11);
        for name in ["copa", "rocc"] {
            let mut c = crate::controller::create(name, &Params::new(), &ctx).unwrap();
            for i in 0..5000i64 {
                let now = ms(i) - MS * rnd(3) as i64;
                let packets = (0..rnd(12))
                    .map(|k| PacketResult {
                        seq: k,
                        kind: PacketKind::Padding,
                        size: DataSize::from_bytes(rnd(1500)),
                        send_time: now - MS * rnd(400) as i64,
                        arrival: (rnd(4) > 0).then(|| now - MS * (rnd(300) as i64 - 50)),
                        probe_cluster: -1,
                        ..PacketResult::default()
                    })
                    .collect();
                let fb = Feedback {
                    report_time: now - MS * rnd(30) as i64,
                    received_at: now,
                    packets,
                    ..Feedback::default()
                };
                c.on_feedback(now, &fb);
                let d = c.decision();
                assert!((ctx.min_rate..=ctx.max_rate).contains(&d.target_rate), "{name}: {d:?}");
                assert!(d.pacing_rate >= ctx.min_rate && d.cwnd.is_some_and(|w| w.bytes() >= 1200), "{name}: {d:?}");
                c.state(&mut |k, v| assert!(v.is_finite(), "{name}: {k} = {v}"));
            }
        }
    }
}
