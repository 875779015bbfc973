//! A scenario run live: each video flow's sending and receiving ends on
//! UDP sockets of their own, in real time, through the emulated bottleneck
//! on two sockets of its own. Every packet and report crosses the kernel as
//! the RTP or RTCP datagram the wire carries; the ends are the simulator's
//! (built by `rtcc_sim::sim::build_flows`, so the same seed gives the same
//! controllers, encoders and random streams), and the same recorder writes
//! the same summary and tables.
//!
//! One thread drives everything on one wall clock (`clock::WallClock`), so
//! the two ends' clocks agree and one-way delays are absolute. It keeps the
//! drain-then-sleep contract of `rtcc_sim::endpoint`: after reading every
//! socket, it serves whatever is due, hands over every output, then sleeps
//! in epoll until about a millisecond before the next deadline and spins
//! the rest. How late each end was woken is reported.
//!
//! The recorder is told what each end and the emulator saw: a packet sent
//! (the sending end), its fate at the bottleneck (the emulator, by a tag
//! the driver gives each datagram it read from a sending end's socket), its
//! arrival (when the receiving end's socket gives it up). A datagram is
//! matched to its send-log entry by its bytes, in order. One the kernel
//! dropped between two sockets is counted in `socket_drops`: before the
//! bottleneck also as a drop there (`PacketDropped`), a report as lost; a
//! data packet lost after the bottleneck stays in flight in the recorder
//! (none was, in any run measured on loopback).
//!
//! Not yet live: cross traffic (the kernel's TCP needs the TUN form of the
//! bottleneck), reverse-direction flows and real codecs (an encoder on a
//! worker thread). Scenarios with them are refused, naming the flow.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use rtcc_core::datagram::{Egress, Ingress};
use rtcc_core::feedback::{ReceiverReport, ReportFormat};
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataSize, Duration, Time};
use rtcc_sim::call::wire_codec;
use rtcc_sim::endpoint::{Back, Envelope, RecvEnd, SendEnd};
use rtcc_sim::output::{Output, RunInfo};
use rtcc_sim::recorder::{Event, Recorder};
use rtcc_sim::scenario::Direction as FlowDirection;
use rtcc_sim::sim::{build_flows, packets_over_error, rows_over_error, scenario_recorder};
use rtcc_sim::{Scenario, ScenarioError};

use crate::clock::{Lateness, WallClock};
use crate::emulator::{DirStats, Direction, Emulator, FateKind};

const SPIN: Duration = Duration::from_millis(1);
const MAX_SLEEP: Duration = Duration::from_millis(50);
const READ_BUDGET: usize = 256;
const MAX_DATAGRAM: usize = 65_507;
/// A tag's top bit marks a report (something sent back).
const BACK_TAG: u64 = 1 << 63;

/// What a live run adds to its summary.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveInfo {
    /// "live".
    pub mode: &'static str,
    /// The bottleneck: "udp-emulator" (rtcc's link on two UDP sockets).
    pub bottleneck: &'static str,
    /// Where receive times come from: "user" (stamped in user space when
    /// read).
    pub timestamps: &'static str,
    /// How late the ends and the emulator were served after their
    /// deadlines, in µs: median, 99th percentile, maximum.
    pub late_us: Option<[i64; 3]>,
    /// Datagrams the kernel lost between two sockets (a full receive
    /// buffer), each counted as lost where it was.
    pub socket_drops: u64,
    /// Datagrams an end could not parse (never a panic).
    pub undecodable: u64,
    /// Datagrams from an address no socket of the run serves.
    pub refused: u64,
    /// Datagrams from an end's own address that match nothing it sent.
    pub unmatched: u64,
    /// The host's 1-minute load average when the run ended (Linux).
    pub load_average: Option<f64>,
    /// The share of the run's wall time the live loop's thread was on a CPU
    /// (Linux: /proc/thread-self/schedstat), spinning included.
    pub loop_cpu: Option<f64>,
    /// Wall time the run took, in seconds.
    pub wall_s: f64,
    /// The emulator's counts each way, in real datagram bytes (UDP
    /// payloads: RTP headers and extensions included). Its bottleneck
    /// serialises each with `header_overhead` more (IPv4 + UDP), where the
    /// recorder's link figures count what the simulator counts (a media
    /// packet's RTP payload).
    pub forward: DirStats,
    pub reverse: DirStats,
    /// Bytes the bottleneck charged each datagram beyond its UDP payload.
    pub header_overhead_bytes: u64,
}

