//! Rate–quality model (DESIGN.md §4): the PSNR and SSIM a frame would score
//! against its source, estimated from its size, resolution, type and the
//! content, with no pixels involved. Also the viewer's view of a frozen
//! (repeated) frame, which loses quality as the source moves on.
//!
//! Per frame, with `bits` the frame's size, `w×h` its resolution and
//! `W×H` the viewer's display:
//!
//! ```text
//! bits_eff = bits / key_cost                        key frame
//!          = bits · (T_ref / T)^temporal_exponent   delta frame, T = frame interval
//! bpp      = bits_eff / min(w·h, W·H)
//! P_coded  = psnr_at_1bpp + db_per_doubling · log2(bpp)
//! s        = sqrt(W·H / (w·h))                      linear upscaling factor
//! P_up     = upscale_2x_db − 10·log10(s − 1)         only when s > 1
//! PSNR     = −10·log10(10^(−P_coded/10) + 10^(−coded_max_db/10) + 10^(−P_up/10))
//!            clamped to [psnr_min_db, PSNR_CAP_DB]
//! SSIM     = 1 / (1 + 10^((ssim_offset_db − PSNR) / ssim_scale_db))
//! ```
//!
//! The three terms inside the logarithm are mean squared errors (peak 1):
//! coding error, the codec's finest-quantiser residue and the detail lost by
//! upscaling are independent, so their MSEs add. The constants are a
//! documented choice fitted to the anchors below and to the Dumbo thesis's
//! PSNR/SSIM pairs, pending calibration against real codecs: a measured
//! profile replaces them through `QualityModel::from_params`.
//!
//! Talking head, 720p at 30 fps on a 720p display: 500 kbps → 33.1 dB,
//! 1 Mbps → 35.6 dB, 2.5 Mbps → 39.0 dB. Game content is about 3.4 dB lower
//! at the same rate.

use crate::controller::{ConfigError, Param, ParamInfo, Params};
use crate::resolution::Resolution;
use crate::units::{DataSize, Duration};

/// PSNR reported for identical frames, whose true PSNR is infinite. 60 dB is
/// libvmaf's cap for 8-bit video (`psnr_max` = 6·bpc + 12); WebRTC's
/// kPerfectPSNR (48 dB) would clip well-coded frames, libyuv's 128 dB skews
/// averages.
pub const PSNR_CAP_DB: f64 = 60.0;

/// SSIM in dB reported for SSIM = 1 (infinite): 60 dB is SSIM = 0.999999,
/// the last digit the usual six-decimal SSIM printouts (FFmpeg's ssim filter)
/// resolve, and the same ceiling as `PSNR_CAP_DB`.
pub const SSIM_DB_CAP: f64 = 60.0;

/// Frame interval of the rate anchors, 30 fps as the sender's default
/// (sender.rs, 33 333 µs): a delta frame at this interval is scored on its
/// bits alone.
const REF_INTERVAL_US: f64 = 33_333.0;

/// The interval correction holds from 1/4 to 30 times the reference (120 fps
/// to 1 fps): shorter gaps gain nothing more, and after longer ones a delta
/// frame is effectively a new picture.
const INTERVAL_RATIO_RANGE: (f64, f64) = (0.25, 30.0);

/// SSIM (0..1) in dB: −10·log10(1 − SSIM), at most `SSIM_DB_CAP`.
pub fn ssim_db(ssim: f64) -> f64 {
    debug_assert!(!ssim.is_nan(), "ssim is NaN");
    if ssim.is_nan() {
        return 0.0;
    }
    if ssim >= 1.0 {
        return SSIM_DB_CAP;
    }
    (-10.0 * (1.0 - ssim).log10()).min(SSIM_DB_CAP)
}

/// Mean squared error (peak 1) of a PSNR in dB.
fn mse(psnr_db: f64) -> f64 {
    10f64.powf(-psnr_db / 10.0)
}

/// PSNR in dB of a mean squared error (peak 1).
fn psnr_of(mse: f64) -> f64 {
    -10.0 * mse.log10()
}

/// How much the picture changes from frame to frame, which sets how many bits
/// a given quality costs and how fast a frozen frame goes stale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Content {
    /// A person talking in front of a still background: low motion, smooth
    /// detail (the thesis's YouTube dataset, dumbo.txt Table 6.1).
    #[default]
    TalkingHead,
    /// Rendered game play: high motion, sharp texture and text.
    Game,
}

impl Content {
    pub const ALL: [Content; 2] = [Content::TalkingHead, Content::Game];

