//! A bottleneck over datagram bytes, sans-IO: what a scenario's `[link]`
//! does to packets in the simulator, done to real datagrams.
//!
//! The parts are the simulator's own: the forward [`Link`] (queue
//! discipline, capacity model or Mahimahi trace, random loss after the
//! queue), the optional reverse bottleneck (`reverse_capacity`), and the
//! two [`Path`]s (propagation delay, access delay, jitter forward; delay
//! and `reverse_loss` back), built by the same scenario code with the same
//! random streams. Drive it as any rtcc object: `handle_datagram`, then
//! `poll_output` until `None`, then sleep until `poll_timeout`.
//!
//! A datagram's size on the bottleneck is its UDP payload plus
//! `header_overhead` (IPv4 + UDP, 28 bytes, by default): the IP packet a
//! kernel link or Mahimahi's would carry.

use rtcc_core::rng::Rng;
use rtcc_core::units::{DataSize, Duration, Time};
use rtcc_record::CapacityTruth;
use rtcc_sim::link::Link;
use rtcc_sim::path::Path;
use rtcc_sim::queue::Item;
use rtcc_sim::{Scenario, ScenarioError};

/// IPv4 (RFC 791, 20 bytes without options) + UDP (RFC 768, 8 bytes).
pub const IPV4_UDP_OVERHEAD: DataSize = DataSize::from_bytes(28);

/// Bytes the emulator holds at most, queued and in flight, by default: a
/// sender far above an unlimited queue's capacity is dropped (and counted)
/// beyond this instead of filling memory.
pub const DEFAULT_MAX_HELD: DataSize = DataSize::from_bytes(64 << 20);

/// Which way a datagram goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the sending side to the receiving side, through the bottleneck.
    Forward,
    /// Back, through the reverse bottleneck if the link has one.
    Reverse,
}

impl Direction {
    fn index(self) -> usize {
        self as usize
    }

    /// The other way.
    pub fn back(self) -> Direction {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }
}

/// A datagram inside the emulator: its bytes, the peer (a pair of ends)
/// it belongs to, and its size on the bottleneck.
#[derive(Clone, Debug)]
pub struct Datagram {
    pub peer: u16,
    /// The caller's own key for it (a send-log entry), handed back with
    /// its fate and its delivery.
    pub tag: u64,
    pub bytes: Vec<u8>,
    size: DataSize,
    /// Sent back by a receiving end (a report, an ACK), not data.
    back: bool,
}

impl Item for Datagram {
    fn size(&self) -> DataSize {
        self.size
    }
    /// FQ-CoDel's flow queue: one per pair of ends (the 5-tuple's hash).
    fn flow(&self) -> u16 {
        self.peer
    }
}

/// One direction's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DirStats {
    /// Datagrams and bytes (UDP payload) handed in.
    pub received: u64,
    pub received_bytes: u64,
    /// Delivered to the other side.
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Dropped by the queue (tail drop or AQM).
    pub queue_drops: u64,
    /// Lost at random (after the bottleneck, or on the way back).
    pub lost: u64,
    /// Dropped because the emulator held `max_held` bytes already.
    pub over_memory: u64,
}

/// What happened to a datagram inside, for a caller that records it
/// (`Emulator::keep_events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fate {
    pub dir: Direction,
    pub peer: u16,
    pub tag: u64,
    pub what: FateKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FateKind {
    /// Dropped by the queue (on arrival, or inside it by the AQM).
    Dropped,
    /// Left the bottleneck after `queued` waiting (`sojourn`: arrival to
    /// its last byte's departure); `lost`: at random after it.
    Departed { queued: Duration, sojourn: Duration, lost: bool },
    /// Lost on the way back (`reverse_loss`), drawn when sent.
    LostOnPath,
    /// Refused: the emulator held `max_held` bytes already.
    OverMemory,
}

/// A datagram due at one side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub dir: Direction,
    pub peer: u16,
    pub tag: u64,
    pub bytes: Vec<u8>,
    /// When the path delivers it: a driver that hands it over later is late
    /// by the difference.
    pub due: Time,
}

