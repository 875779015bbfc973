//! `burstrtc`: BurstRTC, frame-bursting congestion control (Jia, Zhang, Li &
//! Zhang, "Tackling Bit-Rate Variation of RTC through Frame-Bursting
//! Congestion Control", burstrtc.txt §III, with the implementation details
//! of §IV-A1).
//!
//! - Bandwidth sampler (§III-B, eqs. 3–6, Fig. 7; `sampler.rs`): each frame
//!   leaves as a paced part at S = Ĉ, then a burst
//!   (`FrameSchedule::PacedThenBurst`). The burst gives Ĉ (eq. 3), the paced
//!   part the rate R it got at the bottleneck (eq. 4), and eq. 5's FIFO
//!   share gives the background B̂ = S·(Ĉ/R − 1) (eq. 6); every rate is the
//!   mean of the last 10 frames' samples. §IV-A1: at least 4 packets in each
//!   part, so a frame of fewer than 8 is one part, burst for even frame ids
//!   and paced for odd ones; a burst at most 20 packets, the excess paced;
//!   otherwise two halves.
//! - Frame-size model (§III-C, eqs. 7–9; `size_model.rs`): Gaussian frame
//!   sizes, μ = W·[T, SI, TI] fitted by least squares over the last 30
//!   frames, σ² an EWMA with α = 0.8 on the previous σ² (eq. 9).
//! - Frame-delay model (§III-D, eqs. 10–12; `delay_model.rs`): D is encode →
//!   first packet received; D_i = max(D_min, D_{i−1} + (F_{i−1} + B·Δt)/C −
//!   Δt) is run from the newest measured D over the frames sent since (the
//!   feedback delay), then as a distribution over the L frames a target
//!   holds for (L = 1 by default).
//! - Target (§III-E, eq. 13; `rate.rs`): U = log T − (β/k)·Σ(E[D_i] − D_min)
//!   with β = 0.15, evaluated from T = Ĉ − B̂ down in 100 kbps steps while it
//!   increases; then T·(1 − Loss) (§IV-A1).
//! - D_min (§IV-A1): the mean of the longest symmetric run of the first-packet
//!   delays of the last 10 s (`delay_model::DMin` says how "symmetric" is
//!   read), the first frame's delay at the start.
//! - No congestion window; frames leave whole but for the paced part.
//!
//! Choices where the paper is silent, each a parameter or stated here:
//! - Eqs. 3–6 assume a link that serves packets smoothly. On one that
//!   delivers in bunches (Mahimahi's opportunities, cellular TTIs) a short
//!   paced part's receive span takes in the gaps between bunches, so R reads
//!   below Ĉ and eq. 6 reports background on an idle link (alone on
//!   Verizon-LTE-short: B̂ ≈ 2.5 Mbps of 4.9); where every burst lands in
//!   one bunch no Ĉ is measured at all. The paper is silent on this.
//!   Eq. 5 also needs the paced part to leave faster than the path has room
//!   for; when it does not (a pacer waking on a 1 ms grid rounds each gap
//!   up: 1137 B at 4 Mbps leave every 3 ms, S = 3.0 Mbps), R = S and eq. 6
//!   gives B̂ = Ĉ − S on an idle link.
//! - S, the paced part's rate in eqs. 4–6, is measured from the send times
//!   of the part (what the pacer did), where the paper sets it to Ĉ; the
//!   pacing rate given is Ĉ. R uses the same packets' arrivals.
//! - Eq. 3's rt_1, rt_2 and eq. 4's rt_0, rt_1 are read as the first and last
//!   arrivals of each part: each part is measured as a packet train of its
//!   own (eq. 1's shape), so neither span includes the gap between them.
//! - A part with a lost packet, or received at one instant, gives no
//!   sample. "The past 10 frames" is read
//!   as the 10 newest frames that gave that sample (`window`); with small
//!   frames alternating, Ĉ and R then each cover 20 frames. The average is
//!   the frames' bytes over their summed spans (`average = "time"`), not the
//!   mean of their rates (`"rate"`): with per-packet delay jitter after the
//!   bottleneck a squeezed span gives a huge rate that dominates a mean of
//!   rates (5 ms of jitter on 4 Mbps: capacity error 33 % by rate, 10 % by
//!   time); without jitter the two agree within a percent.
//! - Until the first Ĉ, every frame is one burst, and until Ĉ and B̂ are
//!   both measured the target is the start rate, at least two packets per
//!   frame ((MTU + 1 B)/Δt, 288 kbps at 1200 B and 30 fps) so that the first
//!   frame gives Ĉ: the paper establishes "no initial values", and a paced
//!   part before any Ĉ would not be paced at an estimate (eq. 6 would read
//!   the start rate's shortfall as background), nor would T = Ĉ − B̂ mean
//!   anything before B̂ (a newcomer would claim the whole link).
//! - `min_frame_packets` (2) keeps the target at that many MTU packets per
//!   frame (288 kbps at 1200 B and 30 fps). The paper states no floor, but
//!   §IV-A1 makes every frame a probe, and a one-packet frame gives neither
//!   eq. 3 nor eq. 4: with every frame that small Ĉ and B̂ never change
//!   again, and nothing else in BurstRTC measures. Without it (0) the second
//!   of Table I's flows stayed at 40–250 kbps and a flow alone on a Mahimahi
//!   LTE trace at 30 kbps.
//! - T in eq. 8 is the target the frame was encoded at; the next frame's SI
//!   and TI are not known when its target is chosen, so μ uses the newest
//!   frame's. Key frames stay out of the fit and of σ (the paper's encoder
//!   used intra refresh; a key frame is not the target's doing) but their
//!   size is in the delay recursion. When SI and TI are 0 (unknown) or
//!   collinear with T, or the fit gives W_T ≤ 0, the fit is on T alone
//!   (`size_model.rs`); `size_model = "target"` always fits T alone.
//! - Eq. 13's log base is unstated: `log_base` (default e, the `log()` of
//!   C's libm that the paper's Razor-based implementation would call; base
//!   10 shrinks the rate term 2.3-fold, as a larger β would: −6 % bit-rate
//!   alone on 4 Mbps). The k frames summed are the L frames the target
//!   holds for, each E[D_i] the delay of the frame after the i-th; the
//!   distribution is on a grid of `delay_bin` (at least σ/(8·Ĉ)).
//! - A new target is chosen once every L frames (§III-D2: "at fixed
//!   intervals larger than L frames"), from what is known until the first
//!   frame of the interval is encoded (with L = 1, at every frame and
//!   report).
//! - Loss: bytes of the media packets reported lost over those reported,
//!   over the last `loss_frames` frames (30, the fit's window: about a
//!   second, enough packets to see a few percent of loss).
//! - D_min's symmetry test is "sample skewness ≤ `d_min_skew` (0)" on the
//!   sorted delays (`delay_model::DMin`).
//! - The model's frame sizes and Ĉ, B̂ are in the packets' bytes as the
//!   sender counts them; D uses the receiver's clock for the arrival.

