//! The utility function: what an MI at rate x, RTT gradient g and loss L is
//! worth (ALGORITHMS.md §6.3 for the paper's `x^t − b·x·g − c·x·L`, §6.5 for
//! libwebrtc's ModifiedVivaceUtilityFunction in utility_function.cc).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilityKind {
    /// ModifiedVivaceUtilityFunction (utility_function.cc), what
    /// PccBitrateController builds: r in bit/s.
    Modified,
    /// VivaceUtilityFunction with the paper's scale: x in Mbit/s.
    Vivace,
}

/// A utility function of utility_function.cc with its coefficients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utility {
    pub kind: UtilityKind,
    pub throughput_coefficient: f64,
    pub throughput_power: f64,
    pub rtt_coefficient: f64,
    pub loss_coefficient: f64,
    pub gradient_threshold: f64,
    pub negative_bound: f64,
}

impl Utility {
    /// libwebrtc's production utility (pcc_network_controller.cc constants).
    pub const MODIFIED: Utility = Utility {
        kind: UtilityKind::Modified,
        throughput_coefficient: 0.001, // kThroughputCoefficient
        throughput_power: 0.9,         // kThroughputPower
        rtt_coefficient: 0.005,        // kRttGradientCoefficientBps
        loss_coefficient: 10.0,        // kLossCoefficientBps
        gradient_threshold: 0.01,      // kRttGradientThreshold
        negative_bound: 0.1,           // kDelayGradientNegativeBound
    };
    /// The paper's utility: t = 0.9, b = 900, c = 11.35 (ALGORITHMS.md §6.3,
    /// PCC-Uspace pcc_utility_manager.cpp), with libwebrtc's gradient filter.
    pub const VIVACE: Utility = Utility {
        kind: UtilityKind::Vivace,
        throughput_coefficient: 1.0,
        throughput_power: 0.9,
        rtt_coefficient: 900.0,
        loss_coefficient: 11.35,
        ..Utility::MODIFIED
    };

    /// Bits per second in one unit of the function's rate variable.
    pub fn unit_bps(&self) -> f64 {
        match self.kind {
            UtilityKind::Modified => 1.0,
            UtilityKind::Vivace => 1e6,
        }
    }

    /// Utility of an MI sent at `rate_bps` with raw RTT slope `rtt_gradient`
    /// (s/s) and loss fraction `loss`. Small slopes are noise
    /// (ComputeDelayGradient's threshold); falling RTT earns at most `negative_bound`.
    pub fn compute(&self, rate_bps: f64, rtt_gradient: f64, loss: f64) -> f64 {
        let x = if rate_bps.is_finite() { rate_bps.max(0.0) / self.unit_bps() } else { 0.0 };
        let g =
            if !rtt_gradient.is_finite() || rtt_gradient.abs() < self.gradient_threshold { 0.0 } else { rtt_gradient };
        let g = g.max(-self.negative_bound);
        let loss = if loss.is_finite() { loss.clamp(0.0, 1.0) } else { 0.0 };
        let (a, b, c) = (self.throughput_coefficient, self.rtt_coefficient, self.loss_coefficient);
        let u = match self.kind {
            UtilityKind::Modified => a * x.powf(self.throughput_power) * x - b * x * x * g - c * x * x * loss,
            UtilityKind::Vivace => a * x.powf(self.throughput_power) - b * x * g - c * x * loss,
        };
        if u.is_finite() {
            u
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::vivace::tests::close;

    /// ModifiedVivaceUtilityFunction at r = 1 Mbps: 0.001·r^0.9·r = 0.001 ·
    /// 251188.643·1e6 = 2.51188643e8; each RTT-gradient unit costs 0.005·r² =
    /// 5e9, each unit of loss 10·r² = 1e13.
    #[test]
    fn modified_utility_by_hand() {
        let u = Utility::MODIFIED;
        assert!(close(u.compute(1e6, 0.0, 0.0), 2.511_886_43e8, 1e-8));
        // 2.51188643e8 − 5e9·0.05 = 1.188643e6
        assert!(close(u.compute(1e6, 0.05, 0.0), 1.188_643e6, 1e-5));
        // Below kRttGradientThreshold the slope is noise: 0.
        assert_eq!(u.compute(1e6, 0.009, 0.0), u.compute(1e6, 0.0, 0.0));
        // A falling RTT earns at most kDelayGradientNegativeBound: +5e9·0.1.
        assert!(close(u.compute(1e6, -0.5, 0.0), 2.511_886_43e8 + 5e8, 1e-8));
        // 10 % loss: − 1e13·0.1 = −1e12.
        assert!(close(u.compute(1e6, 0.0, 0.1), 2.511_886_43e8 - 1e12, 1e-8));
        assert_eq!(u.compute(0.0, 0.3, 0.5), 0.0);
        assert_eq!(u.compute(f64::NAN, f64::NAN, f64::NAN), 0.0);
    }

    /// The paper's form at x = 2 Mbit/s, g = 0.01, L = 5 %:
    /// 2^0.9 − 900·2·0.01 − 11.35·2·0.05 = 1.866066 − 18 − 1.135 = −17.268934.
    #[test]
    fn vivace_utility_by_hand() {
        let u = Utility::VIVACE;
        assert!(close(u.compute(2e6, 0.01, 0.05), -17.268_934, 1e-6));
        assert!(close(u.compute(2e6, 0.0, 0.0), 1.866_066, 1e-6));
        // With bound 0 it is the paper's max(0, g).
        let paper = Utility { negative_bound: 0.0, ..u };
        assert_eq!(paper.compute(2e6, -0.2, 0.0), paper.compute(2e6, 0.0, 0.0));
    }
}
