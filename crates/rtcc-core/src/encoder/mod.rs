//! Encoder models (DESIGN.md §3): how many bytes a frame takes for a target
//! bitrate. `ideal` is exact, `noise` adds Gaussian frame-size error (PIBES
//! eq. 7), `lagging` also follows target changes slowly, as real VP8 does
//! (Dumbo thesis Fig. 3-8), `content` sizes frames by the content's SI/TI
//! through x264-like rate control (BurstRTC §II-B; `content.rs`). The
//! encoder is a pure state machine: time comes in as `now`, randomness from
//! the injected `Rng`, no per-frame allocation.

mod content;

pub use content::{ContentConfig, ContentProfile, RateControl};

use crate::content::Complexity;
use crate::controller::{ConfigError, Param, ParamInfo, Params};
use crate::packet::Payload;
use crate::resolution::Resolution;
use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

/// What the sender needs of an encoder, called at each frame instant in
/// simulated time: the models here, or a real codec plugged in from outside
/// the core (rtcc-video's VP8/H.264). `Send` so a whole call can move to
/// another thread.
pub trait FrameEncoder: Send {
    /// Registry name ("lagging", "vp8", ...).
    fn kind(&self) -> &str;
    /// Encode frame `id`, captured at `now`, at `resolution` for `target`.
    /// `None`: the encoder's own rate control dropped the frame (libvpx
    /// `rc_dropframe_thresh`), and `id` is not used.
    fn encode_frame(&mut self, id: u32, now: Time, target: DataRate, resolution: Resolution) -> Option<EncodedFrame>;
    /// Next frame is a key frame (PLI, resolution switch).
    fn request_key_frame(&mut self);
    /// The sender did not encode the frame at `now` (it paused encoding).
    fn skip(&mut self, now: Time, target: DataRate);
    /// Rate the encoder is producing now, for time series.
    fn output_rate(&self) -> DataRate;
    /// The first error a real codec met (its frames are then missing or
    /// wrong, so the run's quality numbers are not to be trusted).
    fn failure(&self) -> Option<&str> {
        None
    }
}

/// Smallest frame any model emits: an all-skip VP8 delta frame still carries
/// its frame header and per-macroblock skip flags (RFC 6386 §9, §19.3), tens
/// of bytes.
const MIN_FRAME_BYTES: f64 = 50.0;

/// Noise never shrinks a frame below this share of its mean size, so a wide
/// sigma cannot produce empty frames.
const MIN_NOISE_FACTOR: f64 = 0.1;

/// Frame-size error of the `noise` and `lagging` models. PIBES (eq. 7) uses
/// N(0, 0.025); 0.1 is a rougher, more realistic default, and BurstRTC reports
/// far wider variation.
const DEFAULT_SIGMA: f64 = 0.1;

/// Key frame size / delta frame size. WebRTC caps a VP8 key frame between 3x
/// and 9x the per-frame budget at 30 fps (libvpx_vp8_encoder.cc
/// MaxIntraTarget: 600 ms buffer * 0.5 * fps / 10 = 900 %, floor 300 %); 5 sits
/// between the two.
const DEFAULT_KEY_RATIO: f64 = 5.0;

// The `lagging` defaults are libvpx VP8 as measured by `rtcc calibrate-encoder`
// (crates/rtcc-sim/profiles/vp8.toml): WebRTC's VP8 settings, 640x360
// talking-head content, target 500 kbps <-> 2 Mbps every 5 s, the output rate
// in a 1 s window fitted with this model through the same window. libvpx 1.12
// alone reached 90 % of a rise in 1.5-1.8 s of that window (0.9 s is the
// window's own delay), faster than the "nearly 3 seconds" of the Dumbo
// thesis's libwebrtc (dumbo.txt Fig. 3-8, §3), which its reproduction keeps
// with tau_up = 1.3 s.

