//! A [`Packet`] as the RTP datagram it stands for, and back: what a real
//! socket carries between a sending end and a receiving end.
//!
//! One flow is one [`Session`]: a media stream, its RTX stream (RFC 4588
//! §4), an FEC stream of its own and an audio stream, each an SSRC; payload
//! types and header extension ids fixed as rtcc negotiates them. Every
//! packet carries the transport-wide sequence number
//! (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2) and abs-send-time;
//! every packet of a frame the Dependency Descriptor (AV1 RTP specification,
//! Appendix A) with the frame number, start and end bits and a template (key
//! or delta frame); the first packet of a key frame carries the template
//! structure.
//!
//! Per kind:
//! - media: the codec's RTP payload (VP8, H.264, opaque test bytes), or for a
//!   model encoder's frame `size` zero octets under the model payload type;
//!   a packet the FEC encoder protects travels inside RED (RFC 2198, the
//!   primary block alone), as libwebrtc sends media while ULPFEC is on, so
//!   the receiver knows which packets a parity may cover;
//! - retransmission: the original's payload after its sequence number (OSN)
//!   on the RTX stream, which numbers its own packets (RED inside when the
//!   original was);
//! - padding and probes: padding-only packets on the RTX stream, as
//!   libwebrtc sends them (RFC 3550 §5.1 padding); the P field holds at most
//!   255 octets, so a larger one carries the rest as zero padding inside the
//!   header extension block (RFC 8285 §4.2 allows it after the last
//!   element). A receiver cannot tell a probe from padding: both decode as
//!   `Padding`;
//! - FEC: an RFC 5109 FEC packet (§7.3 header, §7.4 level 0) on the FEC
//!   stream. The packets it protects are taken with their Dependency
//!   Descriptor alone as an 8-octet extension block (not the transport
//!   extensions, which are written at send time), so the parity's level-0
//!   payload starts with the XOR of those blocks: the frame number, start,
//!   end and key bits a rebuilt packet recovers. A standard ULPFEC receiver
//!   working from the datagrams as sent would not rebuild the same packets.
//!   A model encoder's parity (its own payload type) carries zeros for the
//!   rest and no length recovery;
//! - audio: `size` zero octets on the audio stream.
//!
//! `size` is what the simulator counts: the codec's RTP payload, or the
//! padding octets, or for a parity its longest protected payload plus the
//! FEC header overhead the flow sets; the datagram adds the fixed header,
//! the extension block, a RED header and a parity's descriptor XOR
//! ([`Session::overhead`]). TCP segments and UDP cross traffic are not RTP
//! and have no form here.

use std::fmt;

use crate::packet::{
    Packet, PacketKind, Payload, PayloadFormat, FLAG_FIRST, FLAG_FRAME, FLAG_KEY, FLAG_MARKER, FLAG_PROTECTED,
};
use crate::units::DataSize;
use rtcc_wire::fec::{UlpLevel, UlpfecPacket, MAX_GROUP};
use rtcc_wire::payload::red::RedPayload;
use rtcc_wire::rtp::dd::{DependencyDescriptor, ExtendedFields, FrameDependencyStructure};
use rtcc_wire::rtp::{HeaderExtension, RtpPacket, FIXED_HEADER_LEN};
use rtcc_wire::{Wire, WireError};

/// Header extension ids (RFC 8285 one-byte form), as Chromium's offer
/// numbers abs-send-time and transport-wide cc.
pub const EXT_ABS_SEND_TIME: u8 = 2;
pub const EXT_TRANSPORT_CC: u8 = 3;
pub const EXT_DEPENDENCY_DESCRIPTOR: u8 = 8;

/// Payload types (RFC 3551 §6 dynamic range). Each media format has its own
/// RTX payload type (RFC 4588 §8.1 `apt`). 99 and 101 are left out: they
/// are Wireshark's default RED and telephone-event types.
pub const PT_VP8: u8 = 96;
pub const PT_VP8_RTX: u8 = 97;
pub const PT_MODEL: u8 = 98;
pub const PT_MODEL_RTX: u8 = 104;
pub const PT_OPAQUE: u8 = 100;
pub const PT_OPAQUE_RTX: u8 = 106;
pub const PT_H264: u8 = 102;
pub const PT_H264_RTX: u8 = 103;
pub const PT_AUDIO: u8 = 111;
/// RED (RFC 2198) around a protected packet, and its RTX type.
pub const PT_RED: u8 = 121;
pub const PT_RED_RTX: u8 = 122;
/// ULPFEC over real payloads, and over a model encoder's (no bytes).
pub const PT_ULPFEC: u8 = 127;
pub const PT_ULPFEC_MODEL: u8 = 126;

/// The payload type a format's packets carry (a model frame's: `PT_MODEL`).
pub fn payload_type(format: Option<PayloadFormat>) -> u8 {
    match format {
        None => PT_MODEL,
        Some(PayloadFormat::Opaque) => PT_OPAQUE,
        Some(PayloadFormat::Vp8) => PT_VP8,
        Some(PayloadFormat::H264) => PT_H264,
        Some(PayloadFormat::Parity) => PT_ULPFEC,
    }
}