/// The emulated path between the two sides.
pub struct Emulator {
    /// Forward bottleneck, and the reverse one if the link has one.
    links: [Option<Link<Datagram>>; 2],
    /// Forward path (delay, jitter) and reverse (delay, loss).
    paths: [Path<Datagram>; 2],
    peers: usize,
    pub header_overhead: DataSize,
    pub max_held: DataSize,
    held: DataSize,
    stats: [DirStats; 2],
    /// Keep each datagram's fate for `poll_fate`.
    pub keep_events: bool,
    fates: std::collections::VecDeque<Fate>,
}

impl Emulator {
    /// The `[link]` of `scenario` for up to `peers` pairs of ends, its random
    /// streams forked from `seed` (the scenario's seed if none) as the
    /// simulator forks them: the same seed loses the same packets.
    pub fn from_scenario(scenario: &Scenario, seed: Option<u64>, peers: usize) -> Result<Emulator, ScenarioError> {
        let mut link_rng = Rng::new(seed.unwrap_or(scenario.seed)).fork(0xC0FFEE);
        Self::from_scenario_rng(scenario, &mut link_rng, peers, false)
    }

    /// As `from_scenario`, drawing from `link_rng`: the simulator's link
    /// stream (the run's stream forked with 0xC0FFEE). With `flows`, peer
    /// `i` is the scenario's flow `i` and takes its `access_delay` each way,
    /// as in the simulator; without, no peer has one.
    pub fn from_scenario_rng(
        scenario: &Scenario,
        link_rng: &mut Rng,
        peers: usize,
        flows: bool,
    ) -> Result<Emulator, ScenarioError> {
        let (link, paths) = scenario.build_link::<Datagram>(link_rng)?;
        let rev_link = scenario.build_reverse_link::<Datagram>()?;
        let (mut fwd, mut rev) = paths.build(link_rng);
        for i in 0..peers {
            let access = match (flows, scenario.flows.get(i)) {
                (true, Some(f)) => f.access_delay,
                _ => Duration::ZERO,
            };
            fwd.add_flow(access, true);
            rev.add_flow(access, true);
        }
        Ok(Emulator {
            links: [Some(link), rev_link],
            paths: [fwd, rev],
            peers,
            header_overhead: IPV4_UDP_OVERHEAD,
            max_held: DEFAULT_MAX_HELD,
            held: DataSize::ZERO,
            stats: [DirStats::default(); 2],
            keep_events: false,
            fates: std::collections::VecDeque::new(),
        })
    }

    /// How many pairs of ends it carries (peers `0..peers`).
    pub fn peers(&self) -> usize {
        self.peers
    }

    pub fn stats(&self, dir: Direction) -> DirStats {
        self.stats[dir.index()]
    }

    /// The forward bottleneck's capacity model, as the recorder's truth.
    pub fn capacity_truth(&self) -> Option<Box<dyn CapacityTruth>> {
        self.links[0].as_ref().map(|l| Box::new(l.capacity().clone()) as Box<dyn CapacityTruth>)
    }

    /// The reverse bottleneck's, if the link has one.
    pub fn reverse_capacity_truth(&self) -> Option<Box<dyn CapacityTruth>> {
        self.links[1].as_ref().map(|l| Box::new(l.capacity().clone()) as Box<dyn CapacityTruth>)
    }

    pub fn has_reverse_bottleneck(&self) -> bool {
        self.links[1].is_some()
    }

    /// Bytes queued at the forward bottleneck now.
    pub fn queue_bytes(&self) -> DataSize {
        self.links[0].as_ref().map_or(DataSize::ZERO, |l| l.queue_bytes())
    }

    /// A datagram of peer `peer` arrived at `now` going `dir`: data going
    /// forward, something sent back going the other way (as a relay sees
    /// them). A peer out of range is the caller's error and panics;
    /// everything about the bytes is accepted.
    pub fn handle_datagram(&mut self, now: Time, dir: Direction, peer: u16, tag: u64, bytes: Vec<u8>) {
        self.handle(now, dir, dir == Direction::Reverse, peer, tag, bytes);
    }

