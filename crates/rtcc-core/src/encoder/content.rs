//! The `content` encoder model: frame sizes driven by a content track
//! (`crate::content`: per-frame SI/TI and scene cuts) through an encoder's
//! rate control at a fixed target, as x264 in one-pass ABR produces them.
//! This is the bit-rate variation of BurstRTC §II-B (burstrtc.txt: a 4 Mbps
//! target, 1080p30, x264 preset faster, tune zerolatency, intra-refresh,
//! varies from 2 to 6 Mbps over time on dynamic content), and each frame's
//! SI and TI travel with it to the controller (`FrameInfo`), as BurstRTC's
//! frame-size model (§III-C, eq. 8) needs them.
//!
//! One frame, captured at `now` for target T with frame interval Δ:
//!
//! ```text
//! C     = (TI + ti_floor) · (SI / 50)^si_exp · (cut_ratio if a scene's first frame)
//! Ĉ     ← Ĉ + (C^γ − Ĉ)(1 − e^(−Δ/rc_memory))      (Ĉ = C^γ at the first frame)
//! ovf   = clamp(1 + debt / rc_buffer, 0.5, 2)
//! size  = T·Δ/8 · C^γ / Ĉ / ovf · e^(σz − σ²/2) · (key_ratio if a key frame)
//! debt ← debt + (size / (T·Δ/8) − 1) · Δ
//! ```
//!
//! - C is the frame's cost at a fixed quantizer: linear in TI (the residual
//!   after motion compensation), with a floor for what a still frame costs,
//!   and a power of SI. `rtcc calibrate-encoder --content` fits it to x264
//!   at a constant QP.
//! - C^γ/Ĉ is x264's ABR: qscale ∝ complexity^(1−qcomp), so bits ∝
//!   complexity^qcomp (γ = qcomp = 0.6 by default in x264, and the fit
//!   agrees), normalised by the average the encoder has seen (x264's
//!   `rate_factor`, here an exponential average over `rc_memory`).
//! - ovf is x264's overflow correction (ratecontrol.c `rate_estimate_qscale`:
//!   `overflow = clip(1 + (total_bits − wanted_bits) / abr_buffer, .5, 2)`):
//!   bits spent above the target are paid back over about `rc_buffer`, so
//!   a complex scene overshoots, then the encoder pulls back, and a calm
//!   scene after it undershoots. The debt is kept in seconds of the target,
//!   not in bits, so a target change does not turn an old surplus into a
//!   new one; x264's buffer also grows with √(time), which a model that
//!   runs for minutes leaves out.
//! - z is an AR(1) process (correlation time `sigma_tau`) for what SI and TI
//!   do not explain; key frames (the first, requested ones, `key_interval`)
//!   cost `key_ratio` times a delta frame and are paid back like any
//!   overshoot.
//!
//! Not modelled: frames dropped by the encoder (x264 ABR never drops), and
//! a lag after a target change beyond the rate control's own.

use crate::content::{Complexity, Track, TrackConfig};
use crate::controller::{ConfigError, Param, ParamInfo, Params};
use crate::rng::Rng;
use crate::units::{DataRate, Duration, Time};

/// x264 ratecontrol.c: the overflow factor is clipped to [0.5, 2].
const OVERFLOW_MIN: f64 = 0.5;
const OVERFLOW_MAX: f64 = 2.0;

/// SI that `si_exp` is relative to; a scale only (it cancels in Ĉ).
const SI_REF: f64 = 50.0;

/// The content profiles of BurstRTC §II-B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentProfile {
    /// Little change between frames, long scenes (animation, a talking head).
    Static,
    /// Frequent scene changes, fast motion (game streaming, sports).
    Dynamic,
}

