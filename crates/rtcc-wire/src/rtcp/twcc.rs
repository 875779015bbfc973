//! Transport-wide congestion control feedback, RTPFB FMT 15
//! (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).

use super::{be16, be32, check_size, fmt, pt, Body};
use crate::WireError;

/// Receive deltas count 250 µs ticks (§3.1.5).
pub const TWCC_DELTA_TICK_US: i64 = 250;
/// The reference time counts 64 ms (§3.1).
pub const TWCC_REFERENCE_TICK_US: i64 = 64_000;
/// The reference time is 24 bits, so arrival times wrap after 2²⁴ × 64 ms.
const REFERENCE_WRAP: i64 = 1 << 24;
/// The packet status count is 16 bits (§3.1).
const MAX_STATUSES: usize = 0xffff;

/// One packet's status and receive delta (§3.1.1: symbols 00 not received,
/// 01 small delta — one unsigned byte —, 10 large or negative delta — two
/// signed bytes; 11 is reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketStatus {
    NotReceived,
    /// Ticks of 250 µs since the previous received packet (or the reference time).
    Small(u8),
    Large(i16),
}

impl PacketStatus {
    fn symbol(self) -> u16 {
        match self {
            PacketStatus::NotReceived => 0,
            PacketStatus::Small(_) => 1,
            PacketStatus::Large(_) => 2,
        }
    }
    fn delta_bytes(self) -> usize {
        self.symbol() as usize
    }
    /// The status a received packet's delta (in ticks) needs, as libwebrtc
    /// picks it: small when it fits an unsigned byte.
    pub fn for_delta(ticks: i16) -> Self {
        match u8::try_from(ticks) {
            Ok(t) => PacketStatus::Small(t),
            Err(_) => PacketStatus::Large(ticks),
        }
    }
}

/// A transport-wide feedback packet: one status per sequence from `base_seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportFeedback {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    pub base_seq: u16,
    /// 24 bits, in 64 ms (§3.1).
    pub reference_time: u32,
    /// Feedback packet count, wrapping at 256 (§3.1).
    pub fb_count: u8,
    /// 1 ..= 65,535 statuses (the 16-bit packet status count; an empty
    /// feedback is refused, as libwebrtc does).
    pub packets: Vec<PacketStatus>,
}

/// Packet chunks as libwebrtc's transport_feedback.cc chooses them: statuses
/// gather until the next one fits no chunk kind; then a run-length chunk if
/// all are equal, a one-bit vector if it holds 14, otherwise a two-bit
/// vector of the first 7 and the rest carries over (§3.1.3, §3.1.4).
struct Chunker {
    syms: [u16; 14],
    size: usize,
    all_same: bool,
    has_large: bool,
}

const RUN_MAX: usize = 0x1fff;

impl Chunker {
    fn new() -> Self {
        Chunker { syms: [0; 14], size: 0, all_same: true, has_large: false }
    }
    fn can_add(&self, s: u16) -> bool {
        self.size < 7
            || (self.size < 14 && !self.has_large && s != 2)
            || (self.size < RUN_MAX && self.all_same && self.syms[0] == s)
    }
    fn add(&mut self, s: u16) {
        if self.size < 14 {
            self.syms[self.size] = s;
        }
        self.size += 1;
        self.all_same = self.all_same && s == self.syms[0];
        self.has_large = self.has_large || s == 2;
    }
    fn run(&self) -> u16 {
        (self.syms[0] << 13) | self.size as u16
    }
    fn one_bit(&self) -> u16 {
        (0..self.size.min(14)).fold(0x8000, |c, i| c | (self.syms[i] << (13 - i)))
    }
    fn two_bit(&self, n: usize) -> u16 {
        (0..n.min(7)).fold(0xc000, |c, i| c | (self.syms[i] << (2 * (6 - i))))
    }
    fn emit(&mut self) -> u16 {
        if self.all_same {
            let c = self.run();
            *self = Chunker::new();
            return c;
        }
        if self.size == 14 {
            let c = self.one_bit();
            *self = Chunker::new();
            return c;
        }
        let c = self.two_bit(7);
        let rest = self.size - 7;
        let mut next = Chunker::new();
        for i in 0..rest {
            next.add(self.syms[7 + i]);
        }
        *self = next;
        c
    }
    fn last(&self) -> Option<u16> {
        match self.size {
            0 => None,
            _ if self.all_same => Some(self.run()),
            n if n <= 7 => Some(self.two_bit(n)),
            _ => Some(self.one_bit()),
        }
    }
}

