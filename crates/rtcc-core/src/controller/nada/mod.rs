//! `nada`: NADA, Network-Assisted Dynamic Adaptation (RFC 8698), with the
//! defaults of its Figure 3; `nadar`: NADA with ProbeRTT, as the Cross paper
//! evaluates it (Zhang & Yang, arXiv 2409.10042, cross.txt §VI-A).
//!
//! Where each part runs. Everything runs at the sender. The receiver-side
//! computation of §4.2 and §5.1 (`receiver.rs`: d_fwd, d_base, d_queue with
//! its 15-sample minimum, p_loss, r_recv over LOGWIN, the TFRC loss interval,
//! delay warping, x_curr and rmode) is fed each packet of every report —
//! arrival on the receiver clock or lost — as the ns-3 reference
//! implementation does (RFC 8698 §6.4, §7: "the implementation in ns-3 hosts
//! these receiver-side calculations at the sender"); so the flow needs no
//! receiver-side estimator and its reports carry no NADA fields. Every DELTA
//! (on the first report at least DELTA after the previous update, as ns-3
//! `processFeedback`) it yields the report {rmode, x_curr, r_recv} a NADA
//! receiver would have sent, and the sender side of §4.3 and §5.2.2
//! (`sender.rs`) updates r_ref and derives the encoder target r_vin and the
//! pacing rate r_send from it and the pacer's queue (`on_sender_state`).
//!
//! NADAR (`probe_rtt.rs`): d_fwd is the standing one-way delay, the minimum
//! over srtt/2 (Copa's standing window, which Cross applies to one-way delay),
//! in place of the 15-sample minimum, and the rmode check reads these
//! standing values as its d_fwd samples; d_base is the minimum one-way delay,
//! and after 10 s without a sample at or below it NADAR halves r_ref and
//! re-samples d_base (see `probe_rtt.rs` for how long and from what).
//!
//! Choices the sources leave open, each beside its code:
//! - RMIN and RMAX (`rmin`, `rmax`) are the flow's `min_rate` and `max_rate`
//!   unless given: RFC 8698 §4.3 takes them from the codec's range, and in
//!   rtcc the flow's range is the encoder's. Figure 3's 150 kbps and 1.5 Mbps
//!   are an example codec's range (without one, §4.3 falls back to 0 and
//!   3 Mbps). RMAX also sets the equilibrium, x_curr =
//!   PRIO·XREF·RMAX/r_ref: with the default 50 Mbps flow range NADA holds
//!   about 10 ms · 50/C(Mbps) of queue on a link of C Mbps, so a scenario
//!   wants `max_rate` (or `rmax`) near its encoder's real maximum
//!   (ALGORITHMS.md §4.6).
//! - r_ref starts at the flow's start rate (the RFC starts at RMIN; give
//!   `start_rate` = `rmin` for that).
//! - No ECN in rtcc: p_mark = 0, so DMARK and PMRREF are declared but never
//!   add to x_curr.
//! - p_loss is smoothed once per report, the sender's rtt is the minimum of
//!   the last 15 per-packet RTTs, and x_curr is clipped at XMAX = 500 ms, all
//!   as in ns-3 (`nada-controller.cc`, `sender-based-controller.cc`).
//! - loss_int is TFRC's weighted mean of the closed loss intervals only
//!   (`receiver.rs`), so that a loss can expire.
//! - The observed feedback interval delta is clamped at `delta_max` (TAU).

mod probe_rtt;
mod receiver;
mod sender;

pub use probe_rtt::ProbeRttConfig;

use probe_rtt::{ProbeRtt, Transition};
use receiver::{Filter, Signal, Standing};
use sender::{Rate, Report};

