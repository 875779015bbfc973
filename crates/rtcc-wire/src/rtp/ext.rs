//! RTP header extensions: the block after the CSRCs (RFC 3550 §5.3.1) in the
//! one-byte and two-byte element forms of RFC 8285, the id→extension map a
//! session negotiates (RFC 8285 §5, `a=extmap`), and the typed extensions
//! congestion control reads.

use crate::{Wire, WireError};

const WHAT: &str = "RTP header extension";

/// RFC 8285 §4.2: profile of the one-byte form.
const ONE_BYTE_PROFILE: u16 = 0xBEDE;
/// RFC 8285 §4.3: profile of the two-byte form, 0x100 followed by 4 app bits.
const TWO_BYTE_PROFILE: u16 = 0x1000;

/// draft-holmer-rmcat-transport-wide-cc-extensions-01 §2.
pub const TRANSPORT_CC_URI: &str = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
pub const ABS_SEND_TIME_URI: &str = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time";
pub const ABS_CAPTURE_TIME_URI: &str = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time";

/// One element: a local id and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionElement {
    pub id: u8,
    pub data: Vec<u8>,
}

/// The extension block. Elements outside their form's ranges (one-byte: id
/// 1..=14, 1..=16 octets; two-byte: id 1..=255, 0..=255 octets; RFC 8285
/// §4.2, §4.3) are refused by [`HeaderExtension::push`] and left out by
/// `encode` if put there directly. Padding between elements is dropped on
/// decode; the block is padded with zeros to 32 bits on encode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderExtension {
    OneByte(Vec<ExtensionElement>),
    /// `appbits`: the 4 low bits of the profile (RFC 8285 §4.3), masked on encode.
    TwoByte {
        appbits: u8,
        elements: Vec<ExtensionElement>,
    },
    /// A profile other than RFC 8285's: its data as is, a multiple of 4 octets
    /// (RFC 3550 §5.3.1; encode pads with zeros otherwise).
    Other {
        profile: u16,
        data: Vec<u8>,
    },
}

fn fits_one_byte(e: &ExtensionElement) -> bool {
    (1..=14).contains(&e.id) && (1..=16).contains(&e.data.len())
}

fn fits_two_byte(e: &ExtensionElement) -> bool {
    e.id >= 1 && e.data.len() <= 255
}

/// RFC 3550 §5.3.1: the length field counts 32-bit words in 16 bits.
const MAX_DATA: usize = 0xffff * 4;

impl HeaderExtension {
    pub fn one_byte() -> Self {
        HeaderExtension::OneByte(Vec::new())
    }

    pub fn two_byte() -> Self {
        HeaderExtension::TwoByte { appbits: 0, elements: Vec::new() }
    }

    /// Adds an element, refusing one its form cannot carry.
    pub fn push(&mut self, id: u8, data: Vec<u8>) -> Result<(), WireError> {
        let e = ExtensionElement { id, data };
        let (fits, list, range) = match self {
            HeaderExtension::OneByte(list) => (fits_one_byte(&e), list, "one-byte form: id 1..=14, 1..=16 octets"),
            HeaderExtension::TwoByte { elements, .. } => {
                (fits_two_byte(&e), elements, "two-byte form: id 1..=255, 0..=255 octets")
            }
            HeaderExtension::Other { .. } => {
                return Err(WireError::invalid(WHAT, "profile", "elements need the RFC 8285 one-byte or two-byte form"))
            }
        };
        if !fits {
            return Err(WireError::invalid(
                WHAT,
                "element",
                format!("id {} with {} octets ({range})", e.id, e.data.len()),
            ));
        }
        list.push(e);
        if self.data_len() > MAX_DATA {
            if let HeaderExtension::OneByte(l) | HeaderExtension::TwoByte { elements: l, .. } = self {
                l.pop();
            }
            return Err(WireError::invalid(WHAT, "length", "block exceeds 65535 words"));
        }
        Ok(())
    }

