//! Algorithm 3, FastBandwidthAdaptation (Cross §V): when the standing
//! one-way delay has risen more than f·RTT_min above OWD_min and the
//! acknowledged rate has fallen below `ratio` of the send rate, the
//! bandwidth has dropped: cur_rate_ is reset from the acknowledged rate,
//! and if the delay is excessive (m·RTT_min) Cross also enters ProbeRTT to
//! drain the bottleneck. After a reset the algorithm rests for two rounds.
//! Line numbers below are the algorithm's.

use crate::units::{DataRate, Duration};

/// The constants of Algorithm 3.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Line 5: ack_rate_m < ratio·send_rate_m is a drop (§V: 0.75).
    pub ratio: f64,
    /// Lines 12, 15: the reset keeps β of the rate (§V: 0.75).
    pub beta: f64,
    /// Line 2: target = OWD_min + f·RTT_min (§V: 0.25).
    pub f: f64,
    /// Line 3: excess = OWD_min + m·RTT_min (§V: 2.0).
    pub m: f64,
}

/// What the algorithm reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Inputs {
    /// Largest send and acknowledged rate samples of the last RTT.
    pub(super) send_rate_m: DataRate,
    pub(super) ack_rate_m: DataRate,
    /// Minimum one-way delay over the last srtt/2 (Copa's standing window).
    pub(super) standing_owd: Duration,
    pub(super) owd_min: Duration,
    pub(super) rtt_min: Duration,
    pub(super) cur_rate: DataRate,
    /// good_put_.GetBest(): the largest delivered rate of the last 5 s.
    pub(super) goodput: DataRate,
    /// bw_lo: "the minimum rate specified by applications".
    pub(super) bw_lo: DataRate,
}

/// The branch taken, with the new rate where it resets one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Verdict {
    /// Line 4 false: the standing delay is within target (or nothing acked).
    Calm,
    /// Line 5 false: the acknowledged rate keeps up with the send rate.
    Keeping,
    /// Lines 9–10: cur_rate_ = ack_rate_m, and ProbeRTT.
    Excess(DataRate),
    /// Line 12: cur_rate_ = β·ack_rate_m.
    Acked(DataRate),
    /// Line 15: too little was sent; cur_rate_ = β·max(real_rate, ack_rate_m).
    Low(DataRate),
}

impl Verdict {
    /// The reset rate and whether ProbeRTT follows; `None` if nothing changes.
    pub(super) fn reset(self) -> Option<(DataRate, bool)> {
        match self {
            Verdict::Calm | Verdict::Keeping => None,
            Verdict::Excess(r) => Some((r, true)),
            Verdict::Acked(r) | Verdict::Low(r) => Some((r, false)),
        }
    }

    /// State column: 0 calm, 1 keeping, 2 excess, 3 acked, 4 low.
    pub(super) fn code(self) -> f64 {
        match self {
            Verdict::Calm => 0.0,
            Verdict::Keeping => 1.0,
            Verdict::Excess(_) => 2.0,
            Verdict::Acked(_) => 3.0,
            Verdict::Low(_) => 4.0,
        }
    }
}

