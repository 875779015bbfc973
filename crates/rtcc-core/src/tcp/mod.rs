//! TCP, sans-IO: a sender (RFC 5681 slow start and congestion avoidance,
//! RFC 6675 SACK loss recovery with RFC 6937 PRR as Linux, RFC 6582
//! NewReno without SACK, RFC 6298 RTO with Linux's 200 ms floor, RFC 6928
//! initial window 10, RFC 7323 timestamps for RTT) and a receiver (delayed
//! ACKs, SACK blocks, receive window), with pluggable congestion controls
//! (`reno`, `cubic`, `bbr`). Sequence numbers count segments, as Linux
//! counts its window: a segment is up to one MSS of payload.

pub mod bbr;
pub mod cc;

use crate::units::{DataSize, Time};

/// IPv4 (20) + TCP (20) + timestamp option (12, Linux's default): the
/// header on every segment and ACK.
pub const HEADER: DataSize = DataSize::from_bytes(52);

/// Payload per full segment: a 1500-byte MTU less `HEADER` (Linux's MSS
/// with timestamps on Ethernet).
pub const DEFAULT_MSS: DataSize = DataSize::from_bytes(1448);

/// One data segment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Segment number (0, 1, 2, … per connection).
    pub seq: u32,
    /// Payload bytes (≤ MSS).
    pub len: DataSize,
    /// A retransmission.
    pub retransmit: bool,
    /// Timestamp value (RFC 7323 TSval): the sender's clock when sent.
    pub ts: Time,
}

impl Segment {
    pub fn wire_size(&self) -> DataSize {
        self.len + HEADER
    }
}

/// A SACK block: segments `start..end` received (RFC 2018).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

/// Most SACK blocks that fit beside the timestamp option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// One ACK on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Next segment expected: everything below it arrived.
    pub cum: u32,
    /// SACK blocks, most recent first (RFC 2018 §4); `sack_n` in use.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_n: u8,
    /// Timestamp echo (RFC 7323 TSecr).
    pub ts_echo: Time,
    /// Receive window in segments.
    pub rwnd: u32,
}

impl Ack {
    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_n as usize]
    }
    /// Header, plus the SACK option (2 + 8 per block, padded with two NOPs).
    pub fn wire_size(&self) -> DataSize {
        let sack = if self.sack_n > 0 { 4 + 8 * self.sack_n as u64 } else { 0 };
        HEADER + DataSize::from_bytes(sack)
    }
}
