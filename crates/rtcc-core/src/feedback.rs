//! The neutral feedback record. Whatever the wire format (transport-wide-cc,
//! RFC 8888, receiver reports), the receiver produces a `ReceiverReport`; the
//! sender joins it with its send history into a `Feedback` before any
//! controller sees it (STYLE habit 3).

use crate::packet::{FramePos, PacketKind};
use crate::units::{DataRate, DataSize, Duration, Time};
use rtcc_wire::rtcp::{
    CcfbBlock, CcfbReport, Compound, CongestionControlFeedback, Nack, OwdBlock, Pli, Remb, ReportBlock, RleBlock,
    RtcpPacket, TransportFeedbackBuilder, Xr, XrBlock, MAX_CCFB_REPORTS, MAX_PACKET_BYTES,
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
    /// Media packets rebuilt from FEC parity: the receiver's own count. No
    /// report format carries it (RFC 5725's post-repair block is not sent),
    /// so a controller's `Feedback` always reads 0.
    pub fec_recovered: u32,
    /// One-way delay (arrival on the receiver's clock − send time on the
    /// sender's) of the packets received: smallest, mean, largest; `None`
    /// when none arrived. Only differences are meaningful across unsynchronised
    /// clocks; in the simulator the clocks agree.
    pub owd_min: Option<Duration>,
    pub owd_mean: Option<Duration>,
    pub owd_max: Option<Duration>,
    /// One-way delay of the last packet received (the sample FBRA's port reads).
    pub owd_newest: Option<Duration>,
}

/// An RFC 3550 §6.4.1 report block's values, kept by the receiver as
/// RFC 3550 A.3 counts them (over the whole session, the fraction since
/// the previous report).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RrValues {
    /// Fraction lost since the previous report, in 1/256.
    pub fraction_lost: u8,
    /// Expected minus received since the first packet (negative with duplicates).
    pub cumulative_lost: i64,
    /// Highest sequence received (at the sender: unwrapped from the 32-bit
    /// extended highest sequence).
    pub highest_seq: u64,
    /// Interarrival jitter (RFC 3550 §6.4.1), 90 kHz units on the wire.
    pub jitter: Duration,
    /// LSR and DLSR (§6.4.1): the newest SR's NTP middle 32 bits and the
    /// time since it arrived in 1/65,536 s; 0 and 0 before any SR.
    pub last_sr: u32,
    pub delay_since_last_sr: u32,
}

/// RTP timestamp rate of video (RFC 3551 §5: 90 kHz), the unit of the RR's jitter.
pub const VIDEO_CLOCK_HZ: i64 = 90_000;

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
    /// one-way delay block (`rtcc_wire::rtcp::OwdBlock`) — the feedback FBRA
    /// §4.1 uses. No arrival times: controllers that read them are refused
    /// (`ControllerInfo::needs_arrivals`).
    RtcpXr,
}

/// What the receiver puts on the wire: per-packet arrivals on its own clock,
/// the report's own send time (which only RFC 8888 carries, so only there do
/// RTT samples exclude the whole hold time, Dumbo thesis §5.2.1), and the RR.
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
    /// The RR block's values: sent in every report under `RtcpXr`, and in
    /// one report a second under the others (`rr_due`), as a WebRTC
    /// receiver sends its RTCP receiver report beside transport feedback.
    pub rr: RrValues,
    /// This report carries the RR (always under `RtcpXr`).
    pub rr_due: bool,
    /// The receiver-side estimator's rate (REMB, NADA), if the flow has one.
    pub estimate: Option<DataRate>,
    pub format: ReportFormat,
    /// Transport-wide feedback packet count of this report's first feedback
    /// packet (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
    pub fb_count: u8,
    /// The report as the wire carries it: the one compound RTCP datagram
    /// `to_compound()` gives, encoded once by the receiver (`seal`). Empty
    /// for a report built by hand, which is then encoded where its bytes
    /// are needed.
    pub datagram: Vec<u8>,
}

