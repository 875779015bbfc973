//! A `kind = "tcp"` flow run live: the kernel's own TCP, a bulk sender in
//! the TUN bottleneck's sending namespace and a reader in the receiving
//! one, with the congestion control the scenario names set by
//! `TCP_CONGESTION` (tcp(7)) and read back. Each end runs on a thread of
//! its own and blocks only in `poll(2)` for at most 50 ms, so it sees the
//! run's stop within that.
//!
//! What the kernel says about the connection (`TCP_INFO`) becomes the
//! recorder's cross-traffic sample; what crosses the bottleneck is seen by
//! the driver as IP packets.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender as Tx};
use std::sync::Arc;
use std::thread::JoinHandle;

use rtcc_core::units::Time;

use crate::clock::WallClock;

use crate::tun::Netns;

/// The ports of flow `i`: the sender's (in A) and the receiver's (in B),
/// by which the driver knows the flow's packets.
pub fn ports(i: usize) -> (u16, u16) {
    (30_000 + i as u16, 20_000 + i as u16)
}

const WAIT_MS: i32 = 50;
const CHUNK: usize = 64 * 1024;

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(r)
}

fn socket_in(ns: &Netns) -> io::Result<OwnedFd> {
    ns.run(|| {
        // SAFETY: plain socket call; the descriptor is owned below.
        let fd = check(
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) },
            "socket",
        )?;
        // SAFETY: a descriptor just made.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    })
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
        sin_zero: [0; 8],
    }
}

fn bind(fd: RawFd, a: SocketAddrV4) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: an int option.
    unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const _ as *const _, 4);
    }
    let sa = sockaddr(a);
    // SAFETY: a full sockaddr_in.
    check(
        unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) },
        "bind",
    )
    .map(drop)
}

/// Segments of Ethernet's MSS (1460 B, 1448 B of data with timestamps),
/// whatever the devices' MTU: set on both sockets before the handshake, it
/// is also the MSS each announces (tcp(7) TCP_MAXSEG).
const MSS: libc::c_int = 1460;

fn maxseg(fd: RawFd) -> io::Result<()> {
    // SAFETY: an int option.
    check(
        unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &MSS as *const _ as *const _, 4) },
        "TCP_MAXSEG",
    )
    .map(drop)
}

/// Sets the socket's congestion control and reads back what it got.
fn congestion(fd: RawFd, name: &str) -> io::Result<String> {
    // SAFETY: the name's bytes and length.
    check(
        unsafe {
            libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const _, name.len() as u32)
        },
        "TCP_CONGESTION",
    )?;
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: a buffer of `len` bytes.
    check(
        unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr() as *mut _, &mut len) },
        "TCP_CONGESTION",
    )?;
    let got = &buf[..len as usize];
    let end = got.iter().position(|&b| b == 0).unwrap_or(got.len());
    Ok(String::from_utf8_lossy(&got[..end]).into_owned())
}

/// Waits up to 50 ms for `events` on `fd`.
fn wait(fd: RawFd, events: i16) -> io::Result<bool> {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one pollfd.
    match unsafe { libc::poll(&mut p, 1, WAIT_MS) } {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(false);
            }
            Err(e)
        }
    }
}

fn would_block(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted)
}

/// What `TCP_INFO` (include/uapi/linux/tcp.h) says, in the fields used.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct TcpInfo {
    /// Payload bytes per full segment (`tcpi_snd_mss`).
    pub mss: u64,
    pub cwnd_bytes: u64,
    pub in_flight_bytes: u64,
    /// Smoothed RTT and the minimum seen, in µs (None before the first
    /// sample: the kernel says 0 and ~0).
    pub srtt_us: Option<u64>,
    pub min_rtt_us: Option<u64>,
    /// None while the kernel has set none (it says ~0: unlimited).
    pub pacing_rate_bps: Option<u64>,
    /// Segments sent again over the connection's life.
    pub total_retrans: u64,
    /// Retransmission timeouts (`tcpi_total_rto`, Linux ≥ 6.7); None when
    /// the kernel does not say.
    pub total_rto: Option<u64>,
    pub bytes_acked: u64,
}

