//! rtcc-core: the sans-IO heart of rtcc. Controllers, senders and receivers
//! are pure state machines: they never read a clock, sleep or touch a socket.
//! Time comes in as an argument; outputs are polled. The simulator and the
//! real-time runtime are two drivers of these same objects.

pub mod adapter;
pub mod content;
pub mod controller;
pub mod datagram;
pub mod encoder;
pub use controller::estimator;
pub mod bbr;
#[cfg(feature = "sim-layout")]
pub mod cache;
pub mod fec;
pub mod feedback;
pub mod pacer;
pub mod packet;
pub mod pair;
pub mod playout;
pub mod quality;
pub mod receiver;
pub mod resolution;
pub mod rng;
pub mod rtp_payload;
pub mod sender;
pub mod sr;
pub mod tcp;
pub mod traffic;
pub mod units;

pub use controller::{Controller, ControllerContext, Decision, Params};
pub use feedback::{Feedback, PacketResult, ReceiverReport};
pub use packet::{Packet, PacketKind};
pub use units::{DataRate, DataSize, Duration, Time};
