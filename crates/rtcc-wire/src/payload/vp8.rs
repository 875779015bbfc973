//! VP8 over RTP (RFC 7741): the payload descriptor (§4.2) before each
//! packet's share of the frame, the payload header (§4.3) the frame itself
//! begins with, the packetizer and the depacketizer.

use crate::{Wire, WireError};

const WHAT: &str = "VP8 payload descriptor";

/// PictureID (RFC 7741 §4.2): 7 bits (M=0) or 15 bits (M=1); encode masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureId {
    Short(u8),
    Long(u16),
}

/// The payload descriptor (RFC 7741 §4.2). The X octet is present exactly
/// when one of the optional fields is. `tid` is (TID 2 bits, Y), `key_idx`
/// 5 bits, `partition_index` 3 bits; encode masks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vp8Descriptor {
    /// N: the frame is not used as a reference.
    pub non_reference: bool,
    /// S: the packet starts a VP8 partition.
    pub start_of_partition: bool,
    /// PID: the partition the packet's first octet belongs to.
    pub partition_index: u8,
    pub picture_id: Option<PictureId>,
    /// TL0PICIDX (L).
    pub tl0_pic_idx: Option<u8>,
    /// TID and Y (T).
    pub tid: Option<(u8, bool)>,
    /// KEYIDX (K).
    pub key_idx: Option<u8>,
}

impl Vp8Descriptor {
    fn extended(&self) -> bool {
        self.picture_id.is_some() || self.tl0_pic_idx.is_some() || self.tid.is_some() || self.key_idx.is_some()
    }

    /// True when the packet begins a frame (S=1, PID=0; RFC 7741 §4.2).
    pub fn starts_frame(&self) -> bool {
        self.start_of_partition && self.partition_index & 0x07 == 0
    }
}

impl Wire for Vp8Descriptor {
    fn wire_size(&self) -> usize {
        let mut n = 1;
        if self.extended() {
            n += 1;
            n += match self.picture_id {
                Some(PictureId::Short(_)) => 1,
                Some(PictureId::Long(_)) => 2,
                None => 0,
            };
            n += usize::from(self.tl0_pic_idx.is_some());
            n += usize::from(self.tid.is_some() || self.key_idx.is_some());
        }
        n
    }

    fn encode(&self, out: &mut Vec<u8>) {
        // |X|R|N|S|R| PID |
        let x = self.extended();
        out.push(
            u8::from(x) << 7
                | u8::from(self.non_reference) << 5
                | u8::from(self.start_of_partition) << 4
                | (self.partition_index & 0x07),
        );
        if !x {
            return;
        }
        // |I|L|T|K| RSV |
        out.push(
            u8::from(self.picture_id.is_some()) << 7
                | u8::from(self.tl0_pic_idx.is_some()) << 6
                | u8::from(self.tid.is_some()) << 5
                | u8::from(self.key_idx.is_some()) << 4,
        );
        match self.picture_id {
            Some(PictureId::Short(id)) => out.push(id & 0x7f),
            Some(PictureId::Long(id)) => out.extend_from_slice(&(0x8000 | (id & 0x7fff)).to_be_bytes()),
            None => {}
        }
        if let Some(t) = self.tl0_pic_idx {
            out.push(t);
        }
        if self.tid.is_some() || self.key_idx.is_some() {
            // |TID|Y| KEYIDX |; the fields of a clear T or K are zero.
            let (tid, y) = self.tid.unwrap_or((0, false));
            out.push((tid & 0x03) << 6 | u8::from(y) << 5 | (self.key_idx.unwrap_or(0) & 0x1f));
        }
    }

    /// The descriptor alone, which must fill `buf`; see [`Vp8Payload`] for a packet.
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let (d, used) = Vp8Descriptor::decode_prefix(buf)?;
        if used != buf.len() {
            return Err(WireError::invalid(WHAT, "length", format!("{} trailing octets", buf.len() - used)));
        }
        Ok(d)
    }
}

