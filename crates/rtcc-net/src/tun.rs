//! The TUN form of the bottleneck, as Mahimahi builds its shells: two
//! network namespaces of the run's own, each with one point-to-point TUN
//! device, and this process between the two devices. Whatever a program
//! in one namespace sends to the other's address (an rtcc end's UDP, the
//! kernel's TCP) leaves its namespace as an IP packet that this process
//! reads, passes through the emulator, and writes into the other
//! namespace's device. No route, address or firewall rule outside the two
//! namespaces is touched, and both vanish with the process.
//!
//! Needs CAP_SYS_ADMIN (to make and enter network namespaces) and
//! /dev/net/tun; [`TunPair::new`] says which is missing. `RTCC_NO_TUN=1`
//! makes a machine that has them behave as one that has not.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The sending side's address (namespace A) and the receiving side's (B):
/// addresses that exist only inside the two namespaces.
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// The devices' MTU: the largest IPv4 packet, so no datagram a flow sends
/// is fragmented (a flow's `mtu` may exceed Ethernet's, as it may on the
/// UDP form and in the simulator, which carry a datagram whole). TCP's
/// segments stay Ethernet's by `TCP_MAXSEG` (`tcp.rs`).
pub const MTU: usize = 65_535;
const DEVICE: &str = "rtcc0";

/// A network namespace, kept alive by an open handle on it.
pub struct Netns {
    fd: OwnedFd,
}

fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl Netns {
    /// A new, empty network namespace (made on a thread of its own, which
    /// alone enters it).
    pub fn new() -> io::Result<Netns> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: unshare affects this thread only for CLONE_NEWNET.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    return Err(os_error("unshare(CLONE_NEWNET)"));
                }
                let f = File::open("/proc/thread-self/ns/net")?;
                Ok(Netns { fd: f.into() })
            })
            .join()
            .expect("no panic in unshare")
        })
    }

    /// Runs `f` on a thread inside this namespace: sockets and devices it
    /// makes belong to the namespace for good.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        std::thread::scope(|s| s.spawn(|| self.enter().and_then(|_| f())).join().expect("no panic in the namespace"))
    }

    /// Moves the calling thread into this namespace for good: only for
    /// `run`'s own threads.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: a valid namespace fd; affects the calling thread only.
        if unsafe { libc::setns(self.fd.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(os_error("setns"));
        }
        Ok(())
    }
}

/// `struct ifreq`: a device name and a 24-byte union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: [u8; 24],
}

impl IfReq {
    fn new(name: &str) -> IfReq {
        let mut r = IfReq { name: [0; libc::IFNAMSIZ], data: [0; 24] };
        r.name[..name.len()].copy_from_slice(name.as_bytes());
        r
    }

