//! `c-nadu`: conversational NADU rate control, the FBRA paper's second
//! baseline (fbra.txt §5, ref. [24]: Singh, Ott and Curcio, "Rate-control
//! for Conversational Video Communication in Heterogeneous Networks", IEEE
//! WoWMoM workshops 2012). The paper itself was not available; what is
//! known of it:
//! - FBRA §4.1 and §5: it adapts on congestion cues the receiver reports
//!   in RTCP: frame inter-arrival times and the playout-buffer level (the
//!   "Next Application Data Unit" report of 3GPP TS 26.234 §10.2, adapted
//!   to conversational video), and it can tell congestion losses from
//!   bit-error losses by when they occur;
//! - FBRA §5.2–5.4: it "trades throughput for packet loss" — lower goodput
//!   than RRTCC, "excellent reliability", and it leaves TCP at least its
//!   fair share.
//!
//! This is a reconstruction from those cues; every constant is a choice,
//! exposed as a parameter. Per report (the receiver-side computations run
//! at the sender from the per-packet arrivals, as `nada` hosts its
//! receiver):
//! - Playout buffer (NADU's playout delay): a conversational jitter buffer
//!   plays frame k at s_k + d_min + `playout_delay`, s_k its first send
//!   time and d_min the smallest one-way delay of the last `base_window`;
//!   the buffer level left by frame k is b_k = playout_delay − (a_k − s_k −
//!   d_min), a_k the arrival of its last packet. A frame with b_k < 0 is
//!   late (a discard).
//! - Frame inter-arrival: g_k = (a_k − a_{k−1}) − (s_k − s_{k−1}) for
//!   consecutive complete frames, smoothed into an EWMA (`gamma`); > 0 means
//!   frames arrive slower than they were sent, a queue building.
//! - Decision (TS 26.234 §10.2's aim: keep the buffer above a protection
//!   level): congestion — a loss in the newer half of the report's packets
//!   (older ones are taken as transient, FBRA §4.1), a late frame, or the
//!   newest b below `low` of the playout delay — sets the rate to `beta` ×
//!   the goodput of the report interval, at most once per RTT; a building
//!   queue (EWMA above `trend` per frame) or b below `high` of the playout
//!   delay holds; otherwise the rate grows by `increase` per RTT.

use std::collections::VecDeque;

use super::{
    rate_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, Params, MAX_RATE,
    MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::packet::{PacketKind, NO_FRAME};
use crate::units::{DataRate, DataSize, Duration, Time};

const PLAYOUT_DELAY: Param<Duration> = Param::duration(
    "playout_delay",
    Duration::from_millis(100),
    Duration::from_millis(1),
    Duration::from_secs(10),
    "playout delay the receiver's jitter buffer adds over the smallest one-way delay (choice: 100 ms, \
     a conversational buffer within ITU-T G.114's 150 ms mouth-to-ear budget)",
);
const LOW: Param<f64> = Param::number(
    "low",
    0.5,
    0.0,
    1.0,
    "congestion when the buffer level falls below this share of the playout delay (choice: 0.5)",
);
const HIGH: Param<f64> = Param::number(
    "high",
    0.8,
    0.0,
    1.0,
    "hold while the buffer level is below this share of the playout delay (choice: 0.8)",
);
const TREND: Param<Duration> = Param::duration(
    "trend",
    Duration::from_millis(1),
    Duration::ZERO,
    Duration::from_secs(1),
    "hold while frames arrive this much slower than sent, per frame, on average (choice: 1 ms)",
);
const GAMMA: Param<f64> =
    Param::number("gamma", 0.1, 0.0, 1.0, "EWMA gain of the frame inter-arrival trend (choice: 0.1)").above_min();
const BETA: Param<f64> = Param::number(
    "beta",
    0.85,
    0.0,
    1.0,
    "on congestion, the rate becomes this share of the report's goodput (choice: 0.85, GCC's decrease)",
)
.above_min();
const INCREASE: Param<f64> = Param::number(
    "increase",
    0.05,
    0.0,
    10.0,
    "multiplicative growth per RTT while the buffer is healthy (choice: 0.05)",
);
const BASE_WINDOW: Param<Duration> = Param::duration(
    "base_window",
    Duration::from_secs(10),
    Duration::from_millis(1),
    Duration::MAX,
    "window of the smallest one-way delay taken as the propagation delay (choice: 10 s, as LEDBAT's base)",
);

pub const INFO: ControllerInfo = ControllerInfo {
    name: "c-nadu",
    summary: "conversational NADU (FBRA's baseline [24], reconstructed): the playout-buffer level and the frame \
              inter-arrival trend from receiver reports; goodput × 0.85 on congestion, hold on a building queue, \
              +5 % per RTT otherwise",
    params: &[
        PLAYOUT_DELAY.info(),
        LOW.info(),
        HIGH.info(),
        TREND.info(),
        GAMMA.info(),
        BETA.info(),
        INCREASE.info(),
        BASE_WINDOW.info(),
        START_RATE.info(),
        MIN_RATE.info(),
        MAX_RATE.info(),
    ],
    create,
    receiver: None,
    pushback: super::Pushback::Off,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(CNadu::new(CNaduConfig::from_params(p, ctx)?)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CNaduConfig {
    pub playout_delay: Duration,
    pub low: f64,
    pub high: f64,
    pub trend: Duration,
    pub gamma: f64,
    pub beta: f64,
    pub increase: f64,
    pub base_window: Duration,
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
}

impl CNaduConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let (low, high) = (p.get(&LOW)?, p.get(&HIGH)?);
        ConfigError::check_order("low", low, "high", high)?;
        let (min_rate, max_rate) = rate_bounds(p, ctx)?;
        Ok(CNaduConfig {
            playout_delay: p.get(&PLAYOUT_DELAY)?,
            low,
            high,
            trend: p.get(&TREND)?,
            gamma: p.get(&GAMMA)?,
            beta: p.get(&BETA)?,
            increase: p.get(&INCREASE)?,
            base_window: p.get(&BASE_WINDOW)?,
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
        })
    }
}

/// What a report said, for the decision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cues {
    /// A loss in the newer half of the report's packets, or a late frame.
    pub congestion_loss: bool,
    /// The newest complete frame's buffer level, if one completed.
    pub buffer: Option<Duration>,
    /// Media bytes received over the report's span.
    pub goodput: Option<DataRate>,
}