    pub const fn name(self) -> &'static str {
        match self {
            Content::TalkingHead => "talking-head",
            Content::Game => "game",
        }
    }

    pub fn parse(s: &str) -> Option<Content> {
        match s {
            "talking-head" | "talking_head" => Some(Content::TalkingHead),
            "game" => Some(Content::Game),
            _ => None,
        }
    }
}

const TALKING_HEAD: QualityModel = QualityModel::new(Content::TalkingHead);
const GAME: QualityModel = QualityModel::new(Content::Game);

/// A model constant: declared with the talking-head default and range, the
/// game default listed beside it where it differs (`QualityModel::new`
/// holds both, with their sources).
const fn constant(name: &'static str, head: f64, game: f64, min: f64, max: f64, doc: &'static str) -> Param<f64> {
    Param::number(name, head, min, max, doc).or_in(Content::Game.name(), game)
}

const CONTENT: Param<&str> = Param::choice(
    "content",
    Content::TalkingHead.name(),
    &["talking-head", "talking_head", "game"],
    "talking-head or game: selects the defaults below",
);
const PSNR_AT_1BPP: Param<f64> = constant(
    "psnr_at_1bpp",
    TALKING_HEAD.psnr_at_1bpp,
    GAME.psnr_at_1bpp,
    10.0,
    100.0,
    "intercept a of PSNR = a + b·log2(bits per pixel), dB",
);
const DB_PER_DOUBLING: Param<f64> = constant(
    "db_per_doubling",
    TALKING_HEAD.db_per_doubling,
    GAME.db_per_doubling,
    0.1,
    10.0,
    "slope b: PSNR gain per doubling of bits, dB",
);
const CODED_MAX_DB: Param<f64> = constant(
    "coded_max_db",
    TALKING_HEAD.coded_max_db,
    GAME.coded_max_db,
    20.0,
    PSNR_CAP_DB,
    "PSNR the codec approaches at unlimited bits, dB",
);
const PSNR_MIN_DB: Param<f64> = constant(
    "psnr_min_db",
    TALKING_HEAD.psnr_min_db,
    GAME.psnr_min_db,
    0.0,
    40.0,
    "lowest PSNR reported for a coded frame, dB",
);
const KEY_COST: Param<f64> = constant(
    "key_cost",
    TALKING_HEAD.key_cost,
    GAME.key_cost,
    1.0,
    20.0,
    "bits a key frame needs for the quality of a delta frame, as a multiple",
);
const TEMPORAL_EXPONENT: Param<f64> = constant(
    "temporal_exponent",
    TALKING_HEAD.temporal_exponent,
    GAME.temporal_exponent,
    0.0,
    1.0,
    "delta frames: effective bits scale as (1/30 s / interval)^x",
);
const UPSCALE_2X_DB: Param<f64> = constant(
    "upscale_2x_db",
    TALKING_HEAD.upscale_2x_db,
    GAME.upscale_2x_db,
    10.0,
    PSNR_CAP_DB,
    "PSNR ceiling of a frame at half the display's width and height, dB",
);
/// `Resolution::R720`, as `QualityModel::new` (checked by tests/params.rs).
const DISPLAY: Param<String> =
    Param::text("display", "1280x720", "viewer's display resolution, \"WxH\" (16..16384) or 180p..1080p");
const SSIM_OFFSET_DB: Param<f64> = constant(
    "ssim_offset_db",
    TALKING_HEAD.ssim_offset_db,
    GAME.ssim_offset_db,
    0.0,
    PSNR_CAP_DB,
    "PSNR minus SSIM dB at high quality: SSIM = 1/(1 + 10^((offset − PSNR)/scale))",
);
const SSIM_SCALE_DB: Param<f64> = constant(
    "ssim_scale_db",
    TALKING_HEAD.ssim_scale_db,
    GAME.ssim_scale_db,
    1.0,
    30.0,
    "PSNR dB per decade of (1 − SSIM)/SSIM",
);
const FREEZE_FLOOR_DB: Param<f64> = constant(
    "freeze_floor_db",
    TALKING_HEAD.freeze_floor_db,
    GAME.freeze_floor_db,
    0.0,
    PSNR_CAP_DB,
    "PSNR of a frame frozen for long against the moving source, dB",
);
const FREEZE_TAU: Param<Duration> = Param::duration(
    "freeze_tau",
    TALKING_HEAD.freeze_tau,
    Duration::ZERO,
    Duration::MAX,
    "time constant of a frozen frame's decay towards the floor (95 % after 3τ)",
)
.above_min()
.or_in(Content::Game.name(), GAME.freeze_tau);

