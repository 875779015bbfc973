//! `vivace`: PCC Vivace (Dong et al., NSDI'18) as libwebrtc's PCC controller
//! runs it (modules/congestion_controller/pcc/; ALGORITHMS.md §6.5).
//!
//! Rate-based: the flow sends at its rate. After a 500 ms startup at the start
//! rate, slow start multiplies the rate by 1.5 per monitor interval (MI) while
//! the MI's utility grows; online learning then sends pairs of MIs at
//! r·(1±ε) in random order, takes the utility gradient between them and moves
//! r by gradient × step, the step grown by a confidence amplifier and the
//! change clipped by a dynamic boundary (bitrate_controller.cc). When an MI's
//! feedback is `timeout_ratio` × RTT late, the rate halves, or falls to the
//! recent receive rate if that is lower.
//!
//! Per MI: packets are attributed by sequence at send time; the "RTT
//! gradient" is the least-squares slope of each packet's one-way delay
//! (arrival on the receiver clock − send time) against send time, as
//! monitor_interval.cc OnPacketsFeedback/ComputeDelayGradient take it: a
//! clock offset does not change a slope, and transport feedback carries
//! every arrival, while no report says how long the receiver held a packet. The default utility is
//! libwebrtc's ModifiedVivaceUtilityFunction, r in bit/s:
//! `u = a·r^t·r − b·r²·g − c·r²·L`; `utility = "vivace"` selects the paper's
//! `u = x^t − b·x·g − c·x·L` with x in Mbit/s (10^6, not PCC-Uspace's 2^20).
//! Every constant is libwebrtc's (pcc_network_controller.cc unless named).
//!
//! Choices where rtcc differs from libwebrtc, and why:
//! * An MI is complete once every packet sent in it has been reported, or a
//!   packet sent after it has been (libwebrtc's only rule, which assumes
//!   in-order feedback); a packet reported twice counts once (first report).
//! * The second MI of a pair starts at the first one's end by timer, not at
//!   the next packet sent, so MI boundaries do not depend on pacing gaps.
//! * The RTT tracker (timeout only) keeps libwebrtc's sample, feedback
//!   arrival − send time including the receiver's hold, so the timeout covers
//!   the report interval.
//! * MI rates and the estimate are clamped to [min_rate, max_rate], min_rate
//!   at least `FLOOR`: at zero nothing is sent, so no feedback could raise it.
//! * `rate_source = "sent"` evaluates the utility at the rate actually sent in
//!   the MI (ALGORITHMS.md §6.6) instead of its target, for app-limited video.
//!
//! One file per stage: `monitor` (MIs and what feedback says about them),
//! `utility` (an MI's worth), `control` (startup, slow start, online
//! learning), `gradient` (step size and dynamic boundary); this file holds
//! the parameters, the config and the `Controller` glue.

mod control;
mod gradient;
mod monitor;
#[cfg(test)]
mod tests;
mod utility;

use std::collections::VecDeque;