/// Lag towards a higher target (fitted: 0.751 s).
const DEFAULT_TAU_UP: Duration = Duration::from_millis(750);

/// Lag towards a lower target (fitted: 0.129 s): libvpx coarsens its
/// quantizer at once to keep its buffer from overflowing.
const DEFAULT_TAU_DOWN: Duration = Duration::from_millis(130);

/// Spread of delta-frame sizes in steady state (measured 0.2525; the
/// rate-quality clips gave 0.10-0.30 at 360p).
const DEFAULT_LAGGING_SIGMA: f64 = 0.25;

/// A requested key frame over the delta frames around it (measured 3.06, at
/// WebRTC's 300 % floor of MaxIntraTarget).
const DEFAULT_LAGGING_KEY_RATIO: f64 = 3.0;

/// Periodic key frames of the `lagging` model: WebRTC's VP8 default is one
/// every 3000 frames (video_encoder.cc GetDefaultVp8Settings, keyFrameInterval
/// -> kf_max_dist), 100 s at 30 fps; all others are requested (PLI).
const DEFAULT_LAGGING_KEY_INTERVAL: Duration = Duration::from_secs(100);

/// Encoder models by name, for error messages and listings.
pub const KINDS: &[&str] = &["ideal", "noise", "lagging", "content"];

const SIGMA_DOC: &str = "std of the relative frame-size error";
const KEY_INTERVAL_DOC: &str = "time between periodic key frames; \"none\" or 0 = only first and requested frames";
const KEY_RATIO_DOC: &str = "key frame size / delta frame size";

const NOISE_SIGMA: Param<f64> = Param::number("sigma", DEFAULT_SIGMA, 0.0, 1.0, SIGMA_DOC);
const NOISE_KEY_INTERVAL: Param<Option<Duration>> =
    Param::optional_duration("key_interval", None, Duration::ZERO, Duration::MAX, "none", KEY_INTERVAL_DOC);
const NOISE_KEY_RATIO: Param<f64> = Param::number("key_ratio", DEFAULT_KEY_RATIO, 1.0, 20.0, KEY_RATIO_DOC);
const NOISE_PROFILE: Param<String> = Param::text("profile", "none", "load sigma and key_ratio from an encoder profile");

const TAU_UP: Param<Duration> = Param::duration(
    "tau_up",
    DEFAULT_TAU_UP,
    Duration::ZERO,
    Duration::MAX,
    "time constant following a higher target (VP8, measured)",
)
.above_min();
const TAU_DOWN: Param<Duration> = Param::duration(
    "tau_down",
    DEFAULT_TAU_DOWN,
    Duration::ZERO,
    Duration::MAX,
    "time constant following a lower target (VP8, measured)",
)
.above_min();
const LAGGING_SIGMA: Param<f64> = Param::number("sigma", DEFAULT_LAGGING_SIGMA, 0.0, 1.0, SIGMA_DOC);
const LAGGING_KEY_INTERVAL: Param<Option<Duration>> = Param::optional_duration(
    "key_interval",
    Some(DEFAULT_LAGGING_KEY_INTERVAL),
    Duration::ZERO,
    Duration::MAX,
    "none",
    KEY_INTERVAL_DOC,
);
const LAGGING_KEY_RATIO: Param<f64> = Param::number("key_ratio", DEFAULT_LAGGING_KEY_RATIO, 1.0, 20.0, KEY_RATIO_DOC);
const LAGGING_PROFILE: Param<String> =
    Param::text("profile", "none", "load these from an encoder profile: \"vp8\", \"h264\" or a file");

const NOISE_PARAMS: &[ParamInfo] =
    &[NOISE_SIGMA.info(), NOISE_KEY_INTERVAL.info(), NOISE_KEY_RATIO.info(), NOISE_PROFILE.info()];

