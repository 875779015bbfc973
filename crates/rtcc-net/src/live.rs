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
//! Two forms of the bottleneck ([`Bottleneck`]): the emulator on two
//! loopback UDP sockets of its own, which the ends address (no privilege
//! needed), or the emulator between two TUN devices in two network
//! namespaces of the run's own ([`crate::tun`]), where the ends address
//! each other and the emulator sees IP packets. The TUN form carries
//! `kind = "tcp"` flows as the kernel's own TCP ([`crate::tcp`]) beside
//! the video flows, through the same queue.
//!
//! A real codec (`encoder = "vp8" | "h264"`) encodes on a worker thread
//! fed by a camera clock ([`crate::camera`]).
//!
//! A `kind = "udp"` flow's ends are the simulator's, on UDP sockets of
//! their own as a video flow's, each packet a datagram of its size.
//!
//! A `kind = "web"` flow is the kernel's TCP carrying the downloads the
//! simulator's web-like application (`WebSource`, from the same stream)
//! asks for.
//!
//! With a peer ([`LiveOptions::peer`], [`crate::peer`]), another
//! implementation is each video flow's receiving end: the emulator hands
//! it the flow's datagrams and its own RTCP crosses the reverse path to
//! rtcc's sending end, which reads it as it reads rtcc's. rtcc's receiving
//! end is handed the same datagrams and scores the frames as in any run;
//! its reports are not sent.
//!
//! A reverse flow (`direction = "reverse"`) is the same with its ends
//! swapped: its sending end sends into the emulator's receiving side, its
//! data crosses the reverse bottleneck and its reports the forward one.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;

use mio::net::UdpSocket;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use rtcc_core::datagram::{Egress, Ingress};
use rtcc_core::feedback::{ReceiverReport, ReportFormat};
use rtcc_core::packet::Packet;
use rtcc_core::rng::Rng;
use rtcc_core::traffic::{Object, WebSource};
use rtcc_core::units::{DataSize, Duration, Time};
use rtcc_sim::call::wire_codec;
use rtcc_sim::endpoint::{Back, Envelope, RecvEnd, SendEnd};
use rtcc_sim::output::{Output, RunInfo};
use rtcc_sim::recorder::{Event, Recorder, TrafficSample};
use rtcc_sim::scenario::Direction as FlowDirection;
use rtcc_sim::sim::{build_flows, packets_over_error, rows_over_error, scenario_recorder};
use rtcc_sim::traffic::TrafficSpec;
use rtcc_sim::{Scenario, ScenarioError};
use rtcc_wire::Wire;

use crate::camera::{Camera, EncoderInfo};
use crate::clock::{Lateness, WallClock};
use crate::emulator::{DirStats, Direction, Emulator, FateKind};
use crate::peer::{MediaStats, PeerInfo, PeerProcess, PeerSpec, TwccCheck};
use crate::stamp::Stamps;
use crate::tcp::{KernelTcp, TcpInfo};
use crate::tun::{parse_ipv4, TunPair, ADDR_A, ADDR_B};

const SPIN: Duration = Duration::from_millis(1);
const MAX_SLEEP: Duration = Duration::from_millis(50);
const READ_BUDGET: usize = 256;
/// The largest IP packet (the TUN devices' MTU) or UDP payload.
const MAX_DATAGRAM: usize = 65_535;
/// A tag's top bit marks a report (something sent back); the next one a
/// packet the recorder does not follow (TCP's handshake and ACKs).
const BACK_TAG: u64 = 1 << 63;
const UNTRACKED: u64 = 1 << 62;

/// Which form of the bottleneck a live run uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bottleneck {
    /// TUN when the scenario has TCP flows, the UDP sockets otherwise.
    #[default]
    Auto,
    /// The emulator on two loopback UDP sockets.
    Udp,
    /// The emulator between two TUN devices in namespaces of the run's own.
    Tun,
}

impl Bottleneck {
    pub fn parse(s: &str) -> Option<Bottleneck> {
        match s {
            "auto" => Some(Bottleneck::Auto),
            "udp" => Some(Bottleneck::Udp),
            "tun" => Some(Bottleneck::Tun),
            _ => None,
        }
    }
}

/// How a live run is set up beyond its scenario.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    pub bottleneck: Bottleneck,
    /// Where the TUN form is wanted and the machine does not allow it: run
    /// on the UDP form without the scenario's TCP flows (each named in
    /// `left_out`) instead of refusing.
    pub fallback: bool,
    /// Another implementation as every video flow's receiving end (one
    /// process each), on the UDP form.
    pub peer: Option<PeerSpec>,
}

/// A kernel TCP flow's account in the live object.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TcpFlowInfo {
    pub flow: usize,
    pub cc_asked: String,
    /// What the kernel reports for the socket (`TCP_CONGESTION`).
    pub cc: String,
    /// `TCP_INFO` when the run ended.
    pub info: Option<TcpInfo>,
    /// Data packets of the flow that crossed the bottleneck's input.
    pub packets: u64,
}

