//! The sending side of one call: frame source at a frame rate → encoder →
//! packetizer (MTU) → pacer → wire, with the controller fed by every sent
//! packet, encoded frame and feedback report. Sans-IO: `handle_timeout`,
//! `poll_transmit`, `handle_report`, `poll_timeout`.

use std::collections::VecDeque;

use crate::controller::{Controller, Decision, FrameInfo, SentPacket};
use crate::encoder::Encoder;
use crate::feedback::{Feedback, PacketResult, ReceiverReport};
use crate::pacer::{Pacer, PacerConfig, Queued};
use crate::packet::{Packet, PacketKind};
use crate::units::{DataRate, DataSize, Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderConfig {
    pub flow: u16,
    pub frame_interval: Duration,
    /// Largest packet on the wire.
    pub mtu: DataSize,
    pub start: Time,
    pub stop: Option<Time>,
    /// Encoder target bounds (per-flow caps).
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// Skip encoding a frame while the pacer queue would take longer than this
    /// to drain (`None` = never skip).
    pub skip_threshold: Option<Duration>,
    /// How long sent packets are remembered for feedback; unacknowledged
    /// packets older than this leave the in-flight count.
    pub history: Duration,
    pub pacer: PacerConfig,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            flow: 0,
            frame_interval: Duration::from_micros(33_333),
            mtu: DataSize::from_bytes(1200),
            start: Time::ZERO,
            stop: None,
            min_rate: DataRate::from_kbps(30),
            max_rate: DataRate::from_mbps(50),
            skip_threshold: None,
            history: Duration::from_secs(5),
            pacer: PacerConfig::default(),
        }
    }
}

/// What happened to a frame on the sending side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SentFrame {
    pub frame: u32,
    pub capture: Time,
    pub size: DataSize,
    pub key: bool,
    pub packets: u16,
    /// Encoder target when the frame was encoded.
    pub target: DataRate,
    pub first_sent: Option<Time>,
    pub last_sent: Option<Time>,
    pub skipped: bool,
}

#[derive(Clone, Copy, Debug)]
struct HistEntry {
    kind: PacketKind,
    size: DataSize,
    send_time: Time,
    probe_cluster: i32,
    outstanding: bool,
}

/// Cumulative per-kind byte counters, read by metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SendCounters {
    pub bytes: [u64; 6],
    pub packets: [u64; 6],
}

pub struct Sender {
    cfg: SenderConfig,
    controller: Box<dyn Controller>,
    encoder: Encoder,
    pacer: Pacer,
    decision: Decision,
    next_frame: Time,
    next_frame_id: u32,
    next_seq: u64,
    /// Send history, `history[i]` has sequence `hist_base + i`.
    history: VecDeque<HistEntry>,
    hist_base: u64,
    in_flight: DataSize,
    /// Frames not yet collected by the driver; `frames[i]` is frame `frame_base + i`.
    frames: VecDeque<SentFrame>,
    frame_base: u32,
    counters: SendCounters,
    stopped: bool,
}

impl Sender {
    pub fn new(cfg: SenderConfig, controller: Box<dyn Controller>, encoder: Encoder) -> Self {
        let decision = controller.decision();
        let mut s = Sender {
            pacer: Pacer::new(cfg.pacer),
            next_frame: cfg.start,
            cfg,
            controller,
            encoder,
            decision,
            next_frame_id: 0,
            next_seq: 0,
            history: VecDeque::with_capacity(4096),
            hist_base: 0,
            in_flight: DataSize::ZERO,
            frames: VecDeque::with_capacity(256),
            frame_base: 0,
            counters: SendCounters::default(),
            stopped: false,
        };
        s.apply_decision(cfg.start);
        s
    }