const LAGGING_PARAMS: &[ParamInfo] = &[
    TAU_UP.info(),
    TAU_DOWN.info(),
    LAGGING_SIGMA.info(),
    LAGGING_KEY_INTERVAL.info(),
    LAGGING_KEY_RATIO.info(),
    LAGGING_PROFILE.info(),
];

/// One encoded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedFrame {
    pub size: DataSize,
    pub key: bool,
    /// The bitstream of a real codec; `None` for the models, which only size
    /// frames.
    pub payload: Option<Payload>,
    /// ITU-T P.910 spatial and temporal information of the frame's picture
    /// (TI against the previous capture); 0 when the encoder does not know
    /// them (the models other than `content`).
    pub si: f32,
    pub ti: f32,
}

impl EncodedFrame {
    /// A frame of `size` without a bitstream or SI/TI.
    pub fn sized(size: DataSize, key: bool) -> EncodedFrame {
        EncodedFrame { size, key, payload: None, si: 0.0, ti: 0.0 }
    }
}

/// Which encoder model, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum EncoderConfig {
    /// Every frame is exactly target / fps, key frames included (key ratio 1):
    /// the reference that isolates the controller from encoder effects.
    Ideal,
    /// Frame sizes `mean * (1 + N(0, sigma))`, at least 10 % of the mean.
    Noise { sigma: f64, key_interval: Option<Duration>, key_ratio: f64 },
    /// The encoder's own rate follows the target with a first-order lag
    /// (`tau_up` rising, `tau_down` falling), plus `Noise`'s frame-size error.
    /// Not modelled: the overshoot of a real encoder for a few frames after a
    /// drop.
    Lagging { tau_up: Duration, tau_down: Duration, sigma: f64, key_interval: Option<Duration>, key_ratio: f64 },
    /// Frame sizes from a content track (SI/TI, scene cuts) through x264-like
    /// one-pass ABR (`content.rs`); SI and TI are reported with each frame.
    Content(ContentConfig),
}

impl EncoderConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            EncoderConfig::Ideal => "ideal",
            EncoderConfig::Noise { .. } => "noise",
            EncoderConfig::Lagging { .. } => "lagging",
            EncoderConfig::Content(_) => "content",
        }
    }

    /// Parameters documented for `kind`; empty for an unknown kind.
    pub fn param_info(kind: &str) -> &'static [ParamInfo] {
        match kind {
            "noise" => NOISE_PARAMS,
            "lagging" => LAGGING_PARAMS,
            "content" => content::PARAMS,
            _ => &[],
        }
    }

    pub fn from_params(kind: &str, p: &Params) -> Result<Self, ConfigError> {
        if !KINDS.contains(&kind) {
            return Err(ConfigError::invalid(
                "kind",
                format!("unknown encoder '{kind}' (known: {})", KINDS.join(", ")),
            ));
        }
        p.check_known(Self::param_info(kind))?;
        Ok(match kind {
            "ideal" => EncoderConfig::Ideal,
            "noise" => EncoderConfig::Noise {
                sigma: p.get(&NOISE_SIGMA)?,
                key_interval: p.get(&NOISE_KEY_INTERVAL)?,
                key_ratio: p.get(&NOISE_KEY_RATIO)?,
            },
            "content" => EncoderConfig::Content(ContentConfig::from_params(p)?),
            _ => EncoderConfig::Lagging {
                tau_up: p.get(&TAU_UP)?,
                tau_down: p.get(&TAU_DOWN)?,
                sigma: p.get(&LAGGING_SIGMA)?,
                key_interval: p.get(&LAGGING_KEY_INTERVAL)?,
                key_ratio: p.get(&LAGGING_KEY_RATIO)?,
            },
        })
    }

    /// (sigma, key_interval, key_ratio, lag time constants up/down).
    fn parts(&self) -> (f64, Option<Duration>, f64, Option<(Duration, Duration)>) {
        match *self {
            EncoderConfig::Ideal => (0.0, None, 1.0, None),
            EncoderConfig::Noise { sigma, key_interval, key_ratio } => (sigma, key_interval, key_ratio, None),
            EncoderConfig::Lagging { tau_up, tau_down, sigma, key_interval, key_ratio } => {
                (sigma, key_interval, key_ratio, Some((tau_up, tau_down)))
            }
            // Its own frame-size error and rate control (`content.rs`).
            EncoderConfig::Content(c) => (0.0, c.key_interval, c.key_ratio, None),
        }
    }
}

