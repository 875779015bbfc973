//! RTP congestion control feedback, RTPFB FMT 11 (RFC 8888 §3.1).

use super::{be16, be32, check_size, fmt, pt, Body};
use crate::WireError;

/// One packet's report element (RFC 8888 §3.1): received, its ECN bits and
/// its arrival time offset (ATO) before the report timestamp in 1/1024 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcfbReport {
    /// 2 bits: the ECN codepoint received.
    pub ecn: u8,
    /// 13 bits. 0x1FFE: over range; 0x1FFF: unavailable (§3.1).
    pub ato: u16,
}

impl CcfbReport {
    pub const OVER_RANGE: u16 = 0x1ffe;
    pub const UNAVAILABLE: u16 = 0x1fff;

    /// The element for a packet that arrived `offset_us` before the report
    /// timestamp, rounded to the nearest 1/1024 s; over 0x1FFD units it is
    /// reported as over range, and an arrival after the timestamp as
    /// unavailable (§3.1).
    pub fn from_offset_us(offset_us: i64, ecn: u8) -> Self {
        let ato = if offset_us < 0 {
            Self::UNAVAILABLE
        } else {
            let units = (i128::from(offset_us) * 1024 + 500_000) / 1_000_000;
            if units > 0x1ffd {
                Self::OVER_RANGE
            } else {
                units as u16
            }
        };
        CcfbReport { ecn: ecn & 3, ato }
    }

    /// The offset in µs (rounded), `None` when over range or unavailable.
    pub fn offset_us(self) -> Option<i64> {
        (self.ato < Self::OVER_RANGE).then(|| (i64::from(self.ato) * 1_000_000 + 512) / 1024)
    }

    fn word(r: Option<Self>) -> u16 {
        match r {
            None => 0,
            Some(r) => 0x8000 | (u16::from(r.ecn & 3) << 13) | (r.ato & 0x1fff),
        }
    }
}

/// Reports on one RTP stream: one element per sequence from `begin_seq`,
/// `None` for a packet not received (R = 0; §3.1 sets the other bits to zero).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcfbBlock {
    pub ssrc: u32,
    pub begin_seq: u16,
    /// At most 16,384 (§3.1: a block covers at most 2¹⁴ sequences).
    pub reports: Vec<Option<CcfbReport>>,
}

pub const MAX_CCFB_REPORTS: usize = 1 << 14;

impl CcfbBlock {
    fn reports(&self) -> &[Option<CcfbReport>] {
        &self.reports[..self.reports.len().min(MAX_CCFB_REPORTS)]
    }
    /// Bytes the block takes in its packet.
    pub fn size(&self) -> usize {
        // SSRC, begin_seq, num_reports, then 16-bit elements padded to 32 bits.
        8 + (2 * self.reports().len()).next_multiple_of(4)
    }
}

/// An RFC 8888 feedback packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CongestionControlFeedback {
    pub sender_ssrc: u32,
    pub blocks: Vec<CcfbBlock>,
    /// The middle 32 bits of the NTP time the report was made (§3.1).
    pub report_timestamp: u32,
}

impl CongestionControlFeedback {
    pub fn new(sender_ssrc: u32, blocks: Vec<CcfbBlock>, report_timestamp: u32) -> Result<Self, WireError> {
        let f = CongestionControlFeedback { sender_ssrc, blocks, report_timestamp };
        f.check()?;
        Ok(f)
    }
    pub fn check(&self) -> Result<(), WireError> {
        for b in &self.blocks {
            if b.reports.len() > MAX_CCFB_REPORTS {
                return Err(WireError::invalid(
                    "RFC 8888 feedback",
                    "num_reports",
                    format!("{} reports, at most {MAX_CCFB_REPORTS}", b.reports.len()),
                ));
            }
            if let Some(r) = b.reports.iter().flatten().find(|r| r.ecn > 3 || r.ato > 0x1fff) {
                return Err(WireError::invalid(
                    "RFC 8888 feedback",
                    "report",
                    format!("ECN {} or ATO {} over 2/13 bits", r.ecn, r.ato),
                ));
            }
        }
        check_size("RFC 8888 feedback", 4 + self.body_size())
    }
}

impl Body for CongestionControlFeedback {
    const WHAT: &'static str = "RFC 8888 feedback";
    const PT: u8 = pt::RTPFB;
    fn count(&self) -> u8 {
        fmt::CCFB
    }
    fn body_size(&self) -> usize {
        8 + self.blocks.iter().map(CcfbBlock::size).sum::<usize>()
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        for b in &self.blocks {
            let start = out.len();
            out.extend_from_slice(&b.ssrc.to_be_bytes());
            out.extend_from_slice(&b.begin_seq.to_be_bytes());
            out.extend_from_slice(&(b.reports().len() as u16).to_be_bytes());
            for r in b.reports() {
                out.extend_from_slice(&CcfbReport::word(*r).to_be_bytes());
            }
            out.resize(start + b.size(), 0);
        }
        out.extend_from_slice(&self.report_timestamp.to_be_bytes());
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        const WHAT: &str = "RFC 8888 feedback";
        if count != fmt::CCFB {
            return Err(WireError::invalid(WHAT, "FMT", format!("{count} where it is {}", fmt::CCFB)));
        }
        WireError::need(WHAT, b, 8)?;
        let end = b.len() - 4;
        let mut at = 4;
        let mut blocks = Vec::new();
        while at < end {
            if end - at < 8 {
                return Err(WireError::Truncated { what: "RFC 8888 report block", need: at + 8, have: end });
            }
            let n = usize::from(be16(b, at + 6));
            if n > MAX_CCFB_REPORTS {
                return Err(WireError::invalid(WHAT, "num_reports", format!("{n}, at most {MAX_CCFB_REPORTS}")));
            }
            let size = 8 + (2 * n).next_multiple_of(4);
            if end - at < size {
                return Err(WireError::Truncated { what: "RFC 8888 report block", need: at + size, have: end });
            }
            let reports = (0..n)
                .map(|i| {
                    let w = be16(b, at + 8 + 2 * i);
                    (w & 0x8000 != 0).then_some(CcfbReport { ecn: ((w >> 13) & 3) as u8, ato: w & 0x1fff })
                })
                .collect();
            blocks.push(CcfbBlock { ssrc: be32(b, at), begin_seq: be16(b, at + 4), reports });
            at += size;
        }
        Ok(CongestionControlFeedback { sender_ssrc: be32(b, 0), blocks, report_timestamp: be32(b, end) })
    }
}
