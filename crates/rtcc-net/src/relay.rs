//! The emulator between two UDP ends, in real time.
//!
//! The sending side's ends send to `listen`; the relay forwards what they
//! send, through the forward bottleneck, to `to`, each from a socket of its
//! own (so the receiving side sees one address per pair of ends, as behind
//! a NAT), and what `to` sends back to that socket goes through the
//! reverse path to the end it belongs to. Anything else is dropped and
//! counted: a datagram to a relay socket from an address it does not
//! serve, or from one peer too many.
//!
//! Timing: arrivals are stamped in user space as they are read; the loop
//! sleeps in `epoll` until about a millisecond before the next deadline and
//! spins (reading sockets) the rest of the way, so datagrams leave well
//! under a millisecond late on an idle machine. How late they left is
//! reported, as percentiles.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use rtcc_core::units::{Duration, Time};

use crate::clock::{Lateness, WallClock};
use crate::emulator::{DirStats, Direction, Emulator};

/// How close to a deadline the loop stops sleeping and spins.
const SPIN: Duration = Duration::from_millis(1);
/// The longest sleep, so `stop` is asked at least this often.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// Datagrams read from one socket per turn of the loop, so a flood on one
/// cannot starve the others or the deadlines.
const READ_BUDGET: usize = 256;
/// The largest UDP payload (RFC 768 over IPv4: 65,535 − 20 − 8).
const MAX_DATAGRAM: usize = 65_507;

/// Where the relay listens and forwards, and for how long.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// The sending side's ends send here. Loopback unless told otherwise.
    pub listen: SocketAddr,
    /// The receiving side.
    pub to: SocketAddr,
    /// How long it runs.
    pub duration: Duration,
}

/// What a relay run did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RelayReport {
    pub forward: DirStats,
    pub reverse: DirStats,
    /// Pairs of ends it served.
    pub peers: usize,
    /// Datagrams refused: from an address a relay socket does not serve,
    /// or from a peer beyond the emulator's.
    pub refused: u64,
    /// Datagrams the kernel would not send (counted, not retried).
    pub send_errors: u64,
    /// How late datagrams left after their due time, in µs: median, 99th
    /// percentile, maximum (none if nothing left).
    pub late_us: Option<[i64; 3]>,
    /// Arrival timestamps: "user" (read in user space as they arrived).
    pub timestamps: &'static str,
    /// Wall time it ran, in seconds.
    pub elapsed_s: f64,
    /// The socket error that ended the run early, if one did.
    pub error: Option<String>,
}

/// A relay bound to its sockets, ready to run.
pub struct Relay {
    emulator: Emulator,
    cfg: RelayConfig,
    poll: Poll,
    front: UdpSocket,
    /// Per peer: the sending-side end's address, and the socket its
    /// datagrams leave from towards `to`.
    peers: Vec<(SocketAddr, UdpSocket)>,
    refused: u64,
    send_errors: u64,
}

const FRONT: Token = Token(usize::MAX);

impl Relay {
    /// Binds `listen`; the peers' sockets are bound as they come.
    pub fn bind(emulator: Emulator, cfg: RelayConfig) -> io::Result<Relay> {
        let poll = Poll::new()?;
        let mut front = UdpSocket::bind(cfg.listen)?;
        poll.registry().register(&mut front, FRONT, Interest::READABLE)?;
        Ok(Relay { emulator, cfg, poll, front, peers: Vec::new(), refused: 0, send_errors: 0 })
    }

