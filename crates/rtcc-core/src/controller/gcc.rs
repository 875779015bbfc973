//! `gcc`: Google Congestion Control as libwebrtc runs it, through the `goog_cc`
//! crate (a line-by-line port of modules/congestion_controller/goog_cc). This
//! module only turns rtcc events into goog_cc messages and its
//! `NetworkControlUpdate`s into a `Decision`; every rule is goog_cc's own.
//!
//! By default (`rtt = "rtcp"`) goog_cc runs as in a WebRTC call: RTT and the
//! classic loss fraction reach it once per RTCP report interval
//! (`RTCP_INTERVAL`, 1 s for video) as `RoundTripTimeUpdate` and
//! `TransportLossReport`, the RTT the newest receiver report's LSR/DLSR give
//! (RFC 3550 §6.4.1: the sender's SR out, the RR back, the receiver's wait
//! taken out). `rtt = "feedback"` runs goog_cc in "packet feedback only" mode
//! instead: RTT from the per-report maximum of transport-feedback RTTs, which
//! include up to a report interval of waiting, and loss from the feedback.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};

use goog_cc::experiments::FieldTrials;
use goog_cc::network_control::{NetworkControllerConfig, NetworkControllerInterface};
use goog_cc::transport as gt;
use goog_cc::units as gu;
use goog_cc::{GoogCcConfig, GoogCcNetworkController};

use super::{
    check_positive_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo,
    ParamValue, Params, ProbeCluster, SentPacket, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

const LOSS: Param<&str> = Param::choice(
    "loss",
    "v2",
    &["v2", "classic"],
    "\"v2\" = LossBasedBweV2 (libwebrtc default), \"classic\" = 2 %/10 % rule",
);
const PROBING: Param<&str> = Param::choice(
    "probing",
    "default",
    &["default", "periodic"],
    "\"periodic\": a probe once the flow has been application-limited for 5 s, then every 5 s while it stays so (GCC with probing)",
);
/// libwebrtc DEFAULT_PACE_MULTIPLIER = 2.5 (goog_cc_network_control.cc).
const PACING_FACTOR: Param<f64> =
    Param::number("pacing_factor", 2.5, 1.0, 10.0, "pacing / target (libwebrtc DEFAULT_PACE_MULTIPLIER)");
const MAX_PADDING_RATE: Param<DataRate> = Param::rate(
    "max_padding_rate",
    DataRate::ZERO,
    DataRate::ZERO,
    DataRate::MAX,
    "padding goog_cc may request (StreamsConfig)",
);
const RTT: Param<&str> = Param::choice(
    "rtt",
    "rtcp",
    &["rtcp", "feedback"],
    "\"rtcp\": RTT and loss from RTCP-style reports each second (WebRTC); \"feedback\": from transport feedback",
);
/// goog_cc's default WebRTC-CongestionWindow trial (QueueSize:350,
/// MinBitrate:30000, DropFrame:true, rate_control_settings.cc): the window
/// acts through `cwnd_reduce_ratio`, which libwebrtc's VideoStreamEncoder
/// turns into frame drops and a lower encoder target.
const DROP_FRAMES: Param<bool> = Param::flag(
    "drop_frames",
    true,
    "drop frames as libwebrtc's encoder does when goog_cc's window is full (cwnd_reduce_ratio)",
);

pub const PARAMS: &[ParamInfo] = &[
    LOSS.info(),
    PROBING.info(),
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
    PACING_FACTOR.info(),
    MAX_PADDING_RATE.info(),
    RTT.info(),
    DROP_FRAMES.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "gcc",
    summary: "Google Congestion Control (libwebrtc goog_cc: trendline delay, loss-based, probing)",
    params: PARAMS,
    create,
    receiver: None,
    pushback: super::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

/// libwebrtc goog_cc_factory.cc `GetProcessInterval()`: kUpdateIntervalMs = 25.
pub const PROCESS_INTERVAL: Duration = Duration::from_millis(25);
/// Send history kept for matching feedback. libwebrtc keeps 60 s
/// (transport_feedback_adapter.cc kSendTimeHistoryWindow); goog_cc's estimators
/// look back at most a few seconds, so 10 s bounds memory at high rates.
const HISTORY_WINDOW: Duration = Duration::from_secs(10);
/// TWCC sequence numbers are 16 bit: feedback cannot refer further back.
const HISTORY_CAP: usize = 1 << 16;
/// A probe cluster is matched to packets for this long (the prober sends it
/// at once; ProbeController waits 1 s for results, MAX_WAITING_TIME_FOR_PROBING_RESULT).
const CLUSTER_TTL: Duration = Duration::from_secs(5);
const CLUSTER_CAP: usize = 32;
/// Lost-only reports held back until a report with an arrival (see on_feedback).
const PENDING_LOST_CAP: usize = 4096;
/// goog_cc multiplies bps by µs in i64 (DataRate * TimeDelta); 10 Gbps keeps
/// pacer windows far from overflow.
const MAX_RATE_BPS: u64 = 10_000_000_000;
/// goog_cc time = rtcc time + 1e6 s. goog_cc 0.1.4's AlrDetector stamps the
/// ALR start with wall-clock ms since its creation (alr_detector.rs,
/// `Instant`); keeping simulated timestamps far above any wall time makes
/// ProbeController::time_for_alr_probe use the last probe time, deterministically.
/// `AlrGate` adds the ALR start back, in simulated time.
const CLOCK_OFFSET_US: i64 = 1_000_000_000_000;
const TIME_LIMIT_US: i64 = 1_000_000_000_000_000;
/// bwe_defines.h kCongestionControllerMinBitrate: goog_cc's floor.
const GOOG_MIN_RATE: DataRate = DataRate::from_kbps(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossMode {
    V2,
    Classic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probing {
    Default,
    Periodic,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccConfig {
    pub loss: LossMode,
    pub probing: Probing,
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    pub pacing_factor: f64,
    pub max_padding_rate: DataRate,
    /// RTT and loss from RTCP-style reports (true) or transport feedback.
    pub rtcp: bool,
    /// Pass goog_cc's cwnd_reduce_ratio on for frame dropping.
    pub drop_frames: bool,
}

impl GccConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let loss = match p.get(&LOSS)? {
            "classic" => LossMode::Classic,
            _ => LossMode::V2,
        };
        let probing = match p.get(&PROBING)? {
            "periodic" => Probing::Periodic,
            _ => Probing::Default,
        };
        let cap = DataRate::from_bps(MAX_RATE_BPS);
        let min_rate = p.get_or(&MIN_RATE, ctx.min_rate)?.min(cap);
        let max_rate = p.get_or(&MAX_RATE, ctx.max_rate)?.min(cap);
        check_positive_bounds(min_rate, max_rate)?;
        // Clamped like GoogCcNetworkController::clamp_constraints does.
        let start_rate = p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate.max(GOOG_MIN_RATE), max_rate);
        Ok(GccConfig {
            loss,
            probing,
            start_rate,
            min_rate,
            max_rate,
            pacing_factor: p.get(&PACING_FACTOR)?,
            max_padding_rate: p.get(&MAX_PADDING_RATE)?.min(cap),
            rtcp: p.get(&RTT)? == "rtcp",
            drop_frames: p.get(&DROP_FRAMES)?,
        })
    }
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Gcc::new(GccConfig::from_params(p, ctx)?)))
}