/// What a live run adds to its summary.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveInfo {
    /// "live".
    pub mode: &'static str,
    /// The bottleneck: "udp-emulator" (rtcc's link on two UDP sockets) or
    /// "tun-emulator" (rtcc's link between two TUN devices, IP packets).
    pub bottleneck: &'static str,
    /// Why the run is not on the form asked for, when it fell back.
    pub fallback_reason: Option<String>,
    /// Flows the run left out (a TCP flow without the TUN form), by name.
    pub left_out: Vec<String>,
    /// The kernel's TCP flows (TUN form).
    pub tcp: Vec<TcpFlowInfo>,
    /// The real encoders, each on a thread of its own.
    pub encoders: Vec<EncoderInfo>,
    /// Packets the TUN devices gave that were neither IPv4 UDP nor TCP of
    /// the run (the namespaces' own IPv6 chatter), dropped.
    pub other_packets: u64,
    /// Where receive times come from: "kernel" (`SO_TIMESTAMPNS`: when the
    /// kernel queued each datagram on its socket), "user" (stamped in user
    /// space when read), "mixed", or "none" (no socket was read); TUN reads
    /// are not counted.
    pub timestamps: &'static str,
    /// Datagrams whose receive time is the kernel's, and of those the ones
    /// moved later to the time their end (or the emulator) had already
    /// been given, to keep its clock going forward (by less than a turn).
    pub kernel_stamped: u64,
    pub kernel_clamped: u64,
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
    /// payloads, RTP headers and extensions included, on the UDP form; IP
    /// packets on the TUN form). Its bottleneck serialises each with
    /// `header_overhead` more (IPv4 + UDP on the UDP form, none on the TUN
    /// form), where the recorder's link figures count what the simulator
    /// counts (a media packet's RTP payload).
    pub forward: DirStats,
    pub reverse: DirStats,
    /// Bytes the bottleneck charged each datagram beyond its UDP payload.
    pub header_overhead_bytes: u64,
    /// The peers that received the video flows, when the run had them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerInfo>,
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
    /// The flow's index in the scenario (the recorder's).
    at: usize,
    /// The way its data crosses the emulator (its reports the other way).
    dir: Direction,
    /// A real codec's camera clock and encoder thread.
    camera: Option<Camera>,
    /// The latest time each end was given (their clocks only go forward).
    send_last: Time,
    recv_last: Time,
    send: Box<dyn SendEnd>,
    recv: Box<dyn RecvEnd>,
    codec: Codec,
    format: ReportFormat,
    flow: u16,
    snd: UdpSocket,
    rcv: UdpSocket,
    /// The two sockets' addresses, the emulator's destinations.
    snd_addr: SocketAddr,
    rcv_addr: SocketAddr,
    /// Where each end sends (the emulator's socket, or the other end
    /// across the TUN devices), and whence each expects what it reads.
    data_to: SocketAddr,
    report_to: SocketAddr,
    /// The first packet `egress` could not encode: the run fails on it, as
    /// the simulator's `[wire] datagrams` fails the flow.
    wire_error: Option<String>,
    /// Sent, not yet read by the emulator: (hash of the bytes, envelope).
    sent: VecDeque<(u64, Envelope)>,
    /// Handed to the receiving end's socket, not yet read there.
    delivered: VecDeque<(u64, Envelope)>,
    /// Reports handed to the sending end's socket, not yet read there.
    reports: VecDeque<u64>,
    /// Another implementation receiving the flow (`recv` then scores the
    /// same datagrams and its reports are not sent).
    peer: Option<LivePeer>,
}

