//! ULPFEC (RFC 5109): one FEC packet protects a group of up to 48 RTP packets
//! of one stream by XOR, so any one of them lost can be rebuilt byte for byte,
//! its length included (protection §8, recovery §9).
//!
//! ULPFEC rather than FlexFEC (RFC 8627): it is what Chromium negotiates by
//! default (`red`/`ulpfec`), so a receiver that understands it can recover
//! from real browsers' streams; its 16/48-packet masks cover the groups a
//! video frame's packets form.
//!
//! [`UlpfecPacket`] is the FEC payload (FEC header §7.3 and its protection
//! levels §7.4), carried as the payload of an RTP packet with the `ulpfec`
//! payload type or inside RED (RFC 2198).

use crate::rtp::{RtpPacket, FIXED_HEADER_LEN};
use crate::{Wire, WireError};

const WHAT: &str = "ULPFEC packet";
/// RFC 5109 §7.3: the FEC header.
const FEC_HEADER_LEN: usize = 10;
/// RFC 5109 §7.4: with L=1 the mask covers 48 packets, else 16.
pub const MAX_GROUP: usize = 48;

/// One protection level (RFC 5109 §7.4): the packets it covers and the XOR
/// of their octets after the fixed header, for `payload.len()` octets
/// (the protection length, 16 bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UlpLevel {
    /// Bit 63 is `sn_base`, bit 62 `sn_base + 1`, ...: left-aligned as on the
    /// wire. With `long_mask` false only the top 16 bits count, else the top
    /// 48; encode masks the rest.
    pub mask: u64,
    pub payload: Vec<u8>,
}

/// The FEC payload (RFC 5109 §7.3–7.4). Recovery fields hold the XOR of the
/// protected packets' fields; widths: CC 4 bits, PT 7 bits (masked on encode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UlpfecPacket {
    /// L: 48-bit masks (true) or 16-bit.
    pub long_mask: bool,
    pub p_recovery: bool,
    pub x_recovery: bool,
    pub cc_recovery: u8,
    pub m_recovery: bool,
    pub pt_recovery: u8,
    /// The lowest sequence number protected (RFC 5109 §7.3).
    pub sn_base: u16,
    pub ts_recovery: u32,
    /// XOR of the protected packets' lengths after the fixed header.
    pub length_recovery: u16,
    /// At least one; level 0 first.
    pub levels: Vec<UlpLevel>,
}

impl UlpfecPacket {
    fn mask_width(&self) -> usize {
        if self.long_mask {
            48
        } else {
            16
        }
    }
    fn level_mask(&self, l: &UlpLevel) -> u64 {
        l.mask & !(u64::MAX >> self.mask_width())
    }
    /// Sequence numbers `level` protects.
    pub fn protected(&self, level: usize) -> Vec<u16> {
        let Some(l) = self.levels.get(level) else { return Vec::new() };
        let mask = self.level_mask(l);
        (0..self.mask_width())
            .filter(|i| mask & (1 << (63 - i)) != 0)
            .map(|i| self.sn_base.wrapping_add(i as u16))
            .collect()
    }
    fn level_header_len(&self) -> usize {
        if self.long_mask {
            8
        } else {
            4
        }
    }
    /// Levels whose payload fits the 16-bit protection length (others are left out by encode).
    fn encodable(&self) -> impl Iterator<Item = &UlpLevel> {
        self.levels.iter().filter(|l| l.payload.len() <= u16::MAX as usize)
    }
}

