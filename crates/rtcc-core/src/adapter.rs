//! The sender's side of the report path, as libwebrtc's
//! TransportFeedbackAdapter: the receiver's report arrives as RTCP bytes;
//! this parses them with rtcc-wire, unwraps the 16-bit sequences and turns
//! quantised arrival deltas back into receiver-clock times, or RR + XR's
//! run-length outcomes into per-sequence ones, so a controller sees exactly
//! what the wire carried.

use crate::feedback::{ReceiverReport, ReportFormat, ReportStats, RrValues, VIDEO_CLOCK_HZ};
use crate::units::{DataRate, Duration, Time};
use rtcc_wire::rtcp::{CcfbReport, Compound, OwdBlock, RtcpPacket, XrBlock};
use rtcc_wire::Wire;

/// One reported sequence as the bytes give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Received at this time on the receiver's clock (TWCC, RFC 8888).
    Arrived(Time),
    /// Received, no time on the wire (RFC 3611 §4.1 Loss RLE); `discarded`
    /// when RFC 7097's discard RLE marks it.
    Received {
        discarded: bool,
    },
    Lost,
}

/// What a report's datagram carries, with sequences unwrapped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WireReport {
    pub format: ReportFormat,
    /// When the report was sent, on the receiver's clock, as the bytes give
    /// it: RFC 8888's report timestamp (§3.1, NTP middle 32 bits); under
    /// TWCC, which carries none, the newest arrival it reports (as
    /// libwebrtc's GoogCcNetworkController takes `max_recv_time` for the
    /// receiver's pending time); `None` without arrivals (RR + XR).
    /// `Feedback::hold` reads it against arrivals only.
    pub report_time: Option<Time>,
    /// In sequence order, each sequence once.
    pub packets: Vec<(u64, Outcome)>,
    /// Received and lost counted from `packets`; under `RtcpXr` also the RR's
    /// jitter, the discards and the OWD block's values (as the receiver
    /// measured them: its clock minus the sender's timestamps).
    pub stats: ReportStats,
    pub rr: Option<RrValues>,
    /// An RR block's LSR and DLSR (RFC 3550 §6.4.1), under any format: the
    /// sender turns them into its round trip (`sr::round_trip`).
    pub sr_echo: Option<(u32, u32)>,
    pub nacks: Vec<u32>,
    pub pli: bool,
    pub estimate: Option<DataRate>,
}

impl WireReport {
    /// (sequence, arrival time or `None`) as TWCC and RFC 8888 give them; a
    /// packet received without a time (RR + XR) reads `None` here too.
    pub fn arrivals(&self) -> Vec<(u64, Option<Time>)> {
        self.packets.iter().map(|&(s, o)| (s, if let Outcome::Arrived(t) = o { Some(t) } else { None })).collect()
    }
}

/// The newest sequence at or below `newest_sent` whose low `bits` bits are
/// `s`: as libwebrtc's adapter, against what the sender itself sent, so a run
/// of lost reports cannot shift later ones by 2^16.
fn unwrap_bits(s: u64, bits: u32, newest_sent: u64) -> u64 {
    let mask = (1u64 << bits) - 1;
    newest_sent.saturating_sub(newest_sent.wrapping_sub(s) & mask)
}

fn unwrap(s: u16, newest_sent: u64) -> u64 {
    unwrap_bits(u64::from(s), 16, newest_sent)
}

/// At most one outcome per 16-bit sequence: what a report about packets the
/// sender sent can hold. Bytes that claim more (a 20-byte Loss RLE block
/// spans 65,535 sequences) are cut here, not expanded.
const MAX_OUTCOMES: usize = 1 << 16;

/// Whether `seq` is one the sender can have sent and a 16-bit field name:
/// at most `newest_sent`, at most 2^16 - 1 below it.
fn in_window(seq: u64, newest_sent: u64) -> bool {
    seq <= newest_sent && newest_sent - seq < 1 << 16
}

/// The sequences an RLE block reports on (RFC 3611 §4.1): from `begin_seq`,
/// only those that are 0 mod 2^T, one per outcome.
fn rle_seqs(begin_seq: u16, thinning: u8, newest_sent: u64) -> impl Iterator<Item = u64> {
    let step = 1u64 << (thinning & 0xf);
    let begin = unwrap(begin_seq, newest_sent);
    // The low 16 bits survive unwrapping and 2^16 is a multiple of step.
    let first = begin + (step - u64::from(begin_seq) % step) % step;
    (0..).map(move |i| first + i * step)
}

