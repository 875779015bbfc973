//! Sender and receiver reports (RFC 3550 §6.4.1, §6.4.2).

use super::{be32, check_count, check_size, pt, Body, MAX_COUNT};
use crate::WireError;

/// One reception report block (RFC 3550 §6.4.1), 24 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportBlock {
    /// SSRC of the source this block reports on.
    pub ssrc: u32,
    /// Fraction lost since the previous report, in 1/256 (§6.4.1).
    pub fraction_lost: u8,
    /// Cumulative packets lost, a 24-bit signed field (§6.4.1: duplicates can
    /// make it negative): −2²³ ..= 2²³−1.
    pub cumulative_lost: i32,
    /// Extended highest sequence number received: cycles << 16 | sequence.
    pub extended_highest_seq: u32,
    /// Interarrival jitter in RTP timestamp units (§6.4.1, A.8).
    pub jitter: u32,
    /// Middle 32 bits of the last SR's NTP timestamp, 0 if none.
    pub last_sr: u32,
    /// Delay since that SR in 1/65536 s, 0 if none.
    pub delay_since_last_sr: u32,
}

pub const REPORT_BLOCK_BYTES: usize = 24;
const CUMULATIVE_MIN: i32 = -(1 << 23);
const CUMULATIVE_MAX: i32 = (1 << 23) - 1;

impl ReportBlock {
    /// A block, refused if `cumulative_lost` does not fit 24 signed bits.
    pub fn new(
        ssrc: u32,
        fraction_lost: u8,
        cumulative_lost: i32,
        extended_highest_seq: u32,
        jitter: u32,
        last_sr: u32,
        delay_since_last_sr: u32,
    ) -> Result<Self, WireError> {
        let b = ReportBlock {
            ssrc,
            fraction_lost,
            cumulative_lost,
            extended_highest_seq,
            jitter,
            last_sr,
            delay_since_last_sr,
        };
        b.check()?;
        Ok(b)
    }

    pub fn check(&self) -> Result<(), WireError> {
        if !(CUMULATIVE_MIN..=CUMULATIVE_MAX).contains(&self.cumulative_lost) {
            return Err(WireError::invalid(
                "report block",
                "cumulative lost",
                format!("{} outside the 24-bit signed range", self.cumulative_lost),
            ));
        }
        Ok(())
    }

    /// Clamps a loss count to the 24-bit field, as RFC 3550 A.3 does.
    pub fn clamp_cumulative_lost(lost: i64) -> i32 {
        lost.clamp(i64::from(CUMULATIVE_MIN), i64::from(CUMULATIVE_MAX)) as i32
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        // Two's complement in 24 bits (§6.4.1); masks a value out of range.
        let lost = (self.cumulative_lost as u32) & 0x00ff_ffff;
        out.extend_from_slice(&((u32::from(self.fraction_lost) << 24) | lost).to_be_bytes());
        out.extend_from_slice(&self.extended_highest_seq.to_be_bytes());
        out.extend_from_slice(&self.jitter.to_be_bytes());
        out.extend_from_slice(&self.last_sr.to_be_bytes());
        out.extend_from_slice(&self.delay_since_last_sr.to_be_bytes());
    }

    pub(crate) fn decode(b: &[u8]) -> Result<Self, WireError> {
        WireError::need("report block", b, REPORT_BLOCK_BYTES)?;
        let w = be32(b, 4);
        // Sign-extend the 24-bit field.
        let cumulative_lost = ((w << 8) as i32) >> 8;
        Ok(ReportBlock {
            ssrc: be32(b, 0),
            fraction_lost: (w >> 24) as u8,
            cumulative_lost,
            extended_highest_seq: be32(b, 8),
            jitter: be32(b, 12),
            last_sr: be32(b, 16),
            delay_since_last_sr: be32(b, 20),
        })
    }
}

/// The sender info of an SR (RFC 3550 §6.4.1), 20 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderInfo {
    /// NTP timestamp, 32.32 fixed point seconds since 1900.
    pub ntp: u64,
    pub rtp_timestamp: u32,
    pub packet_count: u32,
    pub octet_count: u32,
}

impl SenderInfo {
    /// The middle 32 bits of the NTP timestamp, what a receiver echoes as LSR
    /// (§6.4.1).
    pub fn ntp_middle(&self) -> u32 {
        (self.ntp >> 16) as u32
    }
}

/// Report blocks and the profile-specific extension shared by SR and RR.
fn check_reports(what: &'static str, reports: &[ReportBlock], extension: &[u8], fixed: usize) -> Result<(), WireError> {
    check_count(what, "report count", reports.len())?;
    for r in reports {
        r.check()?;
    }
    if !extension.len().is_multiple_of(4) {
        return Err(WireError::invalid(
            what,
            "profile extension",
            format!("{} bytes, not a multiple of 4", extension.len()),
        ));
    }
    check_size(what, 4 + fixed + REPORT_BLOCK_BYTES * reports.len() + extension.len())
}