/// A live run's results: the same `Output` as a simulated run's, and what
/// only a live run knows.
pub struct LiveRun {
    pub output: Output,
    pub live: LiveInfo,
}

/// A failure outside the scenario (a socket that would not bind).
fn io_error(scenario: &Scenario, e: io::Error) -> ScenarioError {
    ScenarioError { source_name: scenario.source.clone(), field: "live".into(), reason: format!("socket: {e}") }
}

struct LiveFlow {
    send: Box<dyn SendEnd>,
    recv: Box<dyn RecvEnd>,
    egress: Egress,
    ingress: Ingress,
    format: ReportFormat,
    flow: u16,
    snd: UdpSocket,
    rcv: UdpSocket,
    /// The two sockets' addresses, the emulator's destinations.
    snd_addr: SocketAddr,
    rcv_addr: SocketAddr,
    /// The first packet `egress` could not encode: the run fails on it, as
    /// the simulator's `[wire] datagrams` fails the flow.
    wire_error: Option<String>,
    /// Sent, not yet read by the emulator: (hash of the bytes, envelope).
    sent: VecDeque<(u64, Envelope)>,
    /// Handed to the receiving end's socket, not yet read there.
    delivered: VecDeque<(u64, Envelope)>,
    /// Reports handed to the sending end's socket, not yet read there.
    reports: VecDeque<u64>,
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Pops `q` up to the entry whose hash is `h`: the ones before it the
/// kernel dropped. None (and `q` untouched) if no entry matches.
fn take_match<T>(q: &mut VecDeque<(u64, T)>, h: u64, mut dropped: impl FnMut(T)) -> Option<T> {
    let i = q.iter().position(|(x, _)| *x == h)?;
    for _ in 0..i {
        dropped(q.pop_front().expect("before the match").1);
    }
    q.pop_front().map(|(_, t)| t)
}

/// Runs `scenario` live for its duration (or until `stop` says so, asked
/// at least every 50 ms), on loopback.
pub fn run_live(
    scenario: Scenario,
    seed: Option<u64>,
    stop: &mut dyn FnMut() -> bool,
) -> Result<LiveRun, ScenarioError> {
    let refuse = |i: usize, field: &str, reason: &str| ScenarioError {
        source_name: scenario.source.clone(),
        field: format!("flow[{i}].{field}"),
        reason: reason.into(),
    };
    for (i, spec) in scenario.flows.iter().enumerate() {
        if spec.traffic.is_some() {
            return Err(refuse(
                i,
                "kind",
                "live runs carry video flows only: cross traffic is the kernel's TCP through a TUN bottleneck, \
                 which is not built yet",
            ));
        }
        if spec.video.is_some() {
            return Err(refuse(
                i,
                "video",
                "live runs use model encoders: a real codec in real time needs its encoder on a worker thread, \
                 which is not built yet",
            ));
        }
        if spec.direction == FlowDirection::Reverse {
            return Err(refuse(i, "direction", "live runs carry forward flows only"));
        }
    }
    let seed = seed.unwrap_or(scenario.seed);
    let mut rng = Rng::new(seed);
    let mut link_rng = rng.fork(0xC0FFEE);
    let mut emulator = Emulator::from_scenario_rng(&scenario, &mut link_rng, scenario.flows.len(), true)?;
    emulator.keep_events = true;
    let mut recorder = scenario_recorder(&scenario, emulator.capacity_truth(), emulator.reverse_capacity_truth());
    let mut saved = Vec::new();
    let built = build_flows(&scenario, seed, &mut rng, &mut saved, emulator.has_reverse_bottleneck())?;
    let poll = Poll::new().map_err(|e| io_error(&scenario, e))?;
    // A loopback socket woken by `poll`, and its address.
    let socket = |token: usize| -> Result<(UdpSocket, SocketAddr), ScenarioError> {
        let io = |e| io_error(&scenario, e);
        let mut s = UdpSocket::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)).map_err(io)?;
        poll.registry().register(&mut s, Token(token), Interest::READABLE).map_err(io)?;
        let addr = s.local_addr().map_err(io)?;
        Ok((s, addr))
    };
    let (emu_a, addr_a) = socket(usize::MAX)?;
    let (emu_b, addr_b) = socket(usize::MAX - 1)?;
    let mut flows = Vec::with_capacity(built.len());
    let (mut by_snd, mut by_rcv) = (HashMap::new(), HashMap::new());
    for (i, (b, spec)) in built.into_iter().zip(&scenario.flows).enumerate() {
        let (egress, ingress) = wire_codec(spec, b.seed);
        let (snd, snd_addr) = socket(2 * i)?;
        let (rcv, rcv_addr) = socket(2 * i + 1)?;
        by_snd.insert(snd_addr, i);
        by_rcv.insert(rcv_addr, i);
        recorder.add_flow(b.label, b.frames);
        flows.push(LiveFlow {
            send: b.ends.send,
            recv: b.ends.recv,
            egress,
            ingress,
            format: spec.receiver.report_format,
            flow: spec.sender.flow,
            snd,
            rcv,
            snd_addr,
            rcv_addr,
            wire_error: None,
            sent: VecDeque::new(),
            delivered: VecDeque::new(),
            reports: VecDeque::new(),
        });
    }
    let mut d = Driver {
        emulator,
        recorder,
        flows,
        emu_a,
        emu_b,
        addr_a,
        addr_b,
        by_snd,
        by_rcv,
        inflight: HashMap::new(),
        report_sizes: HashMap::new(),
        next_tag: 0,
        info: LiveInfo { mode: "live", bottleneck: "udp-emulator", timestamps: "user", ..LiveInfo::default() },
        late: Lateness::default(),
        events: 0,
    };
    let cpu_start = thread_cpu_ns();
    let clock = WallClock::new();
    let end = Time::ZERO + scenario.duration;
    let mut next_bin = Time::ZERO + scenario.bin;
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut events = Events::with_capacity(64);
    let mut poll = poll;
    let mut stopped_at = end;
    loop {
        let now = clock.now();
        if now >= end {
            break;
        }
        if stop() {
            stopped_at = now;
            break;
        }
        let more = d.read_all(&clock, &mut buf);
        d.serve(&clock);
        let now = clock.now();
        // The simulator's limits, with its errors.
        if d.recorder.sent > scenario.max_packets {
            return Err(packets_over_error(&scenario, now));
        }
        if d.recorder.rows_over() {
            return Err(rows_over_error(&scenario, now, d.recorder.packet_rows()));
        }
        while next_bin <= now && next_bin <= end {
            d.sample_bin(next_bin);
            next_bin += scenario.bin;
        }
        let deadline = d.deadline().min(next_bin).min(end).min(now + MAX_SLEEP);
        let wait = deadline.saturating_since(now);
        // A socket left unread at its budget raises no new edge: no sleep.
        if wait > SPIN && !more {
            let sleep = std::time::Duration::from_micros((wait - SPIN).as_micros() as u64);
            // A signal interrupts the sleep (EINTR): the loop asks `stop`.
            if let Err(e) = poll.poll(&mut events, Some(sleep)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(io_error(&scenario, e));
                }
            }
        } else {
            std::thread::yield_now();
        }
    }
    // The run ends at its end (or where it was stopped): the last bins,
    // then every record settled, as the simulator ends.
    let t = stopped_at.min(end);
    while next_bin <= t {
        d.sample_bin(next_bin);
        next_bin += scenario.bin;
    }
    for (i, f) in d.flows.iter_mut().enumerate() {
        f.send.record_settled(i, t, true, &mut d.recorder);
        f.recv.record_settled(i, t, true, &mut d.recorder);
        f.recv.record_end(i, t, &mut d.recorder);
        f.send.record_end(i, t, &mut d.recorder);
    }
    let failed = |f: &LiveFlow| f.send.failure().or_else(|| f.wire_error.clone());
    if let Some((i, e)) = d.flows.iter().enumerate().find_map(|(i, f)| failed(f).map(|e| (i, e))) {
        return Err(ScenarioError {
            source_name: scenario.source.clone(),
            field: "run".into(),
            reason: format!("flow[{i}] ({}): {e}", scenario.flows[i].name),
        });
    }
    let wall = std::time::Duration::from_micros(clock.now().as_micros() as u64);
    d.info.late_us = d.late.percentiles();
    d.info.load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()));
    d.info.wall_s = wall.as_secs_f64();
    d.info.loop_cpu = cpu_start
        .zip(thread_cpu_ns())
        .filter(|_| d.info.wall_s > 0.0)
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9 / d.info.wall_s);
    d.info.forward = d.emulator.stats(Direction::Forward);
    d.info.reverse = d.emulator.stats(Direction::Reverse);
    d.info.header_overhead_bytes = d.emulator.header_overhead.bytes();
    let output = d.recorder.output(&RunInfo { scenario: scenario.name.clone(), seed, end: t, wall, events: d.events });
    Ok(LiveRun { output, live: d.info })
}

