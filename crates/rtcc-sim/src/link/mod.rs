//! The bottleneck link ([`Link`]): buffer, server, random loss, jitter and propagation delays.
//!
//! [`Link`] = buffer under a queue discipline (drop-tail, CoDel or FQ-CoDel,
//! in [`crate::queue`]) + [`Server`] at a capacity (models in
//! [`crate::trace`]) + random loss after the bottleneck ([`crate::loss`]) +
//! jitter + propagation delays. The `[link]` config is in [`config`]. The
//! parts are re-exported here.

#[cfg(test)]
mod aqm_tests;
pub mod config;
mod server;

use std::collections::VecDeque;

use crate::endpoint::Envelope;
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataSize, Time};

use crate::loss::LossModel;
use crate::queue::{Item, Queue, Queued};

pub use self::config::{
    CapacitySpec, CapacityTable, FieldError, LinkConfig, LossSpec, LossTable, QueueSpec, QueueTable, UnitValue,
};
pub use self::server::Server;
pub use crate::queue::{CodelParams, FqCodelConfig, QueueDiscipline, QueueLimit};
pub use crate::trace::{Capacity, MahimahiTrace, Schedule, TraceCapacity, TraceError, TRACE_RATE_WINDOW};

/// A packet (or another datagram) that has crossed the bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Departure<T = Envelope> {
    pub packet: T,
    pub enqueued: Time,
    pub service_start: Time,
    /// When its last byte left the bottleneck (before propagation delay).
    pub departed: Time,
    /// Dropped by random loss after the bottleneck; still used capacity.
    pub lost: bool,
}

/// One direction's bottleneck plus the path parameters around it. Drive it
/// with `poll_departure(now)` until `None`, then `poll_drop()` until `None`,
/// before `enqueue(now, ..)`, and wake at `poll_timeout()`.
#[derive(Clone, Debug)]
pub struct Link<T: Item = Envelope> {
    queue: Queue<T>,
    server: Server,
    /// (service start, departure) of the packet in service.
    head: Option<(Time, Time)>,
    /// Packets the AQM dropped, not yet polled. Preallocated: CoDel drops
    /// at most a few per dequeue, FQ-CoDel at most a batch per enqueue.
    drops: VecDeque<Queued<T>>,
    last_departure: Time,
    /// Random loss of packets leaving the bottleneck (they used capacity).
    loss: LossModel,
    loss_rng: Rng,
}

impl<T: Item> Link<T> {
    pub fn new(capacity: Capacity, queue: impl Into<QueueDiscipline>, loss: LossModel, mut rng: Rng) -> Self {
        Link {
            queue: Queue::new(queue.into()),
            server: Server::new(capacity),
            head: None,
            drops: VecDeque::with_capacity(256),
            last_departure: Time::ZERO,
            loss,
            loss_rng: rng.fork(1),
        }
    }

    /// Replaces the loss stream with one forked from `rng` (the run's
    /// stream; the paths fork theirs from it next, `PathSpec::build`).
    pub fn set_rng(&mut self, rng: &mut Rng) {
        self.loss_rng = rng.fork(1);
    }

    /// Offers a packet to the bottleneck buffer; `false` if dropped on
    /// arrival (tail drop; FQ-CoDel over its limit when the arriving packet
    /// is the one dropped). Other packets FQ-CoDel drops to make room come
    /// out of [`poll_drop`](Self::poll_drop).
    pub fn enqueue(&mut self, now: Time, packet: T) -> bool {
        let capacity = self.server.capacity();
        if !self.queue.enqueue(now, packet, || capacity.rate_at(now), &mut self.drops) {
            return false;
        }
        if self.head.is_none() {
            self.start_service(now.max(self.last_departure));
        }
        true
    }

    /// Pull model: the link takes the next packet from the discipline when
    /// it can transmit (`at`: the previous departure, or the arrival at an
    /// idle link); service starts then, or when the packet arrived if later.
    /// That is the dequeue at which CoDel decides.
    fn start_service(&mut self, at: Time) {
        self.head = self.queue.start(at, &mut self.drops).map(|(p, enqueued)| {
            let start = (*enqueued).max(at);
            (start, self.server.finish_time(start, p.size()))
        });
    }

