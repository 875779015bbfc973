//! The receiver side of `rrtcc`: what libwebrtc's receive-side estimator did
//! for every arriving video packet in 2013 (webrtc trunk r4855,
//! `modules/remote_bitrate_estimator/`), and the REMB timing of
//! `video_engine/vie_remb.cc` of the same revision.
//!
//! - `Detector` (`overuse_detector.cc`): packets with the same RTP timestamp
//!   plus transmission offset (RFC 5450), i.e. the same send time on a 90 kHz
//!   clock, form a frame; each completed frame gives one (t_delta, ts_delta,
//!   size delta) to a two-state Kalman filter on [1/capacity, offset]; the
//!   offset, times min(n, 60), against a threshold of 25 ms (12.5 ms near a
//!   known maximum) gives the over-use hypothesis.
//! - `IncomingRate` and `RemoteRate` (`rate.rs`): the rate received over the
//!   last 500 ms, and the rate controller (increase, decrease, hold) run once
//!   a second and at once on a new over-use.
//! - `Remb` (`vie_remb.cc`): hands the estimate to RTCP every second, or at
//!   once when it fell below 97 % of the last one sent.
//!
//! Times are whole milliseconds, as the receiver's clock
//! (`TimeInMilliseconds`) gave them to the estimator in 2013.

use std::collections::VecDeque;

use super::rate::{IncomingRate, Input, Region, RemoteRate};
use crate::controller::ReceiverEstimator;
use crate::packet::{Packet, PacketKind};
use crate::units::{DataRate, Duration, Time};

// OverUseDetectorOptions defaults (common_types.h, r4855).
/// Initial slope 1/C of the filter: 8/512 ms per byte.
pub const INITIAL_SLOPE: f64 = 8.0 / 512.0;
/// Initial state covariance diag(100, 0.1).
pub const INITIAL_E: [[f64; 2]; 2] = [[100.0, 0.0], [0.0, 0.1]];
/// Process noise of slope and offset (1e-10, 1e-2); libwebrtc lowered it to
/// (1e-13, 1e-3) only with the adaptive threshold of July 2015.
pub const PROCESS_NOISE: [f64; 2] = [1e-10, 1e-2];
/// Initial measurement noise variance (ms²).
pub const INITIAL_VAR_NOISE: f64 = 50.0;
/// Over-use threshold on min(n, 60)·offset (ms) while no maximum is known;
/// half of it near one (`Detector::set_region`).
pub const INITIAL_THRESHOLD: f64 = 25.0;

// overuse_detector.cc (r4855).
/// Over-use must last this long (ms, kOverUsingTimeThreshold) before it is
/// signalled; 10 ms only since 2015.
pub const OVERUSING_TIME_MS: f64 = 100.0;
/// Frame periods remembered for the smallest one (kMinFramePeriodHistoryLength).
const FRAME_PERIOD_HISTORY: usize = 60;
/// Deltas counted at most, and the cap on n in min(n, 60).
const MAX_DELTAS: u32 = 1000;
const DELTA_GAIN_CAP: u32 = 60;
/// Noise EWMA constant: faster for the first 10·30 deltas (UpdateNoiseEstimate).
const NOISE_ALPHA_START: f64 = 0.01;
const NOISE_ALPHA: f64 = 0.002;
const NOISE_START_DELTAS: u32 = 300;
/// Floor of the noise variance (ms²).
const VAR_NOISE_FLOOR: f64 = 1e-7;

// remote_bitrate_estimator.h (r4855).
/// RemoteBitrateEstimator::kProcessIntervalMs.
pub const PROCESS_INTERVAL_MS: i64 = 1000;
/// kStreamTimeOutMs: a stream silent this long is dropped.
const STREAM_TIMEOUT_MS: i64 = 2000;

// vie_remb.cc (r4855).
/// kRembSendIntervallMs.
pub const REMB_INTERVAL_MS: i64 = 1000;
/// kSendThresholdPercent: an estimate below this share of the last REMB is sent at once.
pub const REMB_DROP_PERCENT: u64 = 97;

/// The detector's hypothesis (bwe_defines.h BandwidthUsage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Usage {
    #[default]
    Normal,
    Underusing,
    Overusing,
}

impl Usage {
    fn column(self) -> f64 {
        match self {
            Usage::Normal => 0.0,
            Usage::Underusing => -1.0,
            Usage::Overusing => 1.0,
        }
    }
}

/// One frame: its timestamp (90 kHz), bytes, and the arrival of its newest packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Frame {
    ts: i64,
    size: u64,
    complete_ms: i64,
}