struct LivePeer {
    process: PeerProcess,
    info: PeerInfo,
    /// RFC 3550 statistics of the media stream handed to it.
    media: MediaStats,
    media_ssrc: u32,
    /// Its transport-wide feedback against the hand-over times.
    twcc: Box<TwccCheck>,
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
/// at least every 50 ms), on loopback, with the default options.
pub fn run_live(
    scenario: Scenario,
    seed: Option<u64>,
    stop: &mut dyn FnMut() -> bool,
) -> Result<LiveRun, ScenarioError> {
    run_live_with(scenario, seed, LiveOptions::default(), stop)
}

/// Why a video flow cannot have `kind`'s peer as its receiving end: the
/// field and the reason. The peer decodes VP8 (RFC 7741) with its RTX
/// (RFC 4588) and answers with what its RTP stack sends: RR, NACK, PLI and
/// transport-wide feedback; nothing else of rtcc's receiving end.
fn peer_refusal(spec: &rtcc_sim::scenario::FlowSpec, kind: &str) -> Option<(&'static str, String)> {
    let why = |field, what: &str| Some((field, format!("a {kind} peer {what}")));
    if spec.direction == FlowDirection::Reverse {
        return why("direction", "receives forward flows");
    }
    if spec.video.as_ref().map(|v| v.codec.name()) != Some("vp8") {
        return why("encoder", "decodes real VP8: set encoder = \"vp8\"");
    }
    if spec.sender.fec.is_some() {
        return why("fec", "is given no FEC (rtcc's parity is not the standard's): leave fec out");
    }
    if spec.sender.audio.is_some() {
        return why("audio", "receives the video stream alone: leave audio out");
    }
    if spec.receiver.report_format != ReportFormat::Twcc {
        return why("report_format", "sends transport-wide feedback (twcc), not this format");
    }
    if rtcc_core::controller::lookup(&spec.controller).is_some_and(|c| c.receiver.is_some()) {
        return why("controller", "runs no rtcc receiver-side estimator, which this controller needs");
    }
    None
}

/// The two forms' sockets or devices.
enum Path {
    Udp { emu_a: UdpSocket, emu_b: UdpSocket, addr_a: SocketAddr, addr_b: SocketAddr },
    Tun { pair: TunPair },
}

/// A scenario flow's place in the driver.
#[derive(Clone, Copy)]
enum Slot {
    Video(usize),
    Tcp,
}

/// Runs `scenario` live with `options`.
pub fn run_live_with(
    mut scenario: Scenario,
    seed: Option<u64>,
    options: LiveOptions,
    stop: &mut dyn FnMut() -> bool,
) -> Result<LiveRun, ScenarioError> {
    let refuse = |scenario: &Scenario, i: usize, field: &str, reason: &str| ScenarioError {
        source_name: scenario.source.clone(),
        field: format!("flow[{i}].{field}"),
        reason: reason.into(),
    };
    let has_tcp =
        scenario.flows.iter().any(|f| matches!(f.traffic, Some(TrafficSpec::Tcp { .. } | TrafficSpec::Web { .. })));
    for (i, spec) in scenario.flows.iter().enumerate() {
        match &spec.traffic {
            Some(TrafficSpec::Tcp { tcp, .. } | TrafficSpec::Web { tcp, .. }) => {
                // The kernel's TCP has its own; a value the scenario set would
                // be silently ignored.
                let d = rtcc_core::tcp::TcpConfig::default();
                let own = [
                    ("initial_window", tcp.initial_window != d.initial_window),
                    ("sack", tcp.sack != d.sack),
                    ("host_jitter", tcp.host_jitter != d.host_jitter),
                ];
                if let Some((field, _)) = own.iter().find(|x| x.1) {
                    return Err(refuse(
                        &scenario,
                        i,
                        field,
                        "a live TCP flow is the kernel's TCP, which sets this itself: leave it out",
                    ));
                }
            }
            Some(TrafficSpec::Udp(u)) if u.packet.bytes() < 36 => {
                return Err(refuse(
                    &scenario,
                    i,
                    "packet_size",
                    "a live UDP packet carries IPv4 and UDP headers (28 B) and its number (8 B): 36 B at least",
                ));
            }
            Some(TrafficSpec::Udp(_)) | None => {}
        }
    }
    let want_tun = match options.bottleneck {
        Bottleneck::Tun => true,
        Bottleneck::Udp => false,
        Bottleneck::Auto => has_tcp,
    };
    if let Some(peer) = &options.peer {
        if want_tun {
            return Err(ScenarioError {
                source_name: scenario.source.clone(),
                field: "live".into(),
                reason: format!("a {} peer runs on the UDP bottleneck, without TCP flows", peer.kind),
            });
        }
        for (i, spec) in scenario.flows.iter().enumerate().filter(|(_, f)| f.traffic.is_none()) {
            peer_refusal(spec, &peer.kind)
                .map_or(Ok(()), |(field, reason)| Err(refuse(&scenario, i, field, &reason)))?;
        }
        if scenario.flows.iter().all(|f| f.traffic.is_some()) {
            return Err(ScenarioError {
                source_name: scenario.source.clone(),
                field: "flow".into(),
                reason: format!("a {} peer receives a video flow, and the scenario has none", peer.kind),
            });
        }
    }
    let mut fallback_reason = None;
    let mut left_out = Vec::new();
    let pair = match want_tun {
        false => None,
        true => match TunPair::new() {
            Ok(p) => Some(p),
            Err(e) if options.fallback && e.unavailable => {
                fallback_reason = Some(e.reason);
                None
            }
            Err(e) => {
                let reason = e.reason;
                return Err(ScenarioError {
                    source_name: scenario.source.clone(),
                    field: "live".into(),
                    reason: match has_tcp {
                        true => {
                            format!(
                                "{reason}; ask for the fallback (rtcc live --tun-fallback, rtcc.live(fallback=True)) \
                                 to run on the UDP bottleneck without the TCP flows"
                            )
                        }
                        false => format!("{reason}; the UDP bottleneck needs no privilege"),
                    },
                });
            }
        },
    };
    if pair.is_none() && has_tcp {
        if fallback_reason.is_none() {
            let i = scenario
                .flows
                .iter()
                .position(|f| matches!(f.traffic, Some(TrafficSpec::Tcp { .. } | TrafficSpec::Web { .. })))
                .expect("a TCP flow");
            return Err(refuse(
                &scenario,
                i,
                "kind",
                "a live TCP flow is the kernel's TCP, which needs the TUN bottleneck (not the UDP one)",
            ));
        }
        // The fallback: the video flows alone, the TCP flows named.
        let kernel = |f: &rtcc_sim::scenario::FlowSpec| {
            matches!(f.traffic, Some(TrafficSpec::Tcp { .. } | TrafficSpec::Web { .. }))
        };
        left_out = scenario.flows.iter().filter(|f| kernel(f)).map(|f| f.name.clone()).collect();
        scenario.flows.retain(|f| !kernel(f));
    }
    // A real codec encodes on a worker thread; its sender is fed frames.
    for f in scenario.flows.iter_mut().filter(|f| f.video.is_some()) {
        f.sender.external_frames = true;
    }
    let scenario = scenario;
    let seed = seed.unwrap_or(scenario.seed);
    let mut rng = Rng::new(seed);
    let mut link_rng = rng.fork(0xC0FFEE);
    let mut emulator = Emulator::from_scenario_rng(&scenario, &mut link_rng, scenario.flows.len(), true)?;
    emulator.keep_events = true;
    if pair.is_some() {
        // The emulator reads whole IP packets.
        emulator.header_overhead = DataSize::ZERO;
    }
    let mut recorder = scenario_recorder(&scenario, emulator.capacity_truth(), emulator.reverse_capacity_truth());
    let mut saved = Vec::new();
    let built = build_flows(&scenario, seed, &mut rng, &mut saved, emulator.has_reverse_bottleneck())?;
    let poll = Poll::new().map_err(|e| io_error(&scenario, e))?;
    let io = |e| io_error(&scenario, e);
    // A socket woken by `poll` (made in `ns` when given), and its address.
    let socket = |token: usize,
                  ip: Ipv4Addr,
                  ns: Option<&crate::tun::Netns>|
     -> Result<(UdpSocket, SocketAddr), ScenarioError> {
        let bind = move || std::net::UdpSocket::bind(SocketAddr::new(IpAddr::V4(ip), 0));
        let s = match ns {
            Some(ns) => ns.run(bind),
            None => bind(),
        }
        .map_err(io)?;
        s.set_nonblocking(true).map_err(io)?;
        crate::stamp::enable(s.as_raw_fd());
        let mut s = UdpSocket::from_std(s);
        poll.registry().register(&mut s, Token(token), Interest::READABLE).map_err(io)?;
        let addr = s.local_addr().map_err(io)?;
        Ok((s, addr))
    };
    let path = match pair {
        Some(pair) => {
            for (k, f) in [&pair.tun_a, &pair.tun_b].into_iter().enumerate() {
                let fd = f.as_raw_fd();
                poll.registry().register(&mut SourceFd(&fd), Token(usize::MAX - k), Interest::READABLE).map_err(io)?;
            }
            Path::Tun { pair }
        }
        None => {
            let (emu_a, addr_a) = socket(usize::MAX, Ipv4Addr::LOCALHOST, None)?;
            let (emu_b, addr_b) = socket(usize::MAX - 1, Ipv4Addr::LOCALHOST, None)?;
            Path::Udp { emu_a, emu_b, addr_a, addr_b }
        }
    };
    let waker = std::sync::Arc::new(mio::Waker::new(poll.registry(), Token(usize::MAX - 2)).map_err(io)?);
    let mut flows = Vec::new();
    let mut tcp = Vec::new();
    let mut slots = Vec::with_capacity(built.len());
    let (mut by_snd, mut by_rcv) = (HashMap::new(), HashMap::new());
    for (i, (mut b, spec)) in built.into_iter().zip(&scenario.flows).enumerate() {
        if spec.video.is_some() {
            // Decoding and scoring each frame (milliseconds) after the run,
            // not in the loop.
            b.frames.defer();
        }
        recorder.add_flow(b.label, b.frames);
        if let Some(TrafficSpec::Tcp { cc, .. } | TrafficSpec::Web { cc, .. }) = &spec.traffic {
            let Path::Tun { pair } = &path else { unreachable!("TCP flows only on the TUN form") };
            // A reverse flow sends from B to A.
            let (dir, from, to) = match spec.direction {
                FlowDirection::Forward => (Direction::Forward, (&pair.a, ADDR_A), (&pair.b, ADDR_B)),
                FlowDirection::Reverse => (Direction::Reverse, (&pair.b, ADDR_B), (&pair.a, ADDR_A)),
            };
            let k = KernelTcp::new(i, from, to, cc).map_err(|(field, e)| refuse(&scenario, i, field, &e))?;
            slots.push(Slot::Tcp);
            let web = match &spec.traffic {
                Some(TrafficSpec::Web { web, .. }) => Some(rtcc_sim::traffic::web_source(
                    web,
                    spec.sender.start,
                    spec.sender.stop,
                    rtcc_sim::traffic::stream(b.seed),
                )),
                _ => None,
            };
            tcp.push(LiveTcp {
                at: i,
                dir,
                k,
                start: spec.sender.start,
                stop: spec.sender.stop,
                seq: 0,
                sent_bytes: 0,
                info: None,
                web,
                failed: false,
                asks: None,
                object: None,
            });
            continue;
        }
        let codec = match &spec.traffic {
            Some(TrafficSpec::Udp(_)) => Codec::Udp,
            _ => {
                let (egress, ingress) = wire_codec(spec, b.seed);
                Codec::Rtp(egress, ingress)
            }
        };
        let v = flows.len();
        let dir = match spec.direction {
            FlowDirection::Forward => Direction::Forward,
            FlowDirection::Reverse => Direction::Reverse,
        };
        let ((snd, snd_addr), (rcv, rcv_addr)) = match (&path, dir) {
            (Path::Udp { .. }, _) => {
                (socket(2 * v, Ipv4Addr::LOCALHOST, None)?, socket(2 * v + 1, Ipv4Addr::LOCALHOST, None)?)
            }
            (Path::Tun { pair }, Direction::Forward) => {
                (socket(2 * v, ADDR_A, Some(&pair.a))?, socket(2 * v + 1, ADDR_B, Some(&pair.b))?)
            }
            (Path::Tun { pair }, Direction::Reverse) => {
                (socket(2 * v, ADDR_B, Some(&pair.b))?, socket(2 * v + 1, ADDR_A, Some(&pair.a))?)
            }
        };
        // The sending end sends into the emulator's side its data enters,
        // the receiving end into the other.
        let (data_to, report_to) = match (&path, dir) {
            (Path::Udp { addr_a, addr_b, .. }, Direction::Forward) => (*addr_a, *addr_b),
            (Path::Udp { addr_a, addr_b, .. }, Direction::Reverse) => (*addr_b, *addr_a),
            (Path::Tun { .. }, _) => (rcv_addr, snd_addr),
        };
        by_snd.insert(snd_addr, v);
        by_rcv.insert(rcv_addr, v);
        let peer = match (&options.peer, &path, &codec) {
            (Some(p), Path::Udp { addr_b, .. }, Codec::Rtp(egress, _)) if spec.traffic.is_none() => {
                let max = scenario.duration.as_micros() as f64 / 1e6 + 60.0;
                let process = PeerProcess::start(p, *addr_b, max).map_err(|e| ScenarioError {
                    source_name: scenario.source.clone(),
                    field: format!("flow[{i}].peer"),
                    reason: format!("the {} peer: {e}", p.kind),
                })?;
                // Its addresses must be its own: none of the run's sockets.
                let taken = by_rcv.contains_key(&process.rtcp)
                    || by_snd.contains_key(&process.rtcp)
                    || [snd_addr, rcv_addr, process.rtcp].contains(&process.rtp)
                    || matches!(&path, Path::Udp { addr_a, addr_b, .. }
                        if [*addr_a, *addr_b].iter().any(|a| *a == process.rtp || *a == process.rtcp));
                if taken {
                    return Err(ScenarioError {
                        source_name: scenario.source.clone(),
                        field: format!("flow[{i}].peer"),
                        reason: format!(
                            "the {} peer said it listens at {} and {}, an address the run or another peer uses",
                            p.kind, process.rtp, process.rtcp
                        ),
                    });
                }
                // Its RTCP comes from there, into the reverse path.
                by_rcv.insert(process.rtcp, v);
                let info = PeerInfo {
                    flow: i,
                    kind: p.kind.clone(),
                    rtp: process.rtp.to_string(),
                    rtcp: process.rtcp.to_string(),
                    ..PeerInfo::default()
                };
                let media_ssrc = egress.session.media_ssrc;
                Some(LivePeer { process, info, media: MediaStats::default(), media_ssrc, twcc: Box::default() })
            }
            _ => None,
        };
        slots.push(Slot::Video(v));
        let mut send = b.ends.send;
        let camera = match (&spec.video, send.video_sender()) {
            (Some(_), Some(sender)) => {
                Some(Camera::start(i, sender, spec.sender.start, spec.ctx.frame_interval, waker.clone()))
            }
            _ => None,
        };
        flows.push(LiveFlow {
            at: i,
            dir,
            camera,
            send_last: Time::ZERO,
            recv_last: Time::ZERO,
            send,
            recv: b.ends.recv,
            codec,
            format: spec.receiver.report_format,
            flow: spec.sender.flow,
            snd,
            rcv,
            snd_addr,
            rcv_addr,
            data_to,
            report_to,
            wire_error: None,
            sent: VecDeque::new(),
            delivered: VecDeque::new(),
            reports: VecDeque::new(),
            peer,
        });
    }
    let bottleneck = match path {
        Path::Udp { .. } => "udp-emulator",
        Path::Tun { .. } => "tun-emulator",
    };
    let mut d = Driver {
        emulator,
        recorder,
        flows,
        tcp,
        slots,
        path,
        by_snd,
        by_rcv,
        inflight: HashMap::new(),
        report_sizes: HashMap::new(),
        next_tag: 0,
        info: LiveInfo {
            mode: "live",
            bottleneck,
            timestamps: "user",
            fallback_reason,
            left_out,
            ..LiveInfo::default()
        },
        late: Lateness::default(),
        events: 0,
        waker: waker.clone(),
        stamps: Stamps::default(),
        emu_last: Time::ZERO,
    };
    // The kernel turns receive stamping on with a deferred work item; until
    // it has, datagrams are stamped when read.
    std::thread::sleep(std::time::Duration::from_millis(20));
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
        if stop() || d.tcp.iter().any(|t| t.failed) {
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
    for f in d.flows.iter_mut() {
        if let Some(c) = &mut f.camera {
            c.finish(t, f.send.video_sender().expect("a camera feeds a video sender"));
            d.info.encoders.push(c.info.clone());
        }
    }
    for f in d.flows.iter_mut() {
        let i = f.at;
        f.send.record_settled(i, t, true, &mut d.recorder);
        f.recv.record_settled(i, t, true, &mut d.recorder);
        f.recv.record_end(i, t, &mut d.recorder);
        f.send.record_end(i, t, &mut d.recorder);
    }
    let mut tcp_error = None;
    for f in d.tcp.iter_mut() {
        f.info = f.k.info().or(f.info);
        let ended = f.failed.then(|| "an end of the connection closed before the flow's stop".to_string());
        if let Some(e) = f.k.finish().or(ended) {
            tcp_error = tcp_error.or(Some((f.at, format!("the kernel's TCP: {e}"))));
        }
        d.recorder.record(f.at, f.received());
        d.recorder.record(f.at, Event::TrafficEnd(&f.sample(false)));
        d.info.tcp.push(TcpFlowInfo {
            flow: f.at,
            cc_asked: f.k.cc_asked.clone(),
            cc: f.k.cc.clone(),
            info: f.info,
            packets: f.seq,
        });
    }
    for f in d.flows.iter_mut() {
        if let Some(p) = f.peer.take() {
            let mut info = p.info;
            info.twcc_arrival_error_us = p.twcc.error_percentiles();
            // A peer that gave no report leaves rtcc's view of the run
            // whole; the summary says why it is missing.
            match p.process.finish() {
                Ok(r) => info.report = Some(r),
                Err(e) => info.report_error = Some(e),
            }
            d.info.peers.push(info);
        }
    }
    let failed = |f: &LiveFlow| {
        let codec = f.camera.as_ref().and_then(|c| c.failure.clone());
        f.send.failure().or(codec).or_else(|| f.wire_error.clone()).map(|e| (f.at, e))
    };
    if let Some((i, e)) = d.flows.iter().find_map(failed).or(tcp_error) {
        return Err(ScenarioError {
            source_name: scenario.source.clone(),
            field: "run".into(),
            reason: format!("flow[{i}] ({}): {e}", scenario.flows[i].name),
        });
    }
    let wall = std::time::Duration::from_micros(clock.now().as_micros() as u64);
    d.info.late_us = d.late.percentiles();
    d.info.timestamps = d.stamps.source();
    d.info.kernel_stamped = d.stamps.kernel;
    d.info.kernel_clamped = d.stamps.clamped;
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
    let mut output =
        d.recorder.output(&RunInfo { scenario: scenario.name.clone(), seed, end: t, wall, events: d.events });
    // A peer flow's repair requests are the ones its receiver sent: the peer's.
    for p in &d.info.peers {
        if let Some(f) = output.summary.flows.get_mut(p.flow) {
            (f.nacks_sent, f.plis_sent) = (p.nacked_sequences, p.plis);
        }
    }
    Ok(LiveRun { output, live: d.info })
}

/// How a flow's packets become datagrams and back.
enum Codec {
    /// RTP and RTCP (`rtcc_core::datagram`), as `[wire] datagrams` builds it.
    Rtp(Egress, Ingress),
    /// A UDP flow's packet: its number (8 bytes, big-endian) and zeros, so
    /// the datagram's IP packet is the packet's size (the simulator counts
    /// a UDP packet whole: IPv4 and UDP headers included).
    Udp,
}

impl Codec {
    fn encode(&mut self, env: &Envelope) -> Result<Vec<u8>, String> {
        match self {
            Codec::Rtp(e, _) => e.encode(&env.packet).map_err(|e| e.to_string()),
            Codec::Udp => {
                let overhead = crate::emulator::IPV4_UDP_OVERHEAD.bytes() as usize;
                let len = (env.packet.size.bytes() as usize).saturating_sub(overhead).max(8);
                let mut b = vec![0u8; len];
                b[..8].copy_from_slice(&env.seq.to_be_bytes());
                Ok(b)
            }
        }
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Packet, String> {
        match self {
            Codec::Rtp(_, i) => i.decode(bytes).map_err(|e| e.to_string()),
            Codec::Udp if bytes.len() >= 8 => {
                let size = DataSize::from_bytes(bytes.len() as u64) + crate::emulator::IPV4_UDP_OVERHEAD;
                Ok(Packet { kind: rtcc_core::packet::PacketKind::Data, size, ..Packet::default() })
            }
            Codec::Udp => Err(format!("{} bytes: shorter than a UDP flow's packet number", bytes.len())),
        }
    }
}

/// A kernel TCP flow in the driver.
struct LiveTcp {
    at: usize,
    /// The way its data crosses the emulator.
    dir: Direction,
    k: KernelTcp,
    start: Time,
    stop: Option<Time>,
    /// Its data packets seen at the bottleneck's input, and their bytes.
    seq: u64,
    sent_bytes: u64,
    /// `TCP_INFO` at the last sample.
    info: Option<TcpInfo>,
    /// A web-like flow: the simulator's application (object sizes and
    /// think times from the same stream), the client's channels once
    /// started, and the object under way.
    web: Option<WebSource>,
    /// An end's thread ended before the flow's stop: the run ends.
    failed: bool,
    asks: Option<(std::sync::mpsc::Sender<crate::tcp::Ask>, std::sync::mpsc::Receiver<crate::tcp::Done>)>,
    object: Option<Object>,
}

impl LiveTcp {
    fn received(&self) -> Event<'static> {
        Event::TrafficReceived {
            delivered_bytes: self.k.delivered_wire(self.info.as_ref()),
            objects: self.web.as_ref().map(|w| (w.started, w.completed)),
        }
    }

    /// A web-like flow's downloads: each completed one to the recorder,
    /// and the next asked for when its think time is over.
    fn browse(&mut self, now: Time, rec: &mut Recorder) {
        let (Some(web), Some((ask, done))) = (&mut self.web, &self.asks) else { return };
        while let Ok(at) = done.try_recv() {
            let Some(o) = self.object.take() else { continue };
            web.complete(at);
            rec.record(self.at, Event::ObjectDone { size: o.size, fct: at.saturating_since(o.start) });
        }
        if self.object.is_none() {
            if let Some(o) = web.poll_object(now) {
                if ask.send(o.size.bytes()).is_ok() {
                    self.object = Some(o);
                }
            }
        }
    }

    fn sample(&self, with_state: bool) -> TrafficSample<'static> {
        let i = self.info.unwrap_or_default();
        let mut s = TrafficSample {
            sent_bytes: self.sent_bytes,
            retransmits: i.total_retrans,
            rtos: i.total_rto.unwrap_or(0),
            ..TrafficSample::default()
        };
        if with_state && self.info.is_some() {
            s.cwnd = Some(DataSize::from_bytes(i.cwnd_bytes));
            s.in_flight = Some(DataSize::from_bytes(i.in_flight_bytes));
            s.srtt = i.srtt_us.map(|r| Duration::from_micros(r as i64));
            s.pacing = i.pacing_rate_bps.map(rtcc_core::units::DataRate::from_bps);
        }
        s
    }
}

struct Driver {
    emulator: Emulator,
    recorder: Recorder,
    flows: Vec<LiveFlow>,
    tcp: Vec<LiveTcp>,
    /// Each scenario flow's place: `emulator` outputs name the scenario's
    /// index.
    slots: Vec<Slot>,
    path: Path,
    by_snd: HashMap<SocketAddr, usize>,
    by_rcv: HashMap<SocketAddr, usize>,
    /// Data inside the emulator, by tag.
    /// With the hash of its UDP payload (0 for TCP), which the receiving
    /// socket will read.
    inflight: HashMap<u64, (Envelope, u64)>,
    /// Reports inside the emulator, by tag: their bytes on the wire.
    /// With the hash of its UDP payload.
    report_sizes: HashMap<u64, (DataSize, u64)>,
    next_tag: u64,
    info: LiveInfo,
    late: Lateness,
    events: u64,
    /// Wakes the loop from another thread (an encoder's, a web client's).
    waker: std::sync::Arc<mio::Waker>,
    /// Receive times: kernel stamps and reads without one.
    stamps: Stamps,
    /// The latest time the emulator was given (its clock only goes
    /// forward).
    emu_last: Time,
}

impl Driver {
    /// When a datagram read now arrived: its kernel stamp, but never
    /// before `last`, the latest time its consumer (an end, the emulator)
    /// was given, whose clock only goes forward. One process sends every
    /// datagram during its own turns, so a stamp falls inside a turn and a
    /// clamp moves it by less than one.
    fn arrival(&mut self, clock: &WallClock, stamp: Option<i128>, last: Time) -> Time {
        let t = self.stamps.at(clock, stamp);
        if t < last {
            self.stamps.clamped += 1;
        }
        t.max(last)
    }

