//! When a decoded frame is shown: WebRTC's receive-side timing
//! (modules/video_coding/timing/) or at once.
//!
//! With `Playout::Webrtc` a frame is rendered at
//! `render = extrapolated completion + current delay` (VCMTiming::RenderTime),
//! where
//! - the extrapolated completion maps the frame's capture timestamp to local
//!   time through TimestampExtrapolator's recursive least-squares line (λ = 1,
//!   CUSUM delay-change detection, alarm 60 000 ticks, drift 6 600, error cap
//!   7 000, P11 = 1e10), fed with each complete frame not delayed by a
//!   retransmission;
//! - the target delay is max(min_playout_delay, jitter delay + decode time +
//!   render delay 10 ms) (TargetDelayInternal); the jitter delay is
//!   JitterEstimator's: a Kalman filter of the inter-frame delay variation
//!   against the frame-size change (FrameDelayVariationKalmanFilter), the
//!   noise variance's 2.33 σ − 30 ms, plus 10 ms of operating-system jitter,
//!   scaled down below 10 fps (JitterEstimator::GetJitterEstimate; the
//!   NACK RTT term belongs to the off-by-default RttMult trial and is left
//!   out);
//! - the current delay starts at the first jitter delay, grows by how late a
//!   frame was for its decode slot (up to the target) and falls to the
//!   target when a frame is on time (UpdateCurrentDelay(render_time,
//!   actual_decode_time)), clamped to [min, max] playout delay.
//!
//! Frames go to the decoder one at a time, as VideoStreamBufferController
//! schedules them: the next frame is timed (its render time taken from the
//! extrapolator as it is then) only once the previous one was released, so
//! frames that completed meanwhile have moved the line first; a frame is
//! released at its decode slot, render − decode time − render delay, but no
//! later than just before the stream's 3 s timeout from the previous release
//! (FrameDecodeTiming::OnFrameBufferUpdated clamps the wait to
//! TimeUntilTimeout − 1 ms), and shown at max(render, release + decode time +
//! render delay). The receiver asks `busy_until` before timing the next
//! frame. Timing every frame the moment it completed instead let a burst
//! after an outage take render times from a line its own first frames had
//! bent (two points across the outage: a slope near zero), seconds ahead,
//! and every later frame waited behind them.
//! Frames delayed by a retransmission update neither the extrapolator nor
//! the jitter estimate (VideoStreamBufferController).
//!
//! With `max_video_delay` set (libwebrtc: kMaxVideoDelay = 10 s,
//! modules/video_coding/frame_helpers.cc), a frame whose render time is
//! further than that from now (FrameHasBadRenderTiming) or a target delay
//! above it (TargetVideoDelayIsTooLarge) resets the jitter estimate and the
//! timing — extrapolator, jitter and current delay (VCMTiming::Reset) — and
//! the frame is timed afresh (VideoStreamBufferController::OnFrameReady).
//! Without it, an extrapolator whose line a long outage bent keeps placing
//! frames seconds in the future.

use std::collections::VecDeque;

use crate::units::{Duration, Time};

/// How a receiver times its frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Playout {
    /// Shown the moment they are decoded, which is when they complete.
    Immediate,
    Webrtc(WebrtcPlayout),
}

impl Default for Playout {
    fn default() -> Self {
        Playout::Webrtc(WebrtcPlayout::default())
    }
}

/// VCMTiming's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebrtcPlayout {
    /// VCMCodecTimer's 95th-percentile decode time. rtcc has no decoder
    /// clock; 5 ms is a software VP8/H.264 decode of 720p on a desktop core
    /// (a choice, exposed as `decode_time`).
    pub decode_time: Duration,
    /// kDefaultRenderDelay = 10 ms.
    pub render_delay: Duration,
    /// min/max playout delay (RTP playout-delay extension; defaults 0, 10 s).
    pub min_delay: Duration,
    pub max_delay: Duration,
    /// kMaxVideoDelay: the bound on a frame's render time from now and on
    /// the target delay beyond which the timing resets; `None`: never.
    pub max_video_delay: Option<Duration>,
}

