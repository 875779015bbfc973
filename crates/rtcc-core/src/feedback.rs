//! The neutral feedback record. Whatever the wire format (transport-wide-cc,
//! RFC 8888, receiver reports), the receiver produces a `ReceiverReport`; the
//! sender joins it with its send history into a `Feedback` before any
//! controller sees it (STYLE habit 3).

use crate::packet::{FramePos, PacketKind};
use crate::units::{DataRate, DataSize, Duration, Time};
use rtcc_wire::rtcp::{
    CcfbBlock, CcfbReport, Compound, CongestionControlFeedback, Nack, Pli, Remb, RtcpPacket, TransportFeedbackBuilder,
    MAX_CCFB_REPORTS, MAX_PACKET_BYTES,
};
use rtcc_wire::Wire;

/// Receiver-side statistics carried with a report (RTCP RR-style), over the
/// packets that arrived since the previous report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReportStats {
    /// Packets received and lost since the previous report (by sequence gaps).
    pub received: u32,
    pub lost: u32,
    /// RFC 3550 interarrival jitter estimate.
    pub jitter: Duration,
    /// Media packets that arrived after their frame was decoded past or
    /// given up (late discards); their sequences are in `ReceiverReport::late`.
    pub late_discards: u32,
    /// Media packets rebuilt from FEC parity.
    pub fec_recovered: u32,
    /// One-way delay (arrival on the receiver's clock − send time on the
    /// sender's) of the packets received: smallest, mean, largest; `None`
    /// when none arrived. Only differences are meaningful across unsynchronised
    /// clocks; in the simulator the clocks agree.
    pub owd_min: Option<Duration>,
    pub owd_mean: Option<Duration>,
    pub owd_max: Option<Duration>,
}

/// How a report is laid out on the wire. The controller gets the neutral
/// record (DESIGN §2) as these bytes carry it: arrival resolution and packet
/// order follow the format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportFormat {
    /// Transport-wide congestion control feedback
    /// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): arrivals in
    /// 250 µs deltas from a 64 ms reference time. WebRTC's default (libwebrtc
    /// sends it whenever the transport-wide sequence extension is negotiated).
    #[default]
    Twcc,
    /// RFC 8888 congestion-control feedback: every packet's arrival time as a
    /// 1/1024 s offset before the report timestamp (§3.1).
    Rfc8888,
    /// RTCP receiver report (RFC 3550 §6.4.2: fraction lost, cumulative
    /// lost, jitter) with an extended report (RFC 3611): a Loss RLE block,
    /// a discard RLE block (RFC 7097) when packets were discarded, and a
    /// delay block for the one-way delay — the feedback FBRA §4.1 uses.
    RtcpXr,
}

/// What the receiver puts on the wire: per-packet arrivals on its own clock
/// and the report's own send time, so RTT samples exclude hold time
/// (Dumbo thesis §5.2.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverReport {
    pub flow: u16,
    /// Receiver clock when the report was sent.
    pub report_time: Time,
    /// (sequence, arrival time or None if lost), in the order the receiver
    /// settled them (a reordered packet after the gap it filled).
    pub arrivals: Vec<(u64, Option<Time>)>,
    pub stats: ReportStats,
    /// Media sequence numbers to retransmit (RTCP generic NACK, RFC 4585 §6.2.1).
    pub nacks: Vec<u32>,
    /// Key-frame request (RTCP PLI, RFC 4585 §6.3.1).
    pub pli: bool,
    /// Transport sequences of the late discards counted in `stats`.
    pub late: Vec<u64>,
    /// The receiver-side estimator's rate (REMB, NADA), if the flow has one.
    pub estimate: Option<DataRate>,
    pub format: ReportFormat,
    /// Transport-wide feedback packet count of this report's first feedback
    /// packet (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
    pub fb_count: u8,
    /// The report as the wire carries it under `Twcc` or `Rfc8888`: the one
    /// compound RTCP datagram `to_compound()` gives, encoded once by the
    /// receiver (`seal`). Empty under `RtcpXr`, or for a report built by
    /// hand, which is then encoded where its bytes are needed.
    pub datagram: Vec<u8>,
}