fn encode_reports(out: &mut Vec<u8>, reports: &[ReportBlock], extension: &[u8]) {
    for r in reports.iter().take(MAX_COUNT) {
        r.encode(out);
    }
    out.extend_from_slice(&extension[..extension.len() - extension.len() % 4]);
}

fn decode_reports(what: &'static str, count: u8, b: &[u8]) -> Result<(Vec<ReportBlock>, Vec<u8>), WireError> {
    let n = usize::from(count);
    WireError::need(what, b, n * REPORT_BLOCK_BYTES)?;
    let reports = b.chunks_exact(REPORT_BLOCK_BYTES).take(n).map(ReportBlock::decode).collect::<Result<Vec<_>, _>>()?;
    let extension = &b[n * REPORT_BLOCK_BYTES..];
    if !extension.len().is_multiple_of(4) {
        return Err(WireError::invalid(
            what,
            "profile extension",
            format!("{} bytes, not a multiple of 4", extension.len()),
        ));
    }
    Ok((reports, extension.to_vec()))
}

fn reports_size(reports: &[ReportBlock], extension: &[u8]) -> usize {
    REPORT_BLOCK_BYTES * reports.len().min(MAX_COUNT) + extension.len() / 4 * 4
}

/// Sender report, PT 200 (RFC 3550 §6.4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderReport {
    pub ssrc: u32,
    pub info: SenderInfo,
    /// At most 31 (the 5-bit RC); §6.4 sends more in further RRs.
    pub reports: Vec<ReportBlock>,
    /// Profile-specific extension (§6.4.1), a multiple of 4 bytes.
    pub extension: Vec<u8>,
}

impl SenderReport {
    pub fn new(ssrc: u32, info: SenderInfo, reports: Vec<ReportBlock>) -> Result<Self, WireError> {
        let sr = SenderReport { ssrc, info, reports, extension: Vec::new() };
        sr.check()?;
        Ok(sr)
    }
    pub fn check(&self) -> Result<(), WireError> {
        check_reports("SR", &self.reports, &self.extension, 24)
    }
}

impl Body for SenderReport {
    const WHAT: &'static str = "SR";
    const PT: u8 = pt::SR;
    fn count(&self) -> u8 {
        self.reports.len().min(MAX_COUNT) as u8
    }
    fn body_size(&self) -> usize {
        24 + reports_size(&self.reports, &self.extension)
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        out.extend_from_slice(&self.info.ntp.to_be_bytes());
        out.extend_from_slice(&self.info.rtp_timestamp.to_be_bytes());
        out.extend_from_slice(&self.info.packet_count.to_be_bytes());
        out.extend_from_slice(&self.info.octet_count.to_be_bytes());
        encode_reports(out, &self.reports, &self.extension);
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        WireError::need("SR", b, 24)?;
        let ntp = (u64::from(be32(b, 4)) << 32) | u64::from(be32(b, 8));
        let info = SenderInfo { ntp, rtp_timestamp: be32(b, 12), packet_count: be32(b, 16), octet_count: be32(b, 20) };
        let (reports, extension) = decode_reports("SR", count, &b[24..])?;
        Ok(SenderReport { ssrc: be32(b, 0), info, reports, extension })
    }
}

/// Receiver report, PT 201 (RFC 3550 §6.4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverReport {
    pub ssrc: u32,
    /// At most 31 (the 5-bit RC).
    pub reports: Vec<ReportBlock>,
    /// Profile-specific extension (§6.4.2), a multiple of 4 bytes.
    pub extension: Vec<u8>,
}

impl ReceiverReport {
    pub fn new(ssrc: u32, reports: Vec<ReportBlock>) -> Result<Self, WireError> {
        let rr = ReceiverReport { ssrc, reports, extension: Vec::new() };
        rr.check()?;
        Ok(rr)
    }
    pub fn check(&self) -> Result<(), WireError> {
        check_reports("RR", &self.reports, &self.extension, 4)
    }
}

impl Body for ReceiverReport {
    const WHAT: &'static str = "RR";
    const PT: u8 = pt::RR;
    fn count(&self) -> u8 {
        self.reports.len().min(MAX_COUNT) as u8
    }
    fn body_size(&self) -> usize {
        4 + reports_size(&self.reports, &self.extension)
    }
    fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ssrc.to_be_bytes());
        encode_reports(out, &self.reports, &self.extension);
    }
    fn decode_body(count: u8, b: &[u8]) -> Result<Self, WireError> {
        WireError::need("RR", b, 4)?;
        let (reports, extension) = decode_reports("RR", count, &b[4..])?;
        Ok(ReceiverReport { ssrc: be32(b, 0), reports, extension })
    }
}