/// Media payload type → (format, RTX payload type); `Some(None)` is a model frame.
fn media_format(pt: u8) -> Option<(Option<PayloadFormat>, u8)> {
    Some(match pt {
        PT_MODEL => (None, PT_MODEL_RTX),
        PT_OPAQUE => (Some(PayloadFormat::Opaque), PT_OPAQUE_RTX),
        PT_VP8 => (Some(PayloadFormat::Vp8), PT_VP8_RTX),
        PT_H264 => (Some(PayloadFormat::H264), PT_H264_RTX),
        _ => return None,
    })
}

/// The media payload type an RTX payload type repeats (its `apt`).
fn rtx_media_pt(pt: u8) -> Option<u8> {
    [PT_MODEL, PT_OPAQUE, PT_VP8, PT_H264].into_iter().find(|&m| media_format(m).is_some_and(|f| f.1 == pt))
}

/// The Dependency Descriptor's templates: one layer, key and delta frames.
const KEY_TEMPLATE: u8 = 0;
const DELTA_TEMPLATE: u8 = 1;

/// A frame packet's descriptor: its frame number, start and end bits, its
/// template (key or delta), and on a key frame's first packet the structure.
pub fn descriptor(frame: u16, flags: u8) -> DependencyDescriptor {
    let key = flags & FLAG_KEY != 0;
    let first = flags & FLAG_FIRST != 0;
    DependencyDescriptor {
        start_of_frame: first,
        end_of_frame: flags & FLAG_MARKER != 0,
        template_id: if key { KEY_TEMPLATE } else { DELTA_TEMPLATE },
        frame_number: frame,
        extended: (key && first).then(|| ExtendedFields {
            structure: Some(FrameDependencyStructure::single_layer()),
            ..ExtendedFields::default()
        }),
    }
}

/// The extension block FEC protects with a frame packet (its descriptor's
/// mandatory fields alone, so every protected packet's block is 8 octets at
/// the same place and the parity's XOR of them is the XOR of the fields).
pub fn protected_extension(frame: u16, flags: u8) -> HeaderExtension {
    let d = DependencyDescriptor { extended: None, ..descriptor(frame, flags) };
    HeaderExtension::OneByte(vec![rtcc_wire::rtp::ExtensionElement {
        id: EXT_DEPENDENCY_DESCRIPTOR,
        data: d.to_bytes(),
    }])
}

/// Octets of `protected_extension`: 4 of block header, 1 + 3 of element.
/// A parity's payload carries their XOR before the payloads' XOR; `size`
/// leaves them out, as it leaves out every packet's extension block.
pub const PROTECTED_EXT_LEN: usize = 8;

/// The octets every `protected_extension` shares: the one-byte form's
/// profile and length (RFC 8285 §4.2: 0xBEDE, one word) and the element's
/// id and length (3 octets, written as 2).
const PROTECTED_EXT_HEAD: [u8; 5] = [0xBE, 0xDE, 0x00, 0x01, EXT_DEPENDENCY_DESCRIPTOR << 4 | 2];

/// The extension block of `p`'s datagram: transport-wide sequence number,
/// abs-send-time, and on a frame's media or retransmission the descriptor.
fn extensions(p: &Packet) -> Result<HeaderExtension, WireError> {
    let mut ext = HeaderExtension::one_byte();
    ext.push(EXT_TRANSPORT_CC, p.seq.to_be_bytes().to_vec())?;
    ext.push(EXT_ABS_SEND_TIME, (p.abs_send_time & 0x00ff_ffff).to_be_bytes()[1..].to_vec())?;
    if p.flags & FLAG_FRAME != 0 && matches!(p.kind, PacketKind::Media | PacketKind::Rtx) {
        ext.push(EXT_DEPENDENCY_DESCRIPTOR, descriptor(p.frame, p.flags).to_bytes())?;
    }
    Ok(ext)
}

/// Why a packet has no datagram, or a datagram no packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatagramError {
    /// The bytes are no RTP packet, or one of its parts does not parse.
    Wire(WireError),
    /// A packet kind that is not RTP (TCP segments, UDP cross traffic).
    NotRtp(PacketKind),
    /// An SSRC that is none of the session's streams.
    UnknownSsrc(u32),
    /// A payload type the stream does not carry.
    UnknownPayloadType { ssrc: u32, payload_type: u8 },
    /// A field rtcc needs is absent or out of range.
    Invalid { field: &'static str, reason: String },
}

impl fmt::Display for DatagramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatagramError::Wire(e) => write!(f, "{e}"),
            DatagramError::NotRtp(k) => write!(f, "a {} packet is not RTP and has no datagram here", k.name()),
            DatagramError::UnknownSsrc(s) => write!(f, "SSRC {s:#010x} is none of this session's streams"),
            DatagramError::UnknownPayloadType { ssrc, payload_type } => {
                write!(f, "payload type {payload_type} is not carried on SSRC {ssrc:#010x}")
            }
            DatagramError::Invalid { field, reason } => write!(f, "{field}: {reason}"),
        }
    }
}

impl std::error::Error for DatagramError {}

impl From<WireError> for DatagramError {
    fn from(e: WireError) -> Self {
        DatagramError::Wire(e)
    }
}

fn invalid(field: &'static str, reason: impl Into<String>) -> DatagramError {
    DatagramError::Invalid { field, reason: reason.into() }
}

/// One flow's streams and what its receiver needs to know of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    pub media_ssrc: u32,
    pub rtx_ssrc: u32,
    pub fec_ssrc: u32,
    pub audio_ssrc: u32,
    /// FEC header octets a parity's `size` counts beyond its protected length
    /// (`FecConfig::overhead`).
    pub fec_overhead: DataSize,
}

