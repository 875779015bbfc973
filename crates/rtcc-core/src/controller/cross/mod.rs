//! `cross`: Cross (Zhang & Yang, "Cross: A Delay Based Congestion Control
//! Method for RTP Media", arXiv 2409.10042), §V with the parameters of §VI.
//!
//! Rate-based and delay-based. The queue load B = x·(D_m − D_min) (eq. 3),
//! x the current rate, D_m the one-way-delay statistic of eq. 5 over one
//! monitor cycle and D_min = OWD_min, moves the rate up by η while B ≤ B_th
//! and down otherwise (eq. 4). In ProbeBW each decision is Algorithm 2
//! (deeper cut after an up→down turn, acceleration after k_up ups, fast
//! reduce after k_down downs) and every report runs Algorithm 3 (fast
//! bandwidth adaptation from the send and acknowledged rates); StartUp,
//! Drain and ProbeRTT come from BBR (§V). ALGORITHMS.md §10 lists the
//! constants.
//!
//! One file per stage: `monitor` (monitor cycles, rounds, eqs. 3–5),
//! `sampler` (send and acknowledged rate samples), `filter` (windowed
//! extremes, minima with an age), `rate` (Algorithm 2), `adapt`
//! (Algorithm 3), `states` (the state machine and its choices); this file
//! holds the parameters, the config and the `Controller` glue.
//!
//! Choices where the paper is silent (a value worth tuning is a parameter;
//! the states' choices are in `states`):
//! - Delays come from transport feedback: OWD = arrival (receiver clock) −
//!   send time, and RTT excludes the receiver's hold time (`Feedback::rtt`),
//!   so a report interval is not read as queueing.
//! - OWD_min (D_min) and RTT_min are minima since the last periodic
//!   ProbeRTT, which re-samples both (§V), so "the monitor time window" of
//!   D_min is the ProbeRTT interval, 5 s. A ProbeRTT started by Algorithm 3
//!   only lowers them; so does a periodic one whose samples stay above
//!   Algorithm 3's excess or that times out (`probe_rtt_timeout`): halving
//!   did not drain the queue, so those samples hold queueing delay.
//! - send_rate_m and ack_rate_m are the largest per-packet samples (BBR's
//!   delivery-rate estimation, `sampler`) of the last RTT_min, "within one
//!   RTT" (§V): RTT_min rather than the smoothed RTT, which grows with the
//!   very queue a bandwidth drop builds and would keep samples from before
//!   the drop in the window. good_put_ keeps the largest acknowledged rate
//!   of 5 s.
//! - standing_owd is the minimum OWD over the last srtt/2, Copa's standing
//!   window as mvfst keeps it (§V cites mvfst; ALGORITHMS.md §2.3); the
//!   smoothed RTT is RFC 6298's (gain 1/8).
//! - bw_lo is the flow's min_rate ("the minimum rate specified by
//!   applications", §V).
//! - The initial rate is the flow's start_rate.
//! - Pacing is at the target rate (`pacing_gain` 1): RBBR, the paper's
//!   rate-based BBR that Cross follows, sets both from one rate (Algorithm
//!   1 lines 5–6), and a faster pacer would send each frame as a burst that
//!   eq. 5's delays read as queue. Cross ran inside WebRTC (§III), so the
//!   rest is WebRTC's pacer: the rate the controller sets (goog_cc's 2.5×
//!   `kDefaultPaceMultiplier` is applied inside goog_cc, not by the pacer)
//!   and PacingController's 2 s queue-time drain (`queue_time_limit`, which
//!   §IV names). That drain acts only near 2 s of queue, so a backlog a rate
//!   cut leaves waits at the sender (docs/controllers.md gives the measure).
//! - Algorithm 3 runs in ProbeBW only (it corrects ProbeBW's "small
//!   amplitude", §V); a reset starts a new monitor epoch, since the one
//!   under way measured the rate before it.
//! - The rate never falls below min_rate nor `FLOOR`: MIMD from zero stays
//!   at zero.

mod adapt;
mod filter;
mod monitor;
mod rate;
mod sampler;
mod states;
#[cfg(test)]
mod tests;