/// `TCP_INFO` of an established connection (`tcpi_state`
/// TCP_ESTABLISHED); None before, after or if the kernel will not say.
fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    let mut b = [0u8; 256];
    let mut len = b.len() as libc::socklen_t;
    // SAFETY: a buffer of `len` bytes; the kernel writes at most that.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, b.as_mut_ptr() as *mut _, &mut len) };
    let len = len as usize;
    // tcpi_state (include/net/tcp_states.h): 1 is TCP_ESTABLISHED.
    if r != 0 || len < 128 || b[0] != 1 {
        return None;
    }
    let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().expect("4 bytes")) as u64;
    let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let u16_at = |o: usize| u16::from_ne_bytes(b[o..o + 2].try_into().expect("2 bytes")) as u64;
    let mss = u32_at(16);
    // tcp_packets_in_flight(): unacked - (sacked + lost) + retrans.
    let flight = (u32_at(24) + u32_at(36)).saturating_sub(u32_at(28) + u32_at(32));
    Some(TcpInfo {
        mss,
        cwnd_bytes: u32_at(80) * mss,
        in_flight_bytes: flight * mss,
        srtt_us: Some(u32_at(68)).filter(|&r| r > 0),
        min_rtt_us: Some(u32_at(148)).filter(|&r| len >= 152 && r > 0 && r != u32::MAX as u64),
        pacing_rate_bps: Some(u64_at(104)).filter(|&r| r > 0 && r != u64::MAX).map(|r| r.saturating_mul(8)),
        total_retrans: u32_at(100),
        total_rto: (len >= 242).then(|| u16_at(240)),
        bytes_acked: u64_at(120),
    })
}

/// One kernel TCP connection across the TUN bottleneck.
pub struct KernelTcp {
    /// The receiving end's address.
    to: Ipv4Addr,
    /// The congestion control the scenario asked for and the one the
    /// kernel reports for the socket.
    pub cc_asked: String,
    pub cc: String,
    sender: Arc<OwnedFd>,
    listener: Option<OwnedFd>,
    stop: Arc<AtomicBool>,
    /// Payload bytes the receiving application has read.
    read: Arc<AtomicU64>,
    threads: Vec<JoinHandle<io::Result<()>>>,
    pub started: bool,
    pub stopped: bool,
}

impl KernelTcp {
    /// Both sockets made and bound (not yet connected): the receiver's
    /// listening in namespace `to.0` at `to.1`, the sender's in `from.0`
    /// at `from.1` with `cc`. An error names what the kernel refused.
    /// Errors come as (the scenario field to name, why).
    pub fn new(
        i: usize,
        from: (&Netns, Ipv4Addr),
        to: (&Netns, Ipv4Addr),
        cc: &str,
    ) -> Result<KernelTcp, (&'static str, String)> {
        let (sport, dport) = ports(i);
        let sock = |e: io::Error| ("kind", format!("the kernel's TCP: {e}"));
        let listener = socket_in(to.0).map_err(sock)?;
        maxseg(listener.as_raw_fd()).map_err(sock)?;
        bind(listener.as_raw_fd(), SocketAddrV4::new(to.1, dport)).map_err(sock)?;
        // SAFETY: a bound stream socket.
        check(unsafe { libc::listen(listener.as_raw_fd(), 1) }, "listen").map_err(sock)?;
        let sender = socket_in(from.0).map_err(sock)?;
        maxseg(sender.as_raw_fd()).map_err(sock)?;
        bind(sender.as_raw_fd(), SocketAddrV4::new(from.1, sport)).map_err(sock)?;
        let got = congestion(sender.as_raw_fd(), cc).map_err(|e| {
            let have =
                std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
            ("cc", format!("the kernel would not give TCP '{cc}' ({e}); it has: {}", have.trim()))
        })?;
        Ok(KernelTcp {
            to: to.1,
            cc_asked: cc.into(),
            cc: got,
            sender: Arc::new(sender),
            listener: Some(listener),
            stop: Arc::new(AtomicBool::new(false)),
            read: Arc::new(AtomicU64::new(0)),
            threads: Vec::new(),
            started: false,
            stopped: false,
        })
    }