impl ContentProfile {
    pub const NAMES: &'static [&'static str] = &["static", "dynamic"];

    pub fn parse(s: &str) -> Option<ContentProfile> {
        match s {
            "static" => Some(ContentProfile::Static),
            "dynamic" => Some(ContentProfile::Dynamic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ContentProfile::Static => "static",
            ContentProfile::Dynamic => "dynamic",
        }
    }

    /// The profile's constants.
    pub fn config(self) -> ContentConfig {
        match self {
            ContentProfile::Static => STATIC,
            ContentProfile::Dynamic => DYNAMIC,
        }
    }
}

/// The `content` model's constants (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContentConfig {
    pub profile: ContentProfile,
    pub track: TrackConfig,
    pub gamma: f64,
    pub ti_floor: f64,
    pub si_exp: f64,
    pub cut_ratio: f64,
    pub rc_buffer: Duration,
    pub rc_memory: Duration,
    pub sigma: f64,
    pub sigma_tau: Duration,
    pub key_interval: Option<Duration>,
    pub key_ratio: f64,
}

// The profiles' constants, measured by `rtcc calibrate-encoder --content
// --seconds 300` (python/rtcc/calibrate_content.py): x264 at a fixed 4 Mbps,
// 1080p30, preset faster, tune zerolatency, intra-refresh (README, "The
// `content` model").
const STATIC: ContentConfig = ContentConfig {
    profile: ContentProfile::Static,
    track: TrackConfig {
        scene_length: Duration::from_millis(7500),
        si: 41.2,
        si_spread: 0.407,
        ti: 5.02,
        ti_spread: 0.565,
        si_wobble: 0.00845,
        ti_wobble: 0.108,
        wobble_tau: Duration::from_millis(288),
        cut_ti: 55.7,
    },
    gamma: 0.35,
    ti_floor: 13.7,
    si_exp: 0.327,
    cut_ratio: 3.53,
    rc_buffer: Duration::from_secs(2),
    rc_memory: Duration::from_millis(500),
    sigma: 0.132,
    sigma_tau: Duration::from_millis(150),
    key_interval: None,
    key_ratio: 10.9,
};

const DYNAMIC: ContentConfig = ContentConfig {
    profile: ContentProfile::Dynamic,
    track: TrackConfig {
        scene_length: Duration::from_millis(2655),
        si: 55.1,
        si_spread: 0.278,
        ti: 15.7,
        ti_spread: 0.951,
        si_wobble: 0.0154,
        ti_wobble: 0.115,
        wobble_tau: Duration::from_millis(264),
        cut_ti: 55.3,
    },
    gamma: 0.4,
    ti_floor: 13.7,
    si_exp: 0.327,
    cut_ratio: 3.53,
    rc_buffer: Duration::from_millis(8775),
    rc_memory: Duration::from_secs(120),
    sigma: 0.155,
    sigma_tau: Duration::from_millis(238),
    key_interval: None,
    key_ratio: 8.31,
};

const D: ContentConfig = DYNAMIC;
const S: ContentConfig = STATIC;

const PROFILE: Param<&'static str> = Param::choice(
    "profile",
    "dynamic",
    ContentProfile::NAMES,
    "content: \"static\" or \"dynamic\" (BurstRTC §II-B), or a file from rtcc calibrate-encoder --content; \
     the parameters below default to the profile's",
);
const SCENE_LENGTH: Param<Duration> = Param::duration(
    "scene_length",
    D.track.scene_length,
    Duration::ZERO,
    Duration::MAX,
    "mean time between scene cuts (Poisson)",
)
.above_min()
.or_in("static", S.track.scene_length);
const SI: Param<f64> = Param::number("si", D.track.si, 0.0, 1000.0, "median SI of a scene (ITU-T P.910)")
    .above_min()
    .or_in("static", S.track.si);
const SI_SPREAD: Param<f64> = Param::number("si_spread", D.track.si_spread, 0.0, 3.0, "log-std of scene SI levels")
    .or_in("static", S.track.si_spread);
const TI: Param<f64> = Param::number("ti", D.track.ti, 0.0, 255.0, "median TI of a scene (ITU-T P.910)")
    .above_min()
    .or_in("static", S.track.ti);
