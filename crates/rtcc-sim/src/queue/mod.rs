//! The bottleneck buffer: a [`Queue`] under one of three disciplines ([`QueueDiscipline`]).
//!
//! Drop-tail is a FIFO with a limit in bytes, packets or milliseconds of link
//! time ([`QueueLimit`]); CoDel (RFC 8289) and FQ-CoDel (RFC 8290) are the
//! AQMs. The buffer holds every packet at the bottleneck, including the one
//! being transmitted, so limits count it; the server that transmits it is
//! [`crate::link::Server`].
//!
//! The AQMs drop at dequeue, which here is the moment a packet reaches the head
//! of the link to start service: the [`crate::link::Link`] asks for the next
//! packet when the previous one has left (or when a packet arrives at an idle
//! link), so sojourn time = service start − enqueue time. Dropped packets go
//! to a caller-owned buffer, from which `Link::poll_drop` hands them out.
//! Like drop-tail, each discipline keeps the packet in service counted (in
//! its limit and in `len`/`bytes`) until [`finish`](Codel::finish).
//!
//! Not modelled: ECN marking and `ce_threshold` (packets carry no ECN bits),
//! and flow hashing (see [`FqCodel`]).
//!
//! Files: `buffer` (the queued-packet record and the limit, which every
//! discipline uses), `droptail`, `codel` and `fq_codel`, re-exported here;
//! [`QueueDiscipline`] and the [`Queue`] that dispatches to them are here.

mod buffer;
mod codel;
mod droptail;
#[cfg(test)]
pub(crate) mod fixtures;
mod fq_codel;

use std::collections::VecDeque;
use std::fmt;

use crate::endpoint::Envelope;
use rtcc_core::units::{DataRate, DataSize, Time};

pub use self::buffer::{Item, QueueLimit, Queued, MIN_QUEUE_BYTES};
pub use self::codel::{
    control_law, Codel, CodelParams, CodelState, CODEL_INTERVAL, CODEL_LIMIT, CODEL_MTU, CODEL_TARGET,
};
pub use self::droptail::DropTail;
pub use self::fq_codel::{
    FqCodel, FqCodelConfig, FQ_CODEL_DROP_BATCH, FQ_CODEL_LIMIT, FQ_CODEL_MEMORY_LIMIT, FQ_CODEL_QUANTUM,
};

/// Which discipline the bottleneck buffer runs, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDiscipline {
    /// FIFO, arrivals over the limit dropped.
    DropTail(QueueLimit),
    /// CoDel (RFC 8289) on one FIFO; `limit` tail-drops as a backstop.
    Codel { params: CodelParams, limit: QueueLimit },
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodelConfig),
}

impl Default for QueueDiscipline {
    fn default() -> Self {
        QueueDiscipline::DropTail(QueueLimit::Unlimited)
    }
}

impl From<QueueLimit> for QueueDiscipline {
    fn from(limit: QueueLimit) -> Self {
        QueueDiscipline::DropTail(limit)
    }
}

impl From<FqCodelConfig> for QueueDiscipline {
    fn from(c: FqCodelConfig) -> Self {
        QueueDiscipline::FqCodel(c)
    }
}

impl QueueDiscipline {
    /// CoDel with the RFC 8289 constants and the Linux limit (1000 packets).
    pub fn codel() -> Self {
        QueueDiscipline::Codel { params: CodelParams::default(), limit: QueueLimit::Packets(CODEL_LIMIT) }
    }

    /// FQ-CoDel with the RFC 8290 / Linux defaults.
    pub fn fq_codel() -> Self {
        QueueDiscipline::FqCodel(FqCodelConfig::default())
    }

    /// The limit on what the buffer holds (FQ-CoDel: its packet limit).
    pub fn limit(&self) -> QueueLimit {
        match *self {
            QueueDiscipline::DropTail(l) | QueueDiscipline::Codel { limit: l, .. } => l,
            QueueDiscipline::FqCodel(c) => QueueLimit::Packets(c.limit),
        }
    }
}

impl fmt::Display for QueueDiscipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueDiscipline::DropTail(l) => write!(f, "{l}"),
            QueueDiscipline::Codel { params: p, limit } => {
                write!(f, "codel(target={}, interval={}, mtu={}, limit={limit})", p.target, p.interval, p.mtu)
            }
            QueueDiscipline::FqCodel(c) => write!(
                f,
                "fq_codel(target={}, interval={}, mtu={}, quantum={}, limit={}pkt, memory_limit={}, drop_batch={})",
                c.codel.target, c.codel.interval, c.codel.mtu, c.quantum, c.limit, c.memory_limit, c.drop_batch
            ),
        }
    }
}

/// The bottleneck buffer under its discipline. The link asks for the next
/// packet with [`start`](Queue::start) when it can transmit (this is where
/// an AQM drops) and removes it with [`finish`](Queue::finish) when it has
/// left; until then the packet counts in `len`, `bytes` and the limit.
#[derive(Clone, Debug)]
pub enum Queue<T: Item = Envelope> {
    DropTail(DropTail<T>),
    Codel(Codel<T>),
    FqCodel(FqCodel<T>),
}

impl<T: Item> Queue<T> {
    pub fn new(discipline: QueueDiscipline) -> Self {
        match discipline {
            QueueDiscipline::DropTail(l) => Queue::DropTail(DropTail::new(l)),
            QueueDiscipline::Codel { params, limit } => Queue::Codel(Codel::new(params, limit)),
            QueueDiscipline::FqCodel(c) => Queue::FqCodel(FqCodel::new(c)),
        }
    }

    pub fn discipline(&self) -> QueueDiscipline {
        match self {
            Queue::DropTail(q) => QueueDiscipline::DropTail(q.limit()),
            Queue::Codel(q) => QueueDiscipline::Codel { params: q.params(), limit: q.limit() },
            Queue::FqCodel(q) => QueueDiscipline::FqCodel(q.config()),
        }
    }

    /// Offers a packet; `false` if the arriving packet is dropped. FQ-CoDel
    /// may instead drop queued packets of the fattest flow; those go to
    /// `drops`. `rate` is asked for only by a time limit.
    pub fn enqueue(
        &mut self,
        now: Time,
        packet: T,
        rate: impl FnOnce() -> DataRate,
        drops: &mut VecDeque<Queued<T>>,
    ) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, packet, rate),
            Queue::Codel(q) => q.enqueue(now, packet, rate),
            Queue::FqCodel(q) => q.enqueue(now, packet, drops),
        }
    }

    /// The packet whose service starts at `now`, with its enqueue time;
    /// packets an AQM drops on the way go to `drops`.
    pub fn start(&mut self, now: Time, drops: &mut VecDeque<Queued<T>>) -> Option<&Queued<T>> {
        match self {
            Queue::DropTail(q) => q.front(),
            Queue::Codel(q) => q.start(now, drops),
            Queue::FqCodel(q) => q.start(now, drops),
        }
    }

    /// Removes the packet in service.
    pub fn finish(&mut self) -> Option<Queued<T>> {
        match self {
            Queue::DropTail(q) => q.pop_front(),
            Queue::Codel(q) => q.finish(),
            Queue::FqCodel(q) => q.finish(),
        }
    }

    /// Packets buffered, the one in service included.
    pub fn len(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len(),
            Queue::Codel(q) => q.len(),
            Queue::FqCodel(q) => q.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes buffered, the packet in service included.
    pub fn bytes(&self) -> DataSize {
        match self {
            Queue::DropTail(q) => q.bytes(),
            Queue::Codel(q) => q.bytes(),
            Queue::FqCodel(q) => q.bytes(),
        }
    }
}
