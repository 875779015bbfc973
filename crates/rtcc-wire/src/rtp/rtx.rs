//! Retransmission in its own stream (RFC 4588 §4): the RTX packet carries the
//! original sequence number (OSN) in its first two payload octets, then the
//! original payload; header extensions and the marker follow the original,
//! payload type, SSRC and sequence number are the RTX stream's.

use super::RtpPacket;
use crate::{Wire, WireError};

const WHAT: &str = "RTX payload";

/// The payload of an RTX packet (RFC 4588 §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtxPayload {
    /// OSN: the original packet's sequence number.
    pub original_sequence_number: u16,
    pub original_payload: Vec<u8>,
}

impl Wire for RtxPayload {
    fn wire_size(&self) -> usize {
        2 + self.original_payload.len()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.original_sequence_number.to_be_bytes());
        out.extend_from_slice(&self.original_payload);
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        WireError::need(WHAT, buf, 2)?;
        Ok(RtxPayload {
            original_sequence_number: u16::from_be_bytes([buf[0], buf[1]]),
            original_payload: buf[2..].to_vec(),
        })
    }
}

/// The RTX packet retransmitting `original` on the RTX stream (`rtx_payload_type`,
/// `rtx_ssrc`, its own `rtx_sequence_number`; RFC 4588 §4). Padding is not
/// carried over: it is no part of the original payload.
pub fn wrap(
    original: &RtpPacket,
    rtx_payload_type: u8,
    rtx_ssrc: u32,
    rtx_sequence_number: u16,
) -> Result<RtpPacket, WireError> {
    let payload =
        RtxPayload { original_sequence_number: original.sequence_number, original_payload: original.payload.clone() };
    let mut p =
        RtpPacket::new(rtx_payload_type, rtx_sequence_number, original.timestamp, rtx_ssrc, payload.to_bytes())?;
    p.marker = original.marker;
    p.csrcs = original.csrcs.clone();
    p.extension = original.extension.clone();
    Ok(p)
}

/// The original packet from an RTX packet, given the original stream's payload
/// type and SSRC (the SDP `apt` association of RFC 4588 §8). A padding-only
/// RTX packet (libwebrtc's probes) has no OSN and is an error here.
pub fn unwrap(rtx: &RtpPacket, original_payload_type: u8, original_ssrc: u32) -> Result<RtpPacket, WireError> {
    let payload = RtxPayload::decode(&rtx.payload)?;
    let mut p = RtpPacket::new(
        original_payload_type,
        payload.original_sequence_number,
        rtx.timestamp,
        original_ssrc,
        payload.original_payload,
    )?;
    p.marker = rtx.marker;
    p.csrcs = rtx.csrcs.clone();
    p.extension = rtx.extension.clone();
    Ok(p)
}
