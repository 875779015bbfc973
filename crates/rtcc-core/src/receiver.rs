//! The receiving side of one call: reassembles frames (with FEC recovery),
//! decodes them in reference order — a delta frame needs the frame before it,
//! a key frame needs nothing — and shows each at the render time WebRTC's
//! jitter buffer and timing give it (`playout`, see [`crate::playout`]) or as
//! soon as it is decoded;
//! detects freezes; asks for retransmissions (NACK) and key frames (PLI); and
//! sends a feedback report every `interval` with per-packet arrival times and
//! its own send time, early when a NACK or PLI is due.

use std::collections::VecDeque;

use crate::estimator::ReceiverEstimator;
use crate::fec::{FecConfig, FecDecoder, FecStats};
use crate::feedback::{ReceiverReport, ReportFormat, ReportStats, RrValues};
use crate::packet::{
    abs_send_time_at, rtp_time, unwrap16, unwrap32, Packet, PacketKind, Payload, FLAG_FIRST, FLAG_FRAME, FLAG_KEY,
    FLAG_MARKER, RTX_OSN,
};
use crate::playout::{Playout, Timing};
use crate::rtp_payload::depacketize;
use crate::units::{DataSize, Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverConfig {
    pub flow: u16,
    /// Feedback report interval (WebRTC sends transport-wide-cc feedback
    /// every 50–250 ms; 50 ms is its value at video rates).
    pub interval: Duration,
    /// A gap between displayed frames longer than this is a freeze
    /// (BurstRTC §5 and DESIGN §4: 100 ms).
    pub freeze_gap: Duration,
    /// Ask for retransmission of missing media packets.
    pub nack: bool,
    /// Wait this long after a gap is seen before NACKing it, in case the
    /// packet was only reordered.
    pub reorder_allowance: Duration,
    /// Re-send a NACK after this long (libwebrtc NackRequester resends after
    /// one RTT; its default RTT is 100 ms).
    pub nack_retry: Duration,
    /// libwebrtc NackRequester kMaxNackRetries = 10.
    pub nack_max_retries: u8,
    /// Request a key frame when a complete frame has waited this long for a
    /// missing reference (libwebrtc VideoReceiveStream2 max_wait_for_keyframe,
    /// 200 ms), and again every such interval while stuck.
    pub keyframe_wait: Duration,
    /// Discard packets that arrive more than this after they were sent (FBRA
    /// §5: a 400 ms cut-off; RFC 7097 reports them as discarded): they count
    /// as late discards and never reach the decoder or the FEC decoder.
    /// `None` (WebRTC): no cut-off.
    pub max_delay: Option<Duration>,
    /// Send a report at once when a packet is discarded past `max_delay`,
    /// at most one such early report every two intervals (FBRA §4.1 after
    /// RFC 4585 §3.5: "an endpoint can only send an early feedback once
    /// every other reporting interval").
    pub early_reports: bool,
    /// Wire layout of the reports (their size on the reverse path).
    pub report_format: ReportFormat,
    /// Per-parity overhead of the sender's FEC (`FecConfig::overhead`), to
    /// size recovered packets; both ends agree on it as SDP would negotiate.
    pub fec_overhead: DataSize,
    /// When decoded frames are shown (WebRTC's timing by default).
    pub playout: Playout,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            flow: 0,
            interval: Duration::from_millis(50),
            freeze_gap: Duration::from_millis(100),
            nack: false,
            reorder_allowance: Duration::from_millis(5),
            nack_retry: Duration::from_millis(100),
            nack_max_retries: 10,
            keyframe_wait: Duration::from_millis(200),
            max_delay: None,
            early_reports: false,
            report_format: ReportFormat::Twcc,
            fec_overhead: FecConfig::default().overhead,
            playout: Playout::default(),
        }
    }
}

/// libwebrtc NackRequester kMaxNackPackets: a longer list is given up and a
/// key frame requested instead.
const MAX_NACK_PACKETS: usize = 1000;
/// Largest forward jump of frame ids accepted (a minute of frames at 60 fps),
/// plus `MAX_FRAME_RATE` ids per second since the newest frame first came:
/// after an outage the ids have moved on with the clock.
const MAX_FRAME_JUMP: usize = 3600;
const MAX_FRAME_RATE: f64 = 240.0;
/// Media sequence numbers remembered for duplicate detection.
const SEEN_BITS: u32 = 1 << 14;
/// Collected frames remembered as shown or not: 4096 frames, over two
/// minutes at 30 fps, far beyond any packet's lateness.
const COLLECTED_BITS: u32 = 1 << 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum FrameStatus {
    Displayed = 0,
    /// Never decoded: incomplete, or its reference never arrived.
    #[default]
    Lost = 1,
    /// Completed after a newer frame was decoded.
    Late = 2,
}

/// With `sim-layout`, the fields every packet of the frame updates come
/// first, within one cache line (`repr(C)`, line-aligned): a packet's
/// arrival then touches one line of its frame's record.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub struct RecvFrame {
    pub complete: Option<Time>,
    /// Its RTP timestamp (capture time), from its packets.
    pub capture: Option<Time>,
    /// Bytes of its packets.
    pub bytes: u64,
    /// Media sequence of the frame's first packet (the one with the
    /// descriptor's start-of-frame bit) and of its last (the RTP marker
    /// bit), once they came.
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    pub received: u16,
    /// Its packets, once its first and last came: what RTP tells of a
    /// frame's length.
    pub count: u16,
    pub key: bool,
    /// One of its packets came as a retransmission.
    pub retransmitted: bool,
    pub status: FrameStatus,
    /// One of its packets was rebuilt from FEC parity.
    pub fec: bool,
    /// The frame's bytes (real codecs): its packets' RTP payloads (received,
    /// retransmitted or rebuilt by FEC) put through the payload format's
    /// depacketizer when the last one arrives; `None` if any came without
    /// bytes or they did not make a frame.
    pub payload: Option<Payload>,
    /// Payloads by media sequence while the frame is incomplete (`None`: a
    /// packet that came without bytes after one that had them).
    pub parts: Vec<(u32, Option<Payload>)>,
    pub display: Option<Time>,
    /// The jitter buffer's playout delay its render time was given (WebRTC
    /// timing's current delay; `None` with `Playout::Immediate`).
    pub jitter_buffer: Option<Duration>,
}

/// Freeze statistics, by the simple gap rule and by WebRTC's rule
/// (video_quality_observer: a gap ≥ max(3·mean, mean + 150 ms) over the
/// recent inter-frame gaps).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FreezeStats {
    pub count: u32,
    pub total: Duration,
    pub webrtc_count: u32,
    pub webrtc_total: Duration,
}