const TI_SPREAD: Param<f64> = Param::number("ti_spread", D.track.ti_spread, 0.0, 3.0, "log-std of scene TI levels")
    .or_in("static", S.track.ti_spread);
const SI_WOBBLE: Param<f64> = Param::number("si_wobble", D.track.si_wobble, 0.0, 3.0, "log-std of SI within a scene")
    .or_in("static", S.track.si_wobble);
const TI_WOBBLE: Param<f64> = Param::number("ti_wobble", D.track.ti_wobble, 0.0, 3.0, "log-std of TI within a scene")
    .or_in("static", S.track.ti_wobble);
const WOBBLE_TAU: Param<Duration> = Param::duration(
    "wobble_tau",
    D.track.wobble_tau,
    Duration::ZERO,
    Duration::MAX,
    "correlation time of SI/TI within a scene",
)
.or_in("static", S.track.wobble_tau);
const CUT_TI: Param<f64> =
    Param::number("cut_ti", D.track.cut_ti, 0.0, 255.0, "TI of a scene's first frame").or_in("static", S.track.cut_ti);
const GAMMA: Param<f64> =
    Param::number("gamma", D.gamma, 0.0, 2.0, "frame bits ∝ complexity^gamma (x264 qcomp)").or_in("static", S.gamma);
const TI_FLOOR: Param<f64> =
    Param::number("ti_floor", D.ti_floor, 0.0, 255.0, "complexity = TI + ti_floor: the cost of a still frame")
        .above_min()
        .or_in("static", S.ti_floor);
const SI_EXP: Param<f64> =
    Param::number("si_exp", D.si_exp, 0.0, 3.0, "complexity ∝ SI^si_exp").or_in("static", S.si_exp);
const CUT_RATIO: Param<f64> =
    Param::number("cut_ratio", D.cut_ratio, 1.0, 20.0, "extra complexity of a scene's first frame beyond its TI")
        .or_in("static", S.cut_ratio);
const RC_BUFFER: Param<Duration> = Param::duration(
    "rc_buffer",
    D.rc_buffer,
    Duration::ZERO,
    Duration::MAX,
    "rate control: overshoot is paid back over about this (x264 abr_buffer)",
)
.above_min()
.or_in("static", S.rc_buffer);
const RC_MEMORY: Param<Duration> = Param::duration(
    "rc_memory",
    D.rc_memory,
    Duration::ZERO,
    Duration::MAX,
    "rate control: memory of the average complexity (x264 rate_factor)",
)
.above_min()
.or_in("static", S.rc_memory);
const SIGMA: Param<f64> = Param::number("sigma", D.sigma, 0.0, 2.0, "log-std of frame sizes SI and TI do not explain")
    .or_in("static", S.sigma);
const SIGMA_TAU: Param<Duration> = Param::duration(
    "sigma_tau",
    D.sigma_tau,
    Duration::ZERO,
    Duration::MAX,
    "correlation time of that frame-size error (0: independent per frame)",
)
.or_in("static", S.sigma_tau);
const KEY_INTERVAL: Param<Option<Duration>> = Param::optional_duration(
    "key_interval",
    None,
    Duration::ZERO,
    Duration::MAX,
    "none",
    "time between periodic key frames; \"none\" or 0 = only first and requested frames (intra-refresh)",
);
const KEY_RATIO: Param<f64> = Param::number("key_ratio", D.key_ratio, 1.0, 20.0, "key frame size / delta frame size")
    .or_in("static", S.key_ratio);

pub(super) const PARAMS: &[ParamInfo] = &[
    PROFILE.info(),
    SCENE_LENGTH.info(),
    SI.info(),
    SI_SPREAD.info(),
    TI.info(),
    TI_SPREAD.info(),
    SI_WOBBLE.info(),
    TI_WOBBLE.info(),
    WOBBLE_TAU.info(),
    CUT_TI.info(),
    GAMMA.info(),
    TI_FLOOR.info(),
    SI_EXP.info(),
    CUT_RATIO.info(),
    RC_BUFFER.info(),
    RC_MEMORY.info(),
    SIGMA.info(),
    SIGMA_TAU.info(),
    KEY_INTERVAL.info(),
    KEY_RATIO.info(),
];