impl Session {
    /// Flow `flow`'s streams: the media SSRC the flow's RTCP names
    /// (`feedback::ssrcs`), and RTX, FEC and audio SSRCs beside it.
    pub fn for_flow(flow: u16) -> Self {
        let (_, media) = crate::feedback::ssrcs(flow);
        let low = media & 0xffff;
        Session {
            media_ssrc: media,
            rtx_ssrc: 0x5258_0000 | low,
            fec_ssrc: 0x5246_0000 | low,
            audio_ssrc: 0x5241_0000 | low,
            fec_overhead: crate::fec::DEFAULT_OVERHEAD,
        }
    }

    /// Datagram octets beyond `p`'s `size`: the fixed header, the extension
    /// block, RED's one octet on a protected packet, and for a parity its FEC
    /// and level headers and descriptor XOR less the overhead `size` counts.
    pub fn overhead(&self, p: &Packet) -> usize {
        // None: an RTCP packet's size counts its datagram and IPv4/UDP.
        if p.kind == PacketKind::Feedback {
            return 0;
        }
        let ext = extensions(p).map_or(0, |e| e.wire_size());
        let red = usize::from(matches!(p.kind, PacketKind::Media | PacketKind::Rtx) && p.flags & FLAG_PROTECTED != 0);
        let fec = if p.kind == PacketKind::Fec {
            let level = if p.group > 16 { 8 } else { 4 };
            (10 + level + PROTECTED_EXT_LEN).saturating_sub(self.fec_overhead.bytes() as usize)
        } else {
            0
        };
        FIXED_HEADER_LEN + ext + red + fec
    }
}

/// The sending side: numbers the RTX and FEC streams' own packets, as
/// libwebrtc's packet sequencer does when a packet leaves the pacer.
#[derive(Clone, Debug)]
pub struct Egress {
    pub session: Session,
    rtx_seq: u16,
    fec_seq: u16,
}

impl Egress {
    /// `rtx_base`, `fec_base`: the streams' random first sequence numbers
    /// (RFC 3550 §5.1).
    pub fn new(session: Session, rtx_base: u16, fec_base: u16) -> Self {
        Egress { session, rtx_seq: rtx_base, fec_seq: fec_base }
    }

    /// The datagram `p` is sent as.
    pub fn encode(&mut self, p: &Packet) -> Result<Vec<u8>, DatagramError> {
        if p.kind == PacketKind::Feedback {
            return rtcp_bytes(p);
        }
        let s = self.session;
        let size = p.size.bytes() as usize;
        let ext = extensions(p)?;
        let marker = p.flags & FLAG_MARKER != 0;
        let format = p.payload.as_ref().map(Payload::format);
        let pt = payload_type(format);
        let rtx_pt = media_format(pt).map(|f| f.1);
        if matches!(p.kind, PacketKind::Media | PacketKind::Rtx) && rtx_pt.is_none() {
            return Err(invalid("payload", "a parity's bytes on a media packet"));
        }
        // A protected packet inside RED's primary block (RFC 2198 §3).
        let red = p.flags & FLAG_PROTECTED != 0;
        let body = |n: usize| {
            let b = p.payload.as_ref().map_or_else(|| vec![0; n], |b| b.bytes().to_vec());
            if red {
                RedPayload::primary(pt, b).to_bytes()
            } else {
                b
            }
        };
        let mut extra = 0;
        let rtp = match p.kind {
            PacketKind::Media => {
                let pt = if red { PT_RED } else { pt };
                let mut r = RtpPacket::new(pt, p.media_seq, p.timestamp, s.media_ssrc, body(size))?;
                r.marker = marker;
                r
            }
            PacketKind::Rtx => {
                let osn = crate::packet::RTX_OSN.bytes() as usize;
                let mut payload = p.media_seq.to_be_bytes().to_vec();
                payload.extend(body(
                    size.checked_sub(osn).ok_or_else(|| invalid("size", "an RTX packet under 2 octets"))?,
                ));
                let pt = if red { PT_RED_RTX } else { rtx_pt.unwrap_or(PT_MODEL_RTX) };
                let mut r = RtpPacket::new(pt, self.next_rtx(), p.timestamp, s.rtx_ssrc, payload)?;
                r.marker = marker;
                r
            }
            PacketKind::Padding | PacketKind::Probe => {
                if size == 0 {
                    return Err(invalid("size", "a padding packet of 0 octets"));
                }
                // P holds up to 255 octets; the rest, in whole words, goes
                // into the extension block.
                extra = size.saturating_sub(255).div_ceil(4) * 4;
                RtpPacket::padding_only(PT_MODEL_RTX, self.next_rtx(), p.timestamp, s.rtx_ssrc, (size - extra) as u8)?
            }
            PacketKind::Fec => {
                let fec = self.parity_payload(p)?;
                let pt = if p.payload.is_some() { PT_ULPFEC } else { PT_ULPFEC_MODEL };
                RtpPacket::new(pt, self.next_fec(), p.timestamp, s.fec_ssrc, fec)?
            }
            PacketKind::Audio => RtpPacket::new(PT_AUDIO, p.media_seq, p.timestamp, s.audio_ssrc, vec![0; size])?,
            k @ (PacketKind::Feedback | PacketKind::Data) => return Err(DatagramError::NotRtp(k)),
        };
        let mut rtp = rtp;
        rtp.extension = Some(ext);
        let mut out = rtp.to_bytes();
        if extra > 0 {
            // RFC 8285 §4.2: zero padding after the last element; the block's
            // length (in words, RFC 3550 §5.3.1) grows with it.
            let at = FIXED_HEADER_LEN + 2;
            let words = usize::from(u16::from_be_bytes([out[at], out[at + 1]])) + extra / 4;
            let words =
                u16::try_from(words).map_err(|_| invalid("size", "padding beyond the extension block's reach"))?;
            out[at..at + 2].copy_from_slice(&words.to_be_bytes());
            let end = at + 2 + 4 * usize::from(words) - extra;
            out.splice(end..end, std::iter::repeat_n(0, extra));
        }
        Ok(out)
    }