mod delay_model;
mod frames;
mod rate;
mod sampler;
mod size_model;
#[cfg(test)]
mod tests;

pub use delay_model::{normal_cdf, step, symmetric_mean, DMin, DelayDist};
pub use frames::{FrameLog, Reported, Seen, Settled};
pub use rate::{expected_delays, search, utility, utility_base, Loss, Network};
pub use sampler::{background, train, Average, Sampler, Train};
pub use size_model::{least_squares, SizeConfig, SizeModel};

use std::collections::VecDeque;

use super::{
    rate_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FrameInfo, FrameSchedule, Param,
    ParamInfo, Params, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::units::{DataRate, DataSize, Duration, Time};

const BETA: Param<f64> =
    Param::number("beta", 0.15, 0.0, 1e6, "β: weight of the frame delay (per ms) in the utility (eq. 13: 0.15)");
const STEP: Param<DataRate> = Param::rate(
    "step",
    DataRate::from_kbps(100),
    DataRate::ZERO,
    DataRate::MAX,
    "step of the target search down from Ĉ − B̂ (§III-E: 100 kbps)",
)
.above_min();
const WINDOW: Param<u32> = Param::integer(
    "window",
    10,
    1,
    100_000,
    "frames whose samples are averaged into Ĉ, S and R (§III-B: the past 10 frames)",
);
const FIT_FRAMES: Param<u32> =
    Param::integer("fit_frames", 30, 3, 100_000, "frames in the least-squares fit of μ = W·[T, SI, TI] (§III-C: 30)");
const SIGMA_ALPHA: Param<f64> =
    Param::number("sigma_alpha", 0.8, 0.0, 1.0, "α: weight of the previous σ² in σ's moving average (eq. 9: 0.8)");
const L: Param<u32> = Param::integer(
    "l",
    1,
    1,
    10_000,
    "L: frames a target holds for and whose delays the utility sums (§III-D2: 1; 30 for Fig. 11)",
);
const MIN_PART: Param<u16> = Param::integer(
    "min_part",
    4,
    1,
    10_000,
    "fewest packets in a paced or burst part; smaller frames alternate burst and paced (§IV-A1: 4)",
);
const MAX_BURST: Param<u16> =
    Param::integer("max_burst", 20, 1, 10_000, "most packets in a burst part, the excess paced (§IV-A1: 20)");
const D_MIN_WINDOW: Param<Duration> = Param::duration(
    "d_min_window",
    Duration::from_secs(10),
    Duration::ZERO,
    Duration::MAX,
    "first-packet delays D_min is estimated from (§IV-A1: a 10-second frame delay queue)",
)
.above_min();
const D_MIN_SKEW: Param<f64> = Param::number(
    "d_min_skew",
    0.0,
    -100.0,
    100.0,
    "largest skewness of the sorted delays still read as D_min's symmetric distribution (choice: 0)",
);
const LOSS_FRAMES: Param<u32> = Param::integer(
    "loss_frames",
    30,
    1,
    100_000,
    "frames the loss ratio is counted over (§IV-A1: \"several frames\"; choice: 30, the fit's window)",
);
const DELAY_BIN: Param<Duration> = Param::duration(
    "delay_bin",
    Duration::from_millis(1),
    Duration::ZERO,
    Duration::from_secs(1),
    "grid step of the frame-delay distribution, widened to σ/(8·Ĉ) when that is larger (eqs. 11–12; choice)",
)
.above_min();
const MIN_FRAME_PACKETS: Param<u16> = Param::integer(
    "min_frame_packets",
    2,
    0,
    1000,
    "the target is at least this many MTU packets per frame, so frames keep giving samples (§IV-A1 samples every frame; 0 = none)",
);
const LOG_BASE: Param<&'static str> = Param::choice(
    "log_base",
    "e",
    &["e", "2", "10"],
    "base of eq. 13's log T (unstated; e: C's log(), which the paper's Razor-based C implementation would call)",
);
const AVERAGE: Param<&'static str> = Param::choice(
    "average",
    "time",
    &["rate", "time"],
    "the past frames' average of Ĉ, S and R (§III-B): the mean of their rates, or their bytes over their time",
);
const SIZE_MODEL: Param<&'static str> = Param::choice(
    "size_model",
    "content",
    &["content", "target"],
    "μ = W·[T, SI, TI] (eq. 8; T alone when SI/TI are unknown) or μ = w·T always",
);

