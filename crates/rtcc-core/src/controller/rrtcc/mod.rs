//! `rrtcc`: Receive-side Real-Time Congestion Control, the Google congestion
//! control of 2012–2013 that the FBRA paper takes as its baseline (Nagy et
//! al., MMSys 2014; fbra.txt §2: "Holmer et al. [28] … uses the
//! variation in frame inter-arrival time to detect link under and overuse.
//! The new media rate is calculated at intervals by the receiver and
//! signaled to the sender in a … TMMBR message … does not react to losses
//! less than [2 %], instead increases the rate until 10 % losses";
//! [28] = draft-alvestrand-rtcweb-congestion-03, October 2012; §5 runs it in
//! ns-2, §5.5 as Chrome).
//!
//! The paper cites the draft for the design; rrtcc takes the algorithm and
//! its constants from libwebrtc at trunk r4855 (2013-09-26), the code of the
//! Chrome of the paper's testbed (§5.5), read
//! in the HackWebRTC/webrtc mirror of the WebRTC history (ALGORITHMS.md §1.16
//! has the later draft and the 2015+ constants, which differ — see below):
//! - receiver (`receiver.rs`): `remote_bitrate_estimator_single_stream.cc`,
//!   `overuse_detector.cc` (frame grouping, the two-state Kalman filter, the
//!   over-use detector) and `video_engine/vie_remb.cc` (when a REMB goes
//!   out); (`rate.rs`) `bitrate_estimator.cc` (incoming rate) and
//!   `remote_rate_control.cc` (increase/decrease/hold);
//! - sender (this file): `bitrate_controller/send_side_bandwidth_estimation.cc`
//!   (`ShapeSimple`: the 2 %/10 % loss rule, capped by the REMB) and
//!   `bitrate_controller_impl.cc` (RTCP receiver reports feed it).
//!
//! Where each part runs. The receiver runs the estimator on every arriving
//! video packet (`ReceiverEstimator`); the estimate rides in the next report
//! as a REMB (draft-alvestrand-rmcat-remb; TMMBR in the paper's wording,
//! the same number). The sender keeps the loss-based rate As: +8 % + 1 kbps
//! at most once a second while RTCP loss ≤ 2 %, held up to 10 %, × (1 − p/2)
//! above (at most once per 300 ms + RTT, not below the TFRC rate), and never
//! above the last REMB; the target is As. So the sender ramps up at the
//! loss-based 8 %/s and the receiver's delay-based estimate caps it.
//!
//! Against the later GCC of ALGORITHMS.md §1.16 (draft-ietf-rmcat-gcc-02,
//! libwebrtc 2015+), the 2013 code differs, and rrtcc follows the 2013 code:
//! - no adaptive threshold: 25 ms on min(n, 60)·offset while no maximum is
//!   known, 12.5 ms near one (`Detector::set_region`); the adaptive γ with
//!   K_u/K_d arrived in July 2015 ("Make the BWE threshold adaptive"), with
//!   process noise lowered from (1e-10, 1e-2) to (1e-13, 1e-3) and the
//!   over-use time from 100 ms to 10 ms;
//! - groups are frames (one RTP timestamp + transmission offset), not 5 ms
//!   send-time groups; the filter is the two-state one (slope and offset);
//! - the rate controller increases by a sigmoid factor η(RTT, σ²) ∈
//!   [1.005, 1.3] per second (×3 with no known maximum, ½ near it), decreases
//!   to β·R with β = 0.9 (0.95 near the maximum), and never above 1.5·R;
//! - the loss rule increases by 8 % + 1 kbps per second, not 5 % per report.
//!
//! What rtcc's report path cannot express, and what rrtcc does instead:
//! - A REMB is handed over every second or at once on a drop below 97 % of
//!   the last one (vie_remb.cc); in 2013 it then went with the next RTCP
//!   packet (RTCP at most 1 s apart, REMB attached to each). Here it goes
//!   with the next report (every `interval` of the receiver, 50 ms by
//!   default) and only that one: a lost report loses the REMB until the next
//!   second's. The report path has no way to send an RTCP packet of its own.
//! - The receiver gets no RTT from rtcc's reports; its rate controller
//!   assumes `receiver_rtt` (libwebrtc's kDefaultRttMs, 200 ms, what it used
//!   until RTCP gave one).
//! - Reports carry transport-wide per-packet results every 50 ms; RTCP
//!   receiver reports came about once a second. The sender sums the results
//!   into one receiver report per `rr_interval` (RTCP_INTERVAL_VIDEO_MS,
//!   1 s) and runs the loss rule on those, with the RTT of the newest
//!   receiver report's LSR/DLSR (`Feedback::rtcp_rtt`).
//! - Packet sizes are whole packets (libwebrtc counted RTP payload bytes).
//!
//! Pacing: in 2013 libwebrtc had a PacedSender (2.5 × target,
//! vie_encoder.cc kPaceMultiplier), but it was off unless the application
//! turned on `video_leaky_bucket` (talk/media/webrtc/webrtcvideoengine.cc
//! defaults it to false; video_send_stream.h `pacing(false)`): every frame's
//! packets left as the packetizer made them. So by default (`pacing_factor`
//! = 0) each frame leaves as a burst and everything else (retransmissions,
//! audio) at `max_rate`, i.e. unpaced; `pacing_factor` = 2.5 runs the 2013
//! pacer as it was when turned on.