impl TransportFeedback {
    fn statuses(&self) -> &[PacketStatus] {
        &self.packets[..self.packets.len().min(MAX_STATUSES)]
    }

    /// The packet chunks this feedback encodes to.
    pub fn chunks(&self) -> Vec<u16> {
        // A capacity hint: a two-bit vector chunk holds 7 statuses (§3.1.4),
        // the chunker's other chunks more.
        let mut out = Vec::with_capacity(self.statuses().len() / 7 + 1);
        let mut c = Chunker::new();
        for p in self.statuses() {
            let s = p.symbol();
            if !c.can_add(s) {
                out.push(c.emit());
            }
            c.add(s);
        }
        out.extend(c.last());
        out
    }

    pub fn check(&self) -> Result<(), WireError> {
        if self.packets.is_empty() || self.packets.len() > MAX_STATUSES {
            return Err(WireError::invalid(
                "transport-wide feedback",
                "packet status count",
                format!("{} statuses, not 1..=65535", self.packets.len()),
            ));
        }
        if self.reference_time >= 1 << 24 {
            return Err(WireError::invalid(
                "transport-wide feedback",
                "reference time",
                format!("{} over 24 bits", self.reference_time),
            ));
        }
        check_size("transport-wide feedback", 4 + self.body_size())
    }

    /// Each packet's sequence and arrival time in µs on the feedback's clock:
    /// the reference time (64 ms units, wrapping at 2²⁴) plus the running sum
    /// of receive deltas (250 µs ticks), as the wire gives them (§3.1.5).
    pub fn arrivals(&self) -> impl Iterator<Item = (u16, Option<i64>)> + '_ {
        let mut t = i64::from(self.reference_time & 0x00ff_ffff) * TWCC_REFERENCE_TICK_US;
        self.packets.iter().enumerate().map(move |(i, p)| {
            let seq = self.base_seq.wrapping_add(i as u16);
            let d = match *p {
                PacketStatus::NotReceived => return (seq, None),
                PacketStatus::Small(d) => i64::from(d),
                PacketStatus::Large(d) => i64::from(d),
            };
            t += d * TWCC_DELTA_TICK_US;
            (seq, Some(t))
        })
    }
}

