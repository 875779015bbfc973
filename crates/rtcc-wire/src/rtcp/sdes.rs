//! Source description, PT 202 (RFC 3550 §6.5).

use super::{be32, check_count, check_size, pt, Body, MAX_COUNT};
use crate::WireError;

/// One SDES item (§6.5): type 1..=255 (1 = CNAME, §6.5.1) and up to 255
/// bytes of text (UTF-8 by the RFC; kept as bytes, not checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdesItem {
    pub kind: u8,
    pub text: Vec<u8>,
}

pub const CNAME: u8 = 1;

/// One chunk: an SSRC and its items (§6.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdesChunk {
    pub ssrc: u32,
    pub items: Vec<SdesItem>,
}

impl SdesChunk {
    /// The CNAME item's text, if the chunk has one.
    pub fn cname(&self) -> Option<&[u8]> {
        self.items.iter().find(|i| i.kind == CNAME).map(|i| i.text.as_slice())
    }

    fn items(&self) -> impl Iterator<Item = &SdesItem> {
        // Type 0 is the list's end (§6.5), so such an item cannot be sent.
        self.items.iter().filter(|i| i.kind != 0)
    }

    fn size(&self) -> usize {
        let items: usize = self.items().map(|i| 2 + i.text.len().min(255)).sum();
        // SSRC, items, then at least one null octet up to a 32-bit boundary.
        (4 + items + 1).next_multiple_of(4)
    }
}

/// An SDES packet: at most 31 chunks (the 5-bit SC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sdes {
    pub chunks: Vec<SdesChunk>,
}

impl Sdes {
    pub fn new(chunks: Vec<SdesChunk>) -> Result<Self, WireError> {
        let s = Sdes { chunks };
        s.check()?;
        Ok(s)
    }

    /// The usual SDES: one chunk with the CNAME (§6.5.1).
    pub fn cname(ssrc: u32, cname: &str) -> Result<Self, WireError> {
        Sdes::new(vec![SdesChunk { ssrc, items: vec![SdesItem { kind: CNAME, text: cname.as_bytes().to_vec() }] }])
    }

    pub fn check(&self) -> Result<(), WireError> {
        check_count("SDES", "source count", self.chunks.len())?;
        for c in &self.chunks {
            for i in &c.items {
                if i.kind == 0 {
                    return Err(WireError::invalid("SDES", "item type", "0 marks the end of a chunk's items"));
                }
                if i.text.len() > 255 {
                    return Err(WireError::invalid(
                        "SDES",
                        "item length",
                        format!("{} bytes, at most 255", i.text.len()),
                    ));
                }
            }
        }
        check_size("SDES", 4 + self.body_size())
    }
}

impl Body for Sdes {
    const WHAT: &'static str = "SDES";
    const PT: u8 = pt::SDES;
    fn count(&self) -> u8 {
        self.chunks.len().min(MAX_COUNT) as u8
    }
    fn body_size(&self) -> usize {
        self.chunks.iter().take(MAX_COUNT).map(SdesChunk::size).sum()
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        for c in self.chunks.iter().take(MAX_COUNT) {
            let start = out.len();
            out.extend_from_slice(&c.ssrc.to_be_bytes());
            for i in c.items() {
                let text = &i.text[..i.text.len().min(255)];
                out.push(i.kind);
                out.push(text.len() as u8);
                out.extend_from_slice(text);
            }
            out.resize(start + c.size(), 0);
        }
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        let mut chunks = Vec::with_capacity(usize::from(count));
        let mut at = 0;
        for _ in 0..count {
            WireError::need("SDES chunk", b.get(at..).unwrap_or(&[]), 4)?;
            let ssrc = be32(b, at);
            at += 4;
            let mut items = Vec::new();
            loop {
                let Some(&kind) = b.get(at) else {
                    return Err(WireError::Truncated { what: "SDES item", need: at + 1, have: b.len() });
                };
                if kind == 0 {
                    // The null item ends the list; skip to the next 32-bit boundary.
                    at = (at + 4) / 4 * 4;
                    break;
                }
                let len = usize::from(*b.get(at + 1).ok_or(WireError::Truncated {
                    what: "SDES item",
                    need: at + 2,
                    have: b.len(),
                })?);
                let text = b.get(at + 2..at + 2 + len).ok_or(WireError::Truncated {
                    what: "SDES item",
                    need: at + 2 + len,
                    have: b.len(),
                })?;
                items.push(SdesItem { kind, text: text.to_vec() });
                at += 2 + len;
            }
            if at > b.len() {
                return Err(WireError::Truncated { what: "SDES chunk", need: at, have: b.len() });
            }
            chunks.push(SdesChunk { ssrc, items });
        }
        if at != b.len() {
            return Err(WireError::invalid("SDES", "length", format!("{} bytes after {count} chunks", b.len() - at)));
        }
        Ok(Sdes { chunks })
    }
}
