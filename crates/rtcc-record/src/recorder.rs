//! The recorder: turns what happens in a run into the time series, the
//! packet, frame and link tables and `summary.json`. It is fed typed
//! [`Event`]s — packets sent, dropped, departed and arrived; settled frame
//! records; sender, receiver and link samples — and never looks inside the
//! simulator, the endpoints or the link, so any driver that can produce the
//! events (the simulator; a runtime on real sockets, joining the sender's
//! and the receiver's frame records by frame id) gets the same outputs.

use std::collections::{BTreeMap, VecDeque};

use rtcc_core::controller::Controller;
use rtcc_core::packet::{PacketKind, FLAG_PROTECTED, NO_FRAME};
use rtcc_core::receiver::{FreezeStats, RecvFrame, RepairStats};
use rtcc_core::sender::{SendCounters, SentFrame};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use rtcc_core::tcp::cc::CongestionControl;

use crate::frames::FrameLog;
use crate::metrics::{FlowStats, Histogram, Run, Series};
use crate::{CapacityTruth, Envelope};

/// The sender's state at a bin boundary.
pub struct SenderSample<'a> {
    pub target: DataRate,
    pub pacing: DataRate,
    pub encoder: DataRate,
    pub resolution_p: u32,
    pub counters: SendCounters,
    pub cwnd: Option<DataSize>,
    pub in_flight: DataSize,
    pub pacer_queued: DataSize,
    /// Its state columns (`Controller::state`) go into the time series.
    pub controller: &'a dyn Controller,
}

/// What the receiver knows at the end of the call.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReceiverSample {
    pub freeze: FreezeStats,
    /// A gap longer than this is a freeze.
    pub freeze_gap: Duration,
    /// First and last display.
    pub display_span: Option<(Time, Time)>,
    pub repair: RepairStats,
}

/// A cross-traffic flow (TCP, web-like, UDP) at a bin boundary or the end.
/// Byte counts are totals since the start.
#[derive(Default)]
pub struct TrafficSample<'a> {
    /// Wire bytes sent, retransmissions included.
    pub sent_bytes: u64,
    /// Segments sent again.
    pub retransmits: u64,
    /// Retransmission timeouts (RFC 6298) that fired.
    pub rtos: u64,
    pub cwnd: Option<DataSize>,
    pub in_flight: Option<DataSize>,
    /// Smoothed RTT (RFC 6298).
    pub srtt: Option<Duration>,
    pub pacing: Option<DataRate>,
    /// Its state columns go into the time series.
    pub cc: Option<&'a dyn CongestionControl>,
}