    /// The first element with `id`.
    pub fn get(&self, id: u8) -> Option<&[u8]> {
        self.elements().iter().find(|e| e.id == id).map(|e| e.data.as_slice())
    }

    pub fn elements(&self) -> &[ExtensionElement] {
        match self {
            HeaderExtension::OneByte(l) | HeaderExtension::TwoByte { elements: l, .. } => l,
            HeaderExtension::Other { .. } => &[],
        }
    }

    /// The ranges `encode` would otherwise enforce by leaving elements out.
    pub fn check(&self) -> Result<(), WireError> {
        let bad = match self {
            HeaderExtension::OneByte(l) => l.iter().find(|e| !fits_one_byte(e)),
            HeaderExtension::TwoByte { appbits, elements } => {
                if *appbits > 0x0f {
                    return Err(WireError::invalid(
                        WHAT,
                        "appbits",
                        format!("{appbits} does not fit 4 bits (RFC 8285 §4.3)"),
                    ));
                }
                elements.iter().find(|e| !fits_two_byte(e))
            }
            HeaderExtension::Other { data, .. } => {
                if data.len() % 4 != 0 || data.len() > MAX_DATA {
                    return Err(WireError::invalid(
                        WHAT,
                        "data",
                        format!("{} octets, not whole 32-bit words", data.len()),
                    ));
                }
                None
            }
        };
        match bad {
            Some(e) => Err(WireError::invalid(
                WHAT,
                "element",
                format!("id {} with {} octets does not fit its form", e.id, e.data.len()),
            )),
            None if self.data_len() > MAX_DATA => Err(WireError::invalid(WHAT, "length", "block exceeds 65535 words")),
            None => Ok(()),
        }
    }

    /// Element octets before padding to 32 bits.
    fn data_len(&self) -> usize {
        match self {
            HeaderExtension::OneByte(l) => l.iter().filter(|e| fits_one_byte(e)).map(|e| 1 + e.data.len()).sum(),
            HeaderExtension::TwoByte { elements, .. } => {
                elements.iter().filter(|e| fits_two_byte(e)).map(|e| 2 + e.data.len()).sum()
            }
            HeaderExtension::Other { data, .. } => data.len(),
        }
    }

    /// Padded data length, cut (at whole elements or words) to what 16 bits of words hold.
    fn padded_len(&self) -> usize {
        self.data_len().div_ceil(4).min(0xffff) * 4
    }

    /// Parses the block at the start of `buf`; returns it and the octets used.
    pub(crate) fn decode_prefix(buf: &[u8]) -> Result<(Self, usize), WireError> {
        WireError::need(WHAT, buf, 4)?;
        let profile = u16::from_be_bytes([buf[0], buf[1]]);
        let len = 4 * u16::from_be_bytes([buf[2], buf[3]]) as usize;
        WireError::need(WHAT, buf, 4 + len)?;
        let data = &buf[4..4 + len];
        let ext = if profile == ONE_BYTE_PROFILE {
            HeaderExtension::OneByte(parse_one_byte(data)?)
        } else if profile & 0xfff0 == TWO_BYTE_PROFILE {
            HeaderExtension::TwoByte { appbits: (profile & 0x0f) as u8, elements: parse_two_byte(data)? }
        } else {
            HeaderExtension::Other { profile, data: data.to_vec() }
        };
        Ok((ext, 4 + len))
    }
}

/// RFC 8285 §4.2: ID(4) L(4) with L+1 data octets; a zero octet is padding;
/// ID 15 ends processing of the block.
fn parse_one_byte(mut data: &[u8]) -> Result<Vec<ExtensionElement>, WireError> {
    let mut out = Vec::new();
    while let Some((&b, rest)) = data.split_first() {
        let (id, len) = (b >> 4, (b & 0x0f) as usize + 1);
        if id == 0 {
            // Padding octet; libwebrtc skips it whatever its length bits hold.
            data = rest;
            continue;
        }
        if id == 15 {
            break;
        }
        if rest.len() < len {
            return Err(WireError::Truncated { what: "RTP one-byte extension element", need: len, have: rest.len() });
        }
        out.push(ExtensionElement { id, data: rest[..len].to_vec() });
        data = &rest[len..];
    }
    Ok(out)
}