impl Default for WebrtcPlayout {
    fn default() -> Self {
        WebrtcPlayout {
            decode_time: Duration::from_millis(5),
            render_delay: Duration::from_millis(10),
            min_delay: Duration::ZERO,
            max_delay: Duration::from_secs(10),
            max_video_delay: None,
        }
    }
}

/// 90 kHz RTP ticks per millisecond.
const TICKS_PER_MS: f64 = 90.0;

/// TimestampExtrapolator: local time ≈ (ticks − w1) / w0 from the start.
#[derive(Clone, Debug)]
struct Extrapolator {
    start: Time,
    prev: Time,
    w: [f64; 2],
    p: [[f64; 2]; 2],
    first_ticks: Option<f64>,
    prev_ticks: Option<f64>,
    packets: u32,
    acc_pos: f64,
    acc_neg: f64,
}

/// timestamp_extrapolator.cc's kP11, kStartUpFilterDelayInPackets,
/// kAlarmThreshold, kAccDrift and kAccMaxError (ticks).
impl Extrapolator {
    const P11: f64 = 1e10;
    const STARTUP_PACKETS: u32 = 2;
    const ALARM: f64 = 60e3;
    const DRIFT: f64 = 6600.0;
    const MAX_ERROR: f64 = 7000.0;

    fn new(start: Time) -> Self {
        Extrapolator {
            start,
            prev: start,
            w: [TICKS_PER_MS, 0.0],
            p: [[1.0, 0.0], [0.0, Self::P11]],
            first_ticks: None,
            prev_ticks: None,
            packets: 0,
            acc_pos: 0.0,
            acc_neg: 0.0,
        }
    }

    fn update(&mut self, now: Time, ticks: f64) {
        // Ten seconds without a complete frame: start over.
        if now.saturating_since(self.prev) > Duration::from_secs(10) {
            *self = Extrapolator::new(now);
        } else {
            self.prev = now;
        }
        let t = (now - self.start).as_millis_f64();
        let first = *self.first_ticks.get_or_insert_with(|| {
            self.w[1] = -self.w[0] * t;
            ticks
        });
        let residual = (ticks - first) - t * self.w[0] - self.w[1];
        if self.delay_change(residual) && self.packets >= Self::STARTUP_PACKETS {
            self.p[1][1] = Self::P11;
        }
        if self.prev_ticks.is_some_and(|p| ticks < p) {
            return;
        }
        let p = self.p;
        let k0 = p[0][0] * t + p[0][1];
        let k1 = p[1][0] * t + p[1][1];
        let tpt = 1.0 + t * k0 + k1;
        let (k0, k1) = (k0 / tpt, k1 / tpt);
        self.w[0] += k0 * residual;
        self.w[1] += k1 * residual;
        self.p = [
            [p[0][0] - (k0 * t * p[0][0] + k0 * p[1][0]), p[0][1] - (k0 * t * p[0][1] + k0 * p[1][1])],
            [p[1][0] - (k1 * t * p[0][0] + k1 * p[1][0]), p[1][1] - (k1 * t * p[0][1] + k1 * p[1][1])],
        ];
        self.prev_ticks = Some(ticks);
        self.packets = (self.packets + 1).min(Self::STARTUP_PACKETS);
    }

    /// CUSUM of the residual (in ticks) for a sudden change of delay.
    fn delay_change(&mut self, error: f64) -> bool {
        let e = error.clamp(-Self::MAX_ERROR, Self::MAX_ERROR);
        self.acc_pos = (self.acc_pos + e - Self::DRIFT).max(0.0);
        self.acc_neg = (self.acc_neg + e + Self::DRIFT).min(0.0);
        if self.acc_pos > Self::ALARM || self.acc_neg < -Self::ALARM {
            (self.acc_pos, self.acc_neg) = (0.0, 0.0);
            return true;
        }
        false
    }

    fn local_time(&self, ticks: f64) -> Option<Time> {
        let first = self.first_ticks?;
        if self.packets < Self::STARTUP_PACKETS {
            let prev = self.prev_ticks?;
            return Some(self.prev + Duration::from_secs_f64((ticks - prev) / TICKS_PER_MS / 1e3));
        }
        if self.w[0] < 1e-3 {
            return Some(self.start);
        }
        let ms = ((ticks - first - self.w[1]) / self.w[0] + 0.5).floor();
        Some(self.start + Duration::from_micros((ms * 1e3) as i64))
    }
}