    /// When the packet in service leaves; `None` if idle or never.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.head.map(|h| h.1).filter(|&t| t < Time::MAX)
    }

    /// The packet whose last byte left at or before `now`, if any.
    pub fn poll_departure(&mut self, now: Time) -> Option<Departure<T>> {
        let (service_start, departed) = self.head.filter(|h| h.1 <= now)?;
        let (packet, enqueued) = self.queue.finish().expect("a packet in service is queued");
        self.last_departure = departed;
        self.start_service(departed);
        let lost = self.loss.lose(departed, &mut self.loss_rng);
        Some(Departure { packet, enqueued, service_start, departed, lost })
    }

    /// A packet the AQM dropped, with its enqueue time: CoDel and FQ-CoDel
    /// drop at dequeue (when a packet would start service), FQ-CoDel also
    /// from its fattest flow when over its limit. Poll after
    /// `poll_departure` and after `enqueue`; drop-tail never yields any.
    pub fn poll_drop(&mut self) -> Option<(T, Time)> {
        self.drops.pop_front()
    }

    /// Bytes at the bottleneck, waiting and in service.
    pub fn queue_bytes(&self) -> DataSize {
        self.queue.bytes()
    }

    /// Packets at the bottleneck, waiting and in service.
    pub fn queue_packets(&self) -> usize {
        self.queue.len()
    }

    /// The buffer limit (FQ-CoDel: its packet limit).
    pub fn queue_limit(&self) -> QueueLimit {
        self.queue.discipline().limit()
    }

    pub fn queue_discipline(&self) -> QueueDiscipline {
        self.queue.discipline()
    }

    pub fn capacity(&self) -> &Capacity {
        self.server.capacity()
    }

    pub fn loss(&self) -> &LossModel {
        &self.loss
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rtcc_core::packet::{PacketKind, NO_FRAME};
    use rtcc_core::units::DataRate;

    use super::*;
    use rtcc_core::units::Duration;

    fn pkt(seq: u64, size: u64) -> Envelope {
        let packet = rtcc_core::packet::Packet {
            kind: PacketKind::Media,
            size: DataSize::from_bytes(size),
            ..Default::default()
        };
        Envelope { flow: 0, seq, frame: NO_FRAME, sent: Time::ZERO, kind: packet.kind, packet }
    }
    use crate::queue::fixtures::{b, ms};

    fn link(capacity: Capacity, queue: QueueLimit, loss: LossModel) -> Link {
        Link::new(capacity, queue, loss, Rng::new(3))
    }

    #[test]
    fn link_serves_fifo_with_pull_model() {
        let mut l = link(Capacity::constant(DataRate::from_mbps(1)), QueueLimit::Unlimited, LossModel::None);
        assert_eq!(l.poll_timeout(), None);
        for i in 0..3 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1250)));
        }
        assert_eq!((l.queue_packets(), l.queue_bytes()), (3, b(3750)));
        assert_eq!(l.poll_timeout(), Some(ms(10)));
        assert_eq!(l.poll_departure(Time::from_micros(9_999)), None);
        let mut got = vec![];
        while let Some(d) = l.poll_departure(ms(100)) {
            got.push((d.packet.seq, d.enqueued, d.service_start, d.departed, d.lost));
        }
        assert_eq!(
            got,
            vec![
                (0, ms(0), ms(0), ms(10), false),
                (1, ms(0), ms(10), ms(20), false),
                (2, ms(0), ms(20), ms(30), false),
            ]
        );
        assert_eq!(l.queue_packets(), 0);
        // Idle link: service starts on arrival.
        assert!(l.enqueue(ms(35), pkt(3, 1250)));
        assert_eq!(l.poll_timeout(), Some(ms(45)));
        let d = l.poll_departure(ms(45)).unwrap();
        assert_eq!((d.service_start, d.departed), (ms(35), ms(45)));
    }

    #[test]
    fn link_drops_at_the_queue_limit_counting_the_packet_in_service() {
        let mut l = link(Capacity::constant(DataRate::from_mbps(1)), QueueLimit::Packets(2), LossModel::None);
        assert!(l.enqueue(Time::ZERO, pkt(0, 1250)));
        assert!(l.enqueue(Time::ZERO, pkt(1, 1250)));
        assert!(!l.enqueue(Time::ZERO, pkt(2, 1250)));
        assert!(l.poll_departure(ms(10)).is_some());
        assert!(l.enqueue(ms(10), pkt(3, 1250)));
        // Time limit at the current capacity: 100 ms at 1 Mbps = 12 500 B.
        let q = QueueLimit::Time(Duration::from_millis(100));
        let mut l = link(Capacity::constant(DataRate::from_mbps(1)), q, LossModel::None);
        assert!(l.enqueue(Time::ZERO, pkt(0, 12_500)));
        assert!(!l.enqueue(Time::ZERO, pkt(1, 1)));
    }

    #[test]
    fn link_over_a_trace() {
        let t = Arc::new(MahimahiTrace::parse("1").unwrap());
        let mut l = link(Capacity::trace(t, Duration::ZERO, 1.0), QueueLimit::Unlimited, LossModel::None);
        for (i, size) in [1500, 300, 300, 300, 300, 300, 300, 2000].into_iter().enumerate() {
            l.enqueue(Time::ZERO, pkt(i as u64, size));
        }
        let out: Vec<i64> =
            std::iter::from_fn(|| l.poll_departure(ms(100))).map(|d| d.departed.as_micros() / 1000).collect();
        assert_eq!(out, vec![1, 2, 2, 2, 2, 2, 3, 4]);
    }

    #[test]
    fn random_parts_are_seeded_and_independent() {
        let c = || Capacity::constant(DataRate::from_mbps(100));
        let mut l = link(c(), QueueLimit::Unlimited, LossModel::bernoulli(1.0));
        l.enqueue(Time::ZERO, pkt(0, 100));
        assert!(l.poll_departure(ms(1)).unwrap().lost);
        // Same seed, same draws.
        let mut a = link(c(), QueueLimit::Unlimited, LossModel::bernoulli(0.5));
        let mut b2 = link(c(), QueueLimit::Unlimited, LossModel::bernoulli(0.5));
        a.set_rng(&mut Rng::new(9));
        b2.set_rng(&mut Rng::new(9));
        let fates = |l: &mut Link| -> Vec<bool> {
            (0..50)
                .map(|i| {
                    l.enqueue(ms(i), pkt(i as u64, 100));
                    l.poll_departure(ms(i + 1)).unwrap().lost
                })
                .collect()
        };
        assert_eq!(fates(&mut a), fates(&mut b2));
    }

    fn on_1mbps(q: QueueDiscipline) -> Link {
        Link::new(Capacity::constant(DataRate::from_mbps(1)), q, LossModel::None, Rng::new(3))
    }

    /// 30 packets of 1250 B at t = 0 on 1 Mbps (10 ms each) through CoDel.
    /// Packet 1 starts at 10 ms with 10 ms of sojourn: first_above_time =
    /// 110 ms. Packet 11 reaches the head at 110 ms and is dropped (12 is
    /// served instead); the next drop is due at 210 ms (packet 22).
    #[test]
    fn codel_drops_come_out_of_poll_drop_at_dequeue() {
        let mut l = on_1mbps(QueueDiscipline::codel());
        let mut l2 = on_1mbps(QueueLimit::Unlimited.into());
        for i in 0..30 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1250)));
            assert!(l2.enqueue(Time::ZERO, pkt(i, 1250)));
        }
        assert_eq!(l.poll_drop(), None);
        let (mut drops, mut served) = (vec![], vec![]);
        while let Some(t) = l.poll_timeout() {
            while let Some(d) = l.poll_departure(t) {
                served.push((d.packet.seq, d.service_start));
            }
            while let Some((p, enqueued)) = l.poll_drop() {
                drops.push((p.seq, enqueued, t, l.queue_packets()));
            }
        }
        // At 110 ms: 11 gone, 1 dropped, 12 in service, 13..29 waiting = 18.
        assert_eq!(drops, vec![(11, Time::ZERO, ms(110), 18), (22, Time::ZERO, ms(210), 7)]);
        assert_eq!(served.len(), 28);
        assert!(served.contains(&(12, ms(110))) && served.contains(&(23, ms(210))));
        assert_eq!((l.queue_packets(), l.queue_bytes()), (0, DataSize::ZERO));
        // Drop-tail never drops at dequeue.
        while let Some(t) = l2.poll_timeout() {
            while l2.poll_departure(t).is_some() {}
            assert_eq!(l2.poll_drop(), None);
        }
    }

    #[test]
    fn fq_codel_overflow_through_the_link() {
        let mut l = on_1mbps(FqCodelConfig { limit: 3, ..FqCodelConfig::default() }.into());
        let p = |flow: u16, seq: u64, size: u64| Envelope { flow, ..pkt(seq, size) };
        // Flow 0: one in service, two waiting: 3 packets, at the limit.
        for i in 0..3 {
            assert!(l.enqueue(Time::ZERO, p(0, i, 1000)));
        }
        assert_eq!(l.poll_drop(), None);
        // Over the limit: half of flow 0's 2000 waiting bytes go, from the head.
        assert!(l.enqueue(Time::ZERO, p(1, 0, 100)));
        assert_eq!(l.poll_drop().map(|(p, e)| (p.flow, p.seq, e)), Some((0, 1, Time::ZERO)));
        assert_eq!(l.poll_drop(), None);
        assert_eq!((l.queue_packets(), l.queue_bytes()), (3, b(2100)));
        // Now flow 1 is the fattest and the arriving packet is dropped with
        // its head: refused (like a tail drop), the head reported.
        assert!(!l.enqueue(Time::ZERO, p(1, 1, 1500)));
        assert_eq!(l.poll_drop().map(|(p, _)| (p.flow, p.seq)), Some((1, 0)));
        assert_eq!(l.poll_drop(), None);
        assert_eq!((l.queue_packets(), l.queue_limit()), (2, QueueLimit::Packets(3)));
    }
}