use super::{
    check_positive_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo,
    Params, SentPacket, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::{Feedback, PacketResult};
use crate::units::{DataRate, DataSize, Duration, Time};

use filter::{MinStamp, Windowed};
use monitor::{Monitor, Rounds};
use rate::RateAdjust;
use sampler::Sampler;
use states::ProbeRtt;

pub use adapt::Thresholds;
pub use monitor::Action;
pub use rate::Gains;
pub use states::Mode;

/// η = 0.05 (§V, Algorithm 2 lines 1–2).
const ETA: Param<f64> =
    Param::number("eta", 0.05, 0.0, 0.5, "η: MIMD step, rate ×(1±η) per decision (eq. 4, Alg. 2 lines 1-2)")
        .above_min();
/// B_th = 2·MTU (§VI).
const B_TH: Param<f64> = Param::number(
    "b_th",
    2.0,
    0.0,
    1000.0,
    "B_th in MTUs: queue load above it turns the rate down (eq. 4; §VI: 2 MTU)",
);
/// numerator/denominator = 1/4 (§VI): the lower quartile, though §V calls
/// OWD_m the median.
const QUANTILE: Param<f64> = Param::number(
    "quantile",
    0.25,
    0.0,
    1.0,
    "numerator/denominator of eq. 5: OWD_m = sorted delays[n·quantile] (§VI: 1/4)",
);
/// k_up = k_down = 3 (§VI).
const K_UP: Param<u32> =
    Param::integer("k_up", 3, 0, 1000, "ups in a row beyond which the rate accelerates (Alg. 2 line 18; §VI: 3)");
const K_DOWN: Param<u32> =
    Param::integer("k_down", 3, 0, 1000, "downs in a row beyond which the cut is d (Alg. 2 line 29; §VI: 3)");
/// 200 kbps (§V).
const LIMIT: Param<DataRate> = Param::rate(
    "limit",
    DataRate::from_kbps(200),
    DataRate::ZERO,
    DataRate::MAX,
    "cap of the acceleration AR (Alg. 2 line 27; §V: 200 kbps)",
);
/// k = 0.125 (§V, Algorithm 2 line 34).
const K: Param<f64> =
    Param::number("k", 0.125, 0.0, 100.0, "accelerate only while OWD_m ≤ OWD_min + k·RTT_min (Alg. 2 line 34-35)");
/// d = 0.85 (§V, Algorithm 2 line 30).
const D: Param<f64> =
    Param::number("d", 0.85, 0.0, 1.0, "fast reduce gain after more than k_down downs (Alg. 2 line 30)").above_min();
const ACCELERATION: Param<bool> =
    Param::flag("acceleration", true, "additive acceleration AR after more than k_up ups (Alg. 2 lines 18-28, 35-36)");
const FAST_REDUCE: Param<bool> =
    Param::flag("fast_reduce", true, "cut by d after more than k_down downs (Alg. 2 lines 29-32)");
const REVERSAL_REDUCE: Param<bool> = Param::flag(
    "reversal_reduce",
    true,
    "cut by ε = (1-η)/(1+η) when the direction turns from up to down (Alg. 2 line 5)",
);
const FAST_ADAPTATION: Param<bool> =
    Param::flag("fast_adaptation", true, "reset the rate on a sudden bandwidth drop (Algorithm 3)");
/// ratio = 0.75 (§V, Algorithm 3 line 5).
const RATIO: Param<f64> =
    Param::number("ratio", 0.75, 0.0, 1.0, "a drop is ack_rate_m < ratio·send_rate_m (Alg. 3 line 5)").above_min();
/// β = 0.75 (§V, Algorithm 3 lines 12, 15).
const BETA: Param<f64> =
    Param::number("beta", 0.75, 0.0, 1.0, "β: the reset keeps β of the acknowledged rate (Alg. 3 lines 12, 15)")
        .above_min();
/// f = 0.25 (§V, Algorithm 3 line 2).
const F: Param<f64> =
    Param::number("f", 0.25, 0.0, 100.0, "act once standing OWD > OWD_min + f·RTT_min (Alg. 3 lines 2, 4)");
/// m = 2.0 (§V, Algorithm 3 line 3).
const M: Param<f64> = Param::number(
    "m",
    2.0,
    0.0,
    100.0,
    "standing OWD > OWD_min + m·RTT_min resets to ack_rate_m and enters ProbeRTT (Alg. 3 lines 3, 8-10)",
);
/// 5 s (§V: good_put_ "samples the maximum delivered rate within 5 seconds").
const GOODPUT_WINDOW: Param<Duration> = Param::duration(
    "goodput_window",
    Duration::from_secs(5),
    Duration::from_millis(100),
    Duration::from_secs(3600),
    "window of the good_put_ max filter (Alg. 3 line 6; §V: 5 s)",
);
/// Two rounds (§V).
const HOLD_ROUNDS: Param<u32> =
    Param::integer("hold_rounds", 2, 0, 1000, "rounds Algorithm 3 rests after a reset (§V: two)");
const PROBE_RTT: Param<bool> =
    Param::flag("probe_rtt", true, "halve the rate to re-sample RTT_min and OWD_min (§V ProbeRTT)");
/// 5 s (§V).
const PROBE_RTT_INTERVAL: Param<Duration> = Param::duration(
    "probe_rtt_interval",
    Duration::from_secs(5),
    Duration::from_millis(100),
    Duration::from_secs(3600),
    "ProbeRTT once RTT_min has not been lowered for this long (§V: 5 s)",
);
/// ½ (§V: "the rate is cut by half").
const PROBE_RTT_GAIN: Param<f64> =
    Param::number("probe_rtt_gain", 0.5, 0.0, 1.0, "rate in ProbeRTT, fraction of cur_rate (§V: half)").above_min();
/// BBR's 200 ms (draft-cardwell-iccrg-bbr §4.3.5, ProbeRTTDuration); §V
/// gives none.
const PROBE_RTT_DURATION: Param<Duration> = Param::duration(
    "probe_rtt_duration",
    Duration::from_millis(200),
    Duration::ZERO,
    Duration::from_secs(60),
    "shortest ProbeRTT, also lasting until a packet sent in it is reported (BBR's 200 ms; paper silent)",
);
/// Longest ProbeRTT: 1 s is five times its 200 ms; a queue that keeps
/// ProbeRTT's packets from being reported that long did not drain at half
/// the rate, and the old minima stay (paper silent).
const PROBE_RTT_TIMEOUT: Param<Duration> = Param::duration(
    "probe_rtt_timeout",
    Duration::from_secs(1),
    Duration::ZERO,
    Duration::from_secs(60),
    "longest ProbeRTT; after it the minima keep their old values (paper silent)",
);
const STARTUP: Param<bool> = Param::flag("startup", true, "begin in StartUp (§V); false = ProbeBW from the start rate");
/// BBR's high gain 2/ln 2 (draft §4.3.2.1); §V: "similar to BBR".
const STARTUP_GAIN: Param<f64> = Param::number(
    "startup_gain",
    2.0 / std::f64::consts::LN_2,
    1.0,
    10.0,
    "StartUp rate per round = gain × largest delivered rate (BBR's 2/ln 2; paper: 'similar to BBR')",
);
/// Three rounds (§V).
const STARTUP_ROUNDS: Param<u32> = Param::integer(
    "startup_rounds",
    3,
    1,
    1000,
    "StartUp ends after this many rounds in a row with B > B_th (§V: three)",
);
/// BBR's drain gain ln 2/2 (draft §4.3.3); §V gives none.
const DRAIN_GAIN: Param<f64> = Param::number(
    "drain_gain",
    std::f64::consts::LN_2 / 2.0,
    0.0,
    1.0,
    "Drain sends at gain × the largest delivered rate until B ≤ B_th (BBR's ln 2/2; paper silent)",
)
.above_min();
/// RBBR sets pacing and target from one rate (Algorithm 1 lines 5–6).
const PACING_GAIN: Param<f64> = Param::number(
    "pacing_gain",
    1.0,
    1.0,
    10.0,
    "pacing rate = gain × target rate (1: as RBBR, Alg. 1 lines 5-6; paper silent for Cross)",
);

pub const PARAMS: &[ParamInfo] = &[
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
    ETA.info(),
    B_TH.info(),
    QUANTILE.info(),
    K_UP.info(),
    K_DOWN.info(),
    LIMIT.info(),
    K.info(),
    D.info(),
    ACCELERATION.info(),
    FAST_REDUCE.info(),
    REVERSAL_REDUCE.info(),
    FAST_ADAPTATION.info(),
    RATIO.info(),
    BETA.info(),
    F.info(),
    M.info(),
    GOODPUT_WINDOW.info(),
    HOLD_ROUNDS.info(),
    PROBE_RTT.info(),
    PROBE_RTT_INTERVAL.info(),
    PROBE_RTT_GAIN.info(),
    PROBE_RTT_DURATION.info(),
    PROBE_RTT_TIMEOUT.info(),
    STARTUP.info(),
    STARTUP_GAIN.info(),
    STARTUP_ROUNDS.info(),
    DRAIN_GAIN.info(),
    PACING_GAIN.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "cross",
    summary: "Cross (arXiv 2409.10042): MIMD on the one-way-delay queue load x·(D_m−D_min) vs 2 MTU, \
              fast bandwidth adaptation, BBR's states",
    params: PARAMS,
    create,
    receiver: None,
    // Counting the pacer queue, as rtcc's Cross results were measured
    // (libwebrtc's WebRTC-AddPacingToCongestionWindowPushback trial).
    pushback: crate::controller::Pushback::WithPacer,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

/// Lowest rate whatever min_rate says: MIMD from zero stays at zero.
const FLOOR: DataRate = DataRate::from_kbps(4);
/// Smoothed-RTT gain (RFC 6298 α = 1/8), for the standing window.
const SRTT_GAIN: f64 = 1.0 / 8.0;
/// Delays kept for one round's statistic: a round at several Gbps.
const MAX_ROUND_SAMPLES: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossConfig {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// The flow's packet size: B_th's unit and StartUp's smallest window.
    pub mtu: DataSize,
    /// B_th in bytes (`b_th` MTUs of the flow).
    pub b_th: DataSize,
    pub quantile: f64,
    pub gains: Gains,
    pub fast_adaptation: bool,
    pub thresholds: Thresholds,
    pub goodput_window: Duration,
    pub hold_rounds: u32,
    pub probe_rtt: bool,
    pub probe_rtt_interval: Duration,
    pub probe_rtt_gain: f64,
    pub probe_rtt_duration: Duration,
    pub probe_rtt_timeout: Duration,
    pub startup: bool,
    pub startup_gain: f64,
    pub startup_rounds: u32,
    pub drain_gain: f64,
    pub pacing_gain: f64,
}

impl CrossConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let min_rate = p.get_or(&MIN_RATE, ctx.min_rate)?.max(FLOOR);
        let max_rate = p.get_or(&MAX_RATE, ctx.max_rate)?;
        check_positive_bounds(min_rate, max_rate)?;
        // Alg. 3 lines 2-4: the reset at m·RTT_min is the stronger reaction
        // to the excess f·RTT_min first acts on.
        ConfigError::check_order("f", p.get(&F)?, "m", p.get(&M)?)?;
        // Consistency: ProbeRTT's shortest stay within its longest.
        ConfigError::check_order(
            "probe_rtt_duration",
            p.get(&PROBE_RTT_DURATION)?,
            "probe_rtt_timeout",
            p.get(&PROBE_RTT_TIMEOUT)?,
        )?;
        Ok(CrossConfig {
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
            mtu: ctx.mtu,
            b_th: ctx.mtu.mul_f64(p.get(&B_TH)?),
            quantile: p.get(&QUANTILE)?,
            gains: Gains {
                eta: p.get(&ETA)?,
                k_up: p.get(&K_UP)?,
                k_down: p.get(&K_DOWN)?,
                limit: p.get(&LIMIT)?,
                k: p.get(&K)?,
                d: p.get(&D)?,
                acceleration: p.get(&ACCELERATION)?,
                fast_reduce: p.get(&FAST_REDUCE)?,
                reversal_reduce: p.get(&REVERSAL_REDUCE)?,
            },
            fast_adaptation: p.get(&FAST_ADAPTATION)?,
            thresholds: Thresholds { ratio: p.get(&RATIO)?, beta: p.get(&BETA)?, f: p.get(&F)?, m: p.get(&M)? },
            goodput_window: p.get(&GOODPUT_WINDOW)?,
            hold_rounds: p.get(&HOLD_ROUNDS)?,
            probe_rtt: p.get(&PROBE_RTT)?,
            probe_rtt_interval: p.get(&PROBE_RTT_INTERVAL)?,
            probe_rtt_gain: p.get(&PROBE_RTT_GAIN)?,
            probe_rtt_duration: p.get(&PROBE_RTT_DURATION)?,
            probe_rtt_timeout: p.get(&PROBE_RTT_TIMEOUT)?,
            startup: p.get(&STARTUP)?,
            startup_gain: p.get(&STARTUP_GAIN)?,
            startup_rounds: p.get(&STARTUP_ROUNDS)?,
            drain_gain: p.get(&DRAIN_GAIN)?,
            pacing_gain: p.get(&PACING_GAIN)?,
        })
    }
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Cross::new(CrossConfig::from_params(p, ctx)?)))
}