impl Body for TransportFeedback {
    const WHAT: &'static str = "transport-wide feedback";
    const PT: u8 = pt::RTPFB;
    fn count(&self) -> u8 {
        fmt::TWCC
    }
    fn body_size(&self) -> usize {
        let deltas: usize = self.statuses().iter().map(|p| p.delta_bytes()).sum();
        (16 + 2 * self.chunks().len() + deltas).next_multiple_of(4)
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        out.extend_from_slice(&self.media_ssrc.to_be_bytes());
        out.extend_from_slice(&self.base_seq.to_be_bytes());
        out.extend_from_slice(&(self.statuses().len() as u16).to_be_bytes());
        out.extend_from_slice(&(((self.reference_time & 0x00ff_ffff) << 8) | u32::from(self.fb_count)).to_be_bytes());
        for c in self.chunks() {
            out.extend_from_slice(&c.to_be_bytes());
        }
        for p in self.statuses() {
            match *p {
                PacketStatus::NotReceived => {}
                PacketStatus::Small(d) => out.push(d),
                PacketStatus::Large(d) => out.extend_from_slice(&d.to_be_bytes()),
            }
        }
        // Zero padding to 32 bits (§3.1).
        out.resize(start + (out.len() - start).next_multiple_of(4), 0);
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        const WHAT: &str = "transport-wide feedback";
        if count != fmt::TWCC {
            return Err(WireError::invalid(WHAT, "FMT", format!("{count} where it is {}", fmt::TWCC)));
        }
        WireError::need(WHAT, b, 16)?;
        let n = usize::from(be16(b, 10));
        if n == 0 {
            return Err(WireError::invalid(WHAT, "packet status count", "0; feedback must report a packet"));
        }
        let w = be32(b, 12);
        // Statuses first, with placeholder deltas filled in the second pass.
        let mut packets = Vec::with_capacity(n);
        let mut at = 16;
        while packets.len() < n {
            let chunk = b.get(at..at + 2).ok_or(WireError::Truncated {
                what: "transport-wide feedback chunk",
                need: at + 2,
                have: b.len(),
            })?;
            let chunk = u16::from_be_bytes([chunk[0], chunk[1]]);
            at += 2;
            let left = n - packets.len();
            let status = |s: u16| match s {
                0 => Ok(PacketStatus::NotReceived),
                1 => Ok(PacketStatus::Small(0)),
                2 => Ok(PacketStatus::Large(0)),
                _ => Err(WireError::invalid(WHAT, "packet status symbol", "11 is reserved (§3.1.1)")),
            };
            if chunk & 0x8000 == 0 {
                // Run length chunk (§3.1.3): T=0, S (2 bits), run length (13).
                let s = status((chunk >> 13) & 3)?;
                let run = usize::from(chunk & 0x1fff).min(left);
                packets.extend(std::iter::repeat_n(s, run));
            } else if chunk & 0x4000 == 0 {
                // One-bit status vector (§3.1.4): 14 symbols, 0 or 1.
                for i in 0..14.min(left) {
                    packets.push(status((chunk >> (13 - i)) & 1)?);
                }
            } else {
                // Two-bit status vector (§3.1.4): 7 symbols.
                for i in 0..7.min(left) {
                    packets.push(status((chunk >> (2 * (6 - i))) & 3)?);
                }
            }
        }
        for p in packets.iter_mut() {
            match p {
                PacketStatus::NotReceived => {}
                PacketStatus::Small(d) => {
                    *d = *b.get(at).ok_or(WireError::Truncated {
                        what: "transport-wide feedback delta",
                        need: at + 1,
                        have: b.len(),
                    })?;
                    at += 1;
                }
                PacketStatus::Large(d) => {
                    let s = b.get(at..at + 2).ok_or(WireError::Truncated {
                        what: "transport-wide feedback delta",
                        need: at + 2,
                        have: b.len(),
                    })?;
                    *d = i16::from_be_bytes([s[0], s[1]]);
                    at += 2;
                }
            }
        }
        if b.len() - at >= 4 {
            return Err(WireError::invalid(WHAT, "length", format!("{} bytes after the receive deltas", b.len() - at)));
        }
        Ok(TransportFeedback {
            sender_ssrc: be32(b, 0),
            media_ssrc: be32(b, 4),
            base_seq: be16(b, 8),
            reference_time: w >> 8,
            fb_count: w as u8,
            packets,
        })
    }
}

/// Builds transport-wide feedback from arrivals, starting a new packet when
/// a receive delta does not fit 16 signed bits of 250 µs ticks or the status
/// count would pass 16 bits.
#[derive(Debug, Clone)]
pub struct TransportFeedbackBuilder {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    /// The next packet's feedback packet count.
    pub fb_count: u8,
}

impl TransportFeedbackBuilder {
    pub fn new(sender_ssrc: u32, media_ssrc: u32, fb_count: u8) -> Self {
        TransportFeedbackBuilder { sender_ssrc, media_ssrc, fb_count }
    }