    fn next_rtx(&mut self) -> u16 {
        let s = self.rtx_seq;
        self.rtx_seq = s.wrapping_add(1);
        s
    }

    fn next_fec(&mut self) -> u16 {
        let s = self.fec_seq;
        self.fec_seq = s.wrapping_add(1);
        s
    }

    /// A parity's RFC 5109 payload: the real one when the packets it protects
    /// carried bytes, else one built from its fields.
    fn parity_payload(&self, p: &Packet) -> Result<Vec<u8>, DatagramError> {
        if let Some(b) = &p.payload {
            return Ok(b.bytes().to_vec());
        }
        let n = usize::from(p.group);
        if !(1..=MAX_GROUP).contains(&n) {
            return Err(invalid("group", format!("{n} protected packets, not 1..={MAX_GROUP}")));
        }
        if p.flags & FLAG_FRAME == 0 && n % 2 == 1 {
            return Err(invalid("flags", "a parity of packets outside any frame has no descriptor to protect"));
        }
        let odd = n % 2 == 1;
        let longest = p
            .size
            .bytes()
            .checked_sub(self.session.fec_overhead.bytes())
            .ok_or_else(|| invalid("size", "a parity smaller than its FEC header"))?;
        // The XOR of the protected blocks: their constant octets survive an
        // odd count; the descriptor's bits are the parity's XORs.
        let mut payload: Vec<u8> = PROTECTED_EXT_HEAD.iter().map(|&b| if odd { b } else { 0 }).collect();
        payload.resize(PROTECTED_EXT_LEN, 0);
        let key_template = (if odd { KEY_TEMPLATE ^ DELTA_TEMPLATE } else { 0 }) ^ u8::from(p.flags & FLAG_KEY != 0);
        payload[5] =
            u8::from(p.flags & FLAG_FIRST != 0) << 7 | u8::from(p.flags & FLAG_MARKER != 0) << 6 | key_template;
        payload[6..8].copy_from_slice(&p.frame.to_be_bytes());
        payload.resize(PROTECTED_EXT_LEN + longest as usize, 0);
        let fec = UlpfecPacket {
            long_mask: n > 16,
            p_recovery: false,
            x_recovery: odd,
            cc_recovery: 0,
            m_recovery: p.flags & FLAG_MARKER != 0,
            pt_recovery: if odd { PT_MODEL } else { 0 },
            sn_base: p.media_seq,
            ts_recovery: p.timestamp,
            length_recovery: 0,
            levels: vec![UlpLevel { mask: !(u64::MAX >> n), payload }],
        };
        Ok(fec.to_bytes())
    }
}

/// The receiving side: a datagram from the wire as the `Packet` the
/// receiving end takes.
#[derive(Clone, Debug)]
pub struct Ingress {
    pub session: Session,
    /// The descriptor's template structure in force: rtcc's single-layer
    /// one until a key frame attaches another (A.8.2: a structure holds
    /// until the next one replaces it).
    structure: FrameDependencyStructure,
}

/// RTP and RTCP on one port (RFC 5761 §4): an RTCP packet's second octet
/// is its packet type, 192–223; RTP's marker bit and payload type never
/// give those with the payload types rtcc uses.
pub fn is_rtcp(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] >> 6 == 2 && (192..=223).contains(&bytes[1])
}

/// An RTCP packet from the sending end (an SR, `sr::sender_report`) as its
/// datagram: the compound its payload holds, checked to parse.
fn rtcp_bytes(p: &Packet) -> Result<Vec<u8>, DatagramError> {
    let bytes = p.payload.as_ref().ok_or_else(|| invalid("payload", "an RTCP packet without its bytes"))?;
    rtcc_wire::rtcp::Compound::decode(bytes.bytes())?;
    Ok(bytes.bytes().to_vec())
}

/// An RTCP datagram as the packet the receiving end takes (its size counts
/// IPv4 and UDP headers, as a report's does).
fn rtcp_packet(bytes: &[u8]) -> Result<Packet, DatagramError> {
    rtcc_wire::rtcp::Compound::decode(bytes)?;
    Ok(Packet {
        kind: PacketKind::Feedback,
        size: DataSize::from_bytes(28 + bytes.len() as u64),
        payload: Some(Payload::new(bytes.to_vec())),
        ..Packet::default()
    })
}

impl Ingress {
    pub fn new(session: Session) -> Self {
        Ingress { session, structure: FrameDependencyStructure::single_layer() }
    }