impl ContentConfig {
    /// The profile's constants, each overridden where `p` gives it.
    pub fn from_params(p: &Params) -> Result<ContentConfig, ConfigError> {
        let name = p.get(&PROFILE)?;
        let d = ContentProfile::parse(name)
            .ok_or_else(|| ConfigError::invalid("profile", format!("'{name}' is not one of static, dynamic")))?
            .config();
        Ok(ContentConfig {
            profile: d.profile,
            track: TrackConfig {
                scene_length: p.get_or(&SCENE_LENGTH, d.track.scene_length)?,
                si: p.get_or(&SI, d.track.si)?,
                si_spread: p.get_or(&SI_SPREAD, d.track.si_spread)?,
                ti: p.get_or(&TI, d.track.ti)?,
                ti_spread: p.get_or(&TI_SPREAD, d.track.ti_spread)?,
                si_wobble: p.get_or(&SI_WOBBLE, d.track.si_wobble)?,
                ti_wobble: p.get_or(&TI_WOBBLE, d.track.ti_wobble)?,
                wobble_tau: p.get_or(&WOBBLE_TAU, d.track.wobble_tau)?,
                cut_ti: p.get_or(&CUT_TI, d.track.cut_ti)?,
            },
            gamma: p.get_or(&GAMMA, d.gamma)?,
            ti_floor: p.get_or(&TI_FLOOR, d.ti_floor)?,
            si_exp: p.get_or(&SI_EXP, d.si_exp)?,
            cut_ratio: p.get_or(&CUT_RATIO, d.cut_ratio)?,
            rc_buffer: p.get_or(&RC_BUFFER, d.rc_buffer)?,
            rc_memory: p.get_or(&RC_MEMORY, d.rc_memory)?,
            sigma: p.get_or(&SIGMA, d.sigma)?,
            sigma_tau: p.get_or(&SIGMA_TAU, d.sigma_tau)?,
            key_interval: p.get_or(&KEY_INTERVAL, d.key_interval)?,
            key_ratio: p.get_or(&KEY_RATIO, d.key_ratio)?,
        })
    }

    /// A frame's cost at a fixed quantizer, up to a constant (module doc).
    pub fn complexity(&self, c: &Complexity) -> f64 {
        let base = (c.ti + self.ti_floor) * (c.si.max(1e-3) / SI_REF).powf(self.si_exp);
        if c.cut {
            base * self.cut_ratio
        } else {
            base
        }
    }
}

/// x264-style one-pass ABR at the frame level: how large a frame of a given
/// complexity comes out, relative to the per-frame budget (module doc).
/// Shared by the model and by calibration, which fits its constants.
#[derive(Clone, Debug)]
pub struct RateControl {
    gamma: f64,
    buffer_s: f64,
    memory_s: f64,
    /// Ĉ: the running average of complexity^gamma.
    norm: Option<f64>,
    /// Seconds of target spent above it (negative: below).
    debt_s: f64,
}

impl RateControl {
    pub fn new(gamma: f64, rc_buffer: Duration, rc_memory: Duration) -> RateControl {
        RateControl {
            gamma,
            buffer_s: rc_buffer.as_secs_f64().max(1e-6),
            memory_s: rc_memory.as_secs_f64().max(1e-6),
            norm: None,
            debt_s: 0.0,
        }
    }

    /// The size of a frame of `complexity` (> 0) over the per-frame budget,
    /// before the frame-size error and key-frame cost; `interval` is the time
    /// since the previous coded frame.
    pub fn relative(&mut self, complexity: f64, interval: Duration) -> f64 {
        let cg = complexity.max(1e-9).powf(self.gamma);
        let norm = match self.norm {
            None => cg,
            Some(n) => n + (cg - n) * (1.0 - (-interval.as_secs_f64() / self.memory_s).exp()),
        };
        self.norm = Some(norm);
        let overflow = (1.0 + self.debt_s / self.buffer_s).clamp(OVERFLOW_MIN, OVERFLOW_MAX);
        cg / norm / overflow
    }

