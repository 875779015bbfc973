//! `pibes`: PIBES, packet inter-arrival time bandwidth estimation for short
//! latency (Heimbach, Guo, Ngan & Lee, pibes.txt §III), with the parameters
//! of its evaluation (§IV).
//!
//! - Two-part frame schedule (§III-A, eq. 1): the first
//!   n_b = max(n_min, min(⌈n_f/2⌉, n_max)) packets of each n_f-packet frame
//!   leave at once, the rest paced at the estimated link bandwidth B (an
//!   inter-departure time of d), not at the video rate.
//! - Bandwidth (eqs. 2–3): an EWMA (α = 0.1) of the inter-arrival times of
//!   burst packets, d, gives B = P/d.
//! - Competition (eq. 4): the same EWMA over paced packets, d̃; a competing
//!   flow is declared while d̃ > (1 + β)·d, β = 10 %.
//! - Share (Fig. 4): s_k starts at s_max and is stepped once per encoded
//!   frame (`share.rs`); R_k = max(R_min, min(s_k·B_k, R_max)) (eq. 5).
//! - Frame size (eq. 6): F_c = ⌈R·T/P⌉·P, FEC included: `fec` (10 %, the
//!   paper's "modest amount of FEC (e.g., 10 %)") of each frame's packets
//!   are the pipeline's XOR parity, the encoder gets the rest. Eq. 7's
//!   frame-size noise belongs to the encoder model (`encoder = "noise"`,
//!   `sigma = 0.025`), as in the paper's testbed.
//! - Retransmission "as a last resort" is the flow's NACK (`nack = true`).
//!
//! Where each part runs: the paper's receiver computes d, d̃ and c and
//! returns them in its ACKs. Here the sender computes them from the
//! per-packet arrival times of each report (`estimate.rs`): the same
//! information, delayed by the report interval and read at the format's
//! resolution (RFC 8888 by default: 1/1024 s; TWCC's 250 µs with
//! `report_format = "twcc"`).
//!
//! Choices the paper leaves open, each a parameter:
//! - rtt_k is the mean RTT of frame k's packets, each without the receiver's
//!   hold time before its report (the paper's per-packet ACKs have none;
//!   RFC 8888's report timestamp gives it, TWCC does not); the FSM compares
//!   the two newest frames whose RTTs are known, at most once per frame with
//!   a new RTT.
//! - Inter-arrival gaps are scaled to the nominal packet size P (the flow's
//!   MTU) by each packet's size, since rtcc's packetizer splits frames evenly.
//! - Frames below n_min packets give no estimate (§IV-A), so a low rate could
//!   never learn that capacity came back: the frame target is at least
//!   `min_frame_packets` packets (default n_min; 0 follows the paper to the
//!   letter). At 1200 B and 30 fps this floor is 864 kbps.
//! - ⌈·⌉ in eq. 6 adds up to one packet per frame: at 4 Mbps, 30 fps and
//!   1200 B, 0.95·B rounds up to 4.03 Mbps, above the link, and the sender's
//!   queue grows without end. By default (`rounding = "carry"`) a frame is
//!   the nearest whole number of packets to R·T plus what earlier frames
//!   rounded off, so frames stay whole packets and their mean is R;
//!   `rounding = "up"` is the paper's ⌈·⌉.
//! - The parity count of a frame of N packets is round(N·f/(1 + f)), at
//!   least one, f = `fec`, with one group per parity sized so that a frame
//!   one packet longer (encoder noise) needs no extra parity.
//! - Before the first estimate B is the flow's start rate.

mod estimate;
mod share;
#[cfg(test)]
mod tests;

pub use estimate::{Ewma, FrameRtt, InterArrival, Part};
pub use share::{Mode, Share, ShareConfig};