/// FrameDelayVariationKalmanFilter: delay variation = θ0·Δsize + θ1.
#[derive(Clone, Debug)]
struct Kalman {
    theta: [f64; 2],
    cov: [[f64; 2]; 2],
}

impl Kalman {
    /// 8 Gbps: the smallest slope (kMaxBandwidth).
    const MIN_SLOPE: f64 = 1e-6;

    fn new() -> Self {
        // 512 kbps as bytes per ms, no offset.
        Kalman { theta: [1.0 / (512e3 / 8.0), 0.0], cov: [[1e-4, 0.0], [0.0, 1e2]] }
    }

    fn total(&self, dsize: f64) -> f64 {
        self.theta[0] * dsize + self.theta[1]
    }

    fn update(&mut self, delay_ms: f64, dsize: f64, max_size: f64, var_noise: f64) {
        if max_size < 1.0 || var_noise <= 0.0 {
            return;
        }
        self.cov[0][0] += 2.5e-10;
        self.cov[1][1] += 1e-10;
        let innovation = delay_ms - self.total(dsize);
        let c = self.cov;
        let cto = [c[0][0] * dsize + c[0][1], c[1][0] * dsize + c[1][1]];
        let obs = ((300.0 * (-dsize.abs() / max_size).exp() + 1.0) * var_noise.sqrt()).max(1.0);
        let var = dsize * cto[0] + cto[1] + obs;
        if var.abs() < 1e-9 {
            return;
        }
        let k = [cto[0] / var, cto[1] / var];
        self.theta[0] = (self.theta[0] + k[0] * innovation).max(Self::MIN_SLOPE);
        self.theta[1] += k[1] * innovation;
        self.cov = [
            [(1.0 - k[0] * dsize) * c[0][0] - k[0] * c[1][0], (1.0 - k[0] * dsize) * c[0][1] - k[0] * c[1][1]],
            [c[1][0] * (1.0 - k[1]) - k[1] * dsize * c[0][0], c[1][1] * (1.0 - k[1]) - k[1] * dsize * c[0][1]],
        ];
    }
}

/// JitterEstimator, sizes in bytes and delays in ms.
#[derive(Clone, Debug)]
struct Jitter {
    var_noise: f64,
    avg_noise: f64,
    avg_size: f64,
    max_size: f64,
    var_size: f64,
    prev_size: Option<f64>,
    size_sum: f64,
    size_count: u32,
    alpha_count: u32,
    startup: u32,
    filtered: f64,
    prev_estimate: Option<f64>,
    kalman: Kalman,
    last_update: Option<Time>,
    /// Recent update intervals (µs) for the frame rate (fps_counter_, 30).
    intervals: VecDeque<i64>,
}

/// jitter_estimator.cc's kPhi, kPsi, kAlphaCountMax, kStartupDelaySamples,
/// kFsAccuStartupSamples, kNumStdDevDelayOutlier, kNumStdDevFrameSizeOutlier,
/// kDefaultMaxTimestampDeviationInSigmas, kNoiseStdDevs, kNoiseStdDevOffset
/// and OPERATING_SYSTEM_JITTER, in that order.
impl Jitter {
    const PHI: f64 = 0.97;
    const PSI: f64 = 0.9999;
    const ALPHA_COUNT_MAX: u32 = 400;
    const STARTUP_SAMPLES: u32 = 30;
    const SIZE_STARTUP: u32 = 5;
    const DELAY_OUTLIER_SIGMAS: f64 = 15.0;
    const SIZE_OUTLIER_SIGMAS: f64 = 3.0;
    const MAX_DEVIATION_SIGMAS: f64 = 3.5;
    const NOISE_SIGMAS: f64 = 2.33;
    const NOISE_OFFSET_MS: f64 = 30.0;
    const OS_JITTER_MS: f64 = 10.0;
    /// kDefaultAvgAndMaxFrameSize: 500 bytes.
    const DEFAULT_SIZE: f64 = 500.0;