impl Wire for UlpfecPacket {
    fn wire_size(&self) -> usize {
        FEC_HEADER_LEN + self.encodable().map(|l| self.level_header_len() + l.payload.len()).sum::<usize>()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        // RFC 5109 §7.3: E(0) L P X CC | M PT | SN base | TS recovery | length recovery.
        out.push(
            u8::from(self.long_mask) << 6
                | u8::from(self.p_recovery) << 5
                | u8::from(self.x_recovery) << 4
                | (self.cc_recovery & 0x0f),
        );
        out.push(u8::from(self.m_recovery) << 7 | (self.pt_recovery & 0x7f));
        out.extend_from_slice(&self.sn_base.to_be_bytes());
        out.extend_from_slice(&self.ts_recovery.to_be_bytes());
        out.extend_from_slice(&self.length_recovery.to_be_bytes());
        for l in self.encodable() {
            // RFC 5109 §7.4: protection length (16) and the mask (16 or 48 bits).
            out.extend_from_slice(&(l.payload.len() as u16).to_be_bytes());
            let mask = self.level_mask(l).to_be_bytes();
            out.extend_from_slice(&mask[..self.level_header_len() - 2]);
            out.extend_from_slice(&l.payload);
        }
    }

    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        WireError::need(WHAT, buf, FEC_HEADER_LEN)?;
        if buf[0] & 0x80 != 0 {
            return Err(WireError::invalid(WHAT, "E", "set; RFC 5109 §7.3 reserves it and requires 0"));
        }
        let mut p = UlpfecPacket {
            long_mask: buf[0] & 0x40 != 0,
            p_recovery: buf[0] & 0x20 != 0,
            x_recovery: buf[0] & 0x10 != 0,
            cc_recovery: buf[0] & 0x0f,
            m_recovery: buf[1] & 0x80 != 0,
            pt_recovery: buf[1] & 0x7f,
            sn_base: u16::from_be_bytes([buf[2], buf[3]]),
            ts_recovery: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
            length_recovery: u16::from_be_bytes([buf[8], buf[9]]),
            levels: Vec::new(),
        };
        let header = p.level_header_len();
        let mut rest = &buf[FEC_HEADER_LEN..];
        while !rest.is_empty() {
            if rest.len() < header {
                return Err(WireError::Truncated { what: "ULPFEC level header", need: header, have: rest.len() });
            }
            let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
            let mut mask = [0u8; 8];
            mask[..header - 2].copy_from_slice(&rest[2..header]);
            if rest.len() < header + len {
                return Err(WireError::Truncated {
                    what: "ULPFEC level payload",
                    need: header + len,
                    have: rest.len(),
                });
            }
            p.levels.push(UlpLevel { mask: u64::from_be_bytes(mask), payload: rest[header..header + len].to_vec() });
            rest = &rest[header + len..];
        }
        if p.levels.is_empty() {
            return Err(WireError::invalid(WHAT, "levels", "no protection level (RFC 5109 §7.4 requires level 0)"));
        }
        Ok(p)
    }
}

fn xor_into(acc: &mut Vec<u8>, bytes: &[u8]) {
    if acc.len() < bytes.len() {
        acc.resize(bytes.len(), 0);
    }
    for (a, b) in acc.iter_mut().zip(bytes) {
        *a ^= b;
    }
}

/// The FEC payload protecting `packets` (one stream, sequence numbers within
/// 48 of each other, in any order) in one level covering their whole length
/// (RFC 5109 §7.3: the XOR of their headers' fields and of their octets after
/// the fixed header; §8).
pub fn protect(packets: &[RtpPacket]) -> Result<UlpfecPacket, WireError> {
    let first = packets.first().ok_or_else(|| WireError::invalid(WHAT, "group", "no packets to protect"))?;
    if let Some(p) = packets.iter().find(|p| p.ssrc != first.ssrc) {
        return Err(WireError::invalid(
            WHAT,
            "ssrc",
            format!("{:#x} and {:#x}: ULPFEC protects one stream", first.ssrc, p.ssrc),
        ));
    }
    // The base is the packet every other follows within 48, across the wrap.
    let span = |base: u16| packets.iter().map(|p| p.sequence_number.wrapping_sub(base) as usize).max().unwrap_or(0);
    let base = packets
        .iter()
        .map(|p| p.sequence_number)
        .find(|&b| span(b) < MAX_GROUP)
        .ok_or_else(|| WireError::invalid(WHAT, "group", format!("sequence numbers span more than {MAX_GROUP}")))?;
    let mut fec = UlpfecPacket {
        long_mask: span(base) >= 16,
        p_recovery: false,
        x_recovery: false,
        cc_recovery: 0,
        m_recovery: false,
        pt_recovery: 0,
        sn_base: base,
        ts_recovery: 0,
        length_recovery: 0,
        levels: Vec::new(),
    };
    let (mut b0, mut b1, mut mask, mut payload) = (0u8, 0u8, 0u64, Vec::new());
    for p in packets {
        let bit = 1u64 << (63 - p.sequence_number.wrapping_sub(base));
        if mask & bit != 0 {
            return Err(WireError::invalid(WHAT, "group", format!("sequence number {} twice", p.sequence_number)));
        }
        mask |= bit;
        let bytes = p.to_bytes();
        let body = &bytes[FIXED_HEADER_LEN..];
        let len = u16::try_from(body.len()).map_err(|_| {
            WireError::invalid(WHAT, "length_recovery", format!("packet of {} octets exceeds 16 bits", bytes.len()))
        })?;
        b0 ^= bytes[0];
        b1 ^= bytes[1];
        fec.ts_recovery ^= p.timestamp;
        fec.length_recovery ^= len;
        xor_into(&mut payload, body);
    }
    fec.p_recovery = b0 & 0x20 != 0;
    fec.x_recovery = b0 & 0x10 != 0;
    fec.cc_recovery = b0 & 0x0f;
    fec.m_recovery = b1 & 0x80 != 0;
    fec.pt_recovery = b1 & 0x7f;
    fec.levels.push(UlpLevel { mask, payload });
    Ok(fec)
}