/// RFC 8285 §4.3: ID(8) L(8) with L data octets; a zero ID octet is padding.
fn parse_two_byte(mut data: &[u8]) -> Result<Vec<ExtensionElement>, WireError> {
    let mut out = Vec::new();
    while let Some((&id, rest)) = data.split_first() {
        if id == 0 {
            data = rest;
            continue;
        }
        let Some((&len, rest)) = rest.split_first() else {
            return Err(WireError::Truncated { what: "RTP two-byte extension element", need: 2, have: 1 });
        };
        let len = len as usize;
        if rest.len() < len {
            return Err(WireError::Truncated { what: "RTP two-byte extension element", need: len, have: rest.len() });
        }
        out.push(ExtensionElement { id, data: rest[..len].to_vec() });
        data = &rest[len..];
    }
    Ok(out)
}

impl Wire for HeaderExtension {
    fn wire_size(&self) -> usize {
        4 + self.padded_len()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let padded = self.padded_len();
        let profile = match self {
            HeaderExtension::OneByte(_) => ONE_BYTE_PROFILE,
            HeaderExtension::TwoByte { appbits, .. } => TWO_BYTE_PROFILE | (*appbits as u16 & 0x0f),
            HeaderExtension::Other { profile, .. } => *profile,
        };
        out.extend_from_slice(&profile.to_be_bytes());
        out.extend_from_slice(&((padded / 4) as u16).to_be_bytes());
        let start = out.len();
        match self {
            HeaderExtension::OneByte(l) => {
                for e in l.iter().filter(|e| fits_one_byte(e)) {
                    if out.len() - start + 1 + e.data.len() > padded {
                        break;
                    }
                    out.push(e.id << 4 | (e.data.len() - 1) as u8);
                    out.extend_from_slice(&e.data);
                }
            }
            HeaderExtension::TwoByte { elements, .. } => {
                for e in elements.iter().filter(|e| fits_two_byte(e)) {
                    if out.len() - start + 2 + e.data.len() > padded {
                        break;
                    }
                    out.push(e.id);
                    out.push(e.data.len() as u8);
                    out.extend_from_slice(&e.data);
                }
            }
            HeaderExtension::Other { data, .. } => out.extend_from_slice(&data[..data.len().min(padded)]),
        }
        out.resize(start + padded, 0);
    }

    /// The block alone, which must fill `buf`.
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let (e, used) = HeaderExtension::decode_prefix(buf)?;
        if used != buf.len() {
            return Err(WireError::invalid(WHAT, "length", format!("{} trailing octets", buf.len() - used)));
        }
        Ok(e)
    }
}

/// Transport-wide sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01
/// §2): 16 bits, one counter across the session's media streams, wrapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportSequenceNumber(pub u16);

/// abs-send-time (webrtc.org's rtp-hdrext/abs-send-time, 3 octets): the send
/// time in seconds as 6.18 fixed point (24 bits, wrapping every 64 s), the
/// middle bits of an NTP timestamp. Encode masks to 24 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbsSendTime(pub u32);

impl AbsSendTime {
    /// From a 64-bit NTP timestamp (UQ32.32): bits 14..38.
    pub fn from_ntp(ntp: u64) -> Self {
        AbsSendTime(((ntp >> 14) & 0x00ff_ffff) as u32)
    }
    /// From microseconds since any epoch, rounded to the nearest 2^-18 s
    /// tick (halves up), so the error is at most half a tick (1.9 µs).
    pub fn from_micros(us: u64) -> Self {
        AbsSendTime(((((us as u128) << 18) + 500_000) / 1_000_000 & 0x00ff_ffff) as u32)
    }
    /// Microseconds within the 64 s wrap, rounded down.
    pub fn micros(self) -> u64 {
        ((self.0 & 0x00ff_ffff) as u64 * 1_000_000) >> 18
    }
}