use super::{
    ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo, Params, SenderState,
    MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::units::{DataRate, DataSize, Duration, Time};

const MS: Duration = Duration::from_millis(1);
const TEN_SECONDS: Duration = Duration::from_secs(10);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

// RFC 8698 §4.1 Figure 3, gradual update (§4.3 eqs. 5–7).
const PRIO: Param<f64> = Param::number(
    "prio",
    1.0,
    0.0,
    1000.0,
    "PRIO: priority weight; rates at equilibrium scale with it (RFC 8698 Fig. 3)",
)
.above_min();
const RMIN: Param<DataRate> = Param::rate(
    "rmin",
    MIN_RATE.default(),
    DataRate::ZERO,
    DataRate::MAX,
    "RMIN: lowest rate (default: the flow's min_rate; RFC 8698 Fig. 3: 150 kbps)",
);
const RMAX: Param<DataRate> = Param::rate(
    "rmax",
    MAX_RATE.default(),
    DataRate::ZERO,
    DataRate::MAX,
    "RMAX: highest rate; sets the equilibrium x_curr = PRIO·XREF·RMAX/r_ref (default: the flow's max_rate; \
     RFC 8698 Fig. 3: 1.5 Mbps)",
)
.above_min();
const XREF: Param<Duration> = Param::duration(
    "xref",
    Duration::from_millis(10),
    Duration::ZERO,
    TEN_SECONDS,
    "XREF: reference congestion level (RFC 8698 Fig. 3)",
)
.above_min();
const KAPPA: Param<f64> =
    Param::number("kappa", 0.5, 0.0, 10.0, "KAPPA: scale of the gradual update, eq. 7 (RFC 8698 Fig. 3)").above_min();
const ETA: Param<f64> =
    Param::number("eta", 2.0, 0.0, 100.0, "ETA: weight of x_diff in the gradual update, eq. 7 (RFC 8698 Fig. 3)");
const TAU: Param<Duration> = Param::duration(
    "tau",
    Duration::from_millis(500),
    Duration::ZERO,
    MINUTE,
    "TAU: upper bound of the RTT in the gradual update, eq. 7 (RFC 8698 Fig. 3)",
)
.above_min();
const DELTA: Param<Duration> = Param::duration(
    "delta",
    Duration::from_millis(100),
    MS,
    TEN_SECONDS,
    "DELTA: target feedback interval; r_ref is updated on the first report at least DELTA after the last update \
     (RFC 8698 Fig. 3, ns-3)",
);
const DELTA_MAX: Param<Duration> = Param::duration(
    "delta_max",
    Duration::from_millis(500),
    MS,
    MINUTE,
    "largest observed feedback interval used in eq. 7, so a feedback stall cannot make one step huge \
     (500 ms, TAU's default, not tied to `tau`; ALGORITHMS.md §4.6)",
);
// Accelerated ramp-up (§4.2 rmode, §4.3 eqs. 3–4).
const LOGWIN: Param<Duration> = Param::duration(
    "logwin",
    Duration::from_millis(500),
    MS,
    MINUTE,
    "LOGWIN: window of the loss ratio, the receive rate and the rmode check (RFC 8698 Fig. 3)",
);
const QEPS: Param<Duration> = Param::duration(
    "qeps",
    Duration::from_millis(10),
    Duration::ZERO,
    TEN_SECONDS,
    "QEPS: ramp-up only while every queuing-delay sample within LOGWIN is below it (RFC 8698 Fig. 3)",
);
const DFILT: Param<Duration> = Param::duration(
    "dfilt",
    Duration::from_millis(120),
    Duration::ZERO,
    TEN_SECONDS,
    "DFILT: bound on the filtering delay, eq. 3 (RFC 8698 Fig. 3)",
);
const GAMMA_MAX: Param<f64> =
    Param::number("gamma_max", 0.5, 0.0, 10.0, "GAMMA_MAX: largest ramp-up ratio, eq. 3 (RFC 8698 Fig. 3)");
const QBOUND: Param<Duration> = Param::duration(
    "qbound",
    Duration::from_millis(50),
    Duration::ZERO,
    TEN_SECONDS,
    "QBOUND: bound on the self-inflicted queuing delay of a ramp-up step, eq. 3 (RFC 8698 Fig. 3)",
);
// Delay warping and the aggregate signal (§4.2 eqs. 1–2).
const MULTILOSS: Param<f64> = Param::number(
    "multiloss",
    7.0,
    0.0,
    1000.0,
    "MULTILOSS: a loss expires after MULTILOSS·loss_int packets, loss_int the TFRC mean (RFC 8698 Fig. 3)",
);
const QTH: Param<Duration> = Param::duration(
    "qth",
    Duration::from_millis(50),
    Duration::ZERO,
    TEN_SECONDS,
    "QTH: queuing delay above which it is warped while a loss is recent, eq. 1 (RFC 8698 Fig. 3)",
)
.above_min();
const LAMBDA: Param<f64> =
    Param::number("lambda", 0.5, 0.0, 100.0, "LAMBDA: exponent scale of the warping, eq. 1 (RFC 8698 Fig. 3)");
const PLRREF: Param<f64> =
    Param::number("plrref", 0.01, 0.0, 1.0, "PLRREF: reference loss ratio, eq. 2 (RFC 8698 Fig. 3)").above_min();
const PMRREF: Param<f64> = Param::number(
    "pmrref",
    0.01,
    0.0,
    1.0,
    "PMRREF: reference ECN marking ratio, eq. 2; inert: no ECN in rtcc (RFC 8698 Fig. 3)",
)
.above_min();
const DLOSS: Param<Duration> = Param::duration(
    "dloss",
    Duration::from_millis(10),
    Duration::ZERO,
    TEN_SECONDS,
    "DLOSS: delay penalty at a loss ratio of PLRREF, eq. 2 (RFC 8698 Fig. 3)",
);
const DMARK: Param<Duration> = Param::duration(
    "dmark",
    Duration::from_millis(2),
    Duration::ZERO,
    TEN_SECONDS,
    "DMARK: delay penalty at a marking ratio of PMRREF, eq. 2; inert: no ECN in rtcc (RFC 8698 Fig. 3)",
);
const XMAX: Param<Duration> = Param::duration(
    "xmax",
    Duration::from_millis(500),
    Duration::ZERO,
    MINUTE,
    "largest aggregate congestion signal x_curr (ns-3 NADA_PARAM_XMAX)",
)
.above_min();
const MIN_FILTER: Param<u32> = Param::integer(
    "min_filter",
    15,
    1,
    10_000,
    "packets in the minimum filter of the queuing delay (RFC 8698 §5.1.1; nada only)",
);
// Rate-shaping buffer (§5.2.2 eqs. 11–14) and loss smoothing (§5.1.2 eq. 10).
const FPS: Param<f64> = Param::number(
    "fps",
    30.0,
    0.0,
    1000.0,
    "FPS: frame rate of the buffer coupling, eqs. 11–12 (default: the flow's frame rate; RFC 8698 Fig. 3: 30)",
)
.above_min();
const BETA_S: Param<f64> =
    Param::number("beta_s", 0.1, 0.0, 100.0, "BETA_S: pacing-rate boost per queued byte, eq. 12 (RFC 8698 Fig. 3)");
const BETA_V: Param<f64> =
    Param::number("beta_v", 0.1, 0.0, 100.0, "BETA_V: encoder-rate cut per queued byte, eq. 11 (RFC 8698 Fig. 3)");
const ALPHA: Param<f64> =
    Param::number("alpha", 0.1, 0.0, 1.0, "ALPHA: EWMA gain of the loss ratio per report, eq. 10 (RFC 8698 Fig. 3)")
        .above_min();
// NADAR (cross.txt §VI-A).
const PROBE_RTT_INTERVAL: Param<Duration> = Param::duration(
    "probe_rtt_interval",
    Duration::from_secs(10),
    Duration::from_millis(100),
    HOUR,
    "ProbeRTT after this long without a one-way delay at or below d_base (cross.txt §VI-A)",
);
const PROBE_RTT_DURATION: Param<Duration> = Param::duration(
    "probe_rtt_duration",
    Duration::from_millis(200),
    Duration::ZERO,
    TEN_SECONDS,
    "ProbeRTT ends once a packet sent this long after it began is reported (BBR v1 bbr_probe_rtt_mode_ms)",
);
const STANDING_WINDOW: Param<Option<Duration>> = Param::optional_duration(
    "standing_window",
    None,
    MS,
    MINUTE,
    "srtt/2",
    "window of the standing one-way delay, NADAR's d_fwd (default srtt/2, Copa's standing window)",
);
const SRTT_GAIN: Param<f64> = Param::number(
    "srtt_gain",
    1.0 / 8.0,
    0.0,
    1.0,
    "EWMA gain of srtt, which sets the srtt/2 standing window (RFC 9002 §5.3 1/8, mvfst's srtt; ALGORITHMS.md §2.3)",
)
.above_min();

pub const PARAMS: &[ParamInfo] = &[
    START_RATE.info(),
    RMIN.info(),
    RMAX.info(),
    PRIO.info(),
    XREF.info(),
    KAPPA.info(),
    ETA.info(),
    TAU.info(),
    DELTA.info(),
    DELTA_MAX.info(),
    LOGWIN.info(),
    QEPS.info(),
    DFILT.info(),
    GAMMA_MAX.info(),
    QBOUND.info(),
    MULTILOSS.info(),
    QTH.info(),
    LAMBDA.info(),
    PLRREF.info(),
    PMRREF.info(),
    DLOSS.info(),
    DMARK.info(),
    XMAX.info(),
    MIN_FILTER.info(),
    FPS.info(),
    BETA_S.info(),
    BETA_V.info(),
    ALPHA.info(),
];

/// NADAR's own parameters.
const PROBE_PARAMS: [ParamInfo; 4] =
    [PROBE_RTT_INTERVAL.info(), PROBE_RTT_DURATION.info(), STANDING_WINDOW.info(), SRTT_GAIN.info()];

/// NADAR's parameters: NADA's, less `min_filter` (the standing window takes
/// its place), then its own.
pub const NADAR_PARAMS: &[ParamInfo] = &nadar_params();

const fn nadar_params() -> [ParamInfo; PARAMS.len() - 1 + PROBE_PARAMS.len()] {
    let mut out = [START_RATE.info(); PARAMS.len() - 1 + PROBE_PARAMS.len()];
    let (mut i, mut j) = (0, 0);
    while i < PARAMS.len() {
        if !super::declaration::same(PARAMS[i].name, MIN_FILTER.name()) {
            out[j] = PARAMS[i];
            j += 1;
        }
        i += 1;
    }
    i = 0;
    while i < PROBE_PARAMS.len() {
        out[j + i] = PROBE_PARAMS[i];
        i += 1;
    }
    out
}

pub const INFO: ControllerInfo = ControllerInfo {
    name: "nada",
    summary: "NADA (RFC 8698): r_ref from the aggregate signal (queuing delay + loss penalty), ramp-up or PI-like \
              gradual update; receiver side computed at the sender",
    params: PARAMS,
    create,
    receiver: None,
    pushback: crate::controller::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

pub const INFO_NADAR: ControllerInfo = ControllerInfo {
    name: "nadar",
    summary: "NADAR (Cross §VI-A): NADA on the standing one-way delay, halving the rate to re-sample d_base after \
              10 s without a new minimum",
    params: NADAR_PARAMS,
    create: create_nadar,
    receiver: None,
    pushback: crate::controller::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Nada::new(NadaConfig::from_params(p, ctx, false)?)))
}

