//! rtcc-net: rtcc on real sockets in real time.
//!
//! - [`camera`]: a real codec on a worker thread, fed by a camera clock.
//! - [`clock`]: wall time enters at one boundary, a monotonic clock mapped
//!   to rtcc's `Time`.
//! - [`emulator`]: a bottleneck as a sans-IO object over datagram bytes,
//!   made of the simulator's own [`Link`](rtcc_sim::link::Link) (queue
//!   discipline, capacity model or trace, loss after the queue) and
//!   [`Path`](rtcc_sim::path::Path) (propagation, jitter, loss on the way
//!   back), so a scenario's `[link]` means the same on a socket as in a
//!   simulated run.
//! - [`relay`]: that emulator between two UDP ends, driven in real time: no
//!   root and no kernel qdisc.
//! - [`live`]: a scenario's video flows on UDP sockets in real time through
//!   that emulator, recorded by the same recorder as a simulated run.
//! - [`stamp`]: receive times from the kernel (`SO_TIMESTAMPNS`).
//! - [`tun`]: the same emulator between two TUN devices in network
//!   namespaces of the run's own, so the kernel's traffic crosses it too.
//! - [`tcp`]: a `kind = "tcp"` flow as the kernel's own TCP across it.
//! - [`peer`]: another implementation (GStreamer) as a flow's receiving
//!   end, started as a program of its own.

pub mod camera;
pub mod clock;
pub mod emulator;
pub mod live;
pub mod peer;
pub mod relay;
pub mod stamp;
pub mod tcp;
pub mod tun;