/// A frame-size model driven once per frame instant.
#[derive(Clone, Debug)]
pub struct Encoder {
    cfg: EncoderConfig,
    rng: Rng,
    frame_interval: Duration,
    sigma: f64,
    key_ratio: f64,
    key_interval: Option<Duration>,
    lag: Option<(f64, f64)>,
    /// Delta frame size / (rate * frame interval), so that with periodic key
    /// frames the average over a key interval is the encoder's rate.
    delta_share: f64,
    /// The rate the encoder is aiming for, bits/s.
    rate: f64,
    last_call: Option<Time>,
    last_key: Option<Time>,
    key_pending: bool,
    /// The `content` model's track and rate control.
    content: Option<content::ContentState>,
}

impl Encoder {
    pub fn new(cfg: EncoderConfig, frame_interval: Duration, mut rng: Rng) -> Self {
        debug_assert!(frame_interval.is_positive(), "frame interval {frame_interval}");
        let frame_interval = frame_interval.max(Duration::from_micros(1));
        let (sigma, key_interval, key_ratio, lag) = cfg.parts();
        let content = match &cfg {
            EncoderConfig::Content(c) => Some(content::ContentState::new(*c, &mut rng)),
            _ => None,
        };
        // G frames per key interval: one key (key_ratio) + G-1 deltas (1 each)
        // must sum to G frame budgets. The `content` model's rate control
        // pays key frames back itself.
        let delta_share = match key_interval.filter(|_| content.is_none()) {
            Some(k) => {
                let g = (k.as_micros() as f64 / frame_interval.as_micros() as f64).round().max(1.0);
                g / (g - 1.0 + key_ratio)
            }
            None => 1.0,
        };
        Encoder {
            cfg,
            rng,
            frame_interval,
            sigma,
            key_ratio,
            key_interval,
            lag: lag.map(|(up, down)| (up.as_secs_f64(), down.as_secs_f64())),
            delta_share,
            rate: 0.0,
            last_call: None,
            last_key: None,
            key_pending: true,
            content,
        }
    }

    pub fn config(&self) -> &EncoderConfig {
        &self.cfg
    }

    /// Encode the frame captured at `now` for `target` (bits/s). Called once
    /// per frame instant that is not skipped.
    pub fn encode(&mut self, now: Time, target: DataRate) -> EncodedFrame {
        self.advance(now, target);
        let key = self.key_pending || self.periodic_key_due(now);
        self.key_pending = false;
        if key {
            // A forced key frame restarts the period, as libvpx does.
            self.last_key = Some(now);
        }
        let budget = self.rate * self.frame_interval.as_secs_f64() / 8.0;
        if let Some(c) = &mut self.content {
            let bytes = c.frame_bytes(now, budget, self.frame_interval, key, &mut self.rng);
            let (si, ti) = (c.now.si as f32, c.now.ti as f32);
            return EncodedFrame { si, ti, ..EncodedFrame::sized(DataSize::from_bytes(bytes.round() as u64), key) };
        }
        let mut bytes = budget * self.delta_share * if key { self.key_ratio } else { 1.0 };
        if self.sigma > 0.0 {
            bytes *= (1.0 + self.sigma * self.rng.normal()).max(MIN_NOISE_FACTOR);
        }
        EncodedFrame::sized(DataSize::from_bytes(bytes.max(MIN_FRAME_BYTES).round() as u64), key)
    }

    /// Next frame is a key frame (PLI / first frame).
    pub fn request_key_frame(&mut self) {
        self.key_pending = true;
    }

