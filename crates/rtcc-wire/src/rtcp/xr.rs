//! Extended reports, PT 207 (RFC 3611 §2), with the Loss RLE block (§4.1),
//! the discard RLE block of RFC 7097 §3, which shares its layout, and a
//! one-way delay block ([`OwdBlock`]; FBRA §4.1's reference [37]).

use super::{be16, be32, check_size, pt, Body};
use crate::WireError;

/// One 16-bit chunk of an RLE block (RFC 3611 §4.1.1, §4.1.2). The
/// terminating null chunk (all zeros, §4.1.3) is padding only: encoders add
/// it, decoders drop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RleChunk {
    /// Run length chunk (§4.1.1): `length` (1 ..= 16,383) packets all `ones` (for
    /// Loss RLE, received; for discard RLE, discarded) or all not.
    Run { ones: bool, length: u16 },
    /// Bit vector chunk (§4.1.2): 15 packets, the most significant of the 15
    /// bits first.
    Vector(u16),
}

pub const MAX_RUN: u16 = 0x3fff;
const VECTOR_BITS: usize = 15;

impl RleChunk {
    fn word(self) -> u16 {
        match self {
            // Chunk type 0, run type, 14-bit run length (§4.1.1).
            RleChunk::Run { ones, length } => (u16::from(ones) << 14) | (length & MAX_RUN),
            // Chunk type 1, 15 bits (§4.1.2).
            RleChunk::Vector(bits) => 0x8000 | (bits & 0x7fff),
        }
    }
    fn from_word(w: u16) -> Option<Self> {
        match w {
            0 => None,
            w if w & 0x8000 != 0 => Some(RleChunk::Vector(w & 0x7fff)),
            w => Some(RleChunk::Run { ones: w & 0x4000 != 0, length: w & MAX_RUN }),
        }
    }
    fn valid(self) -> bool {
        match self {
            RleChunk::Run { length, .. } => (1..=MAX_RUN).contains(&length),
            RleChunk::Vector(bits) => bits <= 0x7fff,
        }
    }
}

/// A Loss RLE (BT 1) or discard RLE (BT 25) report block's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RleBlock {
    /// Thinning T, 4 bits (§4.1): every 2^T-th sequence is reported.
    pub thinning: u8,
    pub ssrc: u32,
    pub begin_seq: u16,
    /// The last sequence covered plus one (§4.1).
    pub end_seq: u16,
    pub chunks: Vec<RleChunk>,
}

impl RleBlock {
    /// The block for `outcomes` (one per sequence from `begin_seq`, true =
    /// received, or discarded) with no thinning: a run of 15 or more equal
    /// outcomes is a run-length chunk, anything shorter goes in 15-bit
    /// vectors, zero-filled past the end (greedy, as RFC 3611 §4.1.1's
    /// example counts it).
    pub fn from_outcomes(ssrc: u32, begin_seq: u16, outcomes: &[bool]) -> Self {
        let mut chunks = Vec::new();
        let mut rest = outcomes;
        while let Some(&first) = rest.first() {
            let run = rest.iter().position(|&o| o != first).unwrap_or(rest.len());
            if run >= VECTOR_BITS {
                let take = run.min(usize::from(MAX_RUN));
                chunks.push(RleChunk::Run { ones: first, length: take as u16 });
                rest = &rest[take..];
            } else {
                let take = VECTOR_BITS.min(rest.len());
                let bits = rest[..take].iter().enumerate().fold(0u16, |v, (i, &o)| v | (u16::from(o) << (14 - i)));
                chunks.push(RleChunk::Vector(bits));
                rest = &rest[take..];
            }
        }
        RleBlock { thinning: 0, ssrc, begin_seq, end_seq: begin_seq.wrapping_add(outcomes.len() as u16), chunks }
    }

    /// Outcomes the chunks hold, one per reported sequence, cut at what
    /// begin_seq..end_seq spans with the thinning (§4.1).
    pub fn outcomes(&self) -> Vec<bool> {
        let span = usize::from(self.end_seq.wrapping_sub(self.begin_seq)) >> (self.thinning & 0xf);
        let mut out = Vec::with_capacity(span);
        for c in &self.chunks {
            match *c {
                RleChunk::Run { ones, length } => out.extend(std::iter::repeat_n(ones, usize::from(length & MAX_RUN))),
                RleChunk::Vector(bits) => out.extend((0..VECTOR_BITS).map(|i| bits & (1 << (14 - i)) != 0)),
            }
            if out.len() >= span {
                break;
            }
        }
        out.truncate(span);
        out
    }