    fn tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag - 1
    }

    /// A datagram from sending end `v` (its UDP payload `payload`; `bytes`
    /// what the emulator carries: the same, or the IP packet) into the
    /// bottleneck.
    fn data_in(&mut self, now: Time, v: usize, payload: &[u8], bytes: Vec<u8>) {
        let h = hash(payload);
        let at = self.flows[v].at;
        let rec = &mut self.recorder;
        let drops = &mut self.info.socket_drops;
        let Some(env) = take_match(&mut self.flows[v].sent, h, |e: Envelope| {
            *drops += 1;
            rec.record(at, Event::PacketDropped { seq: e.seq, frame: e.frame, kind: e.kind });
        }) else {
            self.info.unmatched += 1;
            return;
        };
        let tag = self.tag();
        self.inflight.insert(tag, (env, h));
        self.emulator.handle(now, self.flows[v].dir, false, at as u16, tag, bytes);
        self.record_fates();
    }

    /// A report from receiving end `v` into the bottleneck.
    fn report_in(&mut self, now: Time, v: usize, payload: &[u8], bytes: Vec<u8>) {
        let tag = BACK_TAG | self.tag();
        // Its IP packet's size on either form.
        let wire = DataSize::from_bytes(payload.len() as u64) + crate::emulator::IPV4_UDP_OVERHEAD;
        if let Some(p) = &mut self.flows[v].peer {
            // The peer's report, sent now: what rtcc's receiving end would
            // have recorded on sending its own.
            p.info.on_rtcp(now, payload, p.media_ssrc, &mut p.media, &mut p.twcc);
            self.recorder.record(self.flows[v].at, Event::ReportSent { lost: false, bytes: wire.bytes() });
        }
        self.report_sizes.insert(tag, (wire, hash(payload)));
        self.emulator.handle(now, self.flows[v].dir.back(), true, self.flows[v].at as u16, tag, bytes);
        self.record_fates();
    }

