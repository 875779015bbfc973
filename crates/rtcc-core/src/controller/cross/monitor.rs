//! Monitor cycles and the delay statistic (Cross §V, Fig. 4, eqs. 3–5), and
//! the round count the states and Algorithm 3 use.
//!
//! Time is cut into cycles of about one RTT_min, numbered by
//! `cycle_current_offset_`; the offset advances when a packet is sent more
//! than RTT_min after the cycle began ("Cross advances offset in
//! OnSentPacket when duration exceeds RTT_min"). The packets of cycle 1 are
//! remembered; once the last of them is acknowledged the one-way delays of
//! cycle 1, sorted, give OWD_m (eq. 5) and a decision is due; the offset
//! then returns to 0 and a new epoch begins. Cycle 0 lets the rate set at
//! the previous decision reach the bottleneck before it is measured, so a
//! decision comes about every three rounds (§V, Fig. 4).

use crate::units::{DataRate, DataSize, Duration, Time};

/// Eq. 5: OWD_m = owd_array[n·numerator/denominator] of the sorted array,
/// `quantile` = numerator/denominator (1/4 in §VI; the text calls it the
/// median, the parameters make it the lower quartile). The index rounds
/// down as the integer division it is, and stays within the array.
pub(super) fn quantile_index(n: usize, quantile: f64) -> usize {
    // The small margin keeps n·q exact when q is a ratio such as 0.3.
    let i = (n as f64 * quantile + 1e-9).floor() as usize;
    i.min(n.saturating_sub(1))
}

/// Eq. 5 over `owd` (sorted in place); `None` without samples.
pub(super) fn owd_m(owd: &mut [Duration], quantile: f64) -> Option<Duration> {
    if owd.is_empty() {
        return None;
    }
    owd.sort_unstable();
    Some(owd[quantile_index(owd.len(), quantile)])
}

/// Eq. 3: queue load B = x·(D_m − D_min) in bytes; a D_m below D_min (a
/// minimum lowered since the samples were taken) is no queue.
pub(super) fn queue_load(x: DataRate, d_m: Duration, d_min: Duration) -> f64 {
    x.bps() as f64 / 8.0 * (d_m - d_min).max(Duration::ZERO).as_secs_f64()
}

/// Eq. 4's direction: up while B ≤ B_th, down otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
}

pub(super) fn action(b: f64, b_th: DataSize) -> Action {
    if b <= b_th.bytes() as f64 {
        Action::Up
    } else {
        Action::Down
    }
}

/// The monitor cycles of one decision epoch (Fig. 4).
#[derive(Clone, Debug, Default)]
pub(super) struct Monitor {
    running: bool,
    /// cycle_current_offset_.
    offset: u32,
    cycle_start: Time,
    /// First and last sequence sent in cycle 1.
    cycle1: Option<(u64, u64)>,
    /// One-way delays of cycle 1's acknowledged packets.
    owd: Vec<Duration>,
}

impl Monitor {
    /// A new epoch at `now`, cycle 0 (after a decision, §V).
    pub(super) fn restart(&mut self, now: Time) {
        self.running = true;
        self.offset = 0;
        self.cycle_start = now;
        self.cycle1 = None;
        self.owd.clear();
    }

    /// No epoch: outside ProbeBW nothing is decided.
    pub(super) fn stop(&mut self) {
        self.running = false;
        self.cycle1 = None;
        self.owd.clear();
    }

    pub(super) fn offset(&self) -> u32 {
        self.offset
    }

    /// A packet sent at `t`; cycles last `rtt_min` (no cycle ends before
    /// the first RTT sample).
    pub(super) fn on_sent(&mut self, t: Time, seq: u64, rtt_min: Option<Duration>) {
        if !self.running {
            return;
        }
        if rtt_min.is_some_and(|r| t - self.cycle_start > r) {
            self.offset = self.offset.saturating_add(1);
            self.cycle_start = t;
        }
        if self.offset == 1 {
            let first = self.cycle1.map_or(seq, |c| c.0);
            self.cycle1 = Some((first, seq.max(first)));
        }
    }

    /// A packet acknowledged (with its one-way delay) or reported lost
    /// (`None`). True when cycle 1 is closed and its last packet, or a later
    /// one, has been reported: the epoch's decision is due.
    pub(super) fn on_reported(&mut self, seq: u64, owd: Option<Duration>) -> bool {
        let Some((first, last)) = self.cycle1 else { return false };
        if let Some(d) = owd.filter(|_| (first..=last).contains(&seq)) {
            self.owd.push(d);
        }
        self.offset >= 2 && seq >= last
    }

    /// Eq. 5 over cycle 1's delays.
    pub(super) fn owd_m(&mut self, quantile: f64) -> Option<Duration> {
        owd_m(&mut self.owd, quantile)
    }
}

/// Rounds as the paper counts them: one RTT_min of sending time each, the
/// length of a monitor cycle ("Cross makes rate decision for about every 3
/// rounds", §V, Fig. 4), advanced on a sent packet as the cycles are. They
/// time StartUp's and Drain's checks and Algorithm 3's rest, which a
/// feedback-clocked round (BBR's) would stretch with the very queue those
/// mechanisms are there to drain.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rounds {
    count: u64,
    start: Option<Time>,
}

