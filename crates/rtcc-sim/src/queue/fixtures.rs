//! What the queue and AQM tests share: instants and plain packets.

use crate::endpoint::Envelope;
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
pub(crate) fn pkt(flow: u16, seq: u64, size: u64) -> Envelope {
    let packet = Packet { size: DataSize::from_bytes(size), ..Packet::default() };
    Envelope { flow, seq, frame: rtcc_core::packet::NO_FRAME, sent: Time::ZERO, kind: packet.kind, packet }
}
