//! H.264 over RTP in packetization mode 1 (RFC 6184 §6.3): single NAL unit
//! packets (§5.6), STAP-A aggregates (§5.7.1) and FU-A fragments (§5.8); the
//! packetizer from an Annex B access unit and the depacketizer back to one.

use crate::{Wire, WireError};

const WHAT: &str = "H.264 payload";
/// RFC 6184 §5.2: NAL unit types of the payload structures.
const STAP_A: u8 = 24;
const FU_A: u8 = 28;
/// Annex B start code the depacketizer writes before each NAL unit.
pub const START_CODE: [u8; 4] = [0, 0, 0, 1];

/// One RTP payload of packetization mode 1. NAL units are whole, header
/// octet first, and non-empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum H264Payload {
    /// §5.6: one NAL unit of type 1..=23.
    Single(Vec<u8>),
    /// §5.7.1: NAL units each preceded by a 16-bit size. The STAP-A header's
    /// F and NRI are derived from the units (F is their OR, NRI their maximum).
    StapA(Vec<Vec<u8>>),
    /// §5.8: a fragment of one NAL unit.
    FuA(FuA),
}

/// An FU-A (RFC 6184 §5.8): the fragmented unit's F and NRI (in the
/// indicator) and type (in the FU header), start/end flags and the fragment.
/// `nri` is 2 bits and `nal_type` 5 bits; encode masks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuA {
    pub forbidden: bool,
    pub nri: u8,
    pub start: bool,
    pub end: bool,
    pub nal_type: u8,
    pub data: Vec<u8>,
}

fn stap_header(nals: &[Vec<u8>]) -> u8 {
    let f = nals.iter().fold(0, |a, n| a | n.first().copied().unwrap_or(0) & 0x80);
    let nri = nals.iter().map(|n| n.first().copied().unwrap_or(0) & 0x60).max().unwrap_or(0);
    f | nri | STAP_A
}

impl Wire for H264Payload {
    fn wire_size(&self) -> usize {
        match self {
            H264Payload::Single(n) => n.len(),
            // Units longer than the 16-bit size field are left out by encode.
            H264Payload::StapA(ns) => 1 + ns.iter().filter(|n| n.len() <= 0xffff).map(|n| 2 + n.len()).sum::<usize>(),
            H264Payload::FuA(f) => 2 + f.data.len(),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            H264Payload::Single(n) => out.extend_from_slice(n),
            H264Payload::StapA(ns) => {
                out.push(stap_header(ns));
                for n in ns.iter().filter(|n| n.len() <= 0xffff) {
                    out.extend_from_slice(&(n.len() as u16).to_be_bytes());
                    out.extend_from_slice(n);
                }
            }
            H264Payload::FuA(f) => {
                // FU indicator: F | NRI | 28; FU header: S | E | R=0 | type.
                out.push(u8::from(f.forbidden) << 7 | (f.nri & 0x03) << 5 | FU_A);
                out.push(u8::from(f.start) << 7 | u8::from(f.end) << 6 | (f.nal_type & 0x1f));
                out.extend_from_slice(&f.data);
            }
        }
    }

    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let (&b0, rest) = buf.split_first().ok_or(WireError::Truncated { what: WHAT, need: 1, have: 0 })?;
        match b0 & 0x1f {
            1..=23 => Ok(H264Payload::Single(buf.to_vec())),
            STAP_A => {
                let mut nals = Vec::new();
                let mut rest = rest;
                while !rest.is_empty() {
                    if rest.len() < 2 {
                        return Err(WireError::Truncated { what: "H.264 STAP-A unit size", need: 2, have: rest.len() });
                    }
                    let n = u16::from_be_bytes([rest[0], rest[1]]) as usize;
                    if n == 0 {
                        return Err(WireError::invalid(
                            "H.264 STAP-A",
                            "NALU size",
                            "0; a unit has at least its header octet",
                        ));
                    }
                    if rest.len() < 2 + n {
                        return Err(WireError::Truncated { what: "H.264 STAP-A unit", need: 2 + n, have: rest.len() });
                    }
                    nals.push(rest[2..2 + n].to_vec());
                    rest = &rest[2 + n..];
                }
                if nals.is_empty() {
                    return Err(WireError::invalid(
                        "H.264 STAP-A",
                        "units",
                        "none (RFC 6184 §5.7.1 aggregates at least one)",
                    ));
                }
                Ok(H264Payload::StapA(nals))
            }
            FU_A => {
                let (&h, data) =
                    rest.split_first().ok_or(WireError::Truncated { what: "H.264 FU-A", need: 2, have: 1 })?;
                let (start, end) = (h & 0x80 != 0, h & 0x40 != 0);
                if start && end {
                    return Err(WireError::invalid(
                        "H.264 FU-A",
                        "S/E",
                        "both set; RFC 6184 §5.8 forbids a whole unit in one FU",
                    ));
                }
                if data.is_empty() {
                    return Err(WireError::invalid("H.264 FU-A", "payload", "empty fragment"));
                }
                Ok(H264Payload::FuA(FuA {
                    forbidden: b0 & 0x80 != 0,
                    nri: (b0 >> 5) & 0x03,
                    start,
                    end,
                    nal_type: h & 0x1f,
                    data: data.to_vec(),
                }))
            }
            t => Err(WireError::invalid(
                WHAT,
                "type",
                format!("NAL unit type {t} is not allowed in packetization mode 1 (RFC 6184 §6.3)"),
            )),
        }
    }
}