impl Vp8Descriptor {
    fn decode_prefix(buf: &[u8]) -> Result<(Self, usize), WireError> {
        let (&b0, mut rest) = buf.split_first().ok_or(WireError::Truncated { what: WHAT, need: 1, have: 0 })?;
        let mut d = Vp8Descriptor {
            non_reference: b0 & 0x20 != 0,
            start_of_partition: b0 & 0x10 != 0,
            partition_index: b0 & 0x07,
            picture_id: None,
            tl0_pic_idx: None,
            tid: None,
            key_idx: None,
        };
        let mut take = |field: &'static str| -> Result<u8, WireError> {
            let (&b, r) = rest
                .split_first()
                .ok_or_else(|| WireError::invalid(WHAT, field, "missing: the descriptor ends early"))?;
            rest = r;
            Ok(b)
        };
        if b0 & 0x80 != 0 {
            let flags = take("I|L|T|K")?;
            if flags & 0x80 != 0 {
                let hi = take("PictureID")?;
                d.picture_id = Some(if hi & 0x80 != 0 {
                    PictureId::Long(u16::from_be_bytes([hi & 0x7f, take("PictureID")?]))
                } else {
                    PictureId::Short(hi)
                });
            }
            if flags & 0x40 != 0 {
                d.tl0_pic_idx = Some(take("TL0PICIDX")?);
            }
            if flags & 0x30 != 0 {
                let b = take("TID|Y|KEYIDX")?;
                if flags & 0x20 != 0 {
                    d.tid = Some((b >> 6, b & 0x20 != 0));
                }
                if flags & 0x10 != 0 {
                    d.key_idx = Some(b & 0x1f);
                }
            }
        }
        let used = buf.len() - rest.len();
        Ok((d, used))
    }
}

/// One RTP payload: descriptor and the frame octets it carries (non-empty,
/// RFC 7741 §4.2: a packet carries at least one octet of the frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vp8Payload {
    pub descriptor: Vp8Descriptor,
    pub data: Vec<u8>,
}

impl Wire for Vp8Payload {
    fn wire_size(&self) -> usize {
        self.descriptor.wire_size() + self.data.len()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.descriptor.encode(out);
        out.extend_from_slice(&self.data);
    }
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let (descriptor, used) = Vp8Descriptor::decode_prefix(buf)?;
        if used == buf.len() {
            return Err(WireError::invalid("VP8 payload", "data", "no frame octets after the descriptor"));
        }
        Ok(Vp8Payload { descriptor, data: buf[used..].to_vec() })
    }
}

/// The payload header a frame begins with (RFC 7741 §4.3; the frame tag of
/// RFC 6386 §9.1), read from the first packet of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vp8PayloadHeader {
    /// P=0: a key frame (P is the inverse key frame flag).
    pub key_frame: bool,
    /// VER, 3 bits.
    pub version: u8,
    /// H: show_frame.
    pub show_frame: bool,
    /// Size0 + 8·Size1 + 2048·Size2: the first partition's length.
    pub first_partition_size: u32,
    /// Width and height (14 bits each) of a key frame, after its start code.
    pub dimensions: Option<(u16, u16)>,
}

impl Vp8PayloadHeader {
    pub fn parse(frame: &[u8]) -> Result<Self, WireError> {
        const WHAT: &str = "VP8 payload header";
        WireError::need(WHAT, frame, 3)?;
        let b0 = frame[0];
        let key_frame = b0 & 0x01 == 0;
        let size = (b0 >> 5) as u32 + 8 * frame[1] as u32 + 2048 * frame[2] as u32;
        let dimensions = if key_frame {
            // RFC 6386 §9.1: a key frame's start code 9d 01 2a, then 14-bit width and height with 2 scale bits.
            WireError::need(WHAT, frame, 10)?;
            if frame[3..6] != [0x9d, 0x01, 0x2a] {
                return Err(WireError::invalid(WHAT, "start code", "a key frame must carry 9d 01 2a (RFC 6386 §9.1)"));
            }
            let w = u16::from_le_bytes([frame[6], frame[7]]) & 0x3fff;
            let h = u16::from_le_bytes([frame[8], frame[9]]) & 0x3fff;
            Some((w, h))
        } else {
            None
        };
        Ok(Vp8PayloadHeader {
            key_frame,
            version: (b0 >> 1) & 0x07,
            show_frame: b0 & 0x10 != 0,
            first_partition_size: size,
            dimensions,
        })
    }
}