    /// Where the sending side's ends send.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.front.local_addr()
    }

    /// Runs until `duration` has passed or `stop` says so (asked at least
    /// every 50 ms).
    pub fn run(mut self, stop: &mut dyn FnMut() -> bool) -> io::Result<RelayReport> {
        let clock = WallClock::new();
        let end = Time::ZERO + self.cfg.duration;
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        let mut events = Events::with_capacity(64);
        let mut late = Lateness::default();
        let mut error = None;
        loop {
            let now = clock.now();
            if now >= end || stop() {
                break;
            }
            let more = match self.read_all(&clock, &mut buf) {
                Ok(more) => more,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            };
            self.send_due(&clock, &mut late);
            let now = clock.now();
            let deadline = self.emulator.poll_timeout().unwrap_or(end).min(end).min(now + MAX_SLEEP);
            let wait = deadline.saturating_since(now);
            // A socket left unread at its budget raises no new edge: no sleep.
            if wait > SPIN && !more {
                let sleep = std::time::Duration::from_micros((wait - SPIN).as_micros() as u64);
                if let Err(e) = self.poll.poll(&mut events, Some(sleep)) {
                    if e.kind() != io::ErrorKind::Interrupted {
                        error = Some(e.to_string());
                        break;
                    }
                }
            } else {
                // The last stretch: read what comes, then look again.
                std::thread::yield_now();
            }
        }
        Ok(RelayReport {
            forward: self.emulator.stats(Direction::Forward),
            reverse: self.emulator.stats(Direction::Reverse),
            peers: self.peers.len(),
            refused: self.refused,
            send_errors: self.send_errors,
            late_us: late.percentiles(),
            timestamps: "user",
            elapsed_s: (clock.now() - Time::ZERO).as_secs_f64(),
            error,
        })
    }

    /// Reads every socket until it would block (at most `READ_BUDGET`
    /// datagrams each), stamping each arrival as it is read. True if some
    /// socket used its whole budget (it may hold more).
    fn read_all(&mut self, clock: &WallClock, buf: &mut [u8]) -> io::Result<bool> {
        let mut more = false;
        for k in 0..=READ_BUDGET {
            if k == READ_BUDGET {
                more = true;
                break;
            }
            let (n, from) = match self.front.recv_from(buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if transient(&e) => continue,
                Err(e) => return Err(e),
            };
            // A peer beyond the emulator's, or whose socket would not bind
            // (out of descriptors), is refused, not fatal.
            let Some(peer) = self.peer_of(from).ok().flatten() else {
                self.refused += 1;
                continue;
            };
            self.emulator.handle_datagram(clock.now(), Direction::Forward, peer, 0, buf[..n].to_vec());
        }
        for peer in 0..self.peers.len() {
            for k in 0..=READ_BUDGET {
                if k == READ_BUDGET {
                    more = true;
                    break;
                }
                let (n, from) = match self.peers[peer].1.recv_from(buf) {
                    Ok(r) => r,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if transient(&e) => continue,
                    Err(e) => return Err(e),
                };
                if from != self.cfg.to {
                    self.refused += 1;
                    continue;
                }
                self.emulator.handle_datagram(clock.now(), Direction::Reverse, peer as u16, 0, buf[..n].to_vec());
            }
        }
        Ok(more)
    }

    /// The peer a sending-side address is, binding its socket the first
    /// time; None beyond the emulator's peers.
    fn peer_of(&mut self, from: SocketAddr) -> io::Result<Option<u16>> {
        if let Some(i) = self.peers.iter().position(|(a, _)| *a == from) {
            return Ok(Some(i as u16));
        }
        if self.peers.len() >= self.emulator.peers() {
            return Ok(None);
        }
        // Towards a loopback `to` from loopback; elsewhere only when the
        // user named that address.
        let ip = match (self.cfg.to.ip(), self.cfg.to.ip().is_loopback()) {
            (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (IpAddr::V4(_), false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (IpAddr::V6(_), false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let mut s = UdpSocket::bind(SocketAddr::new(ip, 0))?;
        let i = self.peers.len();
        self.poll.registry().register(&mut s, Token(i), Interest::READABLE)?;
        self.peers.push((from, s));
        Ok(Some(i as u16))
    }

    /// Hands over everything due by now.
    fn send_due(&mut self, clock: &WallClock, late: &mut Lateness) {
        let now = clock.now();
        while let Some(o) = self.emulator.poll_output(now) {
            let (socket, to) = match o.dir {
                Direction::Forward => (&self.peers[o.peer as usize].1, self.cfg.to),
                Direction::Reverse => (&self.front, self.peers[o.peer as usize].0),
            };
            match socket.send_to(&o.bytes, to) {
                Ok(_) => late.note(o.due, clock.now()),
                Err(_) => self.send_errors += 1,
            }
        }
    }
}

/// Errors a UDP socket reports for an earlier datagram (an ICMP port
/// unreachable, say), not about the socket: skip and read on.
fn transient(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted)
}
