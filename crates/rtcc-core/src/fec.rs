//! Forward error correction: one XOR parity packet over N consecutive media
//! packets (by `media_seq`), RFC 5109 style. This is the "basic per packet
//! parity FEC scheme" of FBRA (fbra.txt §4.2: one FEC packet per N RTP
//! packets, N varied by the controller) and the ≈10 % FEC of PIBES
//! (pibes.txt §III-B).
//!
//! What is modelled, and how:
//! - Header recovery. RFC 5109 §7.3 carries the XOR of the protected
//!   packets' RTP header fields (marker, PT, timestamp) in the FEC header so a
//!   lost packet comes back with its header. Here the parity `Packet`'s own
//!   `frame`, `flags` (marker, the descriptor's start-of-frame and key bits)
//!   and `timestamp` fields hold the XOR of the protected packets' fields, and
//!   the decoder XORs them with the received ones. So the parity's `frame` is
//!   NOT a frame number; code must not read it as one. Sequence numbers are
//!   the wire's 16 bits throughout, compared by signed distance.
//! - Size. Shorter packets are zero-padded to the longest before the XOR
//!   (RFC 5109 §8), so the parity payload is the largest protected packet,
//!   plus the FEC header (10 B, §7.3) and the level-0 header (4 B with the
//!   16-bit mask, §7.4): 14 B by default, a parameter.
//! - Payload and length. A real codec's packets carry their RTP payloads
//!   (`Packet::payload`); the parity carries rtcc-wire's ULPFEC payload
//!   (`rtcc_wire::fec::protect`: the FEC header with PT, timestamp and length
//!   recovery, and the XOR of the protected payloads, §7.3–§8) over the RTP
//!   packets they travel in, so a lost packet is rebuilt byte for byte with
//!   its format (the payload type) and exact length (`fec::recover`, §9.1).
//!   That payload is the modelled size (FEC header 10 + level header 4 +
//!   the longest protected payload) plus the XOR of the protected packets'
//!   8-octet descriptor blocks, which the size leaves out as it leaves out
//!   every packet's extension block (`datagram::PROTECTED_EXT_LEN`). Model
//!   encoders' packets carry no bytes: their parity has no payload and a recovered packet's size is the parity
//!   size minus the overhead, i.e. the longest packet of its group (exact
//!   when the lost packet was the longest, the usual case: the packetizer
//!   splits a frame into near-equal packets).
//!
//! Constants the papers leave open: at most 48 packets per parity (the
//! RFC 5109 §7.4 long mask, also WebRTC's limit); the decoder remembers the
//! headers of the last 4096 media sequence numbers and at most 64 parities
//! still waiting for a retransmission (WebRTC's ULPFEC receiver keeps 48 FEC
//! packets and 4 × 48 media packets; a larger header window costs little
//! here and tolerates retransmissions that arrive several frames late), and
//! the payloads of the last 4 × 48 only, as WebRTC.

use crate::controller::{ConfigError, Param, ParamInfo, Params};
use crate::packet::{Packet, PacketKind, Payload, PayloadFormat, FLAG_MARKER, FLAG_PROTECTED};
use crate::units::DataSize;
use rtcc_wire::fec::UlpfecPacket;
use rtcc_wire::rtp::RtpPacket;
use rtcc_wire::Wire;

/// RFC 5109 §7.3: the FEC header.
pub const FEC_HEADER: DataSize = DataSize::from_bytes(10);
/// RFC 5109 §7.4: the level-0 header with the short mask (L = 0, ≤ 16 packets);
/// the long mask (L = 1, ≤ 48 packets) makes it 8 B.
pub const ULP_LEVEL_HEADER: DataSize = DataSize::from_bytes(4);
/// Default per-parity overhead, `FEC_HEADER + ULP_LEVEL_HEADER`.
pub const DEFAULT_OVERHEAD: DataSize = DataSize::from_bytes(14);
/// Default N: one parity per 10 media packets ≈ 10 % FEC, as PIBES runs it.
pub const DEFAULT_GROUP: u16 = 10;
/// Most media packets one parity can protect (RFC 5109 §7.4 long mask).
pub const MAX_GROUP: u16 = 48;
/// Media sequence numbers the decoder remembers (a power of two).
const WINDOW: usize = 4096;
/// Parities kept while two or more of their packets are missing.
const MAX_PENDING: usize = 64;
/// Media packets whose payloads (real codecs) the decoder keeps for
/// rebuilding another: WebRTC's ULPFEC receiver keeps 4 × 48 media packets.
/// Older slots keep their header only, so a parity that resolves later
/// rebuilds the header without bytes.
const BYTES_WINDOW: u16 = 4 * MAX_GROUP;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FecConfig {
    /// N: media packets per parity, 1..=`MAX_GROUP`.
    pub group: u16,
    /// Bytes a parity carries beyond the longest protected packet.
    pub overhead: DataSize,
    /// Close a partial group at the end of each frame. WebRTC's ULPFEC and
    /// FlexFEC protect frame by frame so recovery can finish before the frame
    /// is due instead of waiting for the next frame's packets.
    pub per_frame: bool,
}

const GROUP: Param<u16> = Param::integer(
    "group",
    DEFAULT_GROUP as i64,
    1,
    MAX_GROUP as i64,
    "media packets per parity packet (FBRA's FEC interval; 10 = PIBES's ~10 % FEC)",
);
const OVERHEAD: Param<DataSize> = Param::size(
    "overhead",
    DEFAULT_OVERHEAD,
    DataSize::ZERO,
    DataSize::from_bytes(1500),
    "bytes added to each parity: RFC 5109 FEC header (10 B) + level header (4 B; 8 B for groups above 16)",
);
/// WebRTC's ULPFEC and FlexFEC protect frame by frame.
const PER_FRAME: Param<bool> = Param::flag(
    "per_frame",
    true,
    "close a partial group at the end of each frame so recovery never waits for the next frame",
);

