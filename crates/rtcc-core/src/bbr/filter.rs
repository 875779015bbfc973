//! The two estimators of the path model: btl_bw, a windowed max over rounds
//! (Kathleen Nichols' algorithm as Linux `lib/win_minmax.c`), and min_rtt, a
//! minimum with a time stamp that expires (`bbr_update_min_rtt`).

use crate::units::{Duration, Time};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// Running max of `v` over a window of `win` time units (here rounds),
/// holding the best, second-best and third-best samples of successive
/// sub-windows (`struct minmax`, `minmax_running_max`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// The windowed max (`minmax_get`).
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything; `v` at `t` is the only sample (`minmax_reset`).
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Take `v` measured at `t` (`minmax_running_max`).
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        // A new max, or nothing left in the window: start over.
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Age the samples out as the window slides (`minmax_subwin_update`).
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best left the window: promote the 2nd and 3rd, and again
            // if the new best is also too old.
            self.s = [self.s[1], self.s[2], val];
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no 2nd choice: take one.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed with no 3rd choice: take one.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// min_rtt and when it was last lowered or refreshed (`bbr->min_rtt_us`,
/// `bbr->min_rtt_stamp`; draft §4.1.2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinRttFilter {
    min_rtt: Option<Duration>,
    stamp: Option<Time>,
}

impl MinRttFilter {
    pub fn get(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The window passed without a new minimum (`filter_expired`).
    pub fn expired(&self, now: Time, window: Duration) -> bool {
        self.stamp.is_some_and(|s| now > s + window)
    }

    /// Take an RTT sample: it replaces the minimum if strictly below it or
    /// if the window expired (`bbr_update_min_rtt`; ALGORITHMS.md §3.4).
    /// Linux 4.9–4.15 used `<=`, so equal samples refreshed the stamp and a
    /// steady path never entered PROBE_RTT; since 4.16 ("tcp: avoid min RTT
    /// bloat by skipping RTT from delayed-ACK in BBR") it is `<`, and an
    /// expired window takes a sample only if `!rs->is_ack_delayed` (not
    /// modelled: no delayed-ACK flag reaches the model). Returns whether
    /// the window had expired.
    pub fn update(&mut self, now: Time, rtt: Option<Duration>, window: Duration) -> bool {
        let expired = self.expired(now, window);
        if let Some(rtt) = rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.stamp = Some(now);
            }
        }
        expired
    }

    /// Restart the window without a sample: after PROBE_RTT, "wait a while
    /// until PROBE_RTT" (`bbr_check_probe_rtt_done`).
    pub fn touch(&mut self, now: Time) {
        self.stamp = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_keeps_max_for_window_then_ages_out() {
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 0, 100), 100);
        // Smaller samples do not lower it inside the window.
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50), 100, "round {t}");
        }
        // Round 11: the max (t = 0) is 11 rounds old; a later sample of 50 is best.
        assert_eq!(f.update(10, 11, 40), 50);
        // A new max replaces everything at once.
        assert_eq!(f.update(10, 12, 200), 200);
    }

    #[test]
    fn max_filter_falls_to_second_best() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 100);
        f.update(10, 3, 80); // 2nd best after win/4
        f.update(10, 6, 60); // 3rd best after win/2
        assert_eq!(f.update(10, 11, 10), 80);
        assert_eq!(f.update(10, 14, 10), 60);
        assert_eq!(f.update(10, 17, 10), 10);
    }

    #[test]
    fn min_rtt_expires_after_window() {
        let w = Duration::from_secs(10);
        let mut f = MinRttFilter::default();
        f.update(Time::ZERO, Some(Duration::from_millis(40)), w);
        assert!(!f.update(Time::from_millis(5000), Some(Duration::from_millis(50)), w));
        assert_eq!(f.get(), Some(Duration::from_millis(40)));
        assert!(f.update(Time::from_millis(10_001), Some(Duration::from_millis(50)), w));
        assert_eq!(f.get(), Some(Duration::from_millis(50)));
    }

    #[test]
    fn min_rtt_equal_samples_do_not_refresh_the_window() {
        // Linux 4.16+ `rs->rtt_us < bbr->min_rtt_us`: an equal sample
        // leaves the stamp, so the window still expires 10 s after the
        // minimum was set.
        let w = Duration::from_secs(10);
        let mut f = MinRttFilter::default();
        f.update(Time::ZERO, Some(Duration::from_millis(40)), w);
        assert!(!f.update(Time::from_millis(9000), Some(Duration::from_millis(40)), w));
        assert!(f.update(Time::from_millis(10_001), Some(Duration::from_millis(40)), w));
        // A lower sample does refresh it.
        f.update(Time::from_millis(11_000), Some(Duration::from_millis(39)), w);
        assert!(!f.update(Time::from_millis(20_500), Some(Duration::from_millis(39)), w));
    }
}
