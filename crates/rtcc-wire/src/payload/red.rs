//! Redundant coding, RED (RFC 2198): the payload that carries a primary
//! encoding and older redundant blocks. libwebrtc wraps ULPFEC and media in
//! it (`red`/`ulpfec`), each RED packet carrying one block with a one-octet header.

use crate::{Wire, WireError};

const WHAT: &str = "RED payload";
/// RFC 2198 §3: the block length field is 10 bits.
pub const MAX_BLOCK: usize = 0x3ff;

/// A redundant block (RFC 2198 §3): its payload type (7 bits), how far its
/// timestamp lies before the packet's (14 bits, unsigned) and its octets (at
/// most 1023). Encode masks the fields; a longer block is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedBlock {
    pub payload_type: u8,
    pub timestamp_offset: u16,
    pub data: Vec<u8>,
}

/// The RED payload: redundant blocks, oldest first, then the primary block
/// (RFC 2198 §3), whose length is what remains of the packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedPayload {
    pub redundant: Vec<RedBlock>,
    pub primary_payload_type: u8,
    pub primary: Vec<u8>,
}

impl RedPayload {
    /// A RED payload with only its primary block, as libwebrtc sends.
    pub fn primary(payload_type: u8, data: Vec<u8>) -> Self {
        RedPayload { redundant: Vec::new(), primary_payload_type: payload_type, primary: data }
    }

    /// The ranges `encode` would otherwise mask or leave out.
    pub fn check(&self) -> Result<(), WireError> {
        let pt = |p: u8| {
            if p > 0x7f {
                Err(WireError::invalid(WHAT, "block PT", format!("{p} does not fit 7 bits")))
            } else {
                Ok(())
            }
        };
        pt(self.primary_payload_type)?;
        for b in &self.redundant {
            pt(b.payload_type)?;
            if b.timestamp_offset > 0x3fff {
                return Err(WireError::invalid(
                    WHAT,
                    "timestamp offset",
                    format!("{} does not fit 14 bits", b.timestamp_offset),
                ));
            }
            if b.data.len() > MAX_BLOCK {
                return Err(WireError::invalid(
                    WHAT,
                    "block length",
                    format!("{} octets, 10 bits hold {MAX_BLOCK}", b.data.len()),
                ));
            }
        }
        Ok(())
    }

    fn encodable(&self) -> impl Iterator<Item = &RedBlock> {
        self.redundant.iter().filter(|b| b.data.len() <= MAX_BLOCK)
    }
}

impl Wire for RedPayload {
    fn wire_size(&self) -> usize {
        self.encodable().map(|b| 4 + b.data.len()).sum::<usize>() + 1 + self.primary.len()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        // RFC 2198 §3: F=1 | block PT (7) | timestamp offset (14) | block length (10).
        for b in self.encodable() {
            let word = 1u32 << 31
                | u32::from(b.payload_type & 0x7f) << 24
                | u32::from(b.timestamp_offset & 0x3fff) << 10
                | b.data.len() as u32;
            out.extend_from_slice(&word.to_be_bytes());
        }
        // The last header: F=0 | block PT.
        out.push(self.primary_payload_type & 0x7f);
        for b in self.encodable() {
            out.extend_from_slice(&b.data);
        }
        out.extend_from_slice(&self.primary);
    }

    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let mut headers = Vec::new();
        let mut at = 0;
        let primary_payload_type = loop {
            let Some(&b0) = buf.get(at) else {
                return Err(WireError::Truncated { what: "RED block header", need: at + 1, have: buf.len() });
            };
            if b0 & 0x80 == 0 {
                at += 1;
                break b0;
            }
            let Some(h) = buf.get(at..at + 4) else {
                return Err(WireError::Truncated { what: "RED block header", need: at + 4, have: buf.len() });
            };
            let word = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
            headers.push((((word >> 24) & 0x7f) as u8, ((word >> 10) & 0x3fff) as u16, (word & 0x3ff) as usize));
            at += 4;
        };
        let mut redundant = Vec::with_capacity(headers.len());
        for (payload_type, timestamp_offset, len) in headers {
            let Some(data) = buf.get(at..at + len) else {
                return Err(WireError::Truncated { what: "RED redundant block", need: at + len, have: buf.len() });
            };
            redundant.push(RedBlock { payload_type, timestamp_offset, data: data.to_vec() });
            at += len;
        }
        Ok(RedPayload { redundant, primary_payload_type, primary: buf[at..].to_vec() })
    }
}