impl Default for FecConfig {
    fn default() -> Self {
        FecConfig::DEFAULT
    }
}

impl FecConfig {
    pub const PARAMS: &'static [ParamInfo] = &[GROUP.info(), OVERHEAD.info(), PER_FRAME.info()];

    /// Every parameter at its declared default.
    pub const DEFAULT: FecConfig =
        FecConfig { group: GROUP.default(), overhead: OVERHEAD.default(), per_frame: PER_FRAME.default() };

    /// Builds the config from its own parameter table; unknown names are refused.
    pub fn from_params(p: &Params) -> Result<Self, ConfigError> {
        p.check_known(Self::PARAMS)?;
        Ok(FecConfig { group: p.get(&GROUP)?, overhead: p.get(&OVERHEAD)?, per_frame: p.get(&PER_FRAME)? })
    }
}

fn clamp_group(n: u16) -> u16 {
    n.clamp(1, MAX_GROUP)
}

/// The group being built: XOR of the headers so far (RFC 5109 §8).
#[derive(Clone, Debug, Default)]
struct Group {
    base: u16,
    len: u16,
    /// N fixed when the group opened.
    n: u16,
    frame: u16,
    flags: u8,
    /// XOR of the RTP timestamps, as RFC 5109 §7.3 recovers TS.
    timestamp: u32,
    longest: DataSize,
    /// The protected packets as RTP, while every one so far carried its
    /// payload (real codecs); `None` once one did not (model encoders).
    rtp: Option<Vec<RtpPacket>>,
}

/// The stream's SSRC inside the FEC path (one protected stream per flow;
/// the FEC header does not carry it, RFC 5109 §7.3).
const SSRC: u32 = 0;

/// The RTP packet a protected media packet's payload travels in, as ULPFEC
/// sees it (RFC 5109 §8): its media sequence, marker on a frame's last
/// packet, its RTP timestamp, payload type from the payload format, and its
/// Dependency Descriptor as the extension block (`datagram::protected_extension`),
/// so the parity's bytes carry the frame number and bits a rebuilt packet needs.
fn as_rtp(seq: u16, frame: u16, flags: u8, ts: u32, payload: &Payload) -> Option<RtpPacket> {
    let mut p = RtpPacket::new(payload.format().code(), seq, ts, SSRC, payload.bytes().to_vec()).ok()?;
    p.marker = flags & FLAG_MARKER != 0;
    p.extension = Some(crate::datagram::protected_extension(frame, flags));
    Some(p)
}

/// Sender side: turns the stream of sent media packets into parity packets.
#[derive(Clone, Debug)]
pub struct FecEncoder {
    cfg: FecConfig,
    next_n: u16,
    cur: Group,
}

impl FecEncoder {
    pub fn new(cfg: FecConfig) -> Self {
        FecEncoder { next_n: clamp_group(cfg.group), cfg, cur: Group::default() }
    }

    /// Sets N (clamped to 1..=`MAX_GROUP`). A group already open keeps the N
    /// it started with, so every parity covers a well-defined range.
    pub fn set_group(&mut self, n: u16) {
        self.next_n = clamp_group(n);
    }

    /// N for the next group.
    pub fn group(&self) -> u16 {
        self.next_n
    }

    /// A media packet was just sent (its `media_seq` assigned). Returns a
    /// parity template when its group is complete: kind, media_seq, group,
    /// frame/flags/timestamp (XORs) and size are set; `seq` and the send time
    /// are left for the sender. With `per_frame`, the last packet of a frame
    /// (its marker bit) also closes the group, so `end_frame` is only needed
    /// when a frame ends some other way.
    ///
    /// Only `PacketKind::Media` is protected: retransmissions repeat a
    /// sequence number already covered, and audio has its own numbering.
    pub fn on_media(&mut self, p: &Packet) -> Option<Packet> {
        if p.kind != PacketKind::Media {
            return None;
        }
        // A parity covers consecutive sequence numbers (RFC 5109 §7.3 SN base
        // + mask). After a jump (FEC paused and resumed) the open group can no
        // longer be described; its packets were sent long ago, so drop it.
        if self.cur.len > 0 && p.media_seq != self.cur.base.wrapping_add(self.cur.len) {
            self.cur.len = 0;
        }
        if self.cur.len == 0 {
            self.cur = Group { base: p.media_seq, n: self.next_n, rtp: Some(Vec::new()), ..Group::default() };
        }
        let g = &mut self.cur;
        g.len += 1;
        g.frame ^= p.frame;
        g.flags ^= p.flags;
        g.timestamp ^= p.timestamp;
        g.longest = g.longest.max(p.size);
        let last = p.flags & FLAG_MARKER != 0;
        let rtp = p.payload.as_ref().and_then(|b| as_rtp(p.media_seq, p.frame, p.flags, p.timestamp, b));
        match (&mut g.rtp, rtp) {
            (Some(v), Some(r)) => v.push(r),
            (slot, _) => *slot = None,
        }
        let frame_done = self.cfg.per_frame && last;
        if g.len >= g.n || frame_done {
            Some(self.close())
        } else {
            None
        }
    }

    /// The last packet of a frame was sent: with `per_frame`, close the open
    /// group if it has at least one packet.
    pub fn end_frame(&mut self) -> Option<Packet> {
        if self.cfg.per_frame {
            self.flush()
        } else {
            None
        }
    }

    /// Close the open group whatever `per_frame` says (e.g. when FEC is
    /// switched off, so the packets already sent keep their protection).
    pub fn flush(&mut self) -> Option<Packet> {
        (self.cur.len > 0).then(|| self.close())
    }