mod rate;
mod receiver;
#[cfg(test)]
mod tests;

pub use rate::{IncomingRate, Input, RcState, Region, RemoteRate};
pub use receiver::{Detector, Receiver, Remb, Usage};

use super::{
    check_positive_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FrameSchedule, Param,
    ParamInfo, Params, ReceiverEstimator, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{DataRate, Duration, Time};

const PACING_FACTOR: Param<f64> = Param::number(
    "pacing_factor",
    0.0,
    0.0,
    10.0,
    "0: no pacer, each frame leaves as a burst (2013 default); > 0: paced at this × target (2.5 = the 2013 \
     PacedSender when turned on)",
);
const RR_INTERVAL: Param<Duration> = Param::duration(
    "rr_interval",
    Duration::from_secs(1),
    Duration::from_millis(1),
    Duration::from_secs(60),
    "loss is counted over receiver reports this far apart (RTCP_INTERVAL_VIDEO_MS, 1 s)",
);
const RECEIVER_RTT: Param<Duration> = Param::duration(
    "receiver_rtt",
    Duration::from_millis(rate::DEFAULT_RTT_MS),
    Duration::ZERO,
    Duration::from_secs(10),
    "RTT the receiver's rate controller assumes (kDefaultRttMs, 200 ms; reports carry none to it)",
);

pub const PARAMS: &[ParamInfo] = &[
    START_RATE.info(),
    MIN_RATE.info(),
    MAX_RATE.info(),
    PACING_FACTOR.info(),
    RR_INTERVAL.info(),
    RECEIVER_RTT.info(),
];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "rrtcc",
    summary: "receive-side GCC of 2013 (FBRA's RRTCC baseline): frame Kalman filter and over-use detector at the \
              receiver, REMB; sender: 2 %/10 % loss rule capped by the REMB, no pacer",
    params: PARAMS,
    create,
    receiver: Some(create_receiver),
    pushback: crate::controller::Pushback::Off,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

// send_side_bandwidth_estimation.{h,cc} (r4855). Loss is RTCP's fraction
// lost in 1/256.
/// Up to 5/256 (≈ 2 %) the rate increases…
pub const LOW_LOSS_Q8: u8 = 5;
/// …up to 26/256 (≈ 10 %) it holds; above it decreases.
pub const HIGH_LOSS_Q8: u8 = 26;
/// kBWEIncreaseIntervalMs: at most one increase a second.
pub const INCREASE_INTERVAL: Duration = Duration::from_secs(1);
/// kBWEDecreaseIntervalMs: at most one decrease per 300 ms + RTT.
pub const DECREASE_INTERVAL: Duration = Duration::from_millis(300);
/// Increase: ×1.08, + 1 kbps "so that we do not get stuck".
pub const INCREASE_FACTOR: f64 = 1.08;
pub const INCREASE_BPS: u64 = 1000;
/// kLimitNumPackets: loss is not judged on fewer packets.
pub const MIN_PACKETS: u64 = 20;
/// kAvgPacketSizeBytes of the TFRC floor.
const TFRC_PACKET_BYTES: f64 = 1000.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RrtccConfig {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// 0 = no pacer.
    pub pacing_factor: f64,
    pub rr_interval: Duration,
    pub receiver_rtt: Duration,
}

impl RrtccConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let min_rate = p.get_or(&MIN_RATE, ctx.min_rate)?;
        let max_rate = p.get_or(&MAX_RATE, ctx.max_rate)?;
        check_positive_bounds(min_rate, max_rate)?;
        // Consistency: loss is counted over receiver reports, which come no
        // more often than the flow's feedback.
        let rr_interval = p.get(&RR_INTERVAL)?;
        if rr_interval < ctx.feedback_interval {
            return Err(ConfigError::invalid(
                "rr_interval",
                format!("{rr_interval} is below the flow's feedback_interval {}", ctx.feedback_interval),
            ));
        }
        Ok(RrtccConfig {
            // The loss-based rate grows from As: at zero only the +1 kbps would move it.
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate.max(DataRate::from_kbps(1)), max_rate),
            min_rate,
            max_rate,
            pacing_factor: p.get(&PACING_FACTOR)?,
            rr_interval,
            receiver_rtt: p.get(&RECEIVER_RTT)?,
        })
    }
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Rrtcc::new(RrtccConfig::from_params(p, ctx)?)))
}

