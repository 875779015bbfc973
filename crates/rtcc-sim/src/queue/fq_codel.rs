//! FQ-CoDel (RFC 8290): CoDel on one queue per flow, served by deficit round robin with new/old flow lists.

use std::collections::VecDeque;

use crate::endpoint::Envelope;
use rtcc_core::units::{DataSize, Time};

use super::buffer::{Item, Queued};
use super::codel::{CodelParams, CodelState};

/// RFC 8290 §5.2.4: 1514 bytes, the Ethernet MTU plus the 14 B hardware
/// header (the Linux default, `psched_mtu()`).
pub const FQ_CODEL_QUANTUM: DataSize = DataSize::from_bytes(1514);
/// RFC 8290 §5.2.3: the Linux default packet limit, 10240 packets.
pub const FQ_CODEL_LIMIT: usize = 10_240;
/// RFC 8290 §4.1 drops a batch from the fattest flow when over the limit;
/// Linux `drop_batch_size` defaults to 64 packets.
pub const FQ_CODEL_DROP_BATCH: usize = 64;
/// Linux `sch_fq_codel` `memory_limit` default, 32 MiB (`32 << 20`; there
/// counted in skb truesize, here in packet bytes).
pub const FQ_CODEL_MEMORY_LIMIT: DataSize = DataSize::from_bytes(32 << 20);

/// FQ-CoDel parameters (RFC 8290 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCodelConfig {
    /// CoDel on each flow queue (RFC 8290 §5.2.1–5.2.2: same defaults).
    pub codel: CodelParams,
    /// Bytes of deficit a flow gets per round (RFC 8290 §5.2.4).
    pub quantum: DataSize,
    /// Packets over all flows, the one in service included (§5.2.3).
    pub limit: usize,
    /// Bytes over all flows (Linux `memory_limit`).
    pub memory_limit: DataSize,
    /// At most this many packets dropped per overflow (§4.1, Linux
    /// `drop_batch_size`).
    pub drop_batch: usize,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            codel: CodelParams::default(),
            quantum: FQ_CODEL_QUANTUM,
            limit: FQ_CODEL_LIMIT,
            memory_limit: FQ_CODEL_MEMORY_LIMIT,
            drop_batch: FQ_CODEL_DROP_BATCH,
        }
    }
}

/// One flow's queue with its DRR deficit and CoDel state.
#[derive(Clone, Debug)]
struct FlowQueue<T: Item> {
    fifo: VecDeque<Queued<T>>,
    bytes: DataSize,
    deficit: i64,
    codel: CodelState,
    /// On the new or the old list.
    listed: bool,
}

impl<T: Item> FlowQueue<T> {
    fn new() -> Self {
        FlowQueue {
            fifo: VecDeque::with_capacity(64),
            bytes: DataSize::ZERO,
            deficit: 0,
            codel: CodelState::default(),
            listed: false,
        }
    }
}

/// FQ-CoDel (RFC 8290). Flows are the exact `Packet::flow` ids, one queue
/// each, rather than a hash of the 5-tuple into 1024 buckets (§5.2.5):
/// scenario flow ids are small and dense, so there are no collisions to
/// model. A flow's queue is created the first time it sends and kept, so
/// the steady state does not allocate.
#[derive(Clone, Debug)]
pub struct FqCodel<T: Item = Envelope> {
    config: FqCodelConfig,
    flows: Vec<FlowQueue<T>>,
    new_flows: VecDeque<u16>,
    old_flows: VecDeque<u16>,
    /// Packets and bytes waiting in flow queues (the one in service excluded).
    packets: usize,
    bytes: DataSize,
    serving: Option<Queued<T>>,
}

impl<T: Item> FqCodel<T> {
    pub fn new(config: FqCodelConfig) -> Self {
        FqCodel {
            config,
            flows: Vec::with_capacity(16),
            new_flows: VecDeque::with_capacity(16),
            old_flows: VecDeque::with_capacity(16),
            packets: 0,
            bytes: DataSize::ZERO,
            serving: None,
        }
    }

    pub fn config(&self) -> FqCodelConfig {
        self.config
    }

