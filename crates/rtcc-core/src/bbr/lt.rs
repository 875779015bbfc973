//! Long-term ("policer") bandwidth (Linux v1 `bbr_lt_bw_sampling`; not in
//! the draft; ALGORITHMS.md §3.6): two consecutive lossy intervals of 4–16
//! rounds with matching throughput mean a token-bucket policer, so BBR
//! sends at their mean with gain 1 for 48 rounds.

use super::BbrConfig;
use crate::units::{DataRate, DataSize, Duration, Time};

/// What the caller should do after a long-term sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtAction {
    None,
    /// 48 rounds on lt_bw are over: restart PROBE_BW's gain cycle.
    Stop,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LtBw {
    /// Previous interval's bw, or the policed rate while `use_bw`.
    bw: Option<DataRate>,
    use_bw: bool,
    sampling: bool,
    rounds: u32,
    last_stamp: Time,
    last_delivered: DataSize,
    last_lost: DataSize,
}

/// One ACK as the long-term sampler sees it.
pub struct LtSample {
    pub now: Time,
    pub delivered: DataSize,
    pub lost_total: DataSize,
    pub lost: bool,
    pub app_limited: bool,
    pub round_start: bool,
    pub probe_bw: bool,
}

impl LtBw {
    /// The policed rate while in use.
    pub fn bw(&self) -> Option<DataRate> {
        if self.use_bw {
            self.bw
        } else {
            None
        }
    }

    /// Start a new interval (`bbr_reset_lt_bw_sampling_interval`).
    fn reset_interval(&mut self, s: &LtSample) {
        self.last_stamp = s.now;
        self.last_delivered = s.delivered;
        self.last_lost = s.lost_total;
        self.rounds = 0;
    }

    /// Forget everything (`bbr_reset_lt_bw_sampling`).
    fn reset(&mut self, s: &LtSample) {
        self.bw = None;
        self.use_bw = false;
        self.sampling = false;
        self.reset_interval(s);
    }

    /// One ACK (`bbr_lt_bw_sampling`).
    pub fn on_sample(&mut self, s: &LtSample, cfg: &BbrConfig) -> LtAction {
        if self.use_bw {
            if s.probe_bw && s.round_start {
                self.rounds += 1;
                if self.rounds >= cfg.lt_max_rounds {
                    self.reset(s);
                    return LtAction::Stop;
                }
            }
            return LtAction::None;
        }
        // Wait for the first loss to start an interval, so that it begins
        // with the policer's bucket empty.
        if !self.sampling {
            if !s.lost {
                return LtAction::None;
            }
            self.reset_interval(s);
            self.sampling = true;
        }
        // An app-limited sample says nothing about a policer.
        if s.app_limited {
            self.reset(s);
            return LtAction::None;
        }
        if s.round_start {
            self.rounds += 1;
        }
        if self.rounds < cfg.lt_min_rounds {
            return LtAction::None;
        }
        if self.rounds > 4 * cfg.lt_min_rounds {
            self.reset(s);
            return LtAction::None;
        }
        // An interval ends on a loss, at a high enough loss rate.
        if !s.lost {
            return LtAction::None;
        }
        let lost = s.lost_total - self.last_lost;
        let delivered = s.delivered - self.last_delivered;
        if delivered == DataSize::ZERO || (lost.bytes() as f64) < cfg.lt_loss_thresh * delivered.bytes() as f64 {
            return LtAction::None;
        }
        let t = s.now.saturating_since(self.last_stamp);
        if t < Duration::from_millis(1) {
            return LtAction::None;
        }
        self.interval_done(DataRate::from_size_per(delivered, t), s, cfg);
        LtAction::None
    }

    /// Compare with the previous interval (`bbr_lt_bw_interval_done`).
    fn interval_done(&mut self, bw: DataRate, s: &LtSample, cfg: &BbrConfig) {
        if let Some(prev) = self.bw {
            let diff = bw.bps().abs_diff(prev.bps());
            if diff as f64 <= cfg.lt_bw_ratio * prev.bps() as f64 || diff <= cfg.lt_bw_diff_bps {
                // Policed: use the mean of the two intervals.
                self.bw = Some(DataRate::from_bps((bw.bps() + prev.bps()) / 2));
                self.use_bw = true;
                self.rounds = 0;
                return;
            }
        }
        self.bw = Some(bw);
        self.reset_interval(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two lossy 5-round intervals at 1 Mbit/s agree: lt_bw is used, for
    /// 48 rounds of PROBE_BW.
    #[test]
    fn two_matching_lossy_intervals_police() {
        let cfg = BbrConfig::DEFAULT;
        let mut lt = LtBw::default();
        let mut delivered = 0u64;
        let mut lost = 0u64;
        let mut t = 0i64;
        let mut step = |lt: &mut LtBw, round_start: bool, loss: bool| {
            t += 20;
            delivered += 2500; // 1 Mbit/s over 20 ms
            if loss {
                lost += 5000;
            }
            let s = LtSample {
                now: Time::from_millis(t),
                delivered: DataSize::from_bytes(delivered),
                lost_total: DataSize::from_bytes(lost),
                lost: loss,
                app_limited: false,
                round_start,
                probe_bw: true,
            };
            lt.on_sample(&s, &cfg)
        };
        step(&mut lt, false, true); // starts sampling
        for _ in 0..4 {
            step(&mut lt, true, false);
        }
        step(&mut lt, false, true); // first interval: 4 rounds, lossy
        assert!(lt.bw().is_none());
        for _ in 0..4 {
            step(&mut lt, true, false);
        }
        step(&mut lt, false, true);
        let bw = lt.bw().expect("policed");
        assert!((bw.bps() as f64 - 1.0e6).abs() < 0.01e6, "{bw}");
        for _ in 0..47 {
            assert_eq!(step(&mut lt, true, false), LtAction::None);
        }
        assert_eq!(step(&mut lt, true, false), LtAction::Stop);
        assert!(lt.bw().is_none());
    }
}