    /// A UDP datagram from `from` read on the emulator's `dir` input side:
    /// a sending end's data going its flow's way, or a receiving end's
    /// report going back; anything else is refused.
    fn udp_in(&mut self, now: Time, dir: Direction, from: SocketAddr, payload: &[u8], bytes: Vec<u8>) {
        if let Some(&v) = self.by_snd.get(&from).filter(|&&v| self.flows[v].dir == dir) {
            self.data_in(now, v, payload, bytes);
        } else if let Some(&v) = self.by_rcv.get(&from).filter(|&&v| self.flows[v].dir == dir.back()) {
            self.report_in(now, v, payload, bytes);
        } else {
            self.info.refused += 1;
        }
    }

    /// An IP packet read from a TUN device (`dir` Forward: from the sending
    /// namespace).
    fn packet_in(&mut self, now: Time, dir: Direction, p: &[u8]) {
        let Some(ip) = parse_ipv4(p) else {
            self.info.other_packets += 1;
            return;
        };
        let (from, payload) = (SocketAddr::from(ip.src), &p[ip.payload.clone()]);
        if ip.protocol == crate::tun::UDP {
            self.udp_in(now, dir, from, payload, p.to_vec());
            return;
        }
        // TCP: the flow by its sender's port (ACKs come back to it).
        let Some(j) = self.tcp.iter().position(|t| {
            let port = if dir == t.dir { ip.src.1 } else { ip.dst.1 };
            crate::tcp::ports(t.at).0 == port
        }) else {
            self.info.refused += 1;
            return;
        };
        let at = self.tcp[j].at;
        if dir == self.tcp[j].dir && !payload.is_empty() {
            let t = &mut self.tcp[j];
            let packet = rtcc_core::packet::Packet {
                kind: rtcc_core::packet::PacketKind::Data,
                size: DataSize::from_bytes(p.len() as u64),
                ..Default::default()
            };
            let env = Envelope {
                flow: at as u16,
                seq: t.seq,
                frame: rtcc_core::packet::NO_FRAME,
                sent: now,
                kind: packet.kind,
                packet,
            };
            t.seq += 1;
            t.sent_bytes += p.len() as u64;
            self.recorder.record(at, Event::PacketSent(&env));
            let tag = self.tag();
            self.inflight.insert(tag, (env, 0));
            self.emulator.handle(now, dir, false, at as u16, tag, p.to_vec());
        } else {
            // The handshake, ACKs and FIN: through the queue, unrecorded.
            let back = if dir != self.tcp[j].dir { BACK_TAG } else { 0 };
            let tag = back | UNTRACKED | self.tag();
            // Its handshake and FIN go its data's way; ACKs go back.
            self.emulator.handle(now, dir, back != 0, at as u16, tag, p.to_vec());
        }
        self.record_fates();
    }