/// Better outcomes first: a sequence reported twice (overlapping blocks,
/// a reordered packet) counts as received if any report says so.
fn rank(o: &Outcome) -> u8 {
    match o {
        Outcome::Arrived(_) => 0,
        Outcome::Received { .. } => 1,
        Outcome::Lost => 2,
    }
}

/// `report` as decoded from its bytes. Arrival times are absolute on the
/// receiver's clock: TWCC's reference time × 64 ms plus the deltas (as
/// libwebrtc anchors them), RFC 8888's report time minus each offset;
/// controllers use them only as differences, and `Feedback::hold` against
/// `report_time`. Under `RtcpXr`, outcomes per sequence from the Loss and
/// discard RLE blocks, the RR block and the OWD block; no arrival times.
/// NACKs' 16-bit media sequences (RFC 4585 §6.2.1 PID and BLP) are
/// unwrapped against `newest_media`, the newest media sequence sent. Bytes
/// that do not parse leave an empty report (a lost report); sequences the
/// sender cannot have sent are dropped, each sequence is reported once, in
/// sequence order, and at most [`MAX_OUTCOMES`] of them. Transport
/// sequences come back in the sender's numbering from 0: the wire's are
/// `transport_base` higher.
pub fn adapt(report: &ReceiverReport, newest_sent: u64, newest_media: u32, transport_base: u16) -> WireReport {
    // The wire numbers transport sequences from `transport_base` (RFC 3550
    // §5.1's random start); read them in that numbering, then take it off.
    let base = u64::from(transport_base);
    let top = newest_sent + base;
    let mut out = WireReport {
        format: report.format,
        report_time: None,
        packets: Vec::with_capacity(report.arrivals.len()),
        ..WireReport::default()
    };
    let Ok(compound) = Compound::decode(&report.bytes()) else { return out };
    let mut discarded: Vec<u64> = Vec::new();
    for p in compound.packets {
        match p {
            RtcpPacket::TransportFeedback(f) => {
                for (s, at) in f.arrivals().into_iter().take(MAX_OUTCOMES.saturating_sub(out.packets.len())) {
                    let outcome = at.map_or(Outcome::Lost, |t| Outcome::Arrived(Time::from_micros(t)));
                    out.packets.push((unwrap(s, top), outcome));
                }
            }
            RtcpPacket::CongestionControlFeedback(f) => {
                let report_time = crate::sr::from_ntp_middle(f.report_timestamp);
                out.report_time = Some(report_time);
                for b in &f.blocks {
                    let room = MAX_OUTCOMES.saturating_sub(out.packets.len());
                    for (i, r) in b.reports.iter().enumerate().take(room) {
                        let seq = unwrap(b.begin_seq.wrapping_add(i as u16), top);
                        // RFC 8888 §3.1: over range (held > 8 s) is received at
                        // the largest offset the field holds; unavailable, at
                        // the report's time.
                        let outcome = r.map_or(Outcome::Lost, |r| {
                            let off = match r.ato {
                                CcfbReport::UNAVAILABLE => 0,
                                CcfbReport::OVER_RANGE => (0x1ffd * 1_000_000 + 512) / 1024,
                                _ => r.offset_us().unwrap_or(0),
                            };
                            Outcome::Arrived(report_time - Duration::from_micros(off))
                        });
                        out.packets.push((seq, outcome));
                    }
                }
            }
            // RFC 3550 §6.4.1: the report block on the media stream.
            RtcpPacket::ReceiverReport(rr) => {
                // §6.4.1: the block about this flow's media stream.
                let media = crate::feedback::ssrcs(report.flow).1;
                let Some(b) = rr.reports.iter().find(|b| b.ssrc == media) else { continue };
                out.sr_echo = Some((b.last_sr, b.delay_since_last_sr));
                // Under the other formats the RR gives the round trip only:
                // loss and jitter come from the transport feedback.
                if out.format == ReportFormat::RtcpXr {
                    out.rr = Some(RrValues {
                        fraction_lost: b.fraction_lost,
                        cumulative_lost: i64::from(b.cumulative_lost),
                        // The receiver counts cycles from its own first
                        // packet (RFC 3550 A.1): read only the low 16 bits.
                        highest_seq: unwrap(b.extended_highest_seq as u16, top),
                        jitter: Duration::from_micros(i64::from(b.jitter) * 1_000_000 / VIDEO_CLOCK_HZ),
                        last_sr: b.last_sr,
                        delay_since_last_sr: b.delay_since_last_sr,
                    });
                }
            }
            RtcpPacket::Xr(xr) => {
                for block in xr.blocks {
                    match block {
                        // RFC 3611 §4.1: one outcome per 2^T-th sequence from begin_seq.
                        XrBlock::LossRle(b) => {
                            let seqs = rle_seqs(b.begin_seq, b.thinning, top);
                            for (seq, received) in seqs.zip(b.outcomes()) {
                                if seq > top || out.packets.len() >= MAX_OUTCOMES {
                                    break;
                                }
                                let outcome =
                                    if received { Outcome::Received { discarded: false } } else { Outcome::Lost };
                                out.packets.push((seq, outcome));
                            }
                        }
                        // RFC 7097 §3: E = 1 marks packets discarded for
                        // arriving too early, not late: not a congestion cue.
                        XrBlock::DiscardRle { early: true, .. } => {}
                        // RFC 7097 §3: the same layout, 1 = discarded.
                        XrBlock::DiscardRle { block: b, .. } => {
                            let seqs = rle_seqs(b.begin_seq, b.thinning, top);
                            for (seq, d) in seqs.zip(b.outcomes()) {
                                if seq > top || discarded.len() >= MAX_OUTCOMES {
                                    break;
                                }
                                if d {
                                    discarded.push(seq);
                                }
                            }
                        }
                        XrBlock::Owd(o) => {
                            let d = |u| Some(Duration::from_micros(OwdBlock::micros(u)));
                            out.stats.owd_min = d(o.min);
                            out.stats.owd_mean = d(o.mean);
                            out.stats.owd_max = d(o.max);
                            out.stats.owd_newest = d(o.newest);
                        }
                        XrBlock::Unknown { .. } => {}
                    }
                }
            }
            RtcpPacket::Nack(n) => {
                let room = MAX_OUTCOMES.saturating_sub(out.nacks.len());
                let seqs = n.pairs.iter().flat_map(|p| p.seqs());
                out.nacks
                    .extend(seqs.take(room).map(|s| unwrap_bits(u64::from(s), 16, u64::from(newest_media)) as u32));
            }
            RtcpPacket::Pli(_) => out.pli = true,
            RtcpPacket::Remb(r) => out.estimate = Some(DataRate::from_bps(r.bitrate.bps())),
            _ => {}
        }
    }
    // Back to the sender's own numbering; what would fall before its first
    // packet it never sent.
    out.packets.retain_mut(|(s, _)| s.checked_sub(base).map(|v| *s = v).is_some());
    discarded.retain_mut(|s| s.checked_sub(base).map(|v| *s = v).is_some());
    if let Some(rr) = &mut out.rr {
        rr.highest_seq = rr.highest_seq.saturating_sub(base);
    }
    // Sequence order, each once (sorted input stays O(n)).
    out.packets.retain(|&(s, _)| in_window(s, newest_sent));
    out.packets.sort_by(|a, b| a.0.cmp(&b.0).then(rank(&a.1).cmp(&rank(&b.1))));
    out.packets.dedup_by_key(|p| p.0);
    if !discarded.is_empty() {
        discarded.sort_unstable();
        for (seq, o) in &mut out.packets {
            if let Outcome::Received { discarded: d } = o {
                *d = discarded.binary_search(seq).is_ok();
            }
        }
    }
    for &(_, o) in &out.packets {
        match o {
            Outcome::Lost => out.stats.lost += 1,
            Outcome::Received { discarded: true } => {
                out.stats.received += 1;
                out.stats.late_discards += 1;
            }
            _ => out.stats.received += 1,
        }
    }
    if let Some(rr) = out.rr {
        out.stats.jitter = rr.jitter;
    }
    if out.format == ReportFormat::Twcc {
        out.report_time =
            out.packets.iter().filter_map(|p| if let Outcome::Arrived(t) = p.1 { Some(t) } else { None }).max();
    }
    out
}