    /// Feedback for `packets`, each (sequence, arrival in µs on the
    /// receiver's clock, or `None` if lost), taken in sequence order from
    /// `base_seq` (sequences within 2¹⁶ after it; repeats keep the first).
    /// Sequences between those given count as not received. The reference
    /// time is `reference_us` floored to 64 ms; each delta is rounded to the
    /// nearest 250 µs tick from the previous quantised arrival, so rounding
    /// never accumulates (as libwebrtc's AddReceivedPacket).
    pub fn build(
        &mut self,
        base_seq: u16,
        reference_us: i64,
        packets: &[(u16, Option<i64>)],
    ) -> Vec<TransportFeedback> {
        let mut sorted: Vec<(u16, Option<i64>)> = packets.to_vec();
        sorted.sort_by_key(|&(s, _)| s.wrapping_sub(base_seq));
        sorted.dedup_by_key(|&mut (s, _)| s);
        let mut out = Vec::new();
        let hint = sorted.len().min(MAX_STATUSES);
        let mut cur = self.start(base_seq, reference_us, hint);
        for (seq, arrival) in sorted {
            let gap = usize::from(seq.wrapping_sub(cur.0.base_seq))
                - cur.0.packets.len().min(usize::from(seq.wrapping_sub(cur.0.base_seq)));
            let ticks = arrival.map(|a| round_ticks(a.saturating_sub(cur.1)));
            let fits = ticks.is_none_or(|t| i16::try_from(t).is_ok());
            if !fits || cur.0.packets.len() + gap + 1 > MAX_STATUSES {
                if !cur.0.packets.is_empty() {
                    out.push(cur.0);
                }
                cur = self.start(seq, arrival.unwrap_or(cur.1), hint);
                let ticks = arrival.map(|a| round_ticks(a.saturating_sub(cur.1)));
                push(&mut cur, None, ticks);
                continue;
            }
            push(&mut cur, Some(gap), ticks);
        }
        if !cur.0.packets.is_empty() {
            out.push(cur.0);
        }
        out
    }

    /// A new feedback packet with room for `hint` statuses.
    fn start(&mut self, base_seq: u16, reference_us: i64, hint: usize) -> (TransportFeedback, i64) {
        let base = reference_us.div_euclid(TWCC_REFERENCE_TICK_US);
        let fb = TransportFeedback {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc,
            base_seq,
            reference_time: base.rem_euclid(REFERENCE_WRAP) as u32,
            fb_count: self.fb_count,
            packets: Vec::with_capacity(hint),
        };
        self.fb_count = self.fb_count.wrapping_add(1);
        (fb, base * TWCC_REFERENCE_TICK_US)
    }
}

/// Appends a status after `gap` lost packets; `ticks` is the delta (known to
/// fit) or `None` for a lost packet.
fn push(cur: &mut (TransportFeedback, i64), gap: Option<usize>, ticks: Option<i64>) {
    cur.0.packets.extend(std::iter::repeat_n(PacketStatus::NotReceived, gap.unwrap_or(0)));
    match ticks {
        None => cur.0.packets.push(PacketStatus::NotReceived),
        Some(t) => {
            let t = i16::try_from(t).unwrap_or(i16::MAX);
            cur.0.packets.push(PacketStatus::for_delta(t));
            cur.1 = cur.1.saturating_add(i64::from(t) * TWCC_DELTA_TICK_US);
        }
    }
}

/// µs to the nearest 250 µs tick, halves away from zero (libwebrtc's rounding).
fn round_ticks(us: i64) -> i64 {
    let half = TWCC_DELTA_TICK_US / 2;
    if us >= 0 {
        us.saturating_add(half) / TWCC_DELTA_TICK_US
    } else {
        us.saturating_sub(half) / TWCC_DELTA_TICK_US
    }
}
