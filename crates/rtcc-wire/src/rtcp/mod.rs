//! RTCP (RFC 3550 §6) and its feedback extensions: each packet type is its own
//! struct implementing [`Wire`]; [`Compound`] is the datagram, a sequence of
//! packets (RFC 3550 §6.1; reduced-size per RFC 5506, so any packet may come
//! first and a lone packet is a compound of one).
//!
//! Ranges: fields narrower than their Rust type (5-bit counts, 24-bit signed
//! cumulative loss, REMB's 6-bit exponent, ...) are checked by each type's
//! `new` constructor and `check()`; a value built field by field without them
//! is encoded with each field masked to its wire width and lists cut at what
//! their count field can hold, never a panic.
//!
//! Padding (the P bit, RFC 3550 §6.4.1) is accepted on decode and dropped:
//! the known types never need it, so their encoders never set it; unknown
//! packets keep their body and are padded back to 32 bits.

use crate::{Wire, WireError};

mod bye;
mod ccfb;
mod fb;
mod report;
mod sdes;
mod twcc;
mod xr;

pub use bye::Bye;
pub use ccfb::{CcfbBlock, CcfbReport, CongestionControlFeedback, MAX_CCFB_REPORTS};
pub use fb::{nack_pairs, Nack, NackPair, Pli, Remb, RembBitrate};
pub use report::{ReceiverReport, ReportBlock, SenderInfo, SenderReport};
pub use sdes::{Sdes, SdesChunk, SdesItem};
pub use twcc::{PacketStatus, TransportFeedback, TransportFeedbackBuilder, TWCC_DELTA_TICK_US, TWCC_REFERENCE_TICK_US};
pub use xr::{OwdBlock, RleBlock, RleChunk, Xr, XrBlock, BT_DISCARD_RLE, BT_LOSS_RLE, BT_OWD};

/// RTCP packet types (RFC 3550 §12.1, RFC 4585 §6.1, RFC 3611 §2).
pub mod pt {
    pub const SR: u8 = 200;
    pub const RR: u8 = 201;
    pub const SDES: u8 = 202;
    pub const BYE: u8 = 203;
    pub const APP: u8 = 204;
    pub const RTPFB: u8 = 205;
    pub const PSFB: u8 = 206;
    pub const XR: u8 = 207;
}

/// Feedback message types in the FMT field (RFC 4585 §6.2/§6.3, RFC 8888
/// §3.1, draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1,
/// draft-alvestrand-rmcat-remb-03 §2.2 — REMB is application layer feedback).
pub mod fmt {
    pub const NACK: u8 = 1;
    pub const CCFB: u8 = 11;
    pub const TWCC: u8 = 15;
    pub const PLI: u8 = 1;
    pub const AFB: u8 = 15;
}

/// The most bytes one RTCP packet can span: the length field counts 32-bit
/// words minus one in 16 bits (RFC 3550 §6.4.1).
pub const MAX_PACKET_BYTES: usize = 4 * 0x1_0000;

/// The largest value of the 5-bit count field (RC, SC, FMT).
pub const MAX_COUNT: usize = 31;

/// How one packet type sits inside the common header: the header is written
/// and checked in one place, each type handles only what follows it.
pub(crate) trait Body: Sized {
    const WHAT: &'static str;
    const PT: u8;
    /// The 5-bit field after P: a count (RC, SC) or the feedback FMT.
    fn count(&self) -> u8;
    /// Bytes after the 4-byte header; a multiple of 4.
    fn body_size(&self) -> usize;
    fn encode_body(&self, out: &mut Vec<u8>);
    /// `body` is what the length field spans after the header, padding removed.
    fn decode_body(count: u8, body: &[u8]) -> Result<Self, WireError>;
}

/// Writes the common header (RFC 3550 §6.4.1: V=2, P, count, PT, length in
/// 32-bit words minus one) for a packet of `total` bytes.
pub(crate) fn put_header(out: &mut Vec<u8>, padding: bool, count: u8, pt: u8, total: usize) {
    let words = (total / 4).saturating_sub(1) as u16;
    out.push(0x80 | if padding { 0x20 } else { 0 } | (count & 0x1f));
    out.push(pt);
    out.extend_from_slice(&words.to_be_bytes());
}

/// One packet's header fields and body.
pub(crate) struct Split<'a> {
    pub count: u8,
    pub pt: u8,
    pub body: &'a [u8],
    /// The bytes after this packet.
    pub rest: &'a [u8],
}