fn create_nadar(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Nada::new(NadaConfig::from_params(p, ctx, true)?)))
}

/// Eq. 7 scales r_ref, so at zero it could never grow again: RMIN is at
/// least about one 1200-byte packet a second.
const RATE_FLOOR: DataRate = DataRate::from_kbps(10);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NadaConfig {
    pub start_rate: DataRate,
    pub rmin: DataRate,
    pub rmax: DataRate,
    pub prio: f64,
    pub xref: Duration,
    pub kappa: f64,
    pub eta: f64,
    pub tau: Duration,
    pub delta: Duration,
    pub delta_max: Duration,
    pub logwin: Duration,
    pub qeps: Duration,
    pub dfilt: Duration,
    pub gamma_max: f64,
    pub qbound: Duration,
    pub multiloss: f64,
    pub qth: Duration,
    pub lambda: f64,
    pub plrref: f64,
    pub pmrref: f64,
    pub dloss: Duration,
    pub dmark: Duration,
    pub xmax: Duration,
    pub min_filter: u32,
    pub fps: f64,
    pub beta_s: f64,
    pub beta_v: f64,
    pub alpha: f64,
    /// `Some` = NADAR.
    pub probe_rtt: Option<ProbeRttConfig>,
}

impl NadaConfig {
    /// NADA with every parameter at its declared default and the default
    /// flow's rates.
    pub const DEFAULT: NadaConfig = NadaConfig {
        start_rate: START_RATE.default(),
        rmin: RMIN.default(),
        rmax: RMAX.default(),
        prio: PRIO.default(),
        xref: XREF.default(),
        kappa: KAPPA.default(),
        eta: ETA.default(),
        tau: TAU.default(),
        delta: DELTA.default(),
        delta_max: DELTA_MAX.default(),
        logwin: LOGWIN.default(),
        qeps: QEPS.default(),
        dfilt: DFILT.default(),
        gamma_max: GAMMA_MAX.default(),
        qbound: QBOUND.default(),
        multiloss: MULTILOSS.default(),
        qth: QTH.default(),
        lambda: LAMBDA.default(),
        plrref: PLRREF.default(),
        pmrref: PMRREF.default(),
        dloss: DLOSS.default(),
        dmark: DMARK.default(),
        xmax: XMAX.default(),
        min_filter: MIN_FILTER.default(),
        fps: FPS.default(),
        beta_s: BETA_S.default(),
        beta_v: BETA_V.default(),
        alpha: ALPHA.default(),
        probe_rtt: None,
    };