pub(super) fn fast_adaptation(t: &Thresholds, i: &Inputs) -> Verdict {
    let target = i.owd_min + i.rtt_min.mul_f64(t.f); // line 2
    let excess = i.owd_min + i.rtt_min.mul_f64(t.m); // line 3
    if i.standing_owd <= target || i.ack_rate_m == DataRate::ZERO {
        return Verdict::Calm; // line 4
    }
    if i.send_rate_m.bps() as f64 * t.ratio <= i.ack_rate_m.bps() as f64 {
        return Verdict::Keeping; // line 5
    }
    let real_rate = i.cur_rate.min(i.goodput); // line 6
    if i.ack_rate_m > i.bw_lo {
        if i.standing_owd > excess {
            Verdict::Excess(i.ack_rate_m) // lines 8–10
        } else {
            Verdict::Acked(i.ack_rate_m.mul_f64(t.beta)) // line 12
        }
    } else {
        Verdict::Low(real_rate.max(i.ack_rate_m).mul_f64(t.beta)) // line 15
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{kbps, MS};

    const PAPER: Thresholds = Thresholds { ratio: 0.75, beta: 0.75, f: 0.25, m: 2.0 };

    /// OWD_min 25 ms, RTT_min 50 ms: target = 25 + 0.25·50 = 37.5 ms,
    /// excess = 25 + 2·50 = 125 ms. Sent 4 Mbps, acked 2 Mbps (< 0.75·4 =
    /// 3 Mbps), cur_rate 4 Mbps, good_put 3.6 Mbps, bw_lo 30 kbps.
    const DROP: Inputs = Inputs {
        send_rate_m: DataRate::from_mbps(4),
        ack_rate_m: DataRate::from_mbps(2),
        standing_owd: Duration::from_millis(60),
        owd_min: Duration::from_millis(25),
        rtt_min: Duration::from_millis(50),
        cur_rate: DataRate::from_mbps(4),
        goodput: DataRate::from_kbps(3600),
        bw_lo: DataRate::from_kbps(30),
    };

    #[test]
    fn line_4_no_standing_delay_no_action() {
        let at = |ms: i64| fast_adaptation(&PAPER, &Inputs { standing_owd: MS * ms, ..DROP });
        assert_eq!(at(37), Verdict::Calm);
        assert_eq!(
            fast_adaptation(&PAPER, &Inputs { standing_owd: Duration::from_micros(37_500), ..DROP }),
            Verdict::Calm
        );
        assert_eq!(at(38), Verdict::Acked(kbps(1500)), "just above the target");
        let nothing_acked = Inputs { ack_rate_m: DataRate::ZERO, ..DROP };
        assert_eq!(fast_adaptation(&PAPER, &nothing_acked), Verdict::Calm);
    }

    /// Line 5: acked 3 Mbps = 0.75·4 Mbps is no drop; 2.99 Mbps is.
    #[test]
    fn line_5_acknowledged_rate_keeping_up_no_action() {
        let acked = |kbps: u64| fast_adaptation(&PAPER, &Inputs { ack_rate_m: DataRate::from_kbps(kbps), ..DROP });
        assert_eq!(acked(3000), Verdict::Keeping);
        assert_eq!(acked(3500), Verdict::Keeping);
        assert_eq!(acked(2990), Verdict::Acked(DataRate::from_bps(2_242_500)));
    }

    /// Lines 8–10: standing 130 ms > excess 125 ms: cur_rate = ack_rate_m
    /// = 2 Mbps and ProbeRTT. Line 12: standing 125 ms (not above excess):
    /// β·2 Mbps = 1.5 Mbps, no ProbeRTT.
    #[test]
    fn lines_8_to_12_reset_from_the_acknowledged_rate() {
        let v = fast_adaptation(&PAPER, &Inputs { standing_owd: MS * 130, ..DROP });
        assert_eq!((v, v.reset()), (Verdict::Excess(kbps(2000)), Some((kbps(2000), true))));
        let v = fast_adaptation(&PAPER, &Inputs { standing_owd: MS * 125, ..DROP });
        assert_eq!((v, v.reset()), (Verdict::Acked(kbps(1500)), Some((kbps(1500), false))));
    }

    /// Line 15: acked 20 kbps ≤ bw_lo 30 kbps (sent 100 kbps): real_rate =
    /// min(cur 4 Mbps, good_put 3.6 Mbps) = 3.6 Mbps, β·max(3.6 Mbps, 20
    /// kbps) = 2.7 Mbps; with good_put below the acknowledged rate (10
    /// kbps) the acknowledged one counts: β·20 kbps = 15 kbps.
    #[test]
    fn line_15_too_little_acknowledged_falls_back_to_the_real_rate() {
        let low = Inputs { send_rate_m: kbps(100), ack_rate_m: kbps(20), ..DROP };
        let v = fast_adaptation(&PAPER, &low);
        assert_eq!((v, v.reset()), (Verdict::Low(kbps(2700)), Some((kbps(2700), false))));
        let v = fast_adaptation(&PAPER, &Inputs { goodput: kbps(10), ..low });
        assert_eq!(v, Verdict::Low(kbps(15)));
        // Excessive delay does not matter below bw_lo.
        assert_eq!(fast_adaptation(&PAPER, &Inputs { standing_owd: MS * 500, ..low }), Verdict::Low(kbps(2700)));
    }

    #[test]
    fn verdict_codes_and_resets() {
        assert_eq!((Verdict::Calm.reset(), Verdict::Keeping.reset()), (None, None));
        let codes: Vec<f64> = [Verdict::Calm, Verdict::Keeping, Verdict::Excess(kbps(1)), Verdict::Acked(kbps(1))]
            .iter()
            .chain(&[Verdict::Low(kbps(1))])
            .map(|v| v.code())
            .collect();
        assert_eq!(codes, [0.0, 1.0, 2.0, 3.0, 4.0]);
    }
}
