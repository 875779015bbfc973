//! Receive times from the kernel: `SO_TIMESTAMPNS` (socket(7)) stamps each
//! datagram when the kernel queued it on the socket, so a datagram read
//! late (the loop busy with something else) still gets the time it
//! arrived. The stamp is on CLOCK_REALTIME; [`Stamps::at`] maps it onto
//! the run's monotonic clock by its age when read, so a step of the wall
//! clock moves no arrival by more than the read itself.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;
use std::time::{SystemTime, UNIX_EPOCH};

use rtcc_core::units::{Duration, Time};

use crate::clock::WallClock;

/// Asks the kernel to stamp what `fd` receives; false if it will not.
pub fn enable(fd: RawFd) -> bool {
    let one: libc::c_int = 1;
    // SAFETY: an int option on a socket.
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one as *const _ as *const _, 4) == 0 }
}

/// One datagram from `fd` into `buf`: its length, its source and the
/// kernel's stamp (ns since the Unix epoch) when there is one.
pub fn recv_from(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, SocketAddr, Option<i128>)> {
    // SAFETY: zeroed C structs are valid; every pointer set below lives
    // across the call and its length is the buffer's.
    unsafe {
        let mut addr: libc::sockaddr_storage = std::mem::zeroed();
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut _, iov_len: buf.len() };
        // Room for one timespec cmsg and more, 8-byte aligned.
        let mut control = [0u64; 16];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = &mut addr as *mut _ as *mut _;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as u32;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut _;
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = libc::recvmsg(fd, &mut msg, 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let from = match addr.ss_family as i32 {
            libc::AF_INET => {
                let a = &*(&addr as *const _ as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
                SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(a.sin_port)))
            }
            libc::AF_INET6 => {
                let a = &*(&addr as *const _ as *const libc::sockaddr_in6);
                let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
                SocketAddr::V6(SocketAddrV6::new(
                    ip,
                    u16::from_be(a.sin6_port),
                    u32::from_be(a.sin6_flowinfo),
                    a.sin6_scope_id,
                ))
            }
            _ => SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)),
        };
        let mut stamp = None;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                stamp = Some(ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n as usize, from, stamp))
    }
}

/// Maps kernel stamps onto the run's clock, and counts which reads had one.
#[derive(Clone, Debug, Default)]
pub struct Stamps {
    pub kernel: u64,
    pub user: u64,
    /// Kernel stamps a driver moved later (its own rule; see `live`).
    pub clamped: u64,
}

impl Stamps {
    /// When a datagram read now with `stamp` arrived, on `clock`; now if
    /// it has no stamp (or one from the future).
    pub fn at(&mut self, clock: &WallClock, stamp: Option<i128>) -> Time {
        let now = clock.now();
        let Some(s) = stamp else {
            self.user += 1;
            return now;
        };
        self.kernel += 1;
        let real = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        let age_us = ((real - s) / 1_000).clamp(0, i64::MAX as i128) as i64;
        Time::ZERO.max(now - Duration::from_micros(age_us))
    }

    /// "kernel" (every read had a kernel stamp), "user" (none had),
    /// "mixed", or "none" (no socket was read).
    pub fn source(&self) -> &'static str {
        match (self.kernel, self.user) {
            (0, 0) => "none",
            (_, 0) if self.kernel > 0 => "kernel",
            (0, _) => "user",
            _ => "mixed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram read 30 ms after it came is stamped when it came.
    #[test]
    fn a_late_read_keeps_the_arrival_time() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        use std::os::fd::AsRawFd;
        assert!(enable(rx.as_raw_fd()));
        // The kernel turns receive stamping on asynchronously (net_enable_timestamp
        // defers it to a work item); until then it stamps at the read.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let clock = WallClock::new();
        tx.send_to(b"hi", rx.local_addr().unwrap()).unwrap();
        let sent = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let mut buf = [0u8; 16];
        let (n, from, stamp) = recv_from(rx.as_raw_fd(), &mut buf).unwrap();
        assert_eq!((&buf[..n], from), (&b"hi"[..], tx.local_addr().unwrap()));
        let mut s = Stamps::default();
        let at = s.at(&clock, stamp);
        let read = clock.now();
        assert_eq!(s.source(), "kernel");
        assert!(at >= sent - Duration::from_millis(1) && at < sent + Duration::from_millis(5), "{at:?} vs {sent:?}");
        assert!(read - at >= Duration::from_millis(29), "{:?}", read - at);
        assert!(s.at(&clock, None) >= read);
        assert_eq!(s.source(), "mixed");
    }
}
