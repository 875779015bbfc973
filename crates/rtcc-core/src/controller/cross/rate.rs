//! Algorithm 2, RateAdjustmentInProbeBW (Cross §V): MIMD by η on the
//! direction of eq. 4, a deeper cut ε = (1−η)/(1+η) when the direction turns
//! from up to down, an additive acceleration AR after more than k_up ups in
//! a row while the delay is low, and a fast reduce d after more than k_down
//! downs in a row. Line numbers below are the algorithm's.

use super::monitor::Action;
use crate::units::{DataRate, Duration};

/// The constants of Algorithm 2 and its switches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// η (§V: 0.05).
    pub eta: f64,
    /// k_up, k_down (§VI: 3).
    pub k_up: u32,
    pub k_down: u32,
    /// Cap of the acceleration AR (§V: 200 kbps).
    pub limit: DataRate,
    /// D_th = OWD_min + k·RTT_min (line 34; §V: k = 0.125).
    pub k: f64,
    /// Fast reduce gain d (line 30; §V: 0.85).
    pub d: f64,
    /// Lines 18–28 and 35–36.
    pub acceleration: bool,
    /// Lines 29–32.
    pub fast_reduce: bool,
    /// Line 5.
    pub reversal_reduce: bool,
}

/// What Algorithm 2 remembers between decisions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct RateAdjust {
    /// last_action_; `None` before the first decision.
    pub(super) last: Option<Action>,
    pub(super) num_up: u32,
    pub(super) num_down: u32,
    /// max_rate_: the rate at the last up → down turn; zero until one.
    pub(super) max_rate: DataRate,
}