/// The frame being assembled: id, first send time, packets received, and
/// how many it has, the newest arrival.
#[derive(Clone, Copy, Debug)]
struct Assembly {
    frame: u32,
    first_send: Time,
    received: u16,
    count: u16,
    last_arrival: Time,
}

pub struct CNadu {
    cfg: CNaduConfig,
    rate: DataRate,
    /// (time, one-way delay) samples for d_min, each the smallest of its
    /// report.
    base: VecDeque<(Time, Duration)>,
    assembling: Option<Assembly>,
    /// Newest complete frame: first send time and completion.
    last_complete: Option<(Time, Time)>,
    /// EWMA of the frame inter-arrival excess, µs.
    trend_us: f64,
    buffer: Option<Duration>,
    rtt: Duration,
    last_decrease: Option<Time>,
    last_report: Option<Time>,
    /// 0 increase, 1 hold, 2 decrease.
    action: u8,
}

impl CNadu {
    pub fn new(cfg: CNaduConfig) -> Self {
        CNadu {
            cfg,
            rate: cfg.start_rate,
            base: VecDeque::new(),
            assembling: None,
            last_complete: None,
            trend_us: 0.0,
            buffer: None,
            rtt: Duration::from_millis(100),
            last_decrease: None,
            last_report: None,
            action: 0,
        }
    }

    fn d_min(&self) -> Option<Duration> {
        self.base.iter().map(|&(_, d)| d).min()
    }