    /// NADAR's ProbeRTT at its declared defaults.
    pub const PROBE_RTT: ProbeRttConfig = ProbeRttConfig {
        interval: PROBE_RTT_INTERVAL.default(),
        duration: PROBE_RTT_DURATION.default(),
        standing_window: STANDING_WINDOW.default(),
        srtt_gain: SRTT_GAIN.default(),
    };

    pub fn from_params(p: &Params, ctx: &ControllerContext, nadar: bool) -> Result<Self, ConfigError> {
        let rmin = p.get_or(&RMIN, ctx.min_rate)?.max(RATE_FLOOR);
        let rmax = p.get_or(&RMAX, ctx.max_rate)?;
        if rmax < rmin {
            return Err(ConfigError::invalid("rmax", format!("{rmax} is below rmin {rmin} (at least {RATE_FLOOR})")));
        }
        // Consistency: eq. 7's observed interval is at least DELTA (r_ref waits
        // DELTA) and at least the flow's feedback interval; a cap below either
        // would clip every step.
        let (delta, delta_max) = (p.get(&DELTA)?, p.get(&DELTA_MAX)?);
        ConfigError::check_order("delta", delta, "delta_max", delta_max)?;
        if delta_max < ctx.feedback_interval {
            return Err(ConfigError::invalid(
                "delta_max",
                format!(
                    "{delta_max} is below the flow's feedback_interval {}: every step of eq. 7 would be clipped",
                    ctx.feedback_interval
                ),
            ));
        }
        let frame_rate = match ctx.frame_interval.is_positive() {
            true => 1.0 / ctx.frame_interval.as_secs_f64(),
            false => FPS.default(),
        };
        let probe_rtt = nadar
            .then(|| -> Result<ProbeRttConfig, ConfigError> {
                Ok(ProbeRttConfig {
                    interval: p.get(&PROBE_RTT_INTERVAL)?,
                    duration: p.get(&PROBE_RTT_DURATION)?,
                    standing_window: p.get(&STANDING_WINDOW)?,
                    srtt_gain: p.get(&SRTT_GAIN)?,
                })
            })
            .transpose()?;
        Ok(NadaConfig {
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(rmin, rmax),
            rmin,
            rmax,
            prio: p.get(&PRIO)?,
            xref: p.get(&XREF)?,
            kappa: p.get(&KAPPA)?,
            eta: p.get(&ETA)?,
            tau: p.get(&TAU)?,
            delta,
            delta_max,
            logwin: p.get(&LOGWIN)?,
            qeps: p.get(&QEPS)?,
            dfilt: p.get(&DFILT)?,
            gamma_max: p.get(&GAMMA_MAX)?,
            qbound: p.get(&QBOUND)?,
            multiloss: p.get(&MULTILOSS)?,
            qth: p.get(&QTH)?,
            lambda: p.get(&LAMBDA)?,
            plrref: p.get(&PLRREF)?,
            pmrref: p.get(&PMRREF)?,
            dloss: p.get(&DLOSS)?,
            dmark: p.get(&DMARK)?,
            xmax: p.get(&XMAX)?,
            min_filter: if nadar { MIN_FILTER.default() } else { p.get(&MIN_FILTER)? },
            fps: p.get_or(&FPS, frame_rate)?,
            beta_s: p.get(&BETA_S)?,
            beta_v: p.get(&BETA_V)?,
            alpha: p.get(&ALPHA)?,
            probe_rtt,
        })
    }
}