pub struct Cross {
    cfg: CrossConfig,
    mode: Mode,
    /// cur_rate_ (x(t) of eqs. 3–4).
    cur_rate: DataRate,
    /// StartUp has ended: ProbeRTT returns to ProbeBW.
    startup_done: bool,
    rtt_min: MinStamp,
    owd_min: MinStamp,
    srtt: Option<Duration>,
    /// Minimum OWD over srtt/2 (standing_owd of Algorithm 3).
    standing: Windowed<Duration>,
    sampler: Sampler,
    /// send_rate_m and ack_rate_m: maxima over one RTT_min.
    send_max: Windowed<DataRate>,
    ack_max: Windowed<DataRate>,
    /// good_put_: the largest acknowledged rate over `goodput_window`.
    goodput: Windowed<DataRate>,
    monitor: Monitor,
    rounds: Rounds,
    /// One-way delays reported in the current round (StartUp and Drain).
    round_owd: Vec<Duration>,
    next_seq: u64,
    adjust: RateAdjust,
    /// Algorithm 3 rests until this round.
    held_until: u64,
    /// Rounds in a row with B > B_th, in StartUp.
    loaded_rounds: u32,
    probe: Option<ProbeRtt>,
    // The latest values, for the time series.
    last_owd_m: Option<Duration>,
    last_b: Option<f64>,
    verdict: Option<adapt::Verdict>,
    decisions: u32,
    adaptations: u32,
    probe_rtts: u32,
}