    /// Connects and starts sending (bulk, as long as the flow lasts) and
    /// reading.
    /// Web-like (`web`): the client asks for objects through the channel
    /// returned, and says through it when each was read whole (on
    /// `clock`).
    pub fn start(&mut self, i: usize, web: Option<(WallClock, Arc<mio::Waker>)>) -> Option<(Tx<Ask>, Receiver<Done>)> {
        self.started = true;
        let (_, dport) = ports(i);
        let listener = self.listener.take().expect("started once");
        let (stop, read) = (self.stop.clone(), self.read.clone());
        let (client, ours) = match web {
            Some((clock, waker)) => {
                let (ask, asks) = channel();
                let (done, dones) = channel();
                (Some((asks, done, clock, waker)), Some((ask, dones)))
            }
            None => (None, None),
        };
        let is_web = client.is_some();
        self.threads.push(std::thread::spawn(move || receive(listener, &stop, &read, client)));
        let (stop, fd, to) = (self.stop.clone(), self.sender.clone(), self.to);
        self.threads
            .push(std::thread::spawn(move || send(fd.as_raw_fd(), SocketAddrV4::new(to, dport), &stop, is_web)));
        ours
    }

    /// Stops sending at once (the sending socket shut down: nothing more
    /// leaves it) without waiting for the ends' threads, which see the
    /// flag within 50 ms and are joined by `finish`.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.stop.store(true, Ordering::Relaxed);
        // SAFETY: shutdown on an open socket.
        unsafe { libc::shutdown(self.sender.as_raw_fd(), libc::SHUT_RDWR) };
    }

    /// Whether an end's thread ended while the flow runs (an error: both
    /// run until stopped).
    pub fn ended_early(&self) -> bool {
        !self.stopped && self.threads.iter().any(JoinHandle::is_finished)
    }

    /// Stops both ends and joins their threads; the error an end ended
    /// with, if any.
    pub fn finish(&mut self) -> Option<String> {
        if !self.stopped {
            self.stop();
        }
        let mut err = None;
        for t in self.threads.drain(..) {
            match t.join() {
                Ok(Err(e)) => err = err.or(Some(e.to_string())),
                Err(_) => err = err.or(Some("a TCP end's thread panicked".into())),
                Ok(Ok(())) => {}
            }
        }
        err
    }

    pub fn info(&self) -> Option<TcpInfo> {
        tcp_info(self.sender.as_raw_fd())
    }

    /// Payload read by the receiving application, with each segment's
    /// TCP/IP header (52 bytes with timestamps) added at the sender's MSS,
    /// as the simulator's TCP counts delivered bytes.
    pub fn delivered_wire(&self, info: Option<&TcpInfo>) -> u64 {
        let read = self.read.load(Ordering::Relaxed);
        match info.map_or(0, |i| i.mss) {
            0 => read,
            m => read + read.div_ceil(m) * rtcc_core::tcp::HEADER.bytes(),
        }
    }
}

impl Drop for KernelTcp {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The server's side (the sending namespace): connects, then sends — without end
/// (bulk), or each object the client asks for (web-like: an 8-byte
/// big-endian size per request, answered in order).
fn send(fd: RawFd, to: SocketAddrV4, stop: &AtomicBool, web: bool) -> io::Result<()> {
    let sa = sockaddr(to);
    // SAFETY: a full sockaddr_in.
    let r = unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::new(e.kind(), format!("connect: {e}")));
        }
    }
    let data = vec![0x5au8; CHUNK];
    let mut connected = false;
    // Bytes still to send, and a request read in part.
    let mut owed: u64 = if web { 0 } else { u64::MAX };
    let (mut req, mut have) = ([0u8; 8], 0usize);
    // An error after the stop is the stop's shutdown under the thread.
    let fail = |what: &str, e: io::Error| match stop.load(Ordering::Relaxed) {
        true => Ok(()),
        false => Err(io::Error::new(e.kind(), format!("{what}: {e}"))),
    };
    while !stop.load(Ordering::Relaxed) {
        let events = match connected {
            false => libc::POLLOUT,
            true => (if owed > 0 { libc::POLLOUT } else { 0 }) | (if web { libc::POLLIN } else { 0 }),
        };
        if !wait(fd, events)? {
            continue;
        }
        if !connected {
            let mut err: libc::c_int = 0;
            let mut len = 4;
            // SAFETY: an int option.
            unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut _ as *mut _, &mut len) };
            if err != 0 {
                return fail("connect", io::Error::from_raw_os_error(err));
            }
            connected = true;
        }
        while web {
            // SAFETY: the request buffer's free part.
            let n = unsafe { libc::recv(fd, req[have..].as_mut_ptr() as *mut _, 8 - have, 0) };
            match n {
                0 => return Ok(()),
                n if n > 0 => {
                    have += n as usize;
                    if have == 8 {
                        owed = owed.saturating_add(u64::from_be_bytes(req));
                        have = 0;
                    }
                }
                _ => {
                    let e = io::Error::last_os_error();
                    if would_block(&e) {
                        break;
                    }
                    return fail("recv", e);
                }
            }
        }
        while owed > 0 {
            let len = owed.min(CHUNK as u64) as usize;
            // SAFETY: a buffer of at least `len` bytes.
            let n = unsafe { libc::send(fd, data.as_ptr() as *const _, len, libc::MSG_NOSIGNAL) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if would_block(&e) {
                    break;
                }
                return fail("send", e);
            }
            if owed != u64::MAX {
                owed -= n as u64;
            }
        }
    }
    Ok(())
}

