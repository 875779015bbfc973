//! The frame-delay model (burstrtc.txt §III-D, eqs. 10–12) and the estimate
//! of D_min (§IV-A1).
//!
//! D is a frame's delay from encoding to its first packet's arrival (eq.
//! 10). Everything here works with q = D − D_min ≥ 0, in milliseconds: eq.
//! 10 is q_i = max(0, q_{i−1} + (F_{i−1} + B·Δt)/C − Δt), so D_min only
//! enters through the measured delay the recursion starts from.

use std::collections::VecDeque;

use crate::units::{Duration, Time};

/// Eq. 10 for one frame, all in ms and bytes: the next frame's q after a
/// frame of `f` bytes, with capacity `c` and background `b` in bytes per ms
/// and `dt` ms between the two frames.
pub fn step(q: f64, f: f64, c: f64, b: f64, dt: f64) -> f64 {
    if c <= 0.0 {
        return q + dt;
    }
    (q + (f + b * dt) / c - dt).max(0.0)
}

/// Bins of q kept at most; mass beyond the last one is lumped into it.
const MAX_BINS: usize = 1 << 16;
/// Mass below which a tail bin is dropped (kept in the mean by moving it to
/// its neighbour would not change E[q] beyond 1e-9 ms per ms of q).
const TAIL: f64 = 1e-12;
/// The frame-size Gaussian is cut at ±`CUT` standard deviations.
const CUT: f64 = 6.0;

/// The distribution of q on a grid: `pmf[k]` = P(q = k·bin).
#[derive(Clone, Debug, PartialEq)]
pub struct DelayDist {
    bin: f64,
    pmf: Vec<f64>,
}

impl DelayDist {
    /// q known (eq. 12's P(D_0)): split between the two nearest grid points
    /// so that its mean is exact.
    pub fn point(q: f64, bin: f64) -> Self {
        let bin = if bin > 0.0 { bin } else { 1.0 };
        let x = (q.max(0.0) / bin).min((MAX_BINS - 2) as f64);
        let k = x.floor() as usize;
        let frac = x - k as f64;
        let mut pmf = vec![0.0; k + 2];
        pmf[k] = 1.0 - frac;
        pmf[k + 1] = frac;
        DelayDist { bin, pmf }
    }

    pub fn bin(&self) -> f64 {
        self.bin
    }

    /// E[q], ms.
    pub fn mean(&self) -> f64 {
        self.pmf.iter().enumerate().map(|(k, p)| k as f64 * p).sum::<f64>() * self.bin
    }

    /// Eqs. 11–12: one more frame whose X = (F + B·Δt)/C − Δt is Gaussian
    /// with mean `m` and deviation `s` (ms), discretised on the grid as eq.
    /// 7's P(F = x) = P(F ≤ x) − P(F ≤ x − 1); what would fall below 0 stays
    /// at 0 (eq. 11's P(D_i = D_min | d) = P(F ≤ y)).
    pub fn step(&self, m: f64, s: f64) -> Self {
        let h = self.bin;
        let x = steps(m, s, h);
        let top = self.pmf.len() as i64 + x.last().map_or(0, |e| e.0);
        let mut out = vec![0.0; (top.max(1) as usize).min(MAX_BINS)];
        let last = out.len() - 1;
        for (k, &p) in self.pmf.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            for &(j, pj) in &x {
                let idx = (k as i64 + j).max(0) as usize;
                out[idx.min(last)] += p * pj;
            }
        }
        while out.len() > 1 && out[out.len() - 1] < TAIL {
            let last = out.pop().unwrap_or(0.0);
            let n = out.len();
            out[n - 1] += last;
        }
        DelayDist { bin: h, pmf: out }
    }
}

/// X ~ N(m, s) on the grid of `h`: (offset in bins, probability), summing to
/// 1 (the ±6σ cut renormalised); a two-point split keeping the mean when s
/// is under half a bin.
fn steps(m: f64, s: f64, h: f64) -> Vec<(i64, f64)> {
    let m = m.clamp(-1e9, 1e9);
    // Also for a NaN deviation.
    if s.is_nan() || s <= h / 2.0 {
        let x = m / h;
        let k = x.floor();
        let frac = x - k;
        return vec![(k as i64, 1.0 - frac), (k as i64 + 1, frac)];
    }
    let lo = ((m - CUT * s) / h).floor() as i64;
    let hi = ((m + CUT * s) / h).ceil() as i64;
    let mut v: Vec<(i64, f64)> = (lo..=hi)
        .map(|j| {
            let x = j as f64 * h;
            (j, normal_cdf((x + h / 2.0 - m) / s) - normal_cdf((x - h / 2.0 - m) / s))
        })
        .filter(|e| e.1 > 0.0)
        .collect();
    let total: f64 = v.iter().map(|e| e.1).sum();
    if total > 0.0 {
        v.iter_mut().for_each(|e| e.1 /= total);
    } else {
        v = vec![((m / h).round() as i64, 1.0)];
    }
    v
}

/// Φ(x), the standard normal CDF (eq. 7), through erfc (Numerical Recipes'
/// `erfcc`, fractional error below 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// D_min as §IV-A1 estimates it: "we treat the propagation delay as a
/// symmetric distribution, using the mean of the longest sequence satisfying
/// this criterion within a 10-second frame delay queue", and the first
/// frame's first-packet delay at the start.
///
/// The reading here: the queue holds the first-packet delays of the frames
/// of the last `window`. The propagation delay with its fluctuation is the
/// symmetric part; queueing only adds, so it lies above it as a right tail.
/// Sorted ascending, the longest prefix that is not skewed right (sample
/// skewness m₃/m₂^{3/2} at most `skew`, or no spread at all) is that
/// symmetric part, and D_min is its mean. With a single delay the prefix is
/// that delay: the paper's start value.
#[derive(Clone, Debug)]
pub struct DMin {
    window: Duration,
    skew: f64,
    samples: VecDeque<(Time, f64)>,
    value: Option<f64>,
}

impl DMin {
    pub fn new(window: Duration, skew: f64) -> Self {
        DMin { window, skew, samples: VecDeque::new(), value: None }
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }

    /// A frame's first-packet delay `d` (ms), at `at`.
    pub fn on_sample(&mut self, at: Time, d: f64) {
        self.samples.push_back((at, d));
        while self.samples.front().is_some_and(|s| at.saturating_since(s.0) > self.window) {
            self.samples.pop_front();
        }
        let mut v: Vec<f64> = self.samples.iter().map(|s| s.1).collect();
        self.value = symmetric_mean(&mut v, self.skew);
    }
}

/// The mean of the longest ascending prefix of `v` whose skewness is at
/// most `skew` (a prefix without spread counts as symmetric).
pub fn symmetric_mean(v: &mut [f64], skew: f64) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let base = *v.first()?;
    let (mut s1, mut s2, mut s3) = (0.0, 0.0, 0.0);
    let mut best = base;
    for (i, &x) in v.iter().enumerate() {
        // Shifted by the smallest value, so the sums stay small.
        let x = x - base;
        s1 += x;
        s2 += x * x;
        s3 += x * x * x;
        let n = (i + 1) as f64;
        let mean = s1 / n;
        let m2 = (s2 / n - mean * mean).max(0.0);
        let m3 = s3 / n - 3.0 * mean * s2 / n + 2.0 * mean * mean * mean;
        // No spread (within a nanosecond): symmetric.
        let symmetric = m2 <= 1e-12 || m3 / m2.powf(1.5) <= skew;
        if symmetric {
            best = base + mean;
        }
    }
    Some(best)
}