    fn new() -> Self {
        Jitter {
            var_noise: 4.0,
            avg_noise: 0.0,
            avg_size: Self::DEFAULT_SIZE,
            max_size: Self::DEFAULT_SIZE,
            var_size: 100.0,
            prev_size: None,
            size_sum: 0.0,
            size_count: 0,
            alpha_count: 1,
            startup: 0,
            filtered: 0.0,
            prev_estimate: None,
            kalman: Kalman::new(),
            last_update: None,
            intervals: VecDeque::with_capacity(30),
        }
    }

    fn update(&mut self, now: Time, delay_ms: f64, size: f64) {
        if size <= 0.0 {
            return;
        }
        let dsize = size - self.prev_size.unwrap_or(0.0);
        if self.size_count < Self::SIZE_STARTUP {
            self.size_sum += size;
            self.size_count += 1;
        } else if self.size_count == Self::SIZE_STARTUP {
            self.avg_size = self.size_sum / f64::from(self.size_count);
            self.size_count += 1;
        }
        let avg = Self::PHI * self.avg_size + (1.0 - Self::PHI) * size;
        // Key frames do not move the average.
        if size < self.avg_size + 2.0 * self.var_size.sqrt() {
            self.avg_size = avg;
        }
        let d = size - avg;
        self.var_size = (Self::PHI * self.var_size + (1.0 - Self::PHI) * d * d).max(1.0);
        self.max_size = (Self::PSI * self.max_size).max(size);
        if self.prev_size.replace(size).is_none() {
            return;
        }
        let cap = (Self::MAX_DEVIATION_SIGMAS * self.var_noise.sqrt() + 0.5).floor();
        let delay_ms = delay_ms.clamp(-cap, cap);
        let deviation = delay_ms - self.kalman.total(dsize);
        let sd = self.var_noise.sqrt();
        if deviation.abs() < Self::DELAY_OUTLIER_SIGMAS * sd
            || size > self.avg_size + Self::SIZE_OUTLIER_SIGMAS * self.var_size.sqrt()
        {
            self.random_jitter(now, deviation);
            // Frames arriving right behind a delayed large frame say nothing
            // of the channel.
            if dsize > -0.25 * self.max_size {
                self.kalman.update(delay_ms, dsize, self.max_size, self.var_noise);
            }
        } else {
            let sigmas = if deviation >= 0.0 { Self::DELAY_OUTLIER_SIGMAS } else { -Self::DELAY_OUTLIER_SIGMAS };
            self.random_jitter(now, sigmas * sd);
        }
        if self.startup >= Self::STARTUP_SAMPLES {
            self.filtered = self.estimate();
        } else {
            self.startup += 1;
        }
    }

    fn fps(&self) -> f64 {
        let n = self.intervals.len();
        if n == 0 {
            return 0.0;
        }
        let mean = self.intervals.iter().sum::<i64>() as f64 / n as f64;
        if mean <= 0.0 {
            0.0
        } else {
            (1e6 / mean).min(200.0)
        }
    }

    fn random_jitter(&mut self, now: Time, d: f64) {
        if let Some(last) = self.last_update {
            if self.intervals.len() == 30 {
                self.intervals.pop_front();
            }
            self.intervals.push_back((now - last).as_micros());
        }
        self.last_update = Some(now);
        let mut alpha = f64::from(self.alpha_count - 1) / f64::from(self.alpha_count);
        self.alpha_count = (self.alpha_count + 1).min(Self::ALPHA_COUNT_MAX);
        // A low frame rate reacts as fast in time as 30 fps does.
        let fps = self.fps();
        if fps > 0.0 {
            let mut scale = 30.0 / fps;
            let (n, s) = (f64::from(self.alpha_count), f64::from(Self::STARTUP_SAMPLES));
            if self.alpha_count < Self::STARTUP_SAMPLES {
                scale = (n * scale + (s - n)) / s;
            }
            alpha = alpha.powf(scale);
        }
        let avg = alpha * self.avg_noise + (1.0 - alpha) * d;
        let var = alpha * self.var_noise + (1.0 - alpha) * (d - self.avg_noise) * (d - self.avg_noise);
        self.avg_noise = avg;
        self.var_noise = var.max(1.0);
    }