/// SSRCs on the report: one media stream per flow, the receiver's own SSRC
/// one above it (the simulator has no SSRC of its own; any fixed pair works).
pub fn ssrcs(flow: u16) -> (u32, u32) {
    let media = 0x5254_0000 | (u32::from(flow) << 1);
    (media | 1, media)
}

/// RFC 3550 §4 NTP middle 32 bits (16.16 seconds) of a receiver clock time,
/// as the RFC 8888 report timestamp carries it.
fn ntp_middle(t: Time) -> u32 {
    ((i128::from(t.as_micros()) << 16) / 1_000_000) as u32
}

impl ReceiverReport {
    /// The transport feedback part as RTCP packets in the report's format:
    /// transport-wide feedback (reference time floored to 64 ms at the first
    /// arrival of each run, 250 µs deltas), or RFC 8888 blocks with 1/1024 s
    /// offsets before the report timestamp; one packet or block per run of
    /// consecutive sequences.
    /// Empty under `RtcpXr` (no per-packet arrivals on that wire). A packet
    /// listed lost and then arrived (reordered) is reported arrived.
    pub fn feedback_packets(&self) -> Vec<RtcpPacket> {
        let (sender, media) = ssrcs(self.flow);
        let mut sorted: Vec<(u64, Option<Time>)> = self.arrivals.clone();
        sorted.sort_by_key(|&(s, a)| (s, a.is_none()));
        sorted.dedup_by_key(|&mut (s, _)| s);
        if sorted.is_empty() {
            return Vec::new();
        }
        match self.format {
            // One feedback packet (TWCC) or block (RFC 8888) per run of
            // consecutive sequences: a gap can only be a reordered packet
            // reported before, which must not be reported again as lost.
            ReportFormat::Twcc => {
                let mut builder = TransportFeedbackBuilder::new(sender, media, self.fb_count);
                let mut out = Vec::new();
                for run in sorted.chunk_by(|a, b| b.0 == a.0 + 1) {
                    let reference = run.iter().find_map(|a| a.1).unwrap_or(self.report_time);
                    let packets: Vec<(u16, Option<i64>)> =
                        run.iter().map(|&(s, a)| (s as u16, a.map(|t| t.as_micros()))).collect();
                    out.extend(
                        builder
                            .build(run[0].0 as u16, reference.as_micros(), &packets)
                            .into_iter()
                            .map(RtcpPacket::TransportFeedback),
                    );
                }
                out
            }
            ReportFormat::Rfc8888 => {
                // Blocks of at most 2^14 sequences (§3.1), as many to a packet
                // as its 16-bit length allows.
                const EMPTY: usize = 4 + 8; // RTCP header, sender SSRC, report timestamp
                let ts = ntp_middle(self.report_time);
                let packet = |blocks| {
                    CongestionControlFeedback::new(sender, blocks, ts).ok().map(RtcpPacket::CongestionControlFeedback)
                };
                let (mut out, mut blocks, mut size) = (Vec::new(), Vec::new(), EMPTY);
                for run in sorted.chunk_by(|a, b| b.0 == a.0 + 1) {
                    for chunk in run.chunks(MAX_CCFB_REPORTS) {
                        let reports = chunk
                            .iter()
                            .map(|&(_, a)| a.map(|t| CcfbReport::from_offset_us((self.report_time - t).as_micros(), 0)))
                            .collect();
                        let block = CcfbBlock { ssrc: media, begin_seq: chunk[0].0 as u16, reports };
                        if !blocks.is_empty() && size + block.size() > MAX_PACKET_BYTES {
                            out.extend(packet(std::mem::take(&mut blocks)));
                            size = EMPTY;
                        }
                        size += block.size();
                        blocks.push(block);
                    }
                }
                out.extend(packet(blocks));
                out
            }
            ReportFormat::RtcpXr => Vec::new(),
        }
    }