/// Parameters of `QualityModel::from_params`; defaults are per content.
pub const PARAMS: &[ParamInfo] = &[
    CONTENT.info(),
    PSNR_AT_1BPP.info(),
    DB_PER_DOUBLING.info(),
    CODED_MAX_DB.info(),
    PSNR_MIN_DB.info(),
    KEY_COST.info(),
    TEMPORAL_EXPONENT.info(),
    UPSCALE_2X_DB.info(),
    DISPLAY.info(),
    SSIM_OFFSET_DB.info(),
    SSIM_SCALE_DB.info(),
    FREEZE_FLOOR_DB.info(),
    FREEZE_TAU.info(),
];

/// Constants of the rate–quality model. `new` gives the defaults of a content
/// kind; `from_params` overrides any of them (a measured codec profile).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QualityModel {
    pub content: Content,
    /// a in PSNR = a + b·log2(bpp), dB. An extrapolation to 1 bit per pixel:
    /// `coded_max_db` keeps real values well below it.
    pub psnr_at_1bpp: f64,
    /// b: dB per doubling of bits per pixel.
    pub db_per_doubling: f64,
    /// PSNR at unlimited bits: the residue of the codec's finest quantiser.
    pub coded_max_db: f64,
    /// Lowest PSNR of a coded frame. Below it the log fit is not trusted: the
    /// codec emits skip frames whose quality depends on the previous frame,
    /// which this stateless model does not see.
    pub psnr_min_db: f64,
    /// A key frame needs this many times the bits of a delta frame for the
    /// same quality.
    pub key_cost: f64,
    /// A delta frame `k` times the reference interval apart from its
    /// predecessor has `k^-x` times the effective bits.
    pub temporal_exponent: f64,
    /// PSNR ceiling of a frame upscaled 2× (linear) to the display, dB.
    pub upscale_2x_db: f64,
    /// Viewer's display (width, height); also the source resolution.
    pub display: (u32, u32),
    /// SSIM logistic: offset and scale in dB.
    pub ssim_offset_db: f64,
    pub ssim_scale_db: f64,
    /// Frozen frame: PSNR floor against the moving source and decay time
    /// constant.
    pub freeze_floor_db: f64,
    pub freeze_tau: Duration,
}

impl Default for QualityModel {
    fn default() -> Self {
        QualityModel::new(Content::TalkingHead)
    }
}