/// abs-capture-time (webrtc.org's rtp-hdrext/abs-capture-time): the capture
/// time as a 64-bit NTP timestamp (UQ32.32) and, optionally, the estimated
/// offset of the capturer's clock from the sender's (Q32.32 signed); 8 or 16
/// octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbsCaptureTime {
    pub capture_ntp: u64,
    pub clock_offset: Option<i64>,
}

impl Wire for TransportSequenceNumber {
    fn wire_size(&self) -> usize {
        2
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_be_bytes());
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        match buf {
            [a, b] => Ok(TransportSequenceNumber(u16::from_be_bytes([*a, *b]))),
            _ => Err(WireError::invalid(
                "transport-wide sequence number",
                "length",
                format!("{} octets, needs 2", buf.len()),
            )),
        }
    }
}

impl Wire for AbsSendTime {
    fn wire_size(&self) -> usize {
        3
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_be_bytes()[1..]);
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        match buf {
            [a, b, c] => Ok(AbsSendTime(u32::from_be_bytes([0, *a, *b, *c]))),
            _ => Err(WireError::invalid("abs-send-time", "length", format!("{} octets, needs 3", buf.len()))),
        }
    }
}

impl Wire for AbsCaptureTime {
    fn wire_size(&self) -> usize {
        if self.clock_offset.is_some() {
            16
        } else {
            8
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.capture_ntp.to_be_bytes());
        if let Some(o) = self.clock_offset {
            out.extend_from_slice(&o.to_be_bytes());
        }
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let word = |b: &[u8]| b.try_into().map(u64::from_be_bytes);
        match buf.len() {
            8 => Ok(AbsCaptureTime { capture_ntp: word(buf).unwrap_or(0), clock_offset: None }),
            16 => Ok(AbsCaptureTime {
                capture_ntp: word(&buf[..8]).unwrap_or(0),
                clock_offset: word(&buf[8..]).ok().map(|w| w as i64),
            }),
            n => Err(WireError::invalid("abs-capture-time", "length", format!("{n} octets, needs 8 or 16"))),
        }
    }
}

/// The extensions rtcc reads by type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionKind {
    TransportSequenceNumber,
    AbsSendTime,
    AbsCaptureTime,
}

impl ExtensionKind {
    pub fn uri(self) -> &'static str {
        match self {
            ExtensionKind::TransportSequenceNumber => TRANSPORT_CC_URI,
            ExtensionKind::AbsSendTime => ABS_SEND_TIME_URI,
            ExtensionKind::AbsCaptureTime => ABS_CAPTURE_TIME_URI,
        }
    }
    pub fn from_uri(uri: &str) -> Option<Self> {
        [ExtensionKind::TransportSequenceNumber, ExtensionKind::AbsSendTime, ExtensionKind::AbsCaptureTime]
            .into_iter()
            .find(|k| k.uri() == uri)
    }
}

/// One extension read through a map; ids the map does not know keep their bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedExtension {
    TransportSequenceNumber(TransportSequenceNumber),
    AbsSendTime(AbsSendTime),
    AbsCaptureTime(AbsCaptureTime),
    Unknown(ExtensionElement),
}

impl TypedExtension {
    pub fn kind(&self) -> Option<ExtensionKind> {
        match self {
            TypedExtension::TransportSequenceNumber(_) => Some(ExtensionKind::TransportSequenceNumber),
            TypedExtension::AbsSendTime(_) => Some(ExtensionKind::AbsSendTime),
            TypedExtension::AbsCaptureTime(_) => Some(ExtensionKind::AbsCaptureTime),
            TypedExtension::Unknown(_) => None,
        }
    }
}