/// Frame grouping, the Kalman filter and the over-use detector of one stream.
#[derive(Clone, Debug)]
pub struct Detector {
    pub(super) current: Option<Frame>,
    pub(super) prev: Option<Frame>,
    /// Deltas seen, capped at `MAX_DELTAS`.
    pub num_deltas: u32,
    /// Filter state: slope (1/C, ms per byte) and offset m (ms).
    pub slope: f64,
    pub offset: f64,
    pub prev_offset: f64,
    /// State covariance.
    pub e: [[f64; 2]; 2],
    pub avg_noise: f64,
    pub var_noise: f64,
    pub threshold: f64,
    pub(super) periods: VecDeque<f64>,
    /// Time over the threshold (ms); `None` when not over it.
    pub time_over_using: Option<f64>,
    pub over_use_counter: u32,
    pub hypothesis: Usage,
}

impl Default for Detector {
    fn default() -> Self {
        Detector {
            current: None,
            prev: None,
            num_deltas: 0,
            slope: INITIAL_SLOPE,
            offset: 0.0,
            prev_offset: 0.0,
            e: INITIAL_E,
            avg_noise: 0.0,
            var_noise: INITIAL_VAR_NOISE,
            threshold: INITIAL_THRESHOLD,
            periods: VecDeque::with_capacity(FRAME_PERIOD_HISTORY),
            time_over_using: None,
            over_use_counter: 0,
            hypothesis: Usage::Normal,
        }
    }
}

impl Detector {
    /// A packet of `size` bytes with timestamp `ts` (90 kHz) arrived at
    /// `now_ms`. The first packet of a newer frame completes the current one,
    /// which is compared with the one before it; packets of older frames are
    /// ignored (reordering).
    pub fn update(&mut self, size: u64, ts: i64, now_ms: i64) {
        match self.current {
            Some(cur) if ts < cur.ts => return,
            Some(cur) if ts != cur.ts => {
                if let Some(prev) = self.prev {
                    self.num_deltas = (self.num_deltas + 1).min(MAX_DELTAS);
                    let ts_delta = (cur.ts - prev.ts) as f64 / 90.0;
                    let t_delta = (cur.complete_ms - prev.complete_ms) as f64;
                    self.update_kalman(t_delta, ts_delta, cur.size, prev.size);
                }
                self.prev = Some(cur);
                self.current = Some(Frame { ts, size: 0, complete_ms: now_ms });
            }
            Some(_) => {}
            None => self.current = Some(Frame { ts, size: 0, complete_ms: now_ms }),
        }
        if let Some(cur) = &mut self.current {
            cur.size += size;
            cur.complete_ms = now_ms;
        }
    }

    /// One Kalman step on d = t_delta − ts_delta = slope·Δsize + offset + v
    /// (UpdateKalman), then the detector.
    pub fn update_kalman(&mut self, t_delta: f64, ts_delta: f64, size: u64, prev_size: u64) {
        let min_period = self.min_frame_period(ts_delta);
        let d = t_delta - ts_delta;
        let size_delta = size as f64 - prev_size as f64;
        // Process noise scaled to the frame rate (tuned for 30 fps).
        let scale = min_period / (1000.0 / 30.0);
        self.e[0][0] += PROCESS_NOISE[0] * scale;
        self.e[1][1] += PROCESS_NOISE[1] * scale;
        // The offset moves against the hypothesis: let it move faster.
        if (self.hypothesis == Usage::Overusing && self.offset < self.prev_offset)
            || (self.hypothesis == Usage::Underusing && self.offset > self.prev_offset)
        {
            self.e[1][1] += 10.0 * PROCESS_NOISE[1] * scale;
        }
        let h = [size_delta, 1.0];
        let eh = [self.e[0][0] * h[0] + self.e[0][1] * h[1], self.e[1][0] * h[0] + self.e[1][1] * h[1]];
        let residual = d - self.slope * h[0] - self.offset;
        let stable = f64::from(self.num_deltas.min(DELTA_GAIN_CAP)) * self.offset.abs() < self.threshold;
        // Late frames (key frames) do not fit the Gaussian model: clip at 3σ.
        let limit = 3.0 * self.var_noise.sqrt();
        self.update_noise(if residual.abs() < limit { residual } else { limit }, min_period, stable);
        let denom = self.var_noise + h[0] * eh[0] + h[1] * eh[1];
        let k = [eh[0] / denom, eh[1] / denom];
        let ikh = [[1.0 - k[0] * h[0], -k[0] * h[1]], [-k[1] * h[0], 1.0 - k[1] * h[1]]];
        let (e00, e01) = (self.e[0][0], self.e[0][1]);
        self.e[0][0] = e00 * ikh[0][0] + self.e[1][0] * ikh[0][1];
        self.e[0][1] = e01 * ikh[0][0] + self.e[1][1] * ikh[0][1];
        self.e[1][0] = e00 * ikh[1][0] + self.e[1][0] * ikh[1][1];
        self.e[1][1] = e01 * ikh[1][0] + self.e[1][1] * ikh[1][1];
        debug_assert!(self.e[0][0] + self.e[1][1] >= 0.0 && self.e[0][0] >= 0.0, "covariance {:?}", self.e);
        self.slope += k[0] * residual;
        self.prev_offset = self.offset;
        self.offset += k[1] * residual;
        self.detect(ts_delta);
    }