    fn set_addr(&mut self, a: Ipv4Addr) {
        // struct sockaddr_in: family (host order), port, address.
        self.data[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        self.data[2..4].fill(0);
        self.data[4..8].copy_from_slice(&a.octets());
    }

    fn set_short(&mut self, v: i16) {
        self.data[..2].copy_from_slice(&v.to_ne_bytes());
    }

    fn set_int(&mut self, v: i32) {
        self.data[..4].copy_from_slice(&v.to_ne_bytes());
    }
}

fn ioctl(fd: i32, req: libc::c_ulong, r: &mut IfReq, what: &str) -> io::Result<()> {
    // SAFETY: `r` is a full `struct ifreq` for every request used here.
    if unsafe { libc::ioctl(fd, req as _, r as *mut IfReq) } != 0 {
        return Err(os_error(what));
    }
    Ok(())
}

/// In the calling thread's namespace: a TUN device with `local` and a
/// point-to-point route to `peer`, up, and its file (non-blocking, one IP
/// packet per read or write, no packet-information prefix).
fn open_tun(local: Ipv4Addr, peer: Ipv4Addr) -> io::Result<File> {
    let path = CStr::from_bytes_with_nul(b"/dev/net/tun\0").expect("a C string");
    // SAFETY: a valid C path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(os_error("open /dev/net/tun"));
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    let tun = unsafe { File::from_raw_fd(fd) };
    let mut r = IfReq::new(DEVICE);
    r.set_short((libc::IFF_TUN | libc::IFF_NO_PI) as i16);
    ioctl(fd, libc::TUNSETIFF as _, &mut r, "TUNSETIFF")?;
    // Addresses and flags go through any socket of the namespace.
    // SAFETY: plain socket call.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if s < 0 {
        return Err(os_error("socket"));
    }
    // SAFETY: as above.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    let s = s.as_raw_fd();
    let mut r = IfReq::new(DEVICE);
    r.set_addr(local);
    ioctl(s, libc::SIOCSIFADDR, &mut r, "SIOCSIFADDR")?;
    let mut r = IfReq::new(DEVICE);
    r.set_addr(peer);
    ioctl(s, libc::SIOCSIFDSTADDR, &mut r, "SIOCSIFDSTADDR")?;
    let mut r = IfReq::new(DEVICE);
    r.set_int(MTU as i32);
    ioctl(s, libc::SIOCSIFMTU, &mut r, "SIOCSIFMTU")?;
    let mut r = IfReq::new(DEVICE);
    ioctl(s, libc::SIOCGIFFLAGS, &mut r, "SIOCGIFFLAGS")?;
    let flags = i16::from_ne_bytes([r.data[0], r.data[1]]) | (libc::IFF_UP | libc::IFF_RUNNING) as i16;
    r.set_short(flags);
    ioctl(s, libc::SIOCSIFFLAGS, &mut r, "SIOCSIFFLAGS")?;
    Ok(tun)
}

/// The two namespaces and their devices.
pub struct TunPair {
    /// The sending ends' side (address [`ADDR_A`]) and the receiving ends'
    /// ([`ADDR_B`]).
    pub a: Netns,
    pub b: Netns,
    /// What A sends to B is read from `tun_a` and written to `tun_b`, and
    /// the other way round.
    pub tun_a: File,
    pub tun_b: File,
}

impl TunPair {
    /// Both namespaces with their devices up, or why not: `unavailable`
    /// when the machine does not allow them (no privilege, no TUN device),
    /// an error otherwise. `RTCC_NO_TUN=1` in the environment makes it
    /// answer as a machine without TUN would (to check what a run does
    /// there).
    pub fn new() -> Result<TunPair, TunError> {
        if std::env::var_os("RTCC_NO_TUN").is_some_and(|v| !v.is_empty() && v != "0") {
            let reason = "the TUN bottleneck is not available: RTCC_NO_TUN is set".into();
            return Err(TunError { unavailable: true, reason });
        }
        let why = |e: io::Error| {
            let hint = match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => Some("it needs root, or CAP_SYS_ADMIN and CAP_NET_ADMIN"),
                Some(libc::ENOENT) | Some(libc::ENODEV) => Some("this kernel has no TUN device"),
                _ => None,
            };
            match hint {
                Some(h) => TunError {
                    unavailable: true,
                    reason: format!("the TUN bottleneck is not available on this machine: {e} ({h})"),
                },
                None => TunError { unavailable: false, reason: format!("the TUN bottleneck failed: {e}") },
            }
        };
        let a = Netns::new().map_err(why)?;
        let b = Netns::new().map_err(why)?;
        let tun_a = a.run(|| open_tun(ADDR_A, ADDR_B)).map_err(why)?;
        let tun_b = b.run(|| open_tun(ADDR_B, ADDR_A)).map_err(why)?;
        Ok(TunPair { a, b, tun_a, tun_b })
    }
}

/// Why the TUN bottleneck could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunError {
    /// The machine does not allow it (as opposed to a failure).
    pub unavailable: bool,
    pub reason: String,
}