    /// As `handle_datagram`, saying whether it is something sent back
    /// (`back`: a report or an ACK) or data, which decides where the
    /// reverse path's loss is drawn, as the simulator draws it: for what is
    /// sent back, when sent (before any reverse bottleneck); for data going
    /// the reverse way (a reverse flow's), when it leaves the reverse
    /// bottleneck (`Simulation::serve_bottleneck`).
    pub fn handle(&mut self, now: Time, dir: Direction, back: bool, peer: u16, tag: u64, bytes: Vec<u8>) {
        assert!((peer as usize) < self.peers, "peer {peer} of {}", self.peers);
        // Departures first, so the queue is as it is at `now` (Link's contract).
        self.advance(now);
        let d = dir.index();
        let size = DataSize::from_bytes(bytes.len() as u64) + self.header_overhead;
        let s = &mut self.stats[d];
        s.received += 1;
        s.received_bytes += bytes.len() as u64;
        let keep = self.keep_events;
        let fate = |what| Fate { dir, peer, tag, what };
        if self.held + size > self.max_held {
            s.over_memory += 1;
            if keep {
                self.fates.push_back(fate(FateKind::OverMemory));
            }
            return;
        }
        // What is sent back meets the reverse path's loss when it is sent,
        // before any reverse bottleneck, as in the simulator
        // (`Simulation::serve_receiver`): the same seed loses the same reports.
        if back && d == 1 && self.paths[1].lose(now) {
            s.lost += 1;
            if keep {
                self.fates.push_back(fate(FateKind::LostOnPath));
            }
            return;
        }
        let dg = Datagram { peer, tag, bytes, size, back };
        match &mut self.links[d] {
            Some(link) => {
                if link.enqueue(now, dg) {
                    self.held = self.held + size;
                } else {
                    s.queue_drops += 1;
                    if keep {
                        self.fates.push_back(fate(FateKind::Dropped));
                    }
                }
                while let Some((dropped, _)) = link.poll_drop() {
                    self.held = self.held - dropped.size;
                    s.queue_drops += 1;
                    if keep {
                        self.fates.push_back(Fate { tag: dropped.tag, ..fate(FateKind::Dropped) });
                    }
                }
            }
            // No bottleneck this way: the path alone (its loss drawn above).
            None => {
                self.held = self.held + size;
                self.paths[d].send(now, peer as usize, dg);
            }
        }
    }

    /// Moves what left the bottlenecks by `now` onto their paths.
    fn advance(&mut self, now: Time) {
        for (d, dir) in [(0, Direction::Forward), (1, Direction::Reverse)] {
            let Some(link) = &mut self.links[d] else { continue };
            let s = &mut self.stats[d];
            loop {
                while let Some(dep) = link.poll_departure(now) {
                    let path = &mut self.paths[d];
                    // Loss after the queue: the link's own, and the reverse
                    // path's for data (drawn when sent for what goes back).
                    let lost = dep.lost || (d == 1 && !dep.packet.back && path.lose(dep.departed));
                    if self.keep_events {
                        let (queued, sojourn) = (dep.service_start - dep.enqueued, dep.departed - dep.enqueued);
                        let what = FateKind::Departed { queued, sojourn, lost };
                        self.fates.push_back(Fate { dir, peer: dep.packet.peer, tag: dep.packet.tag, what });
                    }
                    if lost {
                        s.lost += 1;
                        self.held = self.held - dep.packet.size;
                        // A data path's jitter stream does not depend on
                        // which packets are lost (`Path::discard`).
                        if !dep.packet.back {
                            path.discard();
                        }
                    } else {
                        let peer = dep.packet.peer as usize;
                        path.send(dep.departed, peer, dep.packet);
                    }
                }
                let mut dropped = false;
                while let Some((p, _)) = link.poll_drop() {
                    self.held = self.held - p.size;
                    s.queue_drops += 1;
                    dropped = true;
                    if self.keep_events {
                        self.fates.push_back(Fate { dir, peer: p.peer, tag: p.tag, what: FateKind::Dropped });
                    }
                }
                if !dropped {
                    break;
                }
            }
        }
    }