impl Cross {
    pub fn new(cfg: CrossConfig) -> Self {
        let mut c = Cross {
            mode: Mode::Startup,
            cur_rate: cfg.start_rate,
            startup_done: !cfg.startup,
            rtt_min: MinStamp::default(),
            owd_min: MinStamp::default(),
            srtt: None,
            standing: Windowed::min(),
            sampler: Sampler::default(),
            send_max: Windowed::max(),
            ack_max: Windowed::max(),
            goodput: Windowed::max(),
            monitor: Monitor::default(),
            rounds: Rounds::default(),
            round_owd: Vec::new(),
            next_seq: 0,
            adjust: RateAdjust::default(),
            held_until: 0,
            loaded_rounds: 0,
            probe: None,
            last_owd_m: None,
            last_b: None,
            verdict: None,
            decisions: 0,
            adaptations: 0,
            probe_rtts: 0,
            cfg,
        };
        if !cfg.startup {
            c.enter_probe_bw(Time::ZERO);
        }
        c
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// cur_rate_: the rate ProbeBW regulates (Drain and ProbeRTT send a
    /// fraction of it).
    pub fn cur_rate(&self) -> DataRate {
        self.cur_rate
    }

    fn clamp(&self, r: DataRate) -> DataRate {
        r.clamp(self.cfg.min_rate, self.cfg.max_rate)
    }

    fn b_th(&self) -> f64 {
        self.cfg.b_th.bytes() as f64
    }

    /// The rate sent now.
    fn sending_rate(&self) -> DataRate {
        let r = match self.mode {
            Mode::Startup | Mode::ProbeBw => self.cur_rate,
            Mode::Drain => self.cur_rate.mul_f64(self.cfg.drain_gain),
            Mode::ProbeRtt => self.cur_rate.mul_f64(self.cfg.probe_rtt_gain),
        };
        self.clamp(r)
    }

    /// BBR's window in StartUp and Drain, startup_gain × bw × RTT_min, at
    /// least 4 packets (Linux bbr_high_gain as cwnd gain, bbr_cwnd_min_target).
    /// The paper's RBBR drops the window only in ProbeBW (§IV); without it
    /// nothing bounds the queue StartUp builds at up to startup_gain × the
    /// bottleneck while three rounds of queue load are counted.
    fn startup_window(&self) -> Option<DataSize> {
        if !matches!(self.mode, Mode::Startup | Mode::Drain) {
            return None;
        }
        let bdp = self.goodput.get()? * self.rtt_min.get()?;
        Some(bdp.mul_f64(self.cfg.startup_gain).max(DataSize::from_bytes(4 * self.cfg.mtu.bytes())))
    }

    /// One packet acknowledged: its RTT (hold time excluded) and one-way
    /// delay feed the minima, the standing window and the rate samples.
    fn on_acked(&mut self, now: Time, p: &PacketResult, arrival: Time, rtt: Duration) {
        let owd = arrival - p.send_time;
        let srtt = self.srtt.map_or(rtt, |s| s + (rtt - s).mul_f64(SRTT_GAIN));
        self.srtt = Some(srtt);
        self.rtt_min.update(now, rtt);
        self.owd_min.update(now, owd);
        // Filters run on the virtual ACK time: when an immediate
        // acknowledgement would have come back.
        let t = p.send_time + rtt;
        self.standing.update(t, owd, srtt / 2);
        let rtt_min = self.rtt_min.get().unwrap_or(rtt);
        if let Some(s) = self.sampler.on_delivered(p.seq, p.size, arrival, rtt_min) {
            self.send_max.update(t, s.send, rtt_min);
            self.ack_max.update(t, s.ack, rtt_min);
            self.goodput.update(t, s.ack, self.cfg.goodput_window);
        }
        if self.round_owd.len() < MAX_ROUND_SAMPLES {
            self.round_owd.push(owd);
        }
        if let Some(probe) = self.probe.as_mut().filter(|pr| p.seq >= pr.start_seq) {
            probe.rtt = Some(probe.rtt.map_or(rtt, |m| m.min(rtt)));
            probe.owd = Some(probe.owd.map_or(owd, |m| m.min(owd)));
        }
    }
}

impl Controller for Cross {
    fn name(&self) -> &str {
        "cross"
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        self.next_seq = self.next_seq.max(p.seq.saturating_add(1));
        self.sampler.on_sent(p.seq, p.send_time);
        // §V: "Cross advances offset in OnSentPacket function when duration
        // exceeds RTT_min".
        self.monitor.on_sent(p.send_time, p.seq, self.rtt_min.get());
        if self.rounds.on_sent(p.send_time, self.rtt_min.get()) {
            self.on_round(now);
        }
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        // A report with no packets still runs the state checks (ProbeRTT's
        // deadline, the 5 s expiry).
        let max_seq = fb.packets.iter().map(|p| p.seq).max();
        let mut epoch = false;
        for p in &fb.packets {
            let owd = p.arrival.map(|a| a - p.send_time);
            if let (Some(arrival), Some(rtt)) = (p.arrival, fb.rtt(p)) {
                self.on_acked(now, p, arrival, rtt);
            }
            epoch |= self.monitor.on_reported(p.seq, owd);
        }
        if let Some(seq) = max_seq {
            self.sampler.forget_through(seq);
        }
        self.step(now, epoch, max_seq.unwrap_or(0));
    }

