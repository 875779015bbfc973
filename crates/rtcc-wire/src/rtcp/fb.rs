//! Feedback messages with a fixed layout: generic NACK (RFC 4585 §6.2.1),
//! PLI (RFC 4585 §6.3.1) and REMB (draft-alvestrand-rmcat-remb-03 §2.2).
//! All share the feedback header (RFC 4585 §6.1): FMT in the count field,
//! then the packet sender's and the media source's SSRC.

use super::{be16, be32, check_size, fmt, pt, Body};
use crate::WireError;

/// The common feedback header's two SSRCs (RFC 4585 §6.1).
fn decode_ssrcs(what: &'static str, want_fmt: u8, count: u8, b: &[u8]) -> Result<(u32, u32), WireError> {
    if count != want_fmt {
        return Err(WireError::invalid(what, "FMT", format!("{count} where {what} is {want_fmt}")));
    }
    WireError::need(what, b, 8)?;
    Ok((be32(b, 0), be32(b, 4)))
}

/// One NACK FCI entry (RFC 4585 §6.2.1): a lost packet's sequence (PID) and
/// a bitmask of the 16 that follow it (BLP: bit i set = PID+i+1 lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NackPair {
    pub pid: u16,
    pub blp: u16,
}

impl NackPair {
    /// The sequences this entry reports lost, in order, wrapping at 2¹⁶.
    pub fn seqs(self) -> impl Iterator<Item = u16> {
        std::iter::once(self.pid)
            .chain((0..16u16).filter(move |i| self.blp & (1 << i) != 0).map(move |i| self.pid.wrapping_add(i + 1)))
    }
}

/// Packs lost sequences, given in sending order (wrapping at 2¹⁶), into
/// PID+BLP pairs: each sequence within 16 after the current PID joins its
/// mask, any other starts a new pair (RFC 4585 §6.2.1). Repeats collapse.
pub fn nack_pairs(seqs: impl IntoIterator<Item = u16>) -> Vec<NackPair> {
    let mut pairs: Vec<NackPair> = Vec::new();
    for s in seqs {
        if let Some(last) = pairs.last_mut() {
            let d = s.wrapping_sub(last.pid);
            if d == 0 {
                continue;
            }
            if (1..=16).contains(&d) {
                last.blp |= 1 << (d - 1);
                continue;
            }
        }
        pairs.push(NackPair { pid: s, blp: 0 });
    }
    pairs
}

/// Generic NACK, RTPFB FMT 1 (RFC 4585 §6.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    /// At least one (§6.2.1: the FCI holds one or more entries); at most
    /// what the length field spans.
    pub pairs: Vec<NackPair>,
}

const MAX_NACK_PAIRS: usize = super::MAX_PACKET_BYTES / 4 - 3;

impl Nack {
    pub fn new(sender_ssrc: u32, media_ssrc: u32, pairs: Vec<NackPair>) -> Result<Self, WireError> {
        let n = Nack { sender_ssrc, media_ssrc, pairs };
        n.check()?;
        Ok(n)
    }

    /// A NACK for lost sequences in sending order (see [`nack_pairs`]).
    pub fn from_seqs(
        sender_ssrc: u32,
        media_ssrc: u32,
        seqs: impl IntoIterator<Item = u16>,
    ) -> Result<Self, WireError> {
        Nack::new(sender_ssrc, media_ssrc, nack_pairs(seqs))
    }

    /// Every sequence reported lost, pair by pair.
    pub fn seqs(&self) -> impl Iterator<Item = u16> + '_ {
        self.pairs.iter().flat_map(|p| p.seqs())
    }

    pub fn check(&self) -> Result<(), WireError> {
        if self.pairs.is_empty() {
            return Err(WireError::invalid("NACK", "FCI", "no entries; RFC 4585 §6.2.1 needs one or more"));
        }
        check_size("NACK", 4 + self.body_size())
    }
}

impl Body for Nack {
    const WHAT: &'static str = "NACK";
    const PT: u8 = pt::RTPFB;
    fn count(&self) -> u8 {
        fmt::NACK
    }
    fn body_size(&self) -> usize {
        8 + 4 * self.pairs.len().min(MAX_NACK_PAIRS)
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        out.extend_from_slice(&self.media_ssrc.to_be_bytes());
        for p in self.pairs.iter().take(MAX_NACK_PAIRS) {
            out.extend_from_slice(&p.pid.to_be_bytes());
            out.extend_from_slice(&p.blp.to_be_bytes());
        }
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        let (sender_ssrc, media_ssrc) = decode_ssrcs("NACK", fmt::NACK, count, b)?;
        let fci = &b[8..];
        if fci.is_empty() || !fci.len().is_multiple_of(4) {
            return Err(WireError::invalid(
                "NACK",
                "FCI",
                format!("{} bytes, not a positive multiple of 4", fci.len()),
            ));
        }
        let pairs = fci.chunks_exact(4).map(|c| NackPair { pid: be16(c, 0), blp: be16(c, 2) }).collect();
        Ok(Nack { sender_ssrc, media_ssrc, pairs })
    }
}

/// Picture loss indication, PSFB FMT 1 (RFC 4585 §6.3.1): no FCI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pli {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
}