    pub fn decode(&mut self, bytes: &[u8]) -> Result<Packet, DatagramError> {
        if is_rtcp(bytes) {
            return rtcp_packet(bytes);
        }
        let s = &self.session;
        let rtp = RtpPacket::decode(bytes)?;
        let ext = rtp.extension.as_ref().ok_or_else(|| invalid("extension", "no header extension"))?;
        let field = |id, n: usize, name| {
            ext.get(id).filter(|d| d.len() == n).ok_or_else(|| invalid(name, format!("no {n}-octet element {id}")))
        };
        let seq = field(EXT_TRANSPORT_CC, 2, "transport-wide sequence number")?;
        let abs = field(EXT_ABS_SEND_TIME, 3, "abs-send-time")?;
        let mut p = Packet {
            seq: u16::from_be_bytes([seq[0], seq[1]]),
            abs_send_time: u32::from_be_bytes([0, abs[0], abs[1], abs[2]]),
            timestamp: rtp.timestamp,
            size: DataSize::from_bytes(rtp.payload.len() as u64),
            ..Packet::default()
        };
        let described = ext.get(EXT_DEPENDENCY_DESCRIPTOR);
        if let Some(d) = described {
            let d = DependencyDescriptor::decode_with(d, Some(&self.structure))?;
            if let Some(s) = d.extended.and_then(|e| e.structure) {
                self.structure = s;
            }
            // A frame that depends on none is a key frame.
            let key = self.structure.template(d.template_id).is_some_and(|t| t.fdiffs.is_empty());
            p.frame = d.frame_number;
            p.flags |= FLAG_FRAME | if d.start_of_frame { FLAG_FIRST } else { 0 } | if key { FLAG_KEY } else { 0 };
        }
        let unknown_pt = || DatagramError::UnknownPayloadType { ssrc: rtp.ssrc, payload_type: rtp.payload_type };
        // A media payload, out of RED when `red`: its format and bytes.
        let media = |pt: u8, red: bool, bytes: Vec<u8>| -> Result<(Option<PayloadFormat>, Vec<u8>), DatagramError> {
            let (pt, bytes) = if red {
                let r = RedPayload::decode(&bytes)?;
                if !r.redundant.is_empty() {
                    return Err(invalid("RED", "redundant blocks: rtcc sends the primary block alone"));
                }
                (r.primary_payload_type, r.primary)
            } else {
                (pt, bytes)
            };
            let (format, _) = media_format(pt).ok_or_else(unknown_pt)?;
            Ok((format, bytes))
        };
        if rtp.ssrc == s.media_ssrc {
            let red = rtp.payload_type == PT_RED;
            let (format, body) = media(rtp.payload_type, red, rtp.payload)?;
            p.kind = PacketKind::Media;
            p.media_seq = rtp.sequence_number;
            p.size = DataSize::from_bytes(body.len() as u64);
            p.payload = format.map(|f| Payload::with_format(f, body));
            p.flags |= if red { FLAG_PROTECTED } else { 0 };
        } else if rtp.ssrc == s.rtx_ssrc {
            if rtp.is_padding_only() {
                p.kind = PacketKind::Padding;
                p.size = DataSize::from_bytes(u64::from(rtp.padding) + extension_padding(bytes, &rtp) as u64);
            } else {
                let red = rtp.payload_type == PT_RED_RTX;
                let pt = if red { PT_RED } else { rtx_media_pt(rtp.payload_type).ok_or_else(unknown_pt)? };
                let rtx = rtcc_wire::rtp::rtx::RtxPayload::decode(&rtp.payload)?;
                let (format, body) = media(pt, red, rtx.original_payload)?;
                p.kind = PacketKind::Rtx;
                p.media_seq = rtx.original_sequence_number;
                p.size = crate::packet::RTX_OSN + DataSize::from_bytes(body.len() as u64);
                p.payload = format.map(|f| Payload::with_format(f, body));
                p.flags |= if red { FLAG_PROTECTED } else { 0 };
            }
        } else if rtp.ssrc == s.fec_ssrc {
            let real = match rtp.payload_type {
                PT_ULPFEC => true,
                PT_ULPFEC_MODEL => false,
                _ => return Err(unknown_pt()),
            };
            self.parity(&mut p, &rtp.payload, real)?;
        } else if rtp.ssrc == s.audio_ssrc {
            if rtp.payload_type != PT_AUDIO {
                return Err(unknown_pt());
            }
            p.kind = PacketKind::Audio;
            p.media_seq = rtp.sequence_number;
        } else {
            return Err(DatagramError::UnknownSsrc(rtp.ssrc));
        }
        if described.is_some() && !matches!(p.kind, PacketKind::Media | PacketKind::Rtx) {
            return Err(invalid("dependency descriptor", format!("on a {} packet", p.kind.name())));
        }
        // The marker ends a frame (RFC 7741 §4.1); audio's is no concern here.
        if rtp.marker && matches!(p.kind, PacketKind::Media | PacketKind::Rtx) {
            p.flags |= FLAG_MARKER;
        }
        Ok(p)
    }