    /// The frame came out `relative` times its budget, worth `interval`.
    pub fn spent(&mut self, relative: f64, interval: Duration) {
        self.debt_s += (relative - 1.0) * interval.as_secs_f64();
        debug_assert!(self.debt_s.is_finite());
    }
}

/// The model's state inside `Encoder`.
#[derive(Clone, Debug)]
pub(super) struct ContentState {
    cfg: ContentConfig,
    track: Track,
    rc: RateControl,
    /// AR(1) state of the frame-size error, standard normal.
    z: f64,
    last_coded: Option<Time>,
    /// The last frame instant's content.
    pub(super) now: Complexity,
    /// Output rate, bits/s, averaged over about a second.
    out_rate: f64,
    last_call: Option<Time>,
}

/// Time constant of the output-rate average in the time series (as a real
/// codec's, rtcc-video `RealEncoder`).
const OUT_RATE_TAU_S: f64 = 1.0;

impl ContentState {
    /// The track draws from its own stream forked from `rng`, so the content
    /// does not depend on how many frames were coded.
    pub(super) fn new(cfg: ContentConfig, rng: &mut Rng) -> ContentState {
        ContentState {
            cfg,
            track: Track::new(cfg.track, rng.fork(0xC0_47E7)),
            rc: RateControl::new(cfg.gamma, cfg.rc_buffer, cfg.rc_memory),
            z: 0.0,
            last_coded: None,
            now: Complexity { si: 0.0, ti: 0.0, cut: false },
            out_rate: 0.0,
            last_call: None,
        }
    }

    /// A frame instant: the track advances and the output average decays.
    pub(super) fn advance(&mut self, now: Time, target: DataRate) {
        let dt = self.last_call.map_or(0.0, |p| now.saturating_since(p).as_secs_f64());
        if self.last_call.is_none() {
            self.out_rate = target.bps() as f64;
        }
        self.out_rate *= (-dt / OUT_RATE_TAU_S).exp();
        self.last_call = Some(now);
        self.now = self.track.next(now);
    }

    /// Bytes of the frame at the current instant, `budget` bytes per frame,
    /// `interval` the frame interval; draws the frame-size error from `rng`.
    pub(super) fn frame_bytes(&mut self, now: Time, budget: f64, interval: Duration, key: bool, rng: &mut Rng) -> f64 {
        let since = self.last_coded.map_or(interval, |p| now.saturating_since(p));
        self.last_coded = Some(now);
        let mut rel = self.rc.relative(self.cfg.complexity(&self.now), since);
        if self.cfg.sigma > 0.0 {
            let tau = self.cfg.sigma_tau.as_secs_f64();
            let rho = if tau > 0.0 { (-since.as_secs_f64() / tau).exp() } else { 0.0 };
            self.z = rho * self.z + (1.0 - rho * rho).sqrt() * rng.normal();
            let s = self.cfg.sigma;
            rel *= (s * self.z - s * s / 2.0).exp();
        }
        if key {
            rel *= self.cfg.key_ratio;
        }
        // The debt counts the model's size, not the floor's: a budget below
        // the floor (a near-zero target) does not pile up a debt for ever.
        self.rc.spent(rel, interval);
        let bytes = (budget * rel).max(super::MIN_FRAME_BYTES);
        self.out_rate += bytes * 8.0 / OUT_RATE_TAU_S;
        bytes
    }

