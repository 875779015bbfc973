//! What travels on the wire in the sans-IO model. `Packet` carries the header
//! fields a real RTP stack would carry (transport-wide sequence number,
//! abs-send-time, RTP sequence number and timestamp, marker, the payload
//! descriptor's frame number and start and key bits) and, for real codecs,
//! its own RTP payload: the codec's payload descriptor and its share of the
//! frame (media and retransmissions), or the XOR of the packets it protects
//! (FEC parity).

use std::sync::Arc;

use crate::feedback::VIDEO_CLOCK_HZ as RTP_VIDEO_HZ;
use crate::units::{DataSize, Time};

/// How a real codec's frame travels as RTP payloads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PayloadFormat {
    /// Bytes with no payload format: a frame is cut into equal slices and
    /// put back by concatenation (test encoders).
    #[default]
    Opaque,
    /// VP8 (RFC 7741): descriptor (§4.2) before each packet's share.
    Vp8,
    /// H.264 packetization mode 1 (RFC 6184: single NAL unit, STAP-A, FU-A)
    /// of an Annex B access unit.
    H264,
    /// An FEC parity's payload: RFC 5109 ULPFEC (FEC header with PT, timestamp
    /// and length recovery, §7.3; level 0 with its mask and the XOR of the
    /// protected payloads, §7.4, §8), as rtcc-wire's `fec::protect` writes it.
    Parity,
}

impl PayloadFormat {
    /// Its RTP payload type (`datagram::PT_*`), which ULPFEC's PT recovery
    /// field rebuilds for a lost packet.
    pub fn code(self) -> u8 {
        crate::datagram::payload_type(Some(self))
    }
    pub fn from_code(c: u8) -> Option<Self> {
        [PayloadFormat::Opaque, PayloadFormat::Vp8, PayloadFormat::H264, PayloadFormat::Parity]
            .into_iter()
            .find(|f| f.code() == c)
    }
}

/// Bytes shared by handle: an encoded frame (the encoder's output, the
/// receiver's reassembly), or one packet's RTP payload. Cloning a packet
/// never copies them. A thin pointer (not `Arc<[u8]>`), so a packet fits one
/// cache line.
#[derive(Clone)]
pub struct Payload(Arc<(PayloadFormat, Vec<u8>)>);

impl Payload {
    /// Bytes of no payload format.
    pub fn new(bytes: Vec<u8>) -> Self {
        Payload::with_format(PayloadFormat::Opaque, bytes)
    }
    pub fn with_format(format: PayloadFormat, bytes: Vec<u8>) -> Self {
        Payload(Arc::new((format, bytes)))
    }
    pub fn format(&self) -> PayloadFormat {
        self.0 .0
    }
    pub fn bytes(&self) -> &[u8] {
        self.0 .1.as_slice()
    }
    pub fn len(&self) -> usize {
        self.0 .1.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0 .1.is_empty()
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Payload({:?}, {} B)", self.0 .0, self.0 .1.len())
    }
}

// By content, so a handle rebuilt from the wire equals the one that was sent.
impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for Payload {}

/// What a packet carries. Counted separately in every metric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// Encoded video.
    #[default]
    Media = 0,
    /// Padding / dummy bytes (GCC padding, Dumbo dummy packets).
    Padding = 1,
    /// Padding sent only to fill a probe cluster.
    Probe = 2,
    /// Forward error correction.
    Fec = 3,
    /// Retransmission of a lost media packet.
    Rtx = 4,
    /// Audio.
    Audio = 5,
    /// RTCP (not counted among the sender's kinds in `ALL`): a sending
    /// end's SR, a `Packet` whose payload is its compound datagram
    /// (`Sender::poll_rtcp`); what a receiving end sends back crosses a
    /// bottleneck whole, as the simulator's own datagram, under this code.
    Feedback = 6,
    /// A TCP segment or UDP datagram of cross traffic (not in `ALL`).
    Data = 7,
}

impl PacketKind {
    /// Every kind, by its number.
    pub const COUNT: usize = 8;
    /// The kinds a video sender sends (the per-kind counters).
    pub const ALL: [PacketKind; 6] = [
        PacketKind::Media,
        PacketKind::Padding,
        PacketKind::Probe,
        PacketKind::Fec,
        PacketKind::Rtx,
        PacketKind::Audio,
    ];
    /// The kind a receiver reads from the wire: a probe is padding there
    /// (the probe cluster is the sender's own), every other kind itself.
    pub fn on_wire(self) -> PacketKind {
        if self == PacketKind::Probe {
            PacketKind::Padding
        } else {
            self
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Media => "media",
            PacketKind::Padding => "padding",
            PacketKind::Probe => "probe",
            PacketKind::Fec => "fec",
            PacketKind::Rtx => "rtx",
            PacketKind::Audio => "audio",
            PacketKind::Feedback => "feedback",
            PacketKind::Data => "data",
        }
    }
}