    /// Frame skipped at `now` (the sender paused encoding): the rate-control
    /// state still advances in time.
    pub fn skip(&mut self, now: Time, target: DataRate) {
        self.advance(now, target);
    }

    /// The `content` model's content at the last frame instant (encoded or
    /// skipped); `None` for the other models.
    pub fn complexity(&self) -> Option<Complexity> {
        self.content.as_ref().map(|c| c.now)
    }

    /// Rate the encoder is currently producing on average (for time series).
    pub fn output_rate(&self) -> DataRate {
        match &self.content {
            Some(c) => DataRate::from_bps_f64(c.output_rate()),
            None => DataRate::from_bps_f64(self.rate),
        }
    }

    /// Move the encoder's rate towards `target` over the time since the last
    /// call: r += (target - r)(1 - e^(-dt/tau)), exact for any frame rate.
    fn advance(&mut self, now: Time, target: DataRate) {
        let target = target.bps() as f64;
        self.rate = match (self.lag, self.last_call) {
            (Some((up, down)), Some(prev)) => {
                let dt = now.saturating_since(prev).as_secs_f64();
                let tau = if target > self.rate { up } else { down };
                self.rate + (target - self.rate) * (1.0 - (-dt / tau).exp())
            }
            // The first frame is encoded at the configured start rate.
            _ => target,
        };
        debug_assert!(self.rate.is_finite() && self.rate >= 0.0);
        self.last_call = Some(now);
        if let Some(c) = &mut self.content {
            c.advance(now, DataRate::from_bps_f64(self.rate));
        }
    }

    /// Half a frame of slack, so a key interval of k frame intervals gives a
    /// key frame every k frames despite microsecond rounding.
    fn periodic_key_due(&self, now: Time) -> bool {
        match (self.key_interval, self.last_key) {
            (Some(k), Some(last)) => now.saturating_since(last) + self.frame_interval / 2 >= k,
            _ => false,
        }
    }
}