use super::{
    rate_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FecPlan, FrameInfo,
    FrameSchedule, Param, ParamInfo, Params, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::{Feedback, PacketResult};
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

const N_MIN: Param<u16> =
    Param::integer("n_min", 3, 1, 1000, "n_min: fewest packets in a frame's burst (eq. 1; §IV-A: 3)");
const N_MAX: Param<u16> =
    Param::integer("n_max", 6, 1, 1000, "n_max: most packets in a frame's burst (eq. 1; §IV-A: 6)");
const ALPHA: Param<f64> =
    Param::number("alpha", 0.1, 0.0, 1.0, "α: EWMA gain of the inter-arrival times (eqs. 2, 4; §IV-A: 0.1)")
        .above_min();
const BETA: Param<f64> = Param::number(
    "beta",
    0.1,
    0.0,
    10.0,
    "β: paced inter-arrival above burst inter-arrival by more than this = competing flow (§III-B: 10 %)",
);
const S_MAX: Param<f64> =
    Param::number("s_max", 0.95, 0.0, 1.0, "s_max: share of the estimate used alone (§IV: 0.95)").above_min();
const S_SHARE: Param<f64> =
    Param::number("s_share", 0.8, 0.0, 1.0, "s_share: share on detecting a competing flow (§IV: 0.8)").above_min();
const S_MIN: Param<f64> =
    Param::number("s_min", 0.5, 0.0, 1.0, "s_min: lowest share while competing (§IV: 0.5; Fig. 18: s_max/N)")
        .above_min();
const DELTA: Param<f64> =
    Param::number("delta", 0.05, 0.0, 1.0, "Δ: per-frame rise to s_max once competition ends (§IV: 0.05)");
const DELTA_UP: Param<f64> =
    Param::number("delta_up", 0.01, 0.0, 1.0, "Δ+: per-frame rise towards s_share as the RTT falls (§IV: 0.01)");
const DELTA_DOWN: Param<f64> =
    Param::number("delta_down", 0.05, 0.0, 1.0, "Δ−: per-frame fall towards s_min as the RTT rises (§IV: 0.05)");
const FEC: Param<f64> = Param::number(
    "fec",
    0.1,
    0.0,
    0.9,
    "share of each frame's packets sent as XOR parity, inside the frame budget (§III-B: ~10 %); 0 = no FEC",
);
const ROUNDING: Param<&'static str> = Param::choice(
    "rounding",
    "carry",
    &["carry", "up"],
    "frame size in whole packets: nearest, carrying the remainder (mean = R), or eq. 6's ceiling",
);
const MIN_FRAME_PACKETS: Param<u16> = Param::integer(
    "min_frame_packets",
    3,
    0,
    1000,
    "fewest media packets per frame, so frames keep feeding the estimator (0 = eq. 6 alone)",
);