/// Something that happened, as the recorder is told it.
pub enum Event<'a> {
    /// A packet left its sender.
    PacketSent(&'a Envelope),
    /// The bottleneck dropped it (tail drop or AQM); `frame` as in the packet.
    PacketDropped { seq: u64, frame: u32, kind: PacketKind },
    /// It left the bottleneck after `queued` in the queue; `lost`: random
    /// loss after the bottleneck. `reverse`: the reverse bottleneck (a
    /// flow whose data runs from the receiving side).
    /// `sojourn`: arrival at the bottleneck to its last byte's departure.
    PacketDeparted { packet: &'a Envelope, queued: Duration, sojourn: Duration, lost: bool, reverse: bool },
    /// Something sent back (report, ACK) left a bottleneck: the forward
    /// one for a reverse flow, else the reverse one.
    BackDeparted { size: DataSize, reverse: bool },
    /// Something sent back was dropped at a bottleneck (the reverse one
    /// when `reverse`): it counts among that link's drops.
    BackDropped { reverse: bool },
    /// It reached its receiver.
    PacketArrived { at: Time, packet: &'a Envelope },
    /// A report (or ACK) left the receiving end: its wire bytes, and whether
    /// the reverse path lost or dropped it at once.
    ReportSent { lost: bool, bytes: u64 },
    /// A report sent earlier was dropped inside the reverse queue (AQM).
    ReportLost,
    /// The sender is done with a capture (encoded and sent, or skipped).
    FrameSent(&'a SentFrame),
    /// The receiver is done with frame `frame`: its record, and when the
    /// next displayed frame was shown (a frame never shown counts until
    /// then, Dumbo §6.1). `at_end`: the run ended before its fate was known.
    /// Joined with the sender's record by frame id, in whichever order the
    /// two arrive.
    FrameReceived { frame: u32, record: &'a RecvFrame, next_display: Option<Time>, at_end: bool },
    /// The sender at the end of the bin ending at `at`.
    Sender { at: Time, sample: &'a SenderSample<'a> },
    /// A cross-traffic flow at the end of the bin ending at `at` (and once
    /// more when the run ends).
    Traffic { at: Time, sample: &'a TrafficSample<'a> },
    /// A cross-traffic flow's totals when the run ends.
    TrafficEnd(&'a TrafficSample<'a>),
    /// A TCP RTT sample (one per ACK, from the echoed timestamp).
    Rtt(Duration),
    /// A web-like download of `size` completed, `fct` after it was requested.
    ObjectDone { size: DataSize, fct: Duration },
    /// The bottleneck's queue at the end of the bin ending at `at`.
    Link { at: Time, queue_bytes: DataSize },
    /// The receiving end's totals when the run ends (before `End`).
    ReceiverEnd(&'a ReceiverSample),
    /// The call is over at `at`: the sender's final counters.
    End { at: Time, counters: &'a SendCounters },
    /// A cross-traffic flow's receiving end at the end of a bin (before the
    /// sending end's `Traffic`) and when the run ends (before
    /// `TrafficEnd`): payload bytes handed to the application in order, and
    /// a web-like client's downloads requested and completed.
    TrafficReceived { delivered_bytes: u64, objects: Option<(u64, u64)> },
}

/// Who a flow is, for the summary.
#[derive(Clone, Debug)]
pub struct FlowLabel {
    pub name: String,
    /// "video", "tcp", "web" or "udp".
    pub kind: &'static str,
    /// "forward" or "reverse" (data from the receiving side).
    pub direction: &'static str,
    /// The TCP congestion control, if any.
    pub cc: Option<String>,
    pub controller: String,
    pub encoder: String,
    pub start: Time,
    pub stop: Option<Time>,
}

impl FlowLabel {
    /// A forward video call over the whole run.
    pub fn video(name: &str, controller: &str, encoder: &str) -> Self {
        FlowLabel {
            name: name.into(),
            kind: "video",
            direction: "forward",
            cc: None,
            controller: controller.into(),
            encoder: encoder.into(),
            start: Time::ZERO,
            stop: None,
        }
    }
}

/// How far the receiver's records may come out of order: a frame whose
/// record is still missing once the receiver has reported this many frames
/// beyond it is settled without one (about two seconds at 30 fps).
const REORDER_FRAMES: u32 = 64;

/// One flow's accumulators. In declaration order (`repr(C)`): the
/// per-packet counters first (with this flow's per-packet frame runs and
/// class), then what frames, samples and the end touch.
#[cfg_attr(feature = "sim-layout", repr(C))]
pub(crate) struct FlowRec {
    pub stats: FlowStats,
    /// Whether its data takes the reverse bottleneck (looked up once, not
    /// per packet).
    pub(crate) reverse: bool,
    /// Per unsettled frame id: its packets sent, and those still in the
    /// network (sent, not yet dropped, lost or arrived). At the end of the
    /// run a frame not shown is in flight only if some of its packets are
    /// (or some were never sent); otherwise it is lost.
    /// Indexed by frame id from `packets_base()` (the first unsettled one):
    /// ids rise and settle in order, so no hashing per packet.
    /// Runs of one frame's packets sent, and of those that left the
    /// network, wait in `stats.send.frame_run` and `stats.arrive.frame_run`
    /// before they are added here: a frame's packets go and arrive
    /// together, and with many flows its entry is out of cache.
    frame_packets: VecDeque<(u32, u32)>,
    /// Unsettled frames a sent parity covers (same indexing), and the
    /// (media sequence, frame) of recent media packets to find them by.
    protected: VecDeque<bool>,
    media_frames: VecDeque<(u16, u32)>,
    pub label: FlowLabel,
    pub frames: FrameLog,
    pub series: Series,
    /// Counters at the previous bin boundary, and the latest.
    prev: SendCounters,
    pub counters: SendCounters,
    pub target_sum: f64,
    pub target_n: u64,
    /// Per-bin received bytes over the bin's capacity, summed over the
    /// active bins with capacity (utilisation per sample).
    pub util_sum: f64,
    pub util_n: u64,
    pub receiver: ReceiverSample,
    pub reports_sent: u64,
    pub reports_lost: u64,
    pub report_bytes: u64,
    /// Sender records waiting for the receiver's, in capture order.
    sent: VecDeque<SentFrame>,
    /// Receiver records waiting for the sender's, by frame id.
    received: BTreeMap<u32, (RecvFrame, Option<Time>, bool)>,
    /// Highest frame id the receiver has reported, and the last frame
    /// settled: a receiver record at or below it comes too late to join.
    received_high: Option<u32>,
    settled: Option<u32>,
    /// The end of the latest bin sampled: a sender record with no receiver
    /// record `frames::SETTLE` after its capture is settled without one.
    clock: Time,
    /// FFRE's parts (FBRA §5): protected frames that had a packet rebuilt
    /// from parity and completed, and protected frames never completed.
    pub fec_frames_recovered: u64,
    pub fec_frames_lost: u64,
    /// Cross traffic's totals and distributions.
    pub traffic: TrafficRec,
    /// How its controller's estimates compare with the simulator's truth.
    pub accuracy: Accuracy,
}

// The state columns (`Controller::state`) the recorder checks against the
// simulator's truth: a controller that estimates these reports them under
// these names.

/// The controller's estimate of its bottleneck's capacity, in kbps.
pub const CAPACITY_ESTIMATE: &str = "capacity_estimate_kbps";
/// Whether the controller believes another flow shares its bottleneck:
/// 1 = competing, 0 = alone (≥ 0.5 counts as competing).
pub const COMPETITION: &str = "competition";

/// An estimate within this fraction of the true capacity counts as right
/// (`capacity_estimate_within_10`; to 1e-9, so that 1.1 × capacity does).
const WITHIN: f64 = 0.10;

/// A flow's accuracy accumulators: estimates against the truth, over the
/// bins of its active time (as `target_kbps_mean`).
#[derive(Clone, Debug, Default)]
pub struct Accuracy {
    /// Cumulative data bytes through the flow's bottleneck, all flows' and
    /// its own, at its previous sample: their differences are the bin's.
    prev_link_data: u64,
    prev_own_data: u64,
    /// |capacity_error| over the bins where it is defined, and how many of
    /// them are within `WITHIN`.
    pub capacity_err_sum: f64,
    pub capacity_n: u64,
    pub capacity_within: u64,
    /// Bins with a competition state, and those where it matched the truth.
    pub competition_n: u64,
    pub competition_right: u64,
}

/// A cross-traffic flow's accumulators.
#[derive(Clone, Debug, Default)]
pub struct TrafficRec {
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    pub retransmits: u64,
    pub rtos: u64,
    pub objects: Option<(u64, u64)>,
    prev_sent: u64,
    prev_delivered: u64,
    prev_retransmits: u64,
    pub rtt: Histogram,
    pub fct: Histogram,
}

/// Link bytes by what carried them, in `KIND_NAMES` order.
pub const KIND_NAMES: [&str; 5] = ["video", "tcp", "web", "udp", "feedback"];
const FEEDBACK: usize = 4;

fn kind_index(kind: &str) -> usize {
    KIND_NAMES.iter().position(|k| *k == kind).unwrap_or(0)
}

impl FlowRec {
    /// The first unsettled frame. It is kept in `stats.send` and, as a
    /// copy, in `stats.arrive`: every packet reads one of them.
    fn packets_base(&self) -> u32 {
        self.stats.send.frame_base
    }

    /// Its data bytes that left its bottleneck, random loss after it
    /// included (what it sent back is not data).
    pub fn data_bytes(&self) -> u64 {
        self.stats.send.data_bytes
    }

    fn add_received(&mut self, frame: u32, rec: RecvFrame, next: Option<Time>, at_end: bool) {
        self.received_high = Some(self.received_high.map_or(frame, |h| h.max(frame)));
        if self.settled.is_none_or(|s| frame > s) {
            self.received.insert(frame, (rec, next, at_end));
        }
    }

    /// A packet of `frame` was sent (`sent`) or left the network.
    fn frame_packet(&mut self, frame: u32, sent: bool) {
        let base = if sent { self.stats.send.frame_base } else { self.stats.arrive.frame_base };
        if frame == NO_FRAME || frame < base {
            return;
        }
        let run = if sent { &mut self.stats.send.frame_run } else { &mut self.stats.arrive.frame_run };
        if let Some(done) = run.push(frame) {
            // The other pending run too, sends first: a packet leaves only
            // after it was sent.
            let other = if sent { self.stats.arrive.frame_run.take() } else { self.stats.send.frame_run.take() };
            let (s, l) = if sent { (Some(done), other) } else { (other, Some(done)) };
            self.add_runs(s, l);
        }
    }

    /// Add the pending runs to `frame_packets`.
    fn flush_runs(&mut self) {
        let (s, l) = (self.stats.send.frame_run.take(), self.stats.arrive.frame_run.take());
        self.add_runs(s, l);
    }

    fn add_runs(&mut self, sent: Option<Run>, left: Option<Run>) {
        for (run, is_sent) in [(sent, true), (left, false)] {
            let Some(run) = run.filter(|r| r.key >= self.packets_base()) else { continue };
            let i = (run.key - self.packets_base()) as usize;
            if i >= self.frame_packets.len() {
                if !is_sent {
                    continue;
                }
                self.frame_packets.resize(i + 1, (0, 0));
            }
            let e = &mut self.frame_packets[i];
            if is_sent {
                e.0 += run.n;
                e.1 += run.n;
            } else {
                e.1 = e.1.saturating_sub(run.n);
            }
        }
    }

    /// Remember which frame protected media packet `seq` carried (the last
    /// 4096), for the parities sent after it.
    fn note_media(&mut self, seq: u16, frame: u32) {
        if self.media_frames.len() >= 4096 {
            self.media_frames.pop_front();
        }
        self.media_frames.push_back((seq, frame));
    }

    /// A parity covering `group` media packets from `base` was sent: their
    /// frames are protected.
    fn protect(&mut self, base: u16, group: u16) {
        for &(seq, frame) in self.media_frames.iter().rev() {
            let k = seq.wrapping_sub(base);
            if k >= group {
                // Older than the group's first packet: done.
                if (k as i16) < 0 {
                    break;
                }
                continue;
            }
            let Some(i) = frame.checked_sub(self.packets_base()) else { continue };
            let i = i as usize;
            if self.protected.len() <= i {
                self.protected.resize(i + 1, false);
            }
            self.protected[i] = true;
        }
    }

    /// Whether `s` may still arrive: some of its packets are in the network
    /// or were never sent.
    fn in_flight(&mut self, s: &SentFrame) -> bool {
        self.flush_runs();
        let at = s.frame.checked_sub(self.packets_base()).map(|i| i as usize);
        let (sent, out) = at.and_then(|i| self.frame_packets.get(i)).copied().unwrap_or_default();
        out > 0 || sent < s.packets as u32
    }

    /// Settle frames in capture order once both records are in (a skipped
    /// capture has only the sender's). Records may come in any order; a
    /// frame the receiver has reported past without a record of its own is
    /// settled without one (lost) once the receiver is `REORDER_FRAMES`
    /// beyond it, and one the receiver never reported once it is
    /// `frames::SETTLE` old (it heard nothing of it, nor of any later
    /// frame). `at_end`, settle the rest as the run left them.
    fn join_frames(&mut self, flow: usize, at_end: bool) {
        while let Some(s) = self.sent.front() {
            let r = if s.skipped {
                None
            } else if let Some(r) = self.received.remove(&s.frame) {
                Some(r)
            } else if at_end
                || self.received_high.is_some_and(|h| h > s.frame + REORDER_FRAMES)
                || self.clock >= s.capture + crate::frames::SETTLE
            {
                None
            } else {
                break;
            };
            let s = self.sent.pop_front().expect("front exists");
            let (rec, next, end) = r.unwrap_or((RecvFrame::default(), None, at_end));
            // Cut off by the end only if it could still arrive; a frame
            // whose every packet was dropped or lost is lost, at any loss rate.
            let end = end && (s.skipped || self.in_flight(&s));
            if !s.skipped {
                self.settled = Some(s.frame);
                let at = s.frame.checked_sub(self.packets_base()).map(|i| i as usize);
                if at.and_then(|i| self.protected.get(i)).copied().unwrap_or(false) {
                    match rec.complete {
                        Some(_) if rec.fec => self.fec_frames_recovered += 1,
                        Some(_) => {}
                        None if !end => self.fec_frames_lost += 1,
                        None => {}
                    }
                }
                // Counts up to this frame are done with.
                self.flush_runs();
                let done = (s.frame + 1).saturating_sub(self.packets_base()) as usize;
                self.frame_packets.drain(..done.min(self.frame_packets.len()));
                self.protected.drain(..done.min(self.protected.len()));
                let base = self.packets_base().max(s.frame + 1);
                (self.stats.send.frame_base, self.stats.arrive.frame_base) = (base, base);
            }
            self.frames.settle(flow, &s, &rec, next, end);
        }
        if at_end {
            self.received.clear();
            self.flush_runs();
            self.frame_packets.clear();
            self.protected.clear();
        }
    }
}

/// The link's accumulators.
pub(crate) struct LinkRec {
    /// None on a path whose capacity no one knows (a real one).
    pub capacity: Option<Box<dyn CapacityTruth>>,
    pub series: Series,
    bin_delivered: u64,
    bin_drops: u64,
    pub delivered_bytes: u64,
    /// Queue delay over the bins where it is defined (capacity > 0).
    pub queue_ms_sum: f64,
    pub queue_ms_n: u64,
    pub queue_ms_max: Option<f64>,
    /// Bytes delivered, by `KIND_NAMES`.
    pub by_kind: [u64; 5],
    /// Data bytes delivered: every flow's packets, not what was sent back.
    pub data_bytes: u64,
    pub drops: u64,
}

impl LinkRec {
    fn new(capacity: Option<Box<dyn CapacityTruth>>) -> LinkRec {
        LinkRec {
            capacity,
            series: Series::default(),
            bin_delivered: 0,
            bin_drops: 0,
            delivered_bytes: 0,
            queue_ms_sum: 0.0,
            queue_ms_n: 0,
            queue_ms_max: None,
            by_kind: [0; 5],
            data_bytes: 0,
            drops: 0,
        }
    }

    /// Bytes the bottleneck could deliver in `(t0, t1]`; NaN when its
    /// capacity is not known, so whatever is measured against it is too.
    pub(crate) fn capacity_bytes(&self, t0: Time, t1: Time) -> f64 {
        self.capacity.as_ref().map_or(f64::NAN, |c| c.bytes_between(t0, t1))
    }
}

/// Packet-table rows a run may hold in memory at once by default
/// (`[limits] packet_rows`): 10 million rows are 400 MB, a 4 h call's
/// rows two and a half times over. Rows wait until taken (`take_tables`)
/// or the run ends, and a row waits behind every earlier packet of its
/// flow still in the network, so a sender that outruns its link by far
/// piles them up behind its queue: the limit stops such a run with an
/// error instead of filling memory.
pub const MAX_PACKET_ROWS: usize = 10_000_000;

pub struct Recorder {
    pub(crate) flows: Vec<FlowRec>,
    pub(crate) link: LinkRec,
    /// The reverse bottleneck, if the link has one.
    pub(crate) reverse: Option<LinkRec>,
    bin: Duration,
    record_packets: bool,
    record_timeseries: bool,
    /// Packets all flows sent so far (the run's packet budget counts them).
    pub sent: u64,
    /// Packet rows held (all flows), and how many may be: a packet sent
    /// beyond the limit gets no row and sets `rows_over`.
    pub(crate) packet_rows: usize,
    row_limit: usize,
    rows_over: bool,
}

impl Recorder {
    /// A recorder of bins of `bin` for a bottleneck whose true capacity is
    /// `capacity`, if known (see [`CapacityTruth`]).
    pub fn new(
        capacity: Option<Box<dyn CapacityTruth>>,
        bin: Duration,
        record_packets: bool,
        record_timeseries: bool,
    ) -> Self {
        Recorder {
            flows: Vec::new(),
            link: LinkRec::new(capacity),
            reverse: None,
            bin,
            record_packets,
            record_timeseries,
            sent: 0,
            packet_rows: 0,
            row_limit: MAX_PACKET_ROWS,
            rows_over: false,
        }
    }

    /// Hold at most `rows` packet rows at once.
    pub fn set_row_limit(&mut self, rows: usize) {
        self.row_limit = rows;
    }

    /// Packet rows held now.
    pub fn packet_rows(&self) -> usize {
        self.packet_rows
    }

    /// Whether a packet found the rows at their limit (the run cannot
    /// complete its packet table).
    pub fn rows_over(&self) -> bool {
        self.rows_over
    }

    /// The reverse bottleneck's capacity, when the link has one.
    pub fn set_reverse(&mut self, capacity: Option<Box<dyn CapacityTruth>>) {
        self.reverse = Some(LinkRec::new(capacity));
    }

    /// Add a flow (numbered in order) with its frame accounting.
    pub fn add_flow(&mut self, label: FlowLabel, frames: FrameLog) {
        self.flows.push(FlowRec {
            stats: FlowStats::with_class(kind_index(label.kind) as u8),
            frames,
            series: Series::default(),
            prev: SendCounters::default(),
            counters: SendCounters::default(),
            target_sum: 0.0,
            target_n: 0,
            util_sum: 0.0,
            util_n: 0,
            receiver: ReceiverSample::default(),
            reports_sent: 0,
            report_bytes: 0,
            reports_lost: 0,
            sent: VecDeque::new(),
            received: BTreeMap::new(),
            received_high: None,
            clock: Time::ZERO,
            settled: None,
            frame_packets: VecDeque::new(),
            protected: VecDeque::new(),
            media_frames: VecDeque::new(),
            fec_frames_recovered: 0,
            fec_frames_lost: 0,
            traffic: TrafficRec::default(),
            reverse: label.direction == "reverse",
            accuracy: Accuracy::default(),
            label,
        });
    }

    /// Why flow `flow`'s frame measurements cannot be trusted, if they
    /// cannot (a real decoder failed).
    pub fn frames_failure(&self, flow: usize) -> Option<&str> {
        self.flows[flow].frames.failure()
    }

    pub fn set_record_packets(&mut self, on: bool) {
        self.record_packets = on;
    }

    /// Start loading the lines flow `flow`'s next packet sent and departed
    /// (`arrival`: arrived) books (`rtcc_core::cache`).
    #[cfg(feature = "sim-layout")]
    #[inline]
    pub fn prefetch(&self, flow: usize, arrival: bool) {
        self.flows[flow].stats.prefetch(arrival);
    }

    /// Record `e` of flow `flow` (link samples ignore `flow`).
    #[inline]
    pub fn record(&mut self, flow: usize, e: Event) {
        match e {
            // A sender's RTCP (its SR) counts on the link, as what a
            // receiving end sends back does, and in no packet record.
            Event::PacketSent(p) if p.kind == PacketKind::Feedback => {}
            Event::PacketDropped { kind: PacketKind::Feedback, .. } => {
                self.record(flow, Event::BackDropped { reverse: self.flows[flow].reverse })
            }
            Event::PacketDeparted { packet, reverse, .. } if packet.kind == PacketKind::Feedback => {
                self.record(flow, Event::BackDeparted { size: packet.packet.size, reverse })
            }
            Event::PacketArrived { packet, .. } if packet.kind == PacketKind::Feedback => {}
            Event::PacketSent(p) => {
                self.sent += 1;
                let mut record = self.record_packets;
                if record {
                    record = self.packet_rows < self.row_limit;
                    self.rows_over |= !record;
                    self.packet_rows += usize::from(record);
                }
                let f = &mut self.flows[flow];
                f.stats.on_sent(p, record);
                let w = &p.packet;
                match p.kind {
                    PacketKind::Fec => f.protect(w.media_seq, w.group),
                    PacketKind::Media => {
                        // Only a protected packet can be in a parity's group.
                        if w.flags & FLAG_PROTECTED != 0 {
                            f.note_media(w.media_seq, p.frame);
                        }
                        f.frame_packet(p.frame, true);
                    }
                    _ => f.frame_packet(p.frame, true),
                }
            }
            Event::PacketDropped { seq, frame, .. } => {
                let f = &mut self.flows[flow];
                f.stats.on_dropped(seq);
                f.frame_packet(frame, false);
                match (&mut self.reverse, f.reverse) {
                    (Some(r), true) => r.drops += 1,
                    _ => {
                        self.link.bin_drops += 1;
                        self.link.drops += 1;
                    }
                }
            }
            Event::PacketDeparted { packet, queued, sojourn, lost, reverse } => {
                let f = &mut self.flows[flow];
                let l = match (&mut self.reverse, reverse) {
                    (Some(r), true) => r,
                    _ => {
                        self.link.bin_delivered += packet.packet.size.bytes();
                        &mut self.link
                    }
                };
                let bytes = packet.packet.size.bytes();
                l.delivered_bytes += bytes;
                l.by_kind[f.stats.send.class as usize] += bytes;
                l.data_bytes += bytes;
                f.stats.send.data_bytes += bytes;
                f.stats.on_departed(packet.seq, queued, sojourn, lost);
                if lost && packet.kind != PacketKind::Fec {
                    f.frame_packet(packet.frame, false);
                }
            }
            Event::BackDeparted { size, reverse } => {
                let l = match (&mut self.reverse, reverse) {
                    (Some(r), true) => r,
                    _ => {
                        self.link.bin_delivered += size.bytes();
                        &mut self.link
                    }
                };
                l.delivered_bytes += size.bytes();
                l.by_kind[FEEDBACK] += size.bytes();
            }
            Event::BackDropped { reverse } => match (&mut self.reverse, reverse) {
                (Some(r), true) => r.drops += 1,
                _ => {
                    self.link.bin_drops += 1;
                    self.link.drops += 1;
                }
            },
            Event::Traffic { at, sample } => self.traffic_sample(flow, Some(at), sample),
            Event::TrafficEnd(sample) => self.traffic_sample(flow, None, sample),
            Event::Rtt(d) => self.flows[flow].traffic.rtt.add(d),
            Event::ObjectDone { fct, .. } => self.flows[flow].traffic.fct.add(fct),
            Event::PacketArrived { at, packet } => {
                let f = &mut self.flows[flow];
                f.stats.on_arrived(at, packet);
                if packet.kind != PacketKind::Fec {
                    f.frame_packet(packet.frame, false);
                }
            }
            Event::ReportSent { lost, bytes } => {
                let f = &mut self.flows[flow];
                f.reports_sent += 1;
                f.report_bytes += bytes;
                f.reports_lost += lost as u64;
            }
            Event::ReportLost => self.flows[flow].reports_lost += 1,
            Event::FrameSent(sent) => {
                self.flows[flow].sent.push_back(*sent);
                self.flows[flow].join_frames(flow, false);
            }
            Event::FrameReceived { frame, record, next_display, at_end } => {
                self.flows[flow].add_received(frame, record.clone(), next_display, at_end);
                self.flows[flow].join_frames(flow, false);
            }
            Event::Sender { at, sample } => self.sender_sample(flow, at, sample),
            Event::Link { at, queue_bytes } => self.link_sample(at, queue_bytes),
            Event::ReceiverEnd(receiver) => self.flows[flow].receiver = *receiver,
            Event::TrafficReceived { delivered_bytes, objects } => {
                let t = &mut self.flows[flow].traffic;
                (t.delivered_bytes, t.objects) = (delivered_bytes, objects);
            }
            Event::End { at, counters } => {
                let f = &mut self.flows[flow];
                f.counters = *counters;
                f.join_frames(flow, true);
                f.frames.finish(at);
            }
        }
    }

    /// A flow's row of the bin ending at `t1`; its bin accumulators restart.
    /// The controller's state is read whether or not the time series is
    /// kept: the summary's accuracy fields need it.
    fn sender_sample(&mut self, flow: usize, t1: Time, x: &SenderSample) {
        let bin = self.bin;
        let kbps = |b: u64| kbps_over(b, bin);
        let record = self.record_timeseries;
        let cap = self.link.capacity_bytes(t1 - bin, t1);
        let f = &mut self.flows[flow];
        f.clock = t1;
        f.join_frames(flow, false);
        let active = t1 > f.label.start && f.label.stop.is_none_or(|s| t1 <= s);
        if active {
            f.target_sum += x.target.kbps_f64();
            f.target_n += 1;
            if cap > 0.0 {
                f.util_sum += f.stats.bin().recv_bytes as f64 / cap;
                f.util_n += 1;
            }
        }
        if record {
            let c = x.counters;
            let d = |k: usize| c.bytes[k] - f.prev.bytes[k];
            let b = f.stats.bin();
            let s = &mut f.series;
            s.push("t_s", t1.as_secs_f64());
            s.push("flow", flow as f64);
            s.push("target_kbps", x.target.kbps_f64());
            s.push("pacing_kbps", x.pacing.kbps_f64());
            s.push("encoder_kbps", x.encoder.kbps_f64());
            s.push("resolution_p", x.resolution_p as f64);
            s.push("send_kbps", kbps((0..6).map(d).sum()));
            s.push("video_kbps", kbps(d(0)));
            s.push("padding_kbps", kbps(d(1)));
            s.push("probe_kbps", kbps(d(2)));
            s.push("fec_kbps", kbps(d(3)));
            s.push("rtx_kbps", kbps(d(4)));
            s.push("audio_kbps", kbps(d(5)));
            s.push("goodput_kbps", kbps(b.media_recv_bytes));
            s.push("recv_kbps", kbps(b.recv_bytes));
            s.push("owd_ms", if b.owd_n > 0 { b.owd_sum_us / b.owd_n as f64 / 1e3 } else { f64::NAN });
            s.push("queue_ms", if b.queue_n > 0 { b.queue_sum_us / b.queue_n as f64 / 1e3 } else { f64::NAN });
            s.push("cwnd_bytes", x.cwnd.map_or(f64::NAN, |w| w.bytes() as f64));
            s.push("in_flight_bytes", x.in_flight.bytes() as f64);
            s.push("pacer_queue_bytes", x.pacer_queued.bytes() as f64);
        }
        let (mut estimate, mut competition) = (None, None);
        let series = &mut f.series;
        x.controller.state(&mut |k, v| {
            match k {
                CAPACITY_ESTIMATE => estimate = Some(v),
                COMPETITION => competition = Some(v),
                _ => {}
            }
            if record {
                series.push_state(k, v);
            }
        });
        self.accuracy_sample(flow, t1, active, estimate, competition);
        let f = &mut self.flows[flow];
        if record {
            f.series.end_row();
        }
        f.prev = x.counters;
        f.counters = x.counters;
        f.stats.reset_bin();
    }

    /// A flow's estimates in the bin ending at `t1` against the truth, into
    /// its row (when kept) and, for a bin of its active time, its summary:
    ///
    /// - `capacity_kbps`, the mean capacity of the flow's bottleneck over
    ///   the bin (the reverse one for a reverse flow), and `capacity_error`
    ///   = estimate / capacity − 1 (NaN without capacity or estimate);
    /// - `competition_truth`: 1 if data of any other flow left the flow's
    ///   bottleneck in the bin, else 0. Only data counts: what flows send
    ///   back (reports, ACKs) is not competition, so a reverse TCP flow's
    ///   ACKs on the forward bottleneck are not, nor is its data, which
    ///   crosses the reverse one.
    ///
    /// Columns appear only in rows where the controller reported the state
    /// they check.
    fn accuracy_sample(
        &mut self,
        flow: usize,
        t1: Time,
        active: bool,
        estimate: Option<f64>,
        competition: Option<f64>,
    ) {
        let (bin, record) = (self.bin, self.record_timeseries);
        let f = &mut self.flows[flow];
        let link = match (&self.reverse, f.reverse) {
            (Some(r), true) => r,
            _ => &self.link,
        };
        let others =
            (link.data_bytes - f.accuracy.prev_link_data).saturating_sub(f.data_bytes() - f.accuracy.prev_own_data);
        f.accuracy.prev_link_data = link.data_bytes;
        f.accuracy.prev_own_data = f.data_bytes();
        let a = &mut f.accuracy;
        if let Some(e) = estimate {
            // As the link table's `capacity_kbps`.
            let cap = link.capacity_bytes(t1 - bin, t1);
            let cap_kbps = DataRate::from_bps_f64(cap * 8.0 / bin.as_secs_f64()).kbps_f64();
            let error = if cap_kbps > 0.0 && e.is_finite() { e / cap_kbps - 1.0 } else { f64::NAN };
            if active && error.is_finite() {
                a.capacity_err_sum += error.abs();
                a.capacity_n += 1;
                a.capacity_within += u64::from(error.abs() <= WITHIN + 1e-9);
            }
            if record {
                f.series.push("capacity_kbps", cap_kbps);
                f.series.push("capacity_error", error);
            }
        }
        if let Some(c) = competition {
            let truth = others > 0;
            if active && c.is_finite() {
                a.competition_n += 1;
                a.competition_right += u64::from((c >= 0.5) == truth);
            }
            if record {
                f.series.push("competition_truth", if truth { 1.0 } else { 0.0 });
            }
        }
    }

    /// A cross-traffic flow's totals, and its row of the bin ending at `t1`
    /// (none at the end of the run).
    fn traffic_sample(&mut self, flow: usize, t1: Option<Time>, x: &TrafficSample) {
        let bin = self.bin;
        let kbps = |b: u64| kbps_over(b, bin);
        let f = &mut self.flows[flow];
        let t = &mut f.traffic;
        t.sent_bytes = x.sent_bytes;
        t.retransmits = x.retransmits;
        t.rtos = x.rtos;
        let Some(t1) = t1 else { return };
        if self.record_timeseries {
            let b = f.stats.bin();
            let s = &mut f.series;
            s.push("t_s", t1.as_secs_f64());
            s.push("flow", flow as f64);
            s.push("send_kbps", kbps(x.sent_bytes - t.prev_sent));
            s.push("goodput_kbps", kbps(t.delivered_bytes - t.prev_delivered));
            s.push("recv_kbps", kbps(b.recv_bytes));
            s.push("owd_ms", if b.owd_n > 0 { b.owd_sum_us / b.owd_n as f64 / 1e3 } else { f64::NAN });
            s.push("queue_ms", if b.queue_n > 0 { b.queue_sum_us / b.queue_n as f64 / 1e3 } else { f64::NAN });
            s.push("cwnd_bytes", x.cwnd.map_or(f64::NAN, |w| w.bytes() as f64));
            s.push("in_flight_bytes", x.in_flight.map_or(f64::NAN, |w| w.bytes() as f64));
            s.push("rtt_ms", x.srtt.map_or(f64::NAN, |d| d.as_millis_f64()));
            s.push("pacing_kbps", x.pacing.map_or(f64::NAN, |r| r.kbps_f64()));
            s.push("retransmits", (x.retransmits - t.prev_retransmits) as f64);
            if let Some(cc) = x.cc {
                cc.state(&mut |k, v| s.push_state(k, v));
            }
            s.end_row();
        }
        t.prev_sent = x.sent_bytes;
        t.prev_delivered = t.delivered_bytes;
        t.prev_retransmits = x.retransmits;
        f.stats.reset_bin();
    }

    /// The link's row of the bin ending at `t1`. Queue delay is the queue
    /// drained at the bin's mean capacity; undefined (NaN, left out of the
    /// summary) in a bin with no capacity.
    fn link_sample(&mut self, t1: Time, qbytes: DataSize) {
        let t0 = t1 - self.bin;
        let secs = self.bin.as_secs_f64();
        let cap = self.link.capacity_bytes(t0, t1);
        let cap_rate = DataRate::from_bps_f64(if cap.is_nan() { 0.0 } else { cap * 8.0 / secs });
        let queue_ms = if qbytes == DataSize::ZERO {
            0.0
        } else if cap_rate > DataRate::ZERO {
            (qbytes / cap_rate).as_millis_f64()
        } else {
            f64::NAN
        };
        let cap_kbps = if cap.is_nan() { f64::NAN } else { cap_rate.kbps_f64() };
        let l = &mut self.link;
        if queue_ms.is_finite() {
            l.queue_ms_sum += queue_ms;
            l.queue_ms_n += 1;
            l.queue_ms_max = Some(l.queue_ms_max.map_or(queue_ms, |m: f64| m.max(queue_ms)));
        }
        if self.record_timeseries {
            let (delivered, drops) = (kbps_over(self.link.bin_delivered, self.bin), self.link.bin_drops);
            let ls = &mut self.link.series;
            ls.push("t_s", t1.as_secs_f64());
            ls.push("capacity_kbps", cap_kbps);
            ls.push("delivered_kbps", delivered);
            ls.push("queue_bytes", qbytes.bytes() as f64);
            ls.push("queue_ms", queue_ms);
            ls.push("drops", drops as f64);
            ls.end_row();
        }
        self.link.bin_delivered = 0;
        self.link.bin_drops = 0;
    }
}

fn kbps_over(bytes: u64, span: Duration) -> f64 {
    bytes as f64 * 8.0 / span.as_secs_f64() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_packet_runs_count_as_each_packet_would() {
        let mut rec = Recorder::new(Some(Box::new(DataRate::from_mbps(1))), Duration::from_millis(100), false, false);
        let label = FlowLabel::video("f", "fixed", "ideal");
        rec.add_flow(label, FrameLog::default());
        let f = &mut rec.flows[0];
        // Interleaved frames; a leave of a frame never sent (5) is ignored.
        let events =
            [(0, true), (0, true), (1, true), (0, true), (0, false), (5, false), (1, false), (1, true), (0, false)];
        for (frame, sent) in events {
            f.frame_packet(frame, sent);
        }
        let sent = |frame: u32, packets: u16| SentFrame {
            frame,
            capture: Time::ZERO,
            size: DataSize::ZERO,
            key: false,
            packets,
            target: DataRate::ZERO,
            resolution: rtcc_core::resolution::Resolution::R720,
            first_sent: None,
            last_sent: None,
            skipped: false,
            media_sent: 0,
        };
        // Frame 0: 3 sent, 2 left; frame 1: 2 sent, 1 left. Both in flight.
        assert!(f.in_flight(&sent(0, 3)) && f.in_flight(&sent(1, 2)));
        assert_eq!(f.frame_packets, [(3, 1), (2, 1)]);
        for frame in [0, 1] {
            f.frame_packet(frame, false);
        }
        assert!(!f.in_flight(&sent(0, 3)) && !f.in_flight(&sent(1, 2)));
        // A frame with a packet never sent may still arrive.
        assert!(f.in_flight(&sent(1, 3)));
        assert_eq!(f.frame_packets, [(3, 0), (2, 0)]);
    }
}