impl QualityModel {
    /// Defaults for a content kind: a documented choice pending measured
    /// profiles, fitted as follows.
    pub const fn new(content: Content) -> Self {
        let talking_head = QualityModel {
            content,
            // PSNR linear in log rate, the first-order form of the cubic
            // PSNR-over-log-rate fit of Bjøntegaard's BD-rate (VCEG-M33,
            // 2001), fitted to 720p30: 500 kbps → 33, 1 Mbps → 35.6,
            // 2.5 Mbps → 39 dB. A magnitude check, not a fit: at 2706 kbps it
            // gives 39.2 dB and SSIM 12.8 dB, the thesis's GCC 39.41 and
            // 12.82 dB at 2706 kbps (dumbo.txt §6.3).
            psnr_at_1bpp: 48.5,
            db_per_doubling: 2.65,
            // What the finest quantiser of an 8-bit real-time codec leaves: a
            // documented choice of 50 dB, below PSNR_CAP_DB, that keeps the
            // log fit from growing without bound.
            coded_max_db: 50.0,
            // The log fit reaches 20 dB at ~70 B for a 720p frame, about an
            // all-skip VP8 frame (encoder.rs MIN_FRAME_BYTES).
            psnr_min_db: 20.0,
            // Equal to the encoder's default key ratio (encoder.rs
            // DEFAULT_KEY_RATIO = 5, after libvpx's MaxIntraTarget), so key
            // frames score like their neighbours, as rate control intends.
            // Low motion makes delta frames cheap, hence the large ratio.
            key_cost: 5.0,
            // Little changes between frames of a talking head: a longer gap
            // costs a delta frame little.
            temporal_exponent: 0.3,
            // Bicubic upscaling loses MSE ∝ (s − 1): the super-resolution
            // bicubic baselines on Set5 (×2 33.66, ×3 30.39, ×4 28.42 dB;
            // Kim et al., VDSR, CVPR 2016, Table 2) fall 3.3 and 5.2 dB from
            // ×2, the form gives 3.0 and 4.8. Video of a face is smoother than
            // Set5: 37 dB at ×2 puts the 360p/720p crossover near 1 Mbps, the
            // bottom of 720p's band in Dumbo Table 5.1 (1000–3000 kbps).
            upscale_2x_db: 37.0,
            // The simulator's default sending resolution (scenario.rs), so
            // 720p frames carry no upscaling loss.
            display: Resolution::R720.size(),
            // Independent noise of MSE m on a patch of variance σ² makes
            // SSIM's contrast-structure term (Wang et al. 2004, eq. 13)
            // K/(K + m) with K = 2σ² + C2: a logistic in PSNR with scale 10 dB,
            // and SSIM dB ≈ PSNR − offset at high quality.
            // The thesis's (PSNR, SSIM dB) means fit offset 26.7 dB: GCC
            // (39.41, 12.82), PCC (36.78, 9.95), RoCC (39.90, 13.90),
            // RoCC+Dumbo (41.1, 14.79), Copa+Dumbo (40.64, 14.05), GCC with
            // probing (40.41, 14.04) give 26.2..27.3 (dumbo.txt §6.2.2–6.4,
            // App. A).
            ssim_offset_db: 26.7,
            ssim_scale_db: 10.0,
            // A talking head frozen for seconds still matches the background:
            // about 23 dB against the moving source, reached (95 %) in ~2 s.
            freeze_floor_db: 23.0,
            freeze_tau: Duration::from_millis(600),
        };
        match content {
            Content::TalkingHead => talking_head,
            Content::Game => QualityModel {
                // Texture, particles and camera motion: 3.5 dB less at the
                // same rate, the middle of the 3–4 dB this model targets.
                psnr_at_1bpp: talking_head.psnr_at_1bpp - 3.5,
                psnr_min_db: 16.0,
                // Costly delta frames under high motion narrow the gap to an
                // intra frame.
                key_cost: 3.0,
                temporal_exponent: 0.6,
                // Sharp edges and text lose more to upscaling.
                upscale_2x_db: 31.0,
                // Texture masks noise in SSIM's variance normalisation, but
                // without measurements the shift is kept small.
                ssim_offset_db: 25.0,
                // Unrelated frames of a game scene; reached (95 %) in ~0.45 s.
                freeze_floor_db: 18.0,
                freeze_tau: Duration::from_millis(150),
                ..talking_head
            },
        }
    }

    /// A model from parameters (`PARAMS`): `content` picks the defaults, any
    /// other key overrides one constant.
    pub fn from_params(p: &Params) -> Result<Self, ConfigError> {
        p.check_known(PARAMS)?;
        let d = QualityModel::new(Content::parse(p.get(&CONTENT)?).unwrap_or_default());
        let m = QualityModel {
            content: d.content,
            psnr_at_1bpp: p.get_or(&PSNR_AT_1BPP, d.psnr_at_1bpp)?,
            db_per_doubling: p.get_or(&DB_PER_DOUBLING, d.db_per_doubling)?,
            coded_max_db: p.get_or(&CODED_MAX_DB, d.coded_max_db)?,
            psnr_min_db: p.get_or(&PSNR_MIN_DB, d.psnr_min_db)?,
            key_cost: p.get_or(&KEY_COST, d.key_cost)?,
            temporal_exponent: p.get_or(&TEMPORAL_EXPONENT, d.temporal_exponent)?,
            upscale_2x_db: p.get_or(&UPSCALE_2X_DB, d.upscale_2x_db)?,
            display: match p.has(&DISPLAY) {
                true => display(&p.get(&DISPLAY)?)?,
                false => d.display,
            },
            ssim_offset_db: p.get_or(&SSIM_OFFSET_DB, d.ssim_offset_db)?,
            ssim_scale_db: p.get_or(&SSIM_SCALE_DB, d.ssim_scale_db)?,
            freeze_floor_db: p.get_or(&FREEZE_FLOOR_DB, d.freeze_floor_db)?,
            freeze_tau: p.get_or(&FREEZE_TAU, d.freeze_tau)?,
        };
        if m.psnr_min_db >= m.coded_max_db {
            return Err(ConfigError::invalid("psnr_min_db", "must be below coded_max_db"));
        }
        Ok(m)
    }