pub const PARAMS: &[ParamInfo] = &[
    N_MIN.info(),
    N_MAX.info(),
    ALPHA.info(),
    BETA.info(),
    S_MAX.info(),
    S_SHARE.info(),
    S_MIN.info(),
    DELTA.info(),
    DELTA_UP.info(),
    DELTA_DOWN.info(),
    FEC.info(),
    ROUNDING.info(),
    MIN_FRAME_PACKETS.info(),
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "pibes",
    summary: "PIBES: burst-then-paced frames, bandwidth from burst inter-arrivals, competition-aware share",
    params: PARAMS,
    create,
    receiver: None,
    pushback: crate::controller::Pushback::Off,
    needs_arrivals: true,
    // §III: the receiver returns ACKs, so rtt_k holds no report wait. Of the
    // wire formats only RFC 8888 says how long each packet waited (§3.1:
    // report timestamp and arrival time offsets); TWCC does not.
    report_format: crate::feedback::ReportFormat::Rfc8888,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PibesConfig {
    pub n_min: u16,
    pub n_max: u16,
    pub alpha: f64,
    pub beta: f64,
    pub share: ShareConfig,
    pub fec: f64,
    /// Eq. 6's ⌈·⌉ (`true`) or nearest with carry.
    pub round_up: bool,
    pub min_frame_packets: u16,
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// P: the nominal packet size (the flow's MTU).
    pub packet: DataSize,
    /// T: the frame interval.
    pub frame_interval: Duration,
}

impl PibesConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let (n_min, n_max) = (p.get(&N_MIN)?, p.get(&N_MAX)?);
        ConfigError::check_order("n_min", n_min, "n_max", n_max)?;
        let share = ShareConfig {
            s_max: p.get(&S_MAX)?,
            s_share: p.get(&S_SHARE)?,
            s_min: p.get(&S_MIN)?,
            delta: p.get(&DELTA)?,
            delta_up: p.get(&DELTA_UP)?,
            delta_down: p.get(&DELTA_DOWN)?,
        };
        // Fig. 18 sets s_min = s_max/N; s_min may exceed s_share only if
        // it also caps it, which the FSM does not define.
        ConfigError::check_order("s_min", share.s_min, "s_share", share.s_share)?;
        ConfigError::check_order("s_share", share.s_share, "s_max", share.s_max)?;
        let (min_rate, max_rate) = rate_bounds(p, ctx)?;
        Ok(PibesConfig {
            n_min,
            n_max,
            alpha: p.get(&ALPHA)?,
            beta: p.get(&BETA)?,
            share,
            fec: p.get(&FEC)?,
            round_up: p.get(&ROUNDING)? == "up",
            min_frame_packets: p.get(&MIN_FRAME_PACKETS)?,
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
            packet: ctx.mtu.max(DataSize::from_bytes(1)),
            frame_interval: ctx.frame_interval.max(Duration::from_micros(1)),
        })
    }

    fn schedule(&self) -> FrameSchedule {
        FrameSchedule::HalfBurst { min: self.n_min, max: self.n_max }
    }

    /// Eq. 1 as the estimator reads it: which part a packet left in; `None`
    /// for other packets and for frames under n_min packets, which §IV-A
    /// leaves out of the estimate.
    pub fn part(&self, p: &PacketResult) -> Option<Part> {
        if p.kind != PacketKind::Media || !p.pos.is_frame() || p.pos.count < self.n_min {
            return None;
        }
        Some(if p.pos.index < self.schedule().burst_packets(p.pos.count) { Part::Burst } else { Part::Paced })
    }

    /// Eq. 6: packets in the next frame for rate R, with `carry` bytes
    /// rounded off earlier frames (ignored by ⌈·⌉).
    pub fn frame_packets(&self, rate: DataRate, carry: f64) -> u64 {
        let x = (rate * self.frame_interval).bytes() as f64 / self.packet.bytes() as f64;
        let n = if self.round_up { x.ceil() } else { (x + carry / self.packet.bytes() as f64).round() };
        n.max(1.0) as u64
    }

    /// A frame of `n` packets split into (media, parity), media at least
    /// `min_frame_packets`.
    pub fn split(&self, n: u64) -> (u64, u64) {
        let parity = if self.fec > 0.0 { ((n as f64 * self.fec / (1.0 + self.fec)).round() as u64).max(1) } else { 0 };
        let media = n.saturating_sub(parity).max(1).max(u64::from(self.min_frame_packets));
        (media, parity)
    }

    /// Media packets per parity packet for `media` packets and `parity`
    /// parities: one more media packet still fits the same parity count.
    pub fn fec_group(media: u64, parity: u64) -> u16 {
        match parity {
            0 => 0,
            p => (media + 1).div_ceil(p).min(u64::from(u16::MAX)) as u16,
        }
    }
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Pibes::new(PibesConfig::from_params(p, ctx)?)))
}