impl FrameEncoder for Encoder {
    fn kind(&self) -> &str {
        self.cfg.kind()
    }
    fn encode_frame(&mut self, _id: u32, now: Time, target: DataRate, _res: Resolution) -> Option<EncodedFrame> {
        Some(self.encode(now, target))
    }
    fn request_key_frame(&mut self) {
        Encoder::request_key_frame(self);
    }
    fn skip(&mut self, now: Time, target: DataRate) {
        Encoder::skip(self, now, target);
    }
    fn output_rate(&self) -> DataRate {
        Encoder::output_rate(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::ParamValue;

    const T30: Duration = Duration::from_micros(33_333);

    fn noise(sigma: f64, key_interval: Option<Duration>, key_ratio: f64) -> EncoderConfig {
        EncoderConfig::Noise { sigma, key_interval, key_ratio }
    }

    fn lagging_default() -> EncoderConfig {
        EncoderConfig::from_params("lagging", &Params::new()).unwrap()
    }

    /// Drive `enc` at 30 fps from `from` for `secs`, target from `rate(t)`;
    /// returns the total bytes and the time after the last frame.
    fn run(enc: &mut Encoder, from: Time, secs: f64, rate: impl Fn(Time) -> DataRate) -> (u64, Time) {
        let mut t = from;
        let mut bytes = 0;
        while t < from + Duration::from_secs_f64(secs) {
            bytes += enc.encode(t, rate(t)).size.bytes();
            t += T30;
        }
        (bytes, t)
    }

    #[test]
    fn ideal_is_exact() {
        let mut e = Encoder::new(EncoderConfig::Ideal, T30, Rng::new(1));
        // 2 Mbps * 33.333 ms / 8 = 8333.25 B.
        let first = e.encode(Time::ZERO, DataRate::from_mbps(2));
        assert_eq!(first, EncodedFrame::sized(DataSize::from_bytes(8333), true));
        for i in 1..100 {
            let f = e.encode(Time::ZERO + T30 * i, DataRate::from_mbps(2));
            assert_eq!(f, EncodedFrame::sized(DataSize::from_bytes(8333), false));
        }
        e.request_key_frame();
        let f = e.encode(Time::ZERO + T30 * 100, DataRate::from_kbps(600));
        assert_eq!(f, EncodedFrame::sized(DataSize::from_bytes(2500), true));
        assert_eq!(e.output_rate(), DataRate::from_kbps(600));
    }

    #[test]
    fn floor_applies_at_zero_rate() {
        let mut e = Encoder::new(EncoderConfig::Ideal, T30, Rng::new(1));
        assert_eq!(e.encode(Time::ZERO, DataRate::ZERO).size, DataSize::from_bytes(50));
    }

    #[test]
    fn noise_mean_and_spread() {
        let mut e = Encoder::new(noise(0.1, None, 5.0), T30, Rng::new(42));
        let target = DataRate::from_mbps(2);
        let mean = 2e6 * 0.033333 / 8.0;
        let first = e.encode(Time::ZERO, target);
        assert!(first.key);
        let n = 10_000;
        let (mut sum, mut sum2, mut total) = (0.0, 0.0, first.size.bytes() as f64);
        for i in 1..n {
            let f = e.encode(Time::ZERO + T30 * i, target);
            assert!(!f.key);
            let x = f.size.bytes() as f64 / mean - 1.0;
            sum += x;
            sum2 += x * x;
            total += f.size.bytes() as f64;
        }
        let m = n as f64 - 1.0;
        let std = (sum2 / m - (sum / m).powi(2)).sqrt();
        let rate = total * 8.0 / (n as f64 * 0.033333);
        assert!((rate / 2e6 - 1.0).abs() < 0.01, "rate {rate}");
        assert!((std / 0.1 - 1.0).abs() < 0.1, "std {std}");
    }

    #[test]
    fn periodic_key_frames_keep_the_average() {
        // 1 s at 30 fps: G = 30, delta = 8333.25 * 30 / 34 = 7352.9 B,
        // key = 5x = 36764.3 B; 36764 + 29 * 7353 = 250001 B ~ 2 Mbps * 1 s.
        let mut e = Encoder::new(noise(0.0, Some(Duration::from_secs(1)), 5.0), T30, Rng::new(1));
        let target = DataRate::from_mbps(2);
        let frames: Vec<_> = (0..90).map(|i| e.encode(Time::ZERO + T30 * i, target)).collect();
        for (i, f) in frames.iter().enumerate() {
            assert_eq!(f.key, i % 30 == 0, "frame {i}");
            assert_eq!(f.size.bytes(), if f.key { 36764 } else { 7353 }, "frame {i}");
        }
        assert_eq!(frames[..30].iter().map(|f| f.size.bytes()).sum::<u64>(), 250_001);
    }

    #[test]
    fn requested_key_frame_is_key_ratio_times_delta() {
        let mut e = Encoder::new(noise(0.0, None, 5.0), T30, Rng::new(1));
        let target = DataRate::from_mbps(2);
        assert!(e.encode(Time::ZERO, target).key);
        let delta = e.encode(Time::ZERO + T30, target);
        assert_eq!(delta, EncodedFrame::sized(DataSize::from_bytes(8333), false));
        e.request_key_frame();
        let key = e.encode(Time::ZERO + T30 * 2, target);
        // 5 * 8333.25 = 41666.25 B.
        assert_eq!(key, EncodedFrame::sized(DataSize::from_bytes(41666), true));
        assert!(!e.encode(Time::ZERO + T30 * 3, target).key);
    }

    #[test]
    fn request_restarts_the_key_period() {
        let mut e = Encoder::new(noise(0.0, Some(Duration::from_secs(1)), 5.0), T30, Rng::new(1));
        let r = DataRate::from_mbps(1);
        let keys: Vec<i64> = (0..70)
            .filter(|&i| {
                if i == 10 {
                    e.request_key_frame();
                }
                e.encode(Time::ZERO + T30 * i, r).key
            })
            .collect();
        assert_eq!(keys, vec![0, 10, 40]);
    }

    #[test]
    fn lagging_follows_a_step_up_slowly() {
        // The thesis's lag, 500 kbps -> 2 Mbps: r(t) = 2M - 1.5M e^(-t/1.3):
        // 1.31 Mbps at 1 s, 1.90 Mbps at 3.5 s (Dumbo Fig. 3-8: ~3 s to catch up).
        let thesis = EncoderConfig::from_params(
            "lagging",
            &Params::new().with("tau_up", ParamValue::Str("1.3s".into())).with("sigma", ParamValue::Num(0.1)),
        )
        .unwrap();
        let mut e = Encoder::new(thesis, T30, Rng::new(3));
        let (_, t0) = run(&mut e, Time::ZERO, 5.0, |_| DataRate::from_kbps(500));
        assert_eq!(e.output_rate(), DataRate::from_kbps(500));
        let (_, t1) = run(&mut e, t0, 1.0, |_| DataRate::from_mbps(2));
        let at_1s = e.output_rate();
        run(&mut e, t1, 2.5, |_| DataRate::from_mbps(2));
        let at_3_5s = e.output_rate();
        assert!(at_1s < DataRate::from_kbps(1600) && at_1s > DataRate::from_kbps(1200), "{at_1s}");
        assert!(at_3_5s > DataRate::from_kbps(1800), "{at_3_5s}");
    }

    #[test]
    fn lagging_follows_a_step_down_faster() {
        // 2 Mbps -> 500 kbps: 500k + 1.5M e^(-1/0.13) = 500.7 kbps after 1 s.
        let mut e = Encoder::new(lagging_default(), T30, Rng::new(3));
        let (_, t0) = run(&mut e, Time::ZERO, 5.0, |_| DataRate::from_mbps(2));
        run(&mut e, t0, 1.0, |_| DataRate::from_kbps(500));
        let r = e.output_rate();
        assert!(r < DataRate::from_kbps(700) && r > DataRate::from_kbps(500), "{r}");
    }

    #[test]
    fn lag_is_frame_rate_independent() {
        let rate_after = |interval: Duration| {
            let mut e = Encoder::new(lagging_default(), interval, Rng::new(3));
            e.encode(Time::ZERO, DataRate::from_kbps(500));
            let mut t = Time::ZERO;
            while t < Time::from_millis(1500) {
                t += interval;
                e.encode(t, DataRate::from_mbps(2));
            }
            e.output_rate().bps() as f64
        };
        let (a, b) = (rate_after(Duration::from_micros(16_667)), rate_after(Duration::from_millis(100)));
        assert!((a / b - 1.0).abs() < 0.01, "{a} vs {b}");
    }

    #[test]
    fn skip_advances_the_lag() {
        let mut e = Encoder::new(lagging_default(), T30, Rng::new(3));
        e.encode(Time::ZERO, DataRate::from_kbps(500));
        e.skip(Time::from_millis(2000), DataRate::from_mbps(2));
        // 2M - 1.5M e^(-2/0.75) = 1896.0 kbps.
        let r = e.output_rate().kbps_f64();
        let expect = 2000.0 - 1500.0 * (-2.0f64 / 0.75).exp();
        assert!((r - expect).abs() < 0.1, "{r} vs {expect}");
    }

    #[test]
    fn lagging_long_run_average_with_key_frames() {
        let cfg = EncoderConfig::Lagging {
            tau_up: DEFAULT_TAU_UP,
            tau_down: DEFAULT_TAU_DOWN,
            sigma: 0.1,
            key_interval: Some(Duration::from_secs(2)),
            key_ratio: 5.0,
        };
        let mut e = Encoder::new(cfg, T30, Rng::new(9));
        let mut keys = 0;
        let mut bytes = 0;
        for i in 0..1800 {
            let f = e.encode(Time::ZERO + T30 * i, DataRate::from_mbps(1));
            keys += f.key as u32;
            bytes += f.size.bytes();
        }
        assert_eq!(keys, 30);
        let rate = bytes as f64 * 8.0 / (1800.0 * 0.033333);
        assert!((rate / 1e6 - 1.0).abs() < 0.03, "rate {rate}");
    }

    #[test]
    fn from_params_defaults_and_errors() {
        assert_eq!(EncoderConfig::from_params("ideal", &Params::new()).unwrap(), EncoderConfig::Ideal);
        assert_eq!(EncoderConfig::from_params("noise", &Params::new()).unwrap(), noise(0.1, None, 5.0));
        assert_eq!(
            lagging_default(),
            EncoderConfig::Lagging {
                tau_up: Duration::from_millis(750),
                tau_down: Duration::from_millis(130),
                sigma: 0.25,
                key_interval: Some(Duration::from_secs(100)),
                key_ratio: 3.0,
            }
        );
        let p = Params::new()
            .with("sigma", ParamValue::Num(0.025))
            .with("key_interval", ParamValue::Str("2s".into()))
            .with("key_ratio", ParamValue::Num(3.0));
        assert_eq!(EncoderConfig::from_params("noise", &p).unwrap(), noise(0.025, Some(Duration::from_secs(2)), 3.0));
        for off in [ParamValue::Str("none".into()), ParamValue::Num(0.0)] {
            let p = Params::new().with("key_interval", off);
            let cfg = EncoderConfig::from_params("lagging", &p).unwrap();
            assert!(matches!(cfg, EncoderConfig::Lagging { key_interval: None, .. }));
        }

        let err = |kind: &str, k: &str, v: ParamValue| {
            EncoderConfig::from_params(kind, &Params::new().with(k, v)).unwrap_err()
        };
        assert_eq!(EncoderConfig::from_params("vp9", &Params::new()).unwrap_err().field, "kind");
        let unknown = |e: ConfigError| e.reason.starts_with("unknown parameter");
        assert!(unknown(err("ideal", "sigma", ParamValue::Num(0.1))));
        assert!(unknown(err("noise", "tau_up", ParamValue::Num(1.0))));
        let invalid = |e: ConfigError, name: &str| e.field == name && !unknown(e.clone());
        assert!(invalid(err("noise", "sigma", ParamValue::Num(1.5)), "sigma"));
        assert!(invalid(err("lagging", "sigma", ParamValue::Num(-0.1)), "sigma"));
        assert!(invalid(err("noise", "key_ratio", ParamValue::Num(0.5)), "key_ratio"));
        assert!(invalid(err("lagging", "key_ratio", ParamValue::Num(21.0)), "key_ratio"));
        assert!(invalid(err("lagging", "tau_up", ParamValue::Num(0.0)), "tau_up"));
        assert!(invalid(err("lagging", "tau_down", ParamValue::Str("0ms".into())), "tau_down"));
        assert!(invalid(err("lagging", "tau_up", ParamValue::Str("fast".into())), "tau_up"));
        assert!(invalid(err("noise", "key_interval", ParamValue::Str("often".into())), "key_interval"));
    }

    #[test]
    fn kinds_and_param_info() {
        for kind in KINDS {
            let cfg = EncoderConfig::from_params(kind, &Params::new()).unwrap();
            assert_eq!(cfg.kind(), *kind);
        }
        let names: Vec<_> = EncoderConfig::param_info("lagging").iter().map(|p| p.name).collect();
        assert_eq!(names, ["tau_up", "tau_down", "sigma", "key_interval", "key_ratio", "profile"]);
        assert!(EncoderConfig::param_info("ideal").is_empty());
    }
}
