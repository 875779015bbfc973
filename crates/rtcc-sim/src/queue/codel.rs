//! CoDel (RFC 8289): the control law, the per-queue state machine, and CoDel on one FIFO.

use std::collections::VecDeque;

use crate::endpoint::Envelope;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use super::buffer::{Item, QueueLimit, Queued};

/// RFC 8289 §5 constants: `TARGET = MS2TIME(5)`, the acceptable standing
/// queue delay (chosen in §4 as 5–10 % of INTERVAL).
pub const CODEL_TARGET: Duration = Duration::from_millis(5);
/// RFC 8289 §5 constants: `INTERVAL = MS2TIME(100)`, the sliding-minimum
/// window, on the order of a worst-case RTT (§4).
pub const CODEL_INTERVAL: Duration = Duration::from_millis(100);
/// RFC 8289 §5: `maxpacket` SHOULD be the interface MTU. Linux uses
/// `psched_mtu()` = 1500 B + the 14 B Ethernet header.
pub const CODEL_MTU: DataSize = DataSize::from_bytes(1514);
/// Linux `sch_codel` default limit (RFC 8289 leaves the buffer size to the
/// implementation; CoDel needs it only as a backstop).
pub const CODEL_LIMIT: usize = 1000;

/// The constants of one CoDel instance (RFC 8289 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    pub target: Duration,
    pub interval: Duration,
    /// `maxpacket`: no drop while at most this many bytes stay queued
    /// behind the dequeued packet (non-starvation, RFC 8289 §4).
    pub mtu: DataSize,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams { target: CODEL_TARGET, interval: CODEL_INTERVAL, mtu: CODEL_MTU }
    }
}

/// RFC 8289 §3.3 / §5 `control_law()`: the next drop comes `interval /
/// sqrt(count)` after `t`, so the drop rate grows as √count until the
/// sojourn time falls below target. Exact square root, rounded to the µs
/// (Linux uses a Newton-iterated reciprocal square root).
pub fn control_law(t: Time, count: u32, interval: Duration) -> Time {
    let gap = interval.as_micros() as f64 / f64::from(count.max(1)).sqrt();
    t + Duration::from_micros(gap.round() as i64)
}

/// Per-queue CoDel state (RFC 8289 §5, `codel_queue_t` members).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelState {
    /// When the sojourn time will have been above target for a whole
    /// interval; `None` where the RFC writes 0.
    first_above_time: Option<Time>,
    drop_next: Time,
    /// Packets dropped since entering the dropping state.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
}

impl CodelState {
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due while dropping.
    pub fn drop_next(&self) -> Option<Time> {
        self.dropping.then_some(self.drop_next)
    }

    /// RFC 8289 §5 `dodequeue()`: takes the head and says whether the
    /// sojourn time has been at or above target for at least an interval.
    /// `pop` returns the head and the bytes still queued after it.
    fn dodequeue<T: Item>(
        &mut self,
        now: Time,
        p: &CodelParams,
        pop: &mut impl FnMut() -> Option<(Queued<T>, DataSize)>,
    ) -> (Option<Queued<T>>, bool) {
        let Some((item, backlog)) = pop() else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_since(item.1);
        if sojourn < p.target || backlog <= p.mtu {
            // Went below (or too little queued to matter): stay below for
            // at least an interval before dropping again.
            self.first_above_time = None;
            return (Some(item), false);
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                (Some(item), false)
            }
            Some(t) => (Some(item), now >= t),
        }
    }

    /// RFC 8289 §5 `dequeue()`: the packet to send at `now`, or `None` if
    /// the queue ran empty. Packets dropped on the way go to `drop`.
    pub fn dequeue<T: Item>(
        &mut self,
        now: Time,
        p: &CodelParams,
        mut pop: impl FnMut() -> Option<(Queued<T>, DataSize)>,
        mut drop: impl FnMut(Queued<T>),
    ) -> Option<Queued<T>> {
        let (mut item, ok_to_drop) = self.dodequeue(now, p, &mut pop);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // A large backlog can make the next drop due already, hence the
            // loop (several drops in one dequeue).
            while self.dropping && now >= self.drop_next {
                drop(item.expect("ok_to_drop implies a packet"));
                self.count = self.count.saturating_add(1);
                let (next, ok) = self.dodequeue(now, p, &mut pop);
                item = next;
                if ok {
                    self.drop_next = control_law(self.drop_next, self.count, p.interval);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // Above target for a whole interval: drop and enter the
            // dropping state.
            drop(item.expect("ok_to_drop implies a packet"));
            item = self.dodequeue(now, p, &mut pop).0;
            self.dropping = true;
            // Re-entry rule (RFC 8289 §5, the Linux variant): if we were
            // dropping recently, resume near the drop rate that controlled
            // the queue last time (count − lastcount drops then) instead of
            // starting again from 1.
            let delta = self.count.saturating_sub(self.lastcount);
            let recent = now - self.drop_next < p.interval * 16;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = control_law(now, self.count, p.interval);
            self.lastcount = self.count;
        }
        item
    }
}

