//! Goodbye, PT 203 (RFC 3550 §6.6).

use super::{be32, check_count, check_size, pt, Body, MAX_COUNT};
use crate::WireError;

/// BYE: the sources leaving (at most 31, the 5-bit SC) and an optional
/// reason of up to 255 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bye {
    pub ssrcs: Vec<u32>,
    pub reason: Option<Vec<u8>>,
}

impl Bye {
    pub fn new(ssrcs: Vec<u32>, reason: Option<Vec<u8>>) -> Result<Self, WireError> {
        let b = Bye { ssrcs, reason };
        b.check()?;
        Ok(b)
    }
    pub fn check(&self) -> Result<(), WireError> {
        check_count("BYE", "source count", self.ssrcs.len())?;
        if let Some(r) = &self.reason {
            if r.len() > 255 {
                return Err(WireError::invalid("BYE", "reason length", format!("{} bytes, at most 255", r.len())));
            }
        }
        check_size("BYE", 4 + self.body_size())
    }
    fn reason(&self) -> Option<&[u8]> {
        self.reason.as_deref().map(|r| &r[..r.len().min(255)])
    }
}

impl Body for Bye {
    const WHAT: &'static str = "BYE";
    const PT: u8 = pt::BYE;
    fn count(&self) -> u8 {
        self.ssrcs.len().min(MAX_COUNT) as u8
    }
    fn body_size(&self) -> usize {
        // Length octet and text, zero-padded to 32 bits (§6.6).
        4 * self.ssrcs.len().min(MAX_COUNT) + self.reason().map_or(0, |r| (1 + r.len()).next_multiple_of(4))
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        for s in self.ssrcs.iter().take(MAX_COUNT) {
            out.extend_from_slice(&s.to_be_bytes());
        }
        if let Some(r) = self.reason() {
            let start = out.len();
            out.push(r.len() as u8);
            out.extend_from_slice(r);
            out.resize(start + (1 + r.len()).next_multiple_of(4), 0);
        }
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        let n = 4 * usize::from(count);
        WireError::need("BYE", b, n)?;
        let ssrcs = (0..usize::from(count)).map(|i| be32(b, 4 * i)).collect();
        let rest = &b[n..];
        let reason = match rest.first() {
            None => None,
            Some(&len) => {
                let len = usize::from(len);
                let text = rest.get(1..1 + len).ok_or(WireError::Truncated {
                    what: "BYE reason",
                    need: 1 + len,
                    have: rest.len(),
                })?;
                if rest.len() != (1 + len).next_multiple_of(4) {
                    return Err(WireError::invalid(
                        "BYE",
                        "length",
                        format!("{} bytes after a {len}-byte reason", rest.len() - 1 - len),
                    ));
                }
                Some(text.to_vec())
            }
        };
        Ok(Bye { ssrcs, reason })
    }
}