    /// PSNR ceiling (dB) of a `width×height` frame shown on the display; `None`
    /// when it needs no upscaling.
    pub fn upscale_ceiling(&self, width: u32, height: u32) -> Option<f64> {
        let px = (width as f64 * height as f64).max(1.0);
        let s = (self.display_pixels() / px).sqrt();
        (s > 1.0).then(|| self.upscale_2x_db - 10.0 * (s - 1.0).log10())
    }

    /// PSNR (dB) of a received frame of `size` bytes against its source, on
    /// the viewer's display. `frame_interval` is the time since the previous
    /// frame (delta frames only).
    pub fn frame_psnr(&self, size: DataSize, width: u32, height: u32, key: bool, frame_interval: Duration) -> f64 {
        let mut bits = size.bits() as f64;
        if key {
            bits /= self.key_cost;
        } else if frame_interval.is_positive() {
            let (lo, hi) = INTERVAL_RATIO_RANGE;
            let r = (frame_interval.as_micros() as f64 / REF_INTERVAL_US).clamp(lo, hi);
            bits *= r.powf(-self.temporal_exponent);
        }
        // A frame above the display is judged after downscaling: as a
        // display-size frame with the same bits, no gain and no loss.
        let px = (width as f64 * height as f64).clamp(1.0, self.display_pixels().max(1.0));
        let bpp = bits / px;
        if bpp <= 0.0 {
            return self.psnr_min_db;
        }
        let coded = self.psnr_at_1bpp + self.db_per_doubling * bpp.log2();
        let mut err = mse(coded) + mse(self.coded_max_db);
        if let Some(up) = self.upscale_ceiling(width, height) {
            err += mse(up);
        }
        let p = psnr_of(err);
        debug_assert!(!p.is_nan());
        // max/min rather than clamp: hand-set constants must not panic.
        p.max(self.psnr_min_db).min(PSNR_CAP_DB)
    }

    /// SSIM (0..1) of the same frame: `ssim_from_psnr(frame_psnr(..))`.
    pub fn frame_ssim(&self, size: DataSize, width: u32, height: u32, key: bool, frame_interval: Duration) -> f64 {
        self.ssim_from_psnr(self.frame_psnr(size, width, height, key, frame_interval))
    }

    /// The logistic SSIM(PSNR); 1 at `PSNR_CAP_DB` (identical frames).
    pub fn ssim_from_psnr(&self, psnr_db: f64) -> f64 {
        if psnr_db >= PSNR_CAP_DB {
            return 1.0;
        }
        1.0 / (1.0 + 10f64.powf((self.ssim_offset_db - psnr_db) / self.ssim_scale_db))
    }

    /// Inverse of `ssim_from_psnr`; `PSNR_CAP_DB` at SSIM 1, 0 dB at SSIM ≤ 0.
    pub fn psnr_from_ssim(&self, ssim: f64) -> f64 {
        if ssim >= 1.0 {
            return PSNR_CAP_DB;
        }
        if ssim.is_nan() || ssim <= 0.0 {
            return 0.0;
        }
        (self.ssim_offset_db - self.ssim_scale_db * ((1.0 - ssim) / ssim).log10()).clamp(0.0, PSNR_CAP_DB)
    }

    /// Viewer-view PSNR of a frame `displayed_psnr` good that has stayed on
    /// screen `frozen_for` past its own instant, against the current source.
    /// The source drifts away independently of the coding error, so the MSEs
    /// add; the drift's MSE moves from nothing to the floor's as
    /// 1 − e^(−t/τ) (linear at first, saturating at unrelated frames of the
    /// same scene). A frame already below the floor keeps its value.
    pub fn frozen_psnr(&self, displayed_psnr: f64, frozen_for: Duration) -> f64 {
        if !frozen_for.is_positive() {
            return displayed_psnr;
        }
        let (m_shown, m_floor) = (mse(displayed_psnr), mse(self.freeze_floor_db));
        if m_shown >= m_floor {
            return displayed_psnr;
        }
        let w = 1.0 - (-frozen_for.as_secs_f64() / self.freeze_tau.as_secs_f64().max(1e-6)).exp();
        psnr_of(m_shown + (m_floor - m_shown) * w).min(displayed_psnr)
    }

    /// `frozen_psnr` in SSIM terms, through the model's PSNR–SSIM mapping.
    pub fn frozen_ssim(&self, displayed_ssim: f64, frozen_for: Duration) -> f64 {
        if !frozen_for.is_positive() || displayed_ssim.is_nan() || displayed_ssim <= 0.0 {
            return displayed_ssim;
        }
        let p = if displayed_ssim >= 1.0 { f64::INFINITY } else { self.psnr_from_ssim(displayed_ssim) };
        self.ssim_from_psnr(self.frozen_psnr(p, frozen_for)).min(displayed_ssim)
    }

