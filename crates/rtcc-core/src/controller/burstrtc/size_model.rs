//! The frame-size model (burstrtc.txt §III-C, eqs. 7–9): a frame's size is
//! Gaussian (eq. 7) with mean μ = W·[T, SI, TI] (eq. 8), W fitted by least
//! squares over the last frames, and σ an exponential moving average of the
//! squared error (eq. 9).
//!
//! Units: T is the target as bytes per frame interval (T·Δt/8), so W's first
//! element is 1 for an encoder that hits its target whatever the content; SI
//! and TI as ITU-T P.910 gives them; sizes in bytes.
//!
//! Without SI and TI (an encoder that does not know them gives 0) or when
//! the last frames' [T, SI, TI] are collinear (a constant target on
//! unchanging content), eq. 8 has no unique fit; the model then fits T
//! alone, μ = w·T, which is eq. 8 with SI and TI weighted 0. It does the
//! same when the full fit makes μ fall as T rises (w_T ≤ 0), which the
//! utility search (eq. 13) would read as "a lower target gives larger
//! frames". `full()` says which fit is in use.

use std::collections::VecDeque;

/// Smallest pivot of the correlation-scaled normal equations accepted as
/// independent columns (|cos| of the angle between a column and the span of
/// the others at least about 1e-4).
const MIN_PIVOT: f64 = 1e-8;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeConfig {
    /// Frames in the fit (§III-C: the last 30).
    pub frames: usize,
    /// α of eq. 9, the weight of the previous σ² (§III-C: 0.8).
    pub alpha: f64,
    /// Fit SI and TI when known (eq. 8); `false` fits T alone.
    pub content: bool,
}

#[derive(Clone, Debug)]
pub struct SizeModel {
    cfg: SizeConfig,
    /// [T, SI, TI, F] of the last frames.
    rows: VecDeque<[f64; 4]>,
    w: [f64; 3],
    full: bool,
    sigma2: f64,
}

impl SizeModel {
    pub fn new(cfg: SizeConfig) -> Self {
        // Before any frame: frames the size of their target.
        SizeModel { cfg, rows: VecDeque::new(), w: [1.0, 0.0, 0.0], full: false, sigma2: 0.0 }
    }

    /// Eq. 8: μ for target `t` (bytes per frame interval) and the content's
    /// `si`, `ti`; never negative.
    pub fn mean(&self, t: f64, si: f64, ti: f64) -> f64 {
        (self.w[0] * t + self.w[1] * si + self.w[2] * ti).max(0.0)
    }

    /// Eq. 9's σ, bytes.
    pub fn sigma(&self) -> f64 {
        self.sigma2.sqrt()
    }

    pub fn weights(&self) -> [f64; 3] {
        self.w
    }

    /// Whether the fit uses SI and TI (eq. 8) or T alone.
    pub fn full(&self) -> bool {
        self.full
    }

    /// A frame of `f` bytes encoded at target `t` with content `si`, `ti`:
    /// eq. 9 with the error of the prediction made before it (σ_i² =
    /// α·σ_{i−1}² + (1 − α)·(μ − F_i)², σ_0 = 0), then the fit of eq. 8
    /// over the last `frames` frames including it.
    pub fn on_frame(&mut self, t: f64, si: f64, ti: f64, f: f64) {
        let e = self.mean(t, si, ti) - f;
        let a = self.cfg.alpha;
        self.sigma2 = a * self.sigma2 + (1.0 - a) * e * e;
        if self.rows.len() >= self.cfg.frames.max(1) {
            self.rows.pop_front();
        }
        self.rows.push_back([t, si, ti, f]);
        self.fit();
    }

    fn fit(&mut self) {
        if self.cfg.content && self.rows.len() >= 3 {
            if let Some(w) = least_squares(&self.rows).filter(|w| w[0] > 0.0) {
                self.w = w;
                self.full = true;
                return;
            }
        }
        // T alone: w = ΣTF / ΣT².
        let (tf, tt) = self.rows.iter().fold((0.0, 0.0), |(tf, tt), r| (tf + r[0] * r[3], tt + r[0] * r[0]));
        if tt > 0.0 {
            self.w = [tf / tt, 0.0, 0.0];
        }
        self.full = false;
    }
}

/// W minimising Σ(F − W·x)² over `rows` ([x; F]): the normal equations
/// (XᵀX)W = XᵀF, scaled to unit diagonal and solved by Cholesky; `None` if
/// a column is all zero or the columns are (nearly) collinear.
pub fn least_squares(rows: &VecDeque<[f64; 4]>) -> Option<[f64; 3]> {
    let mut g = [[0.0f64; 3]; 3];
    let mut b = [0.0f64; 3];
    for r in rows {
        for i in 0..3 {
            b[i] += r[i] * r[3];
            for j in 0..3 {
                g[i][j] += r[i] * r[j];
            }
        }
    }
    let d: Vec<f64> = (0..3).map(|i| g[i][i].sqrt()).collect();
    if d.iter().any(|&x| x.is_nan() || x <= 0.0 || !x.is_finite()) {
        return None;
    }
    // G' = D⁻¹GD⁻¹, b' = D⁻¹b, W = D⁻¹W'.
    let mut a = [[0.0f64; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            a[i][j] = g[i][j] / (d[i] * d[j]);
        }
    }
    let mut l = [[0.0f64; 3]; 3];
    for i in 0..3 {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s < MIN_PIVOT {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    // L y = b', Lᵀ w' = y.
    let mut y = [0.0f64; 3];
    for i in 0..3 {
        y[i] = (b[i] / d[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut w = [0.0f64; 3];
    for i in (0..3).rev() {
        w[i] = (y[i] - (i + 1..3).map(|k| l[k][i] * w[k]).sum::<f64>()) / l[i][i];
    }
    let w = [w[0] / d[0], w[1] / d[1], w[2] / d[2]];
    w.iter().all(|x| x.is_finite()).then_some(w)
}
