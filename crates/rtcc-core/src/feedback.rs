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
    pub fn wire_size(&self) -> DataSize {
        let mut bytes = 28 + 8 + 8 + 4 + (2 * self.arrivals.len() as u64).div_ceil(4) * 4;
        if self.estimate.is_some() {
            bytes += 24;
        }
        if !self.late.is_empty() {
            let runs = 1 + self.late.windows(2).filter(|w| w[1] != w[0] + 1).count() as u64;
            bytes += 8 + (2 * runs).div_ceil(4) * 4;
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