    /// Reads every socket (and device) until it would block (a budget
    /// each), stamping each datagram as it is read. True if some source
    /// used its whole budget (it may hold more).
    fn read_all(&mut self, clock: &WallClock, buf: &mut [u8]) -> bool {
        let mut more = false;
        match &self.path {
            Path::Udp { .. } => {
                // The emulator's sending side (data from the sending ends),
                // then its receiving side (reports from the receiving ends).
                for a in [true, false] {
                    let dir = if a { Direction::Forward } else { Direction::Reverse };
                    let mut reads = 0;
                    while let Some((n, from, stamp)) = self.read_emu(a, buf, &mut reads, &mut more) {
                        let now = self.arrival(clock, stamp, self.emu_last);
                        self.emu_last = now;
                        self.udp_in(now, dir, from, &buf[..n], buf[..n].to_vec());
                    }
                }
            }
            Path::Tun { .. } => {
                for dir in [Direction::Forward, Direction::Reverse] {
                    let mut reads = 0;
                    while let Some(n) = self.read_tun(dir, buf, &mut reads, &mut more) {
                        let now = clock.now().max(self.emu_last);
                        self.emu_last = now;
                        self.packet_in(now, dir, &buf[..n]);
                    }
                }
            }
        }
        for v in 0..self.flows.len() {
            let i = self.flows[v].at;
            // Data (and the sender's RTCP) at the receiving end.
            let mut reads = 0;
            while let Some((n, from, stamp)) = recv(&self.flows[v].rcv, buf, &mut reads, &mut more) {
                let now = self.arrival(clock, stamp, self.flows[v].recv_last);
                self.flows[v].recv_last = now;
                let f = &mut self.flows[v];
                if from != f.report_to {
                    self.info.refused += 1;
                    continue;
                }
                let h = hash(&buf[..n]);
                let rec = &mut self.recorder;
                let drops = &mut self.info.socket_drops;
                // One the kernel lost after the bottleneck is counted in
                // `socket_drops` only: the recorder keeps it in flight.
                let env = take_match(&mut f.delivered, h, |_| *drops += 1);
                // It arrived, whether or not the end can read it.
                match &env {
                    Some(env) => rec.record(i, Event::PacketArrived { at: now, packet: env }),
                    None => self.info.unmatched += 1,
                }
                let packet = match f.codec.decode(&buf[..n]) {
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
            while let Some((n, from, stamp)) = recv(&self.flows[v].snd, buf, &mut reads, &mut more) {
                let now = self.arrival(clock, stamp, self.flows[v].send_last);
                self.flows[v].send_last = now;
                let f = &mut self.flows[v];
                if from != f.data_to {
                    self.info.refused += 1;
                    continue;
                }
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

    /// One datagram from the emulator's socket on the sending ends' side
    /// (`a`) or the receiving ends'.
    fn read_emu(
        &self,
        a: bool,
        buf: &mut [u8],
        reads: &mut usize,
        more: &mut bool,
    ) -> Option<(usize, SocketAddr, Option<i128>)> {
        let Path::Udp { emu_a, emu_b, .. } = &self.path else { return None };
        recv(if a { emu_a } else { emu_b }, buf, reads, more)
    }

    /// One IP packet from the device on `dir`'s input side.
    fn read_tun(&self, dir: Direction, buf: &mut [u8], reads: &mut usize, more: &mut bool) -> Option<usize> {
        let Path::Tun { pair } = &self.path else { return None };
        if *reads == READ_BUDGET {
            *more = true;
            return None;
        }
        *reads += 1;
        let mut f: &File = if dir == Direction::Forward { &pair.tun_a } else { &pair.tun_b };
        f.read(buf).ok().filter(|&n| n > 0)
    }

    /// Hands `bytes` out of the bottleneck towards `dir`'s far side: to the
    /// end's socket from the emulator's (UDP form) or into the far device.
    fn emit(&self, dir: Direction, to: SocketAddr, bytes: &[u8]) -> bool {
        match &self.path {
            Path::Udp { emu_a, emu_b, .. } => {
                let s = if dir == Direction::Forward { emu_b } else { emu_a };
                s.send_to(bytes, to).is_ok()
            }
            Path::Tun { pair } => {
                let mut f: &File = if dir == Direction::Forward { &pair.tun_b } else { &pair.tun_a };
                f.write(bytes).is_ok()
            }
        }
    }

    /// A datagram out of the bottleneck to flow `v`'s peer, if it has one:
    /// RTP to its RTP address (the media stream counted as RFC 3550 does),
    /// the sending end's RTCP to its RTCP address.
    fn to_peer(&mut self, v: usize, now: Time, bytes: &[u8]) {
        let Path::Udp { emu_b, .. } = &self.path else { return };
        let Some(p) = &mut self.flows[v].peer else { return };
        let rtcp = rtcc_core::datagram::is_rtcp(bytes);
        let to = if rtcp { p.process.rtcp } else { p.process.rtp };
        if emu_b.send_to(bytes, to).is_err() {
            self.info.socket_drops += 1;
            return;
        }
        if rtcp {
            p.info.sender_reports += 1;
            return;
        }
        // Read once, for both checks.
        let Ok(rtp) = rtcc_wire::rtp::RtpPacket::decode(bytes) else { return };
        if p.twcc.on_handed(now, &rtp, rtcc_core::datagram::EXT_TRANSPORT_CC) {
            p.info.twcc_handed += 1;
        }
        if rtp.ssrc == p.media_ssrc {
            p.info.media_packets += 1;
            p.media.on_packet(now, rtp.sequence_number, rtp.timestamp);
        }
    }

    /// What happened inside the emulator, to the recorder.
    fn record_fates(&mut self) {
        while let Some(fate) = self.emulator.poll_fate() {
            let i = fate.peer as usize;
            if fate.tag & UNTRACKED != 0 {
                continue;
            }
            if fate.tag & BACK_TAG != 0 {
                let size = self.report_sizes.get(&fate.tag).map_or(DataSize::ZERO, |r| r.0);
                // Which bottleneck it crossed (a fate comes only from one).
                let reverse = fate.dir == Direction::Reverse;
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
                    if let Some((e, _)) = self.inflight.remove(&fate.tag) {
                        self.recorder.record(i, Event::PacketDropped { seq: e.seq, frame: e.frame, kind: e.kind });
                    }
                }
                FateKind::Departed { queued, sojourn, lost } => {
                    let Some((e, _)) = self.inflight.get(&fate.tag) else { continue };
                    let reverse = fate.dir == Direction::Reverse;
                    let ev = Event::PacketDeparted { packet: e, queued, sojourn, lost, reverse };
                    self.recorder.record(i, ev);
                    if lost {
                        self.inflight.remove(&fate.tag);
                    }
                }
            }
        }
    }

    /// Serves everything due: the kernel TCP flows' starts and stops, each
    /// flow's ends, handing over every datagram they give, then the
    /// emulator's deliveries.
    fn serve(&mut self, clock: &WallClock) {
        let now = clock.now().max(self.emu_last);
        self.emu_last = now;
        for t in self.tcp.iter_mut() {
            if !t.k.started && now >= t.start {
                t.asks = t.k.start(t.at, t.web.as_ref().map(|_| (*clock, self.waker.clone())));
            }
            if t.k.started && !t.k.stopped {
                t.browse(now, &mut self.recorder);
            }
            if !t.k.stopped && t.stop.is_some_and(|s| now >= s) {
                t.info = t.k.info().or(t.info);
                t.k.stop();
            }
            // An end that ended on its own met an error: the run ends on it
            // (its threads are joined when the run ends, not in the loop).
            if t.k.ended_early() {
                t.k.stop();
                t.failed = true;
            }
        }
        for v in 0..self.flows.len() {
            let f = &mut self.flows[v];
            let now = clock.now().max(f.send_last).max(f.recv_last);
            (f.send_last, f.recv_last) = (now, now);
            let i = f.at;
            if let Some(c) = &mut f.camera {
                let sender = f.send.video_sender().expect("a camera feeds a video sender");
                if let Some(t) = c.poll_timeout().filter(|&t| t <= now) {
                    self.late.note(t, now);
                }
                c.handle_timeout(now, sender);
            }
            if let Some(t) = f.send.poll_timeout().filter(|&t| t <= now) {
                self.events += 1;
                f.send.handle_timeout(now);
                self.late.note(t, now);
            }
            while let Some(env) = f.send.poll_transmit(now) {
                self.events += 1;
                self.recorder.record(i, Event::PacketSent(&env));
                let bytes = match f.codec.encode(&env) {
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
                if f.snd.send_to(&bytes, f.data_to).is_ok() {
                    f.sent.push_back((hash(&bytes), env));
                } else {
                    self.info.socket_drops += 1;
                    self.recorder.record(i, Event::PacketDropped { seq: env.seq, frame: env.frame, kind: env.kind });
                }
            }
            while let Some(back) = f.recv.poll_back(now) {
                self.events += 1;
                let Back::Report(r) = back else { continue };
                if f.peer.is_some() {
                    // The peer reports; rtcc's receiving end only scores.
                    continue;
                }
                let bytes = r.bytes();
                let wire = bytes.len() as u64 + crate::emulator::IPV4_UDP_OVERHEAD.bytes();
                self.recorder.record(i, Event::ReportSent { lost: false, bytes: wire });
                if f.rcv.send_to(&bytes, f.report_to).is_err() {
                    self.info.socket_drops += 1;
                    self.recorder.record(i, Event::ReportLost);
                }
            }
        }
        self.deliver(now, clock);
    }

    /// What the emulator delivers by `now`, handed out of the bottleneck.
    /// Last in a turn, after the ends were given their time: the kernel
    /// then stamps each datagram later than its end's clock, and the stamp
    /// stands (`arrival`).
    fn deliver(&mut self, now: Time, clock: &WallClock) {
        if let Some(t) = self.emulator.poll_timeout().filter(|&t| t <= now) {
            self.late.note(t, now);
        }
        while let Some(o) = self.emulator.poll_output(now) {
            self.record_fates();
            match self.slots[o.peer as usize] {
                Slot::Video(v) => {
                    let (to, back) = (self.flows[v].rcv_addr, self.flows[v].snd_addr);
                    match o.tag & BACK_TAG == 0 {
                        true => {
                            let Some((env, h)) = self.inflight.remove(&o.tag) else { continue };
                            // Handed over now: its send time, not the turn's.
                            self.to_peer(v, clock.now().max(now), &o.bytes);
                            if self.emit(o.dir, to, &o.bytes) {
                                self.flows[v].delivered.push_back((h, env));
                            } else {
                                self.info.socket_drops += 1;
                                let ev = Event::PacketDropped { seq: env.seq, frame: env.frame, kind: env.kind };
                                self.recorder.record(o.peer as usize, ev);
                            }
                        }
                        false => {
                            let Some((_, h)) = self.report_sizes.remove(&o.tag) else { continue };
                            if self.emit(o.dir, back, &o.bytes) {
                                self.flows[v].reports.push_back(h);
                            } else {
                                self.info.socket_drops += 1;
                                self.recorder.record(o.peer as usize, Event::ReportLost);
                            }
                        }
                    }
                }
                Slot::Tcp => {
                    let any = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0);
                    let tracked = o.tag & (UNTRACKED | BACK_TAG) == 0;
                    let env = if tracked { self.inflight.remove(&o.tag).map(|e| e.0) } else { None };
                    if !self.emit(o.dir, any, &o.bytes) {
                        self.info.socket_drops += 1;
                        if let Some(env) = env {
                            let ev = Event::PacketDropped { seq: env.seq, frame: env.frame, kind: env.kind };
                            self.recorder.record(o.peer as usize, ev);
                        }
                        continue;
                    }
                    // Written into the receiving namespace: the kernel has it.
                    if let Some(env) = env {
                        self.recorder.record(o.peer as usize, Event::PacketArrived { at: now, packet: &env });
                    }
                }
            }
        }
        self.record_fates();
    }

    /// The earliest deadline of the emulator, the ends and the TCP flows'
    /// starts and stops.
    fn deadline(&self) -> Time {
        let ends = self
            .flows
            .iter()
            .flat_map(|f| {
                [f.send.poll_timeout(), f.recv.poll_timeout(), f.camera.as_ref().and_then(Camera::poll_timeout)]
            })
            .flatten();
        let tcp = self.tcp.iter().flat_map(|t| match (t.k.started, t.k.stopped) {
            (false, _) => [Some(t.start), None],
            // A web-like flow's next request, when none is under way.
            (true, false) => [t.stop, t.web.as_ref().filter(|_| t.object.is_none()).and_then(WebSource::poll_timeout)],
            _ => [None, None],
        });
        let tcp = tcp.flatten();
        ends.chain(tcp).chain(self.emulator.poll_timeout()).min().unwrap_or(Time::MAX)
    }

    /// The bin ending at `t1`, as the simulator samples it.
    fn sample_bin(&mut self, t1: Time) {
        for f in self.flows.iter_mut() {
            f.send.record_settled(f.at, t1, false, &mut self.recorder);
            f.recv.record_settled(f.at, t1, false, &mut self.recorder);
        }
        self.recorder.record(0, Event::Link { at: t1, queue_bytes: self.emulator.queue_bytes() });
        for f in self.flows.iter() {
            f.recv.record_sample(f.at, t1, &mut self.recorder);
            f.send.record_sample(f.at, t1, &mut self.recorder);
        }
        for t in self.tcp.iter_mut() {
            if t.k.started && !t.k.stopped {
                t.info = t.k.info().or(t.info);
            }
            self.recorder.record(t.at, t.received());
            self.recorder.record(t.at, Event::Traffic { at: t1, sample: &t.sample(true) });
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
fn recv(
    s: &UdpSocket,
    buf: &mut [u8],
    reads: &mut usize,
    more: &mut bool,
) -> Option<(usize, SocketAddr, Option<i128>)> {
    if *reads == READ_BUDGET {
        *more = true;
        return None;
    }
    *reads += 1;
    for _ in 0..8 {
        match crate::stamp::recv_from(s.as_raw_fd(), buf) {
            Ok(r) => return Some(r),
            Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset) => {}
            Err(_) => return None,
        }
    }
    None
}