/// Rebuilds the one packet of `fec`'s level-0 group missing from `received`
/// (RFC 5109 §9.1): its header fields and length from the recovery fields, its
/// octets level by level. `ssrc` is the protected stream's (the FEC header
/// does not carry it). Packets of other streams or outside the group are ignored.
pub fn recover(fec: &UlpfecPacket, ssrc: u32, received: &[RtpPacket]) -> Result<RtpPacket, WireError> {
    let group = fec.protected(0);
    let have = |seq: u16| received.iter().find(|p| p.ssrc == ssrc && p.sequence_number == seq);
    let missing: Vec<u16> = group.iter().copied().filter(|&s| have(s).is_none()).collect();
    let lost = match missing.as_slice() {
        [one] => *one,
        [] => return Err(WireError::invalid(WHAT, "mask", "every protected packet was received; nothing to recover")),
        many => {
            return Err(WireError::invalid(
                WHAT,
                "mask",
                format!("{} protected packets missing; one FEC packet rebuilds one", many.len()),
            ))
        }
    };
    // RFC 5109 §9.1: XOR the FEC header with each received packet's header fields.
    let mut b0 = u8::from(fec.p_recovery) << 5 | u8::from(fec.x_recovery) << 4 | (fec.cc_recovery & 0x0f);
    let mut b1 = u8::from(fec.m_recovery) << 7 | (fec.pt_recovery & 0x7f);
    let (mut ts, mut len) = (fec.ts_recovery, fec.length_recovery);
    let bodies: Vec<(u16, Vec<u8>)> =
        group.iter().filter_map(|&s| have(s)).map(|p| (p.sequence_number, p.to_bytes())).collect();
    for (_, bytes) in &bodies {
        b0 ^= bytes[0];
        b1 ^= bytes[1];
        ts ^= u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        len ^= (bytes.len() - FIXED_HEADER_LEN) as u16;
    }
    // §9.1 and §9.2: the octets after the fixed header, each level over its range.
    let len = len as usize;
    let mut body = Vec::with_capacity(len);
    let mut start = 0usize;
    for (i, level) in fec.levels.iter().enumerate() {
        if start >= len {
            break;
        }
        let covers = fec.protected(i);
        if !covers.contains(&lost) {
            break;
        }
        let end = start + level.payload.len();
        let mut part = level.payload.clone();
        for s in covers.iter().filter(|&&s| s != lost) {
            let Some((_, bytes)) = bodies.iter().find(|(q, _)| q == s) else {
                return Err(WireError::invalid(
                    WHAT,
                    "mask",
                    format!("level {i} needs packet {s}, which was not received"),
                ));
            };
            let b = &bytes[FIXED_HEADER_LEN..];
            xor_into(&mut part, &b[start.min(b.len())..end.min(b.len())]);
        }
        body.extend_from_slice(&part);
        start = end;
    }
    if body.len() < len {
        return Err(WireError::invalid(
            WHAT,
            "levels",
            format!("protect {} of the lost packet's {len} octets", body.len()),
        ));
    }
    body.truncate(len);
    let mut bytes = Vec::with_capacity(FIXED_HEADER_LEN + len);
    bytes.push(2 << 6 | (b0 & 0x3f));
    bytes.push(b1);
    bytes.extend_from_slice(&lost.to_be_bytes());
    bytes.extend_from_slice(&ts.to_be_bytes());
    bytes.extend_from_slice(&ssrc.to_be_bytes());
    bytes.extend_from_slice(&body);
    RtpPacket::decode(&bytes)
}

/// Kept under its first name; the entry point is [`crate::fuzzing::ulpfec_recover`].
#[doc(hidden)]
pub use crate::fuzzing::ulpfec_recover as fuzz_recover;