/// SSRCs on the report: one media stream per flow, the receiver's own SSRC
/// one above it (the simulator has no SSRC of its own; any fixed pair works).
pub fn ssrcs(flow: u16) -> (u32, u32) {
    let media = 0x5254_0000 | (u32::from(flow) << 1);
    (media | 1, media)
}

impl ReceiverReport {
    /// The report's arrivals in sequence order, one entry per sequence (a
    /// packet listed lost and then arrived, reordered, is reported arrived).
    fn by_sequence(&self) -> Vec<(u64, Option<Time>)> {
        let mut sorted: Vec<(u64, Option<Time>)> = self.arrivals.clone();
        sorted.sort_by_key(|&(s, a)| (s, a.is_none()));
        sorted.dedup_by_key(|&mut (s, _)| s);
        sorted
    }

    /// The transport feedback part as RTCP packets in the report's format:
    /// transport-wide feedback (reference time floored to 64 ms at the first
    /// arrival of each run, 250 µs deltas), or RFC 8888 blocks with 1/1024 s
    /// offsets before the report timestamp; one packet or block per run of
    /// consecutive sequences. Under `RtcpXr`, the RR and XR (`rtcp_xr`).
    pub fn feedback_packets(&self) -> Vec<RtcpPacket> {
        let (sender, media) = ssrcs(self.flow);
        if self.format == ReportFormat::RtcpXr {
            return self.rtcp_xr();
        }
        let sorted = self.by_sequence();
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
                let ts = crate::sr::ntp_middle(self.report_time);
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
            ReportFormat::RtcpXr => self.rtcp_xr(),
        }
    }

    /// The RR (RFC 3550 §6.4.2) with one report block on the media stream:
    /// `rr`'s values, LSR and DLSR echoing the newest sender report.
    fn receiver_report(&self) -> RtcpPacket {
        let (sender, media) = ssrcs(self.flow);
        let rr = &self.rr;
        // RFC 3550 A.8: jitter in timestamp units, here 90 kHz (RFC 3551 §5).
        let jitter = (rr.jitter.as_micros() * VIDEO_CLOCK_HZ / 1_000_000).clamp(0, i64::from(u32::MAX)) as u32;
        let block = ReportBlock {
            ssrc: media,
            fraction_lost: rr.fraction_lost,
            cumulative_lost: ReportBlock::clamp_cumulative_lost(rr.cumulative_lost),
            extended_highest_seq: rr.highest_seq as u32,
            jitter,
            last_sr: rr.last_sr,
            delay_since_last_sr: rr.delay_since_last_sr,
        };
        RtcpPacket::ReceiverReport(rtcc_wire::rtcp::ReceiverReport {
            ssrc: sender,
            reports: vec![block],
            extension: Vec::new(),
        })
    }

    /// RR + XR (FBRA §4.1): an RR with one report block (RFC 3550 §6.4.2,
    /// `receiver_report`), then one XR (RFC 3611 §2) holding, per run of
    /// consecutive sequences, a Loss RLE block (§4.1; T = 0) and, for a run
    /// with a late discard, a discard RLE block (RFC 7097 §3, E = 0: late),
    /// and an OWD block (`OwdBlock`) when anything arrived.
    ///
    /// Sequences: the flow's one transport-wide sequence (media, RTX, FEC,
    /// padding) serves as the stream's RTP sequence, as ULPFEC sent in RED
    /// (RFC 2198, RFC 5109 §9) shares the media stream's sequence space; its
    /// low 16 bits go on the wire, its low 32 bits are the extended highest
    /// sequence (RFC 3550 A.1: cycles << 16 | sequence).
    fn rtcp_xr(&self) -> Vec<RtcpPacket> {
        let (sender, media) = ssrcs(self.flow);
        let mut out = vec![self.receiver_report()];
        let sorted = self.by_sequence();
        let mut late = self.late.clone();
        late.sort_unstable();
        let mut blocks = Vec::new();
        // A run is cut at 2^16 - 1 packets: begin/end are 16-bit (§4.1).
        for run in sorted.chunk_by(|a, b| b.0 == a.0 + 1) {
            for run in run.chunks(usize::from(u16::MAX)) {
                let begin = run[0].0 as u16;
                let received: Vec<bool> = run.iter().map(|a| a.1.is_some()).collect();
                blocks.push(XrBlock::LossRle(RleBlock::from_outcomes(media, begin, &received)));
                let discarded: Vec<bool> = run.iter().map(|a| late.binary_search(&a.0).is_ok()).collect();
                if discarded.contains(&true) {
                    let block = RleBlock::from_outcomes(media, begin, &discarded);
                    blocks.push(XrBlock::DiscardRle { early: false, block });
                }
            }
        }
        let st = &self.stats;
        if let (Some(min), Some(mean), Some(max)) = (st.owd_min, st.owd_mean, st.owd_max) {
            let u = |d: Duration| OwdBlock::units_from_micros(d.as_micros());
            let newest = st.owd_newest.unwrap_or(max);
            blocks.push(XrBlock::Owd(OwdBlock {
                ssrc: media,
                min: u(min),
                mean: u(mean),
                max: u(max),
                newest: u(newest),
            }));
        }
        if !blocks.is_empty() {
            out.push(RtcpPacket::Xr(Xr { ssrc: sender, blocks }));
        }
        out
    }

    /// Encodes the datagram from the report's fields; the receiver calls it
    /// once the report is complete. Returns how many transport-wide feedback
    /// packets it holds, which the feedback packet count advances by
    /// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
    pub fn seal(&mut self) -> u8 {
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

    /// The whole report as one compound RTCP datagram (RFC 3550 §6.1;
    /// reduced-size, RFC 5506 §3, unless an RR is due): the RR when due, the
    /// transport feedback, then a generic NACK (RFC
    /// 4585 §6.2.1, 16-bit media sequences), a PLI (§6.3.1) and a REMB
    /// (draft-alvestrand-rmcat-remb-03 §2.2) when the report carries them.
    pub fn to_compound(&self) -> Compound {
        let (sender, media) = ssrcs(self.flow);
        let mut packets = Vec::new();
        // RFC 3550 §6.1: an RR first; `rtcp_xr` writes its own.
        if self.rr_due && self.format != ReportFormat::RtcpXr {
            packets.push(self.receiver_report());
        }
        packets.extend(self.feedback_packets());
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

impl ReceiverReport {
    /// Bytes this report takes on the wire: IPv4 + UDP (28) and the encoded
    /// `to_compound()` datagram, whatever the format. Late discards have a
    /// place in it only under `RtcpXr` (RFC 7097); the rest of the record
    /// (`stats`' FEC recoveries, exact arrival times) is the simulator's.
    pub fn wire_size(&self) -> DataSize {
        let bytes = if self.datagram.is_empty() { self.to_compound().wire_size() } else { self.datagram.len() };
        DataSize::from_bytes(28 + bytes as u64)
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
    /// Arrived, but too late for its frame (a late discard): from RFC 7097's
    /// discard RLE under `RtcpXr`; TWCC and RFC 8888 do not carry it (false).
    pub late: bool,
    /// Reported received without an arrival time (`RtcpXr`: RFC 3611's Loss
    /// RLE says received or lost, no more); `arrival` is then `None`. Read
    /// both through `received()`.
    pub received_untimed: bool,
}

impl PacketResult {
    /// Whether the report says it arrived, with a time or without.
    pub fn received(&self) -> bool {
        self.arrival.is_some() || self.received_untimed
    }
}

/// A report joined with the sender's history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Feedback {
    /// Receiver clock when the report was sent, as far as its bytes say
    /// (`adapter::WireReport::report_time`): RFC 8888's report timestamp;
    /// under TWCC, the newest arrival it reports; under RR + XR, which time
    /// no packet, the sender's `received_at`.
    pub report_time: Time,
    /// Sender clock when the report arrived.
    pub received_at: Time,
    /// The reported packets joined with the send history (send time, size,
    /// kind: the sender's own record); in sequence order under `RtcpXr`.
    pub packets: Vec<PacketResult>,
    /// As the report's bytes give them (`adapter::adapt`): received and lost
    /// counted from the report; under `RtcpXr` also jitter (RR), late
    /// discards (discard RLE) and the one-way delay (OWD block); under TWCC
    /// and RFC 8888 the one-way delay is the sender's, from the arrivals and
    /// its send times, and jitter, late discards and FEC recoveries are 0.
    /// The one-way delay is relative to the smallest seen on the flow unless
    /// the flow says the clocks agree (`SenderConfig::clocks_agree`).
    pub stats: ReportStats,
    /// The receiver-side estimate carried by the report, if any.
    pub estimate: Option<DataRate>,
    /// The format the report came in.
    pub format: ReportFormat,
    /// The RR block (`RtcpXr` only): fraction and cumulative lost, highest
    /// sequence, jitter.
    pub rr: Option<RrValues>,
    /// The round trip the report's RR block gives, on the sender's clock
    /// alone (RFC 3550 §6.4.1: arrival − LSR − DLSR, `sr::round_trip`): what
    /// a WebRTC sender's RTT is. `None` in a report without an RR (under
    /// TWCC and RFC 8888 one report a second has one) or before the
    /// receiver had an SR to echo.
    pub rtcp_rtt: Option<Duration>,
}

impl Feedback {
    /// RTT sample from the newest acknowledged packet, excluding the time the
    /// receiver held it before reporting as far as the report says it
    /// (same-clock difference on each side; under TWCC the newest packet's
    /// hold is 0, as libwebrtc's propagation RTT takes it).
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
        // Late discards have no place in an RFC 8888 (or TWCC) datagram.
        let late = vec![3, 4, 5, 9];
        assert_eq!(rep(ReceiverReport { late, ..Default::default() }).wire_size().bytes(), 52);
    }

    #[test]
    fn wire_size_is_the_encoded_datagram_plus_28() {
        let arrivals: Vec<(u64, Option<Time>)> =
            (0..100).map(|s| (s, Some(Time::from_millis(1000 + s as i64)))).collect();
        let stats = ReportStats { owd_min: Some(Duration::from_millis(20)), ..xr_stats() };
        for format in [ReportFormat::Twcc, ReportFormat::Rfc8888, ReportFormat::RtcpXr] {
            let r = ReceiverReport {
                arrivals: arrivals.clone(),
                nacks: vec![3],
                pli: true,
                late: vec![7],
                stats,
                format,
                ..Default::default()
            };
            assert_eq!(r.wire_size().bytes(), 28 + r.to_compound().to_bytes().len() as u64, "{format:?}");
            let mut sealed = r.clone();
            sealed.seal();
            assert_eq!(sealed.datagram, r.to_compound().to_bytes(), "{format:?}");
        }
        // TWCC: header 20, one run-length chunk, 100 one-byte deltas, padded
        // to 124; 4 ticks each.
        let twcc = ReceiverReport { arrivals, ..Default::default() };
        assert_eq!(twcc.wire_size().bytes(), 28 + 124);
    }

    fn xr_stats() -> ReportStats {
        let ms = |m| Some(Duration::from_millis(m));
        ReportStats { owd_min: ms(20), owd_mean: ms(25), owd_max: ms(40), owd_newest: ms(30), ..Default::default() }
    }

    #[test]
    fn rtcp_xr_size_does_not_grow_with_received_packets() {
        let arrivals: Vec<(u64, Option<Time>)> = (0..100).map(|s| (s, Some(Time::ZERO))).collect();
        let xr = |arrivals: Vec<(u64, Option<Time>)>, late: Vec<u64>| {
            let r = ReceiverReport {
                arrivals,
                late,
                stats: xr_stats(),
                format: ReportFormat::RtcpXr,
                ..Default::default()
            };
            r.wire_size().bytes()
        };
        // 28 + RR 32 + XR 8 + Loss RLE (12 + one chunk padded to 4) + OWD 24
        // (rtcc's block, `OwdBlock`; the estimate before the datagram was
        // encoded took RFC 6843's 28 as a stand-in).
        assert_eq!(xr(arrivals.clone(), vec![]), 28 + 32 + 8 + 16 + 24);
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
        assert_eq!(xr(lossy, vec![70]), 28 + 32 + 8 + 20 + 24 + 20);
    }

    /// The RR + XR datagram parses back (rtcc-wire) to the report's
    /// outcomes, RR values and OWD: what `adapter::adapt` reads.
    #[test]
    fn rtcp_xr_datagram_parses_back_to_the_outcomes() {
        let mut arrivals: Vec<(u64, Option<Time>)> =
            (65_530..65_570).map(|s| (s, (s % 7 != 0).then(|| Time::from_millis(s as i64)))).collect();
        // 65,534 was listed lost, then arrived (reordered): reported arrived.
        arrivals.push((65_534, Some(Time::from_millis(70_000))));
        let rr = RrValues {
            fraction_lost: 13,
            cumulative_lost: 9,
            highest_seq: 65_569,
            jitter: Duration::from_micros(1_500),
            last_sr: 0x0002_4000,
            delay_since_last_sr: 0x0000_0100,
        };
        let mut r = ReceiverReport {
            arrivals: arrivals.clone(),
            late: vec![65_540, 65_560],
            rr,
            stats: xr_stats(),
            format: ReportFormat::RtcpXr,
            ..Default::default()
        };
        r.seal();
        let c = Compound::decode(&r.datagram).unwrap();
        let RtcpPacket::ReceiverReport(rrp) = &c.packets[0] else { panic!("{:?}", c.packets[0]) };
        let b = &rrp.reports[0];
        assert_eq!((b.fraction_lost, b.cumulative_lost, b.extended_highest_seq), (13, 9, 65_569));
        // 1.5 ms at 90 kHz, RFC 3550 A.8.
        assert_eq!((b.jitter, b.last_sr, b.delay_since_last_sr), (135, 0x0002_4000, 0x0000_0100));
        let RtcpPacket::Xr(xr) = &c.packets[1] else { panic!("{:?}", c.packets[1]) };
        let mut received = Vec::new();
        let mut discarded = Vec::new();
        let mut owd = None;
        for block in &xr.blocks {
            match block {
                XrBlock::LossRle(l) => {
                    // The 16-bit begin wraps with the sequence.
                    assert_eq!(l.begin_seq, 65_530u64 as u16);
                    received.extend(l.outcomes());
                }
                XrBlock::DiscardRle { early, block } => {
                    assert!(!early);
                    discarded.extend(block.outcomes());
                }
                XrBlock::Owd(o) => owd = Some(*o),
                XrBlock::Unknown { .. } => panic!("unknown block"),
            }
        }
        let expect: Vec<bool> = (65_530..65_570u64).map(|s| s % 7 != 0 || s == 65_534).collect();
        assert_eq!(received, expect);
        let expect: Vec<bool> = (65_530..65_570u64).map(|s| s == 65_540 || s == 65_560).collect();
        assert_eq!(discarded, expect);
        let owd = owd.unwrap();
        // 16.16 seconds: within half a 15.3 µs unit.
        assert!((OwdBlock::micros(owd.newest) - 30_000).abs() <= 8, "{owd:?}");
        assert!((OwdBlock::micros(owd.max) - 40_000).abs() <= 8, "{owd:?}");
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