    fn decision(&self) -> Decision {
        let rate = self.sending_rate();
        let pacing = rate.mul_f64(self.cfg.pacing_gain).max(self.cfg.min_rate);
        Decision { cwnd: self.startup_window(), ..Decision::rates(rate, pacing) }
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("cur_rate_kbps", self.cur_rate.kbps_f64());
        out("target_kbps", self.sending_rate().kbps_f64());
        out("mode", f64::from(self.mode.index()));
        out("cycle", f64::from(self.monitor.offset()));
        out("rounds", self.rounds.count() as f64);
        let action = match self.adjust.last {
            Some(Action::Up) => 1.0,
            Some(Action::Down) => -1.0,
            None => 0.0,
        };
        out("action", action);
        out("num_up", f64::from(self.adjust.num_up));
        out("num_down", f64::from(self.adjust.num_down));
        out("max_rate_kbps", self.adjust.max_rate.kbps_f64());
        out("decisions", f64::from(self.decisions));
        out("adaptations", f64::from(self.adaptations));
        out("probe_rtts", f64::from(self.probe_rtts));
        if let Some(b) = self.last_b {
            out("queue_load_bytes", b);
        }
        if let Some(d) = self.last_owd_m {
            out("owd_m_ms", d.as_millis_f64());
        }
        if let (Some(d), Some(r)) = (self.owd_min.get(), self.rtt_min.get()) {
            out("owd_min_ms", d.as_millis_f64());
            out("rtt_min_ms", r.as_millis_f64());
        }
        if let Some(s) = self.srtt {
            out("srtt_ms", s.as_millis_f64());
        }
        if let Some(s) = self.standing.get() {
            out("standing_owd_ms", s.as_millis_f64());
        }
        if let (Some(s), Some(a)) = (self.send_max.get(), self.ack_max.get()) {
            out("send_rate_kbps", s.kbps_f64());
            out("ack_rate_kbps", a.kbps_f64());
        }
        if let Some(g) = self.goodput.get() {
            out("goodput_kbps", g.kbps_f64());
        }
        if let Some(v) = self.verdict {
            out("adapt", v.code());
        }
    }
}