fn create_receiver(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn ReceiverEstimator>, ConfigError> {
    let cfg = RrtccConfig::from_params(p, ctx)?;
    Ok(Box::new(Receiver::new(cfg.min_rate, cfg.max_rate, cfg.receiver_rtt)))
}

/// TFRC's rate (RFC 5348 §3.1, b = 1, t_RTO = 4·R, s = 1000 B) for an RTT in
/// ms and a loss in 1/255, in bps; 0 when either is 0 (CalcTFRCbps).
pub fn tfrc_bps(rtt_ms: i64, loss_q8: u8) -> u64 {
    if rtt_ms <= 0 || loss_q8 == 0 {
        return 0;
    }
    let r = rtt_ms as f64 / 1000.0;
    let p = f64::from(loss_q8) / 255.0;
    let t_rto = 4.0 * r;
    let x = TFRC_PACKET_BYTES
        / (r * (2.0 * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)));
    (x * 8.0) as u64
}

/// The sender's loss-based rate As (SendSideBandwidthEstimation, r4855), bps.
#[derive(Clone, Debug)]
pub struct LossBased {
    pub rate: u64,
    /// The last REMB; 0 = none yet.
    pub remb: u64,
    min_rate: u64,
    max_rate: u64,
    lost_q8: u64,
    expected: u64,
    pub last_fraction: u8,
    last_increase: Option<Time>,
    last_decrease: Option<Time>,
}

impl LossBased {
    pub fn new(start: DataRate, min: DataRate, max: DataRate) -> Self {
        LossBased {
            rate: start.bps(),
            remb: 0,
            min_rate: min.bps(),
            max_rate: max.bps(),
            lost_q8: 0,
            expected: 0,
            last_fraction: 0,
            last_increase: None,
            last_decrease: None,
        }
    }

    /// A REMB arrived: As never stays above it (UpdateBandwidthEstimate).
    pub fn on_remb(&mut self, remb: u64) {
        self.remb = remb;
        if remb > 0 && self.rate > remb {
            self.rate = remb;
        }
    }

    /// A receiver report of `packets` with RTCP's `fraction` lost (1/256):
    /// reports are pooled until they cover 20 packets, then the loss rule
    /// runs (UpdatePacketLoss). Returns whether As changed.
    pub fn on_report(&mut self, packets: u64, fraction: u8, rtt: Duration, now: Time) -> bool {
        let mut loss = fraction;
        if packets > 0 {
            self.lost_q8 += u64::from(fraction) * packets;
            self.expected += packets;
            if self.expected < MIN_PACKETS {
                return false;
            }
            loss = (self.lost_q8 / self.expected).min(255) as u8;
            (self.lost_q8, self.expected) = (0, 0);
        }
        self.last_fraction = loss;
        match self.shape(loss, rtt, now) {
            Some(r) => {
                self.rate = r;
                true
            }
            None => false,
        }
    }