struct Driver {
    emulator: Emulator,
    recorder: Recorder,
    flows: Vec<LiveFlow>,
    /// The emulator's sockets: the sending ends' side, the receiving ends'.
    emu_a: UdpSocket,
    emu_b: UdpSocket,
    addr_a: SocketAddr,
    addr_b: SocketAddr,
    by_snd: HashMap<SocketAddr, usize>,
    by_rcv: HashMap<SocketAddr, usize>,
    /// Data inside the emulator, by tag.
    inflight: HashMap<u64, Envelope>,
    /// Reports inside the emulator, by tag: their bytes on the wire.
    report_sizes: HashMap<u64, DataSize>,
    next_tag: u64,
    info: LiveInfo,
    late: Lateness,
    events: u64,
}

impl Driver {
    /// Reads every socket until it would block (a budget each), stamping
    /// each datagram as it is read. True if some socket used its whole
    /// budget (it may hold more).
    fn read_all(&mut self, clock: &WallClock, buf: &mut [u8]) -> bool {
        let mut more = false;
        // The emulator's sending side: data from the sending ends.
        let mut reads = 0;
        while let Some((n, from)) = recv(&self.emu_a, buf, &mut reads, &mut more) {
            let Some(&i) = self.by_snd.get(&from) else {
                self.info.refused += 1;
                continue;
            };
            let bytes = buf[..n].to_vec();
            let h = hash(&bytes);
            let rec = &mut self.recorder;
            let drops = &mut self.info.socket_drops;
            let Some(env) = take_match(&mut self.flows[i].sent, h, |e: Envelope| {
                *drops += 1;
                rec.record(i, Event::PacketDropped { seq: e.seq, frame: e.frame, kind: e.kind });
            }) else {
                self.info.unmatched += 1;
                continue;
            };
            let tag = self.next_tag;
            self.next_tag += 1;
            self.inflight.insert(tag, env);
            self.emulator.handle_datagram(clock.now(), Direction::Forward, i as u16, tag, bytes);
            self.record_fates();
        }
        // The emulator's receiving side: reports from the receiving ends.
        let mut reads = 0;
        while let Some((n, from)) = recv(&self.emu_b, buf, &mut reads, &mut more) {
            let Some(&i) = self.by_rcv.get(&from) else {
                self.info.refused += 1;
                continue;
            };
            let tag = BACK_TAG | self.next_tag;
            self.next_tag += 1;
            self.report_sizes.insert(tag, DataSize::from_bytes(n as u64) + self.emulator.header_overhead);
            self.emulator.handle_datagram(clock.now(), Direction::Reverse, i as u16, tag, buf[..n].to_vec());
            self.record_fates();
        }
        for i in 0..self.flows.len() {
            // Data (and the sender's RTCP) at the receiving end.
            let mut reads = 0;
            while let Some((n, from)) = recv(&self.flows[i].rcv, buf, &mut reads, &mut more) {
                let now = clock.now();
                if from != self.addr_b {
                    self.info.refused += 1;
                    continue;
                }
                let h = hash(&buf[..n]);
                let rec = &mut self.recorder;
                let drops = &mut self.info.socket_drops;
                let f = &mut self.flows[i];
                // One the kernel lost after the bottleneck is counted in
                // `socket_drops` only: the recorder keeps it in flight.
                let env = take_match(&mut f.delivered, h, |_| *drops += 1);
                // It arrived, whether or not the end can read it.
                match &env {
                    Some(env) => rec.record(i, Event::PacketArrived { at: now, packet: env }),
                    None => self.info.unmatched += 1,
                }
                let packet = match f.ingress.decode(&buf[..n]) {
                    Ok(p) => p,
                    Err(_) => {
                        self.info.undecodable += 1;
                        continue;
                    }
                };
                self.events += 1;
                f.recv.handle_packet(now, &packet);
            }
            // Reports at the sending end.
            let mut reads = 0;
            while let Some((n, from)) = recv(&self.flows[i].snd, buf, &mut reads, &mut more) {
                let now = clock.now();
                if from != self.addr_a {
                    self.info.refused += 1;
                    continue;
                }
                let f = &mut self.flows[i];
                let h = hash(&buf[..n]);
                match f.reports.iter().position(|x| *x == h) {
                    Some(k) => {
                        // Reports before it the kernel lost.
                        self.info.socket_drops += k as u64;
                        for _ in 0..k {
                            self.recorder.record(i, Event::ReportLost);
                        }
                        f.reports.drain(..=k);
                    }
                    None => self.info.unmatched += 1,
                }
                let report = ReceiverReport {
                    flow: f.flow,
                    format: f.format,
                    datagram: buf[..n].to_vec(),
                    ..Default::default()
                };
                self.events += 1;
                f.send.handle_back(now, &Back::Report(report));
            }
        }
        more
    }