    fn size(&self) -> usize {
        // Header, SSRC, begin/end; chunks padded to 32 bits by a null chunk (§4.1.3).
        12 + (2 * self.chunks.len()).next_multiple_of(4)
    }

    fn encode(&self, out: &mut Vec<u8>, bt: u8, type_specific: u8) {
        let start = out.len();
        out.push(bt);
        out.push(type_specific);
        out.extend_from_slice(&((self.size() / 4 - 1) as u16).to_be_bytes());
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        out.extend_from_slice(&self.begin_seq.to_be_bytes());
        out.extend_from_slice(&self.end_seq.to_be_bytes());
        for c in &self.chunks {
            out.extend_from_slice(&c.word().to_be_bytes());
        }
        out.resize(start + self.size(), 0);
    }

    fn decode(thinning: u8, b: &[u8]) -> Result<Self, WireError> {
        WireError::need("XR RLE block", b, 8)?;
        let chunks =
            b[8..].chunks_exact(2).filter_map(|c| RleChunk::from_word(u16::from_be_bytes([c[0], c[1]]))).collect();
        Ok(RleBlock { thinning, ssrc: be32(b, 0), begin_seq: be16(b, 4), end_seq: be16(b, 6), chunks })
    }

    fn check(&self) -> Result<(), WireError> {
        if self.thinning > 15 {
            return Err(WireError::invalid("XR RLE block", "thinning", format!("{} over 4 bits", self.thinning)));
        }
        if let Some(c) = self.chunks.iter().find(|c| !c.valid()) {
            return Err(WireError::invalid(
                "XR RLE block",
                "chunk",
                format!("{c:?}: a run is 1..=16383, a vector 15 bits"),
            ));
        }
        Ok(())
    }
}

pub const BT_LOSS_RLE: u8 = 1;
pub const BT_DISCARD_RLE: u8 = 25;
/// The one-way delay block's type: not assigned by IANA (the block's draft
/// never became an RFC), so a value unassigned in the RTCP XR Block Type
/// registry (RFC 3611 §6.2 reserves only 0 and 255): a choice.
pub const BT_OWD: u8 = 250;

/// One-way delay over a reporting interval, the block FBRA §4.1 reports
/// its OWD in (its ref. [37], draft-wu-xrblock-rtcp-xr-one-way-delay:
/// the smallest, mean and largest OWD of the interval for one SSRC).
///
/// Standard: the XR block framing (RFC 3611 §3: BT, type-specific byte,
/// length in words minus one), the SSRC of the source reported on, and
/// 16.16 fixed-point seconds as in RFC 3550 §4's NTP short format. A
/// choice: the BT ([`BT_OWD`]), the type-specific byte (zero), the order
/// min, mean, max, and the fourth field `newest` (the last received
/// packet's OWD, the sample FBRA's third-party port reads), and that the
/// fields are signed: receiver clock minus sender timestamp is negative
/// when the receiver's clock is behind.
///
/// ```text
///  0                   1                   2                   3
/// |     BT=250    |   reserved    |       block length = 5        |
/// |                        SSRC of source                         |
/// |                   minimum OWD (signed 16.16 s)                |
/// |                     mean OWD (signed 16.16 s)                 |
/// |                   maximum OWD (signed 16.16 s)                |
/// |                    newest OWD (signed 16.16 s)                |
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwdBlock {
    pub ssrc: u32,
    /// Each in 1/65536 s.
    pub min: i32,
    pub mean: i32,
    pub max: i32,
    pub newest: i32,
}

impl OwdBlock {
    const SIZE: usize = 24;

    /// 1/65536 s units for `us` microseconds, rounded to nearest and
    /// saturated at the field's ±32,768 s.
    pub fn units_from_micros(us: i64) -> i32 {
        let u = (i128::from(us) * 65_536 + if us >= 0 { 500_000 } else { -500_000 }) / 1_000_000;
        u.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32
    }

    /// Microseconds for a field value, rounded to nearest.
    pub fn micros(units: i32) -> i64 {
        let u = i64::from(units) * 1_000_000;
        (u + if u >= 0 { 32_768 } else { -32_768 }) / 65_536
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(BT_OWD);
        out.push(0);
        out.extend_from_slice(&((Self::SIZE / 4 - 1) as u16).to_be_bytes());
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        for v in [self.min, self.mean, self.max, self.newest] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }

    fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() != Self::SIZE - 4 {
            return Err(WireError::invalid(
                "XR OWD block",
                "block length",
                format!("{} bytes after the header where the block has {}", b.len(), Self::SIZE - 4),
            ));
        }
        let i = |at| be32(b, at) as i32;
        Ok(OwdBlock { ssrc: be32(b, 0), min: i(4), mean: i(8), max: i(12), newest: i(16) })
    }
}