/// Cuts `frame` into payloads of at most `max_payload` octets, descriptor
/// included, of as equal sizes as the count allows (as libwebrtc does, so no
/// packet is a runt). Every payload carries the 15-bit `picture_id` (masked),
/// the first S=1; PID is 0 throughout (the frame is not split by partition,
/// RFC 7741 §4.4 allows either). The frame must begin with a payload header.
pub fn packetize(frame: &[u8], max_payload: usize, picture_id: u16) -> Result<Vec<Vp8Payload>, WireError> {
    Vp8PayloadHeader::parse(frame)?;
    let descriptor = Vp8Descriptor {
        non_reference: false,
        start_of_partition: true,
        partition_index: 0,
        picture_id: Some(PictureId::Long(picture_id & 0x7fff)),
        tl0_pic_idx: None,
        tid: None,
        key_idx: None,
    };
    let overhead = descriptor.wire_size();
    if max_payload <= overhead {
        return Err(WireError::invalid(
            "VP8 packetizer",
            "max_payload",
            format!("{max_payload} octets leave no room after the {overhead}-octet descriptor"),
        ));
    }
    let room = max_payload - overhead;
    let count = frame.len().div_ceil(room);
    let (base, extra) = (frame.len() / count, frame.len() % count);
    let mut out = Vec::with_capacity(count);
    let mut at = 0;
    for i in 0..count {
        let n = base + usize::from(i < extra);
        let mut d = descriptor.clone();
        d.start_of_partition = i == 0;
        out.push(Vp8Payload { descriptor: d, data: frame[at..at + n].to_vec() });
        at += n;
    }
    Ok(out)
}

/// What the depacketizer made of a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Depacketized {
    /// The packet continues a frame, or was dropped while waiting for a frame's start.
    Pending,
    /// The frame this packet completed.
    Frame(Vec<u8>),
}

/// Rebuilds frames from packets in sequence order (RFC 7741 §4.5): a frame
/// starts with S=1, PID=0 and ends with the RTP marker; a sequence gap or a
/// new timestamp inside a frame drops it as incomplete, and packets are then
/// skipped until the next frame's start.
#[derive(Debug, Default)]
pub struct Vp8Depacketizer {
    frame: Vec<u8>,
    assembling: Option<(u16, u32)>,
    incomplete: u64,
}

impl Vp8Depacketizer {
    pub fn new() -> Self {
        Vp8Depacketizer::default()
    }

    /// Frames dropped for a missing packet so far.
    pub fn incomplete_frames(&self) -> u64 {
        self.incomplete
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
        let p = Vp8Payload::decode(payload)?;
        if let Some((last, ts)) = self.assembling {
            let continues = sequence_number == last.wrapping_add(1) && timestamp == ts && !p.descriptor.starts_frame();
            if !continues {
                self.incomplete += 1;
                self.assembling = None;
                self.frame.clear();
            }
        }
        if self.assembling.is_none() {
            if !p.descriptor.starts_frame() {
                return Ok(Depacketized::Pending);
            }
            self.frame.clear();
        }
        self.frame.extend_from_slice(&p.data);
        if marker {
            self.assembling = None;
            return Ok(Depacketized::Frame(std::mem::take(&mut self.frame)));
        }
        self.assembling = Some((sequence_number, timestamp));
        Ok(Depacketized::Pending)
    }
}