    /// What happened inside the emulator, to the recorder.
    fn record_fates(&mut self) {
        while let Some(fate) = self.emulator.poll_fate() {
            let i = fate.peer as usize;
            if fate.tag & BACK_TAG != 0 {
                let size = self.report_sizes.get(&fate.tag).copied().unwrap_or(DataSize::ZERO);
                let reverse = self.emulator.has_reverse_bottleneck();
                match fate.what {
                    FateKind::Dropped => {
                        self.report_sizes.remove(&fate.tag);
                        self.recorder.record(i, Event::ReportLost);
                        self.recorder.record(i, Event::BackDropped { reverse });
                    }
                    FateKind::Departed { lost, .. } => {
                        self.recorder.record(i, Event::BackDeparted { size, reverse });
                        if lost {
                            self.report_sizes.remove(&fate.tag);
                            self.recorder.record(i, Event::ReportLost);
                        }
                    }
                    FateKind::LostOnPath | FateKind::OverMemory => {
                        self.report_sizes.remove(&fate.tag);
                        self.recorder.record(i, Event::ReportLost);
                    }
                }
                continue;
            }
            match fate.what {
                FateKind::Dropped | FateKind::LostOnPath | FateKind::OverMemory => {
                    if let Some(e) = self.inflight.remove(&fate.tag) {
                        self.recorder.record(i, Event::PacketDropped { seq: e.seq, frame: e.frame, kind: e.kind });
                    }
                }
                FateKind::Departed { queued, sojourn, lost } => {
                    let Some(e) = self.inflight.get(&fate.tag) else { continue };
                    let ev = Event::PacketDeparted { packet: e, queued, sojourn, lost, reverse: false };
                    self.recorder.record(i, ev);
                    if lost {
                        self.inflight.remove(&fate.tag);
                    }
                }
            }
        }
    }