/// No frame: padding, probe-only packets.
pub const NO_FRAME: u32 = u32::MAX;

/// Which frame a packet carries, and where in it: lets a frame-aware
/// controller map packets (sent, acknowledged, lost) to frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramePos {
    /// Encoded frame id, `NO_FRAME` for packets outside any frame.
    pub frame: u32,
    /// Index within the frame, and packets in the frame.
    pub index: u16,
    pub count: u16,
}

impl FramePos {
    pub const NONE: FramePos = FramePos { frame: NO_FRAME, index: 0, count: 0 };
    pub fn is_frame(&self) -> bool {
        self.frame != NO_FRAME
    }
    /// The last packet of its frame.
    pub fn is_last(&self) -> bool {
        self.is_frame() && self.index + 1 == self.count
    }
}

impl Default for FramePos {
    fn default() -> Self {
        FramePos::NONE
    }
}

/// One datagram as its wire carries it. A video sender's packet holds what
/// RTP (RFC 3550 §5.1) and the header extensions rtcc negotiates carry:
/// the transport-wide sequence number and abs-send-time (libwebrtc's
/// extensions), the RTP sequence number and timestamp, the marker bit, and
/// the payload descriptor's frame number, start-of-frame and key-frame bits
/// (RFC 7741 §4.2 picture ID, S and P bits; RFC 6184 FU-A S bit; libwebrtc's
/// generic frame descriptor for a model encoder's frames), with its RTP
/// payload's bytes where a real codec made them. A cross-traffic packet is a
/// TCP segment or a UDP datagram. Nothing here is only the sender's (its
/// frame's packet count, probe cluster, 64-bit sequence numbers stay in its
/// send history) or only the simulator's (the flow index: `rtcc_sim`'s
/// envelope carries it).
#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// What the receiver demultiplexes it as (RTP payload type and SSRC:
    /// media, RTX, FEC, audio; padding-only packets; or TCP/UDP).
    pub kind: PacketKind,
    /// Octets the simulator counts: the RTP payload (a parity's longest
    /// protected payload and its FEC header overhead; a padding packet's
    /// padding), without the RTP header and extension block the datagram
    /// adds (`datagram::Session::overhead`); a TCP segment's length.
    pub size: DataSize,
    /// abs-send-time (24 bits, 6.18 fixed-point seconds, wraps every 64 s;
    /// libwebrtc's http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time):
    /// the sender's clock when it left the pacer ([`abs_send_time`]; read
    /// back with [`abs_send_time_at`]).
    pub abs_send_time: u32,
    /// The RTP timestamp on the 90 kHz video clock ([`rtp_timestamp`]): the
    /// capture time of the frame a media packet (or its retransmission, or
    /// its rebuild from parity) carries; a parity's is its group's XOR
    /// (RFC 5109 §7.3 TS recovery); unused otherwise.
    pub timestamp: u32,
    /// Transport-wide sequence number (16 bits, wraps;
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 §2).
    pub seq: u16,
    /// RTP sequence number of the media stream (16 bits, wraps): media and
    /// audio packets' own; a retransmission's original one (RFC 4588 §4,
    /// OSN); a parity's first protected one (RFC 5109 §7.3, SN base).
    pub media_seq: u16,
    /// Frame number of its payload descriptor (16 bits, wraps) when
    /// `FLAG_FRAME` is set; a parity's is the XOR of its group's.
    pub frame: u16,
    /// FEC: number of consecutive media packets protected, from `media_seq`
    /// (the ULPFEC mask's length, RFC 5109 §7.4).
    pub group: u16,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// TCP: the segment's sequence number, counted in segments (the byte
    /// sequence number over the MSS, RFC 9293 §3.4).
    pub segment: u32,
    /// TCP: the timestamp option's TSval (RFC 7323 §3), in µs as Linux's
    /// usec TS option gives it (wraps every 71 minutes).
    pub tsval: u32,
    /// Its RTP payload's bytes, on media and retransmitted packets of a
    /// real codec's frame (descriptor and its share of the frame), and on a
    /// parity whose protected packets all have theirs (the XOR that rebuilds
    /// one of them); `None` for model encoders and packets of no frame.
    pub payload: Option<Payload>,
}