/// NAL units of an Annex B byte stream (start codes 00 00 01 and 00 00 00 01;
/// zero octets before a start code belong to it, H.264 Annex B.2), never an
/// empty one.
pub fn split_annexb(stream: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i] == 0 && stream[i + 1] == 0 && stream[i + 2] == 1 {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let mut end = starts.get(k + 1).map_or(stream.len(), |&n| n - 3);
        while end > s && stream[end - 1] == 0 {
            end -= 1;
        }
        if end > s {
            out.push(&stream[s..end]);
        }
    }
    out
}

/// Packetizes one access unit in Annex B form; see [`packetize_nals`].
pub fn packetize(annexb: &[u8], max_payload: usize) -> Result<Vec<H264Payload>, WireError> {
    packetize_nals(&split_annexb(annexb), max_payload)
}

/// Payloads of at most `max_payload` octets for `nals` in order: runs of
/// units that fit together go in one STAP-A, a unit alone that fits goes as a
/// single NAL unit packet, a larger one as FU-A fragments of near-equal size
/// (RFC 6184 §5.7.1, §5.8). Units must be non-empty with a type 1..=23.
pub fn packetize_nals(nals: &[&[u8]], max_payload: usize) -> Result<Vec<H264Payload>, WireError> {
    const WHAT: &str = "H.264 packetizer";
    if max_payload < 3 {
        return Err(WireError::invalid(WHAT, "max_payload", format!("{max_payload} octets; an FU-A needs 3")));
    }
    for n in nals {
        match n.first().map(|b| b & 0x1f) {
            Some(1..=23) => {}
            Some(t) => {
                return Err(WireError::invalid(WHAT, "NAL unit type", format!("{t}; only 1..=23 can be packetized")))
            }
            None => return Err(WireError::invalid(WHAT, "NAL unit", "empty")),
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < nals.len() {
        // Aggregate as many following units as fit one STAP-A.
        let mut size = 1;
        let mut j = i;
        while j < nals.len() && nals[j].len() <= 0xffff && size + 2 + nals[j].len() <= max_payload {
            size += 2 + nals[j].len();
            j += 1;
        }
        if j - i >= 2 {
            out.push(H264Payload::StapA(nals[i..j].iter().map(|n| n.to_vec()).collect()));
            i = j;
            continue;
        }
        let n = nals[i];
        if n.len() <= max_payload {
            out.push(H264Payload::Single(n.to_vec()));
        } else {
            let body = &n[1..];
            let room = max_payload - 2;
            let count = body.len().div_ceil(room);
            let (base, extra) = (body.len() / count, body.len() % count);
            let mut at = 0;
            for k in 0..count {
                let len = base + usize::from(k < extra);
                out.push(H264Payload::FuA(FuA {
                    forbidden: n[0] & 0x80 != 0,
                    nri: (n[0] >> 5) & 0x03,
                    start: k == 0,
                    end: k + 1 == count,
                    nal_type: n[0] & 0x1f,
                    data: body[at..at + len].to_vec(),
                }));
                at += len;
            }
        }
        i += 1;
    }
    Ok(out)
}

/// What the depacketizer made of a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Depacketized {
    Pending,
    /// The access unit the packet completed, in Annex B form with 4-octet start codes.
    AccessUnit(Vec<u8>),
}

/// Rebuilds access units from packets in sequence order: the RTP marker ends
/// one (RFC 6184 §5.1); a sequence gap or a new timestamp drops the unit in
/// progress as incomplete, as does an FU-A without its start or end.
#[derive(Debug, Default)]
pub struct H264Depacketizer {
    unit: Vec<u8>,
    /// The timestamp of the unit in progress.
    unit_ts: Option<u32>,
    last_seq: Option<u16>,
    /// Inside an FU-A (its start seen, its end not yet).
    in_fu: bool,
    broken: bool,
    incomplete: u64,
}

impl H264Depacketizer {
    pub fn new() -> Self {
        H264Depacketizer::default()
    }

    /// Access units dropped for a missing packet so far.
    pub fn incomplete_units(&self) -> u64 {
        self.incomplete
    }

    fn drop_unit(&mut self) {
        if !self.unit.is_empty() || self.in_fu || self.broken {
            self.incomplete += 1;
        }
        self.unit.clear();
        self.in_fu = false;
        self.broken = false;
    }

    /// Takes one RTP packet's sequence number, timestamp, marker and payload.
    /// A payload that does not parse is an error and leaves the state as it was.
    pub fn push(
        &mut self,
        sequence_number: u16,
        timestamp: u32,
        marker: bool,
        payload: &[u8],
    ) -> Result<Depacketized, WireError> {
        let p = H264Payload::decode(payload)?;
        let gap = self.last_seq.is_some_and(|s| sequence_number != s.wrapping_add(1));
        match self.unit_ts {
            // A new access unit while the previous one never saw its marker:
            // the lost packets are charged to that one, which is dropped.
            Some(ts) if ts != timestamp => self.drop_unit(),
            Some(_) => self.broken |= gap,
            // After a complete unit, lost packets were this unit's (single
            // and STAP-A packets carry no start flag), so it is dropped.
            None => self.broken = gap,
        }
        self.last_seq = Some(sequence_number);
        self.unit_ts = Some(timestamp);
        match p {
            H264Payload::Single(n) => {
                self.broken |= self.in_fu;
                self.in_fu = false;
                self.unit.extend_from_slice(&START_CODE);
                self.unit.extend_from_slice(&n);
            }
            H264Payload::StapA(ns) => {
                self.broken |= self.in_fu;
                self.in_fu = false;
                for n in ns {
                    self.unit.extend_from_slice(&START_CODE);
                    self.unit.extend_from_slice(&n);
                }
            }
            H264Payload::FuA(f) => {
                if f.start {
                    self.broken |= self.in_fu;
                    self.unit.extend_from_slice(&START_CODE);
                    self.unit.push(u8::from(f.forbidden) << 7 | (f.nri & 0x03) << 5 | (f.nal_type & 0x1f));
                    self.in_fu = true;
                } else if !self.in_fu {
                    self.broken = true;
                }
                if self.in_fu {
                    self.unit.extend_from_slice(&f.data);
                }
                if f.end {
                    self.in_fu = false;
                }
            }
        }
        if !marker {
            return Ok(Depacketized::Pending);
        }
        self.unit_ts = None;
        if self.broken || self.in_fu || self.unit.is_empty() {
            self.drop_unit();
            return Ok(Depacketized::Pending);
        }
        Ok(Depacketized::AccessUnit(std::mem::take(&mut self.unit)))
    }
}