    /// The next datagram due at the other side by `now`: its direction,
    /// peer and bytes.
    pub fn poll_output(&mut self, now: Time) -> Option<Output> {
        self.advance(now);
        for (d, dir) in [(0, Direction::Forward), (1, Direction::Reverse)] {
            for peer in 0..self.peers {
                if let Some((due, dg)) = self.paths[d].poll_arrival(peer, now) {
                    self.held = self.held - dg.size;
                    let s = &mut self.stats[d];
                    s.delivered += 1;
                    s.delivered_bytes += dg.bytes.len() as u64;
                    return Some(Output { dir, peer: dg.peer, tag: dg.tag, bytes: dg.bytes, due });
                }
            }
        }
        None
    }

    /// The next datagram's fate, in the order they happened (with
    /// `keep_events`); poll after `handle_datagram` and `poll_output`.
    pub fn poll_fate(&mut self) -> Option<Fate> {
        self.fates.pop_front()
    }

    /// When it next has something to do: a departure from a bottleneck or
    /// an arrival at a side.
    pub fn poll_timeout(&self) -> Option<Time> {
        let links = self.links.iter().flatten().filter_map(|l| l.poll_timeout());
        let paths = (0..2).flat_map(|d| (0..self.peers).filter_map(move |p| self.paths[d].poll_timeout(p)));
        links.chain(paths).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emulator(link: &str) -> Emulator {
        let text = format!("name = \"t\"\nduration = \"10s\"\n[link]\n{link}\n[[flow]]\ncontroller = \"fixed\"\n");
        let sc = Scenario::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
        Emulator::from_scenario(&sc, Some(1), 2).unwrap()
    }

    /// Drains everything due by `until`, stepping to each deadline.
    fn drain(e: &mut Emulator, until: Time) -> Vec<(Time, Direction, u16, usize)> {
        let mut out = Vec::new();
        let mut now = Time::ZERO;
        loop {
            while let Some(o) = e.poll_output(now) {
                assert_eq!(o.due, now);
                out.push((now, o.dir, o.peer, o.bytes.len()));
            }
            match e.poll_timeout() {
                Some(t) if t <= until => now = t.max(now),
                _ => return out,
            }
        }
    }

    /// 1,000 bytes + 28 of header on 1 Mbps take 8.224 ms to serialise,
    /// then 20 ms of propagation: the simulator's link, on bytes.
    #[test]
    fn a_datagram_is_serialised_then_delayed() {
        let mut e = emulator("capacity = \"1Mbps\"\ndelay = \"20ms\"");
        e.handle_datagram(Time::ZERO, Direction::Forward, 1, 0, vec![7; 1000]);
        e.handle_datagram(Time::ZERO, Direction::Forward, 0, 1, vec![8; 1000]);
        let out = drain(&mut e, Time::from_millis(1_000));
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], (Time::from_micros(28_224), Direction::Forward, 1, 1000));
        assert_eq!(out[1], (Time::from_micros(36_448), Direction::Forward, 0, 1000));
        assert_eq!(e.stats(Direction::Forward).delivered_bytes, 2000);
    }

    /// A drop-tail queue of 5 packets takes 5 of a burst of 8 and the one
    /// in service; the rest are counted as queue drops. Without a reverse
    /// bottleneck, what goes back has only the reverse delay.
    #[test]
    fn a_full_queue_drops_and_the_way_back_is_the_path_alone() {
        let mut e = emulator("capacity = \"1Mbps\"\ndelay = \"10ms\"\nqueue = \"5pkt\"");
        e.keep_events = true;
        for k in 0..8 {
            e.handle_datagram(Time::ZERO, Direction::Forward, 0, k, vec![0; 1000]);
        }
        e.handle_datagram(Time::ZERO, Direction::Reverse, 0, 99, vec![1; 100]);
        let out = drain(&mut e, Time::from_millis(1_000));
        let fwd = out.iter().filter(|o| o.1 == Direction::Forward).count() as u64;
        let s = e.stats(Direction::Forward);
        assert_eq!(fwd + s.queue_drops, 8);
        assert_eq!(s.queue_drops, 3, "{s:?}");
        let back: Vec<_> = out.iter().filter(|o| o.1 == Direction::Reverse).collect();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, Time::from_millis(10));
        assert_eq!(e.held, DataSize::ZERO);
        // Each datagram's fate, by its tag: the 5 the queue holds (the one
        // in service counts) left, the other three were dropped on arrival.
        let fates: Vec<Fate> = std::iter::from_fn(|| e.poll_fate()).collect();
        let dropped: Vec<u64> = fates.iter().filter(|f| f.what == FateKind::Dropped).map(|f| f.tag).collect();
        assert_eq!(dropped, [5, 6, 7]);
        let left: Vec<u64> =
            fates.iter().filter(|f| matches!(f.what, FateKind::Departed { .. })).map(|f| f.tag).collect();
        assert_eq!(left, [0, 1, 2, 3, 4]);
        let FateKind::Departed { queued, .. } = fates.iter().find(|f| f.tag == 4).unwrap().what else { panic!() };
        assert_eq!(queued, Duration::from_micros(4 * 8_224));
    }

    /// `reverse_loss` is drawn where the simulator draws it. What goes back
    /// meets it when sent, before the reverse bottleneck: with every report
    /// lost, none reaches the reverse queue, so none is dropped there. Data
    /// going the reverse way (a reverse flow's) meets it as it leaves the
    /// reverse bottleneck: it takes its place in the queue first.
    #[test]
    fn reverse_loss_comes_before_the_reverse_bottleneck_for_what_goes_back() {
        let mut e = emulator(
            "capacity = \"1Mbps\"\ndelay = \"10ms\"\nreverse_capacity = \"100kbps\"\n\
             reverse_queue = \"2pkt\"\nreverse_loss = 1.0",
        );
        e.keep_events = true;
        for k in 0..10 {
            e.handle_datagram(Time::ZERO, Direction::Reverse, 0, k, vec![0; 100]);
        }
        let s = e.stats(Direction::Reverse);
        assert_eq!((s.lost, s.queue_drops), (10, 0));
        let fates: Vec<Fate> = std::iter::from_fn(|| e.poll_fate()).collect();
        assert!(fates.len() == 10 && fates.iter().all(|f| f.what == FateKind::LostOnPath));
        assert!(drain(&mut e, Time::from_millis(5_000)).is_empty());
        // Data: two queued (the other two dropped at the full queue), lost
        // only as they leave.
        for k in 10..14 {
            e.handle(Time::from_millis(5_000), Direction::Reverse, false, 0, k, vec![0; 100]);
        }
        let s = e.stats(Direction::Reverse);
        assert_eq!((s.lost, s.queue_drops), (10, 2));
        assert!(drain(&mut e, Time::from_millis(10_000)).is_empty());
        let s = e.stats(Direction::Reverse);
        assert_eq!((s.lost, s.delivered), (12, 0));
    }

    /// Bytes held are bounded: beyond `max_held` a datagram is dropped and
    /// counted, never queued.
    #[test]
    fn what_it_holds_is_bounded() {
        let mut e = emulator("capacity = \"1Mbps\"\ndelay = \"10ms\"\nqueue = \"unlimited\"");
        e.max_held = DataSize::from_bytes(10_280);
        for k in 0..20 {
            e.handle_datagram(Time::ZERO, Direction::Forward, 0, k, vec![0; 1000]);
        }
        let s = e.stats(Direction::Forward);
        assert_eq!(s.over_memory, 10);
        assert_eq!(drain(&mut e, Time::from_millis(5_000)).len(), 10);
    }
}