    /// Serves everything due: the emulator's deliveries, then each flow's
    /// ends, handing over every datagram they give.
    fn serve(&mut self, clock: &WallClock) {
        let now = clock.now();
        if let Some(t) = self.emulator.poll_timeout().filter(|&t| t <= now) {
            self.late.note(t, now);
        }
        while let Some(o) = self.emulator.poll_output(now) {
            self.record_fates();
            let i = o.peer as usize;
            let f = &mut self.flows[i];
            match o.dir {
                Direction::Forward => {
                    let Some(env) = self.inflight.remove(&o.tag) else { continue };
                    if self.emu_b.send_to(&o.bytes, f.rcv_addr).is_ok() {
                        f.delivered.push_back((hash(&o.bytes), env));
                    } else {
                        self.info.socket_drops += 1;
                    }
                }
                Direction::Reverse => {
                    self.report_sizes.remove(&o.tag);
                    if self.emu_a.send_to(&o.bytes, f.snd_addr).is_ok() {
                        f.reports.push_back(hash(&o.bytes));
                    } else {
                        self.info.socket_drops += 1;
                    }
                }
            }
        }
        self.record_fates();
        for i in 0..self.flows.len() {
            let now = clock.now();
            let f = &mut self.flows[i];
            if let Some(t) = f.send.poll_timeout().filter(|&t| t <= now) {
                self.events += 1;
                f.send.handle_timeout(now);
                self.late.note(t, now);
            }
            while let Some(env) = f.send.poll_transmit(now) {
                self.events += 1;
                self.recorder.record(i, Event::PacketSent(&env));
                let bytes = match f.egress.encode(&env.packet) {
                    Ok(b) => b,
                    Err(e) => {
                        // No datagram form: it never leaves, and the run
                        // fails on it (`wire_error`).
                        let kind = env.kind.name();
                        f.wire_error.get_or_insert_with(|| format!("a {kind} packet has no datagram: {e}"));
                        self.recorder
                            .record(i, Event::PacketDropped { seq: env.seq, frame: env.frame, kind: env.kind });
                        continue;
                    }
                };
                if f.snd.send_to(&bytes, self.addr_a).is_ok() {
                    f.sent.push_back((hash(&bytes), env));
                } else {
                    self.info.socket_drops += 1;
                    self.recorder.record(i, Event::PacketDropped { seq: env.seq, frame: env.frame, kind: env.kind });
                }
            }
            while let Some(back) = f.recv.poll_back(now) {
                self.events += 1;
                let Back::Report(r) = back else { continue };
                let bytes = r.bytes();
                let wire = bytes.len() as u64 + self.emulator.header_overhead.bytes();
                self.recorder.record(i, Event::ReportSent { lost: false, bytes: wire });
                if f.rcv.send_to(&bytes, self.addr_b).is_err() {
                    self.info.socket_drops += 1;
                    self.recorder.record(i, Event::ReportLost);
                }
            }
        }
    }