    /// A parity's fields from its RFC 5109 payload.
    fn parity(&self, p: &mut Packet, payload: &[u8], real: bool) -> Result<(), DatagramError> {
        let fec = UlpfecPacket::decode(payload)?;
        let level = fec.levels.first().ok_or_else(|| invalid("FEC levels", "none"))?;
        let width = if fec.long_mask { 48 } else { 16 };
        let mask = level.mask & !(u64::MAX >> width);
        let n = mask.leading_ones();
        if n == 0 || mask != !(u64::MAX >> n) {
            return Err(invalid("FEC mask", "rtcc's parities protect consecutive packets from the SN base"));
        }
        let x = level
            .payload
            .get(..PROTECTED_EXT_LEN)
            .ok_or_else(|| invalid("FEC payload", "shorter than the protected descriptor"))?;
        let odd = n % 2 == 1;
        if (0..PROTECTED_EXT_HEAD.len()).any(|i| x[i] != if odd { PROTECTED_EXT_HEAD[i] } else { 0 }) {
            return Err(invalid("FEC payload", "the protected extension blocks do not XOR to rtcc's descriptor block"));
        }
        let key = (x[5] & 0x3f) ^ if odd { KEY_TEMPLATE ^ DELTA_TEMPLATE } else { 0 };
        // Every packet a parity covers is a protected frame packet.
        let constant = if odd { FLAG_FRAME | FLAG_PROTECTED } else { 0 };
        p.kind = PacketKind::Fec;
        p.media_seq = fec.sn_base;
        p.group = n as u16;
        p.timestamp = fec.ts_recovery;
        p.frame = u16::from_be_bytes([x[6], x[7]]);
        p.flags = constant
            | if x[5] & 0x80 != 0 { FLAG_FIRST } else { 0 }
            | if fec.m_recovery { FLAG_MARKER } else { 0 }
            | if key & 1 != 0 { FLAG_KEY } else { 0 };
        p.size = DataSize::from_bytes((level.payload.len() - PROTECTED_EXT_LEN) as u64) + self.session.fec_overhead;
        p.payload = real.then(|| Payload::with_format(PayloadFormat::Parity, payload.to_vec()));
        Ok(())
    }
}

