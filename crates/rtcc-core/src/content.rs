//! Content complexity over time (DESIGN.md §3, "content complexity traces
//! (SI/TI)"): a per-frame track of ITU-T P.910 spatial and temporal
//! information for the `content` encoder model (`encoder/content.rs`).
//!
//! BurstRTC (burstrtc.txt §II-B) explains the bit-rate variation of an
//! encoder at a fixed target by the spatial and temporal complexity of the
//! content, and contrasts "static" video (little change between frames) with
//! "dynamic" video (frequent scene changes, rapid motion); its frame-size
//! model (§III-C, eq. 8) predicts a frame's size from the target, SI and TI.
//! The track here is that content, drawn rather than decoded:
//!
//! - scenes of exponentially distributed length (`scene_length` on average:
//!   cuts are a Poisson process in time);
//! - each scene draws its SI and TI level from a log-normal distribution
//!   (median `si`, `ti`; log-std `si_spread`, `ti_spread`), since both are
//!   positive and spread over multiples (a paused game menu, a talking head
//!   and a fast pan differ in TI by factors, not by a fixed amount);
//! - within a scene both wander around that level: a log-normal factor with
//!   log-std `si_wobble`, `ti_wobble` whose logarithm is an AR(1) process
//!   with correlation time `wobble_tau`;
//! - a scene's first frame has TI `cut_ti`: its difference from the last
//!   frame of the previous scene is a picture change, not motion.
//!
//! The track is a function of the frame instants and its own random stream
//! only: it advances on every frame instant, encoded or skipped, so two
//! flows with the same stream see the same content whatever their
//! controllers do.

use crate::rng::Rng;
use crate::units::{Duration, Time};

/// The content of one frame instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Complexity {
    /// ITU-T P.910 spatial information (std of the Sobel magnitude, luma).
    pub si: f64,
    /// ITU-T P.910 temporal information (std of the luma difference from the
    /// previous frame).
    pub ti: f64,
    /// The first frame of a new scene.
    pub cut: bool,
}

/// Constants of a content track (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackConfig {
    /// Mean scene length; scene changes are a Poisson process.
    pub scene_length: Duration,
    /// Median SI of a scene, and the log-std of scene SI levels.
    pub si: f64,
    pub si_spread: f64,
    /// Median TI of a scene, and the log-std of scene TI levels.
    pub ti: f64,
    pub ti_spread: f64,
    /// Log-std of SI and TI within a scene.
    pub si_wobble: f64,
    pub ti_wobble: f64,
    /// Correlation time of the variation within a scene (0: a fresh draw
    /// every frame).
    pub wobble_tau: Duration,
    /// TI of a scene's first frame.
    pub cut_ti: f64,
}

/// A content track: `next(now)` at every frame instant, in time order.
#[derive(Clone, Debug)]
pub struct Track {
    cfg: TrackConfig,
    rng: Rng,
    last: Option<Time>,
    /// The current scene's SI and TI levels.
    scene_si: f64,
    scene_ti: f64,
    /// The within-scene AR(1) states, standard normal in steady state.
    z_si: f64,
    z_ti: f64,
}

impl Track {
    pub fn new(cfg: TrackConfig, rng: Rng) -> Track {
        debug_assert!(cfg.scene_length.is_positive(), "scene length {}", cfg.scene_length);
        Track { cfg, rng, last: None, scene_si: cfg.si, scene_ti: cfg.ti, z_si: 0.0, z_ti: 0.0 }
    }

    pub fn config(&self) -> &TrackConfig {
        &self.cfg
    }

    /// The content of the frame instant `now` (not before the previous one).
    /// The first instant opens a scene without being a cut.
    pub fn next(&mut self, now: Time) -> Complexity {
        let cut = match self.last {
            None => {
                self.new_scene();
                false
            }
            Some(prev) => {
                let dt = now.saturating_since(prev).as_secs_f64();
                // P(a cut within dt) of a Poisson process of rate 1/length.
                let p = 1.0 - (-dt / self.cfg.scene_length.as_secs_f64().max(1e-9)).exp();
                let cut = self.rng.uniform() < p;
                if cut {
                    self.new_scene();
                } else {
                    // AR(1) with correlation e^(-dt/tau): exact for any frame
                    // rate, stationary variance 1.
                    let tau = self.cfg.wobble_tau.as_secs_f64();
                    let rho = if tau > 0.0 { (-dt / tau).exp() } else { 0.0 };
                    let k = (1.0 - rho * rho).sqrt();
                    self.z_si = rho * self.z_si + k * self.rng.normal();
                    self.z_ti = rho * self.z_ti + k * self.rng.normal();
                }
                cut
            }
        };
        self.last = Some(now);
        let si = self.scene_si * (self.cfg.si_wobble * self.z_si).exp();
        let ti = if cut { self.cfg.cut_ti } else { self.scene_ti * (self.cfg.ti_wobble * self.z_ti).exp() };
        debug_assert!(si.is_finite() && ti.is_finite() && si >= 0.0 && ti >= 0.0, "SI {si} TI {ti}");
        Complexity { si, ti, cut }
    }