    /// The receiver's side of one report: frame completions, their buffer
    /// levels and inter-arrival excess, and the loss cue.
    pub fn cues(&mut self, now: Time, fb: &Feedback) -> Cues {
        let media: Vec<_> =
            fb.packets.iter().filter(|p| p.kind == PacketKind::Media && p.pos.frame != NO_FRAME).collect();
        // The smallest one-way delay of the report from the same arrivals
        // and send times b_k is computed from, so a clock offset cancels
        // (`stats.owd_min` may be relative to the flow's minimum).
        if let Some(owd) = fb.packets.iter().filter_map(|p| Some(p.arrival? - p.send_time)).min() {
            self.base.push_back((now, owd));
        }
        while self.base.front().is_some_and(|&(t, _)| now.saturating_since(t) > self.cfg.base_window) {
            self.base.pop_front();
        }
        let newer = media.len() / 2;
        let congestion_loss = media.iter().skip(newer).any(|p| p.arrival.is_none());
        let mut late = false;
        let d_min = self.d_min();
        for p in &media {
            let Some(arrival) = p.arrival else { continue };
            let a = match self.assembling {
                Some(a) if a.frame == p.pos.frame => a,
                _ => Assembly {
                    frame: p.pos.frame,
                    first_send: p.send_time,
                    received: 0,
                    count: p.pos.count,
                    last_arrival: arrival,
                },
            };
            let a = Assembly {
                first_send: a.first_send.min(p.send_time),
                received: a.received + 1,
                last_arrival: a.last_arrival.max(arrival),
                ..a
            };
            self.assembling = Some(a);
            if a.received < a.count {
                continue;
            }
            // Frame complete: NADU's playout delay, and the arrival spacing.
            if let Some(d_min) = d_min {
                let transit = a.last_arrival.saturating_since(a.first_send);
                let level = self.cfg.playout_delay.as_secs_f64() - (transit.as_secs_f64() - d_min.as_secs_f64());
                late |= level < 0.0;
                self.buffer = Some(Duration::from_secs_f64(level.max(0.0)));
            }
            if let Some((s0, a0)) = self.last_complete {
                let g = (a.last_arrival.as_micros() - a0.as_micros()) - (a.first_send.as_micros() - s0.as_micros());
                self.trend_us += self.cfg.gamma * (g as f64 - self.trend_us);
            }
            self.last_complete = Some((a.first_send, a.last_arrival));
            self.assembling = None;
        }
        let received: u64 = media.iter().filter(|p| p.arrival.is_some()).map(|p| p.size.bytes()).sum();
        let span = match (media.first(), media.last()) {
            (Some(f), Some(l)) => l.send_time.saturating_since(f.send_time),
            _ => Duration::ZERO,
        };
        let goodput = (span > Duration::ZERO).then(|| DataRate::from_size_per(DataSize::from_bytes(received), span));
        Cues { congestion_loss: congestion_loss || late, buffer: self.buffer, goodput }
    }

    /// The rate after a report with `cues`, `dt` after the previous one.
    pub fn decide(&mut self, now: Time, cues: &Cues, dt: Duration) {
        let pd = self.cfg.playout_delay.as_secs_f64();
        let level = cues.buffer.map(|b| b.as_secs_f64() / pd);
        let congested = cues.congestion_loss || level.is_some_and(|l| l < self.cfg.low);
        if congested {
            // At most one decrease per RTT: the next report may still show
            // the queue the last decrease is draining.
            if self.last_decrease.is_none_or(|t| now.saturating_since(t) >= self.rtt) {
                let base = cues.goodput.unwrap_or(self.rate).min(self.rate);
                self.rate = base.mul_f64(self.cfg.beta).clamp(self.cfg.min_rate, self.cfg.max_rate);
                self.last_decrease = Some(now);
            }
            self.action = 2;
        } else if self.trend_us > self.cfg.trend.as_micros() as f64 || level.is_some_and(|l| l < self.cfg.high) {
            self.action = 1;
        } else {
            let per_rtt = dt.as_secs_f64() / self.rtt.as_secs_f64().max(1e-3);
            let grown = self.rate.bps() as f64 * (1.0 + self.cfg.increase).powf(per_rtt.min(1.0));
            self.rate = DataRate::from_bps_f64(grown).clamp(self.cfg.min_rate, self.cfg.max_rate);
            self.action = 0;
        }
    }
}

impl Controller for CNadu {
    fn name(&self) -> &str {
        "c-nadu"
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if let Some(rtt) = fb.rtt_sample() {
            self.rtt = rtt;
        }
        let cues = self.cues(now, fb);
        let dt = self.last_report.map_or(Duration::ZERO, |t| now.saturating_since(t));
        self.last_report = Some(now);
        self.decide(now, &cues, dt);
    }

