//! The two kinds of filter Cross keeps: a windowed extreme over time
//! ([`Windowed`], shared with Copa and NADAR: the standing-OWD minimum of
//! Algorithm 3, the one-RTT maxima of send_rate_m and ack_rate_m, the 5 s
//! good_put_ maximum) and a minimum with the time it was last lowered
//! (RTT_min and OWD_min, whose age starts ProbeRTT, §V).

pub(super) use crate::controller::window::Windowed;
use crate::units::{Duration, Time};

/// A minimum and when it was last lowered (BBR's min_rtt and
/// min_rtt_stamp, ALGORITHMS.md §3). Only a sample strictly below the
/// minimum is "a new minimum": an equal one does not refresh the stamp, so
/// a flow whose queue never empties still drains it every interval (Linux
/// tcp_bbr.c since the 2020 patch "tcp: only postpone PROBE_RTT if RTT is <
/// current min_rtt estimate"; Cross §V "periodically draining the buffered
/// packets").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MinStamp {
    value: Option<Duration>,
    stamp: Time,
}

impl MinStamp {
    pub(super) fn get(&self) -> Option<Duration> {
        self.value
    }

    pub(super) fn update(&mut self, now: Time, v: Duration) {
        if self.value.is_none_or(|m| v < m) {
            (self.value, self.stamp) = (Some(v), now);
        }
    }

    /// `window` has passed since the minimum was last lowered.
    pub(super) fn expired(&self, now: Time, window: Duration) -> bool {
        self.value.is_some() && now - self.stamp > window
    }

    /// Replace the minimum with `v` (a fresh sample from ProbeRTT) and
    /// restart its age.
    pub(super) fn reset(&mut self, now: Time, v: Duration) {
        (self.value, self.stamp) = (Some(v), now);
    }

    /// Restart the age without a new value (BBR after PROBE_RTT).
    pub(super) fn touch(&mut self, now: Time) {
        self.stamp = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{ms, MS};

    /// Min over a 100 ms window: 50, 40, 60 at 0, 10, 20 ms read 50, 40,
    /// 40; at 115 ms the 40 (10 ms old + 100) has left, leaving 60 and the
    /// new 70: 60.
    #[test]
    fn windowed_min_and_max_expire() {
        let mut f = Windowed::min();
        assert_eq!(f.get(), None);
        assert_eq!(f.update(ms(0), MS * 50, MS * 100), MS * 50);
        assert_eq!(f.update(ms(10), MS * 40, MS * 100), MS * 40);
        assert_eq!(f.update(ms(20), MS * 60, MS * 100), MS * 40);
        assert_eq!(f.update(ms(115), MS * 70, MS * 100), MS * 60);
        assert_eq!(f.get(), Some(MS * 60));
        let mut g = Windowed::max();
        assert_eq!(g.update(ms(0), 5u64, MS * 100), 5);
        assert_eq!(g.update(ms(50), 3, MS * 100), 5);
        assert_eq!(g.update(ms(101), 2, MS * 100), 3);
    }

    #[test]
    fn min_stamp_needs_a_strictly_lower_sample() {
        let mut m = MinStamp::default();
        assert!(!m.expired(ms(10_000), MS * 5000), "nothing to expire");
        m.update(ms(100), MS * 50);
        m.update(ms(3000), MS * 50);
        assert!(m.expired(ms(5101), MS * 5000), "an equal sample is not a new minimum");
        m.update(ms(5200), MS * 49);
        assert!(!m.expired(ms(10_000), MS * 5000));
        assert_eq!(m.get(), Some(MS * 49));
        m.reset(ms(11_000), MS * 60);
        assert_eq!(m.get(), Some(MS * 60));
        m.touch(ms(20_000));
        assert!(!m.expired(ms(24_000), MS * 5000));
    }
}