    /// The smallest frame period of the last 60, this one included.
    fn min_frame_period(&mut self, ts_delta: f64) -> f64 {
        if self.periods.len() >= FRAME_PERIOD_HISTORY {
            self.periods.pop_front();
        }
        let min = self.periods.iter().fold(ts_delta, |m, &p| m.min(p));
        self.periods.push_back(ts_delta);
        min
    }

    /// Mean and variance of the residual, only while the offset is within
    /// the threshold; β = (1 − α)^(30·period/1000) makes α per 30 fps frame.
    fn update_noise(&mut self, residual: f64, period: f64, stable: bool) {
        if !stable {
            return;
        }
        let alpha = if self.num_deltas > NOISE_START_DELTAS { NOISE_ALPHA } else { NOISE_ALPHA_START };
        let beta = (1.0 - alpha).powf(period * 30.0 / 1000.0);
        self.avg_noise = beta * self.avg_noise + (1.0 - beta) * residual;
        let dev = self.avg_noise - residual;
        self.var_noise = (beta * self.var_noise + (1.0 - beta) * dev * dev).max(VAR_NOISE_FLOOR);
    }

    /// Over-use when min(n, 60)·offset has exceeded the threshold for more
    /// than 100 ms of frames, on at least two deltas, and the offset is not
    /// falling; under-use below −threshold; normal in between.
    pub fn detect(&mut self, ts_delta: f64) -> Usage {
        if self.num_deltas < 2 {
            return Usage::Normal;
        }
        let t = f64::from(self.num_deltas.min(DELTA_GAIN_CAP)) * self.offset;
        if t > self.threshold {
            // The first time, assume half the gap since the previous frame was over-use.
            let over = self.time_over_using.map_or(ts_delta / 2.0, |o| o + ts_delta);
            self.time_over_using = Some(over);
            self.over_use_counter += 1;
            if over > OVERUSING_TIME_MS && self.over_use_counter > 1 && self.offset >= self.prev_offset {
                self.time_over_using = Some(0.0);
                self.over_use_counter = 0;
                self.hypothesis = Usage::Overusing;
            }
        } else {
            self.time_over_using = None;
            self.over_use_counter = 0;
            self.hypothesis = if t < -self.threshold { Usage::Underusing } else { Usage::Normal };
        }
        self.hypothesis
    }

    /// The threshold follows the rate controller's region: 25 ms while no
    /// maximum is known, 12.5 ms near or above one (SetRateControlRegion).
    /// This, not an adaptive threshold (libwebrtc, July 2015), is how the
    /// 2013 detector changed its threshold.
    pub fn set_region(&mut self, region: Region) {
        self.threshold = match region {
            Region::MaxUnknown => INITIAL_THRESHOLD,
            Region::NearMax | Region::AboveMax => INITIAL_THRESHOLD / 2.0,
        };
    }
}

/// When an estimate is handed to RTCP (VieRemb::OnReceiveBitrateChanged).
#[derive(Clone, Debug, Default)]
pub struct Remb {
    last_sent: u64,
    last_time_ms: Option<i64>,
    /// An estimate handed over and not yet put in a report.
    pending: Option<u64>,
}

impl Remb {
    /// A new estimate: sent if a second has passed since the last REMB, or
    /// at once if it is below 97 % of the last one.
    pub fn on_estimate(&mut self, rate: u64, now_ms: i64) {
        if self.last_sent > 0 && rate < REMB_DROP_PERCENT * self.last_sent / 100 {
            self.last_time_ms = None;
        }
        if self.last_time_ms.is_some_and(|t| now_ms - t < REMB_INTERVAL_MS) {
            return;
        }
        self.last_time_ms = Some(now_ms);
        self.last_sent = rate;
        self.pending = Some(rate);
    }

    /// The REMB for the next report, if one was handed over since the last.
    pub fn take(&mut self) -> Option<u64> {
        self.pending.take()
    }
}