    fn decision(&self) -> Decision {
        // Paced as WebRTC paces (goog_cc kPacingFactor 2.5).
        Decision::rates(self.rate, self.rate.mul_f64(2.5))
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("rate_kbps", self.rate.kbps_f64());
        if let Some(b) = self.buffer {
            out("buffer_ms", b.as_millis_f64());
        }
        out("trend_ms", self.trend_us / 1000.0);
        out("action", f64::from(self.action));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::ms;
    use crate::feedback::{PacketResult, ReportStats};
    use crate::packet::FramePos;

    fn cnadu() -> CNadu {
        CNadu::new(CNaduConfig::from_params(&Params::new(), &ControllerContext::DEFAULT).unwrap())
    }

    /// A frame of `count` packets sent at `send` ms (1 ms apart), arriving
    /// `owd` ms later; `lost` marks lost packets by index.
    fn frame(id: u32, count: u16, send: i64, owd: i64, lost: &[u16]) -> Vec<PacketResult> {
        (0..count)
            .map(|i| PacketResult {
                seq: u64::from(id) * 100 + u64::from(i),
                kind: PacketKind::Media,
                size: DataSize::from_bytes(1000),
                send_time: ms(send + i64::from(i)),
                arrival: (!lost.contains(&i)).then(|| ms(send + i64::from(i) + owd)),
                pos: FramePos { frame: id, index: i, count },
                ..Default::default()
            })
            .collect()
    }

    /// No `stats`: C-NADU takes its base delay from the arrivals themselves.
    fn report(at: i64, packets: Vec<PacketResult>) -> Feedback {
        Feedback {
            report_time: ms(at),
            received_at: ms(at + 20),
            packets,
            stats: ReportStats::default(),
            estimate: None,
            ..Default::default()
        }
    }

    #[test]
    fn buffer_level_is_the_playout_delay_less_the_queueing() {
        let mut c = cnadu();
        // Frame 0 at d_min = 20 ms: its last packet (1 ms after the first)
        // leaves 100 − 1 = 99 ms of buffer.
        let cues = c.cues(ms(50), &report(50, frame(0, 2, 0, 20, &[])));
        assert_eq!(cues.buffer, Some(Duration::from_millis(99)));
        // Frame 1, 40 ms later in the queue: 100 − 41 = 59 ms; arrival
        // spacing 73 − 21 = 52 ms against 33 ms sent: +19 ms × γ 0.1.
        let cues = c.cues(ms(100), &report(100, frame(1, 2, 33, 60, &[])));
        assert_eq!(cues.buffer, Some(Duration::from_millis(59)));
        assert!((c.trend_us - 4_000.0).abs() < 1.0, "{}", c.trend_us);
        assert!(!cues.congestion_loss);
    }

    #[test]
    fn a_recent_loss_or_a_low_buffer_cuts_to_goodput_a_building_queue_holds() {
        let mut c = cnadu();
        let start = c.rate;
        // Healthy: +5 % per RTT (report 100 ms after the last, RTT 100 ms).
        c.decide(ms(0), &Cues { buffer: Some(Duration::from_millis(95)), ..Default::default() }, Duration::ZERO);
        c.decide(ms(100), &Cues { buffer: Some(Duration::from_millis(95)), ..Default::default() }, ms(100) - ms(0));
        assert_eq!(c.action, 0);
        assert!((c.rate.bps() as f64 - start.bps() as f64 * 1.05).abs() < 2.0, "{}", c.rate);
        // Buffer at 70 % of the playout delay: hold.
        let held = c.rate;
        c.decide(
            ms(150),
            &Cues { buffer: Some(Duration::from_millis(70)), ..Default::default() },
            Duration::from_millis(50),
        );
        assert_eq!((c.action, c.rate), (1, held));
        // A loss in the newer half: 0.85 × the 200 kbps goodput.
        let cues = Cues { congestion_loss: true, goodput: Some(DataRate::from_kbps(200)), ..Default::default() };
        c.decide(ms(200), &cues, Duration::from_millis(50));
        assert_eq!((c.action, c.rate), (2, DataRate::from_kbps(170)));
        // Within one RTT, no second cut.
        c.decide(ms(250), &cues, Duration::from_millis(50));
        assert_eq!(c.rate, DataRate::from_kbps(170));
    }

    #[test]
    fn only_losses_in_the_newer_half_of_a_report_count() {
        let mut c = cnadu();
        // Four frames of two packets; the oldest packet lost: transient.
        let mut packets = frame(0, 2, 0, 20, &[0]);
        for k in 1..4 {
            packets.extend(frame(k, 2, 33 * i64::from(k), 20, &[]));
        }
        assert!(!c.cues(ms(150), &report(150, packets)).congestion_loss);
        let mut packets = Vec::new();
        for k in 4..8 {
            packets.extend(frame(k, 2, 33 * i64::from(k), 20, if k == 7 { &[1] } else { &[] }));
        }
        assert!(c.cues(ms(300), &report(300, packets)).congestion_loss);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let p = Params::new().with("low", crate::controller::ParamValue::Num(0.9));
        let e = CNaduConfig::from_params(&p, &ControllerContext::DEFAULT).unwrap_err();
        assert!(e.to_string().contains("low"), "{e}");
        let p = Params::new().with("beta", crate::controller::ParamValue::Num(0.0));
        assert!(CNaduConfig::from_params(&p, &ControllerContext::DEFAULT).unwrap_err().to_string().contains("beta"));
    }
}