    /// Encodes the datagram (`Twcc`, `Rfc8888`) from the report's fields;
    /// the receiver calls it once the report is complete. Returns how many
    /// transport-wide feedback packets it holds, which the feedback packet
    /// count advances by (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
    pub fn seal(&mut self) -> u8 {
        if self.format == ReportFormat::RtcpXr {
            self.datagram = Vec::new();
            return 0;
        }
        let compound = self.to_compound();
        let twcc = compound.packets.iter().filter(|p| matches!(p, RtcpPacket::TransportFeedback(_))).count();
        // Room for the usual report (headers, chunks, one-byte deltas)
        // without a sizing pass over it first.
        let mut out = Vec::with_capacity(64 + 3 * self.arrivals.len() + 4 * self.nacks.len());
        compound.encode(&mut out);
        self.datagram = out;
        twcc as u8
    }

    /// The datagram's bytes: as sealed, or encoded now.
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        if self.datagram.is_empty() {
            std::borrow::Cow::Owned(self.to_compound().to_bytes())
        } else {
            std::borrow::Cow::Borrowed(&self.datagram)
        }
    }

    /// The whole report as one reduced-size compound RTCP datagram (RFC 3550
    /// §6.1, RFC 5506 §3): the transport feedback, then a generic NACK (RFC
    /// 4585 §6.2.1, 16-bit media sequences), a PLI (§6.3.1) and a REMB
    /// (draft-alvestrand-rmcat-remb-03 §2.2) when the report carries them.
    pub fn to_compound(&self) -> Compound {
        let (sender, media) = ssrcs(self.flow);
        let mut packets = self.feedback_packets();
        if !self.nacks.is_empty() {
            if let Ok(n) = Nack::from_seqs(sender, media, self.nacks.iter().map(|&s| s as u16)) {
                packets.push(RtcpPacket::Nack(n));
            }
        }
        if self.pli {
            packets.push(RtcpPacket::Pli(Pli { sender_ssrc: sender, media_ssrc: media }));
        }
        if let Some(r) = self.estimate.and_then(|e| Remb::new(sender, e.bps(), vec![media]).ok()) {
            packets.push(RtcpPacket::Remb(r));
        }
        Compound::new(packets)
    }
}

/// 16-bit chunks an RFC 3611 §4.1.1 run-length encoding takes for a list of
/// outcomes in sequence order: a run of 15 or more equal outcomes is one
/// run-length chunk (up to 16,383 packets), anything shorter goes into
/// bit-vector chunks of 15 packets. Greedy, as the RFC's example encoder.
pub fn rle_chunks(outcomes: &[bool]) -> u64 {
    const BITS: usize = 15;
    const MAX_RUN: usize = 16_383;
    // Slices, not an index: the indexed loop came out of rustc 1.95 -O
    // counting one chunk per packet (31 for 31 alternating outcomes).
    let mut chunks = 0;
    let mut rest = outcomes;
    while let Some(&first) = rest.first() {
        let run = rest.iter().position(|&o| o != first).unwrap_or(rest.len());
        let take = if run >= BITS { run.min(MAX_RUN) } else { BITS.min(rest.len()) };
        rest = &rest[take..];
        chunks += 1;
    }
    chunks
}

/// Bytes of an RFC 3611 RLE block (Loss RLE §4.1, or RFC 7097's discard RLE
/// of the same layout): block header 4, SSRC 4, begin/end sequence 4, then
/// the chunks padded with null chunks to 32 bits.
fn rle_block(outcomes: &[bool]) -> u64 {
    12 + (2 * rle_chunks(outcomes)).div_ceil(4) * 4
}

