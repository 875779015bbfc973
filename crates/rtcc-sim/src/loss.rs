//! Random packet loss: independent (Bernoulli) or bursty (Gilbert–Elliott two-state Markov chain).
//!
//! The `loss = ...` config forms ([`LossSpec`](crate::link::LossSpec)) are in [`crate::link::config`].

use rtcc_core::rng::Rng;
use rtcc_core::units::Time;

#[derive(Clone, Debug, Default, PartialEq)]
pub enum LossModel {
    #[default]
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state chain, stepped once per packet: good→bad with `p_gb`,
    /// bad→good with `p_bg`; then the packet is lost with the probability of
    /// the state it is in. `bad` is the current state (starts good).
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
    /// `inner`, for packets at or after `start`; nothing is drawn before.
    From { start: Time, inner: Box<LossModel> },
}

impl LossModel {
    pub fn bernoulli(p: f64) -> Self {
        if p > 0.0 {
            LossModel::Bernoulli { p }
        } else {
            LossModel::None
        }
    }

    pub fn gilbert_elliott(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64) -> Self {
        LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad: false }
    }

    /// This model from `start` on (`Time::ZERO`: unchanged).
    pub fn starting(self, start: Time) -> Self {
        match self {
            LossModel::None => LossModel::None,
            m if start == Time::ZERO => m,
            m => LossModel::From { start, inner: Box::new(m) },
        }
    }

    /// Draws the fate of one packet leaving at `now`.
    pub fn lose(&mut self, now: Time, rng: &mut Rng) -> bool {
        match self {
            LossModel::None => false,
            LossModel::From { start, inner } => now >= *start && inner.lose(now, rng),
            LossModel::Bernoulli { p } => rng.chance(*p),
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let flip = if *bad { *p_bg } else { *p_gb };
                if rng.chance(flip) {
                    *bad = !*bad;
                }
                rng.chance(if *bad { *loss_bad } else { *loss_good })
            }
        }
    }

    /// Long-run loss rate (once started). Gilbert–Elliott: stationary
    /// P(bad) = p_gb / (p_gb + p_bg); with both zero the chain stays in its state.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::From { ref inner, .. } => inner.mean_loss(),
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let pi_bad = if p_gb + p_bg > 0.0 {
                    p_gb / (p_gb + p_bg)
                } else if bad {
                    1.0
                } else {
                    0.0
                };
                (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_starts_at_its_start_and_draws_nothing_before() {
        let start = Time::from_millis(10_000);
        let mut m = LossModel::bernoulli(1.0).starting(start);
        let mut rng = Rng::new(1);
        let mut twin = rng.clone();
        assert!(!m.lose(Time::from_millis(9_999), &mut rng));
        assert_eq!(rng.next_u64(), twin.next_u64(), "no draw before the start");
        assert!(m.lose(start, &mut rng));
        assert_eq!(m.mean_loss(), 1.0);
        assert_eq!(LossModel::bernoulli(0.2).starting(Time::ZERO), LossModel::Bernoulli { p: 0.2 });
        assert_eq!(LossModel::None.starting(start), LossModel::None);
    }

    #[test]
    fn bernoulli_one_percent() {
        let mut m = LossModel::bernoulli(0.01);
        let mut rng = Rng::new(1);
        let n = 100_000;
        let lost = (0..n).filter(|_| m.lose(Time::ZERO, &mut rng)).count();
        let rate = lost as f64 / n as f64;
        assert!((0.009..=0.011).contains(&rate), "rate {rate}");
        assert_eq!(m.mean_loss(), 0.01);
        assert_eq!(LossModel::bernoulli(0.0), LossModel::None);
        assert!(!LossModel::None.lose(Time::ZERO, &mut rng));
    }

    #[test]
    fn gilbert_elliott_matches_stationary_mean() {
        // π_bad = 0.01 / 0.31 ≈ 3.23 % lost when the bad state loses everything.
        let mut m = LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0);
        let expect = 0.01 / 0.31;
        assert!((m.mean_loss() - expect).abs() < 1e-12);
        let mut rng = Rng::new(7);
        let n = 500_000;
        let mut lost = 0;
        let mut bursts = 0;
        let mut prev = false;
        for _ in 0..n {
            let l = m.lose(Time::ZERO, &mut rng);
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate / expect - 1.0).abs() < 0.1, "rate {rate} vs {expect}");
        // Losses come in bursts of mean length 1 / p_bg ≈ 3.3.
        let burst = lost as f64 / bursts as f64;
        assert!((burst - 1.0 / 0.3).abs() < 0.4, "burst {burst}");

        let m = LossModel::gilbert_elliott(0.1, 0.4, 0.01, 0.5);
        assert!((m.mean_loss() - (0.8 * 0.01 + 0.2 * 0.5)).abs() < 1e-12);
    }
}