    /// RFC 8290 §4.1: append to the flow's queue; a flow not on either list
    /// joins the tail of the new list with a full quantum. Over the limit,
    /// drop from the head of the flow with the most bytes until half its
    /// bytes or `drop_batch` packets are gone (Linux `fq_codel_drop`). Those
    /// drops go to `drops`, except the arriving packet itself: then this
    /// returns `false`, as for a tail drop.
    pub fn enqueue(&mut self, now: Time, packet: T, drops: &mut VecDeque<Queued<T>>) -> bool {
        let i = usize::from(packet.flow());
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, FlowQueue::new);
        }
        let f = &mut self.flows[i];
        let (size, flow) = (packet.size(), packet.flow());
        f.fifo.push_back((packet, now));
        f.bytes += size;
        if !f.listed {
            f.listed = true;
            f.deficit = self.config.quantum.bytes() as i64;
            self.new_flows.push_back(flow);
        }
        self.packets += 1;
        self.bytes += size;
        // Whatever limit is configured, at most what an unlimited drop-tail
        // buffer holds, so memory stays bounded.
        let limit = self.config.limit.min(super::buffer::UNLIMITED_PACKETS);
        if self.len() <= limit && self.bytes() <= self.config.memory_limit {
            return true;
        }
        let fat = self.fattest();
        let f = &mut self.flows[fat];
        let threshold = f.bytes.bytes() / 2;
        let (mut n, mut len) = (0, 0);
        while let Some(item) = f.fifo.pop_front() {
            f.bytes -= item.0.size();
            self.packets -= 1;
            self.bytes -= item.0.size();
            len += item.0.size().bytes();
            drops.push_back(item);
            n += 1;
            if n >= self.config.drop_batch || len >= threshold {
                break;
            }
        }
        // The arriving packet was at the tail of its flow: it went only if
        // that flow was the fattest and is now empty.
        if fat == i && f.fifo.is_empty() {
            drops.pop_back();
            return false;
        }
        true
    }

    /// The flow with the most bytes queued (lowest id on a tie, as Linux's
    /// scan); falls back to packets for zero-size packets.
    fn fattest(&self) -> usize {
        let key = |f: &FlowQueue<T>| (f.bytes, f.fifo.len());
        let mut best = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if key(f) > key(&self.flows[best]) {
                best = i;
            }
        }
        best
    }

    /// RFC 8290 §4.2: picks the packet that starts service at `now`. The
    /// head of the new list, else of the old list, is served if it has
    /// deficit left; otherwise it gets another quantum and goes to the tail
    /// of the old list. CoDel runs on the chosen flow; if that leaves it
    /// empty, a flow from the new list moves to the tail of the old list (so
    /// a flow cannot keep its priority by sending one packet at a time) and
    /// one from the old list is removed. (Linux removes the new flow at once
    /// when the old list is empty; the outcome differs only if another new
    /// flow is served before the flow sends again.)
    pub fn start(&mut self, now: Time, drops: &mut VecDeque<Queued<T>>) -> Option<&Queued<T>> {
        if self.serving.is_some() {
            return self.serving.as_ref();
        }
        let FqCodel { config, flows, new_flows, old_flows, packets, bytes, .. } = self;
        // At least a byte, so that every round brings some flow closer to
        // sending (the config refuses 0).
        let quantum = config.quantum.bytes().max(1) as i64;
        loop {
            let (from_new, id) = match (new_flows.front(), old_flows.front()) {
                (Some(&id), _) => (true, id),
                (None, Some(&id)) => (false, id),
                (None, None) => return None,
            };
            let f = &mut flows[usize::from(id)];
            if f.deficit <= 0 {
                f.deficit += quantum;
                if from_new {
                    new_flows.pop_front();
                } else {
                    old_flows.pop_front();
                }
                old_flows.push_back(id);
                continue;
            }
            let pop = || {
                let item = f.fifo.pop_front()?;
                f.bytes -= item.0.size();
                *packets -= 1;
                *bytes -= item.0.size();
                // The non-starvation check sees the whole backlog, as in
                // Linux (`codel_dequeue` gets the qdisc backlog): the link
                // idles only when every flow is drained.
                Some((item, *bytes))
            };
            if let Some(item) = f.codel.dequeue(now, &config.codel, pop, |d| drops.push_back(d)) {
                f.deficit -= item.0.size().bytes() as i64;
                return Some(self.serving.insert(item));
            }
            if from_new {
                new_flows.pop_front();
                old_flows.push_back(id);
            } else {
                old_flows.pop_front();
                f.listed = false;
            }
        }
    }

    /// Removes the packet in service (it has left the link).
    pub fn finish(&mut self) -> Option<Queued<T>> {
        self.serving.take()
    }

    /// Packets buffered, the one in service included.
    pub fn len(&self) -> usize {
        self.packets + usize::from(self.serving.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes buffered, the packet in service included.
    pub fn bytes(&self) -> DataSize {
        self.bytes + self.serving.as_ref().map_or(DataSize::ZERO, |s| s.0.size())
    }

    /// Packets and bytes waiting in `flow`'s queue.
    pub fn flow_backlog(&self, flow: u16) -> (usize, DataSize) {
        self.flows.get(usize::from(flow)).map_or((0, DataSize::ZERO), |f| (f.fifo.len(), f.bytes))
    }
}

#[cfg(test)]
mod tests {
    use rtcc_core::units::Duration;

    use super::*;
    use crate::queue::fixtures::pkt;

    /// FQ-CoDel with CoDel out of the way.
    fn fq(limit: usize, drop_batch: usize) -> FqCodel {
        let codel = CodelParams { target: Duration::from_secs(100), ..CodelParams::default() };
        FqCodel::new(FqCodelConfig { codel, limit, drop_batch, ..FqCodelConfig::default() })
    }

    /// Enqueues at time zero, per (flow, packets, bytes each), that many
    /// packets of the flow, and checks each is accepted.
    fn fill(q: &mut FqCodel, drops: &mut VecDeque<Queued>, flows: &[(u16, u64, u64)]) {
        for &(flow, n, size) in flows {
            for i in 0..n {
                assert!(q.enqueue(Time::ZERO, pkt(flow, i, size), drops));
            }
        }
    }

    #[test]
    fn drr_serves_a_quantum_per_round_and_new_flows_first() {
        let mut q = fq(100, 64);
        let mut drops = VecDeque::new();
        fill(&mut q, &mut drops, &[(0, 4, 1000), (1, 8, 400)]);
        let mut order = vec![];
        while let Some((p, _)) = q.start(Time::ZERO, &mut drops) {
            order.push((p.flow, p.seq));
            q.finish();
            if order.len() == 5 {
                // A flow that arrives now is new: served ahead of the old
                // flows, after the new flow with deficit left.
                q.enqueue(Time::ZERO, pkt(2, 0, 100), &mut drops);
            }
        }
        // Quantum 1514 B: flow 0 sends 2 × 1000 B (deficit 1514 → 514 →
        // −486), flow 1 4 × 400 B (1514 → … → −86), flow 2 joins the new
        // list behind flow 1; then the old list: flow 0 (+1514 → 1028)
        // sends 2, flow 1 (1428) its last 4.
        #[rustfmt::skip]
        let expect = vec![(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (0, 2), (0, 3),
                          (1, 4), (1, 5), (1, 6), (1, 7)];
        assert_eq!(order, expect);
        assert!(drops.is_empty() && q.is_empty() && q.bytes() == DataSize::ZERO);
    }

    #[test]
    fn over_the_limit_drops_half_the_fattest_flow_from_its_head() {
        let mut q = fq(10, 64);
        let mut drops = VecDeque::new();
        fill(&mut q, &mut drops, &[(0, 8, 1000), (1, 3, 100)]);
        // 11 > 10: flow 0 (8000 B) loses its head until 4000 B are gone.
        let seqs: Vec<(u16, u64)> = drops.iter().map(|d| (d.0.flow, d.0.seq)).collect();
        assert_eq!(seqs, vec![(0, 0), (0, 1), (0, 2), (0, 3)]);
        assert_eq!(
            (q.len(), q.flow_backlog(0), q.flow_backlog(1)),
            (7, (4, DataSize::from_bytes(4000)), (3, DataSize::from_bytes(300)))
        );
        // drop_batch caps the batch.
        let mut q = fq(3, 1);
        drops.clear();
        fill(&mut q, &mut drops, &[(0, 4, 1000)]);
        assert_eq!(drops.iter().map(|d| d.0.seq).collect::<Vec<_>>(), vec![0]);
        // The arriving packet is the one dropped when its flow is the
        // fattest and holds only it: refused, not reported as a drop.
        let mut q = fq(2, 64);
        drops.clear();
        assert!(q.enqueue(Time::ZERO, pkt(0, 0, 100), &mut drops));
        assert!(q.start(Time::ZERO, &mut drops).is_some()); // in service, still counted
        assert!(q.enqueue(Time::ZERO, pkt(0, 1, 100), &mut drops));
        assert!(!q.enqueue(Time::ZERO, pkt(1, 0, 1500), &mut drops));
        assert!(drops.is_empty());
        assert_eq!((q.len(), q.bytes()), (2, DataSize::from_bytes(200)));
    }
}
