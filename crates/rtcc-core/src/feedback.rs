//! The neutral feedback record. Whatever the wire format (transport-wide-cc,
//! RFC 8888, receiver reports), the receiver produces a `ReceiverReport`; the
//! sender joins it with its send history into a `Feedback` before any
//! controller sees it (STYLE habit 3).

use crate::packet::{FramePos, PacketKind};
use crate::units::{DataRate, DataSize, Duration, Time};

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

/// How a report is laid out on the wire; the controller sees the same
/// neutral record either way (DESIGN §2), only the bytes differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportFormat {
    /// RFC 8888 congestion-control feedback: every packet's arrival time.
    #[default]
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
    /// (sequence, arrival time or None if lost), in sequence order.
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
    /// Bytes this report takes on the wire, as reduced-size RTCP (RFC 5506:
    /// no RR/SR in front): IPv4 + UDP (28); an RFC 8888 congestion-control
    /// feedback packet with one block for the transport-wide sequence (RTCP
    /// header 8, block header 8, 2 bytes per packet padded to 4, report
    /// timestamp 4) — per-stream blocks as RFC 8888 has them would add 8
    /// bytes per extra stream; a generic NACK if any (RFC 4585 §6.2.1: 12 +
    /// 4 per FCI; one FCI covers a sequence and the 16 after it; `nacks`
    /// ascending); a PLI if asked (§6.3.1: 12); a REMB-style estimate if any
    /// (draft-alvestrand-rmcat-remb: 24 with one SSRC); and late discards as
    /// an RFC 7097 discard-RLE block (8 + 2 per run of consecutive sequences).
    ///
    /// As `RtcpXr`: IPv4 + UDP (28); an RR with one report block (RFC 3550
    /// §6.4.2: 8 + 24); the XR header (RFC 3611 §2: 8); a Loss RLE block over
    /// the report's sequence range; a discard RLE block over the same range
    /// when anything was discarded (RFC 7097); a delay block of RFC 6843's
    /// size (28) for the one-way delay; then NACK, PLI and estimate as above.
    pub fn wire_size(&self) -> DataSize {
        let mut bytes = match self.format {
            ReportFormat::Rfc8888 => {
                let mut b = 28 + 8 + 8 + 4 + (2 * self.arrivals.len() as u64).div_ceil(4) * 4;
                if !self.late.is_empty() {
                    let runs = 1 + self.late.windows(2).filter(|w| w[1] != w[0] + 1).count() as u64;
                    b += 8 + (2 * runs).div_ceil(4) * 4;
                }
                b
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
        let base = ReceiverReport::default();
        // IPv4/UDP 28 + RTCP 8 + block 8 + timestamp 4.
        assert_eq!(base.wire_size().bytes(), 48);
        let arrivals = vec![(0, None); 7];
        // 14 bytes of packet entries, padded to 16.
        assert_eq!(ReceiverReport { arrivals, ..Default::default() }.wire_size().bytes(), 64);
        // Sequences 1..=17 fit one FCI, 40 needs a second.
        let nacks: Vec<u32> = (1..=17).chain([40]).collect();
        assert_eq!(ReceiverReport { nacks, ..Default::default() }.wire_size().bytes(), 48 + 12 + 8);
        assert_eq!(ReceiverReport { pli: true, ..Default::default() }.wire_size().bytes(), 60);
        let estimate = Some(DataRate::from_kbps(500));
        assert_eq!(ReceiverReport { estimate, ..Default::default() }.wire_size().bytes(), 72);
        // Runs 3-5 and 9: two runs, 4 bytes, plus the block header.
        let late = vec![3, 4, 5, 9];
        assert_eq!(ReceiverReport { late, ..Default::default() }.wire_size().bytes(), 48 + 12);
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
        let rfc8888 = ReceiverReport { arrivals: arrivals.clone(), ..Default::default() }.wire_size().bytes();
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
