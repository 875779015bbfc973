//! What the queue and AQM tests share: instants and plain packets.

use rtcc_core::packet::Packet;
use rtcc_core::units::{DataSize, Time};

pub(crate) fn ms(x: i64) -> Time {
    Time::from_millis(x)
}

pub(crate) fn b(n: u64) -> DataSize {
    DataSize::from_bytes(n)
}

pub(crate) fn us(x: i64) -> Time {
    Time::from_micros(x)
}

/// `size` bytes of `flow` with sequence `seq`; the rest as `Packet::default()`.
pub(crate) fn pkt(flow: u16, seq: u64, size: u64) -> Packet {
    Packet { flow, seq, size: DataSize::from_bytes(size), ..Packet::default() }
}