impl Body for Pli {
    const WHAT: &'static str = "PLI";
    const PT: u8 = pt::PSFB;
    fn count(&self) -> u8 {
        fmt::PLI
    }
    fn body_size(&self) -> usize {
        8
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        out.extend_from_slice(&self.media_ssrc.to_be_bytes());
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        let (sender_ssrc, media_ssrc) = decode_ssrcs("PLI", fmt::PLI, count, b)?;
        if b.len() != 8 {
            return Err(WireError::invalid(
                "PLI",
                "FCI",
                format!("{} bytes; a PLI has none (RFC 4585 §6.3.1)", b.len() - 8),
            ));
        }
        Ok(Pli { sender_ssrc, media_ssrc })
    }
}

/// A REMB bitrate as the wire holds it (draft-alvestrand-rmcat-remb-03
/// §2.2): mantissa (18 bits) × 2^exponent (6 bits) bits/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RembBitrate {
    pub exponent: u8,
    pub mantissa: u32,
}

impl RembBitrate {
    pub const MAX_MANTISSA: u32 = (1 << 18) - 1;
    pub const MAX_EXPONENT: u8 = 63;

    /// The smallest exponent whose mantissa holds `bps`, rounding down so the
    /// sender never hears more than the estimate (as libwebrtc's remb.cc).
    /// `.bps()` of the result is what the wire says; `bps − that` is the
    /// rounding, under 2^exponent.
    pub fn from_bps(bps: u64) -> Self {
        let mut exponent = 0u8;
        while (bps >> exponent) > u64::from(Self::MAX_MANTISSA) {
            exponent += 1;
        }
        RembBitrate { exponent, mantissa: (bps >> exponent) as u32 }
    }

    /// The bitrate in bits/s; saturates at u64::MAX (exponents above 45 with
    /// a full mantissa exceed it).
    pub fn bps(self) -> u64 {
        let m = u128::from(self.mantissa & Self::MAX_MANTISSA);
        u64::try_from(m << (self.exponent & Self::MAX_EXPONENT)).unwrap_or(u64::MAX)
    }

    /// What `from_bps(bps)` loses to rounding, in bits/s.
    pub fn rounding(bps: u64) -> u64 {
        bps - Self::from_bps(bps).bps()
    }

    fn check(self) -> Result<(), WireError> {
        if self.exponent > Self::MAX_EXPONENT || self.mantissa > Self::MAX_MANTISSA {
            return Err(WireError::invalid(
                "REMB",
                "bitrate",
                format!("exponent {} or mantissa {} over 6/18 bits", self.exponent, self.mantissa),
            ));
        }
        Ok(())
    }
}

/// Receiver estimated maximum bitrate, PSFB FMT 15 with the 'REMB'
/// identifier (draft-alvestrand-rmcat-remb-03 §2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remb {
    pub sender_ssrc: u32,
    /// The draft says 0 here; kept as sent.
    pub media_ssrc: u32,
    pub bitrate: RembBitrate,
    /// The streams the estimate covers: at most 255 (an 8-bit count).
    pub ssrcs: Vec<u32>,
}

impl Remb {
    /// A REMB for `bps`, rounded down to what the wire holds.
    pub fn new(sender_ssrc: u32, bps: u64, ssrcs: Vec<u32>) -> Result<Self, WireError> {
        let r = Remb { sender_ssrc, media_ssrc: 0, bitrate: RembBitrate::from_bps(bps), ssrcs };
        r.check()?;
        Ok(r)
    }
    pub fn check(&self) -> Result<(), WireError> {
        self.bitrate.check()?;
        if self.ssrcs.len() > 255 {
            return Err(WireError::invalid(
                "REMB",
                "num SSRC",
                format!("{} SSRCs, the 8-bit count holds 255", self.ssrcs.len()),
            ));
        }
        Ok(())
    }
}

impl Body for Remb {
    const WHAT: &'static str = "REMB";
    const PT: u8 = pt::PSFB;
    fn count(&self) -> u8 {
        fmt::AFB
    }
    fn body_size(&self) -> usize {
        16 + 4 * self.ssrcs.len().min(255)
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        out.extend_from_slice(&self.media_ssrc.to_be_bytes());
        out.extend_from_slice(b"REMB");
        let n = self.ssrcs.len().min(255) as u32;
        let exp = u32::from(self.bitrate.exponent & RembBitrate::MAX_EXPONENT);
        out.extend_from_slice(
            &((n << 24) | (exp << 18) | (self.bitrate.mantissa & RembBitrate::MAX_MANTISSA)).to_be_bytes(),
        );
        for s in self.ssrcs.iter().take(255) {
            out.extend_from_slice(&s.to_be_bytes());
        }
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        let (sender_ssrc, media_ssrc) = decode_ssrcs("REMB", fmt::AFB, count, b)?;
        WireError::need("REMB", b, 16)?;
        if &b[8..12] != b"REMB" {
            return Err(WireError::invalid("REMB", "unique identifier", "not 'REMB'"));
        }
        let w = be32(b, 12);
        let n = (w >> 24) as usize;
        if b.len() != 16 + 4 * n {
            return Err(WireError::invalid("REMB", "num SSRC", format!("{n} SSRCs in {} bytes of list", b.len() - 16)));
        }
        let bitrate = RembBitrate { exponent: ((w >> 18) & 0x3f) as u8, mantissa: w & RembBitrate::MAX_MANTISSA };
        let ssrcs = (0..n).map(|i| be32(b, 16 + 4 * i)).collect();
        Ok(Remb { sender_ssrc, media_ssrc, bitrate, ssrcs })
    }
}