    /// Draw a scene's levels and start its variation in steady state.
    fn new_scene(&mut self) {
        let c = self.cfg;
        self.scene_si = c.si * (c.si_spread * self.rng.normal()).exp();
        self.scene_ti = c.ti * (c.ti_spread * self.rng.normal()).exp();
        self.z_si = self.rng.normal();
        self.z_ti = self.rng.normal();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T30: Duration = Duration::from_micros(33_333);

    fn cfg() -> TrackConfig {
        TrackConfig {
            scene_length: Duration::from_secs(3),
            si: 60.0,
            si_spread: 0.2,
            ti: 20.0,
            ti_spread: 0.8,
            si_wobble: 0.05,
            ti_wobble: 0.3,
            wobble_tau: Duration::from_millis(500),
            cut_ti: 60.0,
        }
    }

    fn run(c: TrackConfig, seed: u64, frames: i64, every: Duration) -> Vec<Complexity> {
        let mut t = Track::new(c, Rng::new(seed));
        (0..frames).map(|i| t.next(Time::ZERO + every * i)).collect()
    }

    #[test]
    fn cuts_arrive_at_the_scene_rate() {
        // 1 h at 30 fps with 3 s scenes: 1200 cuts expected, Poisson std 35.
        let frames = run(cfg(), 7, 108_000, T30);
        let cuts = frames.iter().filter(|f| f.cut).count() as f64;
        assert!((cuts - 1200.0).abs() < 120.0, "{cuts} cuts");
        assert!(!frames[0].cut, "the first frame opens a scene without a cut");
        // Frame-rate independent: 10 fps gives the same rate.
        let slow = run(cfg(), 8, 36_000, Duration::from_millis(100));
        let cuts10 = slow.iter().filter(|f| f.cut).count() as f64;
        assert!((cuts10 - 1200.0).abs() < 120.0, "{cuts10} cuts at 10 fps");
        // Scene lengths are exponential: as many scenes shorter than the
        // median ln 2 · 3 s = 2.08 s as longer.
        let starts: Vec<usize> = frames.iter().enumerate().filter(|(_, f)| f.cut).map(|(i, _)| i).collect();
        let lens: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        let short = lens.iter().filter(|&&l| (l as f64) < 2.079 * 30.0).count() as f64 / lens.len() as f64;
        assert!((short - 0.5).abs() < 0.05, "share of scenes below the median {short}");
    }

    #[test]
    fn levels_follow_the_configuration() {
        let c = cfg();
        let frames = run(c, 3, 108_000, T30);
        let logs = |f: &dyn Fn(&Complexity) -> f64| {
            let v: Vec<f64> = frames.iter().filter(|x| !x.cut).map(|x| f(x).ln()).collect();
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let s = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
            (m.exp(), s)
        };
        let (si_med, si_std) = logs(&|x| x.si);
        let (ti_med, ti_std) = logs(&|x| x.ti);
        // Medians: scene level × within-scene factor, both log-symmetric.
        assert!((si_med / 60.0 - 1.0).abs() < 0.05, "SI median {si_med}");
        assert!((ti_med / 20.0 - 1.0).abs() < 0.15, "TI median {ti_med}");
        // Log-std: sqrt(spread² + wobble²) = sqrt(0.04 + 0.0025) = 0.206 and
        // sqrt(0.64 + 0.09) = 0.854 (frame-weighted; ~1200 scenes).
        assert!((si_std - 0.206).abs() < 0.03, "SI log-std {si_std}");
        assert!((ti_std - 0.854).abs() < 0.08, "TI log-std {ti_std}");
        for f in &frames {
            assert!(f.si > 0.0 && f.ti > 0.0 && f.si.is_finite() && f.ti.is_finite(), "{f:?}");
            if f.cut {
                assert_eq!(f.ti, 60.0);
            }
        }
    }

    #[test]
    fn within_a_scene_values_are_correlated_over_wobble_tau() {
        let c = TrackConfig { scene_length: Duration::from_secs(1_000_000), si_spread: 0.0, ti_spread: 0.0, ..cfg() };
        let frames = run(c, 5, 30_000, T30);
        let z: Vec<f64> = frames.iter().map(|f| (f.ti / 20.0).ln() / 0.3).collect();
        let lag = |k: usize| {
            let n = z.len() - k;
            (0..n).map(|i| z[i] * z[i + k]).sum::<f64>() / n as f64
        };
        let var = lag(0);
        assert!((var - 1.0).abs() < 0.15, "within-scene variance {var}");
        // Lag 15 frames = 0.5 s = tau: e^-1 = 0.37.
        let r = lag(15) / var;
        assert!((r - 0.368).abs() < 0.08, "autocorrelation at tau {r}");
        assert!(frames.iter().all(|f| !f.cut));
    }

    #[test]
    fn same_seed_same_track() {
        let a = run(cfg(), 11, 3000, T30);
        assert_eq!(a, run(cfg(), 11, 3000, T30));
        assert_ne!(a, run(cfg(), 12, 3000, T30));
    }

    #[test]
    fn no_spread_no_wobble_is_constant() {
        let c = TrackConfig { si_spread: 0.0, ti_spread: 0.0, si_wobble: 0.0, ti_wobble: 0.0, ..cfg() };
        for f in run(c, 1, 3000, T30) {
            assert_eq!(f.si, 60.0);
            assert_eq!(f.ti, if f.cut { 60.0 } else { 20.0 });
        }
    }
}