    /// The earliest deadline of the emulator and the ends.
    fn deadline(&self) -> Time {
        let ends = self.flows.iter().flat_map(|f| [f.send.poll_timeout(), f.recv.poll_timeout()]).flatten();
        ends.chain(self.emulator.poll_timeout()).min().unwrap_or(Time::MAX)
    }

    /// The bin ending at `t1`, as the simulator samples it.
    fn sample_bin(&mut self, t1: Time) {
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.send.record_settled(i, t1, false, &mut self.recorder);
            f.recv.record_settled(i, t1, false, &mut self.recorder);
        }
        self.recorder.record(0, Event::Link { at: t1, queue_bytes: self.emulator.queue_bytes() });
        for (i, f) in self.flows.iter().enumerate() {
            f.recv.record_sample(i, t1, &mut self.recorder);
            f.send.record_sample(i, t1, &mut self.recorder);
        }
    }
}

/// Nanoseconds this thread has run on a CPU (Linux), if the kernel says.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// One datagram from `s`, or None when it would block or `reads` has
/// reached the turn's budget (`more` then says the socket may hold more:
/// edge-triggered, it raises no new event). Errors about an earlier
/// datagram (ICMP unreachable) are skipped; others end the read.
fn recv(s: &UdpSocket, buf: &mut [u8], reads: &mut usize, more: &mut bool) -> Option<(usize, SocketAddr)> {
    if *reads == READ_BUDGET {
        *more = true;
        return None;
    }
    *reads += 1;
    for _ in 0..8 {
        match s.recv_from(buf) {
            Ok(r) => return Some(r),
            Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset) => {}
            Err(_) => return None,
        }
    }
    None
}