    pub(super) fn output_rate(&self) -> f64 {
        self.out_rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::ParamValue;
    use crate::encoder::{EncodedFrame, Encoder, EncoderConfig};

    const T30: Duration = Duration::from_micros(33_333);

    fn profile(name: &str) -> EncoderConfig {
        EncoderConfig::from_params("content", &Params::new().with("profile", ParamValue::Str(name.into()))).unwrap()
    }

    /// `secs` at 30 fps and a fixed `target`.
    fn run(cfg: &EncoderConfig, seed: u64, secs: f64, target: DataRate) -> Vec<EncodedFrame> {
        let mut e = Encoder::new(cfg.clone(), T30, Rng::new(seed));
        (0..(secs * 30.0) as i64).map(|i| e.encode(Time::ZERO + T30 * i, target)).collect()
    }

    /// Bits/s over consecutive 1 s windows (30 frames).
    fn windows(frames: &[EncodedFrame]) -> Vec<f64> {
        frames
            .chunks_exact(30)
            .map(|w| w.iter().map(|f| f.size.bytes() as f64 * 8.0).sum::<f64>() / (30.0 * 0.033333))
            .collect()
    }

    fn percentile(v: &[f64], p: f64) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[((s.len() - 1) as f64 * p).round() as usize]
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    #[test]
    fn rate_control_equations() {
        // gamma 0.5, buffer 2 s, memory 1 s, 10 fps: a = 1 - e^-0.1 = 0.0951626.
        let dt = Duration::from_millis(100);
        let mut rc = RateControl::new(0.5, Duration::from_secs(2), Duration::from_secs(1));
        // First frame: C^γ = 2 is its own average, no debt: exactly the budget.
        assert_eq!(rc.relative(4.0, dt), 1.0);
        rc.spent(1.0, dt);
        // Ĉ = 2 + (4 - 2)a = 2.1903252, size 4 / Ĉ = 1.8262129.
        let r2 = rc.relative(16.0, dt);
        assert!((r2 - 1.8262129).abs() < 1e-6, "{r2}");
        rc.spent(r2, dt);
        // Debt 0.0826213 s: overflow 1.0413106; Ĉ = 2.3625385; 4 / Ĉ / 1.0413 = 1.6259261.
        let r3 = rc.relative(16.0, dt);
        assert!((r3 - 1.6259261).abs() < 1e-6, "{r3}");
        // The overflow factor is clipped to [0.5, 2] (x264).
        let mut rc = RateControl::new(0.0, Duration::from_secs(1), Duration::from_secs(1));
        rc.relative(1.0, dt);
        rc.spent(1000.0, dt); // 99.9 s of debt
        assert_eq!(rc.relative(1.0, dt), 0.5);
        rc.spent(-3000.0, dt); // -200 s
        assert_eq!(rc.relative(1.0, dt), 2.0);
    }

    #[test]
    fn complexity_is_linear_in_ti_with_a_floor() {
        let c = ContentConfig { ti_floor: 8.0, si_exp: 0.5, cut_ratio: 3.0, ..DYNAMIC };
        let at = |si, ti, cut| c.complexity(&Complexity { si, ti, cut });
        assert_eq!(at(50.0, 2.0, false), 10.0);
        assert_eq!(at(50.0, 12.0, false), 20.0);
        // (SI / 50)^0.5: four times the SI, twice the cost.
        assert_eq!(at(200.0, 2.0, false), 20.0);
        assert_eq!(at(50.0, 2.0, true), 30.0);
    }

    #[test]
    fn long_run_mean_is_the_target() {
        for name in ["static", "dynamic"] {
            for (seed, target) in [(1, DataRate::from_mbps(4)), (2, DataRate::from_kbps(800))] {
                let f = run(&profile(name), seed, 600.0, target);
                let rate = f.iter().map(|f| f.size.bytes() as f64).sum::<f64>() * 8.0 / (f.len() as f64 * 0.033333);
                assert!((rate / target.bps() as f64 - 1.0).abs() < 0.03, "{name} seed {seed}: {rate} for {target}");
            }
        }
    }

    #[test]
    fn dynamic_content_varies_like_burstrtc_fig2_and_static_much_less() {
        // BurstRTC §II-B: a 4 Mbps target gives 2–6 Mbps over time on dynamic
        // content. Over 10 min of 1 s windows, pooled over seeds.
        let spread = |name: &str| {
            let w: Vec<f64> =
                (1..=3).flat_map(|seed| windows(&run(&profile(name), seed, 600.0, DataRate::from_mbps(4)))).collect();
            (percentile(&w, 0.02) / 1e6, percentile(&w, 0.5) / 1e6, percentile(&w, 0.98) / 1e6)
        };
        let (lo, mid, hi) = spread("dynamic");
        assert!(lo > 1.3 && lo < 2.8, "dynamic p2 {lo} Mbps");
        assert!(hi > 5.0 && hi < 7.5, "dynamic p98 {hi} Mbps");
        assert!((mid - 4.0).abs() < 0.5, "dynamic median {mid} Mbps");
        let (slo, smid, shi) = spread("static");
        assert!((smid - 4.0).abs() < 0.3, "static median {smid} Mbps");
        assert!(shi - slo < 0.5 * (hi - lo), "static {slo}..{shi} vs dynamic {lo}..{hi} Mbps");
    }

    #[test]
    fn frames_carry_the_track_and_cuts_are_larger() {
        let cfg = profile("dynamic");
        let EncoderConfig::Content(c) = cfg.clone() else { unreachable!() };
        let mut e = Encoder::new(cfg, T30, Rng::new(4));
        let (mut cut, mut plain) = (vec![], vec![]);
        for i in 0..9000 {
            let f = e.encode(Time::ZERO + T30 * i, DataRate::from_mbps(4));
            let now = e.complexity().unwrap();
            assert_eq!((f.si, f.ti), (now.si as f32, now.ti as f32));
            assert!(f.si > 0.0 && f.ti > 0.0, "{f:?}");
            if now.cut {
                assert_eq!(f.ti, c.track.cut_ti as f32);
                cut.push(f.size.bytes() as f64);
            } else if i > 0 {
                plain.push(f.size.bytes() as f64);
            }
        }
        // ~100 cuts in 5 min of 3 s scenes; a cut frame costs several frames.
        assert!(cut.len() > 50, "{} cuts", cut.len());
        assert!(mean(&cut) > 1.8 * mean(&plain), "cut {} vs {}", mean(&cut), mean(&plain));
    }

    #[test]
    fn content_does_not_depend_on_what_was_coded() {
        // Same seed, different targets and every third frame skipped: the
        // same SI/TI at every frame instant.
        let cfg = profile("dynamic");
        let mut a = Encoder::new(cfg.clone(), T30, Rng::new(9));
        let mut b = Encoder::new(cfg.clone(), T30, Rng::new(9));
        for i in 0..3000 {
            let t = Time::ZERO + T30 * i;
            a.encode(t, DataRate::from_mbps(4));
            if i % 3 == 2 {
                b.skip(t, DataRate::from_kbps(500));
            } else {
                b.encode(t, DataRate::from_kbps(500));
            }
            assert_eq!(a.complexity(), b.complexity(), "frame {i}");
        }
        // And the whole output replays from the seed.
        let x: Vec<_> = run(&cfg, 5, 60.0, DataRate::from_mbps(2));
        assert_eq!(x, run(&cfg, 5, 60.0, DataRate::from_mbps(2)));
        assert_ne!(x, run(&cfg, 6, 60.0, DataRate::from_mbps(2)));
    }

    #[test]
    fn key_frames_cost_key_ratio_and_are_paid_back() {
        let still = EncoderConfig::from_params(
            "content",
            &Params::new()
                .with("si_spread", ParamValue::Num(0.0))
                .with("ti_spread", ParamValue::Num(0.0))
                .with("si_wobble", ParamValue::Num(0.0))
                .with("ti_wobble", ParamValue::Num(0.0))
                .with("sigma", ParamValue::Num(0.0))
                .with("scene_length", ParamValue::Str("1000000s".into()))
                .with("key_ratio", ParamValue::Num(4.0))
                .with("key_interval", ParamValue::Str("2s".into())),
        )
        .unwrap();
        let f = run(&still, 1, 20.0, DataRate::from_mbps(2));
        // 2 Mbps at 30 fps: 8333 B a frame; the first frame is 4 of them.
        assert_eq!(f[0].size.bytes(), 33_333);
        assert!(f[0].key && !f[1].key);
        let keys: Vec<usize> = f.iter().enumerate().filter(|(_, f)| f.key).map(|(i, _)| i).collect();
        assert_eq!(keys, (0..10).map(|k| k * 60).collect::<Vec<_>>());
        // Paid back: the frames after a key frame are below the budget, and
        // the long-run rate stays at the target.
        assert!(f[1].size.bytes() < 8333 && f[59].size.bytes() < 8333, "{:?} {:?}", f[1], f[59]);
        let rate = f.iter().map(|f| f.size.bytes() as f64).sum::<f64>() * 8.0 / 20.0;
        assert!((rate / 2e6 - 1.0).abs() < 0.06, "{rate}");
    }

    #[test]
    fn profiles_and_overrides() {
        let EncoderConfig::Content(d) = EncoderConfig::from_params("content", &Params::new()).unwrap() else {
            panic!("content")
        };
        assert_eq!(d, DYNAMIC, "dynamic is the default profile");
        assert_eq!(profile("static"), EncoderConfig::Content(STATIC));
        let p = Params::new()
            .with("profile", ParamValue::Str("static".into()))
            .with("ti", ParamValue::Num(12.5))
            .with("rc_buffer", ParamValue::Str("3s".into()))
            .with("key_interval", ParamValue::Str("10s".into()));
        let EncoderConfig::Content(c) = EncoderConfig::from_params("content", &p).unwrap() else { panic!() };
        assert_eq!(c.track.ti, 12.5);
        assert_eq!(c.rc_buffer, Duration::from_secs(3));
        assert_eq!(c.key_interval, Some(Duration::from_secs(10)));
        assert_eq!(
            ContentConfig {
                track: TrackConfig { ti: STATIC.track.ti, ..c.track },
                rc_buffer: STATIC.rc_buffer,
                key_interval: None,
                ..c
            },
            STATIC
        );
        // Listings show both profiles' defaults.
        let ti = PARAMS.iter().find(|p| p.name == "ti").unwrap();
        assert_eq!(ti.default_text(), format!("{} (static: {})", DYNAMIC.track.ti, STATIC.track.ti));
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let err =
            |k: &str, v: ParamValue| EncoderConfig::from_params("content", &Params::new().with(k, v)).unwrap_err();
        let e = err("profile", ParamValue::Str("busy".into()));
        assert_eq!(e.field, "profile");
        assert!(e.reason.contains("static") && e.reason.contains("dynamic"), "{e}");
        for (k, v) in [
            ("si", ParamValue::Num(-1.0)),
            ("ti", ParamValue::Num(0.0)),
            ("ti_spread", ParamValue::Num(-0.5)),
            ("ti_wobble", ParamValue::Num(-0.1)),
            ("cut_ti", ParamValue::Num(300.0)),
            ("gamma", ParamValue::Num(-0.6)),
            ("ti_floor", ParamValue::Num(0.0)),
            ("cut_ratio", ParamValue::Num(0.5)),
            ("sigma", ParamValue::Num(-0.1)),
            ("key_ratio", ParamValue::Num(0.9)),
            ("scene_length", ParamValue::Str("0s".into())),
            ("scene_length", ParamValue::Str("-3s".into())),
            ("rc_buffer", ParamValue::Num(0.0)),
            ("rc_memory", ParamValue::Str("-1s".into())),
            ("wobble_tau", ParamValue::Str("-1s".into())),
            ("sigma_tau", ParamValue::Str("soon".into())),
        ] {
            let e = err(k, v.clone());
            assert_eq!(e.field, k, "{k} = {v}: {e}");
        }
        assert!(err("tau_up", ParamValue::Num(1.0)).reason.starts_with("unknown parameter"));
    }
}