    fn display_pixels(&self) -> f64 {
        self.display.0 as f64 * self.display.1 as f64
    }
}

/// "1280x720" or a resolution name ("720p").
fn display(s: &str) -> Result<(u32, u32), ConfigError> {
    if let Some(r) = Resolution::parse(s.trim()) {
        return Ok(r.size());
    }
    let wh = s.trim().split_once(['x', 'X']).and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    match wh {
        Some((w, h)) if (16..=16384).contains(&w) && (16..=16384).contains(&h) => Ok((w, h)),
        _ => Err(ConfigError::invalid(DISPLAY.name(), format!("'{s}' is not \"WxH\" (16..16384) or 180p..1080p"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::ParamValue;
    use crate::units::DataRate;

    const FRAME: Duration = Duration::from_micros(33_333);

    /// A delta frame at `kbps` and 30 fps.
    fn delta(m: &QualityModel, kbps: u64, (w, h): (u32, u32)) -> f64 {
        let size = DataRate::from_kbps(kbps) * FRAME;
        m.frame_psnr(size, w, h, false, FRAME)
    }

    const P720: (u32, u32) = (1280, 720);
    const P360: (u32, u32) = (640, 360);
    const P180: (u32, u32) = (320, 180);

    #[test]
    fn anchors_720p_talking_head() {
        let m = QualityModel::new(Content::TalkingHead);
        // 500 kbps: 2083 B/frame, 0.0181 bpp → 48.5 + 2.65·log2(0.0181)
        // = 33.16, with the 50 dB codec ceiling 33.07.
        let p500 = delta(&m, 500, P720);
        assert!((p500 - 33.07).abs() < 0.01, "{p500}");
        assert!((32.0..=34.0).contains(&p500));
        let p1000 = delta(&m, 1000, P720);
        assert!((p1000 - 35.65).abs() < 0.01, "{p1000}");
        assert!((35.0..=36.0).contains(&p1000));
        let p2500 = delta(&m, 2500, P720);
        assert!((p2500 - 38.96).abs() < 0.01, "{p2500}");
        assert!((38.0..=40.0).contains(&p2500));
    }

    #[test]
    fn monotonic_in_bits() {
        for c in Content::ALL {
            let m = QualityModel::new(c);
            for res in [P180, P360, P720, (1920, 1080)] {
                let mut last = f64::NEG_INFINITY;
                for b in (0..20_000).step_by(50) {
                    let p = m.frame_psnr(DataSize::from_bytes(b), res.0, res.1, false, FRAME);
                    assert!(p >= last, "{c:?} {res:?} {b} B: {p} < {last}");
                    assert!((m.psnr_min_db..=PSNR_CAP_DB).contains(&p));
                    last = p;
                }
            }
            // Strictly increasing between the floor and the ceilings.
            let a = delta(&m, 300, P720);
            let b = delta(&m, 301, P720);
            assert!(b > a);
        }
        // No bits: the floor.
        let m = QualityModel::default();
        assert_eq!(m.frame_psnr(DataSize::ZERO, 1280, 720, false, FRAME), 20.0);
    }

    #[test]
    fn resolution_ceiling() {
        let m = QualityModel::default();
        assert_eq!(m.upscale_ceiling(1280, 720), None);
        assert_eq!(m.upscale_ceiling(1920, 1080), None);
        // s = 2: 37 dB; s = 4: 37 − 10·log10(3) = 32.23 dB.
        assert!((m.upscale_ceiling(640, 360).unwrap() - 37.0).abs() < 1e-9);
        assert!((m.upscale_ceiling(320, 180).unwrap() - 32.229).abs() < 1e-3);
        // More bits per pixel wins at 500 kbps: 360p 34.53 vs 720p 33.07 dB.
        let (p360, p720) = (delta(&m, 500, P360), delta(&m, 500, P720));
        assert!((p360 - 34.53).abs() < 0.01, "{p360}");
        assert!(p360 > p720 && p360 - p720 < 2.0);
        // 360p caps lower: at 2.5 Mbps 36.12 vs 38.96 dB, and never above 37.
        let (p360, p720) = (delta(&m, 2500, P360), delta(&m, 2500, P720));
        assert!((p360 - 36.12).abs() < 0.01, "{p360}");
        assert!(p360 < p720);
        assert!(delta(&m, 100_000, P360) < 37.0);
        assert!(delta(&m, 100_000, P180) < 32.23);
        // 720p overtakes 360p between 800 kbps and 1 Mbps.
        assert!(delta(&m, 800, P360) > delta(&m, 800, P720));
        assert!(delta(&m, 1000, P360) < delta(&m, 1000, P720));
        // Above the display: scored as a display-size frame with the same bits.
        assert_eq!(delta(&m, 3000, (1920, 1080)), delta(&m, 3000, P720));
        // On a 1080p display 720p gets a ceiling of 37 + 10·log10(2) = 40.01 dB.
        let p = Params::new().with("display", ParamValue::Str("1080p".into()));
        let m1080 = QualityModel::from_params(&p).unwrap();
        assert!((m1080.upscale_ceiling(1280, 720).unwrap() - 40.01).abs() < 0.01);
        assert!(delta(&m1080, 2500, P720) < delta(&m, 2500, P720));
    }

    #[test]
    fn game_is_lower() {
        let (th, game) = (QualityModel::new(Content::TalkingHead), QualityModel::new(Content::Game));
        for kbps in [300, 500, 1000, 2500, 4000] {
            let gap = delta(&th, kbps, P720) - delta(&game, kbps, P720);
            assert!((3.0..=4.0).contains(&gap), "{kbps} kbps: gap {gap}");
        }
        // 500 kbps: 29.62 dB; 2.5 Mbps: 35.65 dB.
        assert!((delta(&game, 500, P720) - 29.62).abs() < 0.01);
        assert!((delta(&game, 2500, P720) - 35.65).abs() < 0.01);
        assert!(delta(&game, 2500, P360) < delta(&th, 2500, P360));
    }

    #[test]
    fn key_frames_and_frame_interval() {
        let m = QualityModel::default();
        let d = DataSize::from_bytes(4000);
        // A key frame key_cost times larger scores like the delta frame.
        let k = m.frame_psnr(d.mul_f64(5.0), 1280, 720, true, FRAME);
        assert!((k - m.frame_psnr(d, 1280, 720, false, FRAME)).abs() < 1e-9);
        // At 15 fps a frame of twice the bits gains 2.65·(1 − 0.3) = 1.86 dB
        // (1.81 with the 50 dB codec ceiling), not the 2.65 dB of doubling at
        // 30 fps.
        let p30 = m.frame_psnr(DataSize::from_bytes(2000), 1280, 720, false, FRAME);
        let p15 = m.frame_psnr(DataSize::from_bytes(4000), 1280, 720, false, FRAME * 2);
        let p30x2 = m.frame_psnr(DataSize::from_bytes(4000), 1280, 720, false, FRAME);
        assert!((p15 - p30 - 1.81).abs() < 0.01, "{}", p15 - p30);
        assert!(p15 < p30x2);
        // A key frame ignores the interval.
        let a = m.frame_psnr(d, 1280, 720, true, FRAME);
        assert_eq!(a, m.frame_psnr(d, 1280, 720, true, Duration::from_secs(1)));
    }

    #[test]
    fn ssim_mapping() {
        let m = QualityModel::default();
        // SSIM dB = 10·log10(1 + 10^((PSNR − 26.7)/10)): at 39.41 dB PSNR
        // (thesis GCC) 12.93 dB against the thesis's 12.82.
        let s = m.ssim_from_psnr(39.41);
        assert!((ssim_db(s) - 12.93).abs() < 0.01, "{}", ssim_db(s));
        // 720p talking head: 500 kbps → SSIM 0.812 (7.27 dB), 2.5 Mbps →
        // 0.944 (12.51 dB).
        let s500 = m.frame_ssim(DataRate::from_kbps(500) * FRAME, 1280, 720, false, FRAME);
        assert!((s500 - 0.812).abs() < 0.001, "{s500}");
        let s2500 = m.frame_ssim(DataRate::from_kbps(2500) * FRAME, 1280, 720, false, FRAME);
        assert!((ssim_db(s2500) - 12.51).abs() < 0.01, "{}", ssim_db(s2500));
        // Round trip and identical frames.
        assert!((m.psnr_from_ssim(m.ssim_from_psnr(33.0)) - 33.0).abs() < 1e-9);
        assert_eq!(m.ssim_from_psnr(PSNR_CAP_DB), 1.0);
        assert_eq!(m.psnr_from_ssim(1.0), PSNR_CAP_DB);
    }

    #[test]
    fn ssim_db_values() {
        assert_eq!(ssim_db(0.9), 10.0);
        assert!((ssim_db(0.99) - 20.0).abs() < 1e-9);
        assert_eq!(ssim_db(1.0), SSIM_DB_CAP);
        assert_eq!(ssim_db(0.999_999_999), SSIM_DB_CAP);
        assert_eq!(ssim_db(0.0), 0.0);
    }

    #[test]
    fn frozen_decay() {
        for (c, reach) in [(Content::TalkingHead, 2000), (Content::Game, 500)] {
            let m = QualityModel::new(c);
            let shown = delta(&m, 2500, P720);
            assert_eq!(m.frozen_psnr(shown, Duration::ZERO), shown);
            // Falls monotonically, within 0.3 dB of the floor by `reach`,
            // within 0.01 dB after 10τ.
            let mut last = shown;
            for ms in (0..=reach).step_by(33) {
                let p = m.frozen_psnr(shown, Duration::from_millis(ms));
                assert!(p <= last && p >= m.freeze_floor_db, "{c:?} {ms} ms: {p}");
                last = p;
            }
            let p = m.frozen_psnr(shown, Duration::from_millis(reach));
            assert!(p - m.freeze_floor_db < 0.3, "{c:?}: {p}");
            let p = m.frozen_psnr(shown, m.freeze_tau * 10);
            assert!(p - m.freeze_floor_db < 0.01, "{c:?}: {p}");
            // A frame already below the floor does not improve.
            assert_eq!(m.frozen_psnr(10.0, Duration::from_secs(5)), 10.0);
        }
        // One frame interval frozen: talking head 38.96 → 34.1 dB, game
        // 35.65 → 24.7 dB.
        let th = QualityModel::new(Content::TalkingHead);
        let p = th.frozen_psnr(38.96, FRAME);
        assert!((p - 34.1).abs() < 0.05, "{p}");
        let g = QualityModel::new(Content::Game);
        let p = g.frozen_psnr(35.65, FRAME);
        assert!((p - 24.7).abs() < 0.05, "{p}");
    }

    #[test]
    fn frozen_ssim_follows_psnr() {
        for c in Content::ALL {
            let m = QualityModel::new(c);
            for ms in [0, 33, 200, 1000, 5000] {
                let t = Duration::from_millis(ms);
                let via_psnr = m.ssim_from_psnr(m.frozen_psnr(36.0, t));
                let direct = m.frozen_ssim(m.ssim_from_psnr(36.0), t);
                assert!((via_psnr - direct).abs() < 1e-9, "{c:?} {ms} ms");
            }
            let floor = m.ssim_from_psnr(m.freeze_floor_db);
            assert!(m.frozen_ssim(0.95, Duration::from_secs(10)) - floor < 1e-3);
            assert_eq!(m.frozen_ssim(0.95, Duration::ZERO), 0.95);
            // An identical frame frozen still decays.
            assert!(m.frozen_ssim(1.0, Duration::from_secs(1)) < 0.9);
        }
    }

    #[test]
    fn from_params_defaults_and_errors() {
        assert_eq!(QualityModel::from_params(&Params::new()).unwrap(), QualityModel::default());
        let g = Params::new().with("content", ParamValue::Str("game".into()));
        assert_eq!(QualityModel::from_params(&g).unwrap(), QualityModel::new(Content::Game));
        let p = Params::new()
            .with("psnr_at_1bpp", ParamValue::Num(47.0))
            .with("display", ParamValue::Str("1920x1080".into()))
            .with("freeze_tau", ParamValue::Str("1s".into()));
        let m = QualityModel::from_params(&p).unwrap();
        assert_eq!((m.psnr_at_1bpp, m.display, m.freeze_tau), (47.0, (1920, 1080), Duration::from_secs(1)));
        let bad = |k: &str, v: ParamValue| QualityModel::from_params(&Params::new().with(k, v)).is_err();
        assert!(bad("nope", ParamValue::Num(1.0)));
        assert!(bad("content", ParamValue::Str("sports".into())));
        assert!(bad("key_cost", ParamValue::Num(0.5)));
        assert!(bad("display", ParamValue::Str("12x".into())));
        assert!(bad("freeze_tau", ParamValue::Num(0.0)));
        // The floor (20 dB) must stay below the codec's ceiling.
        assert!(bad("coded_max_db", ParamValue::Num(20.0)));
        assert_eq!(Content::parse("game"), Some(Content::Game));
        assert_eq!(Content::parse(Content::TalkingHead.name()), Some(Content::TalkingHead));
    }
}