impl ReceiverReport {
    /// Bytes this report takes on the wire. As `Twcc` or `Rfc8888`: IPv4 +
    /// UDP (28) and the encoded `to_compound()` datagram; late discards have
    /// no place in it (a simulator-side record for the recorder).
    ///
    /// As `RtcpXr`: IPv4 + UDP (28); an RR with one report block (RFC 3550
    /// §6.4.2: 8 + 24); the XR header (RFC 3611 §2: 8); a Loss RLE block over
    /// the report's sequence range; a discard RLE block over the same range
    /// when anything was discarded (RFC 7097); a delay block of RFC 6843's
    /// size (28) for the one-way delay; then NACK, PLI and estimate as above.
    pub fn wire_size(&self) -> DataSize {
        let mut bytes = match self.format {
            ReportFormat::Twcc | ReportFormat::Rfc8888 => {
                let bytes = if self.datagram.is_empty() { self.to_compound().wire_size() } else { self.datagram.len() };
                return DataSize::from_bytes(28 + bytes as u64);
            }
            ReportFormat::RtcpXr => {
                let received: Vec<bool> = self.arrivals.iter().map(|a| a.1.is_some()).collect();
                let mut b = 28 + 32 + 8 + rle_block(&received) + 28;
                if !self.late.is_empty() {
                    let mut late = self.late.clone();
                    late.sort_unstable();
                    let discarded: Vec<bool> = self.arrivals.iter().map(|a| late.binary_search(&a.0).is_ok()).collect();
                    b += rle_block(&discarded);
                }
                b
            }
        };
        if self.estimate.is_some() {
            bytes += 24;
        }
        if !self.nacks.is_empty() {
            let mut fci = 0u64;
            let mut base: Option<u32> = None;
            for &s in &self.nacks {
                if base.is_none_or(|b| s.wrapping_sub(b) > 16) {
                    base = Some(s);
                    fci += 1;
                }
            }
            bytes += 12 + 4 * fci;
        }
        if self.pli {
            bytes += 12;
        }
        DataSize::from_bytes(bytes)
    }
}

/// One packet's outcome as a controller sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PacketResult {
    pub seq: u64,
    pub kind: PacketKind,
    pub size: DataSize,
    pub send_time: Time,
    /// Arrival on the receiver's clock; `None` = reported lost.
    pub arrival: Option<Time>,
    pub probe_cluster: i32,
    /// The frame it carried, and where in it.
    pub pos: FramePos,
    /// Arrived, but too late for its frame (a late discard).
    pub late: bool,
}

/// A report joined with the sender's history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Feedback {
    /// Receiver clock when the report was sent.
    pub report_time: Time,
    /// Sender clock when the report arrived.
    pub received_at: Time,
    pub packets: Vec<PacketResult>,
    pub stats: ReportStats,
    /// The receiver-side estimate carried by the report, if any.
    pub estimate: Option<DataRate>,
}

impl Feedback {
    /// RTT sample from the newest acknowledged packet, excluding the time the
    /// receiver held it before reporting (same-clock difference on each side).
    pub fn rtt_sample(&self) -> Option<Duration> {
        self.rtt(self.packets.iter().rev().find(|p| p.arrival.is_some())?)
    }

    /// How long the receiver held `p` before sending this report; `None` if lost.
    pub fn hold(&self, p: &PacketResult) -> Option<Duration> {
        Some((self.report_time - p.arrival?).max(Duration::ZERO))
    }