impl std::fmt::Display for TunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What the driver needs from an IPv4 packet's headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// 6 (TCP) or 17 (UDP); others are passed on untracked.
    pub protocol: u8,
    pub src: (Ipv4Addr, u16),
    pub dst: (Ipv4Addr, u16),
    /// Where the transport payload starts and how long it is (UDP's
    /// datagram, TCP's segment data).
    pub payload: std::ops::Range<usize>,
}

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;

/// The headers of an IPv4 packet (RFC 791 §3.1) carrying UDP (RFC 768) or
/// TCP (RFC 9293 §3.1); None for anything else or anything malformed: a
/// fragment, a length that disagrees with the bytes, IPv6.
pub fn parse_ipv4(p: &[u8]) -> Option<Ipv4Info> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([p[2], p[3]]) as usize;
    // More fragments, or a fragment offset: not a whole datagram.
    let frag = u16::from_be_bytes([p[6], p[7]]);
    if ihl < 20 || total < ihl || total > p.len() || frag & 0x3fff != 0 {
        return None;
    }
    let protocol = p[9];
    let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
    let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
    let t = &p[ihl..total];
    let port = |i: usize| u16::from_be_bytes([t[i], t[i + 1]]);
    let start = match protocol {
        UDP if t.len() >= 8 && (u16::from_be_bytes([t[4], t[5]]) as usize) == t.len() => ihl + 8,
        TCP if t.len() >= 20 => {
            let off = (t[12] >> 4) as usize * 4;
            if off < 20 || off > t.len() {
                return None;
            }
            ihl + off
        }
        _ => return None,
    };
    Some(Ipv4Info { protocol, src: (src, port(0)), dst: (dst, port(2)), payload: start..total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(payload: &[u8]) -> Vec<u8> {
        let total = 28 + payload.len();
        let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8, 0, 0, 0x40, 0, 64, UDP, 0, 0];
        p.extend_from_slice(&ADDR_A.octets());
        p.extend_from_slice(&ADDR_B.octets());
        let ulen = (8 + payload.len()) as u16;
        p.extend_from_slice(&[0x13, 0x88, 0x13, 0x89]);
        p.extend_from_slice(&ulen.to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(payload);
        p
    }

    #[test]
    fn parses_udp_and_refuses_what_is_malformed() {
        let p = udp(b"hello");
        let i = parse_ipv4(&p).expect("a UDP packet");
        assert_eq!(i.protocol, UDP);
        assert_eq!(i.src, (ADDR_A, 5000));
        assert_eq!(i.dst, (ADDR_B, 5001));
        assert_eq!(&p[i.payload], b"hello");
        // Every truncation, a fragment, IPv6, a UDP length that lies.
        for n in 0..p.len() {
            assert_eq!(parse_ipv4(&p[..n]), None, "truncated to {n}");
        }
        let mut f = p.clone();
        f[6] = 0x20;
        assert_eq!(parse_ipv4(&f), None);
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert_eq!(parse_ipv4(&v6), None);
        let mut lie = p.clone();
        lie[25] += 1;
        assert_eq!(parse_ipv4(&lie), None);
    }

    #[test]
    fn parses_tcp_data_offset() {
        // A TCP header with 12 bytes of options (timestamps), 3 of data.
        let mut p = vec![0x45, 0, 0, 55, 0, 0, 0x40, 0, 64, TCP, 0, 0];
        p.extend_from_slice(&ADDR_A.octets());
        p.extend_from_slice(&ADDR_B.octets());
        let mut t = vec![0u8; 32];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&20000u16.to_be_bytes());
        t[12] = 8 << 4;
        p.extend_from_slice(&t);
        p.extend_from_slice(b"abc");
        let i = parse_ipv4(&p).expect("a TCP packet");
        assert_eq!((i.protocol, i.src.1, i.dst.1), (TCP, 40000, 20000));
        assert_eq!(&p[i.payload], b"abc");
        p[32] = 15 << 4;
        assert_eq!(parse_ipv4(&p), None, "a data offset past the end");
    }
}
