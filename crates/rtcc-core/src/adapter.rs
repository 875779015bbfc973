//! The sender's side of the report path, as libwebrtc's
//! TransportFeedbackAdapter: the receiver's report arrives as RTCP bytes;
//! this parses them with rtcc-wire, unwraps the 16-bit transport sequences
//! and turns quantised arrival deltas back into receiver-clock times, so a
//! controller sees exactly what the wire carried.

use std::borrow::Cow;

use crate::feedback::{ReceiverReport, ReportFormat};
use crate::units::{Duration, Time};
use rtcc_wire::rtcp::{CcfbReport, Compound, RtcpPacket};
use rtcc_wire::Wire;

/// The newest sequence at or below `newest_sent` whose low 16 bits are `s`:
/// as libwebrtc's adapter, against what the sender itself sent, so a run of
/// lost reports cannot shift later ones by 2^16.
fn unwrap(s: u16, newest_sent: u64) -> u64 {
    newest_sent.saturating_sub(u64::from((newest_sent as u16).wrapping_sub(s)))
}

/// `report` with its arrivals (and PLI, REMB estimate) as decoded from
/// its bytes. Arrival times are absolute on the receiver's clock: TWCC's
/// reference time × 64 ms plus the deltas (as libwebrtc anchors them),
/// RFC 8888's report time minus each offset; controllers use them only
/// as differences, and `Feedback::hold` against `report_time` (kept from
/// the report: a simulator-side record, TWCC carries no report time).
/// NACK sequences are taken as the report lists them (the 16-bit media
/// sequences on the wire would need the media history to unwrap).
/// Under `RtcpXr` the report passes as it is (borrowed): its per-packet arrival
/// times, which RR + XR would not carry, still reach the controller. Bytes
/// that do not parse leave no arrivals (a lost report).
pub fn adapt(report: &ReceiverReport, newest_sent: u64) -> Cow<'_, ReceiverReport> {
    if report.format == ReportFormat::RtcpXr {
        return Cow::Borrowed(report);
    }
    let mut out = ReceiverReport {
        flow: report.flow,
        report_time: report.report_time,
        arrivals: Vec::with_capacity(report.arrivals.len()),
        stats: report.stats,
        nacks: report.nacks.clone(),
        pli: false,
        late: report.late.clone(),
        estimate: None,
        format: report.format,
        fb_count: report.fb_count,
        datagram: Vec::new(),
    };
    let Ok(compound) = Compound::decode(&report.bytes()) else { return Cow::Owned(out) };
    for p in compound.packets {
        match p {
            RtcpPacket::TransportFeedback(f) => {
                for (s, at) in f.arrivals() {
                    let seq = unwrap(s, newest_sent);
                    out.arrivals.push((seq, at.map(Time::from_micros)));
                }
            }
            RtcpPacket::CongestionControlFeedback(f) => {
                for b in &f.blocks {
                    for (i, r) in b.reports.iter().enumerate() {
                        let seq = unwrap(b.begin_seq.wrapping_add(i as u16), newest_sent);
                        // RFC 8888 §3.1: over range (held > 8 s) is received at
                        // the largest offset the field holds; unavailable, at
                        // the report's time.
                        let at = r.map(|r| {
                            let off = match r.ato {
                                CcfbReport::UNAVAILABLE => 0,
                                CcfbReport::OVER_RANGE => (0x1ffd * 1_000_000 + 512) / 1024,
                                _ => r.offset_us().unwrap_or(0),
                            };
                            report.report_time - Duration::from_micros(off)
                        });
                        out.arrivals.push((seq, at));
                    }
                }
            }
            RtcpPacket::Pli(_) => out.pli = true,
            RtcpPacket::Remb(r) => out.estimate = Some(crate::units::DataRate::from_bps(r.bitrate.bps())),
            _ => {}
        }
    }
    Cow::Owned(out)
}