pub const PARAMS: &[ParamInfo] = &[
    BETA.info(),
    STEP.info(),
    WINDOW.info(),
    AVERAGE.info(),
    FIT_FRAMES.info(),
    SIGMA_ALPHA.info(),
    L.info(),
    MIN_PART.info(),
    MAX_BURST.info(),
    D_MIN_WINDOW.info(),
    D_MIN_SKEW.info(),
    LOSS_FRAMES.info(),
    DELAY_BIN.info(),
    SIZE_MODEL.info(),
    MIN_FRAME_PACKETS.info(),
    LOG_BASE.info(),
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "burstrtc",
    summary: "BurstRTC: paced-then-burst frames sample capacity and background, Gaussian frame sizes from \
              target/SI/TI, target maximising log T − β·frame delay",
    params: PARAMS,
    create,
    receiver: None,
    pushback: crate::controller::Pushback::Off,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(BurstRtc::new(BurstRtcConfig::from_params(p, ctx)?)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BurstRtcConfig {
    pub beta: f64,
    pub step: DataRate,
    pub window: usize,
    pub average: Average,
    pub size: SizeConfig,
    pub l: usize,
    pub min_part: u16,
    pub max_burst: u16,
    pub d_min_window: Duration,
    pub d_min_skew: f64,
    pub loss_frames: usize,
    pub delay_bin: Duration,
    pub min_frame_packets: u16,
    /// Base of eq. 13's logarithm.
    pub log_base: f64,
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// The flow's MTU: frames before the first Ĉ are at least two packets.
    pub mtu: DataSize,
    /// Δt, the encoder's frame interval.
    pub frame_interval: Duration,
}

impl BurstRtcConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let (min_part, max_burst) = (p.get(&MIN_PART)?, p.get(&MAX_BURST)?);
        if max_burst < min_part {
            return Err(ConfigError::invalid(
                "max_burst",
                format!("{max_burst} is below min_part {min_part}: a burst part would be under its minimum"),
            ));
        }
        let (min_rate, max_rate) = rate_bounds(p, ctx)?;
        Ok(BurstRtcConfig {
            beta: p.get(&BETA)?,
            step: p.get(&STEP)?,
            window: p.get(&WINDOW)? as usize,
            average: if p.get(&AVERAGE)? == "time" { Average::Time } else { Average::Rate },
            size: SizeConfig {
                frames: p.get(&FIT_FRAMES)? as usize,
                alpha: p.get(&SIGMA_ALPHA)?,
                content: p.get(&SIZE_MODEL)? == "content",
            },
            l: p.get(&L)? as usize,
            min_part,
            max_burst,
            d_min_window: p.get(&D_MIN_WINDOW)?,
            d_min_skew: p.get(&D_MIN_SKEW)?,
            loss_frames: p.get(&LOSS_FRAMES)? as usize,
            delay_bin: p.get(&DELAY_BIN)?,
            min_frame_packets: p.get(&MIN_FRAME_PACKETS)?,
            log_base: match p.get(&LOG_BASE)? {
                "2" => 2.0,
                "10" => 10.0,
                _ => std::f64::consts::E,
            },
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
            mtu: ctx.mtu.max(DataSize::from_bytes(1)),
            frame_interval: ctx.frame_interval.max(Duration::from_micros(1)),
        })
    }

    /// Δt in ms.
    fn dt_ms(&self) -> f64 {
        self.frame_interval.as_millis_f64()
    }

    /// Bytes per frame interval of a target of `kbps`.
    fn frame_bytes(&self, kbps: f64) -> f64 {
        kbps * self.dt_ms() / 8.0
    }

    /// The least target: frames of `min_frame_packets` packets at the MTU
    /// ((n − 1)·MTU + 1 B per frame), within [min_rate, max_rate].
    fn floor(&self) -> DataRate {
        let n = u64::from(self.min_frame_packets);
        let bytes = (self.mtu.bytes() * n.saturating_sub(1) + 1).min(self.mtu.bytes() * n);
        DataRate::from_size_per(DataSize::from_bytes(bytes), self.frame_interval).clamp(self.min_rate, self.max_rate)
    }

    /// The target before the first Ĉ: the start rate, frames of at least
    /// two packets so that the first one reported gives Ĉ.
    fn start_target(&self) -> DataRate {
        let two = DataRate::from_size_per(self.mtu + DataSize::from_bytes(1), self.frame_interval);
        self.start_rate.max(two).max(self.floor()).clamp(self.min_rate, self.max_rate)
    }
}