impl RateAdjust {
    /// One decision: `act` from eq. 4, at `cur` (cur_rate_), with OWD_m,
    /// OWD_min and RTT_min. Returns the new cur_rate_.
    pub(super) fn apply(
        &mut self,
        g: &Gains,
        act: Action,
        cur: DataRate,
        owd_m: Duration,
        owd_min: Duration,
        rtt_min: Duration,
    ) -> DataRate {
        let gain_up = 1.0 + g.eta; // line 1
        let mut gain_down = 1.0 - g.eta; // line 2
        if act == Action::Down && self.last == Some(Action::Up) {
            // Lines 3–6: the last increase failed; 1/(1+η) undoes it and
            // (1−η) reduces further.
            self.max_rate = cur;
            if g.reversal_reduce {
                gain_down = (1.0 - g.eta) / (1.0 + g.eta);
            }
        }
        // Lines 7–16.
        let repeated = self.last == Some(act);
        self.num_up = if act == Action::Up && repeated { self.num_up + 1 } else { 0 };
        self.num_down = if act == Action::Down && repeated { self.num_down + 1 } else { 0 };
        // Lines 17–28: approach half way to the rate of the last turn, or
        // grow by as much as the rate has passed it, at most `limit`.
        let mut ar = DataRate::ZERO;
        if g.acceleration && self.num_up > g.k_up {
            let t = if self.max_rate == DataRate::ZERO {
                g.limit
            } else if self.max_rate >= cur {
                (self.max_rate - cur).mul_f64(0.5)
            } else {
                cur - self.max_rate
            };
            ar = t.min(g.limit);
        }
        // Lines 29–32.
        if g.fast_reduce && self.num_down > g.k_down {
            gain_down = g.d;
            self.num_down = 0;
        }
        // Lines 33–42.
        let next = match act {
            Action::Up => {
                let d_th = owd_min + rtt_min.mul_f64(g.k);
                if owd_m <= d_th {
                    (cur + ar).mul_f64(gain_up)
                } else {
                    cur.mul_f64(gain_up)
                }
            }
            Action::Down => cur.mul_f64(gain_down),
        };
        self.last = Some(act); // line 43
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{kbps, MS};
    use Action::{Down, Up};

    const PAPER: Gains = Gains {
        eta: 0.05,
        k_up: 3,
        k_down: 3,
        limit: DataRate::from_kbps(200),
        k: 0.125,
        d: 0.85,
        acceleration: true,
        fast_reduce: true,
        reversal_reduce: true,
    };

    /// OWD_min 25 ms, RTT_min 50 ms: D_th = 25 + 0.125·50 = 31.25 ms.
    fn step(a: &mut RateAdjust, g: &Gains, act: Action, cur: DataRate, owd_m_ms: i64) -> DataRate {
        a.apply(g, act, cur, MS * owd_m_ms, MS * 25, MS * 50)
    }

    /// Eq. 4: ×(1+η) up, ×(1−η) down (no turn from up, not repeated).
    #[test]
    fn eq4_mimd_by_eta() {
        let mut a = RateAdjust::default();
        assert_eq!(step(&mut a, &PAPER, Up, kbps(2000), 40), kbps(2100));
        let mut a = RateAdjust::default();
        assert_eq!(step(&mut a, &PAPER, Down, kbps(2000), 40), kbps(1900));
        assert_eq!((a.last, a.num_up, a.num_down, a.max_rate), (Some(Down), 0, 0, DataRate::ZERO));
    }

    /// Lines 3–6: up then down at 2.1 Mbps records max_rate = 2.1 Mbps and
    /// cuts by ε = 0.95/1.05: 2.1 Mbps · 0.904 762 = 1.9 Mbps. With the
    /// switch off the cut is 1 − η: 1.995 Mbps, and max_rate is still kept.
    #[test]
    fn epsilon_after_an_up_to_down_turn() {
        for (reversal, expect) in [(true, 1_900_000), (false, 1_995_000)] {
            let g = Gains { reversal_reduce: reversal, ..PAPER };
            let mut a = RateAdjust::default();
            let up = step(&mut a, &g, Up, kbps(2000), 40);
            assert_eq!(step(&mut a, &g, Down, up, 40), DataRate::from_bps(expect), "reversal_reduce {reversal}");
            assert_eq!(a.max_rate, kbps(2100));
            // A second down in a row is 1 − η again.
            assert_eq!(step(&mut a, &g, Down, kbps(1900), 40), kbps(1805));
        }
    }

    /// Lines 7–16 and 18–27: num_up counts ups after an up, so the fifth up
    /// in a row has num_up = 4 > k_up = 3. Without a turn yet (max_rate 0),
    /// AR = limit = 200 kbps: (1000 + 200)·1.05 = 1260 kbps when OWD_m ≤
    /// D_th (30 ≤ 31.25 ms); at OWD_m 32 ms > D_th no acceleration:
    /// 1050 kbps. Switched off: 1050 kbps either way.
    #[test]
    fn acceleration_after_more_than_k_up_ups_without_a_turn() {
        let mut a = RateAdjust::default();
        for i in 0..4 {
            assert_eq!(step(&mut a, &PAPER, Up, kbps(1000), 30), kbps(1050), "up {i}: no acceleration yet");
        }
        assert_eq!(a.num_up, 3);
        let saved = a;
        assert_eq!(step(&mut a, &PAPER, Up, kbps(1000), 30), kbps(1260));
        assert_eq!(a.num_up, 4);
        let mut b = saved;
        assert_eq!(step(&mut b, &PAPER, Up, kbps(1000), 32), kbps(1050), "OWD_m above D_th");
        let mut c = saved;
        let off = Gains { acceleration: false, ..PAPER };
        assert_eq!(step(&mut c, &off, Up, kbps(1000), 30), kbps(1050));
        assert_eq!(c.num_up, 4, "the count goes on");
    }

    /// Lines 20–27 with a turn recorded. max_rate 2000 kbps ≥ cur 1800:
    /// T = 0.5·200 = 100 kbps, (1800 + 100)·1.05 = 1995 kbps. max_rate 2000
    /// < cur 2100: T = 100 kbps, 2310 kbps. Far below (cur 1000): T = 500
    /// kbps capped at 200: 1260 kbps. Far above (cur 2500): T = 500, capped:
    /// 2835 kbps.
    #[test]
    fn acceleration_toward_and_past_the_last_turn() {
        let accelerated = |cur: u64| {
            let mut a = RateAdjust { last: Some(Up), num_up: 3, num_down: 0, max_rate: kbps(2000) };
            let r = step(&mut a, &PAPER, Up, kbps(cur), 30);
            r.bps()
        };
        assert_eq!(accelerated(1800), 1_995_000);
        assert_eq!(accelerated(2100), 2_310_000);
        assert_eq!(accelerated(1000), 1_260_000);
        assert_eq!(accelerated(2500), 2_835_000);
        assert_eq!(accelerated(2000), 2_100_000, "at max_rate T = 0");
    }

    /// Lines 29–32: the fifth down in a row (num_down 4 > k_down 3) cuts by
    /// d = 0.85 and restarts the count, so the next down is 1 − η again.
    /// Switched off: 1 − η throughout, the count going on.
    #[test]
    fn fast_reduce_after_more_than_k_down_downs() {
        let mut a = RateAdjust::default();
        for _ in 0..4 {
            assert_eq!(step(&mut a, &PAPER, Down, kbps(2000), 40), kbps(1900));
        }
        assert_eq!(a.num_down, 3);
        let saved = a;
        assert_eq!(step(&mut a, &PAPER, Down, kbps(2000), 40), kbps(1700));
        assert_eq!(a.num_down, 0);
        assert_eq!(step(&mut a, &PAPER, Down, kbps(2000), 40), kbps(1900));
        let mut b = saved;
        let off = Gains { fast_reduce: false, ..PAPER };
        assert_eq!(step(&mut b, &off, Down, kbps(2000), 40), kbps(1900));
        assert_eq!(b.num_down, 4);
    }

    /// A down → up turn restarts num_up and leaves max_rate alone.
    #[test]
    fn a_turn_up_restarts_the_up_count() {
        let mut a = RateAdjust { last: Some(Down), num_up: 7, num_down: 2, max_rate: kbps(3000) };
        assert_eq!(step(&mut a, &PAPER, Up, kbps(2000), 30), kbps(2100));
        assert_eq!((a.num_up, a.num_down, a.max_rate), (0, 0, kbps(3000)));
    }
}