    pub fn config(&self) -> &SenderConfig {
        &self.cfg
    }
    pub fn controller(&self) -> &dyn Controller {
        self.controller.as_ref()
    }
    pub fn decision(&self) -> Decision {
        self.decision
    }
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }
    /// A frame not yet collected with `pop_frame`.
    pub fn frame(&self, id: u32) -> Option<&SentFrame> {
        self.frames.get(id.checked_sub(self.frame_base)? as usize)
    }
    /// The oldest uncollected frame.
    pub fn oldest_frame(&self) -> Option<&SentFrame> {
        self.frames.front()
    }
    /// Hand the oldest frame's record to the driver (keeps memory flat over
    /// long calls).
    pub fn pop_frame(&mut self) -> Option<SentFrame> {
        let f = self.frames.pop_front()?;
        self.frame_base += 1;
        Some(f)
    }
    pub fn counters(&self) -> &SendCounters {
        &self.counters
    }
    pub fn in_flight(&self) -> DataSize {
        self.in_flight
    }
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// Encoder target: the controller's decision within the flow's caps.
    pub fn target_rate(&self) -> DataRate {
        self.decision.target_rate.clamp(self.cfg.min_rate, self.cfg.max_rate)
    }

    fn apply_decision(&mut self, now: Time) {
        self.decision = self.controller.decision();
        self.pacer.set_rates(now, self.decision.pacing_rate, self.decision.padding_rate, self.decision.cwnd);
        while let Some(c) = self.controller.poll_probe() {
            self.pacer.add_probe(c);
        }
    }

    fn is_stopped(&self, now: Time) -> bool {
        self.stopped || self.cfg.stop.is_some_and(|s| now >= s)
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        if self.stopped {
            return None;
        }
        let mut t = self.pacer.poll_timeout(self.in_flight);
        let mut take = |x: Option<Time>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t: Time| t.min(x)));
            }
        };
        take(Some(self.next_frame));
        take(self.controller.poll_timeout());
        take(self.cfg.stop);
        t
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        if self.is_stopped(now) {
            self.stopped = true;
            self.pacer.clear();
            return;
        }
        if self.controller.poll_timeout().is_some_and(|t| t <= now) {
            self.controller.on_timeout(now);
            self.apply_decision(now);
        }
        while self.next_frame <= now {
            let capture = self.next_frame;
            self.next_frame += self.cfg.frame_interval;
            self.produce_frame(capture);
        }
        self.trim_history(now);
    }

    fn produce_frame(&mut self, capture: Time) {
        let target = self.target_rate();
        let id = self.next_frame_id;
        self.next_frame_id += 1;
        let skip = self.cfg.skip_threshold.is_some_and(|th| self.pacer.queue_drain_time() > th);
        if skip {
            self.encoder.skip(capture, target);
            self.frames.push_back(SentFrame {
                frame: id,
                capture,
                size: DataSize::ZERO,
                key: false,
                packets: 0,
                target,
                first_sent: None,
                last_sent: None,
                skipped: true,
            });
            return;
        }
        let enc = self.encoder.encode(capture, target);
        let mtu = self.cfg.mtu.bytes().max(1);
        let total = enc.size.bytes().max(1);
        let count = total.div_ceil(mtu).min(u16::MAX as u64) as u16;
        // Split evenly so no runt packet trails the frame (as libwebrtc's
        // RtpPacketizer does).
        let base = total / count as u64;
        let extra = total % count as u64;
        for i in 0..count {
            let size = base + u64::from((i as u64) < extra);
            self.pacer.enqueue(Queued {
                kind: PacketKind::Media,
                size: DataSize::from_bytes(size),
                frame: id,
                index: i,
                count,
                enqueued: capture,
            });
        }
        let info = FrameInfo {
            frame: id,
            capture_time: capture,
            size: DataSize::from_bytes(total),
            packets: count,
            key: enc.key,
        };
        self.frames.push_back(SentFrame {
            frame: id,
            capture,
            size: info.size,
            key: enc.key,
            packets: count,
            target,
            first_sent: None,
            last_sent: None,
            skipped: false,
        });
        self.controller.on_frame_encoded(capture, &info);
        self.apply_decision(capture);
    }

    /// The next packet to put on the wire at `now`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.stopped {
            return None;
        }
        let (q, probe) = self.pacer.poll_send(now, self.in_flight)?;
        let seq = self.next_seq;
        self.next_seq += 1;
        let pkt = Packet {
            flow: self.cfg.flow,
            kind: q.kind,
            seq,
            size: q.size,
            send_time: now,
            frame: q.frame,
            index: q.index,
            count: q.count,
            probe_cluster: probe,
            media_seq: 0,
            group: 0,
            flags: 0,
        };
        self.in_flight += q.size;
        if self.history.is_empty() {
            self.hist_base = seq;
        }
        self.history.push_back(HistEntry {
            kind: q.kind,
            size: q.size,
            send_time: now,
            probe_cluster: probe,
            outstanding: true,
        });
        let k = q.kind as usize;
        self.counters.bytes[k] += q.size.bytes();
        self.counters.packets[k] += 1;
        if pkt.is_frame_data() {
            let i = pkt.frame.wrapping_sub(self.frame_base) as usize;
            if let Some(f) = self.frames.get_mut(i) {
                f.first_sent.get_or_insert(now);
                f.last_sent = Some(now);
            }
        }
        let sent = SentPacket {
            seq,
            kind: q.kind,
            size: q.size,
            send_time: now,
            probe_cluster: probe,
            in_flight: self.in_flight,
        };
        self.controller.on_packet_sent(now, &sent);
        self.apply_decision(now);
        Some(pkt)
    }

    fn trim_history(&mut self, now: Time) {
        while let Some(h) = self.history.front() {
            if now.saturating_since(h.send_time) <= self.cfg.history {
                break;
            }
            if h.outstanding {
                self.in_flight -= h.size;
            }
            self.history.pop_front();
            self.hist_base += 1;
        }
    }

    /// A feedback report arrived at `now`: join it with the send history and
    /// hand it to the controller.
    pub fn handle_report(&mut self, now: Time, report: &ReceiverReport) {
        if self.stopped {
            return;
        }
        let mut packets = Vec::with_capacity(report.arrivals.len());
        for &(seq, arrival) in &report.arrivals {
            let Some(i) = seq.checked_sub(self.hist_base) else { continue };
            let Some(h) = self.history.get_mut(i as usize) else { continue };
            if h.outstanding {
                h.outstanding = false;
                self.in_flight -= h.size;
            }
            packets.push(PacketResult {
                seq,
                kind: h.kind,
                size: h.size,
                send_time: h.send_time,
                arrival,
                probe_cluster: h.probe_cluster,
            });
        }
        if packets.is_empty() {
            return;
        }
        let fb = Feedback { report_time: report.report_time, received_at: now, packets, stats: report.stats };
        self.controller.on_feedback(now, &fb);
        self.apply_decision(now);
    }
}