/// Reads one packet off the front of `buf` (RFC 3550 §6.4.1).
pub(crate) fn split<'a>(what: &'static str, buf: &'a [u8]) -> Result<Split<'a>, WireError> {
    WireError::need(what, buf, 4)?;
    let (b0, pt) = (buf[0], buf[1]);
    if b0 >> 6 != 2 {
        return Err(WireError::invalid(what, "version", format!("{} where RTCP has 2", b0 >> 6)));
    }
    let len = (usize::from(u16::from_be_bytes([buf[2], buf[3]])) + 1) * 4;
    WireError::need(what, buf, len)?;
    let (packet, rest) = buf.split_at(len);
    let mut body = &packet[4..];
    if b0 & 0x20 != 0 {
        // RFC 3550 §6.4.1: the last octet counts the padding, itself included.
        let pad = usize::from(*body.last().unwrap_or(&0));
        if pad == 0 || pad > body.len() {
            return Err(WireError::invalid(
                what,
                "padding",
                format!("{pad} padding bytes in a {}-byte body", body.len()),
            ));
        }
        body = &body[..body.len() - pad];
    }
    Ok(Split { count: b0 & 0x1f, pt, body, rest })
}

/// Reads the one packet that must fill `buf`.
fn split_whole<'a>(what: &'static str, buf: &'a [u8]) -> Result<Split<'a>, WireError> {
    let s = split(what, buf)?;
    if !s.rest.is_empty() {
        return Err(WireError::invalid(what, "length", format!("{} bytes after the packet", s.rest.len())));
    }
    Ok(s)
}

/// Reads exactly one packet of type `T` filling `buf`.
pub(crate) fn decode_one<T: Body>(buf: &[u8]) -> Result<T, WireError> {
    let s = split_whole(T::WHAT, buf)?;
    if s.pt != T::PT {
        return Err(WireError::invalid(T::WHAT, "packet type", format!("{} where {} is {}", s.pt, T::WHAT, T::PT)));
    }
    T::decode_body(s.count, s.body)
}

macro_rules! impl_wire {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn wire_size(&self) -> usize {
                4 + Body::body_size(self)
            }
            fn encode(&self, out: &mut Vec<u8>) {
                // The length field is written once the body is out, so a
                // body's size is never computed twice (`wire_size` equals
                // what is written: the round-trip tests hold it).
                let start = out.len();
                put_header(out, false, Body::count(self), <$t as Body>::PT, 0);
                self.encode_body(out);
                let words = ((out.len() - start) / 4).saturating_sub(1) as u16;
                out[start + 2..start + 4].copy_from_slice(&words.to_be_bytes());
            }
            fn decode(buf: &[u8]) -> Result<Self, WireError> {
                decode_one::<$t>(buf)
            }
        }
    )*};
}
impl_wire!(SenderReport, ReceiverReport, Sdes, Bye, Nack, Pli, Remb, TransportFeedback, CongestionControlFeedback, Xr);

/// Errors unless `size` fits the 16-bit length field.
pub(crate) fn check_size(what: &'static str, size: usize) -> Result<(), WireError> {
    if size > MAX_PACKET_BYTES {
        return Err(WireError::invalid(
            what,
            "length",
            format!("{size} bytes, more than one RTCP packet holds ({MAX_PACKET_BYTES})"),
        ));
    }
    Ok(())
}

/// Errors unless a list fits the 5-bit count field.
pub(crate) fn check_count(what: &'static str, field: &'static str, n: usize) -> Result<(), WireError> {
    if n > MAX_COUNT {
        return Err(WireError::invalid(what, field, format!("{n} entries, the 5-bit count holds at most {MAX_COUNT}")));
    }
    Ok(())
}

/// Big-endian reads on a slice already checked to be long enough; a short
/// slice reads as zeros rather than panicking.
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_be_bytes([s[0], s[1]]),
        None => 0,
    }
}

pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// A packet of a type rtcc does not read, kept as it came: the 5-bit count
/// (or FMT), the packet type and the bytes after the header, padding removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub count: u8,
    pub pt: u8,
    pub body: Vec<u8>,
}

impl Unknown {
    fn padding(&self) -> usize {
        (4 - self.body.len() % 4) % 4
    }
}

impl Wire for Unknown {
    fn wire_size(&self) -> usize {
        4 + self.body.len() + self.padding()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        let pad = self.padding();
        put_header(out, pad > 0, self.count, self.pt, self.wire_size());
        out.extend_from_slice(&self.body);
        if pad > 0 {
            // RFC 3550 §6.4.1: zeros, the last octet the padding's length.
            out.extend(std::iter::repeat_n(0, pad - 1));
            out.push(pad as u8);
        }
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let s = split_whole("RTCP packet", buf)?;
        Ok(Unknown { count: s.count, pt: s.pt, body: s.body.to_vec() })
    }
}

/// Any one RTCP packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtcpPacket {
    SenderReport(SenderReport),
    ReceiverReport(ReceiverReport),
    Sdes(Sdes),
    Bye(Bye),
    Nack(Nack),
    Pli(Pli),
    Remb(Remb),
    TransportFeedback(TransportFeedback),
    CongestionControlFeedback(CongestionControlFeedback),
    Xr(Xr),
    Unknown(Unknown),
}