    fn estimate(&mut self) -> f64 {
        let noise = (Self::NOISE_SIGMAS * self.var_noise.sqrt() - Self::NOISE_OFFSET_MS).max(1.0);
        let mut ms = self.kalman.theta[0] * (self.max_size - self.avg_size) + noise;
        if ms < 1.0 {
            ms = self.prev_estimate.unwrap_or(1.0);
        } else if ms > 10_000.0 {
            ms = 10_000.0;
        }
        self.prev_estimate = Some(ms);
        ms
    }

    /// GetJitterEstimate without the RttMult trial's NACK term.
    fn jitter_ms(&mut self) -> f64 {
        let j = (self.estimate() + Self::OS_JITTER_MS).max(self.filtered);
        let fps = self.fps();
        if fps == 0.0 {
            j.max(0.0)
        } else if fps < 5.0 {
            0.0
        } else if fps < 10.0 {
            (fps - 5.0) / 5.0 * j
        } else {
            j.max(0.0)
        }
    }
}

/// WebRTC's receive-side timing for one stream.
#[derive(Clone, Debug)]
pub struct Timing {
    cfg: WebrtcPlayout,
    extrapolator: Option<Extrapolator>,
    jitter: Jitter,
    jitter_delay: Duration,
    current: Duration,
    /// Capture ticks and completion of the last frame that fed the jitter
    /// estimate (InterFrameDelayVariationCalculator).
    last: Option<(f64, Time)>,
    resets: u64,
    /// When the previous frame was (or will be) released to the decoder.
    last_release: Option<Time>,
}

/// kMaxWaitForFrame = 3 s (video_receive_stream2.cc): the stream times out
/// when no frame is released for this long; with NACK's 1 s history,
/// DetermineMaxWaitForFrame keeps it (3 × 1 s is not below it).
const MAX_WAIT_FOR_FRAME: Duration = Duration::from_secs(3);

fn ticks(capture: Time) -> f64 {
    capture.as_micros() as f64 * TICKS_PER_MS / 1e3
}

impl Timing {
    pub fn new(cfg: WebrtcPlayout) -> Self {
        Timing {
            cfg,
            extrapolator: None,
            jitter: Jitter::new(),
            jitter_delay: Duration::ZERO,
            current: Duration::ZERO,
            last: None,
            resets: 0,
            last_release: None,
        }
    }

    /// A frame became complete (IncomingTimestamp), unless a retransmission
    /// delayed it.
    pub fn on_complete(&mut self, capture: Time, complete: Time, retransmitted: bool) {
        if !retransmitted {
            self.extrapolator.get_or_insert_with(|| Extrapolator::new(complete)).update(complete, ticks(capture));
        }
    }

    fn target(&self) -> Duration {
        self.cfg.min_delay.max(self.jitter_delay + self.cfg.decode_time + self.cfg.render_delay)
    }

    /// The playout delay the next frame gets (VCMTiming current delay).
    pub fn current_delay(&self) -> Duration {
        self.current.clamp(self.cfg.min_delay, self.cfg.max_delay)
    }

    /// VCMTiming::RenderTime: the extrapolated completion (`now` without a
    /// line) plus the current delay, and that delay.
    fn render_time(&self, now: Time, capture: Time) -> (Time, Duration) {
        let expected = self.extrapolator.as_ref().and_then(|e| e.local_time(ticks(capture))).unwrap_or(now);
        let delay = self.current_delay();
        (expected + delay, delay)
    }

    /// JitterEstimator::Reset and VCMTiming::Reset (the extrapolator starts
    /// over at `now`). The minimum playout delay stays: libwebrtc's Reset
    /// zeroes it, but the next frame's playout-delay setting restores it.
    fn reset(&mut self, now: Time) {
        self.jitter = Jitter::new();
        self.extrapolator = Some(Extrapolator::new(now));
        self.jitter_delay = Duration::ZERO;
        self.current = Duration::ZERO;
        self.resets += 1;
    }