/// Counters of the receiver's repair machinery.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RepairStats {
    pub nacks_sent: u64,
    pub plis_sent: u64,
    pub fec: FecStats,
    /// FEC recoveries whose frame was already decoded past or collected.
    pub fec_recovered_late: u64,
    pub duplicates: u64,
    /// Packets received and discarded as too late: past `max_delay`, or
    /// behind the decoder (RFC 7097 discards).
    pub discarded: u64,
    /// Packets received (duplicates included).
    pub received: u64,
    /// Real frames whose packets all arrived but whose bytes made no frame
    /// (a packet rebuilt without bytes, a depacketizer error): never
    /// decodable, as a frame missing a packet.
    pub unassembled: u64,
}

#[derive(Clone, Copy, Debug)]
struct Missing {
    seq: u32,
    since: Time,
    last_nack: Option<Time>,
    retries: u8,
}

/// With `sim-layout`, fields in declaration order (`repr(C)`): those every
/// packet touches fill the first six cache lines, so that with many flows
/// a packet costs few of them; per-frame, per-report and repair state follows.
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub struct Receiver {
    next_report: Option<Time>,
    /// Next transport sequence expected; gaps below it are reported lost.
    next_seq: u64,
    /// The first transport sequence received (RFC 3550 A.3 base_seq).
    seq_base: Option<u64>,
    /// Sum of one-way delays (µs) since the last report, for the mean.
    owd_sum_us: i64,
    jitter_us: f64,
    last_transit: Option<i64>,
    /// `RepairStats::received`, kept here as every packet counts it.
    received: u64,
    arrivals: Vec<(u64, Option<Time>)>,
    /// Next report's transport-wide feedback packet count (wraps at 256).
    fb_count: u8,
    /// The newest sender report: its NTP middle 32 bits and arrival.
    last_sr: Option<(u32, Time)>,
    /// RTCP datagrams that held no SR of this flow (refused, not read).
    rtcp_ignored: u64,
    /// When the next RR goes out beside the transport feedback (not under
    /// `RtcpXr`, whose every report is one).
    next_rr: Option<Time>,
    stats: ReportStats,
    estimator: Option<Box<dyn ReceiverEstimator>>,
    /// `cfg.max_delay`, copied here: every packet reads it.
    max_delay: Option<Duration>,
    /// `poll_timeout`, recomputed after every input.
    timeout: Option<Time>,
    /// Received media sequence numbers (a bitmap ring) up to `high`. The
    /// word holding `high` lives in `seen_high`, its slot in `seen` stale:
    /// in-order packets touch only that word, and with many flows the ring
    /// is out of cache.
    seen: Box<[u64]>,
    seen_high: u64,
    high: Option<u32>,
    /// Newest RTP timestamp so far, unwrapped.
    ts_high: Option<i64>,
    frame_base: u32,
    /// When the newest frame id so far first came.
    newest_at: Time,
    pli_pending: bool,
    /// `cfg.nack`, likewise.
    nack: bool,
    last_decoded: Option<u32>,
    /// Frames not yet collected; `frames[i]` is frame `frame_base + i`.
    frames: VecDeque<RecvFrame>,
    missing: VecDeque<Missing>,
    /// An early report is due at this time; the last one went at `last_early`.
    early_due: Option<Time>,
    stuck_since: Option<Time>,
    /// Its first field is the one every media packet reads.
    fec: FecDecoder,
    newest_complete: Option<u32>,
    last_pli: Option<Time>,
    last_key_packet: Option<Time>,
    repair: RepairStats,
    cfg: ReceiverConfig,
    last_early: Option<Time>,
    /// Whether each of the last `COLLECTED_BITS` collected frames was
    /// displayed (bit `id % COLLECTED_BITS`), so a late packet of a collected
    /// frame is judged the same whenever the frame was collected.
    collected_shown: Vec<u64>,
    /// Late discards since the last report, by transport sequence.
    late: Vec<u64>,
    /// Expected and received at the previous report (RFC 3550 A.3).
    rr_prior: (u64, u64),
    first_display_time: Option<Time>,
    last_display_time: Option<Time>,
    freeze: FreezeStats,
    /// Recent inter-frame gaps (µs) for WebRTC's freeze rule.
    gaps: [i64; 30],
    gap_n: usize,
    gap_sum: i64,
    /// WebRTC's jitter estimate and render timing, with `Playout::Webrtc`.
    timing: Option<Timing>,
    /// A decodable frame waits for the decoder until then (`Timing::busy_until`).
    decode_wake: Option<Time>,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            cfg,
            next_report: None,
            arrivals: Vec::with_capacity(256),
            fb_count: 0,
            last_sr: None,
            rtcp_ignored: 0,
            next_rr: None,
            next_seq: 0,
            seq_base: None,
            stats: ReportStats::default(),
            seen: vec![0; (SEEN_BITS / 64) as usize].into_boxed_slice(),
            seen_high: 0,
            high: None,
            ts_high: None,
            missing: VecDeque::with_capacity(64),
            pli_pending: false,
            last_pli: None,
            early_due: None,
            last_early: None,
            last_key_packet: None,
            frames: VecDeque::with_capacity(64),
            frame_base: 0,
            newest_at: Time::ZERO,
            collected_shown: vec![0; (COLLECTED_BITS / 64) as usize],
            last_decoded: None,
            newest_complete: None,
            stuck_since: None,
            first_display_time: None,
            last_display_time: None,
            freeze: FreezeStats::default(),
            gaps: [0; 30],
            gap_n: 0,
            gap_sum: 0,
            jitter_us: 0.0,
            last_transit: None,
            fec: FecDecoder::with_overhead(cfg.fec_overhead),
            repair: RepairStats::default(),
            received: 0,
            max_delay: cfg.max_delay,
            nack: cfg.nack,
            late: Vec::new(),
            rr_prior: (0, 0),
            owd_sum_us: 0,
            estimator: None,
            timeout: None,
            timing: match cfg.playout {
                Playout::Webrtc(p) => Some(Timing::new(p)),
                Playout::Immediate => None,
            },
            decode_wake: None,
        }
    }

    /// Run a receiver-side estimator (REMB, NADA) whose estimate rides in
    /// every report.
    pub fn with_estimator(mut self, estimator: Box<dyn ReceiverEstimator>) -> Self {
        self.estimator = Some(estimator);
        self
    }

    pub fn estimator(&self) -> Option<&dyn ReceiverEstimator> {
        self.estimator.as_deref()
    }

    pub fn freeze(&self) -> FreezeStats {
        self.freeze
    }
    /// Times of the first and the last displayed frame.
    pub fn display_span(&self) -> Option<(Time, Time)> {
        Some((self.first_display_time?, self.last_display_time?))
    }
    pub fn freeze_gap(&self) -> Duration {
        self.cfg.freeze_gap
    }
    pub fn repair(&self) -> RepairStats {
        RepairStats { fec: self.fec.stats(), received: self.received, ..self.repair }
    }

    /// State of a frame not yet collected (default = nothing received).
    pub fn frame(&self, id: u32) -> RecvFrame {
        self.frame_ref(id).cloned().unwrap_or_default()
    }

    /// The oldest uncollected frame (id `frame_base`) and the capture time
    /// it is known by: its own RTP timestamp, or, when none of its packets
    /// came, the first later frame's (a bound from above).
    pub fn oldest_frame(&self) -> Option<(u32, &RecvFrame, Option<Time>)> {
        let f = self.frames.front()?;
        let capture = f.capture.or_else(|| self.frames.iter().find_map(|g| g.capture));
        Some((self.frame_base, f, capture))
    }

    fn frame_ref(&self, id: u32) -> Option<&RecvFrame> {
        self.frames.get(id.checked_sub(self.frame_base)? as usize)
    }
    /// Display time of the first frame after `id` that was displayed.
    pub fn next_display_after(&self, id: u32) -> Option<Time> {
        let from = (id + 1).saturating_sub(self.frame_base) as usize;
        self.frames.iter().skip(from).find_map(|f| f.display)
    }
    /// Collect the record of frame `frame_base` (the oldest); later packets of
    /// it are ignored. Keeps memory flat over long calls.
    pub fn pop_frame(&mut self) -> RecvFrame {
        let f = self.frames.pop_front().unwrap_or_default();
        let b = self.frame_base % COLLECTED_BITS;
        let (w, bit) = ((b / 64) as usize, 1u64 << (b % 64));
        if f.display.is_some() {
            self.collected_shown[w] |= bit;
        } else {
            self.collected_shown[w] &= !bit;
        }
        self.frame_base += 1;
        f
    }

    /// Whether collected frame `id` was displayed (as far back as
    /// `COLLECTED_BITS` frames; older ones count as not shown).
    fn collected_was_shown(&self, id: u32) -> bool {
        let b = id % COLLECTED_BITS;
        self.frame_base - id <= COLLECTED_BITS && self.collected_shown[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    fn nack_due(&self) -> Option<Time> {
        // Checked first so the common case leaves `cfg`'s cache lines alone.
        if self.missing.is_empty() {
            return None;
        }
        let (allow, retry) = (self.cfg.reorder_allowance, self.cfg.nack_retry);
        self.missing.iter().map(|m| m.last_nack.map_or(m.since + allow, |t| t + retry)).min()
    }

    fn pli_due(&self) -> Option<Time> {
        if self.pli_pending {
            return Some(Time::ZERO);
        }
        let stuck = self.stuck_since? + self.cfg.keyframe_wait;
        Some(self.last_pli.map_or(stuck, |t| stuck.max(t + self.cfg.keyframe_wait)))
    }

    /// Start loading what a packet's arrival touches: the struct's lines up
    /// to the FEC decoder's head, the end of the arrival list and the newest
    /// frame, with the places after them (`crate::cache`).
    #[inline]
    #[cfg(feature = "sim-layout")]
    pub fn prefetch(&self) {
        let fec = std::mem::offset_of!(Receiver, fec);
        crate::cache::prefetch(self as *const Receiver as *const u8, fec + 64);
        // The next arrival and a next frame are written after them.
        if let Some(a) = self.arrivals.last() {
            crate::cache::prefetch_with_next(a, 1);
        }
        if let Some(f) = self.frames.back() {
            crate::cache::prefetch_with_next(f, 1);
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.timeout
    }

    fn refresh_timeout(&mut self) {
        self.timeout = [self.next_report, self.nack_due(), self.pli_due(), self.early_due, self.decode_wake]
            .into_iter()
            .flatten()
            .min();
    }

    /// RTCP datagrams from the sending end that held no SR of this flow.
    pub fn rtcp_ignored(&self) -> u64 {
        self.rtcp_ignored
    }

    /// An RTCP datagram from the sending end (`PacketKind::Feedback`): its
    /// SR is kept for the next RR's LSR and DLSR (RFC 3550 §6.4.1); bytes
    /// that hold none are counted and dropped.
    fn handle_rtcp(&mut self, now: Time, pkt: &Packet) {
        match pkt.payload.as_ref().and_then(|b| crate::sr::read_sender_report(self.cfg.flow, b.bytes())) {
            Some(middle) => self.last_sr = Some((middle, now)),
            None => self.rtcp_ignored += 1,
        }
    }

    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.kind == PacketKind::Feedback {
            self.handle_rtcp(now, pkt);
            return;
        }
        if self.next_report.is_none() {
            self.next_report = Some(now + self.cfg.interval);
        }
        // The wire's 16-bit sequence, unwrapped against the newest one; the
        // first one received starts the count (the sender's start is random,
        // RFC 3550 §5.1, and what came before it is unknown).
        let seq = match self.seq_base {
            Some(_) => unwrap16(pkt.seq, self.next_seq.saturating_sub(1)),
            None => {
                let s = u64::from(pkt.seq);
                (self.seq_base, self.next_seq) = (Some(s), s);
                Some(s)
            }
        };
        // A packet from before the first one received (reordered, or just
        // before a wrap) is left out of the feedback: nothing was reported
        // of the sequences before the first.
        let reported = seq.filter(|&s| self.seq_base.is_some_and(|b| s >= b));
        if let Some(seq) = reported {
            // Gaps are reported as not received; transport-wide-cc does the same.
            while self.next_seq < seq {
                self.arrivals.push((self.next_seq, None));
                self.stats.lost += 1;
                self.next_seq += 1;
            }
            if seq >= self.next_seq {
                self.next_seq = seq + 1;
            }
            self.arrivals.push((seq, Some(now)));
        }
        self.stats.received += 1;
        // RFC 3550 §6.4.1 interarrival jitter, J += (|D| - J) / 16, over
        // the abs-send-time (the send time, not the capture time, so a
        // frame's burst is not read as jitter).
        let transit = (now - abs_send_time_at(pkt.abs_send_time, now)).as_micros();
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).abs() as f64;
            self.jitter_us += (d - self.jitter_us) / 16.0;
        }
        self.last_transit = Some(transit);
        let owd = Duration::from_micros(transit);
        let st = &mut self.stats;
        st.owd_min = Some(st.owd_min.map_or(owd, |m| m.min(owd)));
        st.owd_max = Some(st.owd_max.map_or(owd, |m| m.max(owd)));
        st.owd_newest = Some(owd);
        self.owd_sum_us += transit;
        if let Some(e) = &mut self.estimator {
            e.on_packet(now, pkt);
        }
        self.received += 1;
        let too_old = self.max_delay.is_some_and(|m| owd > m);
        if too_old || (pkt.is_frame_data() && self.behind_decoder(self.frame_id(pkt))) {
            self.repair.discarded += 1;
            self.stats.late_discards += 1;
            self.late.extend(reported);
            if too_old {
                let interval = self.cfg.interval;
                if self.cfg.early_reports && self.last_early.is_none_or(|t| now.saturating_since(t) >= interval * 2) {
                    self.early_due.get_or_insert(now);
                }
                self.refresh_timeout();
                return;
            }
        }
        match pkt.kind {
            PacketKind::Media | PacketKind::Rtx => {
                // Duplicates are not shown to the FEC decoder again.
                let fresh = self.on_media(now, pkt);
                if let Some(r) = fresh.then(|| self.fec.on_media(pkt)).flatten() {
                    self.on_recovered(now, &r);
                }
            }
            PacketKind::Fec => {
                if let Some(r) = self.fec.on_parity(pkt) {
                    self.on_recovered(now, &r);
                }
            }
            _ => {}
        }
        self.refresh_timeout();
    }

    /// Frame `id` can no longer be shown: decoded past (or collected)
    /// without being shown. A packet of a frame that was shown is a
    /// duplicate, not late, whether or not its record was collected yet.
    fn behind_decoder(&self, id: u32) -> bool {
        if id < self.frame_base {
            return !self.collected_was_shown(id);
        }
        self.last_decoded.is_some_and(|d| id <= d) && self.frame_ref(id).is_none_or(|f| f.display.is_none())
    }

    fn on_recovered(&mut self, now: Time, r: &Packet) {
        self.stats.fec_recovered += 1;
        let frame = self.frame_id(r);
        let late = frame < self.frame_base || self.last_decoded.is_some_and(|d| frame <= d);
        if late {
            self.repair.fec_recovered_late += 1;
        }
        self.on_media(now, r);
        if let Some(f) = frame.checked_sub(self.frame_base).and_then(|i| self.frames.get_mut(i as usize)) {
            f.fec = true;
        }
    }

    /// A packet's frame number, unwrapped against the newest frame so far.
    fn frame_id(&self, pkt: &Packet) -> u32 {
        let newest = (u64::from(self.frame_base) + self.frames.len() as u64).saturating_sub(1);
        // Frame numbers start at 0: none falls before it.
        unwrap16(pkt.frame, newest).unwrap_or(u64::from(pkt.frame)) as u32
    }

    /// A packet's RTP timestamp as sender clock time, unwrapped against the
    /// newest timestamp so far.
    fn capture_of(&mut self, pkt: &Packet) -> Time {
        let t = unwrap32(pkt.timestamp, self.ts_high.unwrap_or(i64::from(pkt.timestamp)));
        self.ts_high = Some(self.ts_high.map_or(t, |h| h.max(t)));
        rtp_time(t)
    }

    /// A packet's media sequence, unwrapped against the highest so far. The
    /// first one received is counted from 2^16, so that one from before it
    /// (rebuilt from parity, retransmitted, reordered) is not read as 2^16
    /// ahead; only the low 16 bits ever reach the wire.
    fn media_id(&self, pkt: &Packet) -> u32 {
        let v = u64::from(pkt.media_seq);
        unwrap16(pkt.media_seq, self.high.map_or(v + (1 << 16), u64::from)).unwrap_or(v) as u32
    }

    fn seen_bit(&self, m: u32) -> (usize, u64) {
        let b = m % SEEN_BITS;
        ((b / 64) as usize, 1u64 << (b % 64))
    }

    /// Word `w` of the ring, wherever it lives.
    fn seen_word(&mut self, w: usize) -> &mut u64 {
        match self.high {
            Some(h) if self.seen_bit(h).0 == w => &mut self.seen_high,
            _ => &mut self.seen[w],
        }
    }

    /// Record media packet `m`; false if it was a duplicate.
    fn mark_seen(&mut self, now: Time, m: u32) -> bool {
        match self.high {
            Some(h) if m <= h => {
                if h - m >= SEEN_BITS {
                    return false;
                }
                let (w, bit) = self.seen_bit(m);
                let word = self.seen_word(w);
                if *word & bit != 0 {
                    return false;
                }
                *word |= bit;
                // `missing` is in sequence order: gaps are appended as the
                // highest sequence advances, and removals keep the order.
                if let Ok(i) = self.missing.binary_search_by_key(&m, |x| x.seq) {
                    self.missing.remove(i);
                }
                true
            }
            _ => {
                let from = self.high.map_or(m, |h| h + 1);
                // Clear the ring bits the window moves over, and list the gap;
                // a gap longer than the ring only needs its last SEEN_BITS.
                for g in from.max(m.saturating_sub(SEEN_BITS))..m {
                    let (w, bit) = self.seen_bit(g);
                    *self.seen_word(w) &= !bit;
                    if self.nack && m - g <= MAX_NACK_PACKETS as u32 {
                        self.missing.push_back(Missing { seq: g, since: now, last_nack: None, retries: 0 });
                    }
                }
                if self.missing.len() > MAX_NACK_PACKETS || (self.nack && m - from > MAX_NACK_PACKETS as u32) {
                    self.missing.clear();
                    self.pli_pending = true;
                }
                let (w, bit) = self.seen_bit(m);
                *self.seen_word(w) |= bit;
                // The word holding the new `high` moves into `seen_high`.
                let old = self.high.map(|h| self.seen_bit(h).0);
                if old != Some(w) {
                    if let Some(o) = old {
                        self.seen[o] = self.seen_high;
                    }
                    self.seen_high = self.seen[w];
                }
                self.high = Some(m);
                true
            }
        }
    }

    /// A media packet (received, retransmitted or recovered). Returns false
    /// for a duplicate.
    fn on_media(&mut self, now: Time, pkt: &Packet) -> bool {
        let m = self.media_id(pkt);
        let capture = self.capture_of(pkt);
        if !self.mark_seen(now, m) {
            self.repair.duplicates += 1;
            return false;
        }
        if pkt.flags & FLAG_KEY != 0 {
            self.last_key_packet = Some(now);
        }
        if pkt.flags & FLAG_FRAME == 0 {
            return true;
        }
        let id = self.frame_id(pkt);
        let Some(f) = id.checked_sub(self.frame_base) else { return true };
        let f = f as usize;
        // A frame id far beyond any frame in flight (and beyond what the
        // time since the newest one explains) is corrupt, not new.
        let slack = ((now - self.newest_at).as_secs_f64().max(0.0) * MAX_FRAME_RATE) as usize;
        if f > self.frames.len() + MAX_FRAME_JUMP + slack {
            return true;
        }
        if self.frames.len() <= f {
            self.frames.resize(f + 1, RecvFrame::default());
            self.newest_at = now;
        }
        let fr = &mut self.frames[f];
        fr.key = pkt.flags & FLAG_KEY != 0;
        // The frame's extent, as a jitter buffer learns it from RTP alone
        // (libwebrtc's PacketBuffer): its first packet by the descriptor's
        // start bit, its last by the marker bit.
        if pkt.flags & FLAG_FIRST != 0 {
            fr.first_seq = Some(m);
        }
        if pkt.flags & FLAG_MARKER != 0 {
            fr.last_seq = Some(m);
        }
        if let (Some(a), Some(b)) = (fr.first_seq, fr.last_seq) {
            fr.count = u16::try_from(b.wrapping_sub(a).wrapping_add(1)).unwrap_or(u16::MAX);
        }
        if fr.complete.is_some() {
            return true;
        }
        // Model frames carry no bytes; once one packet did, every one counts.
        if pkt.payload.is_some() || !fr.parts.is_empty() {
            fr.parts.push((m, pkt.payload.clone()));
        }
        fr.capture = Some(capture);
        // A retransmission restored (RFC 4588 §4): the original's bytes.
        let rtx = pkt.kind == PacketKind::Rtx;
        fr.bytes += if rtx { pkt.size.saturating_sub(RTX_OSN) } else { pkt.size }.bytes();
        fr.retransmitted |= rtx;
        fr.received += 1;
        if fr.count == 0 || fr.received < fr.count {
            return true;
        }
        if !fr.parts.is_empty() {
            let mut parts = std::mem::take(&mut fr.parts);
            parts.sort_unstable_by_key(|&(m, _)| m);
            let whole = parts.len() == usize::from(fr.count);
            let bytes = parts.into_iter().map(|(_, p)| p).collect::<Option<Vec<Payload>>>();
            fr.payload = bytes.filter(|_| whole).and_then(|b| depacketize(&b));
            if fr.payload.is_none() {
                // Every packet is in but their bytes make no frame (one
                // rebuilt without bytes, or a depacketizer error): a real
                // receiver's frame buffer never gets it, as if a packet
                // were missing.
                self.repair.unassembled += 1;
                return true;
            }
        }
        fr.complete = Some(now);
        if let Some(t) = self.timing.as_mut() {
            t.on_complete(capture, now, fr.retransmitted);
        }
        if self.last_decoded.is_some_and(|d| id <= d) {
            fr.status = FrameStatus::Late;
            return true;
        }
        self.newest_complete = Some(self.newest_complete.map_or(id, |n| n.max(id)));
        self.try_decode(now);
        true
    }

    fn decodable(&self, id: u32) -> Option<&RecvFrame> {
        let f = self.frame_ref(id)?;
        (f.complete.is_some() && f.display.is_none()).then_some(f)
    }

    fn try_decode(&mut self, now: Time) {
        self.decode_wake = None;
        loop {
            // The decoder takes one frame at a time (see `playout`).
            if let Some(t) = self.timing.as_ref().and_then(Timing::busy_until).filter(|&t| t > now) {
                self.decode_wake = Some(t);
                break;
            }
            let next = self.last_decoded.map(|d| d + 1);
            // The frame after the last decoded one continues the chain.
            if let Some(n) = next.filter(|&n| self.decodable(n).is_some()) {
                self.decode(now, n);
                continue;
            }
            // A complete key frame further on restarts it.
            let from = next.unwrap_or(self.frame_base).max(self.frame_base);
            let key =
                (from..self.frame_base + self.frames.len() as u32).find(|&i| self.decodable(i).is_some_and(|f| f.key));
            match key {
                Some(k) => self.decode(now, k),
                None => break,
            }
        }
        // Waiting for the decoder is not waiting for a missing frame.
        let waiting =
            self.decode_wake.is_none() && self.newest_complete.is_some_and(|n| self.last_decoded.is_none_or(|d| n > d));
        if !waiting {
            self.stuck_since = None;
        } else if self.stuck_since.is_none() {
            self.stuck_since = Some(now);
        }
    }

    fn decode(&mut self, now: Time, id: u32) {
        let i = (id - self.frame_base) as usize;
        let f = &self.frames[i];
        let (shown, jitter_buffer) = match (self.timing.as_mut(), f.capture, f.complete) {
            (Some(t), Some(capture), Some(complete)) => {
                let (shown, delay) = t.decode(now, capture, complete, f.bytes, f.retransmitted);
                (shown, Some(delay))
            }
            _ => (now, None),
        };
        // Frames are shown in decode order.
        let shown = self.last_display_time.map_or(shown, |p| shown.max(p));
        self.frames[i].status = FrameStatus::Displayed;
        self.frames[i].display = Some(shown);
        self.frames[i].jitter_buffer = jitter_buffer;
        self.last_decoded = Some(id);
        self.stuck_since = None;
        if let Some(prev) = self.last_display_time {
            self.on_gap(shown - prev);
        }
        self.first_display_time.get_or_insert(shown);
        self.last_display_time = Some(shown);
        // Gaps older than a decoded key frame need no repair any more; those
        // of newer frames still do.
        if let Some(first) = self.frames[i].first_seq.filter(|_| self.frames[i].key) {
            self.missing.retain(|m| m.seq >= first);
        }
    }

    fn on_gap(&mut self, gap: Duration) {
        if gap > self.cfg.freeze_gap {
            self.freeze.count += 1;
            self.freeze.total += gap;
        }
        let g = gap.as_micros();
        if self.gap_n >= self.gaps.len() {
            let mean = self.gap_sum / self.gaps.len() as i64;
            if g >= (3 * mean).max(mean + 150_000) {
                self.freeze.webrtc_count += 1;
                self.freeze.webrtc_total += gap;
            }
        }
        let slot = self.gap_n % self.gaps.len();
        self.gap_sum += g - self.gaps[slot];
        self.gaps[slot] = g;
        self.gap_n += 1;
    }

    /// RFC 3550 A.3: expected (sequences from the first received, base_seq,
    /// to the highest) minus received, in all and since the previous report.
    fn rr_values(&mut self, now: Time, jitter: Duration) -> RrValues {
        let expected = self.next_seq - self.seq_base.unwrap_or(0);
        let received = self.received;
        let (prior_expected, prior_received) = self.rr_prior;
        self.rr_prior = (expected, received);
        let expected_interval = expected.saturating_sub(prior_expected) as i64;
        let lost_interval = expected_interval - received.saturating_sub(prior_received) as i64;
        let fraction_lost = match expected_interval == 0 || lost_interval <= 0 {
            true => 0,
            false => ((lost_interval << 8) / expected_interval).min(255) as u8,
        };
        RrValues {
            fraction_lost,
            cumulative_lost: expected as i64 - received as i64,
            highest_seq: self.next_seq.saturating_sub(1),
            jitter,
            last_sr: self.last_sr.map_or(0, |(m, _)| m),
            delay_since_last_sr: self.last_sr.map_or(0, |(_, at)| crate::sr::dlsr(now - at)),
        }
    }

    /// A report due at `now`, if any: at every interval when there is
    /// something to report, and early when a NACK or PLI is due.
    pub fn poll_report(&mut self, now: Time) -> Option<ReceiverReport> {
        if self.decode_wake.is_some_and(|t| t <= now) {
            self.try_decode(now);
        }
        let mut regular = self.next_report.is_some_and(|t| t <= now);
        if regular {
            self.next_report = self.next_report.map(|t| t + self.cfg.interval);
        }
        if self.early_due.is_some_and(|t| t <= now) {
            self.early_due = None;
            self.last_early = Some(now);
            regular = true;
        }
        let mut nacks = Vec::new();
        if self.nack_due().is_some_and(|t| t <= now) {
            let (allow, retry, max) = (self.cfg.reorder_allowance, self.cfg.nack_retry, self.cfg.nack_max_retries);
            self.missing.retain_mut(|m| {
                let due = m.last_nack.map_or(m.since + allow, |t| t + retry);
                if due > now {
                    return true;
                }
                if m.retries >= max {
                    return false;
                }
                m.retries += 1;
                m.last_nack = Some(now);
                nacks.push(m.seq);
                true
            });
        }
        let mut pli = false;
        if self.pli_due().is_some_and(|t| t <= now) {
            let key_arriving = self.last_key_packet.is_some_and(|t| now - t < self.cfg.keyframe_wait);
            if self.pli_pending || !key_arriving {
                pli = true;
                self.repair.plis_sent += 1;
            }
            self.pli_pending = false;
            self.last_pli = Some(now);
        }
        self.repair.nacks_sent += nacks.len() as u64;
        self.refresh_timeout();
        if !pli && nacks.is_empty() && (!regular || self.arrivals.is_empty()) {
            return None;
        }
        let arrivals = std::mem::replace(&mut self.arrivals, Vec::with_capacity(256));
        let mut stats = std::mem::take(&mut self.stats);
        stats.jitter = Duration::from_micros(self.jitter_us as i64);
        if stats.received > 0 {
            stats.owd_mean = Some(Duration::from_micros(self.owd_sum_us / i64::from(stats.received)));
        }
        self.owd_sum_us = 0;
        let late = std::mem::take(&mut self.late);
        // An RR a second beside transport feedback (libwebrtc's video RTCP
        // interval), the first half a second in; its fractions count from
        // the previous RR.
        let rr_due = match self.cfg.report_format {
            ReportFormat::RtcpXr => true,
            _ => {
                let due = *self.next_rr.get_or_insert(now + crate::sr::VIDEO_INTERVAL / 2) <= now;
                if due {
                    self.next_rr = Some(now + crate::sr::VIDEO_INTERVAL);
                }
                due
            }
        };
        let rr = if rr_due { self.rr_values(now, stats.jitter) } else { RrValues::default() };
        let estimate = self.estimator.as_mut().and_then(|e| e.estimate(now));
        let fb_count = self.fb_count;
        let mut report = ReceiverReport {
            flow: self.cfg.flow,
            report_time: now,
            arrivals,
            stats,
            nacks,
            pli,
            late,
            rr,
            rr_due,
            estimate,
            format: self.cfg.report_format,
            fb_count,
            datagram: Vec::new(),
        };
        self.fb_count = fb_count.wrapping_add(report.seal());
        Some(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::DataSize;

    #[test]
    fn real_frames_are_their_packets_bytes_and_bytes_that_make_no_frame_are_never_decoded() {
        use crate::packet::PayloadFormat;
        use crate::rtp_payload::packetize;
        // A VP8 key frame tag (RFC 6386 §9.1) and 2,990 more octets.
        let mut bytes = vec![0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 64, 0, 64, 0];
        bytes.extend((0..2990).map(|i| (i * 7) as u8));
        let frame = Payload::with_format(PayloadFormat::Vp8, bytes);
        let parts = packetize(&frame, 1200, 0).unwrap();
        let n = parts.len() as u16;
        let send = |rx: &mut Receiver, f: u32, parts: &[Payload]| {
            for (i, b) in parts.iter().enumerate() {
                let seq = u64::from(f) * 10 + i as u64;
                let p = Packet { payload: Some(b.clone()), ..key(pkt(seq, f, i as u16, n)) };
                rx.handle_packet(Time::from_millis(i64::from(f) * 33 + i as i64), &p);
            }
        };
        let mut rx = Receiver::new(immediate());
        send(&mut rx, 0, &parts);
        assert_eq!(rx.frame(0).payload, Some(frame.clone()));
        assert!(rx.frame(0).display.is_some());
        // Frame 1's middle payload is not VP8: every packet arrives, the
        // frame does not.
        let mut bad = parts.clone();
        bad[1] = Payload::with_format(PayloadFormat::Vp8, vec![0x80]);
        send(&mut rx, 1, &bad);
        let f = rx.frame(1);
        assert_eq!((f.received, f.complete, f.display, f.payload), (n, None, None, None));
        assert_eq!(rx.repair().unassembled, 1);
    }

    /// Frames shown when decoded: these tests are about reassembly and
    /// decode order (playout timing has its own in `playout`).
    fn immediate() -> ReceiverConfig {
        ReceiverConfig { playout: Playout::Immediate, ..ReceiverConfig::default() }
    }

    /// Media sequences as the wire carries them.
    fn wire16(s: &[u32]) -> Vec<u16> {
        s.iter().map(|&m| m as u16).collect()
    }

    /// `p`, of a key frame.
    fn key(p: Packet) -> Packet {
        Packet { flags: p.flags | FLAG_KEY, ..p }
    }

    /// Packet `index` of `count` of `frame`, as the wire carries it.
    fn pkt(seq: u64, frame: u32, index: u16, count: u16) -> Packet {
        let key = if frame == 0 { FLAG_KEY } else { 0 };
        let first = if index == 0 { FLAG_FIRST } else { 0 };
        let last = if index + 1 == count { FLAG_MARKER } else { 0 };
        Packet {
            seq: seq as u16,
            size: DataSize::from_bytes(1000),
            frame: frame as u16,
            media_seq: seq as u16,
            flags: key | first | last | FLAG_FRAME,
            ..Packet::default()
        }
    }

    /// After two minutes in which nothing arrives (the sender kept
    /// encoding, so frame ids moved on by 3,600), the next key frame is
    /// shown; a frame id no elapsed time explains is still refused.
    #[test]
    fn frames_after_a_long_outage_are_shown_and_an_unexplained_jump_is_not() {
        let mut r = Receiver::new(immediate());
        for f in 0..3u32 {
            r.handle_packet(Time::from_millis(i64::from(f) * 33), &pkt(u64::from(f), f, 0, 1));
        }
        while r.oldest_frame().is_some() {
            r.pop_frame();
        }
        let at = Time::from_secs_f64(120.1);
        let (f, seq) = (3 + 30 * 120 + 3, 5000);
        r.handle_packet(at, &key(pkt(seq, f, 0, 1)));
        assert_eq!(r.frame(f).display, Some(at));
        // 20,000 ids at once (over 80 s of them at 240 a second), 33 ms
        // later: corrupt.
        let g = f + 20_000;
        r.handle_packet(at + Duration::from_millis(33), &key(pkt(seq + 1, g, 0, 1)));
        assert_eq!(r.frame(g).display, None);
        assert!(r.oldest_frame().is_some_and(|(id, ..)| id <= f));
    }

    /// Transport and media sequences and frame numbers are 16 bits on the
    /// wire: past 65,536 of each the receiver goes on unwrapping them, so
    /// frames keep decoding in order and reports miss nothing.
    #[test]
    fn sequences_and_frame_numbers_unwrap_past_the_wrap() {
        let mut r = Receiver::new(immediate());
        let n = 70_000u32;
        let mut arrivals = 0;
        for f in 0..n {
            let at = Time::from_millis(i64::from(f) * 33);
            let p = pkt(u64::from(f), f, 0, 1);
            r.handle_packet(at, &if f % 1000 == 0 { key(p) } else { p });
            assert_eq!(r.frame(f).display, Some(at), "frame {f}");
            while r.oldest_frame().is_some() {
                r.pop_frame();
            }
            if f % 1000 == 999 {
                let rep = r.poll_report(at).expect("a report");
                assert!(rep.arrivals.iter().all(|&(s, t)| t.is_some() && s <= u64::from(f)), "at frame {f}");
                arrivals += rep.arrivals.len();
                assert_eq!(rep.stats.lost, 0);
            }
        }
        assert_eq!(arrivals, 70_000);
        assert_eq!(r.repair().duplicates, 0);
    }

    /// Wire sequences start anywhere (RFC 3550 §5.1): a packet from just
    /// before the first one received, across the wrap, belongs to the same
    /// frame, not 2^16 ahead.
    #[test]
    fn a_packet_from_before_the_first_across_the_wrap_completes_its_frame() {
        let mut r = Receiver::new(ReceiverConfig { nack: true, ..immediate() });
        // Frame 0 is media 65535, 0, 1 (transport 65534, 65535, 0); its
        // first packet comes last.
        let p = |seq: u16, media: u16, flags: u8| Packet {
            seq,
            media_seq: media,
            ..key(Packet { flags, ..pkt(0, 0, 1, 3) })
        };
        r.handle_packet(Time::from_millis(10), &p(65_535, 0, FLAG_FRAME));
        r.handle_packet(Time::from_millis(11), &p(0, 1, FLAG_FRAME | FLAG_MARKER));
        assert_eq!(r.frame(0).display, None);
        r.handle_packet(Time::from_millis(12), &p(65_534, 65_535, FLAG_FRAME | FLAG_FIRST));
        assert_eq!(r.frame(0).display, Some(Time::from_millis(12)));
        let rep = r.poll_report(Time::from_millis(100)).expect("a report");
        assert!(!rep.pli && rep.nacks.is_empty(), "{rep:?}");
        // Three received, none lost; arrivals from the first one received on.
        assert_eq!((rep.stats.received, rep.stats.lost), (3, 0));
        assert_eq!(rep.arrivals.iter().map(|a| a.0 as u16).collect::<Vec<_>>(), [65_535, 0]);
    }

    /// Late discards are the receiver's own judgement: collecting frame
    /// records (whenever a recorder does it) does not change them.
    #[test]
    fn lateness_does_not_depend_on_when_records_are_collected() {
        let late_after = |collect: bool| {
            let mut r = Receiver::new(immediate());
            // Frame 0 (key) is shown; frame 1 loses a packet and frame 2
            // (a key frame) overtakes it.
            r.handle_packet(Time::from_millis(10), &pkt(0, 0, 0, 1));
            r.handle_packet(Time::from_millis(40), &pkt(2, 1, 1, 2));
            let key2 = key(pkt(3, 2, 0, 1));
            r.handle_packet(Time::from_millis(70), &key2);
            assert_eq!(r.frame(2).display, Some(Time::from_millis(70)));
            let _ = r.poll_report(Time::from_millis(1000));
            if collect {
                for _ in 0..3 {
                    r.pop_frame();
                }
            }
            // A spurious retransmission of shown frame 0 (a duplicate), then
            // frame 1's missing packet, too late to show.
            r.handle_packet(Time::from_millis(1100), &Packet { kind: PacketKind::Rtx, ..pkt(4, 0, 0, 1) });
            r.handle_packet(Time::from_millis(1110), &Packet { media_seq: 1, ..pkt(5, 1, 0, 2) });
            let rep = r.poll_report(Time::from_millis(3000)).expect("a report");
            (rep.stats.late_discards, rep.late)
        };
        assert_eq!(late_after(false), (1, vec![5]));
        assert_eq!(late_after(true), (1, vec![5]));
    }

    #[test]
    fn delta_frames_wait_for_their_reference() {
        let mut r = Receiver::new(immediate());
        r.handle_packet(Time::from_millis(10), &pkt(0, 0, 0, 2));
        r.handle_packet(Time::from_millis(11), &pkt(1, 0, 1, 2));
        // Frame 1 loses its first packet; frame 2 completes but cannot decode.
        r.handle_packet(Time::from_millis(45), &pkt(3, 1, 1, 2));
        r.handle_packet(Time::from_millis(80), &pkt(4, 2, 0, 1));
        assert_eq!(r.frame(0).display, Some(Time::from_millis(11)));
        assert_eq!(r.frame(2).display, None);
        // The missing packet arrives (reordered): frames 1 and 2 decode at once.
        r.handle_packet(Time::from_millis(90), &pkt(2, 1, 0, 2));
        assert_eq!(r.frame(1).display, Some(Time::from_millis(90)));
        assert_eq!(r.frame(2).display, Some(Time::from_millis(90)));
        let rep = r.poll_report(Time::from_millis(60)).unwrap();
        assert_eq!(rep.report_time, Time::from_millis(60));
        assert_eq!(rep.arrivals.len(), 6);
        assert_eq!(rep.arrivals[2], (2, None));
        assert_eq!(rep.arrivals[5], (2, Some(Time::from_millis(90))));
        assert_eq!(r.next_display_after(0), Some(Time::from_millis(90)));
        assert_eq!(r.pop_frame().display, Some(Time::from_millis(11)));
        assert_eq!(r.frame(0), RecvFrame::default());
    }

    #[test]
    fn stuck_receiver_asks_for_a_key_frame() {
        let mut r = Receiver::new(immediate());
        r.handle_packet(Time::from_millis(0), &pkt(0, 0, 0, 1));
        // Frame 1 lost entirely; frame 2 complete at 66 ms.
        r.handle_packet(Time::from_millis(66), &pkt(2, 2, 0, 1));
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(50)));
        let rep = r.poll_report(Time::from_millis(50)).unwrap();
        assert!(!rep.pli);
        // The PLI is due keyframe_wait (200 ms) after frame 2 got stuck.
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(100)));
        assert!(r.poll_report(Time::from_millis(100)).is_none());
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(150)));
        let _ = r.poll_report(Time::from_millis(150));
        let _ = r.poll_report(Time::from_millis(200));
        let _ = r.poll_report(Time::from_millis(250));
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(266)));
        let rep = r.poll_report(Time::from_millis(266)).unwrap();
        assert!(rep.pli);
        // A new key frame restarts decoding; frame 2 stays undecoded.
        let key = key(pkt(3, 3, 0, 1));
        r.handle_packet(Time::from_millis(340), &key);
        assert_eq!(r.frame(3).display, Some(Time::from_millis(340)));
        assert_eq!(r.frame(2).display, None);
        assert_eq!(r.freeze().count, 1);
        assert_eq!(r.freeze().total, Duration::from_millis(340));
    }

    #[test]
    fn nacks_missing_media_after_the_reorder_allowance() {
        let cfg = ReceiverConfig { nack: true, ..immediate() };
        let mut r = Receiver::new(cfg);
        r.handle_packet(Time::from_millis(0), &pkt(0, 0, 0, 1));
        r.handle_packet(Time::from_millis(10), &pkt(3, 1, 2, 3));
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(15)));
        let rep = r.poll_report(Time::from_millis(15)).unwrap();
        assert_eq!(wire16(&rep.nacks), [1, 2]);
        // Retried one nack_retry later unless repaired.
        let rtx = Packet { kind: PacketKind::Rtx, ..pkt(4, 1, 0, 3) };
        r.handle_packet(Time::from_millis(60), &Packet { media_seq: 1, ..rtx });
        let rep = r.poll_report(Time::from_millis(115)).unwrap();
        assert_eq!(wire16(&rep.nacks), [2]);
        assert_eq!(r.repair().nacks_sent, 3);
    }

    #[test]
    fn key_frame_decode_keeps_newer_gaps() {
        let cfg = ReceiverConfig { nack: true, ..immediate() };
        let mut r = Receiver::new(cfg);
        // Key frame 0 = media 0..3 with media 1 lost; frame 1 = media 3..5 with media 4 lost.
        r.handle_packet(Time::from_millis(0), &key(pkt(0, 0, 0, 3)));
        r.handle_packet(Time::from_millis(2), &key(pkt(2, 0, 2, 3)));
        r.handle_packet(Time::from_millis(40), &pkt(3, 1, 0, 3));
        r.handle_packet(Time::from_millis(42), &Packet { media_seq: 5, ..pkt(5, 1, 2, 3) });
        // Retransmitted media 1 completes and decodes the key frame.
        let rtx = Packet { kind: PacketKind::Rtx, media_seq: 1, ..key(pkt(6, 0, 1, 3)) };
        r.handle_packet(Time::from_millis(45), &rtx);
        assert!(r.frame(0).display.is_some());
        let rep = r.poll_report(Time::from_millis(50)).unwrap();
        assert_eq!(wire16(&rep.nacks), [4], "media 4 of the newer frame is still asked for");
    }

    /// The duplicate ring (with the live word of the highest sequence kept
    /// apart) answers as a set of every sequence seen would, within the
    /// ring's reach: in order, jumps within and beyond a word and beyond the
    /// ring, late fill-ins and repeats.
    #[test]
    fn duplicate_ring_matches_a_set_of_what_was_seen() {
        let mut rng = crate::rng::Rng::new(11);
        let mut r = Receiver::new(immediate());
        let mut seen = std::collections::HashSet::new();
        let (mut high, mut dups) = (None::<u32>, 0);
        for i in 0..200_000u32 {
            let roll = rng.next_u64() % 100;
            let h = high.unwrap_or(0);
            let m = match roll {
                0..=59 => h + 1,
                60..=74 => h + 2 + (rng.next_u64() % 200) as u32,
                75 => h + SEEN_BITS + (rng.next_u64() % 300) as u32,
                _ => h.saturating_sub((rng.next_u64() % u64::from(SEEN_BITS + 500)) as u32),
            };
            let m = if i == 0 { 0 } else { m };
            let duplicate = high.is_some_and(|h| m <= h && (h - m >= SEEN_BITS || seen.contains(&m)));
            assert_eq!(r.mark_seen(Time::ZERO, m), !duplicate, "op {i}: media {m}, high {high:?}");
            seen.insert(m);
            high = Some(high.map_or(m, |h| h.max(m)));
            dups += u32::from(duplicate);
        }
        assert!(dups > 1_000, "{dups} duplicates exercised");
    }

    #[test]
    fn freeze_counts_long_gaps() {
        let mut r = Receiver::new(immediate());
        for (i, t) in [0, 33, 66, 300, 333].iter().enumerate() {
            r.handle_packet(Time::from_millis(*t), &pkt(i as u64, i as u32, 0, 1));
        }
        let fz = r.freeze();
        assert_eq!(fz.count, 1);
        assert_eq!(fz.total, Duration::from_millis(234));
    }
}