use super::{
    check_positive_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo,
    Params, SentPacket, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

use monitor::Mi;

pub use control::Mode;
pub use gradient::Stepper;
pub use utility::{Utility, UtilityKind};

const UTILITY: Param<&str> = Param::choice(
    "utility",
    "modified",
    &["modified", "vivace"],
    "\"modified\" = libwebrtc ModifiedVivaceUtilityFunction (r in bps), \"vivace\" = paper form (x in Mbit/s)",
);
// The utility's coefficients default to `Utility::MODIFIED`, or with
// `utility = "vivace"` to `Utility::VIVACE` (constants cited there).
const THROUGHPUT_COEFFICIENT: Param<f64> = Param::number(
    "throughput_coefficient",
    Utility::MODIFIED.throughput_coefficient,
    0.0,
    1e12,
    "a (kThroughputCoefficient)",
)
.or_in("vivace", Utility::VIVACE.throughput_coefficient);
const THROUGHPUT_POWER: Param<f64> =
    Param::number("throughput_power", Utility::MODIFIED.throughput_power, 0.0, 2.0, "t (kThroughputPower)")
        .or_in("vivace", Utility::VIVACE.throughput_power);
const RTT_COEFFICIENT: Param<f64> =
    Param::number("rtt_coefficient", Utility::MODIFIED.rtt_coefficient, 0.0, 1e12, "b (kRttGradientCoefficientBps)")
        .or_in("vivace", Utility::VIVACE.rtt_coefficient);
const LOSS_COEFFICIENT: Param<f64> =
    Param::number("loss_coefficient", Utility::MODIFIED.loss_coefficient, 0.0, 1e12, "c (kLossCoefficientBps)")
        .or_in("vivace", Utility::VIVACE.loss_coefficient);
const RTT_GRADIENT_THRESHOLD: Param<f64> = Param::number(
    "rtt_gradient_threshold",
    Utility::MODIFIED.gradient_threshold,
    0.0,
    10.0,
    "|RTT gradient| below this counts as 0 (kRttGradientThreshold)",
);
const NEGATIVE_GRADIENT_BOUND: Param<f64> = Param::number(
    "negative_gradient_bound",
    Utility::MODIFIED.negative_bound,
    0.0,
    100.0,
    "RTT gradient floor is -bound (kDelayGradientNegativeBound); 0 = paper's max(0, g)",
);
/// kDefaultSamplingStep = 0.05.
const EPSILON: Param<f64> =
    Param::number("epsilon", 0.05, 1e-4, 0.5, "probing step: MI pair at r(1±ε) (kDefaultSamplingStep)");
/// kMinRateChangeBps = 4000.
const MIN_RATE_CHANGE: Param<DataRate> = Param::rate(
    "min_rate_change",
    DataRate::from_kbps(4),
    DataRate::ZERO,
    DataRate::MAX,
    "pair at r±this below min_rate_change/ε (kMinRateChangeBps, kMinRateHaveMultiplicativeRateChange)",
);
/// The paper's θ0 = 1 (ALGORITHMS.md §6.4), with `utility = "vivace"`.
const CONVERSION_FACTOR_VIVACE: f64 = 1.0;
/// kInitialConversionFactor = 5.
const CONVERSION_FACTOR: Param<f64> = Param::number(
    "conversion_factor",
    5.0,
    0.0,
    1e12,
    "rate change per unit utility gradient (kInitialConversionFactor; vivace: θ0)",
)
.or_in("vivace", CONVERSION_FACTOR_VIVACE);
/// kInitialDynamicBoundary = 0.1.
const BOUNDARY: Param<f64> =
    Param::number("boundary", 0.1, 1e-4, 1.0, "initial dynamic boundary, fraction of r (kInitialDynamicBoundary)");
/// kDynamicBoundaryIncrement = 0.1.
const BOUNDARY_INCREMENT: Param<f64> = Param::number(
    "boundary_increment",
    0.1,
    0.0,
    1.0,
    "boundary growth per consecutive clip (kDynamicBoundaryIncrement)",
);
/// kSlowStartModeIncrease = 1.5.
const SLOW_START_FACTOR: Param<f64> =
    Param::number("slow_start_factor", 1.5, 1.0, 4.0, "slow-start rate multiplier per MI (kSlowStartModeIncrease)");
/// kStartupDuration = 500 ms.
const STARTUP: Param<Duration> = Param::duration(
    "startup",
    Duration::from_millis(500),
    Duration::ZERO,
    Duration::from_secs(60),
    "time at the start rate before slow start (kStartupDuration)",
);
const MI_LENGTH: Param<&str> = Param::choice(
    "mi_length",
    "fixed",
    &["fixed", "adaptive"],
    "\"fixed\" = max(min_mi, mi_packets·gap); \"adaptive\" also ≥ 1 RTT (MonitorIntervalLengthStrategy)",
);
/// kMinPacketsNumberPerInterval = 20.
const MI_PACKETS: Param<u32> =
    Param::integer("mi_packets", 20, 1, 10_000, "packets per MI (kMinPacketsNumberPerInterval)");
/// kMinDurationOfMonitorInterval = 50 ms.
const MIN_MI: Param<Duration> = Param::duration(
    "min_mi",
    Duration::from_millis(50),
    Duration::ZERO,
    Duration::from_secs(10),
    "shortest MI (kMinDurationOfMonitorInterval)",
)
.above_min();
/// kTimeoutRatio = 2.
const TIMEOUT_RATIO: Param<f64> =
    Param::number("timeout_ratio", 2.0, 1.0, 100.0, "MI feedback timeout in RTTs (kTimeoutRatio)");
const RATE_SOURCE: Param<&str> = Param::choice(
    "rate_source",
    "target",
    &["target", "sent"],
    "utility at the MI's \"target\" rate (libwebrtc) or the rate actually \"sent\"",
);
/// pcc_network_controller.cc: pacer_config.pad_window = sending_rate, so
/// the pacer pads up to each MI's rate and r·(1±ε) is on the wire even when
/// the encoder sends less.
const PADDING: Param<bool> = Param::flag(
    "padding",
    true,
    "pad up to the sending rate as libwebrtc's PCC does, so each monitor interval's rate is on the wire",
);
/// libwebrtc seeds the coin with kRandomSeed = 100; here the run's seed
/// unless one is given, so `--seed` varies it like every other random choice.
const SEED: Param<Option<u64>> = Param::optional_integer(
    "seed",
    0,
    9_000_000_000_000_000,
    "run",
    "seed of the pair-order coin; default: drawn from the run's seed (libwebrtc's fixed kRandomSeed = 100 if given 100)",
);

pub const PARAMS: &[ParamInfo] = &[
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
    UTILITY.info(),
    THROUGHPUT_COEFFICIENT.info(),
    THROUGHPUT_POWER.info(),
    RTT_COEFFICIENT.info(),
    LOSS_COEFFICIENT.info(),
    RTT_GRADIENT_THRESHOLD.info(),
    NEGATIVE_GRADIENT_BOUND.info(),
    EPSILON.info(),
    MIN_RATE_CHANGE.info(),
    CONVERSION_FACTOR.info(),
    BOUNDARY.info(),
    BOUNDARY_INCREMENT.info(),
    SLOW_START_FACTOR.info(),
    STARTUP.info(),
    MI_LENGTH.info(),
    MI_PACKETS.info(),
    MIN_MI.info(),
    TIMEOUT_RATIO.info(),
    RATE_SOURCE.info(),
    PADDING.info(),
    SEED.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "vivace",
    summary: "PCC Vivace (libwebrtc pcc/: monitor intervals, latency-gradient utility, gradient ascent)",
    params: PARAMS,
    create,
    receiver: None,
    pushback: crate::controller::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

/// kInitialRttMs: RTT before any sample; initial MI timeout = 2 × this.
const INITIAL_RTT: Duration = Duration::from_millis(200);
/// kAlphaForRtt: weight of the new sample in the RTT EWMA (rtt_tracker.cc).
const ALPHA_RTT: f64 = 0.9;
/// kAlphaForPacketInterval: weight of the newest gap in the send-gap EWMA.
const ALPHA_GAP: f64 = 0.9;
/// kNumberOfPacketsToKeep: received packets behind the receive-rate estimate.
const RECENT_PACKETS: usize = 20;
/// Lowest rate whatever min_rate says: kMinRateChangeBps, the additive probe step.
const FLOOR: DataRate = DataRate::from_kbps(4);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MiLength {
    Fixed,
    Adaptive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    Target,
    Sent,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VivaceConfig {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    pub utility: Utility,
    pub epsilon: f64,
    pub min_rate_change: DataRate,
    pub conversion_factor: f64,
    pub boundary: f64,
    pub boundary_increment: f64,
    pub slow_start_factor: f64,
    pub startup: Duration,
    pub mi_length: MiLength,
    pub mi_packets: u32,
    pub min_mi: Duration,
    pub timeout_ratio: f64,
    pub rate_source: RateSource,
    /// Pad up to the sending rate (libwebrtc's pad_window).
    pub padding: bool,
    pub seed: u64,
}

impl VivaceConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        // Each coefficient's default is the chosen utility's (the `or_in`
        // case of its declaration).
        let (base, conversion) = match p.get(&UTILITY)? {
            "vivace" => (Utility::VIVACE, CONVERSION_FACTOR_VIVACE),
            _ => (Utility::MODIFIED, CONVERSION_FACTOR.default()),
        };
        let utility = Utility {
            throughput_coefficient: p.get_or(&THROUGHPUT_COEFFICIENT, base.throughput_coefficient)?,
            throughput_power: p.get_or(&THROUGHPUT_POWER, base.throughput_power)?,
            rtt_coefficient: p.get_or(&RTT_COEFFICIENT, base.rtt_coefficient)?,
            loss_coefficient: p.get_or(&LOSS_COEFFICIENT, base.loss_coefficient)?,
            gradient_threshold: p.get_or(&RTT_GRADIENT_THRESHOLD, base.gradient_threshold)?,
            negative_bound: p.get_or(&NEGATIVE_GRADIENT_BOUND, base.negative_bound)?,
            ..base
        };
        let min_rate = p.get_or(&MIN_RATE, ctx.min_rate)?.max(FLOOR);
        let max_rate = p.get_or(&MAX_RATE, ctx.max_rate)?;
        check_positive_bounds(min_rate, max_rate)?;
        let mi_length = match p.get(&MI_LENGTH)? {
            "adaptive" => MiLength::Adaptive,
            _ => MiLength::Fixed,
        };
        let rate_source = match p.get(&RATE_SOURCE)? {
            "sent" => RateSource::Sent,
            _ => RateSource::Target,
        };
        Ok(VivaceConfig {
            // kInitialBandwidthKbps in libwebrtc; the flow's start rate unless given.
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
            utility,
            epsilon: p.get(&EPSILON)?,
            min_rate_change: p.get(&MIN_RATE_CHANGE)?,
            conversion_factor: p.get_or(&CONVERSION_FACTOR, conversion)?,
            boundary: p.get(&BOUNDARY)?,
            boundary_increment: p.get(&BOUNDARY_INCREMENT)?,
            slow_start_factor: p.get(&SLOW_START_FACTOR)?,
            startup: p.get(&STARTUP)?,
            mi_length,
            mi_packets: p.get(&MI_PACKETS)?,
            min_mi: p.get(&MIN_MI)?,
            timeout_ratio: p.get(&TIMEOUT_RATIO)?,
            rate_source,
            padding: p.get(&PADDING)?,
            // The run's seed unless one is given, so `--seed` varies the
            // coin like every other random choice of the run.
            seed: p.get(&SEED)?.unwrap_or(ctx.seed),
        })
    }
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Vivace::new(VivaceConfig::from_params(p, ctx)?)))
}

