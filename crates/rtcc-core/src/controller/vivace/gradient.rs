//! Moving along the utility gradient: step = θ·amplifier, the confidence
//! amplifier growing with consecutive same-sign gradients, and the change
//! clipped by the dynamic change boundary ω (ALGORITHMS.md §6.4 for the
//! paper's θ0, m(rounds) and ω0 + k·δω; §6.5 for libwebrtc's values in
//! bitrate_controller.cc, which rtcc runs).

/// Gradient ascent of bitrate_controller.cc: step size with the confidence
/// amplifier (ComputeStepSize) and the dynamic boundary (ApplyDynamicBoundary).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stepper {
    pub conversion_factor: f64,
    pub boundary: f64,
    pub boundary_increment: f64,
    /// Consecutive gradients of one sign, signed (step_size_adjustments_number_).
    pub same_sign: i64,
    /// Consecutive clips by the boundary, signed (consecutive_boundary_adjustments_number_).
    pub clips: i64,
}

impl Stepper {
    pub fn new(conversion_factor: f64, boundary: f64, boundary_increment: f64) -> Self {
        Stepper { conversion_factor, boundary, boundary_increment, same_sign: 0, clips: 0 }
    }

    /// Confidence amplifier: n for the first 3 same-sign gradients, 2n − 3 after.
    pub fn amplifier(&self) -> i64 {
        let n = self.same_sign.abs();
        if n <= 3 {
            n.max(1)
        } else {
            2 * n - 3
        }
    }

    /// Step size for `gradient`, counting it towards the amplifier.
    pub fn step_size(&mut self, gradient: f64) -> f64 {
        self.same_sign = if gradient > 0.0 {
            (self.same_sign + 1).max(1)
        } else if gradient < 0.0 {
            (self.same_sign - 1).min(-1)
        } else {
            0
        };
        self.amplifier() as f64 * self.conversion_factor
    }

    /// Clip `change` to (boundary + |clips|·increment)·rate; the boundary
    /// grows while changes keep hitting it and shrinks back to the smallest
    /// that admits an unclipped change.
    pub fn bound(&mut self, change: f64, rate: f64) -> f64 {
        let sign: i64 = if change > 0.0 { 1 } else { -1 };
        if self.clips * sign < 0 {
            self.clips = 0;
        }
        let limit = |clips: i64| rate * (self.boundary + clips.abs() as f64 * self.boundary_increment);
        if change.abs() > limit(self.clips) {
            let clipped = limit(self.clips) * sign as f64;
            self.clips += sign;
            return clipped;
        }
        while change.abs() <= limit(self.clips) && self.clips * sign > 0 {
            self.clips -= sign;
        }
        self.clips += sign;
        change
    }

    /// ComputeRateUpdateForOnlineLearningMode: the new rate (bps) after a
    /// gradient of `gradient` utility per `unit_bps`.
    pub fn next_rate(&mut self, gradient: f64, rate_bps: f64, unit_bps: f64) -> f64 {
        let gradient = if gradient.is_finite() { gradient } else { 0.0 };
        let change = gradient * self.step_size(gradient) * unit_bps;
        let change = self.bound(if change.is_finite() { change } else { 0.0 }, rate_bps);
        (rate_bps + change).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::vivace::tests::close;

    /// bitrate_controller.cc with kInitialConversionFactor 5, boundary 0.1 +
    /// 0.1 per clip, at r = 1 Mbps and a gradient of 1000 per bps: steps of
    /// 5·1000·amplifier, amplifier 1, 2, 3, then 2n − 3 = 5, 7.
    #[test]
    fn gradient_step_with_confidence_amplifier() {
        let mut s = Stepper::new(5.0, 0.1, 0.1);
        let r = 1e6;
        let steps: Vec<f64> = (0..5).map(|_| s.next_rate(1000.0, r, 1.0) - r).collect();
        assert_eq!(steps, [5000.0, 10_000.0, 15_000.0, 25_000.0, 35_000.0]);
        // A change of sign restarts the amplifier at 1.
        assert_eq!(s.next_rate(-1000.0, r, 1.0) - r, -5000.0);
        assert_eq!(s.next_rate(-1000.0, r, 1.0) - r, -10_000.0);
        // A zero gradient resets it.
        assert_eq!(s.next_rate(0.0, r, 1.0), r);
        assert_eq!(s.same_sign, 0);
    }

    /// A step of 5·1e5 = 500 kbps at 1 Mbps is clipped to 10 % (100 kbps);
    /// the next (amplifier 2: 1 Mbps) to 20 %; a small step after that passes
    /// and shrinks the boundary back (libwebrtc leaves clips = 1).
    #[test]
    fn dynamic_boundary() {
        let mut s = Stepper::new(5.0, 0.1, 0.1);
        assert_eq!(s.next_rate(1e5, 1e6, 1.0), 1.1e6);
        assert_eq!(s.clips, 1);
        assert!(close(s.next_rate(1e5, 1e6, 1.0), 1.2e6, 1e-12));
        assert_eq!(s.clips, 2);
        // amplifier 3: 5·3·10 = 150 bps, under the boundary.
        assert_eq!(s.next_rate(10.0, 1e6, 1.0), 1e6 + 150.0);
        assert_eq!(s.clips, 1);
        // Downward clip after upward ones starts from the initial boundary.
        assert_eq!(s.next_rate(-1e6, 1e6, 1.0), 0.9e6);
        assert_eq!(s.clips, -1);
        // The paper's scale: a gradient of 0.5 per Mbit/s, θ = 1 → +0.5 Mbit/s,
        // clipped to 10 % of 3 Mbps.
        let mut p = Stepper::new(1.0, 0.1, 0.1);
        assert!(close(p.next_rate(0.5, 3e6, 1e6), 3.3e6, 1e-12));
    }
}