    /// The 2 %/10 % rule (ShapeSimple): `None` = no change this time.
    pub fn shape(&mut self, loss: u8, rtt: Duration, now: Time) -> Option<u64> {
        if loss <= LOW_LOSS_Q8 {
            if self.last_increase.is_some_and(|t| now - t < INCREASE_INTERVAL) {
                return None;
            }
            self.last_increase = Some(now);
        }
        if loss > HIGH_LOSS_Q8 {
            if self.last_decrease.is_some_and(|t| now - t < DECREASE_INTERVAL + rtt) {
                return None;
            }
            self.last_decrease = Some(now);
        }
        let mut new = if loss > HIGH_LOSS_Q8 {
            // rate·(1 − p/2) with p = loss/256; never below TFRC's rate.
            let cut = (self.rate as f64 * f64::from(512 - u16::from(loss)) / 512.0) as u64;
            cut.max(tfrc_bps(rtt.as_micros() / 1000, loss))
        } else if loss > LOW_LOSS_Q8 {
            self.rate
        } else {
            (self.rate as f64 * INCREASE_FACTOR + 0.5) as u64 + INCREASE_BPS
        };
        if self.remb > 0 {
            new = new.min(self.remb);
        }
        Some(new.min(self.max_rate).max(self.min_rate))
    }
}

/// What an RTCP receiver report would count since the last one.
#[derive(Clone, Copy, Debug, Default)]
struct ReportPeriod {
    next: Option<Time>,
    expected: u64,
    lost: u64,
}

pub struct Rrtcc {
    cfg: RrtccConfig,
    loss: LossBased,
    period: ReportPeriod,
    rtt: Option<Duration>,
    decision: Decision,
}

impl Rrtcc {
    pub fn new(cfg: RrtccConfig) -> Self {
        let mut r = Rrtcc {
            loss: LossBased::new(cfg.start_rate, cfg.min_rate, cfg.max_rate),
            cfg,
            period: ReportPeriod::default(),
            rtt: None,
            decision: Decision::default(),
        };
        r.refresh();
        r
    }

    pub fn loss_based(&self) -> &LossBased {
        &self.loss
    }

    fn refresh(&mut self) {
        let c = &self.cfg;
        let target = DataRate::from_bps(self.loss.rate).clamp(c.min_rate, c.max_rate);
        self.decision = if c.pacing_factor > 0.0 {
            Decision::rates(target, target.mul_f64(c.pacing_factor))
        } else {
            Decision { schedule: FrameSchedule::Burst, ..Decision::rates(target, c.max_rate) }
        };
    }
}

impl Controller for Rrtcc {
    fn name(&self) -> &str {
        "rrtcc"
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if let Some(remb) = fb.estimate {
            self.loss.on_remb(remb.bps());
        }
        // The RTT RTCP gives (RR's LSR/DLSR, RFC 3550 §6.4.1), as the
        // RTCP-era sender took it.
        if let Some(rtt) = fb.rtcp_rtt {
            self.rtt = Some(rtt);
        }
        // The video stream's receiver report; audio has its own.
        for p in fb.packets.iter().filter(|p| p.kind != PacketKind::Audio) {
            self.period.expected += 1;
            self.period.lost += u64::from(p.arrival.is_none());
        }
        let next = *self.period.next.get_or_insert(now + self.cfg.rr_interval);
        if now >= next {
            let ReportPeriod { expected, lost, .. } = self.period;
            // RTCP fraction lost (RFC 3550 §6.4.1): 8 bits of lost/expected.
            let fraction = (lost << 8).checked_div(expected).map_or(0, |f| f.min(255) as u8);
            // RTT unknown: 0, as libwebrtc's before RTCP had one.
            self.loss.on_report(expected, fraction, self.rtt.unwrap_or(Duration::ZERO), now);
            self.period = ReportPeriod { next: Some(now + self.cfg.rr_interval), expected: 0, lost: 0 };
        }
        self.refresh();
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if self.loss.remb > 0 {
            out("remb_kbps", self.loss.remb as f64 / 1000.0);
        }
        out("loss_based_kbps", self.loss.rate as f64 / 1000.0);
        out("fraction_lost", f64::from(self.loss.last_fraction) / 256.0);
        if let Some(rtt) = self.rtt {
            out("rtt_ms", rtt.as_millis_f64());
        }
    }
}
