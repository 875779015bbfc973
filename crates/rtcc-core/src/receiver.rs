//! The receiving side of one call: reassembles frames, displays each frame as
//! soon as it is complete (low-latency rendering, in capture order), marks
//! frames that never complete as lost and those completing after a newer frame
//! was shown as late discards, detects freezes, and sends a feedback report
//! every `interval` with per-packet arrival times and its own send time.

use std::collections::VecDeque;

use crate::feedback::{ReceiverReport, ReportStats};
use crate::packet::Packet;
use crate::units::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverConfig {
    pub flow: u16,
    /// Feedback report interval (WebRTC sends transport-wide-cc feedback
    /// every 50–250 ms; 50 ms is its value at video rates).
    pub interval: Duration,
    /// A gap between displayed frames longer than this is a freeze
    /// (BurstRTC §5 and DESIGN §4: 100 ms).
    pub freeze_gap: Duration,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig { flow: 0, interval: Duration::from_millis(50), freeze_gap: Duration::from_millis(100) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum FrameStatus {
    Displayed = 0,
    /// Never completed before a newer frame was displayed.
    #[default]
    Lost = 1,
    /// Completed, but after a newer frame was displayed.
    Late = 2,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RecvFrame {
    pub received: u16,
    pub count: u16,
    pub complete: Option<Time>,
    pub display: Option<Time>,
    pub status: FrameStatus,
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

pub struct Receiver {
    cfg: ReceiverConfig,
    next_report: Option<Time>,
    arrivals: Vec<(u64, Option<Time>)>,
    /// Next sequence number expected; gaps below it are reported lost.
    next_seq: u64,
    stats: ReportStats,
    /// Frames not yet collected by the driver; `frames[i]` is frame `frame_base + i`.
    frames: VecDeque<RecvFrame>,
    frame_base: u32,
    last_displayed: Option<u32>,
    last_display_time: Option<Time>,
    freeze: FreezeStats,
    /// Recent inter-frame gaps (µs) for WebRTC's freeze rule.
    gaps: [i64; 30],
    gap_n: usize,
    gap_sum: i64,
    late_discards: u32,
    jitter_us: f64,
    last_transit: Option<i64>,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            cfg,
            next_report: None,
            arrivals: Vec::with_capacity(256),
            next_seq: 0,
            stats: ReportStats::default(),
            frames: VecDeque::with_capacity(256),
            frame_base: 0,
            last_displayed: None,
            last_display_time: None,
            freeze: FreezeStats::default(),
            gaps: [0; 30],
            gap_n: 0,
            gap_sum: 0,
            late_discards: 0,
            jitter_us: 0.0,
            last_transit: None,
        }
    }

    /// State of a frame not yet collected (default = nothing received).
    pub fn frame(&self, id: u32) -> RecvFrame {
        id.checked_sub(self.frame_base).and_then(|i| self.frames.get(i as usize)).copied().unwrap_or_default()
    }
    /// Display time of the first frame after `id` that was displayed.
    pub fn next_display_after(&self, id: u32) -> Option<Time> {
        let from = (id + 1).saturating_sub(self.frame_base) as usize;
        self.frames.iter().skip(from).find_map(|f| f.display)
    }
    /// Collect the record of frame `frame_base` (the oldest); later packets of
    /// it are ignored. Keeps memory flat over long calls.
    pub fn pop_frame(&mut self) -> RecvFrame {
        self.frame_base += 1;
        self.frames.pop_front().unwrap_or_default()
    }
    pub fn freeze(&self) -> FreezeStats {
        self.freeze
    }
    pub fn late_discards(&self) -> u32 {
        self.late_discards
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_report
    }

    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if self.next_report.is_none() {
            self.next_report = Some(now + self.cfg.interval);
        }
        // Gaps are reported as not received; transport-wide-cc does the same.
        while self.next_seq < pkt.seq {
            self.arrivals.push((self.next_seq, None));
            self.stats.lost += 1;
            self.next_seq += 1;
        }
        if pkt.seq >= self.next_seq {
            self.next_seq = pkt.seq + 1;
        }
        self.arrivals.push((pkt.seq, Some(now)));
        self.stats.received += 1;
        // RFC 3550 §6.4.1 interarrival jitter, J += (|D| - J) / 16.
        let transit = (now - pkt.send_time).as_micros();
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).abs() as f64;
            self.jitter_us += (d - self.jitter_us) / 16.0;
        }
        self.last_transit = Some(transit);
        if pkt.is_frame_data() {
            self.on_frame_packet(now, pkt);
        }
    }

    fn on_frame_packet(&mut self, now: Time, pkt: &Packet) {
        let Some(f) = pkt.frame.checked_sub(self.frame_base) else { return };
        let f = f as usize;
        if self.frames.len() <= f {
            self.frames.resize(f + 1, RecvFrame::default());
        }
        let fr = &mut self.frames[f];
        fr.count = pkt.count;
        if fr.complete.is_some() {
            return;
        }
        fr.received += 1;
        if fr.received < fr.count {
            return;
        }
        fr.complete = Some(now);
        if self.last_displayed.is_some_and(|d| pkt.frame <= d) {
            fr.status = FrameStatus::Late;
            self.late_discards += 1;
            self.stats.late_discards += 1;
            return;
        }
        fr.status = FrameStatus::Displayed;
        fr.display = Some(now);
        self.last_displayed = Some(pkt.frame);
        if let Some(prev) = self.last_display_time {
            self.on_gap(now - prev);
        }
        self.last_display_time = Some(now);
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

    /// A report due at `now`, if any. Reports are sent only when there is
    /// something to report.
    pub fn poll_report(&mut self, now: Time) -> Option<ReceiverReport> {
        let due = self.next_report?;
        if due > now {
            return None;
        }
        self.next_report = Some(due + self.cfg.interval);
        if self.arrivals.is_empty() {
            return None;
        }
        let arrivals = std::mem::replace(&mut self.arrivals, Vec::with_capacity(256));
        let mut stats = std::mem::take(&mut self.stats);
        stats.jitter = Duration::from_micros(self.jitter_us as i64);
        Some(ReceiverReport { flow: self.cfg.flow, report_time: now, arrivals, stats })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::DataSize;

    fn pkt(seq: u64, frame: u32, index: u16, count: u16) -> Packet {
        Packet {
            flow: 0,
            kind: PacketKind::Media,
            seq,
            size: DataSize::from_bytes(1000),
            send_time: Time::ZERO,
            frame,
            index,
            count,
            probe_cluster: -1,
            ..Packet::default()
        }
    }

    #[test]
    fn frames_lost_late_and_displayed() {
        let mut r = Receiver::new(ReceiverConfig::default());
        r.handle_packet(Time::from_millis(10), &pkt(0, 0, 0, 2));
        r.handle_packet(Time::from_millis(11), &pkt(1, 0, 1, 2));
        // Frame 1 loses its first packet; frame 2 completes first.
        r.handle_packet(Time::from_millis(45), &pkt(3, 1, 1, 2));
        r.handle_packet(Time::from_millis(80), &pkt(4, 2, 0, 1));
        r.handle_packet(Time::from_millis(90), &pkt(2, 1, 0, 2));
        assert_eq!(r.frame(0).display, Some(Time::from_millis(11)));
        assert_eq!(r.frame(2).status, FrameStatus::Displayed);
        assert_eq!(r.frame(1).status, FrameStatus::Late);
        assert_eq!(r.next_display_after(0), Some(Time::from_millis(80)));
        assert_eq!(r.pop_frame().display, Some(Time::from_millis(11)));
        assert_eq!(r.frame(0), RecvFrame::default());
        assert_eq!(r.frame(2).status, FrameStatus::Displayed);
        assert_eq!(r.late_discards(), 1);
        let rep = r.poll_report(Time::from_millis(60)).unwrap();
        assert_eq!(rep.report_time, Time::from_millis(60));
        assert_eq!(rep.arrivals.len(), 6);
        assert_eq!(rep.arrivals[2], (2, None));
        assert_eq!(rep.arrivals[5], (2, Some(Time::from_millis(90))));
    }

    #[test]
    fn freeze_counts_long_gaps() {
        let mut r = Receiver::new(ReceiverConfig::default());
        for (i, t) in [0, 33, 66, 300, 333].iter().enumerate() {
            r.handle_packet(Time::from_millis(*t), &pkt(i as u64, i as u32, 0, 1));
        }
        let fz = r.freeze();
        assert_eq!(fz.count, 1);
        assert_eq!(fz.total, Duration::from_millis(234));
    }
}