/// A web-like client's errand: the object's size; and its answer, when
/// the object's last byte was read.
pub type Ask = u64;
pub type Done = Time;

/// The client's side (namespace B): accepts, then reads — everything
/// (bulk), or each object asked for through `web`: the request written,
/// the object's bytes read, its completion sent back.
fn receive(
    listener: OwnedFd,
    stop: &AtomicBool,
    read: &AtomicU64,
    web: Option<(Receiver<Ask>, Tx<Done>, WallClock, Arc<mio::Waker>)>,
) -> io::Result<()> {
    let conn = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if !wait(listener.as_raw_fd(), libc::POLLIN)? {
            continue;
        }
        // SAFETY: accept on a listening socket; no address wanted.
        let fd = unsafe {
            libc::accept4(
                listener.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        if fd >= 0 {
            // SAFETY: a descriptor just accepted.
            break unsafe { OwnedFd::from_raw_fd(fd) };
        }
        let e = io::Error::last_os_error();
        if !would_block(&e) {
            return Err(io::Error::new(e.kind(), format!("accept: {e}")));
        }
    };
    let mut buf = vec![0u8; CHUNK];
    // The object under way: bytes still to come.
    let mut due: Option<u64> = None;
    while !stop.load(Ordering::Relaxed) {
        if let Some((asks, done, clock, waker)) = &web {
            if due.is_none() {
                match asks.recv_timeout(std::time::Duration::from_millis(WAIT_MS as u64)) {
                    Ok(size) => {
                        write_all(conn.as_raw_fd(), &size.to_be_bytes(), stop)?;
                        due = Some(size);
                        if size == 0 {
                            let _ = done.send(clock.now());
                            let _ = waker.wake();
                            due = None;
                        }
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                }
                continue;
            }
        }
        if !wait(conn.as_raw_fd(), libc::POLLIN)? {
            continue;
        }
        loop {
            // SAFETY: a buffer of CHUNK bytes.
            let n = unsafe { libc::recv(conn.as_raw_fd(), buf.as_mut_ptr() as *mut _, CHUNK, 0) };
            match n {
                0 => return Ok(()),
                n if n > 0 => {
                    read.fetch_add(n as u64, Ordering::Relaxed);
                    if let (Some(left), Some((_, done, clock, waker))) = (due.as_mut(), &web) {
                        *left = left.saturating_sub(n as u64);
                        if *left == 0 {
                            // The loop may be asleep: wake it for the next request.
                            let _ = done.send(clock.now());
                            let _ = waker.wake();
                            due = None;
                        }
                    }
                }
                _ => {
                    let e = io::Error::last_os_error();
                    if would_block(&e) {
                        break;
                    }
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    return Err(io::Error::new(e.kind(), format!("recv: {e}")));
                }
            }
        }
    }
    Ok(())
}

/// Writes all of `bytes` (a request: a few bytes into an empty buffer).
fn write_all(fd: RawFd, mut bytes: &[u8], stop: &AtomicBool) -> io::Result<()> {
    while !bytes.is_empty() {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        // SAFETY: the bytes left.
        let n = unsafe { libc::send(fd, bytes.as_ptr() as *const _, bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if would_block(&e) {
                wait(fd, libc::POLLOUT)?;
                continue;
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            return Err(io::Error::new(e.kind(), format!("send: {e}")));
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