    /// Times the timing was reset (`max_video_delay`).
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// When the decoder takes the next frame: the last timed frame's release.
    /// The next frame is timed no earlier (VideoStreamBufferController asks
    /// for it once the previous one went to the decoder).
    pub fn busy_until(&self) -> Option<Time> {
        self.last_release
    }

    /// Frame `capture` of `size` bytes, complete at `complete`, is next to
    /// decode at `now` (not before `busy_until`): when it is shown, and the
    /// playout (current) delay its render time was given.
    pub fn decode(
        &mut self,
        now: Time,
        capture: Time,
        complete: Time,
        size: u64,
        retransmitted: bool,
    ) -> (Time, Duration) {
        let (mut render, mut delay) = self.render_time(now, capture);
        let mut now = now;
        // Released at its decode slot, but no later than the stream's timeout
        // from the previous release less 1 ms
        // (VideoStreamBufferController::MaybeScheduleFrameForRelease;
        // FrameDecodeTiming clamps the wait to it).
        let ready = self.last_release.map_or(now, |r| now.max(r));
        let latest =
            self.last_release.map_or(ready, |r| (r + MAX_WAIT_FOR_FRAME - Duration::from_millis(1)).max(ready));
        let slot = render - self.cfg.decode_time - self.cfg.render_delay;
        let mut release = slot.max(ready).min(latest);
        if let Some(max) = self.cfg.max_video_delay {
            // OnFrameReady's checks, when the frame is released.
            if (render - release).max(release - render) > max || self.target() > max {
                now = release;
                self.reset(now);
                (render, delay) = self.render_time(now, capture);
                release = now;
            }
        }
        self.last_release = Some(release);
        let decode_at = release;
        if !retransmitted {
            let t = ticks(capture);
            if let Some((prev_t, prev_c)) = self.last.filter(|&(p, _)| t > p) {
                let variation = (complete - prev_c).as_millis_f64() - (t - prev_t) / TICKS_PER_MS;
                self.jitter.update(now, variation, size as f64);
            }
            if self.last.is_none_or(|(p, _)| t > p) {
                self.last = Some((t, complete));
            }
            let j = Duration::from_secs_f64(self.jitter.jitter_ms() / 1e3);
            if j != self.jitter_delay {
                self.jitter_delay = j;
                if self.current == Duration::ZERO {
                    self.current = j;
                }
            }
            // UpdateCurrentDelay(render_time, actual_decode_time).
            let delayed = (decode_at - render) + self.cfg.decode_time + self.cfg.render_delay;
            if delayed >= Duration::ZERO {
                let target = self.target();
                self.current = if self.current + delayed <= target { self.current + delayed } else { target };
            }
        }
        (render.max(decode_at + self.cfg.decode_time + self.cfg.render_delay), delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames every 33 ms arriving `transit(i)` after capture, all 5000 B.
    fn run(t: &mut Timing, frames: std::ops::Range<i64>, transit: impl Fn(i64) -> i64) -> Vec<(Time, Time)> {
        frames
            .map(|i| {
                let capture = Time::from_micros(i * 33_333);
                let complete = capture + Duration::from_millis(transit(i));
                t.on_complete(capture, complete, false);
                (capture, t.decode(complete, capture, complete, 5000, false).0)
            })
            .collect()
    }

    #[test]
    fn a_steady_stream_plays_out_after_decode_render_and_a_small_jitter_margin() {
        let mut t = Timing::new(WebrtcPlayout::default());
        let shown = run(&mut t, 0..300, |_| 40);
        // Constant transit: the jitter estimate falls to its 1 ms floor plus
        // 10 ms of OS jitter; decode 5 + render 10 on top: 26 ms after the
        // frame completed, 66 ms after capture.
        let (capture, show) = shown[299];
        let latency = (show - capture).as_millis_f64();
        assert!((60.0..75.0).contains(&latency), "{latency} ms");
        assert!(t.current_delay() >= Duration::from_millis(25), "{:?}", t.current_delay());
        // Shown in capture order, one frame interval apart.
        assert!(shown.windows(2).all(|w| w[1].1 > w[0].1));
    }

    fn mean_latency_ms(shown: &[(Time, Time)]) -> f64 {
        shown.iter().map(|&(c, s)| (s - c).as_millis_f64()).sum::<f64>() / shown.len() as f64
    }

    #[test]
    fn jitter_raises_the_playout_delay_and_its_end_lowers_it() {
        let mut t = Timing::new(WebrtcPlayout::default());
        let calm = mean_latency_ms(&run(&mut t, 0..300, |_| 40)[100..]);
        let calm_jitter = t.jitter_delay;
        // 0-30 ms of transit jitter for 30 s: the noise variance and the
        // jitter delay grow, and frames wait for the late ones.
        let shown = run(&mut t, 300..1200, |i| 40 + [0, 30, 5, 25, 10, 0, 20][(i % 7) as usize]);
        let jittery = mean_latency_ms(&shown[600..]);
        let jittery_delay = t.jitter_delay;
        // The buffer absorbs the jitter: shown at an even latency (the
        // transit itself spreads by 11 ms).
        let spread = (shown[600..].iter().map(|&(c, s)| ((s - c).as_millis_f64() - jittery).powi(2)).sum::<f64>()
            / 300.0)
            .sqrt();
        eprintln!(
            "calm {calm:.1} ms ({calm_jitter:?}), jittery {jittery:.1} ms ({jittery_delay:?}), spread {spread:.1} ms"
        );
        assert!(jittery > calm + 10.0, "{calm} -> {jittery} ms");
        assert!(jittery_delay > calm_jitter + Duration::from_millis(5), "{calm_jitter:?} -> {jittery_delay:?}");
        assert!(spread < 4.0, "{spread} ms");
        // A minute of calm again: the jitter delay comes back down.
        let again = mean_latency_ms(&run(&mut t, 1200..3000, |_| 40)[1500..]);
        eprintln!("calm again {again:.1} ms ({:?})", t.jitter_delay);
        assert!(t.jitter_delay < jittery_delay - Duration::from_millis(5), "{jittery_delay:?} -> {:?}", t.jitter_delay);
        assert!(again < jittery - 5.0, "{jittery} -> {again} ms");
    }

    /// After 100 steady frames, the extrapolator's line is moved 20 s ahead
    /// (as a line bent by an outage can place frames), and the next frame
    /// is timed: when it is shown, after it completed.
    fn shown_after_a_bent_line(cfg: WebrtcPlayout) -> (Duration, u64) {
        let mut t = Timing::new(cfg);
        run(&mut t, 0..100, |_| 40);
        if let Some(e) = t.extrapolator.as_mut() {
            e.w[1] -= 20_000.0 * e.w[0];
        }
        let capture = Time::from_micros(100 * 33_333);
        let complete = capture + Duration::from_millis(40);
        t.on_complete(capture, complete, false);
        let (show, _) = t.decode(complete, capture, complete, 5000, false);
        (show - complete, t.resets())
    }

    #[test]
    fn max_video_delay_resets_the_timing_of_a_frame_rendered_too_far_ahead() {
        // The frame's own update pulls the line back part of the way.
        let (held, resets) = shown_after_a_bent_line(WebrtcPlayout::default());
        assert!(held > Duration::from_secs(12), "{held:?}");
        assert_eq!(resets, 0);
        let on = WebrtcPlayout { max_video_delay: Some(Duration::from_secs(10)), ..WebrtcPlayout::default() };
        // The frame waits for its slot until the stream's 3 s timeout, then
        // FrameHasBadRenderTiming: timed afresh, it is decoded and rendered
        // at once (decode 5 ms + render 10 ms).
        let (held, resets) = shown_after_a_bent_line(on);
        assert_eq!(resets, 1);
        assert!(
            held > Duration::from_millis(2900) && held <= MAX_WAIT_FOR_FRAME + Duration::from_millis(15),
            "{held:?}"
        );
        // 25 s is a bound the frame is within: no reset.
        let loose = WebrtcPlayout { max_video_delay: Some(Duration::from_secs(25)), ..on };
        let (held, resets) = shown_after_a_bent_line(loose);
        assert!(held > Duration::from_secs(12) && resets == 0, "{held:?} {resets}");
    }

    #[test]
    fn a_target_delay_above_max_video_delay_resets_the_timing() {
        let cfg = WebrtcPlayout { max_video_delay: Some(Duration::from_secs(1)), ..WebrtcPlayout::default() };
        let mut t = Timing::new(cfg);
        run(&mut t, 0..100, |_| 40);
        // A jitter delay above the bound (as a long outage leaves it).
        t.jitter_delay = Duration::from_secs(2);
        run(&mut t, 100..101, |_| 40);
        assert_eq!(t.resets(), 1);
        assert!(t.current_delay() < Duration::from_secs(1), "{:?}", t.current_delay());
    }

    /// Frames completing at `complete(i)` (sorted), timed as the receiver
    /// times them: the next frame once it is complete and the decoder took
    /// the previous one. Returns each frame's hold (shown − complete).
    fn holds(t: &mut Timing, n: i64, complete: impl Fn(i64) -> Time) -> Vec<Duration> {
        let mut out = vec![];
        let (mut next, mut now) = (0i64, Time::ZERO);
        let mut arrived = 0i64;
        while next < n {
            let busy = t.busy_until().unwrap_or(Time::ZERO);
            // The next event: a completion, or the decoder freeing up.
            let wake = if arrived > next { busy.max(now) } else { complete(arrived).max(now) };
            now = wake;
            while arrived < n && complete(arrived) <= now {
                t.on_complete(Time::from_micros(arrived * 33_333), complete(arrived), false);
                arrived += 1;
            }
            if arrived > next && busy <= now {
                let capture = Time::from_micros(next * 33_333);
                let (shown, _) = t.decode(now, capture, complete(next), 5000, false);
                out.push(shown - complete(next));
                next += 1;
            }
        }
        out
    }

    /// A stream whose first frame came through, then nothing for 7.5 s (a
    /// cellular trace's first seconds), then the queued frames in 40 ms and
    /// the stream on time: the extrapolator's first two points span the
    /// outage and bend its line (slope near zero), so a frame timed in the
    /// burst renders seconds ahead. Timed one at a time, only the first of
    /// the burst is; the rest are timed once the line has recovered from
    /// the frames behind them.
    #[test]
    fn a_burst_after_an_outage_is_not_held_behind_a_bent_line() {
        let outage_end = Time::from_millis(8_000);
        let complete = |i: i64| {
            let capture = Time::from_micros(i * 33_333);
            if i == 0 {
                capture + Duration::from_millis(40)
            } else if capture < outage_end {
                outage_end + Duration::from_micros(i * 160)
            } else {
                capture + Duration::from_millis(40)
            }
        };
        let mut t = Timing::new(WebrtcPlayout::default());
        let h = holds(&mut t, 900, complete);
        let worst = h.iter().max().copied().unwrap_or_default();
        eprintln!("worst hold {worst:?}, last {:?}", h.last());
        // At most the stream's 3 s timeout past the burst, plus the render
        // delay of the frame released then.
        assert!(worst < Duration::from_millis(3_200), "{worst:?}");
        assert!(*h.last().unwrap() < Duration::from_millis(100), "{:?}", h.last());
        // Timing every frame as it completes (the decoder never busy) holds
        // the burst behind render times many seconds ahead.
        let mut t = Timing::new(WebrtcPlayout::default());
        let at_completion: Vec<Duration> = (0..900)
            .map(|i| {
                let capture = Time::from_micros(i * 33_333);
                t.on_complete(capture, complete(i), false);
                t.last_release = None;
                let (shown, _) = t.decode(complete(i), capture, complete(i), 5000, false);
                shown - complete(i)
            })
            .collect();
        let bent = at_completion.iter().max().copied().unwrap_or_default();
        eprintln!("timed at completion: worst hold {bent:?}");
        assert!(bent > Duration::from_secs(5), "{bent:?}");
    }

    #[test]
    fn a_late_frame_is_shown_when_decoded_not_before() {
        let mut t = Timing::new(WebrtcPlayout::default());
        run(&mut t, 0..100, |_| 40);
        let capture = Time::from_micros(100 * 33_333);
        let complete = capture + Duration::from_millis(400);
        let (show, _) = t.decode(complete, capture, complete, 5000, true);
        assert_eq!(show, complete + Duration::from_millis(15));
    }
}