impl Default for NadaConfig {
    fn default() -> Self {
        NadaConfig::DEFAULT
    }
}

pub struct Nada {
    cfg: NadaConfig,
    signal: Signal,
    rate: Rate,
    probe: Option<ProbeRtt>,
    /// The pacer's queue, RFC 8698 §5.2.1's buffer_len.
    buffer_len: DataSize,
    /// The last report acted on.
    last: Report,
    decision: Decision,
}

impl Nada {
    pub fn new(cfg: NadaConfig) -> Nada {
        let filter = match cfg.probe_rtt {
            Some(p) => Filter::Standing(Standing::new(p.standing_window, p.srtt_gain)),
            None => Filter::Samples(cfg.min_filter as usize),
        };
        let mut nada = Nada {
            cfg,
            signal: Signal::new(filter, cfg.logwin),
            rate: Rate::new(cfg.start_rate.bps() as f64),
            probe: cfg.probe_rtt.map(ProbeRtt::new),
            buffer_len: DataSize::ZERO,
            last: Report::default(),
            decision: Decision::default(),
        };
        nada.update_decision();
        nada
    }

    /// r_vin and r_send from r_ref and the buffer (eqs. 11–14).
    fn update_decision(&mut self) {
        let (r_vin, r_send) = sender::shape(&self.cfg, self.rate.r_ref, self.buffer_len.bytes() as f64);
        self.decision = Decision::rates(DataRate::from_bps_f64(r_vin), DataRate::from_bps_f64(r_send));
    }

