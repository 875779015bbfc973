//! Drop-tail: a FIFO whose arrivals over the [`QueueLimit`] are dropped.

use std::collections::VecDeque;

use crate::endpoint::Envelope;
use rtcc_core::units::{DataRate, DataSize, Time};

use super::buffer::{Item, QueueLimit};

/// FIFO buffer with tail drop. Packets are stored with their enqueue time.
#[derive(Clone, Debug)]
pub struct DropTail<T: Item = Envelope> {
    limit: QueueLimit,
    packets: VecDeque<(T, Time)>,
    bytes: DataSize,
}

impl<T: Item> DropTail<T> {
    pub fn new(limit: QueueLimit) -> Self {
        // Sized up front so that steady state never reallocates; an unlimited
        // queue grows only when it really holds more.
        let cap = match limit {
            QueueLimit::Packets(n) => n.saturating_add(1).min(65_536),
            _ => 1024,
        };
        DropTail { limit, packets: VecDeque::with_capacity(cap), bytes: DataSize::ZERO }
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    /// Whether a packet of `size` would fit now ([`QueueLimit::admits`]).
    pub fn admits(&self, size: DataSize, rate: DataRate) -> bool {
        self.limit.admits(self.bytes, self.packets.len(), size, rate)
    }

    /// Appends `packet` unless the limit refuses it (tail drop); `rate` is
    /// asked for only by the time limit.
    pub fn enqueue(&mut self, now: Time, packet: T, rate: impl FnOnce() -> DataRate) -> bool {
        let rate = if self.limit.needs_rate() { rate() } else { DataRate::ZERO };
        if !self.admits(packet.size(), rate) {
            return false;
        }
        self.bytes += packet.size();
        self.packets.push_back((packet, now));
        true
    }

    pub fn front(&self) -> Option<&(T, Time)> {
        self.packets.front()
    }

    pub fn pop_front(&mut self) -> Option<(T, Time)> {
        let out = self.packets.pop_front()?;
        self.bytes -= out.0.size();
        Some(out)
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn bytes(&self) -> DataSize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use rtcc_core::units::Duration;

    use super::*;

    /// One packet of `size` bytes.
    fn pkt(size: u64) -> Envelope {
        crate::queue::fixtures::pkt(0, 0, size)
    }

    #[test]
    fn byte_limit_drops_exactly_past_the_limit() {
        let mut q = DropTail::new(QueueLimit::Bytes(DataSize::from_bytes(3000)));
        let no_rate = || DataRate::ZERO;
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
        assert!(!q.enqueue(Time::ZERO, pkt(1001), no_rate));
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate)); // exactly 3000
        assert!(!q.enqueue(Time::ZERO, pkt(1), no_rate));
        assert_eq!((q.len(), q.bytes()), (3, DataSize::from_bytes(3000)));
        q.pop_front();
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
    }

    #[test]
    fn packet_limit() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(!q.enqueue(Time::ZERO, pkt(10), || DataRate::ZERO));
        assert_eq!(q.pop_front().map(|p| p.0.packet.size.bytes()), Some(1500));
        assert!(q.enqueue(Time::ZERO, pkt(10), || DataRate::ZERO));
    }

    #[test]
    fn time_limit_uses_current_rate() {
        // 100 ms at 1 Mbps = 12 500 B.
        let mut q = DropTail::new(QueueLimit::Time(Duration::from_millis(100)));
        let r = || DataRate::from_mbps(1);
        for _ in 0..12 {
            assert!(q.enqueue(Time::ZERO, pkt(1000), r));
        }
        assert!(!q.enqueue(Time::ZERO, pkt(501), r));
        assert!(q.enqueue(Time::ZERO, pkt(500), r));
        assert!(!q.enqueue(Time::ZERO, pkt(1), r));
        // Twice the rate: room for 12 500 B more.
        assert!(q.enqueue(Time::ZERO, pkt(12_500), || DataRate::from_mbps(2)));
        assert!(!q.enqueue(Time::ZERO, pkt(1), || DataRate::from_mbps(2)));
        // Zero capacity: one packet into an empty buffer, nothing more.
        let mut q = DropTail::new(QueueLimit::Time(Duration::from_millis(100)));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(!q.enqueue(Time::ZERO, pkt(1), || DataRate::ZERO));
    }

    #[test]
    fn fifo_keeps_enqueue_times() {
        let mut q = DropTail::new(QueueLimit::Unlimited);
        for i in 0..3 {
            q.enqueue(Time::from_millis(i), pkt(100 + i as u64), || DataRate::ZERO);
        }
        let order: Vec<(u64, Time)> =
            std::iter::from_fn(|| q.pop_front()).map(|(p, t)| (p.packet.size.bytes(), t)).collect();
        assert_eq!(order, vec![(100, Time::ZERO), (101, Time::from_millis(1)), (102, Time::from_millis(2))]);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), DataSize::ZERO);
    }
}