/// What the last evaluated MI pair (or slow-start MI) looked like, for `state()`.
#[derive(Clone, Copy, Debug, Default)]
struct Outcome {
    utility: f64,
    utility_gradient: f64,
    rtt_gradient: f64,
    loss: f64,
    throughput: Option<DataRate>,
}

pub struct Vivace {
    cfg: VivaceConfig,
    mode: Mode,
    start: Option<Time>,
    last_sent: Option<Time>,
    /// Smoothed gap between sent packets, µs (smoothed_packets_sending_interval_).
    gap_us: f64,
    /// bandwidth_estimate_: the centre rate.
    estimate: DataRate,
    /// What the flow sends at now: an MI's rate, else the estimate.
    rate: DataRate,
    rtt: Duration,
    mi_timeout: Duration,
    mi_duration: Duration,
    /// The current block: one MI (startup, slow start) or a pair.
    mis: [Mi; 2],
    rates: [DataRate; 2],
    n_rates: usize,
    started: usize,
    complete: usize,
    recent: VecDeque<(Time, DataSize)>,
    next_seq: u64,
    max_reported: Option<u64>,
    stepper: Stepper,
    slow_start_best: Option<f64>,
    rng: Rng,
    last: Outcome,
}

impl Vivace {
    pub fn new(cfg: VivaceConfig) -> Self {
        Vivace {
            mode: Mode::Startup,
            start: None,
            last_sent: None,
            gap_us: 0.0,
            estimate: cfg.start_rate,
            rate: cfg.start_rate,
            rtt: INITIAL_RTT,
            mi_timeout: INITIAL_RTT.mul_f64(cfg.timeout_ratio),
            mi_duration: cfg.startup,
            mis: [Mi::default(), Mi::default()],
            rates: [cfg.start_rate; 2],
            n_rates: 0,
            started: 0,
            complete: 0,
            recent: VecDeque::with_capacity(RECENT_PACKETS + 1),
            next_seq: 0,
            max_reported: None,
            stepper: Stepper::new(cfg.conversion_factor, cfg.boundary, cfg.boundary_increment),
            slow_start_best: None,
            rng: Rng::new(cfg.seed),
            last: Outcome::default(),
            cfg,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn estimate(&self) -> DataRate {
        self.estimate
    }

    fn clamp(&self, r: DataRate) -> DataRate {
        r.clamp(self.cfg.min_rate, self.cfg.max_rate)
    }
}

impl Controller for Vivace {
    fn name(&self) -> &str {
        "vivace"
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        let t = p.send_time;
        if self.start.is_none() {
            self.start = Some(t);
            self.mi_duration = self.cfg.startup;
            self.start_block(t, &[self.estimate]);
        }
        if let Some(last) = self.last_sent {
            let gap = (t - last).as_micros().max(0) as f64;
            self.gap_us = ALPHA_GAP * gap + (1.0 - ALPHA_GAP) * self.gap_us;
        }
        self.last_sent = Some(t);
        self.on_send(t);
        if self.started > 0 {
            let mi = &mut self.mis[self.started - 1];
            if !mi.closed && t >= mi.start && t < mi.end {
                mi.on_sent(p.seq, p.size);
            }
        }
        self.next_seq = self.next_seq.max(p.seq.saturating_add(1));
        self.update_rate(now.max(t));
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if fb.packets.is_empty() {
            return;
        }
        let mut newest: Option<Duration> = None;
        for p in &fb.packets {
            self.max_reported = Some(self.max_reported.map_or(p.seq, |m| m.max(p.seq)));
            let claimed = self.mis[..self.started].iter_mut().find_map(|m| m.claim(p.seq).then_some(m));
            let Some(arrival) = p.arrival else {
                if let Some(mi) = claimed {
                    mi.lost += 1;
                }
                continue;
            };
            if self.recent.len() == RECENT_PACKETS {
                self.recent.pop_front();
            }
            self.recent.push_back((arrival, p.size));
            // rtt_tracker.cc: the largest feedback delay of the report.
            let delay = fb.received_at - p.send_time;
            newest = Some(newest.map_or(delay, |d| d.max(delay)));
            // monitor_interval.cc: receive_time − send_time.
            let owd = arrival - p.send_time;
            if let Some(mi) = claimed {
                mi.recv_bytes += p.size;
                let (first, last) = mi.first_arrival.map_or((arrival, arrival), |f| (f, mi.last_arrival));
                (mi.first_arrival, mi.last_arrival) = (Some(first.min(arrival)), last.max(arrival));
                mi.fit.push(p.send_time, owd.as_millis_f64());
            }
        }
        if let Some(sample) = newest {
            let ewma =
                self.rtt.as_secs_f64() * (1.0 - ALPHA_RTT) + sample.max(Duration::ZERO).as_secs_f64() * ALPHA_RTT;
            self.rtt = Duration::from_secs_f64(ewma.min(60.0));
        }
        // A leftover single-MI block after slow start ended is not a pair.
        if matches!(self.mode, Mode::OnlineLearning | Mode::DoubleCheck) && self.n_rates < 2 {
            return;
        }
        if !self.feedback_done() {
            while self.complete < self.started && self.mis[self.complete].done(self.max_reported) {
                self.complete += 1;
            }
            if self.feedback_done() {
                self.on_block_done();
            }
        }
        self.update_rate(now);
    }

    fn on_timeout(&mut self, now: Time) {
        self.roll_mis(now);
        self.update_rate(now);
    }

    fn poll_timeout(&self) -> Option<Time> {
        let open = self.mis[..self.started].last().filter(|m| !m.closed)?;
        Some(open.end)
    }

    fn decision(&self) -> Decision {
        let padding = if self.cfg.padding { self.rate } else { DataRate::ZERO };
        Decision { padding_rate: padding, ..Decision::rates(self.rate, self.rate) }
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("rate_kbps", self.rate.kbps_f64());
        out("estimate_kbps", self.estimate.kbps_f64());
        out("utility", self.last.utility);
        out("utility_gradient", self.last.utility_gradient);
        out("mode", self.mode as u8 as f64);
        out("epsilon", self.epsilon());
        out("rtt_ms", self.rtt.as_millis_f64());
        out("rtt_gradient", self.last.rtt_gradient);
        out("loss", self.last.loss);
        out("amplifier", (self.stepper.amplifier() * self.stepper.same_sign.signum()) as f64);
        out("boundary", self.cfg.boundary + self.stepper.clips.abs() as f64 * self.cfg.boundary_increment);
        if let Some(t) = self.last.throughput {
            out("mi_throughput_kbps", t.kbps_f64());
        }
    }
}
