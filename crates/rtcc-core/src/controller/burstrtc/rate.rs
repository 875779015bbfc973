//! Analytic rate control (burstrtc.txt §III-E, eq. 13) and the loss
//! compensation of §IV-A1.

use std::collections::VecDeque;

use super::delay_model::DelayDist;

/// What the utility of a target needs besides the target itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Network {
    /// Ĉ and B̂, bytes per ms.
    pub c: f64,
    pub b: f64,
    /// Δt, ms.
    pub dt: f64,
    /// The next frame's q = D − D_min, ms (eq. 10 run over the frames sent
    /// since the newest measured delay: the feedback delay of §III-D2).
    pub q0: f64,
    /// L: frames encoded at the target before it can change (§III-D2).
    pub frames: usize,
    /// Grid step of the delay distribution, ms.
    pub bin: f64,
}

/// E[D_i] − D_min for i = 1..=L when frames of μ ± σ bytes follow the next
/// frame (eqs. 10–12): each frame at the target sets the delay of the one
/// after it.
pub fn expected_delays(net: &Network, mu: f64, sigma: f64) -> Vec<f64> {
    if net.c <= 0.0 {
        return vec![f64::INFINITY; net.frames.max(1)];
    }
    // X = (F + B·Δt)/C − Δt for F ~ N(μ, σ).
    let m = (mu + net.b * net.dt) / net.c - net.dt;
    let s = sigma / net.c;
    // A grid at least an eighth of X's deviation: a few dozen bins per step.
    let bin = net.bin.max(s / 8.0);
    let mut d = DelayDist::point(net.q0, bin);
    (0..net.frames.max(1))
        .map(|_| {
            d = d.step(m, s);
            d.mean()
        })
        .collect()
}

/// Eq. 13: U = log T − (β/k)·Σ_{i=1..k} (E[D_i] − D_min), T in kbps, delays
/// in ms, k = L, log the natural logarithm.
pub fn utility(t_kbps: f64, beta: f64, delays: &[f64]) -> f64 {
    utility_base(t_kbps, beta, delays, std::f64::consts::E)
}

/// Eq. 13 with log to `base` (the paper does not state it): a larger base
/// shrinks the rate term by 1/ln(base), which trades rate for delay as a
/// larger β would.
pub fn utility_base(t_kbps: f64, beta: f64, delays: &[f64], base: f64) -> f64 {
    let k = delays.len().max(1) as f64;
    t_kbps.max(1e-9).ln() / base.ln() - beta / k * delays.iter().sum::<f64>()
}

/// §III-E's search: U at `start` (C − B), then `step` lower at a time while
/// U still increases, never below `floor`; the last target where it did.
pub fn search(start: f64, step: f64, floor: f64, mut u: impl FnMut(f64) -> f64) -> f64 {
    let mut t = start.max(floor);
    let mut best = u(t);
    if step <= 0.0 {
        return t;
    }
    while t - step >= floor {
        let next = u(t - step);
        if next <= best {
            break;
        }
        t -= step;
        best = next;
    }
    t
}

/// §IV-A1: Loss = 1 − bytes received / bytes sent over the last frames
/// settled, 0 before any.
#[derive(Clone, Debug)]
pub struct Loss {
    frames: usize,
    history: VecDeque<(u64, u64)>,
}

impl Loss {
    pub fn new(frames: usize) -> Self {
        Loss { frames: frames.max(1), history: VecDeque::new() }
    }

    /// A settled frame's bytes reported and received; frames with nothing
    /// reported (their report lost) say nothing.
    pub fn on_frame(&mut self, sent: u64, received: u64) {
        if sent == 0 {
            return;
        }
        if self.history.len() >= self.frames {
            self.history.pop_front();
        }
        self.history.push_back((sent, received.min(sent)));
    }

    pub fn get(&self) -> f64 {
        let (s, r) = self.history.iter().fold((0u64, 0u64), |a, h| (a.0 + h.0, a.1 + h.1));
        if s == 0 {
            return 0.0;
        }
        1.0 - r as f64 / s as f64
    }
}