/// Frames remembered between the newest measured delay and now, at most.
const MAX_CHAIN: usize = 1024;

pub struct BurstRtc {
    cfg: BurstRtcConfig,
    log: FrameLog,
    sampler: Sampler,
    sizes: SizeModel,
    d_min: DMin,
    loss: Loss,
    /// (frame, encoded at, bytes) of the frames from the newest one with a
    /// measured first-packet delay on.
    chain: VecDeque<(u32, Time, f64)>,
    /// The newest frame with a measured first-packet delay, and D (ms).
    measured: Option<(u32, f64)>,
    /// SI and TI of the newest frame.
    content: (f64, f64),
    next_frame: u32,
    /// Frames encoded at the current target; `open` while the next frame
    /// starts a new interval of L frames, so its target may still change.
    in_interval: usize,
    open: bool,
    /// T·(1 − Loss), what the encoder is told.
    target: DataRate,
    /// The next frame's predicted q = D − D_min (ms), and E[q] of the L-th
    /// frame after it at the chosen target.
    q0: Option<f64>,
    ahead: Option<f64>,
    /// §III-D3's check (Fig. 11): (frame, predicted D, naive D) for the
    /// L-th frame of each interval, as first predicted; resolved when that
    /// frame's D is measured into |error| sums and a count.
    predictions: VecDeque<(u32, f64, f64)>,
    errors: (f64, f64, u64),
    decision: Decision,
}

impl BurstRtc {
    pub fn new(cfg: BurstRtcConfig) -> Self {
        let mut c = BurstRtc {
            cfg,
            log: FrameLog::default(),
            sampler: Sampler::new(cfg.window, cfg.average),
            sizes: SizeModel::new(cfg.size),
            d_min: DMin::new(cfg.d_min_window, cfg.d_min_skew),
            loss: Loss::new(cfg.loss_frames),
            chain: VecDeque::new(),
            measured: None,
            content: (0.0, 0.0),
            next_frame: 0,
            in_interval: 0,
            open: true,
            target: cfg.start_target(),
            q0: None,
            ahead: None,
            predictions: VecDeque::new(),
            errors: (0.0, 0.0, 0),
            decision: Decision::default(),
        };
        c.update();
        c
    }