/// Zero octets in the extension block beyond its elements and their
/// alignment (what `Egress` puts there for padding over 255 octets).
fn extension_padding(bytes: &[u8], rtp: &RtpPacket) -> usize {
    let Some(e) = &rtp.extension else { return 0 };
    let at = FIXED_HEADER_LEN + 4 * rtp.csrcs.len() + 2;
    let words = bytes.get(at..at + 2).map_or(0, |w| usize::from(u16::from_be_bytes([w[0], w[1]])));
    // Each element's header is one octet in the one-byte form, two in the
    // two-byte form (RFC 8285 §4.2, §4.3).
    let head = if matches!(e, HeaderExtension::OneByte(_)) { 1 } else { 2 };
    let elements: usize = e.elements().iter().map(|x| head + x.data.len()).sum();
    (4 * words).saturating_sub(elements.next_multiple_of(4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fec::{FecConfig, FecEncoder};

    fn session() -> Session {
        Session::for_flow(3)
    }

    fn media(seq: u16, frame: u16, flags: u8, size: u64, payload: Option<Payload>) -> Packet {
        Packet {
            kind: PacketKind::Media,
            size: DataSize::from_bytes(size),
            abs_send_time: 0x00ab_cdef,
            timestamp: 0xdead_beef,
            seq,
            media_seq: seq.wrapping_add(1000),
            frame,
            flags: flags | FLAG_FRAME | FLAG_PROTECTED,
            payload,
            ..Packet::default()
        }
    }

    fn round_trip(s: &Session, p: &Packet) -> Vec<u8> {
        let mut eg = Egress::new(*s, 65_535, 9);
        let bytes = eg.encode(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        let back = Ingress::new(*s).decode(&bytes).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert_eq!(&back, p, "{bytes:02x?}");
        bytes
    }

    /// A sender report is its compound RTCP datagram on the same port, told
    /// from RTP by its packet type (RFC 5761 §4); bytes that are no RTCP are
    /// refused on either side.
    #[test]
    fn a_sender_report_reads_back_as_rtcp() {
        let s = session();
        let bytes = crate::sr::sender_report(3, crate::units::Time::from_millis(1_500), 40, 48_000);
        let sr = Packet {
            kind: PacketKind::Feedback,
            size: DataSize::from_bytes(28 + bytes.len() as u64),
            payload: Some(Payload::new(bytes.clone())),
            ..Packet::default()
        };
        assert_eq!(round_trip(&s, &sr), bytes);
        assert_eq!(s.overhead(&sr), 0);
        let junk = Packet { payload: Some(Payload::new(vec![0x80, 200, 0, 9])), ..sr.clone() };
        assert!(Egress::new(s, 0, 0).encode(&junk).is_err());
        assert!(Egress::new(s, 0, 0).encode(&Packet { payload: None, ..sr }).is_err());
        assert!(Ingress::new(s).decode(&[0x80, 200, 0, 9]).is_err());
        // An RTP packet with the marker set and payload type 96..127 is never
        // read as RTCP.
        let m = media(7, 7, FLAG_MARKER, 100, None);
        assert_eq!(Ingress::new(s).decode(&Egress::new(s, 0, 0).encode(&m).unwrap()).unwrap().kind, PacketKind::Media);
    }

    #[test]
    fn every_rtp_kind_reads_back_as_it_was_sent() {
        let s = session();
        let key_first = media(65_535, 65_535, FLAG_KEY | FLAG_FIRST, 1200, None);
        let bytes = round_trip(&s, &key_first);
        // 12 fixed + block header 4 + TWCC 3 + abs 4 + DD 1 + 8 (with the
        // structure) = 32, RED's header 1, then the payload.
        assert_eq!(bytes.len(), 33 + 1200);
        assert_eq!(bytes.len(), s.overhead(&key_first) + 1200);
        // Unprotected: no RED.
        let plain = Packet { flags: key_first.flags & !FLAG_PROTECTED, ..key_first.clone() };
        assert_eq!(round_trip(&s, &plain).len(), 32 + 1200);
        round_trip(&s, &media(0, 0, FLAG_MARKER, 7, None));
        round_trip(&s, &media(1, 1, FLAG_FIRST | FLAG_MARKER, 1, None));
        let vp8 = Payload::with_format(PayloadFormat::Vp8, vec![0x90, 0x80, 0x12, 0x34, 9, 9, 9]);
        round_trip(&s, &media(2, 4660, FLAG_FIRST, 7, Some(vp8.clone())));
        let h264 = Payload::with_format(PayloadFormat::H264, vec![0x65, 1, 2, 3]);
        round_trip(&s, &media(3, 5, FLAG_KEY | FLAG_FIRST | FLAG_MARKER, 4, Some(h264)));
        // Retransmissions: the OSN in front, the RTX stream's own numbering.
        round_trip(&s, &Packet { kind: PacketKind::Rtx, ..media(4, 6, FLAG_MARKER, 1202, None) });
        round_trip(&s, &Packet { kind: PacketKind::Rtx, ..media(5, 6, 0, 9, Some(vp8)) });
        // Bulk media: no frame, no descriptor.
        let bulk = Packet { flags: FLAG_PROTECTED, frame: 0, ..media(6, 0, 0, 1200, None) };
        round_trip(&s, &bulk);
        // Padding: in P alone, and beyond 255 octets in the extension block.
        for size in [1, 200, 255, 256, 1200, 4000] {
            let p = Packet { kind: PacketKind::Padding, size: DataSize::from_bytes(size), seq: 7, ..Packet::default() };
            let bytes = round_trip(&s, &p);
            assert_eq!(bytes.len() as u64, 12 + 12 + size, "padding of {size}");
        }
        let probe = Packet { kind: PacketKind::Probe, size: DataSize::from_bytes(1200), seq: 8, ..Packet::default() };
        let b = Egress::new(s, 0, 0).encode(&probe).unwrap();
        assert_eq!(Ingress::new(s).decode(&b).unwrap(), Packet { kind: PacketKind::Padding, ..probe });
        round_trip(
            &s,
            &Packet { kind: PacketKind::Audio, size: DataSize::from_bytes(160), media_seq: 77, ..Packet::default() },
        );
        let tcp = Packet { kind: PacketKind::Data, ..Packet::default() };
        assert_eq!(Egress::new(s, 0, 0).encode(&tcp), Err(DatagramError::NotRtp(PacketKind::Data)));
    }

    /// Parities from the FEC encoder over frames of `sizes`, each frame's
    /// packets with or without bytes.
    fn parities(real: bool, group: u16) -> Vec<(Vec<Packet>, Packet)> {
        // Groups across frames, so groups over 16 (long masks) happen.
        let mut enc = FecEncoder::new(FecConfig { group, per_frame: false, ..FecConfig::default() });
        let (mut out, mut sent) = (Vec::new(), Vec::new());
        let mut seq = 65_530u16;
        for frame in 0..24u16 {
            let n = 1 + frame % 4;
            for i in 0..n {
                let key = if frame == 0 { FLAG_KEY } else { 0 };
                let flags = key | if i == 0 { FLAG_FIRST } else { 0 } | if i + 1 == n { FLAG_MARKER } else { 0 };
                let size = 300 + u64::from(frame * 7 + i);
                let payload = real
                    .then(|| Payload::with_format(PayloadFormat::Opaque, vec![frame as u8 ^ i as u8; size as usize]));
                let p = media(seq, frame.wrapping_add(65_533), flags, size, payload);
                seq = seq.wrapping_add(1);
                sent.push(p.clone());
                if let Some(parity) = enc.on_media(&p) {
                    out.push((std::mem::take(&mut sent), Packet { seq, abs_send_time: 5, ..parity }));
                }
            }
        }
        out
    }

    #[test]
    fn parities_carry_their_xors_and_real_ones_their_bytes() {
        for real in [false, true] {
            for group in [1, 2, 5, 17] {
                let s = session();
                let ps = parities(real, group);
                assert!(!ps.is_empty());
                assert!(group <= 16 || ps.iter().any(|(_, p)| p.group > 16), "no long mask at group {group}");
                for (_, p) in &ps {
                    let bytes = round_trip(&s, p);
                    assert_eq!(bytes.len(), s.overhead(p) + p.size.bytes() as usize);
                    // Fixed header, extension block (TWCC, abs-send-time), the
                    // FEC header (10) and level header (4, or 8 with the long
                    // mask), the protected blocks' XOR and the longest packet.
                    let longest = (p.size - s.fec_overhead).bytes() as usize;
                    let level = if p.group > 16 { 8 } else { 4 };
                    assert_eq!(bytes.len(), 12 + 12 + 10 + level + PROTECTED_EXT_LEN + longest);
                }
            }
        }
    }

    #[test]
    fn the_protected_block_starts_with_its_constant_head() {
        for flags in [0, FLAG_KEY | FLAG_FIRST, FLAG_MARKER] {
            let b = protected_extension(0xabcd, flags).to_bytes();
            assert_eq!((b.len(), &b[..5]), (PROTECTED_EXT_LEN, &PROTECTED_EXT_HEAD[..]));
        }
    }

    #[test]
    fn a_later_structure_replaces_the_one_in_force() {
        // A key frame attaching a structure whose template 5 is the key
        // template: later packets naming template 5 are key frames.
        let s = session();
        let mut ing = Ingress::new(s);
        let mut other = FrameDependencyStructure::single_layer();
        other.template_id_offset = 5;
        let mut p = media(1, 9, FLAG_KEY | FLAG_FIRST, 10, None);
        let mut bytes = Egress::new(s, 0, 0).encode(&p).unwrap();
        let d = DependencyDescriptor {
            extended: Some(ExtendedFields { structure: Some(other), ..Default::default() }),
            template_id: 5,
            ..descriptor(9, p.flags)
        };
        let mut rtp = RtpPacket::decode(&bytes).unwrap();
        let mut ext = HeaderExtension::one_byte();
        for e in rtp.extension.as_ref().unwrap().elements() {
            let data = if e.id == EXT_DEPENDENCY_DESCRIPTOR { d.to_bytes() } else { e.data.clone() };
            ext.push(e.id, data).unwrap();
        }
        rtp.extension = Some(ext.clone());
        bytes = rtp.to_bytes();
        assert_eq!(ing.decode(&bytes).unwrap().flags & FLAG_KEY, FLAG_KEY);
        // Template 1 no longer exists; template 6 (delta under the new offset) does.
        p.flags = FLAG_FRAME;
        let delta = |id| {
            let mut r = rtp.clone();
            let mut e = HeaderExtension::one_byte();
            for x in ext.elements() {
                let dd = DependencyDescriptor { template_id: id, ..descriptor(10, 0) };
                e.push(x.id, if x.id == EXT_DEPENDENCY_DESCRIPTOR { dd.to_bytes() } else { x.data.clone() }).unwrap();
            }
            r.extension = Some(e);
            r.to_bytes()
        };
        assert!(ing.decode(&delta(1)).is_err());
        assert_eq!(ing.decode(&delta(6)).unwrap().flags & FLAG_KEY, 0);
    }

    #[test]
    fn a_real_parity_rebuilds_the_protected_packets_descriptor_from_its_bytes() {
        // The XOR of the protected blocks and the received packets' blocks is
        // the missing packet's: what a receiver parsing bytes would recover.
        for (group, p) in parities(true, 5).into_iter().filter(|(g, _)| g.len() >= 2) {
            let fec = UlpfecPacket::decode(p.payload.as_ref().unwrap().bytes()).unwrap();
            let mut x = fec.levels[0].payload[..PROTECTED_EXT_LEN].to_vec();
            let missing = &group[1];
            for q in group.iter().filter(|q| q.media_seq != missing.media_seq) {
                for (a, b) in x.iter_mut().zip(protected_extension(q.frame, q.flags).to_bytes()) {
                    *a ^= b;
                }
            }
            assert_eq!(x, protected_extension(missing.frame, missing.flags).to_bytes());
        }
    }

    #[test]
    fn foreign_and_broken_datagrams_are_refused_by_name() {
        let s = session();
        let mut ing = Ingress::new(s);
        let good = Egress::new(s, 0, 0).encode(&media(1, 2, FLAG_FIRST, 100, None)).unwrap();
        let mut other = good.clone();
        other[8..12].copy_from_slice(&0x1234_5678u32.to_be_bytes());
        assert_eq!(ing.decode(&other), Err(DatagramError::UnknownSsrc(0x1234_5678)));
        let mut pt = good.clone();
        pt[1] = 120;
        assert!(matches!(ing.decode(&pt), Err(DatagramError::UnknownPayloadType { payload_type: 120, .. })));
        let bare = RtpPacket::new(PT_MODEL, 1, 2, s.media_ssrc, vec![1, 2]).unwrap().to_bytes();
        assert!(ing.decode(&bare).unwrap_err().to_string().contains("extension"));
        assert!(matches!(ing.decode(&good[..5]), Err(DatagramError::Wire(_))));
        // A parity's bytes on a media packet have no payload type.
        let odd = Packet {
            payload: Some(Payload::with_format(PayloadFormat::Parity, vec![0; 10])),
            ..media(1, 2, 0, 10, None)
        };
        assert!(Egress::new(s, 0, 0).encode(&odd).unwrap_err().to_string().contains("parity"));
        // RED with a redundant block is not what rtcc sends.
        let mut red = good.clone();
        let red_at = red.len() - 100 - 1;
        assert_eq!(red[1] & 0x7f, PT_RED);
        red[red_at] |= 0x80;
        assert!(ing.decode(&red).is_err());
    }

    #[test]
    fn any_bytes_decode_or_fail_without_panic() {
        let s = session();
        let mut ing = Ingress::new(s);
        let mut seeds: Vec<Vec<u8>> =
            vec![Egress::new(s, 0, 0).encode(&media(1, 2, FLAG_KEY | FLAG_FIRST, 40, None)).unwrap()];
        for (_, p) in parities(true, 3).into_iter().take(2) {
            seeds.push(Egress::new(s, 0, 0).encode(&p).unwrap());
        }
        let pad = Packet { kind: PacketKind::Padding, size: DataSize::from_bytes(900), ..Packet::default() };
        seeds.push(Egress::new(s, 0, 0).encode(&pad).unwrap());
        let mut decoded = 0;
        rtcc_wire::fuzzing::bounded_fuzz(&seeds, 16_000, 5, |b| decoded += usize::from(ing.decode(b).is_ok()));
        assert!(decoded > 100, "mutations that still decode: {decoded}");
    }
}