pub struct Pibes {
    cfg: PibesConfig,
    est: InterArrival,
    rtt: FrameRtt,
    share: Share,
    /// `FrameRtt::finished` at the last FSM step.
    used: u64,
    /// B_k (eq. 3); the start rate until the first burst sample.
    estimate: DataRate,
    measured: bool,
    /// R_k (eq. 5), and F_c (eq. 6) as media and parity packets.
    rate: DataRate,
    frame: (u64, u64),
    /// Bytes the frames so far were short of R·T (`rounding = "carry"`).
    carry: f64,
    decision: Decision,
}

impl Pibes {
    pub fn new(cfg: PibesConfig) -> Self {
        let mut p = Pibes {
            cfg,
            est: InterArrival::new(cfg.alpha, cfg.beta, cfg.packet),
            rtt: FrameRtt::default(),
            share: Share::new(cfg.share),
            used: 0,
            estimate: cfg.start_rate,
            measured: false,
            rate: cfg.start_rate,
            frame: (0, 0),
            carry: 0.0,
            decision: Decision::default(),
        };
        p.update();
        p
    }

    pub fn share(&self) -> &Share {
        &self.share
    }

    pub fn estimate(&self) -> Option<DataRate> {
        self.measured.then_some(self.estimate)
    }

    pub fn competing(&self) -> bool {
        self.est.competing()
    }

    /// Eqs. 5–6 and the schedule from the current B and s.
    fn update(&mut self) {
        let c = &self.cfg;
        self.rate = self.estimate.mul_f64(self.share.get()).clamp(c.min_rate, c.max_rate);
        let (media, parity) = c.split(c.frame_packets(self.rate, self.carry));
        self.frame = (media, parity);
        let t = c.frame_interval;
        let total = DataRate::from_size_per(DataSize::from_bytes((media + parity) * c.packet.bytes()), t);
        self.decision = Decision {
            target_rate: DataRate::from_size_per(DataSize::from_bytes(media * c.packet.bytes()), t),
            // §III-A: paced at the estimated link bandwidth, not the video
            // rate; never below the frames' own rate (R_min may exceed s·B).
            pacing_rate: self.estimate.max(total),
            schedule: c.schedule(),
            fec: Some(FecPlan { group: PibesConfig::fec_group(media, parity) }),
            ..Decision::default()
        };
    }

    /// Bytes per frame the current decision sends, media and parity.
    fn frame_bytes(&self) -> f64 {
        ((self.frame.0 + self.frame.1) * self.cfg.packet.bytes()) as f64
    }
}

impl Controller for Pibes {
    fn name(&self) -> &str {
        "pibes"
    }

    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        for p in &fb.packets {
            self.est.on_packet(p, self.cfg.part(p));
        }
        self.rtt.on_feedback(fb);
        if let Some(d) = self.est.burst().filter(|d| d.is_positive()) {
            self.estimate = DataRate::from_size_per(self.cfg.packet, d);
            self.measured = true;
        }
        self.update();
    }

    fn on_frame_encoded(&mut self, _now: Time, _frame: &FrameInfo) {
        if !self.cfg.round_up {
            let p = self.cfg.packet.bytes() as f64;
            let want = (self.rate * self.cfg.frame_interval).bytes() as f64;
            self.carry = (self.carry + want - self.frame_bytes()).clamp(-p, p);
        }
        let finished = self.rtt.finished();
        let trend = (finished > self.used).then(|| self.rtt.trend()).flatten();
        self.used = finished;
        self.share.step(self.est.competing(), trend);
        self.update();
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if self.measured {
            out("capacity_estimate_kbps", self.estimate.kbps_f64());
        }
        out("competition", if self.est.competing() { 1.0 } else { 0.0 });
        out("share", self.share.get());
        out("rate_kbps", self.rate.kbps_f64());
        out("frame_target_bytes", self.frame_bytes());
        self.est.burst().inspect(|d| out("burst_interarrival_ms", d.as_millis_f64()));
        self.est.paced().inspect(|d| out("paced_interarrival_ms", d.as_millis_f64()));
        self.rtt.latest().inspect(|d| out("frame_rtt_ms", d.as_millis_f64()));
    }
}