/// `gcc-probing`: GCC with periodic ALR probing on — the Dumbo thesis's
/// "GCC with probing" baseline (§6.1).
pub const INFO_PROBING: ControllerInfo = ControllerInfo {
    name: "gcc-probing",
    summary: "GCC with periodic bandwidth probing while application-limited (Dumbo thesis baseline)",
    params: INFO.params,
    create: create_probing,
    receiver: None,
    pushback: super::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

fn create_probing(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    let mut p = p.clone();
    p.0.entry(PROBING.name().into()).or_insert(ParamValue::Str("periodic".into()));
    create(&p, ctx)
}

/// goog_cc's controller is `!Send` only because it holds its acknowledged
/// bitrate estimator as `Box<dyn AcknowledgedBitrateEstimatorInterface>`
/// without a `Send` bound.
struct Inner(GoogCcNetworkController);
// SAFETY: audited for goog_cc 0.1.4: both implementations behind that box
// (AcknowledgedBitrateEstimator, RobustThroughputEstimator) are plain owned
// data, and the crate holds no Rc, Cell or thread-local state. The controller
// is owned exclusively by `Gcc`, so moving it to another thread is sound.
unsafe impl Send for Inner {}

#[derive(Clone, Copy)]
struct Sent {
    seq: u64,
    at: Time,
    packet: gt::SentPacket,
}

#[derive(Clone, Copy)]
struct Cluster {
    id: i32,
    min_probes: i64,
    min_bytes: i64,
    created: Time,
}

pub struct Gcc {
    cfg: GccConfig,
    /// `None` until the first input (the flow's start), and after goog_cc panicked.
    cc: Option<Inner>,
    /// Latest sender-side time handed to goog_cc; its clocks must not go back.
    clock: Time,
    next_process: Time,
    history: VecDeque<Sent>,
    max_reported: Option<u64>,
    clusters: Vec<Cluster>,
    probes: VecDeque<ProbeCluster>,
    pending_lost: Vec<gt::PacketResult>,
    decision: Decision,
    est: Estimates,
    rtcp: RtcpState,
    pushback: WindowPushback,
    alr: AlrGate,
}

/// goog_cc's congestion-window pushback (WebRTC-CongestionWindow, default
/// QueueSize:350, MinBitrate:30000, DropFrame:true; rate_control_settings.cc),
/// kept here rather than in the crate: goog_cc 0.1.4's `on_process_interval`
/// calls `update_outstanding_data(current_data_window)` where libwebrtc's
/// OnProcessInterval calls `SetDataWindow(*current_data_window_)`
/// (goog_cc_network_control.cc), so every 25 ms without a send it took the
/// new window for the bytes in flight, and the encoder was pushed back 5 %
/// (and dropped a frame in 20) whenever the window had grown. The crate runs
/// with its window off (QueueSize 0); the rules below follow libwebrtc.
#[derive(Clone, Debug)]
struct WindowPushback {
    /// Per feedback, the largest feedback RTT (feedback time − send time),
    /// ms; the newest 32 (goog_cc_network_control.cc MAX_FEEDBACK_RTT_WINDOW).
    feedback_max_rtts: VecDeque<i64>,
    /// current_data_window_: None until the first update.
    window: Option<DataSize>,
    outstanding: DataSize,
    /// encoding_rate_ratio_ (congestion_window_pushback_controller.cc).
    ratio: f64,
    cwnd_reduce_ratio: f64,
}

impl WindowPushback {
    /// QueueSize:350 of the default WebRTC-CongestionWindow trial.
    const QUEUE: Duration = Duration::from_millis(350);
    /// MinBitrate:30000 (min_pushback_target_bitrate_bps_).
    const MIN_PUSHBACK: DataRate = DataRate::from_kbps(30);
    /// UpdateCongestionWindowSize's kMinCwnd: two full packets.
    const MIN_WINDOW: DataSize = DataSize::from_bytes(2 * 1500);
    const RTT_WINDOW: usize = 32;

    fn new() -> Self {
        WindowPushback {
            feedback_max_rtts: VecDeque::with_capacity(Self::RTT_WINDOW + 1),
            window: None,
            outstanding: DataSize::ZERO,
            ratio: 1.0,
            cwnd_reduce_ratio: 0.0,
        }
    }

    /// OnTransportPacketsFeedback: the report's largest feedback RTT.
    fn feedback_rtt(&mut self, max_rtt: Duration) {
        // TimeDelta::ms() rounds to the nearest ms.
        self.feedback_max_rtts.push_back((max_rtt.as_micros() + 500).div_euclid(1000));
        if self.feedback_max_rtts.len() > Self::RTT_WINDOW {
            self.feedback_max_rtts.pop_front();
        }
    }

    /// UpdateCongestionWindowSize: (min feedback RTT + queue) × target,
    /// averaged with the previous window.
    fn update_window(&mut self, target: DataRate) {
        let Some(&min_rtt) = self.feedback_max_rtts.iter().min() else { return };
        let w = target * (Duration::from_millis(min_rtt.max(0)) + Self::QUEUE);
        let w = match self.window {
            Some(old) => DataSize::from_bytes((w.bytes() + old.bytes()) / 2),
            None => w,
        };
        self.window = Some(w.max(Self::MIN_WINDOW));
    }

    /// MaybeTriggerOnNetworkChanged → UpdateTargetBitrate: the ratio steps
    /// once per call by how full the window is; cwnd_reduce_ratio is what
    /// the pushback takes off `target`, floored at `min_rate`.
    fn evaluate(&mut self, target: DataRate, min_rate: DataRate) {
        let Some(window) = self.window.filter(|w| w.bytes() > 0) else { return };
        let fill = self.outstanding.bytes() as f64 / window.bytes() as f64;
        self.ratio = super::pushback_step(self.ratio, fill);
        let adjusted = DataRate::from_bps((target.bps() as f64 * self.ratio) as u64);
        let pushed = if adjusted < Self::MIN_PUSHBACK { target.min(Self::MIN_PUSHBACK) } else { adjusted };
        let pushed = pushed.max(min_rate);
        self.cwnd_reduce_ratio =
            if target.bps() > 0 { (target.bps() as f64 - pushed.bps() as f64) / target.bps() as f64 } else { 0.0 };
    }
}

/// Times goog_cc's periodic ALR probe as libwebrtc does: ProbeController::
/// TimeForAlrProbe (probe_controller.cc) fires once now ≥ max(ALR start, last
/// probe) + kAlrPeriodicProbingInterval (5 s). goog_cc 0.1.4 only sees the last
/// probe (see CLOCK_OFFSET_US), so its periodic probing is switched on here
/// once the ALR has lasted the interval, through StreamsConfig::
/// requests_alr_probing, which sets that flag and nothing else.
struct AlrGate {
    detector: AlrDetector,
    /// ProbeControllerConfig::alr_interval (kAlrPeriodicProbingInterval).
    interval: Duration,
    /// What goog_cc was last told.
    on: bool,
}

impl AlrGate {
    fn new(trials: &FieldTrials) -> Self {
        AlrGate {
            detector: AlrDetector::new(trials.alr_detector_parameters.clone()),
            interval: Duration::from_micros(trials.probing_configuration.alr_interval.us()),
            on: false,
        }
    }

    fn due(&self, now: Time) -> bool {
        self.detector.started.is_some_and(|s| now >= s + self.interval)
    }
}

/// libwebrtc alr_detector.cc, fed what goog_cc's own copy is fed (each sent
/// packet's bytes and ms, each new target), so both agree on whether the flow
/// is application-limited; the start is stamped in rtcc time where libwebrtc
/// takes rtc::TimeMillis(). The thresholds are goog_cc's AlrDetectorConfig:
/// 80 % usage, start above 40 %, stop below -60 % of the budget. libwebrtc's
/// detector uses these in every call: alr_experiment.cc turns the screenshare
/// probing experiment on by default, and alr_detector.cc's GetConfigFromTrials
/// applies its settings in place of alr_detector.h's 65 %, 80 %, 50 %. The
/// experiment's periodic probing itself is requested only for screenshare.
struct AlrDetector {
    cfg: goog_cc::AlrDetectorConfig,
    last_send_ms: Option<i64>,
    budget: IntervalBudget,
    started: Option<Time>,
}

impl AlrDetector {
    fn new(cfg: goog_cc::AlrDetectorConfig) -> Self {
        AlrDetector { cfg, last_send_ms: None, budget: IntervalBudget::default(), started: None }
    }

    /// OnBytesSent; `now` stamps an ALR start.
    fn on_bytes_sent(&mut self, bytes: i64, send_ms: i64, now: Time) {
        // The first packet only sets the clock: its sending time is unknown.
        let Some(last) = self.last_send_ms.replace(send_ms) else { return };
        self.budget.use_budget(bytes);
        self.budget.increase(send_ms - last);
        let ratio = self.budget.ratio();
        if ratio > self.cfg.start_budget_level_ratio && self.started.is_none() {
            self.started = Some(now);
        } else if ratio < self.cfg.stop_budget_level_ratio && self.started.is_some() {
            self.started = None;
        }
    }

    /// SetEstimatedBitrate.
    fn set_estimated_bitrate(&mut self, bps: i64) {
        self.budget.set_target_kbps((bps as f64 * self.cfg.bandwidth_usage_ratio / 1000.0) as i64);
    }
}

/// libwebrtc interval_budget.cc as the ALR detector runs it (underuse builds
/// up), in its integer arithmetic.
#[derive(Default)]
struct IntervalBudget {
    target_kbps: i64,
    max_bytes: i64,
    remaining: i64,
}

impl IntervalBudget {
    /// kWindowMs.
    const WINDOW_MS: i64 = 500;

    fn set_target_kbps(&mut self, kbps: i64) {
        self.target_kbps = kbps;
        self.max_bytes = Self::WINDOW_MS * kbps / 8;
        self.remaining = self.remaining.max(-self.max_bytes).min(self.max_bytes);
    }

    fn increase(&mut self, delta_ms: i64) {
        self.remaining = (self.remaining + self.target_kbps * delta_ms / 8).min(self.max_bytes);
    }

    fn use_budget(&mut self, bytes: i64) {
        self.remaining = (self.remaining - bytes).max(-self.max_bytes);
    }

    fn ratio(&self) -> f64 {
        if self.max_bytes == 0 {
            return 0.0;
        }
        self.remaining as f64 / self.max_bytes as f64
    }
}

/// What an RTCP receiver report would carry since the last one.
#[derive(Default)]
struct RtcpState {
    next: Option<Time>,
    since: Time,
    lost: u64,
    received: u64,
    rtt: Option<Duration>,
}

/// libwebrtc's RTCP report interval for video (rtcp_sender.cc
/// kDefaultVideoReportInterval, 1 s).
const RTCP_INTERVAL: Duration = Duration::from_secs(1);

/// goog_cc's own view, for `state()`: only what its updates expose (the
/// delay- and loss-based estimates themselves are private to the crate).
#[derive(Default)]
struct Estimates {
    stable: Option<DataRate>,
    rtt: Option<Duration>,
    loss_ratio: f64,
    cwnd_reduce_ratio: f64,
    restarts: u32,
    /// Target cuts, by what goog_cc was handling when its target fell: a
    /// transport feedback without any loss (neither in it nor in the loss
    /// estimate: only the delay-based detector's overuse can cut then,
    /// delay_based_bwe.cc), one with loss, or the process timer (ALR, probes,
    /// loss-based v2 between reports).
    cuts_lossless: u32,
    cuts_lossy: u32,
    cuts_timer: u32,
}

fn ts(t: Time) -> gu::Timestamp {
    gu::Timestamp::from_micros(t.as_micros().clamp(-TIME_LIMIT_US, TIME_LIMIT_US) + CLOCK_OFFSET_US)
}

fn to_goog(r: DataRate) -> gu::DataRate {
    gu::DataRate::from_bits_per_sec(r.bps().min(MAX_RATE_BPS) as i64)
}

fn from_goog(r: gu::DataRate) -> Option<DataRate> {
    r.is_finite().then(|| DataRate::from_bps(r.bps().max(0) as u64))
}

impl Gcc {
    pub fn new(cfg: GccConfig) -> Self {
        let target = cfg.start_rate;
        Gcc {
            cfg,
            cc: None,
            clock: Time::ZERO,
            next_process: Time::ZERO,
            history: VecDeque::new(),
            max_reported: None,
            clusters: Vec::new(),
            probes: VecDeque::new(),
            pending_lost: Vec::new(),
            decision: Decision {
                target_rate: target,
                pacing_rate: target.mul_f64(cfg.pacing_factor),
                cwnd: None,
                padding_rate: DataRate::ZERO,
                ..Decision::default()
            },
            est: Estimates::default(),
            pushback: WindowPushback::new(),
            rtcp: RtcpState::default(),
            alr: AlrGate::new(&FieldTrials::default()),
        }
    }

    /// Accumulate what RTCP receiver reports tell and, once per
    /// `RTCP_INTERVAL`, hand goog_cc the RTT and the loss counts. The RTT is
    /// the RR's (LSR/DLSR, `Feedback::rtcp_rtt`), as libwebrtc's
    /// RtpTransportControllerSend forwards it to OnRoundTripTimeUpdate.
    fn rtcp_report(&mut self, fb: &Feedback, at: gu::Timestamp) {
        let r = &mut self.rtcp;
        if let Some(rtt) = fb.rtcp_rtt {
            r.rtt = Some(rtt);
        }
        for p in &fb.packets {
            if p.arrival.is_some() {
                r.received += 1;
            } else {
                r.lost += 1;
            }
        }
        let next = *r.next.get_or_insert(fb.received_at + RTCP_INTERVAL);
        if fb.received_at < next {
            return;
        }
        let rtt = r.rtt.map(|d| gu::TimeDelta::from_micros(d.as_micros()));
        let loss = gt::TransportLossReport {
            receive_time: at,
            start_time: ts(r.since),
            end_time: at,
            packets_lost_delta: r.lost,
            packets_received_delta: r.received,
        };
        (r.lost, r.received, r.since, r.next) = (0, 0, fb.received_at, Some(fb.received_at + RTCP_INTERVAL));
        if let Some(rtt) = rtt {
            let m = gt::RoundTripTimeUpdate { receive_time: at, round_trip_time: rtt, smoothed: false };
            self.call(|cc| cc.on_round_trip_time_update(m));
        }
        self.call(|cc| cc.on_transport_loss_report(loss));
    }

    /// Advances the monotonic sender clock and returns it in goog_cc time.
    fn advance(&mut self, t: Time) -> gu::Timestamp {
        self.clock = self.clock.max(t);
        ts(self.clock)
    }

    /// Creates goog_cc the way RtpTransportControllerSend does: controller
    /// with the initial constraints and streams config, an immediate process
    /// interval (which applies them), then network availability (initial probes).
    fn ensure_started(&mut self, now: Time) {
        if self.cc.is_some() {
            return;
        }
        let at = self.advance(now);
        let mut field_trials = FieldTrials::default();
        field_trials.loss_based_bwe_v2.enabled = self.cfg.loss == LossMode::V2;
        // The window is kept by `WindowPushback` (see there).
        field_trials.congestion_window.queue_size_ms = 0;
        self.pushback = WindowPushback::new();
        self.alr = AlrGate::new(&field_trials);
        let config = NetworkControllerConfig {
            field_trials,
            constraints: gt::TargetRateConstraints {
                at_time: at,
                min_data_rate: Some(to_goog(self.cfg.min_rate)),
                max_data_rate: Some(to_goog(self.cfg.max_rate)),
                // After a restart, resume from the last target.
                starting_rate: Some(to_goog(self.decision.target_rate.max(GOOG_MIN_RATE))),
            },
            stream_based_config: gt::StreamsConfig {
                at_time: at,
                // Switched on by `AlrGate` once an ALR has lasted 5 s.
                requests_alr_probing: Some(false),
                pacing_factor: Some(self.cfg.pacing_factor),
                max_padding_rate: Some(to_goog(self.cfg.max_padding_rate)),
                ..Default::default()
            },
        };
        let cc = catch_unwind(|| GoogCcNetworkController::new(config, GoogCcConfig { feedback_only: !self.cfg.rtcp }));
        let Ok(cc) = cc else { return };
        self.cc = Some(Inner(cc));
        self.next_process = self.clock + PROCESS_INTERVAL;
        self.call(|cc| cc.on_process_interval(gt::ProcessInterval { at_time: at, pacer_queue: None }));
        self.call(|cc| cc.on_network_availability(gt::NetworkAvailability { at_time: at, network_available: true }));
    }

    /// Runs one goog_cc call. goog_cc asserts on states its C++ original
    /// tolerates; a panic drops the instance and the next input restarts it
    /// from the last target (like a route change), so the controller never fails.
    fn call(&mut self, f: impl FnOnce(&mut GoogCcNetworkController) -> gt::NetworkControlUpdate) {
        let Some(inner) = self.cc.as_mut() else { return };
        match catch_unwind(AssertUnwindSafe(|| f(&mut inner.0))) {
            Ok(update) => self.apply(update),
            Err(_) => (self.cc, self.est.restarts) = (None, self.est.restarts + 1),
        }
    }

    fn apply(&mut self, u: gt::NetworkControlUpdate) {
        if let Some(t) = u.target_rate {
            // MaybeTriggerOnNetworkChanged hands its ALR detector this same
            // rate (the loss-based target: the crate runs without pushback).
            if t.target_rate.is_finite() && t.target_rate.bps() > 0 {
                self.alr.detector.set_estimated_bitrate(t.target_rate.bps());
            }
            if let Some(r) = from_goog(t.target_rate) {
                self.decision.target_rate = r.clamp(self.cfg.min_rate, self.cfg.max_rate);
            }
            let rtt = t.network_estimate.round_trip_time;
            if rtt.is_finite() && rtt > gu::TimeDelta::zero() {
                self.est.rtt = Some(Duration::from_micros(rtt.us()));
            }
            let ratio = |x: f64| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
            self.est.stable = from_goog(t.stable_target_rate);
            self.est.loss_ratio = ratio(f64::from(t.network_estimate.loss_rate_ratio));
        }
        if let Some(p) = u.pacer_config {
            if p.time_window.is_finite()
                && p.time_window > gu::TimeDelta::zero()
                && p.data_window.is_finite()
                && p.pad_window.is_finite()
            {
                self.decision.pacing_rate = from_goog(p.data_rate()).unwrap_or(self.decision.pacing_rate);
                self.decision.padding_rate = from_goog(p.pad_rate()).unwrap_or(DataRate::ZERO);
            }
        }
        // Emitted only when the congestion window is on without pushback; with
        // goog_cc's default trials (WebRTC-CongestionWindow QueueSize:350,
        // MinBitrate:30000, DropFrame:true) the window acts through
        // cwnd_reduce_ratio instead and the pacer stays window-free.
        if let Some(w) = u.congestion_window.filter(|w| w.is_finite()) {
            self.decision.cwnd = Some(DataSize::from_bytes(w.bytes().max(0) as u64));
        }
        for c in u.probe_cluster_configs {
            let (Some(rate), true) = (from_goog(c.target_data_rate), c.target_duration.is_finite()) else { continue };
            // BitrateProber::CreateProbeCluster: min_bytes = rate * duration,
            // min_probes = target_probe_count.
            let min_bytes = (c.target_data_rate * c.target_duration).bytes().max(1);
            let min_probes = i64::from(c.target_probe_count.max(1));
            let created = self.clock;
            self.clusters.retain(|k| created.saturating_since(k.created) < CLUSTER_TTL && k.id != c.id);
            if self.clusters.len() >= CLUSTER_CAP {
                self.clusters.remove(0);
            }
            self.clusters.push(Cluster { id: c.id, min_probes, min_bytes, created });
            if self.probes.len() >= CLUSTER_CAP {
                self.probes.pop_front();
            }
            self.probes.push_back(ProbeCluster {
                id: c.id,
                rate,
                min_bytes: DataSize::from_bytes(min_bytes as u64),
                min_packets: min_probes as u32,
            });
        }
    }

    /// The feedback, handed to goog_cc (`on_feedback` counts the cuts).
    fn feedback(&mut self, fb: &Feedback) {
        let feedback_time = self.advance(fb.received_at);
        if self.cfg.rtcp {
            self.rtcp_report(fb, feedback_time);
        }
        let mut results = Vec::with_capacity(self.pending_lost.len() + fb.packets.len());
        results.append(&mut self.pending_lost);
        for p in &fb.packets {
            let sent = match self.history.binary_search_by_key(&p.seq, |s| s.seq) {
                Ok(i) => self.history[i].packet,
                Err(_) => gt::SentPacket {
                    send_time: ts(p.send_time),
                    size: goog_size(p.size.max(DataSize::from_bytes(1))),
                    pacing_info: self.pacing_info(p.probe_cluster),
                    audio: p.kind == PacketKind::Audio,
                    sequence_number: p.seq.min(i64::MAX as u64) as i64,
                    ..Default::default()
                },
            };
            // goog_cc marks a lost packet by receive_time = +infinity (PacketResult::is_received).
            let receive_time = p.arrival.map_or(gu::Timestamp::plus_infinity(), ts);
            results.push(gt::PacketResult { sent_packet: sent, receive_time, ..Default::default() });
            self.max_reported = Some(self.max_reported.map_or(p.seq, |m| m.max(p.seq)));
        }
        // on_transport_packets_feedback unwraps the latest arrival: a report
        // of losses only is held until one with an arrival comes.
        if !results.iter().any(|r| r.is_received()) {
            let excess = results.len().saturating_sub(PENDING_LOST_CAP);
            results.drain(..excess);
            self.pending_lost = results;
            return;
        }
        let max_reported = self.max_reported.unwrap_or(0);
        let in_flight =
            self.history.iter().rev().take_while(|s| s.seq > max_reported).map(|s| s.packet.size.bytes()).sum();
        // OnTransportPacketsFeedback: the largest feedback RTT of the report.
        let max_rtt = fb.packets.iter().filter(|p| p.arrival.is_some()).map(|p| fb.received_at - p.send_time).max();
        let report = gt::TransportPacketsFeedback {
            feedback_time,
            data_in_flight: gu::DataSize::from_bytes(in_flight),
            packet_feedbacks: results,
            sendless_arrival_times: Vec::new(),
        };
        self.pushback.outstanding = DataSize::from_bytes(in_flight.max(0) as u64);
        if let Some(rtt) = max_rtt {
            self.pushback.feedback_rtt(rtt);
        }
        self.call(|cc| cc.on_transport_packets_feedback(report));
        self.push_back();
        self.pushback.update_window(self.decision.target_rate);
    }

    /// The process timer, handed to goog_cc (`on_timeout` counts the cuts).
    fn timeout(&mut self, now: Time) {
        self.ensure_started(now);
        if now < self.next_process {
            return;
        }
        let at = self.advance(now);
        // OnProcessInterval: the window from the last target, then the pushback step.
        self.pushback.update_window(self.decision.target_rate);
        if self.cfg.probing == Probing::Periodic && self.alr.due(self.clock) != self.alr.on {
            self.alr.on = !self.alr.on;
            let streams =
                gt::StreamsConfig { at_time: at, requests_alr_probing: Some(self.alr.on), ..Default::default() };
            self.call(|cc| cc.on_streams_config(streams));
        }
        // pacer_queue is only passed with WebRTC-AddPacingToCongestionWindowPushback (off by default).
        self.call(|cc| cc.on_process_interval(gt::ProcessInterval { at_time: at, pacer_queue: None }));
        self.push_back();
        self.next_process += PROCESS_INTERVAL;
        if self.next_process <= now {
            self.next_process = now + PROCESS_INTERVAL;
        }
    }

    /// MaybeTriggerOnNetworkChanged's pushback step, after each goog_cc call
    /// that runs it in libwebrtc (sent packet, process interval, feedback).
    fn push_back(&mut self) {
        if self.cc.is_none() {
            return;
        }
        self.pushback.evaluate(self.decision.target_rate, self.cfg.min_rate.max(GOOG_MIN_RATE));
        self.est.cwnd_reduce_ratio = self.pushback.cwnd_reduce_ratio.clamp(0.0, 1.0);
        if self.cfg.drop_frames {
            self.decision.cwnd_reduce_ratio = self.est.cwnd_reduce_ratio;
        }
    }

    fn pacing_info(&self, cluster: i32) -> gt::PacedPacketInfo {
        match self.clusters.iter().find(|c| cluster >= 0 && c.id == cluster) {
            Some(c) => gt::PacedPacketInfo::new(c.id, c.min_probes, c.min_bytes),
            // Unknown clusters count as media: ProbeBitrateEstimator asserts on
            // probes without cluster sizes.
            None => gt::PacedPacketInfo::default(),
        }
    }
}

fn goog_size(s: DataSize) -> gu::DataSize {
    gu::DataSize::from_bytes(s.bytes().min(1 << 40) as i64)
}

impl Controller for Gcc {
    fn name(&self) -> &str {
        "gcc"
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        self.ensure_started(now);
        let send_time = self.advance(p.send_time);
        let sent = gt::SentPacket {
            send_time,
            // Zero-size packets would trip ProbeBitrateEstimator's size asserts.
            size: goog_size(p.size.max(DataSize::from_bytes(1))),
            // Bytes sent outside transport feedback (none in rtcc); the acked
            // bitrate estimator adds this to every packet.
            prior_unacked_data: gu::DataSize::zero(),
            pacing_info: self.pacing_info(p.probe_cluster),
            audio: p.kind == PacketKind::Audio,
            sequence_number: p.seq.min(i64::MAX as u64) as i64,
            data_in_flight: goog_size(p.in_flight),
        };
        if self.history.back().is_none_or(|b| p.seq > b.seq) {
            self.history.push_back(Sent { seq: p.seq, at: self.clock, packet: sent });
        }
        while self.history.len() > HISTORY_CAP
            || self.history.front().is_some_and(|f| self.clock.saturating_since(f.at) > HISTORY_WINDOW)
        {
            self.history.pop_front();
        }
        if self.cfg.probing == Probing::Periodic && self.cc.is_some() {
            self.alr.detector.on_bytes_sent(sent.size.bytes(), sent.send_time.ms(), self.clock);
        }
        self.call(|cc| cc.on_sent_packet(sent));
        self.pushback.outstanding = p.in_flight;
        self.push_back();
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if fb.packets.is_empty() {
            return; // goog_cc ignores empty reports too
        }
        self.ensure_started(now);
        let before = self.decision.target_rate;
        let lossy = self.est.loss_ratio > 0.0 || fb.packets.iter().any(|p| p.arrival.is_none());
        self.feedback(fb);
        if self.decision.target_rate < before {
            let lossy = lossy || self.est.loss_ratio > 0.0;
            let cuts = if lossy { &mut self.est.cuts_lossy } else { &mut self.est.cuts_lossless };
            *cuts += 1;
        }
    }

    fn on_timeout(&mut self, now: Time) {
        let before = self.decision.target_rate;
        self.timeout(now);
        if self.decision.target_rate < before {
            self.est.cuts_timer += 1;
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.cc.as_ref().map(|_| self.next_process)
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn poll_probe(&mut self) -> Option<ProbeCluster> {
        self.probes.pop_front()
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("target_kbps", self.decision.target_rate.kbps_f64());
        out("pacing_kbps", self.decision.pacing_rate.kbps_f64());
        out("padding_kbps", self.decision.padding_rate.kbps_f64());
        let e = &self.est;
        // MaybeTriggerOnNetworkChanged: stable = min(link capacity, pushback target).
        let pushed = self.decision.target_rate.mul_f64(1.0 - e.cwnd_reduce_ratio);
        e.stable.inspect(|s| out("stable_kbps", (*s).min(pushed).kbps_f64()));
        e.rtt.inspect(|rtt| out("rtt_ms", rtt.as_millis_f64()));
        out("loss_ratio", e.loss_ratio);
        out("cwnd_reduce_ratio", e.cwnd_reduce_ratio);
        out("restarts", f64::from(e.restarts));
        out("cuts_lossless", f64::from(e.cuts_lossless));
        out("cuts_lossy", f64::from(e.cuts_lossy));
        out("cuts_timer", f64::from(e.cuts_timer));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::controller::testing::{odd_input, MS};
    use crate::controller::ParamValue;
    use crate::feedback::{PacketResult, ReportStats};
    use crate::rng::xorshift;

    const PKT: DataSize = DataSize::from_bytes(1200);
    const OWD: Duration = Duration::from_millis(25);

    /// The closed-loop tests' path (also vivace's): a FIFO bottleneck of
    /// `capacity` with 25 ms one-way delay, 500 ms of drop-tail buffer and
    /// every `loss_every`-th packet lost before it; the sender's encoder is
    /// capped at `app_limit`.
    pub(crate) struct Path {
        pub capacity: fn(Time) -> DataRate,
        pub loss_every: u64,
        pub app_limit: fn(Time) -> DataRate,
    }
    pub(crate) const STEADY: Path =
        Path { capacity: |_| DataRate::from_mbps(3), loss_every: 0, app_limit: |_| DataRate::from_mbps(50) };

    /// The network and receiver side of `Path`: carries each packet sent and
    /// reports every 50 ms, the report arriving one `OWD` later.
    pub(crate) struct Bottleneck {
        capacity: fn(Time) -> DataRate,
        loss_every: u64,
        link_free: Time,
        next_report: Time,
        at_receiver: Vec<(Time, PacketResult)>,
        reports: VecDeque<Feedback>,
    }

    impl Bottleneck {
        pub(crate) fn new(path: &Path) -> Self {
            Bottleneck {
                capacity: path.capacity,
                loss_every: path.loss_every,
                link_free: Time::ZERO,
                next_report: Time::ZERO,
                at_receiver: vec![],
                reports: VecDeque::new(),
            }
        }

        /// Carries `r` (sent now, `arrival` unset); the packet's queuing
        /// delay if it is delivered.
        pub(crate) fn send(&mut self, now: Time, mut r: PacketResult) -> Option<Duration> {
            let (every, start) = (self.loss_every, now.max(self.link_free));
            let lost = every > 0 && r.seq % every == every - 1;
            r.arrival = (!lost && start - now <= MS * 500).then(|| {
                self.link_free = start + r.size / (self.capacity)(now);
                self.link_free + OWD
            });
            self.at_receiver.push((r.arrival.unwrap_or(now + OWD), r));
            r.arrival.map(|_| start - now)
        }

        /// The reports that have reached the sender by `now`, after sending
        /// the one due.
        pub(crate) fn feedback(&mut self, now: Time) -> impl Iterator<Item = Feedback> + '_ {
            if now >= self.next_report {
                let packets = self.at_receiver.iter().filter(|(t, _)| *t <= now).map(|(_, p)| *p).collect();
                self.at_receiver.retain(|(t, _)| *t > now);
                let stats = ReportStats::default();
                // The RR's round trip: an SR through the queue, the report back.
                let queued = self.link_free.saturating_since(now);
                self.reports.push_back(Feedback {
                    report_time: now,
                    received_at: now + OWD,
                    packets,
                    stats,
                    rtcp_rtt: Some(OWD * 2 + queued),
                    ..Feedback::default()
                });
                self.next_report += MS * 50;
            }
            std::iter::from_fn(move || self.reports.pop_front_if(|r| r.received_at <= now))
        }

        /// The next report or report arrival.
        pub(crate) fn next_event(&self) -> Time {
            self.reports.front().map_or(self.next_report, |r| r.received_at.min(self.next_report))
        }
    }

    /// An ideal encoder at min(target, app_limit), a pacer at the pacing rate,
    /// probe clusters sent as padding, over a FIFO bottleneck with 25 ms
    /// one-way delay, 500 ms of drop-tail buffer and every `loss_every`-th
    /// packet lost before it; feedback every 50 ms. Returns the target every
    /// 100 ms and the number of probe clusters requested.
    fn run(g: &mut Gcc, secs: i64, path: &Path) -> (Vec<(Time, DataRate)>, u32) {
        let (samples, clusters) = run_hooked(g, secs, path, &mut |_, _| {});
        (samples, clusters.len() as u32)
    }

    /// `run`, calling `hook` after every process interval; returns when each
    /// probe cluster started instead of their number.
    fn run_hooked(
        g: &mut Gcc,
        secs: i64,
        path: &Path,
        hook: &mut dyn FnMut(Time, &Gcc),
    ) -> (Vec<(Time, DataRate)>, Vec<Time>) {
        let [mut now, mut next_frame, mut next_send, mut next_sample] = [Time::ZERO; 4];
        let (mut backlog, mut in_flight, mut seq, mut clusters) = (DataSize::ZERO, DataSize::ZERO, 0u64, vec![]);
        let mut probe: Option<(ProbeCluster, DataSize, u32)> = None;
        let (mut net, mut samples) = (Bottleneck::new(path), vec![]);
        while now < Time::from_millis(secs * 1000) {
            if probe.is_none() {
                probe = g.poll_probe().map(|c| (c, DataSize::ZERO, 0));
                clusters.extend(probe.as_ref().map(|_| now));
            }
            if now >= next_sample {
                samples.push((now, g.decision().target_rate));
                next_sample += MS * 100;
            }
            if now >= next_frame {
                backlog += g.decision().target_rate.min((path.app_limit)(now)) * Duration::from_micros(33_333);
                next_frame += Duration::from_micros(33_333);
            }
            if now >= next_send && (backlog > DataSize::ZERO || probe.is_some()) {
                let (kind, size, cluster, rate) = match &mut probe {
                    Some((c, bytes, n)) => {
                        (*bytes, *n) = (*bytes + PKT, *n + 1);
                        (PacketKind::Probe, PKT, c.id, c.rate)
                    }
                    None => (PacketKind::Media, backlog.min(PKT), -1, g.decision().pacing_rate),
                };
                backlog = if kind == PacketKind::Media { backlog - size } else { backlog };
                probe = probe.filter(|(c, b, n)| *b < c.min_bytes || *n < c.min_packets);
                in_flight += size;
                let sent = SentPacket {
                    seq,
                    kind,
                    size,
                    send_time: now,
                    probe_cluster: cluster,
                    in_flight,
                    ..SentPacket::default()
                };
                g.on_packet_sent(now, &sent);
                let r =
                    PacketResult { seq, kind, size, send_time: now, probe_cluster: cluster, ..PacketResult::default() };
                net.send(now, r);
                (seq, next_send) = (seq + 1, now + size / rate);
            }
            for fb in net.feedback(now) {
                fb.packets.iter().for_each(|p| in_flight -= p.size);
                g.on_feedback(now, &fb);
            }
            if g.poll_timeout().is_some_and(|t| t <= now) {
                g.on_timeout(now);
                hook(now, g);
            }
            let sending = backlog > DataSize::ZERO || probe.is_some();
            let events = [next_frame, net.next_event(), next_sample, if sending { next_send } else { Time::MAX }];
            let next = events.into_iter().fold(g.poll_timeout().unwrap_or(Time::MAX), Time::min);
            now = next.max(now + Duration::from_micros(1));
        }
        (samples, clusters)
    }

    fn gcc(params: &[(&str, &str)]) -> Gcc {
        let p = params.iter().fold(Params::new(), |p, (k, v)| p.with(k, ParamValue::Str(v.to_string())));
        Gcc::new(GccConfig::from_params(&p, &ControllerContext::default()).unwrap())
    }

    fn kbps(s: &[(Time, DataRate)], from: i64, to: i64) -> Vec<f64> {
        let range = Time::from_millis(from * 1000)..Time::from_millis(to * 1000);
        s.iter().filter(|(t, _)| range.contains(t)).map(|(_, r)| r.kbps_f64()).collect()
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }

    #[test]
    fn process_interval_matches_goog_cc() {
        let goog = <GoogCcNetworkController as NetworkControllerInterface>::get_process_interval();
        assert_eq!(PROCESS_INTERVAL.as_micros(), goog.us());
    }

    #[test]
    fn settles_below_a_3_mbps_bottleneck() {
        let mut g = gcc(&[]);
        let last = kbps(&run(&mut g, 60, &STEADY).0, 40, 60);
        let (lo, hi) = last.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        eprintln!("steady 3 Mbps, 40-60 s: min {lo:.0} mean {:.0} max {hi:.0} kbps", mean(&last));
        assert!(lo >= 2000.0 && hi <= 3100.0, "target {lo:.0}..{hi:.0} kbps");
        let mut rtt = None;
        g.state(&mut |k, v| rtt = if k == "rtt_ms" { Some(v) } else { rtt });
        assert!(rtt.is_some_and(|v| (50.0..200.0).contains(&v)), "{rtt:?}");
    }

    #[test]
    fn follows_a_drop_to_1_mbps() {
        let capacity = |t| DataRate::from_kbps(if t < Time::from_millis(30_000) { 3000 } else { 1000 });
        let s = run(&mut gcc(&[]), 40, &Path { capacity, ..STEADY }).0;
        let fell = s.iter().find(|(t, r)| *t >= Time::from_millis(30_000) && *r < DataRate::from_kbps(1200));
        let (before, after) = (mean(&kbps(&s, 20, 30)), mean(&kbps(&s, 35, 40)));
        eprintln!(
            "drop at 30 s: before {before:.0} kbps, under 1.2 Mbps at {:?}, after {after:.0} kbps",
            fell.map(|f| f.0)
        );
        assert!(fell.is_some_and(|(t, _)| *t <= Time::from_millis(35_000)), "{fell:?}");
    }

    /// Without loss the delay-based detector's cuts are counted as lossless;
    /// with every 20th packet lost the cuts are lossy. (Timer cuts, such as
    /// goog_cc's RTT backoff after 3 s without feedback, are not asserted.)
    #[test]
    fn cuts_are_counted_by_what_goog_cc_was_handling() {
        let col = |g: &Gcc, key: &str| {
            let mut v = f64::NAN;
            g.state(&mut |k, x| v = if k == key { x } else { v });
            v
        };
        let capacity = |t| DataRate::from_kbps(if t < Time::from_millis(20_000) { 3000 } else { 2000 });
        let mut g = gcc(&[]);
        run(&mut g, 30, &Path { capacity, ..STEADY });
        assert!(col(&g, "cuts_lossless") >= 1.0, "{}", col(&g, "cuts_lossless"));
        assert_eq!(col(&g, "cuts_lossy"), 0.0);
        let mut g = gcc(&[]);
        run(&mut g, 30, &Path { loss_every: 20, ..STEADY });
        assert!(col(&g, "cuts_lossy") >= 1.0, "{}", col(&g, "cuts_lossy"));
    }

    /// On a steady 3 Mbps link the bytes in flight (~one RTT) stay far below
    /// goog_cc's window (RTT + 350 ms of the target), so libwebrtc never
    /// pushes back. goog_cc 0.1.4's own window took the grown window for the
    /// bytes in flight at each process interval: 5 % pushback after most.
    #[test]
    fn no_pushback_while_the_window_is_far_from_full() {
        let (mut pushed, mut intervals) = (0, 0);
        run_hooked(&mut gcc(&[]), 30, &STEADY, &mut |now, g| {
            if now >= Time::from_millis(10_000) {
                intervals += 1;
                pushed += u32::from(g.decision().cwnd_reduce_ratio > 0.0);
            }
        });
        assert!(intervals > 700, "{intervals}");
        assert_eq!(pushed, 0, "pushback after {pushed} of {intervals} process intervals");
    }

    /// A window that fills (a link that stops delivering) pushes back, and
    /// the pushback ends once the queue has drained.
    #[test]
    fn pushback_while_the_link_stalls() {
        let capacity = |t: Time| {
            DataRate::from_kbps(if (10_000..10_400).contains(&t.as_micros().div_euclid(1000)) { 10 } else { 3000 })
        };
        let mut during = 0.0f64;
        let mut after = 0.0f64;
        run_hooked(&mut gcc(&[]), 20, &Path { capacity, ..STEADY }, &mut |now, g| {
            let r = g.decision().cwnd_reduce_ratio;
            if (Time::from_millis(10_000)..Time::from_millis(11_000)).contains(&now) {
                during = during.max(r);
            } else if now >= Time::from_millis(15_000) {
                after = after.max(r);
            }
        });
        assert!(during > 0.0, "no pushback while stalled");
        assert_eq!(after, 0.0);
    }

    #[test]
    fn params_are_checked() {
        let ctx = ControllerContext::default();
        let with = |k: &str, v: &str| Params::new().with(k, ParamValue::Str(v.into()));
        let bogus = crate::controller::create("gcc", &with("loss", "bogus"), &ctx);
        assert_eq!(bogus.err().map(|e| e.field), Some("loss".to_string()));
        let c = crate::controller::create("gcc", &with("loss", "classic"), &ctx).unwrap();
        let d = c.decision();
        assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_kbps(300), DataRate::from_kbps(750)));
        assert!(crate::controller::create("gcc", &with("min_rate", "60Mbps"), &ctx).is_err());
        let cfg = GccConfig::from_params(&Params::new(), &ctx).unwrap();
        assert_eq!((cfg.loss, cfg.probing, cfg.pacing_factor), (LossMode::V2, Probing::Default, 2.5));
        assert!(cfg.rtcp, "RTT from RTCP-style reports by default, as in a WebRTC call");
        assert!(!GccConfig::from_params(&with("rtt", "feedback"), &ctx).unwrap().rtcp);
        assert!(crate::controller::create("gcc", &with("rtt", "sometimes"), &ctx).is_err());
    }

    /// Both RTT sources settle under a steady 3 Mbps bottleneck.
    #[test]
    fn rtt_sources_both_settle() {
        for mode in ["rtcp", "feedback"] {
            let mut g = gcc(&[("rtt", mode)]);
            let m = mean(&kbps(&run(&mut g, 60, &STEADY).0, 40, 60));
            eprintln!("rtt = {mode}: {m:.0} kbps over 40-60 s");
            assert!(m > 2000.0 && m < 3100.0, "{mode}: {m:.0} kbps");
        }
    }

    /// The classic rule (send_side_bandwidth_estimation.rs update_estimate)
    /// counts loss in 1/256: every 10th packet lost is 25/256 = 9.8 %, inside
    /// the 2-10 % hold band, so the rate freezes; every 8th (12.5 %) is above
    /// it and cuts the rate by half the loss each report. V2 reacts to 10 %.
    #[test]
    fn loss_lowers_the_target() {
        let at = |loss: &str, loss_every| {
            mean(&kbps(&run(&mut gcc(&[("loss", loss)]), 30, &Path { loss_every, ..STEADY }).0, 10, 30))
        };
        let (clean, hold, cut, v2) = (at("classic", 0), at("classic", 10), at("classic", 8), at("v2", 10));
        eprintln!("10-30 s kbps: classic {clean:.0}, 1/10 lost {hold:.0}, 1/8 lost {cut:.0}; v2 1/10 lost {v2:.0}");
        assert!(cut < 0.5 * clean, "classic 12.5 % loss: {cut:.0} vs {clean:.0}");
        assert!(hold > 0.9 * clean, "classic 9.8 % loss must hold: {hold:.0} vs {clean:.0}");
        assert!(v2 < 0.8 * clean, "v2 10 % loss: {v2:.0} vs {clean:.0}");
    }

    #[test]
    fn periodic_probing_probes_while_app_limited() {
        let path = Path { app_limit: |_| DataRate::from_kbps(500), ..STEADY };
        let (default, periodic) =
            (run(&mut gcc(&[]), 40, &path).1, run(&mut gcc(&[("probing", "periodic")]), 40, &path).1);
        eprintln!("probe clusters in 40 s at 500 kbps of media: default {default}, periodic {periodic}");
        assert!(periodic >= default + 4, "{periodic} vs {default}");
    }

    /// alr_detector_unittest.cc AlrDetection with goog_cc's thresholds (300
    /// kbps estimate, a packet every 10 ms): 90 % of the estimate is not
    /// application-limited, 20 % starts an ALR, stamped with the send time,
    /// and 100 % ends it.
    #[test]
    fn alr_detector_follows_libwebrtc() {
        let mut d = AlrDetector::new(FieldTrials::default().alr_detector_parameters);
        d.set_estimated_bitrate(300_000);
        let mut ms = 1000;
        let mut send = |d: &mut AlrDetector, for_ms: i64, percent: i64| {
            for _ in 0..for_ms / 10 {
                ms += 10;
                d.on_bytes_sent(300_000 * percent * 10 / (8 * 100 * 1000), ms, Time::from_millis(ms));
            }
        };
        send(&mut d, 1000, 90);
        assert_eq!(d.started, None);
        send(&mut d, 1500, 20);
        assert!(d.started.is_some_and(|t| (Time::from_millis(2000)..Time::from_millis(3500)).contains(&t)));
        send(&mut d, 4000, 100);
        assert_eq!(d.started, None);
    }

    /// libwebrtc's ALR probe waits 5 s after the flow became application-limited
    /// (probe_controller.cc TimeForAlrProbe: max(ALR start, last probe) + 5 s),
    /// not only 5 s after the last probe. Here the flow fills a 3 Mbps link for
    /// 20 s, its last probe long past, then the encoder is capped at 1 Mbps.
    #[test]
    fn alr_probe_waits_5_s_after_the_alr_starts() {
        let app_limit = |t| DataRate::from_kbps(if t < Time::from_millis(20_000) { 50_000 } else { 1000 });
        let mut alr = vec![];
        let mut g = gcc(&[("probing", "periodic")]);
        let probes = run_hooked(&mut g, 40, &Path { app_limit, ..STEADY }, &mut |now, g| {
            alr.push((now, g.alr.detector.started));
        })
        .1;
        let capped = Time::from_millis(20_000);
        let start = alr.iter().find_map(|(t, s)| s.filter(|_| *t >= capped)).expect("no ALR once capped");
        let after: Vec<Time> = probes.into_iter().filter(|t| *t >= capped).collect();
        eprintln!("ALR from {start:?}; probe clusters after 20 s at {after:?}");
        assert!(start >= capped && start < capped + Duration::from_secs(2), "ALR from {start:?}");
        // Still the same ALR when the probe is due.
        let due = start + Duration::from_secs(5);
        assert!(alr.iter().filter(|(t, _)| (start..due).contains(t)).all(|(_, s)| *s == Some(start)));
        let first = after.first().copied();
        assert!(first.is_some_and(|p| p >= due && p < due + PROCESS_INTERVAL * 2), "first probe {first:?}");
    }

    /// Reordering, clocks going back, unknown sequence numbers, lost-only
    /// reports and zero sizes must neither panic nor force a restart.
    #[test]
    fn survives_odd_inputs() {
        let (mut g, mut rnd) = (gcc(&[("probing", "periodic")]), xorshift(7));
        for i in 0..20_000u64 {
            let (sent, packets) = odd_input(i, &mut rnd, true);
            let now = sent.send_time;
            g.on_packet_sent(now, &sent);
            let stats = ReportStats::default();
            g.on_feedback(now, &Feedback { report_time: now, received_at: now, packets, stats, ..Feedback::default() });
            g.on_timeout(now);
            while g.poll_probe().is_some() {}
            assert!((GOOG_MIN_RATE..=DataRate::from_mbps(50)).contains(&g.decision().target_rate));
        }
        assert_eq!(g.est.restarts, 0);
        // A goog_cc panic drops the instance; the next input restarts it from the last target.
        let target = g.decision().target_rate;
        g.call(|_| panic!("injected"));
        assert_eq!((g.est.restarts, g.poll_timeout()), (1, None));
        g.on_timeout(Time::from_millis(30_000));
        assert!(g.poll_timeout().is_some() && g.decision().target_rate == target);
    }
}