    /// Round trip of `p` without the receiver's hold time (Dumbo thesis
    /// §5.2.1); at least 1 µs. `None` if lost.
    pub fn rtt(&self, p: &PacketResult) -> Option<Duration> {
        Some(((self.received_at - p.send_time) - self.hold(p)?).max(Duration::from_micros(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_size_counts_each_block() {
        let rep = |r: ReceiverReport| ReceiverReport { arrivals: vec![(0, None)], format: ReportFormat::Rfc8888, ..r };
        // IPv4/UDP 28 + RTCP 8 + block 8 + one entry padded to 4 + timestamp 4.
        assert_eq!(rep(ReceiverReport::default()).wire_size().bytes(), 52);
        let arrivals = vec![(0, None), (6, None)];
        // Sequences 0 and 6: a block each (a gap is a reordered packet
        // reported before), 8 + one entry padded to 4.
        assert_eq!(
            ReceiverReport { arrivals, format: ReportFormat::Rfc8888, ..Default::default() }.wire_size().bytes(),
            64
        );
        // Sequences 1..=17 fit one FCI, 40 needs a second.
        let nacks: Vec<u32> = (1..=17).chain([40]).collect();
        assert_eq!(rep(ReceiverReport { nacks, ..Default::default() }).wire_size().bytes(), 52 + 12 + 8);
        assert_eq!(rep(ReceiverReport { pli: true, ..Default::default() }).wire_size().bytes(), 64);
        let estimate = Some(DataRate::from_kbps(500));
        assert_eq!(rep(ReceiverReport { estimate, ..Default::default() }).wire_size().bytes(), 76);
        // Late discards have no place in the datagram.
        let late = vec![3, 4, 5, 9];
        assert_eq!(rep(ReceiverReport { late, ..Default::default() }).wire_size().bytes(), 52);
    }

    #[test]
    fn wire_size_is_the_encoded_datagram_plus_28() {
        let arrivals: Vec<(u64, Option<Time>)> =
            (0..100).map(|s| (s, Some(Time::from_millis(1000 + s as i64)))).collect();
        for format in [ReportFormat::Twcc, ReportFormat::Rfc8888] {
            let r =
                ReceiverReport { arrivals: arrivals.clone(), nacks: vec![3], pli: true, format, ..Default::default() };
            assert_eq!(r.wire_size().bytes(), 28 + r.to_compound().to_bytes().len() as u64);
        }
        // TWCC: header 20, one run-length chunk, 100 one-byte deltas, padded
        // to 124; 4 ticks each.
        let twcc = ReceiverReport { arrivals, ..Default::default() };
        assert_eq!(twcc.wire_size().bytes(), 28 + 124);
    }

    #[test]
    fn rle_takes_a_chunk_per_long_run_and_per_15_mixed_packets() {
        // RFC 3611 §4.1.1: 40 received in a row is one run-length chunk.
        assert_eq!(rle_chunks(&[true; 40]), 1);
        // 20 received, 1 lost, 20 received: a run, then a bit vector holding
        // the loss and the next 14, then a run of the last 6 (short: a vector).
        let mut v = vec![true; 20];
        v.push(false);
        v.extend([true; 20]);
        assert_eq!(rle_chunks(&v), 3);
        assert_eq!(rle_chunks(&[]), 0);
        // Alternating outcomes: one vector per 15 packets.
        let alt: Vec<bool> = (0..31).map(|i| i % 2 == 0).collect();
        assert_eq!(rle_chunks(&alt), 3);
        // A run longer than 16,383 needs a second chunk.
        assert_eq!(rle_chunks(&vec![true; 16_384]), 2);
    }

    #[test]
    fn rtcp_xr_size_does_not_grow_with_received_packets() {
        let arrivals: Vec<(u64, Option<Time>)> = (0..100).map(|s| (s, Some(Time::ZERO))).collect();
        let xr = |arrivals: Vec<(u64, Option<Time>)>, late: Vec<u64>| {
            ReceiverReport { arrivals, late, format: ReportFormat::RtcpXr, ..Default::default() }.wire_size().bytes()
        };
        // 28 + RR 32 + XR 8 + Loss RLE (12 + one chunk padded to 4) + delay 28.
        assert_eq!(xr(arrivals.clone(), vec![]), 28 + 32 + 8 + 16 + 28);
        // The same 100 packets as RFC 8888: 2 bytes each.
        let rfc8888 =
            ReceiverReport { arrivals: arrivals.clone(), format: ReportFormat::Rfc8888, ..Default::default() }
                .wire_size()
                .bytes();
        assert_eq!(rfc8888, 48 + 200);
        // Packet 50 lost and 70 discarded: the Loss RLE takes run, vector, run
        // (3 chunks, 8 bytes), the discard RLE the same.
        let mut lossy = arrivals;
        lossy[50].1 = None;
        assert_eq!(xr(lossy, vec![70]), 28 + 32 + 8 + 20 + 28 + 20);
    }

    #[test]
    fn rtt_excludes_hold_time() {
        let fb = Feedback {
            report_time: Time::from_millis(140),
            received_at: Time::from_millis(165),
            packets: vec![PacketResult {
                seq: 1,
                kind: PacketKind::Media,
                size: DataSize::from_bytes(1200),
                send_time: Time::from_millis(100),
                arrival: Some(Time::from_millis(125)),
                probe_cluster: -1,
                ..PacketResult::default()
            }],
            ..Feedback::default()
        };
        // 65 ms since send, 15 ms held at the receiver -> 50 ms RTT.
        assert_eq!(fb.rtt_sample(), Some(Duration::from_millis(50)));
    }
}