/// The session's id→extension map (RFC 8285 §5, SDP `a=extmap`): ids 1..=255,
/// each once; ids above 14 force the two-byte form (RFC 8285 §4.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionMap {
    entries: Vec<(u8, ExtensionKind)>,
}

impl ExtensionMap {
    pub fn new() -> Self {
        ExtensionMap::default()
    }

    /// Maps `id` to `kind`; refuses id 0 and an id or kind already mapped.
    pub fn insert(&mut self, id: u8, kind: ExtensionKind) -> Result<(), WireError> {
        if id == 0 {
            return Err(WireError::invalid("extension map", "id", "0 is padding (RFC 8285 §4.2, §4.3)"));
        }
        if let Some((i, k)) = self.entries.iter().find(|(i, k)| *i == id || *k == kind) {
            return Err(WireError::invalid("extension map", "id", format!("id {i} already maps {}", k.uri())));
        }
        self.entries.push((id, kind));
        Ok(())
    }

    /// Maps `id` to the extension named by `uri`; returns false (and maps
    /// nothing) for a URI rtcc does not read, whose elements stay bytes.
    pub fn insert_uri(&mut self, id: u8, uri: &str) -> Result<bool, WireError> {
        match ExtensionKind::from_uri(uri) {
            Some(k) => self.insert(id, k).map(|_| true),
            None => Ok(false),
        }
    }

    pub fn id(&self, kind: ExtensionKind) -> Option<u8> {
        self.entries.iter().find(|(_, k)| *k == kind).map(|(i, _)| *i)
    }

    pub fn kind(&self, id: u8) -> Option<ExtensionKind> {
        self.entries.iter().find(|(i, _)| *i == id).map(|(_, k)| *k)
    }

    /// Every element of `ext` by type, in order; a mapped element of the
    /// wrong length is an error naming the extension.
    pub fn read(&self, ext: &HeaderExtension) -> Result<Vec<TypedExtension>, WireError> {
        ext.elements().iter().map(|e| self.read_element(e)).collect()
    }

    fn read_element(&self, e: &ExtensionElement) -> Result<TypedExtension, WireError> {
        Ok(match self.kind(e.id) {
            Some(ExtensionKind::TransportSequenceNumber) => {
                TypedExtension::TransportSequenceNumber(Wire::decode(&e.data)?)
            }
            Some(ExtensionKind::AbsSendTime) => TypedExtension::AbsSendTime(Wire::decode(&e.data)?),
            Some(ExtensionKind::AbsCaptureTime) => TypedExtension::AbsCaptureTime(Wire::decode(&e.data)?),
            None => TypedExtension::Unknown(e.clone()),
        })
    }

    /// The block carrying `exts`: the one-byte form when every element fits
    /// it (RFC 8285 §4.1 prefers it), else the two-byte form. A typed
    /// extension the map has no id for is an error.
    pub fn write(&self, exts: &[TypedExtension]) -> Result<HeaderExtension, WireError> {
        let mut elements = Vec::with_capacity(exts.len());
        for x in exts {
            let e = match (x, x.kind()) {
                (TypedExtension::Unknown(e), _) => e.clone(),
                (_, Some(kind)) => {
                    let id = self.id(kind).ok_or_else(|| {
                        WireError::invalid("extension map", "id", format!("no id negotiated for {}", kind.uri()))
                    })?;
                    let data = match x {
                        TypedExtension::TransportSequenceNumber(v) => v.to_bytes(),
                        TypedExtension::AbsSendTime(v) => v.to_bytes(),
                        TypedExtension::AbsCaptureTime(v) => v.to_bytes(),
                        TypedExtension::Unknown(e) => e.data.clone(),
                    };
                    ExtensionElement { id, data }
                }
                (_, None) => continue,
            };
            elements.push(e);
        }
        let mut block =
            if elements.iter().all(fits_one_byte) { HeaderExtension::one_byte() } else { HeaderExtension::two_byte() };
        for e in elements {
            block.push(e.id, e.data)?;
        }
        Ok(block)
    }
}
