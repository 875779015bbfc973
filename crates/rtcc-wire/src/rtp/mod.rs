//! RTP data packets (RFC 3550 §5.1), their header extensions (RFC 8285) and
//! retransmission (RFC 4588).
//!
//! Ranges: the 7-bit payload type, the 15-entry CSRC list and the extension
//! elements' ids and lengths are checked by the constructors ([`RtpPacket::new`],
//! [`HeaderExtension::push`]) and by [`RtpPacket::check`]; a packet built
//! field by field without them is encoded with the payload type masked to 7
//! bits and the CSRC list cut at 15, never a panic.
//!
//! Padding (the P bit, RFC 3550 §5.1) is kept as its length only: padding
//! octets carry no information, so they are written as zeros.

use crate::{Wire, WireError};

pub mod dd;
mod ext;
pub mod rtx;

pub use ext::{
    AbsCaptureTime, AbsSendTime, ExtensionElement, ExtensionKind, ExtensionMap, HeaderExtension,
    TransportSequenceNumber, TypedExtension, ABS_CAPTURE_TIME_URI, ABS_SEND_TIME_URI, TRANSPORT_CC_URI,
};

const WHAT: &str = "RTP packet";
/// RFC 3550 §5.1: the fixed header before the CSRC list.
pub const FIXED_HEADER_LEN: usize = 12;
/// RFC 3550 §5.1: CC is 4 bits.
pub const MAX_CSRCS: usize = 15;

/// One RTP packet: the fixed header, CSRCs, an optional header extension,
/// the payload and `padding` octets (0 = the P bit clear).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtpPacket {
    /// M (RFC 3550 §5.1): for video, the last packet of a frame.
    pub marker: bool,
    /// PT, 7 bits (RFC 3550 §5.1).
    pub payload_type: u8,
    /// Wraps at 2^16 (RFC 3550 §5.1).
    pub sequence_number: u16,
    pub timestamp: u32,
    pub ssrc: u32,
    /// At most 15 (CC is 4 bits).
    pub csrcs: Vec<u32>,
    /// X bit and the extension block (RFC 3550 §5.3.1, RFC 8285).
    pub extension: Option<HeaderExtension>,
    pub payload: Vec<u8>,
    /// Padding octets including the count octet (RFC 3550 §5.1: the last
    /// octet counts the padding, itself included), so 1..=255 when set.
    pub padding: u8,
}

impl RtpPacket {
    /// A packet with no CSRCs, extension or padding; `payload_type` must fit 7 bits.
    pub fn new(
        payload_type: u8,
        sequence_number: u16,
        timestamp: u32,
        ssrc: u32,
        payload: Vec<u8>,
    ) -> Result<Self, WireError> {
        let p = RtpPacket {
            marker: false,
            payload_type,
            sequence_number,
            timestamp,
            ssrc,
            csrcs: Vec::new(),
            extension: None,
            payload,
            padding: 0,
        };
        p.check()?;
        Ok(p)
    }

    /// A padding-only packet (RFC 3550 §5.1 P bit with an empty payload), as
    /// libwebrtc sends to probe the path: `padding` octets, 1..=255.
    pub fn padding_only(
        payload_type: u8,
        sequence_number: u16,
        timestamp: u32,
        ssrc: u32,
        padding: u8,
    ) -> Result<Self, WireError> {
        if padding == 0 {
            return Err(WireError::invalid(WHAT, "padding", "a padding-only packet needs at least one padding octet"));
        }
        let mut p = RtpPacket::new(payload_type, sequence_number, timestamp, ssrc, Vec::new())?;
        p.padding = padding;
        Ok(p)
    }

    /// True when the packet carries only padding (no payload octets).
    pub fn is_padding_only(&self) -> bool {
        self.payload.is_empty() && self.padding > 0
    }