/// The receiver-side estimator of `rrtcc` (RemoteBitrateEstimatorSingleStream
/// for the one video stream, with VieRemb in front of RTCP).
pub struct Receiver {
    /// `None` until the first packet, and after a 2 s silence.
    detector: Option<Detector>,
    incoming: IncomingRate,
    rate: RemoteRate,
    remb: Remb,
    last_process_ms: Option<i64>,
    last_packet_ms: Option<i64>,
    min_rate: u64,
    max_rate: u64,
    rtt_ms: i64,
}

/// Whole milliseconds of the receiver's clock.
fn ms(t: Time) -> i64 {
    t.as_micros().div_euclid(1000)
}

impl Receiver {
    /// Rates in bps; `rtt` is what the rate controller assumes for the
    /// round trip (rtcc's reports carry none to the receiver).
    pub fn new(min_rate: DataRate, max_rate: DataRate, rtt: Duration) -> Self {
        let (min_rate, max_rate, rtt_ms) = (min_rate.bps(), max_rate.bps(), rtt.as_micros() / 1000);
        Receiver {
            detector: None,
            incoming: IncomingRate::default(),
            rate: RemoteRate::new(min_rate, max_rate, rtt_ms),
            remb: Remb::default(),
            last_process_ms: None,
            last_packet_ms: None,
            min_rate,
            max_rate,
            rtt_ms,
        }
    }

    pub fn detector(&self) -> Option<&Detector> {
        self.detector.as_ref()
    }

    pub fn remote_rate(&self) -> &RemoteRate {
        &self.rate
    }

    /// The module's periodic process: once a second.
    fn process(&mut self, now_ms: i64) {
        if self.last_process_ms.is_some_and(|t| now_ms - t < PROCESS_INTERVAL_MS) {
            return;
        }
        self.update_estimate(now_ms);
        self.last_process_ms = Some(now_ms);
    }

    /// A stream silent for over 2 s is dropped and the rate controller
    /// starts again (libwebrtc's process thread did this during the silence;
    /// here it happens at the next input).
    fn expire(&mut self, now_ms: i64) {
        if self.last_packet_ms.is_some_and(|t| now_ms - t > STREAM_TIMEOUT_MS) {
            self.detector = None;
            self.last_packet_ms = None;
        }
        if self.detector.is_none() {
            self.rate = RemoteRate::new(self.min_rate, self.max_rate, self.rtt_ms);
        }
    }

    /// Runs the rate controller on the detector's hypothesis and the
    /// incoming rate; a valid estimate goes to the REMB timer.
    fn update_estimate(&mut self, now_ms: i64) {
        self.expire(now_ms);
        let Some(d) = &self.detector else { return };
        let (usage, noise_var) = (d.hypothesis, d.var_noise);
        let input = Input { usage, incoming: self.incoming.rate(now_ms), noise_var };
        let region = self.rate.update(input, now_ms);
        let target = self.rate.update_estimate(now_ms);
        if self.rate.valid() {
            self.remb.on_estimate(target, now_ms);
        }
        if let Some(d) = &mut self.detector {
            d.set_region(region);
        }
    }
}

impl ReceiverEstimator for Receiver {
    fn on_packet(&mut self, now: Time, packet: &Packet) {
        // Audio is another RTP stream, not seen by the video estimator in 2013.
        if packet.kind == PacketKind::Audio {
            return;
        }
        let now_ms = ms(now);
        self.expire(now_ms);
        let size = packet.size.bytes();
        self.incoming.update(size, now_ms);
        // RTP timestamp + transmission offset: the send time on a 90 kHz
        // clock, from the abs-send-time the packet carries.
        let sent = crate::packet::abs_send_time_at(packet.abs_send_time, now);
        let ts = (sent.as_micros() * 9).div_euclid(100);
        let d = self.detector.get_or_insert_with(Detector::default);
        let prior = d.hypothesis;
        d.update(size, ts, now_ms);
        let overusing = d.hypothesis == Usage::Overusing;
        self.last_packet_ms = Some(now_ms);
        if overusing {
            // A new over-use acts at once; a continued one when it may reduce further.
            let incoming = self.incoming.rate(now_ms);
            if prior != Usage::Overusing || self.rate.time_to_reduce_further(now_ms, incoming) {
                self.update_estimate(now_ms);
            }
        }
        self.process(now_ms);
    }

    fn estimate(&mut self, now: Time) -> Option<DataRate> {
        self.process(ms(now));
        self.remb.take().map(DataRate::from_bps)
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if let Some(d) = &self.detector {
            out("offset_ms", d.offset);
            out("threshold_ms", d.threshold);
            out("noise_var", d.var_noise);
            out("usage", d.hypothesis.column());
        }
        if self.rate.valid() {
            out("remote_rate_kbps", self.rate.rate as f64 / 1000.0);
        }
    }
}
