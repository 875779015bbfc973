//! rtcc-record: what a run's drivers tell about it, turned into its results.
//!
//! The recorder (`recorder.rs`) is fed typed [`recorder::Event`]s and
//! nothing else: packets sent, dropped, departed and arrived, each end's
//! settled frame records, samples of the ends and of the bottleneck. It never
//! looks inside a simulator, an endpoint or a link, so the simulator and a
//! runtime on real sockets produce the same `summary.json` and tables.
//! What only a modelled path knows is optional: a run without the truth of
//! its bottleneck's capacity ([`CapacityTruth`]) leaves the fields that
//! need it empty, and one whose driver sends no `Event::Link` has no queue
//! samples.

pub mod frames;
pub mod metrics;
pub mod output;
pub mod recorder;

use rtcc_core::packet::{Packet, PacketKind};
use rtcc_core::units::{DataRate, Time};

pub use output::{Output, Summary};

/// A packet with what its sending end keys it by: what the wire carries
/// (`packet`, all the receiving end is given) and the sender's own
/// bookkeeping, none of which a wire could carry. The simulator carries
/// packets in it; a runtime keeps the same fields in its send log.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    /// The flow (its index in the scenario): routes it, and FQ-CoDel's
    /// flow queue stands in for the 5-tuple hash.
    pub flow: u16,
    /// The sending end's own count of its packets, from 0 (a video sender's
    /// `SentPacket::seq`, which the wire carries as the low 16 bits of it
    /// plus the flow's transport base; a TCP or UDP flow's packet number):
    /// the recorder's row. `u64::MAX` on a sender's RTCP (kind `Feedback`),
    /// which has no row.
    pub seq: u64,
    /// The frame the sender's record counts it for, `NO_FRAME` for none (a
    /// parity's frame field is its group's XOR).
    pub frame: u32,
    /// When it was sent, on the sender's clock, to the µs (the wire's
    /// abs-send-time and TSval are coarser): one-way delays in the results.
    pub sent: Time,
    /// What the sender sent it as (the recorder's kind): a probe is padding
    /// on the wire, but the sender's record says which.
    pub kind: PacketKind,
    pub packet: Packet,
}

/// The true capacity of a bottleneck, which only a modelled or emulated
/// path knows: utilisation, queue delay in ms and capacity-estimate errors
/// are measured against it.
pub trait CapacityTruth: Send + Sync {
    /// Bytes the bottleneck could deliver in `(t0, t1]` (0 for an empty
    /// window).
    fn bytes_between(&self, t0: Time, t1: Time) -> f64;
}

/// A constant rate is its own truth (whole bytes, rounded down).
impl CapacityTruth for DataRate {
    fn bytes_between(&self, t0: Time, t1: Time) -> f64 {
        (*self * (t1 - t0)).bytes() as f64
    }
}