    /// The ranges [`Wire::encode`] would otherwise mask.
    pub fn check(&self) -> Result<(), WireError> {
        if self.payload_type > 0x7f {
            return Err(WireError::invalid(WHAT, "payload_type", format!("{} does not fit 7 bits", self.payload_type)));
        }
        if self.csrcs.len() > MAX_CSRCS {
            return Err(WireError::invalid(WHAT, "csrcs", format!("{} CSRCs, CC holds at most 15", self.csrcs.len())));
        }
        self.extension.as_ref().map_or(Ok(()), HeaderExtension::check)
    }

    /// Octets after the fixed header (CSRCs, extension, payload, padding): what
    /// ULPFEC's length recovery covers (RFC 5109 §7.3).
    pub fn body_len(&self) -> usize {
        self.wire_size() - FIXED_HEADER_LEN
    }

    fn csrc_count(&self) -> usize {
        self.csrcs.len().min(MAX_CSRCS)
    }
}

impl Wire for RtpPacket {
    fn wire_size(&self) -> usize {
        FIXED_HEADER_LEN
            + 4 * self.csrc_count()
            + self.extension.as_ref().map_or(0, |e| e.wire_size())
            + self.payload.len()
            + self.padding as usize
    }

    fn encode(&self, out: &mut Vec<u8>) {
        // RFC 3550 §5.1: V=2 | P | X | CC, then M | PT.
        let b0 = 2 << 6
            | u8::from(self.padding > 0) << 5
            | u8::from(self.extension.is_some()) << 4
            | self.csrc_count() as u8;
        out.push(b0);
        out.push(u8::from(self.marker) << 7 | (self.payload_type & 0x7f));
        out.extend_from_slice(&self.sequence_number.to_be_bytes());
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        for c in self.csrcs.iter().take(MAX_CSRCS) {
            out.extend_from_slice(&c.to_be_bytes());
        }
        if let Some(e) = &self.extension {
            e.encode(out);
        }
        out.extend_from_slice(&self.payload);
        if self.padding > 0 {
            // RFC 3550 §5.1: the last padding octet is the count, itself included.
            out.extend(std::iter::repeat_n(0, self.padding as usize - 1));
            out.push(self.padding);
        }
    }

    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        WireError::need(WHAT, buf, FIXED_HEADER_LEN)?;
        let b0 = buf[0];
        if b0 >> 6 != 2 {
            return Err(WireError::invalid(WHAT, "version", format!("{} (RFC 3550 §5.1 requires 2)", b0 >> 6)));
        }
        let has_padding = b0 & 0x20 != 0;
        let has_ext = b0 & 0x10 != 0;
        let cc = (b0 & 0x0f) as usize;
        let marker = buf[1] & 0x80 != 0;
        let payload_type = buf[1] & 0x7f;
        let sequence_number = u16::from_be_bytes([buf[2], buf[3]]);
        let timestamp = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
        let ssrc = u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
        let mut at = FIXED_HEADER_LEN;
        WireError::need(WHAT, buf, at + 4 * cc)?;
        let csrcs =
            buf[at..at + 4 * cc].chunks_exact(4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect();
        at += 4 * cc;
        let mut end = buf.len();
        let mut padding = 0u8;
        if has_padding {
            // RFC 3550 §5.1: the count includes itself, so 0 is malformed; it
            // may not reach back into the header.
            padding = buf[end - 1];
            if padding == 0 {
                return Err(WireError::invalid(WHAT, "padding", "P set but the padding count is 0"));
            }
            if (padding as usize) > end - at {
                return Err(WireError::invalid(
                    WHAT,
                    "padding",
                    format!("count {} exceeds the {} octets after the header", padding, end - at),
                ));
            }
            end -= padding as usize;
        }
        let extension = if has_ext {
            let (e, used) = HeaderExtension::decode_prefix(&buf[at..end])?;
            at += used;
            Some(e)
        } else {
            None
        };
        let payload = buf[at..end].to_vec();
        Ok(RtpPacket { marker, payload_type, sequence_number, timestamp, ssrc, csrcs, extension, payload, padding })
    }
}