    fn close(&mut self) -> Packet {
        let g = std::mem::take(&mut self.cur);
        Packet {
            kind: PacketKind::Fec,
            // Zero padding to the longest packet (RFC 5109 §8) + headers.
            size: g.longest + self.cfg.overhead,
            timestamp: g.timestamp,
            frame: g.frame,
            media_seq: g.base,
            group: g.len,
            flags: g.flags,
            // A packet over the 16-bit length recovery field leaves none.
            payload: g
                .rtp
                .and_then(|v| rtcc_wire::fec::protect(&v).ok())
                .map(|f| Payload::with_format(PayloadFormat::Parity, f.to_bytes())),
            ..Packet::default()
        }
    }
}

/// Receiver-side counters. Every parity received ends in exactly one of
/// `recovered`, `unrecoverable`, `useless`, so they sum to `parities`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FecStats {
    /// Distinct parity packets received.
    pub parities: u64,
    /// Media packets rebuilt from a parity.
    pub recovered: u64,
    /// Parities with two or more protected packets missing. Parities still
    /// waiting for a retransmission count here until they resolve.
    pub unrecoverable: u64,
    /// Parities whose packets all arrived anyway.
    pub useless: u64,
    /// Media packets a received parity covered but could not rebuild (two or
    /// more of its group missing); FFRE = recovered / (recovered + these).
    pub unrepaired: u64,
}

/// What the decoder remembers of one media sequence number.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// Full sequence number this slot describes; a mismatch means empty.
    seq: u16,
    media: bool,
    /// A parity whose first protected packet is `seq` was received.
    parity: bool,
    frame: u16,
    flags: u8,
    timestamp: u32,
    /// Its RTP payload (real codecs), for rebuilding another of its group.
    payload: Option<Payload>,
}

/// XOR of the received headers of a group and what is missing from it.
#[derive(Clone, Copy, Debug, Default)]
struct Scan {
    missing: u16,
    last_missing: u16,
    frame: u16,
    flags: u8,
    timestamp: u32,
}

#[derive(Clone, Debug)]
struct Pending {
    parity: Packet,
    order: u64,
    /// Protected packets still missing, as of the last scan.
    missing: u16,
}

/// Receiver side: rebuilds a lost media packet from its group's parity and
/// the other N − 1 packets (RFC 5109 §9).
// With `sim-layout`, `head` first (`repr(C)`): every media packet reads it,
// FEC or not.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "sim-layout", repr(C))]
pub struct FecDecoder {
    /// Newest sequence number seen (media, or the last one a parity covers).
    head: Option<u16>,
    overhead: DataSize,
    /// `ring[seq % WINDOW]`, tagged with the full sequence number; empty
    /// until the first protected packet or parity (a flow without FEC never
    /// allocates it).
    ring: Box<[Slot]>,
    /// Capacity `MAX_PENDING`, reserved up front.
    pending: Vec<Pending>,
    next_order: u64,
    /// `unrecoverable` here counts resolved parities only.
    stats: FecStats,
}

impl Default for FecDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl FecDecoder {
    /// A decoder for parities built with the default 14 B overhead.
    pub fn new() -> Self {
        Self::with_overhead(DEFAULT_OVERHEAD)
    }

    /// A decoder for parities built with `overhead` (the sender's
    /// `FecConfig::overhead`; both ends agree on it, as SDP would negotiate).
    pub fn with_overhead(overhead: DataSize) -> Self {
        FecDecoder {
            overhead,
            ring: Box::default(),
            head: None,
            pending: Vec::with_capacity(MAX_PENDING),
            next_order: 0,
            stats: FecStats::default(),
        }
    }

    pub fn stats(&self) -> FecStats {
        FecStats {
            unrecoverable: self.stats.unrecoverable + self.pending.len() as u64,
            unrepaired: self.stats.unrepaired + self.pending.iter().map(|p| u64::from(p.missing)).sum::<u64>(),
            ..self.stats
        }
    }

    /// Parities waiting for more of their packets.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// A media (or retransmitted) packet arrived. Returns the packet a stored
    /// parity can now rebuild, if this arrival leaves exactly one missing.
    /// A packet that was already received or recovered changes nothing.
    pub fn on_media(&mut self, p: &Packet) -> Option<Packet> {
        if !matches!(p.kind, PacketKind::Media | PacketKind::Rtx) {
            return None;
        }
        let s = p.media_seq;
        if self.too_old(s) {
            return None;
        }
        self.advance(s);
        // No parity covers a packet outside the protected stream.
        if p.flags & FLAG_PROTECTED == 0 {
            return None;
        }
        let slot = self.slot_mut(s);
        if slot.media {
            return None;
        }
        slot.media = true;
        (slot.frame, slot.flags) = (p.frame, p.flags);
        slot.timestamp = p.timestamp;
        slot.payload.clone_from(&p.payload);
        self.forget_bytes(s);
        self.resolve_pending(s)
    }

    /// A parity arrived. One protected packet missing → that packet, rebuilt
    /// (kind Media, header and size recovered, `seq` 0 since it never had a
    /// transport sequence number, the parity's abs-send-time). Two or more
    /// missing → kept (bounded) in case retransmissions fill the gaps. None
    /// missing → counted useless.
    pub fn on_parity(&mut self, p: &Packet) -> Option<Packet> {
        if p.kind != PacketKind::Fec || p.group == 0 || p.group > MAX_GROUP {
            return None;
        }
        let base = p.media_seq;
        // Its packets' headers may already be overwritten in the ring.
        if self.too_old(base) {
            return None;
        }
        self.advance(base.wrapping_add(p.group - 1));
        let slot = self.slot_mut(base);
        if slot.parity {
            return None;
        }
        slot.parity = true;
        self.stats.parities += 1;
        let scan = self.scan(base, p.group);
        match scan.missing {
            0 => {
                self.stats.useless += 1;
                None
            }
            1 => Some(self.recover(p, &scan)),
            n => {
                self.store(p, n);
                None
            }
        }
    }