/// One XR report block (RFC 3611 §3: BT, type-specific byte, length in
/// 32-bit words minus one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XrBlock {
    /// BT 1 (RFC 3611 §4.1): true = received.
    LossRle(RleBlock),
    /// BT 25 (RFC 7097 §3): true = discarded; `early` is the E bit (discarded
    /// for arriving too early rather than too late).
    DiscardRle { early: bool, block: RleBlock },
    /// BT [`BT_OWD`]: one-way delay of the interval (a choice of layout, see
    /// [`OwdBlock`]).
    Owd(OwdBlock),
    /// Another block type, its type-specific byte and body as they came.
    Unknown { bt: u8, type_specific: u8, body: Vec<u8> },
}

impl XrBlock {
    fn size(&self) -> usize {
        match self {
            XrBlock::LossRle(b) | XrBlock::DiscardRle { block: b, .. } => b.size(),
            XrBlock::Owd(_) => OwdBlock::SIZE,
            XrBlock::Unknown { body, .. } => 4 + body.len().next_multiple_of(4),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            // rsvd (4 bits), T (4 bits) (§4.1).
            XrBlock::LossRle(b) => b.encode(out, BT_LOSS_RLE, b.thinning & 0xf),
            // rsvd (3 bits), E (1 bit), T (4 bits) (RFC 7097 §3).
            XrBlock::DiscardRle { early, block } => {
                block.encode(out, BT_DISCARD_RLE, (u8::from(*early) << 4) | (block.thinning & 0xf))
            }
            XrBlock::Owd(b) => b.encode(out),
            XrBlock::Unknown { bt, type_specific, body } => {
                let start = out.len();
                let size = self.size();
                out.push(*bt);
                out.push(*type_specific);
                out.extend_from_slice(&((size / 4 - 1) as u16).to_be_bytes());
                out.extend_from_slice(body);
                out.resize(start + size, 0);
            }
        }
    }
}

/// An XR packet (RFC 3611 §2): the reporter's SSRC and report blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xr {
    pub ssrc: u32,
    pub blocks: Vec<XrBlock>,
}

impl Xr {
    pub fn check(&self) -> Result<(), WireError> {
        for b in &self.blocks {
            match b {
                XrBlock::LossRle(r) | XrBlock::DiscardRle { block: r, .. } => r.check()?,
                XrBlock::Unknown { body, .. } if !body.len().is_multiple_of(4) => {
                    return Err(WireError::invalid(
                        "XR block",
                        "block length",
                        format!("{} bytes, not a multiple of 4", body.len()),
                    ))
                }
                XrBlock::Owd(_) | XrBlock::Unknown { .. } => {}
            }
            check_size("XR block", b.size())?;
        }
        check_size("XR", 4 + self.body_size())
    }
}

impl Body for Xr {
    const WHAT: &'static str = "XR";
    const PT: u8 = pt::XR;
    fn count(&self) -> u8 {
        // Reserved bits (§2): zero.
        0
    }
    fn body_size(&self) -> usize {
        4 + self.blocks.iter().map(XrBlock::size).sum::<usize>()
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        for b in &self.blocks {
            b.encode(out);
        }
    }
    fn decode_body(_reserved: u8, b: &[u8]) -> Result<Self, WireError> {
        WireError::need("XR", b, 4)?;
        let mut blocks = Vec::new();
        let mut rest = &b[4..];
        while !rest.is_empty() {
            WireError::need("XR block", rest, 4)?;
            let (bt, ts) = (rest[0], rest[1]);
            let len = (usize::from(be16(rest, 2)) + 1) * 4;
            WireError::need("XR block", rest, len)?;
            let body = &rest[4..len];
            blocks.push(match bt {
                BT_LOSS_RLE => XrBlock::LossRle(RleBlock::decode(ts & 0xf, body)?),
                BT_DISCARD_RLE => {
                    XrBlock::DiscardRle { early: ts & 0x10 != 0, block: RleBlock::decode(ts & 0xf, body)? }
                }
                // BT 250 is unassigned: another implementation's block of that
                // type and another length stays an unknown block, so the RR
                // and RLE blocks beside it still count.
                BT_OWD if body.len() == OwdBlock::SIZE - 4 => XrBlock::Owd(OwdBlock::decode(body)?),
                _ => XrBlock::Unknown { bt, type_specific: ts, body: body.to_vec() },
            });
            rest = &rest[len..];
        }
        Ok(Xr { ssrc: be32(b, 0), blocks })
    }
}