    /// Ĉ and B̂ (eqs. 3, 6), bytes per second.
    pub fn capacity(&self) -> Option<f64> {
        self.sampler.capacity()
    }

    pub fn background(&self) -> Option<f64> {
        self.sampler.background()
    }

    pub fn d_min(&self) -> Option<f64> {
        self.d_min.get()
    }

    pub fn sizes(&self) -> &SizeModel {
        &self.sizes
    }

    pub fn loss(&self) -> f64 {
        self.loss.get()
    }

    /// The next frame's q = D − D_min (eq. 10) from the newest measured
    /// delay over the frames sent since, with capacity `c` and background
    /// `b` in bytes per ms (§III-D2's feedback delay).
    fn next_queue(&self, c: f64, b: f64) -> f64 {
        let d_min = self.d_min.get().unwrap_or(0.0);
        let mut q = self.measured.map_or(0.0, |(_, d)| (d - d_min).max(0.0));
        for (i, &(_, at, bytes)) in self.chain.iter().enumerate() {
            let dt = self.chain.get(i + 1).map_or(self.cfg.dt_ms(), |n| n.1.saturating_since(at).as_millis_f64());
            q = step(q, bytes, c, b, dt);
        }
        q
    }

    /// The model's view of the path once Ĉ and B̂ are both measured.
    fn network(&self) -> Option<Network> {
        self.sampler.paced()?;
        let c = self.sampler.capacity()? / 1000.0;
        let b = self.sampler.background()? / 1000.0;
        let q0 = self.next_queue(c, b);
        let bin = self.cfg.delay_bin.as_millis_f64();
        Some(Network { c, b, dt: self.cfg.dt_ms(), q0, frames: self.cfg.l, bin })
    }

    /// μ (eq. 8) for a target of `kbps`, with the newest frame's content.
    fn mu(&self, kbps: f64) -> f64 {
        self.sizes.mean(self.cfg.frame_bytes(kbps), self.content.0, self.content.1)
    }

    /// §III-E: the target from eq. 13, then §IV-A1's loss compensation.
    fn decide(&mut self) {
        let Some(net) = self.network() else {
            self.target = self.cfg.start_target();
            return;
        };
        let cfg = self.cfg;
        let (min, max) = (cfg.floor().kbps_f64(), cfg.max_rate.kbps_f64());
        // Ĉ − B̂ in kbps (bytes per ms × 8).
        let start = ((net.c - net.b) * 8.0).clamp(min, max);
        let sigma = self.sizes.sigma();
        let u = |t: f64| utility_base(t, cfg.beta, &expected_delays(&net, self.mu(t), sigma), cfg.log_base);
        let t = search(start, cfg.step.kbps_f64(), min, u);
        self.ahead = expected_delays(&net, self.mu(t), sigma).last().copied();
        self.predict();
        let kbps = t * (1.0 - self.loss.get());
        self.target = DataRate::from_bps_f64(kbps * 1000.0).clamp(cfg.floor(), cfg.max_rate);
    }

    /// Keeps the first prediction of D for the interval's L-th frame, beside
    /// the naive one: the newest measured D (§III-D3).
    fn predict(&mut self) {
        let (Some(q), Some(d_min), Some((_, naive))) = (self.ahead, self.d_min.get(), self.measured) else {
            return;
        };
        // `ahead` is the last of L steps from the next frame: frame next + L.
        let frame = self.next_frame.wrapping_add(self.cfg.l as u32);
        if self.predictions.back().is_some_and(|p| p.0 >= frame) {
            return;
        }
        if self.predictions.len() >= MAX_CHAIN {
            self.predictions.pop_front();
        }
        self.predictions.push_back((frame, d_min + q, naive));
    }

    /// A measured D for `frame` resolves the predictions made for it.
    fn resolve(&mut self, frame: u32, d: f64) {
        while let Some(&(f, predicted, naive)) = self.predictions.front() {
            if f > frame {
                break;
            }
            self.predictions.pop_front();
            if f == frame {
                self.errors.0 += (predicted - d).abs();
                self.errors.1 += (naive - d).abs();
                self.errors.2 += 1;
            }
        }
    }