/// CoDel on a single FIFO with a tail-drop limit as a backstop.
#[derive(Clone, Debug)]
pub struct Codel<T: Item = Envelope> {
    params: CodelParams,
    limit: QueueLimit,
    fifo: VecDeque<Queued<T>>,
    /// Bytes waiting in `fifo` (the packet in service excluded).
    bytes: DataSize,
    serving: Option<Queued<T>>,
    state: CodelState,
}

impl<T: Item> Codel<T> {
    pub fn new(params: CodelParams, limit: QueueLimit) -> Self {
        let cap = match limit {
            QueueLimit::Packets(n) => n.saturating_add(1).min(65_536),
            _ => 1024,
        };
        Codel {
            params,
            limit,
            fifo: VecDeque::with_capacity(cap),
            bytes: DataSize::ZERO,
            serving: None,
            state: CodelState::default(),
        }
    }

    pub fn params(&self) -> CodelParams {
        self.params
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    pub fn state(&self) -> &CodelState {
        &self.state
    }

    /// RFC 8289 §5 `enqueue()`: timestamp and append; only the limit
    /// refuses (tail drop). `rate` is asked for only by a time limit.
    pub fn enqueue(&mut self, now: Time, packet: T, rate: impl FnOnce() -> DataRate) -> bool {
        let rate = if self.limit.needs_rate() { rate() } else { DataRate::ZERO };
        if !self.limit.admits(self.bytes(), self.len(), packet.size(), rate) {
            return false;
        }
        self.bytes += packet.size();
        self.fifo.push_back((packet, now));
        true
    }

    /// Picks the packet that starts service at `now`, running the CoDel
    /// dequeue; drops go to `drops`. It stays counted until `finish`.
    pub fn start(&mut self, now: Time, drops: &mut VecDeque<Queued<T>>) -> Option<&Queued<T>> {
        if self.serving.is_some() {
            return self.serving.as_ref();
        }
        let Codel { params, fifo, bytes, state, .. } = self;
        let pop = || {
            let item = fifo.pop_front()?;
            *bytes -= item.0.size();
            Some((item, *bytes))
        };
        self.serving = state.dequeue(now, params, pop, |d| drops.push_back(d));
        self.serving.as_ref()
    }

    /// Removes the packet in service (it has left the link).
    pub fn finish(&mut self) -> Option<Queued<T>> {
        self.serving.take()
    }

    /// Packets buffered, the one in service included.
    pub fn len(&self) -> usize {
        self.fifo.len() + usize::from(self.serving.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes buffered, the packet in service included.
    pub fn bytes(&self) -> DataSize {
        self.bytes + self.serving.as_ref().map_or(DataSize::ZERO, |s| s.0.size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::fixtures::{ms, pkt, us};

    /// A queue whose head always has waited `sojourn` and leaves `backlog`
    /// bytes behind it; counts the packets taken.
    fn steady(now: Time, sojourn: Duration, backlog: u64, taken: &mut u64) -> Option<(Queued, DataSize)> {
        *taken += 1;
        Some(((pkt(0, *taken, 1000), now - sojourn), DataSize::from_bytes(backlog)))
    }

    /// Dequeues every `step` in `[from, to)`; returns the times of drops.
    fn run_state(
        s: &mut CodelState,
        from: Time,
        to: Time,
        step: Duration,
        sojourn: Duration,
        backlog: u64,
    ) -> Vec<Time> {
        let p = CodelParams::default();
        let (mut t, mut drops, mut taken) = (from, vec![], 0);
        while t < to {
            let mut dropped = 0;
            let got = s.dequeue(t, &p, || steady(t, sojourn, backlog, &mut taken), |_| dropped += 1);
            assert!(got.is_some());
            drops.extend(std::iter::repeat_n(t, dropped));
            t += step;
        }
        drops
    }

    #[test]
    fn control_law_is_interval_over_sqrt_count() {
        // RFC 8289 §3.3: 100 ms / √n = 100, 70.711, 57.735, 50 ms.
        let gaps: Vec<i64> = (1..=4).map(|n| control_law(Time::ZERO, n, CODEL_INTERVAL).as_micros()).collect();
        assert_eq!(gaps, vec![100_000, 70_711, 57_735, 50_000]);
    }

    #[test]
    fn codel_enters_dropping_after_an_interval_above_target_and_follows_the_control_law() {
        let mut s = CodelState::default();
        let step = Duration::from_millis(1);
        let drops = run_state(&mut s, Time::ZERO, ms(400), step, Duration::from_millis(10), 10_000);
        // Above target from t = 0, so the first drop is at 100 ms; then
        // drop_next = 200, 270.711, 328.446, 378.446 ms (each on the next
        // 1 ms dequeue).
        assert_eq!(drops, vec![ms(100), ms(200), ms(271), ms(329), ms(379)]);
        assert_eq!((s.dropping(), s.count(), s.drop_next()), (true, 5, Some(us(378_446 + 44_721))));

        // Sojourn below target: leave the dropping state; count is kept.
        let mut s1 = s;
        run_state(&mut s1, ms(400), ms(401), step, Duration::from_millis(1), 10_000);
        assert_eq!((s1.dropping(), s1.count()), (false, 5));
        let mut s2 = s1;
        // Re-entry within 16 intervals of the last drop_next: count resumes
        // at count − lastcount = 5 − 1 = 4, so the next gaps are 100/√4 and
        // 100/√5 ms: drops at 501, 551, 595.721 ms.
        let drops = run_state(&mut s1, ms(401), ms(600), step, Duration::from_millis(10), 10_000);
        assert_eq!(drops, vec![ms(501), ms(551), ms(596)]);
        assert_eq!(s1.count(), 6);
        // Long after (more than 16 intervals): start again from 1.
        let drops = run_state(&mut s2, ms(3000), ms(3250), step, Duration::from_millis(10), 10_000);
        assert_eq!(drops, vec![ms(3100), ms(3200)]);
    }

    #[test]
    fn codel_never_drops_with_at_most_one_mtu_queued() {
        // RFC 8289 §4 non-starvation: 50 ms sojourn but only 1514 B behind.
        let mut s = CodelState::default();
        let drops = run_state(&mut s, Time::ZERO, ms(1000), Duration::from_millis(1), Duration::from_millis(50), 1514);
        assert!(drops.is_empty() && !s.dropping());
        let drops = run_state(&mut s, ms(1000), ms(1101), Duration::from_millis(1), Duration::from_millis(50), 1515);
        assert_eq!(drops, vec![ms(1100)]);
    }
}