impl Default for Packet {
    fn default() -> Self {
        Packet {
            kind: PacketKind::Media,
            size: DataSize::ZERO,
            abs_send_time: 0,
            timestamp: 0,
            seq: 0,
            media_seq: 0,
            frame: 0,
            group: 0,
            flags: 0,
            segment: 0,
            tsval: 0,
            payload: None,
        }
    }
}

/// Packet belongs to a key frame (RFC 7741 §4.3 P bit clear; RFC 6184 an
/// IDR NAL unit; the generic descriptor's key-frame bit).
pub const FLAG_KEY: u8 = 1;
/// A media packet of the FEC-protected stream: the sender fed it to its FEC
/// encoder, so a parity may cover it. The receiver's decoder keeps headers
/// of these only, as a FlexFEC receiver keeps the protected SSRC's packets
/// (RFC 8627 §1.1.3), and a flow without FEC costs no decoder window.
pub const FLAG_PROTECTED: u8 = 4;
/// It carries a payload descriptor: a share of frame `frame` (media and
/// retransmitted packets of a frame; not padding, audio or a bulk sender's
/// frameless media).
pub const FLAG_FRAME: u8 = 8;
/// The descriptor's start-of-frame bit (RFC 7741 §4.2 S bit with partition
/// index 0; RFC 6184 §5.8 FU-A S bit or a whole NAL unit; the generic
/// descriptor's first-packet bit): the frame's first packet.
pub const FLAG_FIRST: u8 = 16;
/// The RTP marker bit: the frame's last packet (RFC 7741 §4.1, RFC 6184
/// §5.1).
pub const FLAG_MARKER: u8 = 32;

impl Packet {
    /// A share of a frame (media or its retransmission).
    pub fn is_frame_data(&self) -> bool {
        self.flags & FLAG_FRAME != 0 && matches!(self.kind, PacketKind::Media | PacketKind::Rtx)
    }
}

/// An RTX packet's payload starts with the original sequence number, two
/// bytes more than the packet it repeats (RFC 4588 §4).
pub const RTX_OSN: DataSize = DataSize::from_bytes(2);

/// The RTP timestamp of sender clock time `t`: its 90 kHz tick, truncated
/// to 32 bits (RFC 3550 §5.1). The clock's zero is the sender's, so a
/// receiver reads capture times on the sender's clock, as an RTCP sender
/// report's NTP/RTP pair would let it (RFC 3550 §6.4.1).
pub fn rtp_timestamp(t: Time) -> u32 {
    (t.as_micros() * RTP_VIDEO_HZ).div_euclid(1_000_000) as u32
}

/// The sender clock time of an unwrapped 90 kHz tick count: the first µs
/// in that tick, so `rtp_timestamp(rtp_time(n)) == n`.
pub fn rtp_time(ticks: i64) -> Time {
    Time::from_micros((ticks * 1_000_000 + RTP_VIDEO_HZ - 1).div_euclid(RTP_VIDEO_HZ))
}

/// The nearest 32-bit wrap of `v` to `last` (RFC 3550 Appendix A.1's
/// extension of a wrapping field).
pub fn unwrap32(v: u32, last: i64) -> i64 {
    last + i64::from(v.wrapping_sub(last as u32) as i32)
}

/// abs-send-time of sender clock time `t`: 6.18 fixed-point seconds, 24
/// bits, rounded (as libwebrtc writes it).
pub fn abs_send_time(t: Time) -> u32 {
    rtcc_wire::rtp::AbsSendTime::from_micros(t.as_micros().max(0) as u64).0
}

/// The send time an abs-send-time value names, read at `now`: the latest
/// such time at or before `now`, to the µs (the two ends share one clock;
/// a receiver on another clock uses only differences). Values from the
/// future by under a tick (the sender rounds up) read as `now`.
pub fn abs_send_time_at(v: u32, now: Time) -> Time {
    const UNITS: i64 = 1 << 18;
    let now_units = (now.as_micros().max(0) * UNITS + 500_000) / 1_000_000;
    let back = i64::from((now_units as u32).wrapping_sub(v) & 0x00ff_ffff);
    let units = now_units - back;
    Time::from_micros((units * 1_000_000 + UNITS / 2).div_euclid(UNITS)).min(now)
}

/// The value nearest `last` whose low 16 bits are `v`: a 16-bit wire field
/// unwrapped against the newest value seen (RFC 3550 Appendix A.1, as
/// libwebrtc's SeqNumUnwrapper); `None` when that falls below zero.
pub fn unwrap16(v: u16, last: u64) -> Option<u64> {
    last.checked_add_signed(i64::from(v.wrapping_sub(last as u16) as i16))
}