impl Rounds {
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// A packet sent at `t`: whether a round ended (none before the first
    /// RTT sample).
    pub(super) fn on_sent(&mut self, t: Time, rtt_min: Option<Duration>) -> bool {
        let start = *self.start.get_or_insert(t);
        if rtt_min.is_some_and(|r| t - start > r) {
            self.count += 1;
            self.start = Some(t);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{ms, MS};

    /// Eq. 5's index n·1/4 rounded down: n = 1, 3 → 0; 4, 7 → 1; 8 → 2;
    /// 10 → 2 (2.5); 21 → 5 (5.25); the median (1/2) of 5 → 2, of 6 → 3;
    /// ratio 1 stays inside the array; 0.3 of 10 is exactly 3.
    #[test]
    fn eq5_index_is_n_numerator_over_denominator() {
        for (n, i) in [(1, 0), (2, 0), (3, 0), (4, 1), (7, 1), (8, 2), (10, 2), (21, 5), (100, 25)] {
            assert_eq!(quantile_index(n, 0.25), i, "n = {n}");
        }
        assert_eq!((quantile_index(5, 0.5), quantile_index(6, 0.5)), (2, 3));
        assert_eq!((quantile_index(4, 1.0), quantile_index(4, 0.0)), (3, 0));
        assert_eq!(quantile_index(10, 0.3), 3);
        assert_eq!(quantile_index(0, 0.25), 0);
    }

    /// Delays 31, 25, 40, 28, 26, 35, 27, 50 ms sort to 25 26 27 28 31 35
    /// 40 50; n = 8, index 2: OWD_m = 27 ms (the median, index 4, is 31).
    #[test]
    fn eq5_takes_the_lower_quartile_of_the_sorted_delays() {
        let mut owd: Vec<Duration> = [31, 25, 40, 28, 26, 35, 27, 50].iter().map(|&d| MS * d).collect();
        assert_eq!(owd_m(&mut owd, 0.25), Some(MS * 27));
        assert_eq!(owd_m(&mut owd, 0.5), Some(MS * 31));
        assert_eq!(owd_m(&mut [], 0.25), None);
    }

    /// Eq. 3: 2.4 Mbps = 300 000 B/s over a queue of 27 − 25 = 2 ms is
    /// 600 B; eq. 4 with B_th = 2·1200 B: up. 2.4 Mbps over 10 ms: 3000 B,
    /// down. Exactly B_th (8 ms) is still up; D_m below D_min is no queue.
    #[test]
    fn eq3_queue_load_and_eq4_direction() {
        let x = DataRate::from_kbps(2400);
        let b_th = DataSize::from_bytes(2400);
        assert!((queue_load(x, MS * 27, MS * 25) - 600.0).abs() < 1e-9);
        assert_eq!(action(queue_load(x, MS * 27, MS * 25), b_th), Action::Up);
        assert!((queue_load(x, MS * 35, MS * 25) - 3000.0).abs() < 1e-9);
        assert_eq!(action(queue_load(x, MS * 35, MS * 25), b_th), Action::Down);
        assert_eq!(action(queue_load(x, MS * 33, MS * 25), b_th), Action::Up);
        assert_eq!(queue_load(x, MS * 20, MS * 25), 0.0);
    }

    /// RTT_min 100 ms, a packet every 20 ms from 0: cycle 0 holds 0..=100
    /// ms (a send at exactly 100 ms has not exceeded it), cycle 1 starts
    /// with the packet at 120 ms and holds seqs 6..=11 (120–220 ms), cycle 2
    /// starts at 240 ms. Only cycle 1's delays count, and the epoch is due
    /// once seq 11 (or later) is reported in cycle 2 or after.
    #[test]
    fn cycles_advance_on_send_and_the_epoch_ends_with_cycle_1s_last_packet() {
        let mut m = Monitor::default();
        m.restart(ms(0));
        let rtt = Some(MS * 100);
        for seq in 0..=11 {
            m.on_sent(ms(20 * seq as i64), seq, rtt);
        }
        assert_eq!((m.offset(), m.cycle1), (1, Some((6, 11))));
        assert!(!m.on_reported(11, Some(MS * 30)), "cycle 1 is still open");
        m.on_sent(ms(240), 12, rtt);
        assert_eq!(m.offset(), 2);
        assert!(!m.on_reported(5, Some(MS * 90)), "cycle 0: not counted");
        for (seq, d) in [(6, 34), (7, 30), (8, 31), (9, 40), (10, 33)] {
            assert!(!m.on_reported(seq, Some(MS * d)));
        }
        assert!(m.on_reported(12, None), "a later packet reported closes the epoch");
        // 30 30 31 33 34 40 (the early 11 counted too): index 6/4 = 1.
        assert_eq!(m.owd_m(0.25), Some(MS * 30));
        m.restart(ms(300));
        assert_eq!((m.offset(), m.cycle1), (0, None));
        // No cycle ends before the first RTT sample; a stopped monitor stays put.
        m.on_sent(ms(10_000), 13, None);
        assert_eq!(m.offset(), 0);
        m.stop();
        m.on_sent(ms(20_000), 14, rtt);
        assert_eq!(m.offset(), 0);
    }

    #[test]
    fn a_round_is_one_rtt_min_of_sending() {
        let mut r = Rounds::default();
        assert!(!r.on_sent(ms(0), None));
        assert!(!r.on_sent(ms(500), None), "no round before an RTT sample");
        assert!(!r.on_sent(ms(100), Some(MS * 100)));
        assert!(r.on_sent(ms(101), Some(MS * 100)));
        assert!(!r.on_sent(ms(201), Some(MS * 100)));
        assert!(r.on_sent(ms(250), Some(MS * 100)));
        assert_eq!(r.count(), 2);
    }
}