    /// Drop the payload `BYTES_WINDOW` behind `s`: a real codec's receiver
    /// holds a few groups' bytes, not the whole header window's.
    fn forget_bytes(&mut self, s: u16) {
        let old = s.wrapping_sub(BYTES_WINDOW);
        if let Some(slot) = self.ring.get_mut(old as usize & (WINDOW - 1)).filter(|slot| slot.seq == old) {
            slot.payload = None;
        }
    }

    /// Sequence number `s` is older than the remembered window.
    fn too_old(&self, s: u16) -> bool {
        // Signed distance so the 16-bit wrap-around is just one more step.
        self.head.is_some_and(|h| i64::from(h.wrapping_sub(s) as i16) >= WINDOW as i64)
    }

    fn advance(&mut self, s: u16) {
        if self.head.is_none_or(|h| (s.wrapping_sub(h) as i16) > 0) {
            self.head = Some(s);
        }
    }

    fn slot(&self, s: u16) -> Option<&Slot> {
        let slot = self.ring.get(s as usize & (WINDOW - 1))?;
        (slot.seq == s).then_some(slot)
    }

    /// The slot for `s`, cleared first if it still describes an older number.
    fn slot_mut(&mut self, s: u16) -> &mut Slot {
        if self.ring.is_empty() {
            self.ring = vec![Slot::default(); WINDOW].into_boxed_slice();
        }
        let slot = &mut self.ring[s as usize & (WINDOW - 1)];
        if slot.seq != s {
            *slot = Slot { seq: s, ..Slot::default() };
        }
        slot
    }

    fn scan(&self, base: u16, group: u16) -> Scan {
        let mut sc = Scan::default();
        for k in 0..group {
            let s = base.wrapping_add(k);
            match self.slot(s) {
                Some(slot) if slot.media => {
                    sc.frame ^= slot.frame;
                    sc.flags ^= slot.flags;
                    sc.timestamp ^= slot.timestamp;
                }
                _ => {
                    sc.missing += 1;
                    sc.last_missing = s;
                }
            }
        }
        sc
    }

    /// The missing payload, rebuilt by rtcc-wire's ULPFEC from the parity
    /// and the N − 1 received payloads (RFC 5109 §9.1), its format from the
    /// recovered payload type. `None` when the parity or one of them carries
    /// no bytes, or they do not rebuild a packet.
    fn recover_bytes(&self, parity: &Packet, missing: u16) -> Option<Payload> {
        let b = parity.payload.as_ref().filter(|b| b.format() == PayloadFormat::Parity)?;
        let fec = UlpfecPacket::decode(b.bytes()).ok()?;
        let received = (0..parity.group)
            .map(|k| parity.media_seq.wrapping_add(k))
            .filter(|&s| s != missing)
            .map(|s| {
                let slot = self.slot(s)?;
                as_rtp(s, slot.frame, slot.flags, slot.timestamp, slot.payload.as_ref()?)
            })
            .collect::<Option<Vec<RtpPacket>>>()?;
        let rec = rtcc_wire::fec::recover(&fec, SSRC, &received).ok()?;
        let format = PayloadFormat::from_code(rec.payload_type).filter(|&f| f != PayloadFormat::Parity)?;
        Some(Payload::with_format(format, rec.payload))
    }

    /// Parity XOR the N − 1 received headers = the missing header (RFC 5109 §9).
    fn recover(&mut self, parity: &Packet, sc: &Scan) -> Packet {
        debug_assert_eq!(sc.missing, 1);
        let payload = self.recover_bytes(parity, sc.last_missing);
        let rec = Packet {
            kind: PacketKind::Media,
            size: payload.as_ref().map_or(parity.size - self.overhead, |b| DataSize::from_bytes(b.len() as u64)),
            abs_send_time: parity.abs_send_time,
            frame: parity.frame ^ sc.frame,
            media_seq: sc.last_missing,
            flags: parity.flags ^ sc.flags,
            timestamp: parity.timestamp ^ sc.timestamp,
            payload,
            ..Packet::default()
        };
        // Remember it, so a late original or retransmission is a duplicate.
        let slot = self.slot_mut(rec.media_seq);
        slot.media = true;
        (slot.frame, slot.flags) = (rec.frame, rec.flags);
        slot.timestamp = rec.timestamp;
        slot.payload.clone_from(&rec.payload);
        self.stats.recovered += 1;
        rec
    }

    fn store(&mut self, p: &Packet, missing: u16) {
        if self.pending.len() >= MAX_PENDING {
            // Evict the oldest: it has waited longest for a retransmission.
            if let Some(i) = (0..self.pending.len()).min_by_key(|&i| self.pending[i].order) {
                let gone = self.pending.swap_remove(i);
                self.stats.unrecoverable += 1;
                self.stats.unrepaired += u64::from(gone.missing);
            }
        }
        self.pending.push(Pending { parity: p.clone(), order: self.next_order, missing });
        self.next_order += 1;
    }