    fn probing(&self) -> bool {
        self.probe.as_ref().is_some_and(ProbeRtt::probing)
    }
}

impl Controller for Nada {
    fn name(&self) -> &str {
        match self.probe {
            Some(_) => "nadar",
            None => "nada",
        }
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        for p in &fb.packets {
            self.signal.on_packet(now, fb, p);
        }
        self.signal.end_feedback(fb.report_time);
        if let Some(probe) = self.probe.as_mut() {
            // cross.txt §VI-A: "cuts its rate by half".
            if probe.on_feedback(now, &mut self.signal) == Some(Transition::Enter) {
                self.rate.r_ref = sender::clip(&self.cfg, self.rate.r_ref / 2.0);
            }
        }
        // The first report starts the clock (ns-3); then one update per DELTA.
        match self.rate.t_last {
            None => self.rate.t_last = Some(now),
            Some(t) if now.saturating_since(t) >= self.cfg.delta => {
                let report = self.signal.report(&self.cfg, fb.report_time);
                let hold = self.probing();
                self.rate.on_report(&self.cfg, now, &report, self.signal.rtt(), hold);
                self.last = report;
            }
            Some(_) => {}
        }
        self.update_decision();
    }

    fn on_sender_state(&mut self, _now: Time, state: &SenderState) {
        if state.queued != self.buffer_len {
            self.buffer_len = state.queued;
            self.update_decision();
        }
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("target_kbps", self.decision.target_rate.kbps_f64());
        out("pacing_kbps", self.decision.pacing_rate.kbps_f64());
        out("r_ref_kbps", self.rate.r_ref / 1e3);
        out("x_curr_ms", self.last.x_curr);
        out("rmode", f64::from(self.last.rmode));
        out("r_recv_kbps", self.last.r_recv / 1e3);
        out("p_loss", self.signal.p_loss());
        out("d_queue_ms", self.signal.d_queue());
        if let Some(b) = self.signal.d_base() {
            out("d_base_ms", b.as_millis_f64());
        }
        out("rtt_ms", self.signal.rtt().as_millis_f64());
        if let Some(p) = &self.probe {
            out("probe_rtt", f64::from(u8::from(p.probing())));
        }
    }
}

#[cfg(test)]
mod tests;