    /// The decision from the current state: the next frame's schedule by
    /// its id (§IV-A1), paced at Ĉ (§III-B).
    fn update(&mut self) {
        self.q0 = self.network().map(|n| n.q0);
        let capacity = self.sampler.capacity().map(|c| DataRate::from_bps_f64(c * 8.0));
        let schedule = match capacity {
            None => FrameSchedule::Burst,
            Some(_) => FrameSchedule::PacedThenBurst {
                min: self.cfg.min_part,
                max: self.cfg.max_burst,
                // "Pacing odd-numbered frames and bursting even-numbered frames."
                small_burst: self.next_frame.is_multiple_of(2),
            },
        };
        let pacing = capacity.unwrap_or(self.cfg.start_rate).max(self.target).max(DataRate::from_kbps(1));
        self.decision = Decision { schedule, ..Decision::rates(self.target, pacing) };
    }

    fn on_settled(&mut self, s: &Settled) {
        self.sampler.on_frame(s);
        let (sent, received) = s.bytes();
        self.loss.on_frame(sent, received);
    }
}

impl Controller for BurstRtc {
    fn name(&self) -> &str {
        "burstrtc"
    }

    fn on_frame_encoded(&mut self, now: Time, f: &FrameInfo) {
        // The schedule the sender gave this frame: the decision as it was
        // after the previous input.
        let paced = f.packets - self.decision.schedule.burst_packets(f.packets);
        for s in self.log.on_encoded(f.frame, now, f.packets, paced) {
            self.on_settled(&s);
        }
        let bytes = f.size.bytes() as f64;
        let (si, ti) = (f64::from(f.si), f64::from(f.ti));
        if !f.key {
            let t = self.cfg.frame_bytes(self.decision.target_rate.kbps_f64());
            self.sizes.on_frame(t, si, ti, bytes);
        }
        if self.chain.len() >= MAX_CHAIN {
            self.chain.pop_front();
        }
        self.chain.push_back((f.frame, now, bytes));
        self.content = (si, ti);
        self.next_frame = f.frame.wrapping_add(1);
        self.in_interval += 1;
        self.open = self.in_interval >= self.cfg.l;
        if self.open {
            self.in_interval = 0;
            self.decide();
        }
        self.update();
    }

    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        let rep = self.log.on_feedback(fb);
        for &(frame, encoded, d) in &rep.first {
            let d = d.as_millis_f64();
            self.d_min.on_sample(encoded, d);
            self.resolve(frame, d);
            if self.measured.is_none_or(|m| frame > m.0) {
                self.measured = Some((frame, d));
            }
        }
        for s in &rep.settled {
            self.on_settled(s);
        }
        if let Some((m, _)) = self.measured {
            while self.chain.front().is_some_and(|c| c.0 < m) {
                self.chain.pop_front();
            }
        }
        if self.open {
            self.decide();
        }
        self.update();
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let kbps = |bytes_per_s: f64| bytes_per_s * 8.0 / 1000.0;
        if let (Some(c), Some(b)) = (self.sampler.capacity(), self.sampler.background()) {
            out("capacity_estimate_kbps", kbps(c));
            out("background_estimate_kbps", kbps(b));
        }
        if let Some((s, r)) = self.sampler.paced() {
            out("paced_rate_kbps", kbps(s));
            out("paced_receive_kbps", kbps(r));
        }
        let d_min = self.d_min.get();
        if let Some(d) = d_min {
            out("d_min_ms", d);
            if let Some(q) = self.q0 {
                out("predicted_delay_ms", d + q);
            }
            if let Some(q) = self.ahead {
                out("predicted_delay_ahead_ms", d + q);
            }
        }
        if let Some((_, d)) = self.measured {
            out("measured_delay_ms", d);
        }
        // Fig. 11: cumulative |predicted − measured| D of the L-th frames,
        // for the model and the naive predictor, and how many were resolved.
        let (model, naive, n) = self.errors;
        out("model_error_sum_ms", model);
        out("naive_error_sum_ms", naive);
        out("predictions_resolved", n as f64);
        out("frame_size_mu_bytes", self.mu(self.target.kbps_f64()));
        out("frame_size_sigma_bytes", self.sizes.sigma());
        out("size_model_full", if self.sizes.full() { 1.0 } else { 0.0 });
        out("loss", self.loss.get());
        out("rate_kbps", self.target.kbps_f64());
    }
}