    /// Media `s` just arrived: settle the stored parity covering it, and drop
    /// parities whose packets fell out of the window.
    fn resolve_pending(&mut self, s: u16) -> Option<Packet> {
        let mut i = 0;
        while i < self.pending.len() {
            let (base, group) = (self.pending[i].parity.media_seq, self.pending[i].parity.group);
            if self.too_old(base) {
                let gone = self.pending.swap_remove(i);
                self.stats.unrecoverable += 1;
                self.stats.unrepaired += u64::from(gone.missing);
                continue;
            }
            if s.wrapping_sub(base) < group {
                let sc = self.scan(base, group);
                match sc.missing {
                    0 => {
                        self.pending.swap_remove(i);
                        self.stats.useless += 1;
                        continue;
                    }
                    1 => {
                        let par = self.pending.swap_remove(i).parity;
                        return Some(self.recover(&par, &sc));
                    }
                    n => self.pending[i].missing = n,
                }
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::ParamValue;
    use crate::packet::{FLAG_FIRST, FLAG_FRAME, FLAG_KEY};
    use crate::rng::Rng;
    use crate::units::Time;

    fn cfg(group: u16, per_frame: bool) -> FecConfig {
        FecConfig { group, overhead: DEFAULT_OVERHEAD, per_frame }
    }

    /// Media packet `index` of `count` in `frame`, as the wire has it: 16-bit
    /// numbers, the start-of-frame and marker bits.
    fn media(ms: u32, frame: u32, index: u16, count: u16, size: u64, flags: u8) -> Packet {
        let first = if index == 0 { FLAG_FIRST } else { 0 };
        let last = if index + 1 == count { FLAG_MARKER } else { 0 };
        Packet {
            kind: PacketKind::Media,
            size: DataSize::from_bytes(size),
            frame: frame as u16,
            media_seq: ms as u16,
            flags: flags | FLAG_PROTECTED | FLAG_FRAME | first | last,
            // The frame's RTP timestamp: a 30 fps capture clock.
            timestamp: crate::packet::rtp_timestamp(Time::from_micros(i64::from(frame) * 33_333)),
            ..Packet::default()
        }
    }

    /// Sends `frames` (packets per frame, key?) through `enc`, numbering media
    /// from `start`: 1200 B packets, the last of each frame 700 B. Returns the
    /// wire in send order, parities right after the packet that closed them.
    fn send(enc: &mut FecEncoder, start: u32, frames: &[(u16, bool)]) -> Vec<Packet> {
        let mut wire = Vec::new();
        let mut ms = start;
        let push = |wire: &mut Vec<Packet>, mut p: Packet| {
            p.seq = wire.len() as u16;
            p.abs_send_time = crate::packet::abs_send_time(Time::from_micros(100 * wire.len() as i64));
            wire.push(p);
        };
        for (f, &(count, key)) in frames.iter().enumerate() {
            for i in 0..count {
                let size = if i + 1 == count { 700 } else { 1200 };
                let p = media(ms, f as u32, i, count, size, if key { FLAG_KEY } else { 0 });
                ms = ms.wrapping_add(1);
                push(&mut wire, p);
                if let Some(fec) = enc.on_media(wire.last().unwrap()) {
                    push(&mut wire, fec);
                }
            }
            if let Some(fec) = enc.end_frame() {
                push(&mut wire, fec);
            }
        }
        wire
    }

    fn deliver(dec: &mut FecDecoder, wire: &[Packet], lost: impl Fn(&Packet) -> bool) -> Vec<Packet> {
        let mut out = Vec::new();
        for p in wire.iter().filter(|p| !lost(p)) {
            let r = if p.kind == PacketKind::Fec { dec.on_parity(p) } else { dec.on_media(p) };
            out.extend(r);
        }
        out
    }

    fn find(wire: &[Packet], kind: PacketKind, ms: u16) -> Packet {
        wire.iter().find(|p| p.kind == kind && p.media_seq == ms).unwrap().clone()
    }

    fn check_sum(st: FecStats) {
        assert_eq!(st.parities, st.recovered + st.unrecoverable + st.useless, "{st:?}");
    }

    /// 25 frames × 4 packets, frame 3 a key frame: groups of 10 span frames.
    fn hundred(n: u16) -> Vec<Packet> {
        let frames: Vec<(u16, bool)> = (0..25).map(|f| (4, f == 3)).collect();
        send(&mut FecEncoder::new(cfg(n, false)), 0, &frames)
    }

    #[test]
    fn single_loss_recovered_with_exact_header() {
        let wire = hundred(10);
        assert_eq!(wire.len(), 110);
        // Group 1 = media 10..=19 (frames 2, 3, 4); its packet #3 is media 13,
        // packet 1 of key frame 3.
        let orig = find(&wire, PacketKind::Media, 13);
        assert_eq!((orig.frame, orig.flags, orig.size.bytes()), (3, FLAG_KEY | FLAG_PROTECTED | FLAG_FRAME, 1200));
        assert_eq!(orig.timestamp, 8999);
        let mut dec = FecDecoder::new();
        let rec = deliver(&mut dec, &wire, |p| p.kind == PacketKind::Media && p.media_seq == 13);
        assert_eq!(rec.len(), 1);
        let parity = find(&wire, PacketKind::Fec, 10);
        assert_eq!(rec[0], Packet { seq: 0, abs_send_time: parity.abs_send_time, ..orig });
        assert_eq!(dec.stats(), FecStats { parities: 10, recovered: 1, unrecoverable: 0, useless: 9, unrepaired: 0 });
    }

    #[test]
    fn recovered_length_is_the_longest_of_the_group() {
        // Media 11 is the 700 B tail of frame 2; RFC 5109 would recover 700 B
        // from the length-recovery field, this model gives the group's 1200 B.
        let wire = hundred(10);
        let rec = deliver(&mut FecDecoder::new(), &wire, |p| p.kind == PacketKind::Media && p.media_seq == 11);
        assert_eq!((rec[0].frame, rec[0].flags & (FLAG_FIRST | FLAG_MARKER)), (2, FLAG_MARKER));
        assert_eq!(rec[0].size, DataSize::from_bytes(1200));
    }

    #[test]
    fn payloads_come_back_byte_for_byte_with_their_length_and_format() {
        use crate::packet::PayloadFormat;
        let bytes = |n: usize, k: u8| {
            Payload::with_format(PayloadFormat::Vp8, (0..n).map(|i| (i as u8).wrapping_mul(k)).collect())
        };
        let sizes = [9usize, 5, 2];
        let wire = |enc: &mut FecEncoder| {
            let mut w: Vec<Packet> = (0..3u16)
                .map(|i| Packet {
                    payload: Some(bytes(sizes[usize::from(i)], 3 + i as u8)),
                    ..media(u32::from(i), 0, i, 3, 9, 0)
                })
                .collect();
            let parity = w.iter().filter_map(|p| enc.on_media(p)).last().unwrap();
            w.push(parity);
            w
        };
        let w = wire(&mut FecEncoder::new(cfg(10, true)));
        // An RFC 5109 FEC payload: FEC header 10, level header 4, then the
        // XOR of the protected descriptor blocks (8) and of the payloads,
        // the longest's 9 octets; it parses, covering media 0..=2.
        let parity = w[3].payload.as_ref().unwrap();
        assert_eq!(parity.len(), 10 + 4 + crate::datagram::PROTECTED_EXT_LEN + 9);
        assert_eq!(UlpfecPacket::decode(parity.bytes()).unwrap().protected(0), [0, 1, 2]);
        for lost in 0..3 {
            let rec = deliver(&mut FecDecoder::new(), &w, |p| p.kind == PacketKind::Media && p.media_seq == lost);
            assert_eq!(rec.len(), 1);
            assert_eq!(rec[0].payload, w[lost as usize].payload, "packet {lost}");
            assert_eq!(rec[0].size.bytes(), sizes[lost as usize] as u64);
        }
        // A received packet without its bytes: the header comes back, the
        // payload cannot.
        let mut w2 = w.clone();
        w2[1].payload = None;
        let rec = deliver(&mut FecDecoder::new(), &w2, |p| p.kind == PacketKind::Media && p.media_seq == 0);
        assert_eq!((rec.len(), rec[0].payload.is_none()), (1, true));
        // A group with a packet of no bytes gets a parity of none.
        let mut enc = FecEncoder::new(cfg(10, true));
        let mut w3 = wire(&mut FecEncoder::new(cfg(10, true)));
        w3[0].payload = None;
        let parity = w3[..3].iter().filter_map(|p| enc.on_media(p)).last().unwrap();
        assert_eq!(parity.payload, None);
    }

    #[test]
    fn two_losses_in_a_group_are_not_recovered() {
        let wire = hundred(10);
        let mut dec = FecDecoder::new();
        let lost = [13, 21, 25];
        let rec = deliver(&mut dec, &wire, |p| p.kind == PacketKind::Media && lost.contains(&p.media_seq));
        assert_eq!(rec.iter().map(|p| p.media_seq).collect::<Vec<_>>(), [13]);
        assert_eq!(dec.stats(), FecStats { parities: 10, recovered: 1, unrecoverable: 1, useless: 8, unrepaired: 2 });
        assert_eq!(dec.pending(), 1);
    }

    #[test]
    fn parity_before_the_last_media_waits_for_it() {
        let wire = hundred(10);
        let mut dec = FecDecoder::new();
        for p in wire.iter().filter(|p| p.kind == PacketKind::Media && p.media_seq < 9 && p.media_seq != 3) {
            assert_eq!(dec.on_media(p), None);
        }
        // The parity overtakes media 9: 3 and 9 missing.
        assert_eq!(dec.on_parity(&find(&wire, PacketKind::Fec, 0)), None);
        assert_eq!(dec.stats(), FecStats { parities: 1, recovered: 0, unrecoverable: 1, useless: 0, unrepaired: 2 });
        let rec = dec.on_media(&find(&wire, PacketKind::Media, 9)).unwrap();
        assert_eq!((rec.media_seq, rec.frame, rec.flags & (FLAG_FIRST | FLAG_MARKER)), (3, 0, FLAG_MARKER));
        assert_eq!(dec.stats(), FecStats { parities: 1, recovered: 1, unrecoverable: 0, useless: 0, unrepaired: 0 });
        assert_eq!(dec.pending(), 0);
    }

    #[test]
    fn retransmission_makes_a_stored_parity_useful() {
        let wire = hundred(10);
        let mut dec = FecDecoder::new();
        let lost = [2, 6];
        let rec = deliver(&mut dec, &wire[..11], |p| p.kind == PacketKind::Media && lost.contains(&p.media_seq));
        assert!(rec.is_empty());
        let rtx = Packet { kind: PacketKind::Rtx, seq: 500, ..find(&wire, PacketKind::Media, 6) };
        let rec = dec.on_media(&rtx).unwrap();
        assert_eq!(rec, Packet { seq: 0, abs_send_time: wire[10].abs_send_time, ..find(&wire, PacketKind::Media, 2) });
        assert_eq!(dec.stats(), FecStats { parities: 1, recovered: 1, unrecoverable: 0, useless: 0, unrepaired: 0 });
    }

    #[test]
    fn per_frame_closes_partial_groups() {
        let mut enc = FecEncoder::new(cfg(10, true));
        let wire = send(&mut enc, 0, &[(7, false), (23, false), (10, false)]);
        let par: Vec<(u16, u16)> =
            wire.iter().filter(|p| p.kind == PacketKind::Fec).map(|p| (p.media_seq, p.group)).collect();
        assert_eq!(par, [(0, 7), (7, 10), (17, 10), (27, 3), (30, 10)]);
        // The 7-packet parity: the protected and frame flags XORed 7 times
        // stay set, and so do the start and marker bits (each set once).
        let p = find(&wire, PacketKind::Fec, 0);
        assert_eq!((p.frame, p.flags), (0, FLAG_PROTECTED | FLAG_FRAME | FLAG_FIRST | FLAG_MARKER));
        assert_eq!(p.size, DataSize::from_bytes(1214));
        // Sent right after the frame's last packet.
        assert_eq!(wire[7].kind, PacketKind::Fec);

        // A frame that ends early (3 of 5 packets sent) is closed by end_frame.
        let mut enc = FecEncoder::new(cfg(10, true));
        for i in 0..3 {
            assert_eq!(enc.on_media(&media(i, 0, i as u16, 5, 1000, 0)), None);
        }
        let p = enc.end_frame().unwrap();
        assert_eq!((p.media_seq, p.group, p.size.bytes()), (0, 3, 1014));
        assert_eq!(enc.end_frame(), None);

        // Without per_frame, groups span frames; only flush closes early.
        let mut enc = FecEncoder::new(cfg(10, false));
        let wire = send(&mut enc, 0, &[(7, false), (7, false)]);
        let par: Vec<(u16, u16)> =
            wire.iter().filter(|p| p.kind == PacketKind::Fec).map(|p| (p.media_seq, p.group)).collect();
        assert_eq!(par, [(0, 10)]);
        assert_eq!(enc.end_frame(), None);
        assert_eq!(enc.flush().map(|p| (p.media_seq, p.group)), Some((10, 4)));
    }

    #[test]
    fn set_group_applies_from_the_next_group() {
        let mut enc = FecEncoder::new(cfg(10, false));
        let mut par = Vec::new();
        for i in 0..30u32 {
            if i == 5 {
                enc.set_group(4);
                assert_eq!(enc.group(), 4);
            }
            par.extend(enc.on_media(&media(i, i / 8, (i % 8) as u16, 8, 1200, 0)).map(|p| (p.media_seq, p.group)));
        }
        assert_eq!(par, [(0, 10), (10, 4), (14, 4), (18, 4), (22, 4), (26, 4)]);
        enc.set_group(0);
        assert_eq!(enc.group(), 1);
        enc.set_group(1000);
        assert_eq!(enc.group(), MAX_GROUP);
    }

    #[test]
    fn overhead_is_about_ten_percent() {
        let mut enc = FecEncoder::new(FecConfig::default());
        let mut out = None;
        for i in 0..10u32 {
            out = enc.on_media(&media(i, 0, i as u16, 20, 1200, 0));
        }
        let p = out.unwrap();
        assert_eq!((p.kind, p.media_seq, p.group, p.size.bytes()), (PacketKind::Fec, 0, 10, 1214));
        // 1214 B of parity per 12 000 B of media: 10.1 %, PIBES's "10 %".
        let ratio = p.size.bytes() as f64 / 12_000.0;
        assert!((ratio - 0.1012).abs() < 1e-4, "{ratio}");
        // The decoder subtracts the same overhead.
        let p18 = Packet { size: DataSize::from_bytes(1218), ..p };
        let mut dec = FecDecoder::with_overhead(DataSize::from_bytes(18));
        for i in 1..10u32 {
            dec.on_media(&media(i, 0, i as u16, 20, 1200, 0));
        }
        assert_eq!(dec.on_parity(&p18).map(|r| r.size.bytes()), Some(1200));
    }

    #[test]
    fn lost_parity_changes_nothing() {
        let wire = hundred(10);
        let mut dec = FecDecoder::new();
        let rec = deliver(&mut dec, &wire, |p| p.media_seq == 13 || (p.kind == PacketKind::Fec && p.media_seq == 10));
        assert!(rec.is_empty());
        assert_eq!(dec.stats(), FecStats { parities: 9, recovered: 0, unrecoverable: 0, useless: 9, unrepaired: 0 });
    }

    #[test]
    fn duplicates_do_not_double_count() {
        let wire = hundred(10);
        let doubled: Vec<Packet> = wire.iter().flat_map(|p| [p.clone(), p.clone()]).collect();
        let mut dec = FecDecoder::new();
        let rec = deliver(&mut dec, &doubled, |p| p.kind == PacketKind::Media && p.media_seq == 13);
        assert_eq!(rec.len(), 1);
        // The original arriving late, or retransmitted, is a duplicate too.
        assert_eq!(dec.on_media(&find(&wire, PacketKind::Media, 13)), None);
        assert_eq!(dec.on_parity(&find(&wire, PacketKind::Fec, 10)), None);
        assert_eq!(dec.stats(), FecStats { parities: 10, recovered: 1, unrecoverable: 0, useless: 9, unrepaired: 0 });
    }

    /// Packets outside the protected stream cost the decoder no window; the
    /// first protected one allocates it.
    #[test]
    fn only_protected_media_is_kept() {
        let mut dec = FecDecoder::new();
        for ms in 0..100 {
            assert!(dec.on_media(&Packet { flags: 0, ..media(ms, ms / 4, 0, 4, 1200, 0) }).is_none());
        }
        assert!(dec.ring.is_empty());
        assert!(dec.slot(99).is_none());
        dec.on_media(&media(100, 25, 0, 4, 1200, 0));
        assert_eq!(dec.ring.len(), WINDOW);
        assert!(dec.slot(100).is_some_and(|s| s.media));
    }

    #[test]
    fn media_seq_wraps() {
        let mut enc = FecEncoder::new(cfg(10, false));
        let start = u32::from(u16::MAX) - 4;
        let wire = send(&mut enc, start, &[(4, false); 10]);
        let mut dec = FecDecoder::new();
        let rec = deliver(&mut dec, &wire, |p| p.kind == PacketKind::Media && p.media_seq == 1);
        assert_eq!(rec.len(), 1);
        assert_eq!((rec[0].media_seq, rec[0].frame, rec[0].flags & (FLAG_FIRST | FLAG_MARKER)), (1, 1, 0));
        assert_eq!(dec.stats(), FecStats { parities: 4, recovered: 1, unrecoverable: 0, useless: 3, unrepaired: 0 });
    }

    #[test]
    fn pending_parities_are_bounded() {
        // 100 groups of 10, each missing its packets 2 and 7.
        let frames = [(10u16, false); 100];
        let wire = send(&mut FecEncoder::new(cfg(10, true)), 0, &frames);
        let mut dec = FecDecoder::new();
        deliver(&mut dec, &wire, |p| p.kind == PacketKind::Media && matches!(p.media_seq % 10, 2 | 7));
        assert_eq!(dec.pending(), MAX_PENDING);
        assert_eq!(
            dec.stats(),
            FecStats { parities: 100, recovered: 0, unrecoverable: 100, useless: 0, unrepaired: 200 }
        );
        // Group 0's parity was evicted; group 99's is still there.
        let rtx = |ms| Packet { kind: PacketKind::Rtx, ..find(&wire, PacketKind::Media, ms) };
        assert_eq!(dec.on_media(&rtx(7)), None);
        assert_eq!(dec.on_media(&rtx(997)).map(|p| p.media_seq), Some(992));
        assert_eq!(
            dec.stats(),
            FecStats { parities: 100, recovered: 1, unrecoverable: 99, useless: 0, unrepaired: 198 }
        );
    }

    #[test]
    fn config_from_params() {
        assert_eq!(FecConfig::from_params(&Params::new()).unwrap(), FecConfig::default());
        let p = Params::new()
            .with("group", ParamValue::Num(14.0))
            .with("overhead", ParamValue::Str("18B".into()))
            .with("per_frame", ParamValue::Bool(false));
        assert_eq!(
            FecConfig::from_params(&p).unwrap(),
            FecConfig { group: 14, overhead: DataSize::from_bytes(18), per_frame: false }
        );
        for bad in [
            Params::new().with("group", ParamValue::Num(0.0)),
            Params::new().with("group", ParamValue::Num(49.0)),
            Params::new().with("group", ParamValue::Num(2.5)),
            Params::new().with("overhead", ParamValue::Str("2kB".into())),
            Params::new().with("interval", ParamValue::Num(10.0)),
        ] {
            assert!(FecConfig::from_params(&bad).is_err(), "{bad:?}");
        }
    }

    /// Random frames, N changed every frame in FBRA's range 2..=14, bursty
    /// loss on media and parities alike; `reorder` also swaps adjacent media
    /// packets (never across a parity, so each parity still follows its group).
    /// Checks the recovered set against what the loss pattern allows.
    fn random_run(seed: u64, reorder: bool) -> (u32, usize, FecStats) {
        let mut rng = Rng::new(seed);
        let mut enc = FecEncoder::new(cfg(10, true));
        let mut wire = Vec::new();
        let mut ms = 0u32;
        let mut frame = 0u32;
        while ms < 10_000 {
            enc.set_group(2 + (rng.next_u64() % 13) as u16);
            let count = 1 + (rng.next_u64() % 20) as u16;
            let flags = if frame.is_multiple_of(30) { FLAG_KEY } else { 0 };
            for i in 0..count {
                let size = 600 + rng.next_u64() % 601;
                let p = Packet { seq: wire.len() as u16, ..media(ms, frame, i, count, size, flags) };
                ms += 1;
                let parity = enc.on_media(&p);
                wire.push(p);
                if let Some(f) = parity {
                    wire.push(Packet { seq: wire.len() as u16, ..f });
                }
            }
            frame += 1;
        }
        // Gilbert-style loss: 3 % to enter a burst, 40 % to continue it.
        let mut lost = vec![false; wire.len()];
        let mut bad = false;
        for l in lost.iter_mut() {
            bad = rng.chance(if bad { 0.4 } else { 0.03 });
            *l = bad;
        }
        let mut order: Vec<usize> = (0..wire.len()).collect();
        if reorder {
            for i in 0..order.len() - 1 {
                let both_media =
                    wire[order[i]].kind == PacketKind::Media && wire[order[i + 1]].kind == PacketKind::Media;
                if both_media && rng.chance(0.2) {
                    order.swap(i, i + 1);
                }
            }
        }
        let mut dec = FecDecoder::new();
        let mut recovered = Vec::new();
        for &i in &order {
            if lost[i] {
                continue;
            }
            let p = &wire[i];
            let r = if p.kind == PacketKind::Fec { dec.on_parity(p) } else { dec.on_media(p) };
            recovered.extend(r);
        }
        // Expected: every received parity with exactly one lost media packet.
        let by_ms: Vec<usize> = (0..wire.len()).filter(|&i| wire[i].kind == PacketKind::Media).collect();
        let (mut expect, mut multi, mut useless, mut unrepaired) = (Vec::new(), 0u64, 0u64, 0u64);
        for (i, par) in wire.iter().enumerate().filter(|(_, p)| p.kind == PacketKind::Fec) {
            if lost[i] {
                continue;
            }
            let idx = &by_ms[par.media_seq as usize..(par.media_seq + par.group) as usize];
            let gone: Vec<usize> = idx.iter().copied().filter(|&j| lost[j]).collect();
            match gone.len() {
                0 => useless += 1,
                1 => expect.push(wire[gone[0]].media_seq),
                n => {
                    multi += 1;
                    unrepaired += n as u64;
                }
            }
        }
        let mut got: Vec<u16> = recovered.iter().map(|p| p.media_seq).collect();
        got.sort_unstable();
        assert_eq!(got, expect);
        for r in &recovered {
            let o = &wire[by_ms[r.media_seq as usize]];
            assert_eq!((r.frame, r.flags, r.timestamp), (o.frame, o.flags, o.timestamp));
            assert!(r.size >= o.size && r.size <= DataSize::from_bytes(1200));
        }
        let st = dec.stats();
        check_sum(st);
        assert_eq!((st.recovered, st.unrecoverable, st.useless), (expect.len() as u64, multi, useless));
        assert_eq!(st.unrepaired, unrepaired);
        let parities = wire.iter().filter(|p| p.kind == PacketKind::Fec).count();
        (ms, parities, st)
    }

    #[test]
    fn random_loss_recovers_exactly_the_single_loss_groups() {
        // The set checks are inside random_run; these numbers pin the seeded
        // runs so a behaviour change shows up as a diff.
        let (media, parities, st) = random_run(42, false);
        assert_eq!((media, parities), (10_016, 2_108));
        assert_eq!(
            st,
            FecStats { parities: 2_009, recovered: 179, unrecoverable: 101, useless: 1_729, unrepaired: 250 }
        );
        let (media, parities, st) = random_run(7, true);
        assert_eq!((media, parities), (10_014, 2_234));
        assert_eq!(
            st,
            FecStats { parities: 2_132, recovered: 195, unrecoverable: 94, useless: 1_843, unrepaired: 218 }
        );
    }
}