impl RtcpPacket {
    fn decode_split(s: &Split<'_>) -> Result<Self, WireError> {
        use RtcpPacket as P;
        let (c, b) = (s.count, s.body);
        Ok(match (s.pt, c) {
            (pt::SR, _) => P::SenderReport(SenderReport::decode_body(c, b)?),
            (pt::RR, _) => P::ReceiverReport(ReceiverReport::decode_body(c, b)?),
            (pt::SDES, _) => P::Sdes(Sdes::decode_body(c, b)?),
            (pt::BYE, _) => P::Bye(Bye::decode_body(c, b)?),
            (pt::XR, _) => P::Xr(Xr::decode_body(c, b)?),
            (pt::RTPFB, fmt::NACK) => P::Nack(Nack::decode_body(c, b)?),
            (pt::RTPFB, fmt::TWCC) => P::TransportFeedback(TransportFeedback::decode_body(c, b)?),
            (pt::RTPFB, fmt::CCFB) => P::CongestionControlFeedback(CongestionControlFeedback::decode_body(c, b)?),
            (pt::PSFB, fmt::PLI) => P::Pli(Pli::decode_body(c, b)?),
            // Application layer feedback is REMB only when it says so
            // (draft-alvestrand-rmcat-remb-03 §2.2); other AFB stays bytes.
            (pt::PSFB, fmt::AFB) if b.get(8..12) == Some(&b"REMB"[..]) => P::Remb(Remb::decode_body(c, b)?),
            _ => P::Unknown(Unknown { count: c, pt: s.pt, body: b.to_vec() }),
        })
    }
}

impl Wire for RtcpPacket {
    fn wire_size(&self) -> usize {
        match self {
            RtcpPacket::SenderReport(p) => p.wire_size(),
            RtcpPacket::ReceiverReport(p) => p.wire_size(),
            RtcpPacket::Sdes(p) => p.wire_size(),
            RtcpPacket::Bye(p) => p.wire_size(),
            RtcpPacket::Nack(p) => p.wire_size(),
            RtcpPacket::Pli(p) => p.wire_size(),
            RtcpPacket::Remb(p) => p.wire_size(),
            RtcpPacket::TransportFeedback(p) => p.wire_size(),
            RtcpPacket::CongestionControlFeedback(p) => p.wire_size(),
            RtcpPacket::Xr(p) => p.wire_size(),
            RtcpPacket::Unknown(p) => p.wire_size(),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            RtcpPacket::SenderReport(p) => p.encode(out),
            RtcpPacket::ReceiverReport(p) => p.encode(out),
            RtcpPacket::Sdes(p) => p.encode(out),
            RtcpPacket::Bye(p) => p.encode(out),
            RtcpPacket::Nack(p) => p.encode(out),
            RtcpPacket::Pli(p) => p.encode(out),
            RtcpPacket::Remb(p) => p.encode(out),
            RtcpPacket::TransportFeedback(p) => p.encode(out),
            RtcpPacket::CongestionControlFeedback(p) => p.encode(out),
            RtcpPacket::Xr(p) => p.encode(out),
            RtcpPacket::Unknown(p) => p.encode(out),
        }
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let s = split_whole("RTCP packet", buf)?;
        Self::decode_split(&s)
    }
}

/// A compound RTCP packet (RFC 3550 §6.1): packets back to back, each sized
/// by its own length field. Reduced-size RTCP (RFC 5506 §3) is allowed: no
/// rule on which packet comes first; an empty datagram is refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Compound {
    pub packets: Vec<RtcpPacket>,
}

impl Compound {
    pub fn new(packets: Vec<RtcpPacket>) -> Self {
        Compound { packets }
    }
}

impl Wire for Compound {
    fn wire_size(&self) -> usize {
        self.packets.iter().map(Wire::wire_size).sum()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        for p in &self.packets {
            p.encode(out);
        }
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        WireError::need("RTCP compound packet", buf, 4)?;
        let mut packets = Vec::new();
        let mut rest = buf;
        // Transport-wide feedback statuses expand (a 2-byte run chunk names
        // 8,191 packets): a datagram naming more than one 16-bit sequence
        // space's worth is refused rather than expanded without bound.
        let mut statuses = 0usize;
        while !rest.is_empty() {
            let s = split("RTCP compound packet", rest)?;
            let p = RtcpPacket::decode_split(&s)?;
            if let RtcpPacket::TransportFeedback(f) = &p {
                statuses += f.packets.len();
                if statuses > MAX_STATUSES {
                    return Err(WireError::invalid(
                        "RTCP compound packet",
                        "packet status count",
                        format!("over {MAX_STATUSES} transport-wide statuses in one datagram"),
                    ));
                }
            }
            packets.push(p);
            rest = s.rest;
        }
        Ok(Compound { packets })
    }
}

/// The most transport-wide feedback statuses one compound may carry: every
/// 16-bit transport sequence once (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01 §3.1: each feedback packet's count is 16 bits too).
pub const MAX_STATUSES: usize = 1 << 16;

/// Kept under its first name; the entry point is [`crate::fuzzing::round_trip`].
#[doc(hidden)]
pub use crate::fuzzing::round_trip as fuzz_round_trip;
