//! `salsify`: a Salsify-style baseline (Fouladi, Emmons, Orbay, Wu, Wahby and
//! Winstein, "Salsify: Low-Latency Network Video through Tighter Integration
//! between a Video Codec and a Transport Protocol", NSDI'18), after the
//! authors' code (excamera/alfalfa `src/salsify/salsify-sender.cc` and
//! `salsify-receiver.cc`) as ALGORITHMS.md §8 reads it:
//!
//! - Receiver estimate (§8.3, salsify-receiver.cc `AverageInterPacketDelay`):
//!   for each packet that arrives at t, in transport order, sample =
//!   max(0, t − t_prev − g) and avg ← α·sample + (1 − α)·avg, α = 0.1
//!   (§8.5). The grace g is the sender's idle time before a packet that
//!   starts a frame and 0 for the rest of the frame (§8.2), so avg reads the
//!   bottleneck's service time of one packet, not the gaps between frames.
//! - Implied capacity C = P/avg (§8.4), P the packet size.
//! - Frame budget (§8.4, salsify-sender.cc `target_size`): budget =
//!   P·max(0, ⌊D/avg⌋ − in flight), D = 100 ms (§8.5), with avg in whole
//!   microseconds as the ACK carries it and read as 1 µs when it is 0. No
//!   limit before the first estimate.
//! - Pacing inside a frame (§8.4): one packet every clamp(avg/5, 0.5 ms,
//!   2 ms), about five times the estimated drain rate; 2 ms before any
//!   estimate (the sender's avg starts at UINT32_MAX, so the clamp gives its
//!   upper end).
//!
//! Where each part runs. The receiver's EWMA runs at the sender, fed each
//! packet of every report (arrival on the receiver clock, or lost), as `nada`
//! hosts its receiver side: Salsify ACKs every packet and each ACK carries
//! avg, where rtcc's reports are periodic (50 ms by default), so the sender
//! learns the avg of the newest reported packet up to one report interval
//! later. The grace comes from the send times in the feedback, where alfalfa
//! writes it into the first fragment of each frame.
//!
//! How the budget reaches the encoder. rtcc's encoder takes a target rate and
//! sizes each frame as target × frame interval, so the target is budget /
//! frame interval, clamped to the flow's [min_rate, max_rate]. `decision`
//! computes it from the state at that instant, and the sender reads it after
//! every send, report and frame, so the next frame captured is sized to the
//! budget of its capture.
//!
//! Simplifications and choices:
//! - One encoding per frame, sized to the budget. Salsify encodes two
//!   candidates from the receiver's decoder state, "improve" at quantizer
//!   q − 17 and "fail-small" at q + 23 (range [3, 127], §8.4), and sends the
//!   larger that fits. Here frame sizes follow the budget exactly and at
//!   once, where Salsify's move one quantizer step per frame and usually
//!   fall short of the budget, so this fills the link more, and queues more,
//!   than Salsify would; and the encoder model's errors (noise, key frames)
//!   are not caught before sending. The `ideal` and `noise` encoders suit
//!   it; `lagging` follows the budget with its time constants, as no Salsify
//!   encoder would.
//! - No skipped frames. When neither candidate fits Salsify skips the frame,
//!   and after 3 skips in a row (§8.5) sends "fail-small". rtcc's sender
//!   skips only while its own pacer queue is long (`Decision::skip_threshold`),
//!   which Salsify keeps empty, so a controller cannot order a skip: a budget
//!   below one packet sends the smallest frame the flow allows, min_rate ×
//!   frame interval (125 B at 30 kbps and 30 fps) — "fail-small" at once
//!   rather than after three skips.
//! - avg starts at the first sample of two packets of one frame. alfalfa
//!   starts it at 0, harmless there because a frame grows one quantizer step
//!   at a time; here a zero avg would size the next frame at max_rate, and
//!   so would a first sample taken at a frame's start, which is usually 0
//!   (below). Until then frames are at least two packets (start_rate, raised
//!   to (P + 1 B) / frame interval if below it: 288 kbps at 1200 B and
//!   30 fps), so the first frame reported gives that sample.
//! - Packet sizes vary in rtcc (frames are split evenly at the MTU; audio,
//!   FEC and retransmissions) where alfalfa's are all 1400 B: each sample
//!   inside a frame is scaled to P = the flow's MTU (sample·P/size), so avg
//!   stays the service time of one P-byte packet (a frame's first packet,
//!   whose sample is the queue's change between frames, not a service time,
//!   is not scaled), and what is in flight is counted in P-byte
//!   units (bytes / P), alfalfa's packet count when every packet is P bytes.
//! - In flight: the bytes sent above the newest reported sequence (alfalfa:
//!   fragments after the newest ACKed one), plus the bytes in the pacer
//!   (alfalfa counts a frame's fragments from when it hands them to its
//!   pacer).
//! - The grace of a packet that starts a frame, or of one outside any frame
//!   (audio, FEC parity, a retransmission), is its send time minus the
//!   previous packet's. alfalfa times it from when the previous frame went to
//!   the pacer, which also spans that frame's own pacing. Either way the
//!   first packet of a frame usually adds a zero sample (behind a standing
//!   queue it arrives one service time after the previous packet, less than
//!   the gap; on an idle link the arrival gap is the send gap), so with n
//!   packets per frame avg settles near (n − 1)/n of the service time:
//!   Salsify's own optimism, kept.
//! - A pair with a lost or unreported packet gives no sample; alfalfa's
//!   receiver, blind to the loss, would read two service times as one.
//! - `burst = true` sends each frame as one burst (`FrameSchedule::Burst`)
//!   instead of alfalfa's pacing.
//! - Not modelled: the decoder-state handshake and its 5 s "conservative"
//!   mode after a loss (§8.4); that is codec state, which rtcc's flows
//!   repair with NACK and PLI.

use std::collections::VecDeque;

use super::{
    rate_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FrameSchedule, Param, ParamInfo,
    Params, SenderState, SentPacket, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::{Feedback, PacketResult};
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

/// D = 100 ms (§8.4, §8.5; salsify-sender.cc `target_size` max_delay).
const DELAY_TARGET: Param<Duration> = Param::duration(
    "delay_target",
    Duration::from_millis(100),
    Duration::from_millis(1),
    Duration::from_secs(10),
    "D: a frame fits what the link drains in D less what is in flight, budget = P·(⌊D/avg⌋ − in flight) \
     (§8.4 target_size: 100 ms)",
);
/// α = 0.1 (§8.3, §8.5; salsify-receiver.cc `AverageInterPacketDelay::ALPHA`).
const ALPHA: Param<f64> = Param::number(
    "alpha",
    0.1,
    0.0,
    1.0,
    "α: EWMA gain of the receiver's inter-arrival average, per packet (§8.3 AverageInterPacketDelay: 0.1)",
)
.above_min();
const BURST: Param<bool> = Param::flag(
    "burst",
    false,
    "send each frame as one burst instead of one packet every clamp(avg/5, 0.5 ms, 2 ms) (§8.4 pacing)",
);

pub const PARAMS: &[ParamInfo] =
    &[START_RATE.info(), MIN_RATE.info(), MAX_RATE.info(), DELAY_TARGET.info(), ALPHA.info(), BURST.info()];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "salsify",
    summary: "Salsify-style (NSDI'18): each frame sized to what the receiver's inter-arrival estimate drains in \
              100 ms less what is in flight, sent at 5x that rate",
    params: PARAMS,
    create,
    receiver: None,
    pushback: super::Pushback::InFlight,
    needs_arrivals: true,
    report_format: crate::feedback::ReportFormat::Twcc,
};

/// Inter-send gap avg/5, at least 0.5 ms and at most 2 ms (§8.4, §8.5;
/// salsify-sender.cc `inter_send_delay`).
const GAP_DIVISOR: i64 = 5;
const MIN_GAP: Duration = Duration::from_micros(500);
const MAX_GAP: Duration = Duration::from_micros(2000);
/// avg read as 1 µs when it is 0 (§8.4; salsify-sender.cc `target_size`).
const MIN_AVG_US: i64 = 1;
/// Unreported packets remembered: more than D/1 µs at the largest D, so the
/// budget is zero long before the oldest is forgotten.
const MAX_TRACKED: usize = 1 << 17;

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Salsify::new(SalsifyConfig::from_params(p, ctx)?)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SalsifyConfig {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    /// P: the nominal packet size, the flow's MTU (alfalfa's 1400 B payload).
    pub packet: DataSize,
    /// The encoder's frame interval: target = budget / frame interval.
    pub frame_interval: Duration,
    pub delay_target: Duration,
    pub alpha: f64,
    pub burst: bool,
}

impl SalsifyConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let (min_rate, max_rate) = rate_bounds(p, ctx)?;
        Ok(SalsifyConfig {
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
            packet: ctx.mtu.max(DataSize::from_bytes(1)),
            frame_interval: ctx.frame_interval.max(Duration::from_micros(1)),
            delay_target: p.get(&DELAY_TARGET)?,
            alpha: p.get(&ALPHA)?,
            burst: p.get(&BURST)?,
        })
    }
}

/// The newest packet the estimator has taken, in transport order.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Last {
    seq: u64,
    send_time: Time,
    /// `None`: reported lost.
    arrival: Option<Time>,
}

pub struct Salsify {
    cfg: SalsifyConfig,
    /// The receiver's inter-arrival average, µs per P bytes (§8.3); `None`
    /// before the first sample.
    avg: Option<f64>,
    last: Option<Last>,
    /// (sequence, bytes) of packets sent above the newest reported sequence.
    unreported: VecDeque<(u64, u64)>,
    unreported_bytes: u64,
    newest_reported: Option<u64>,
    /// Bytes and packets waiting in the pacer.
    queued: DataSize,
    queued_packets: usize,
}

impl Salsify {
    pub fn new(cfg: SalsifyConfig) -> Self {
        Salsify {
            cfg,
            avg: None,
            last: None,
            unreported: VecDeque::new(),
            unreported_bytes: 0,
            newest_reported: None,
            queued: DataSize::ZERO,
            queued_packets: 0,
        }
    }

    /// avg as the ACK carries it: whole microseconds, at least 1 (§8.4).
    fn acked_avg_us(&self) -> Option<i64> {
        Some((self.avg? as i64).max(MIN_AVG_US))
    }

    /// Implied capacity P/avg (§8.4), once there is an estimate.
    pub fn capacity_estimate(&self) -> Option<DataRate> {
        Some(DataRate::from_size_per(self.cfg.packet, Duration::from_micros(self.acked_avg_us()?)))
    }

    /// Bytes sent and not yet reported, plus the bytes in the pacer.
    pub fn in_flight(&self) -> DataSize {
        DataSize::from_bytes(self.unreported_bytes) + self.queued
    }

    fn in_flight_packets(&self) -> usize {
        self.unreported.len() + self.queued_packets
    }

    /// budget = P·max(0, ⌊D/avg⌋ − in flight) (§8.4), in flight counted in
    /// P-byte units; `None` (no limit) before the first estimate.
    pub fn budget(&self) -> Option<DataSize> {
        let avg = self.acked_avg_us()?;
        let drained = (self.cfg.delay_target.as_micros() / avg) as u64;
        let allowed = DataSize::from_bytes(self.cfg.packet.bytes().saturating_mul(drained));
        Some(allowed - self.in_flight())
    }

    /// The encoder target: the budget over one frame interval, within
    /// [min_rate, max_rate]; before any estimate the start rate, but frames
    /// of at least two packets.
    pub fn target(&self) -> DataRate {
        let rate = match self.budget() {
            Some(b) => DataRate::from_size_per(b, self.cfg.frame_interval),
            None => {
                let two_packets = self.cfg.packet + DataSize::from_bytes(1);
                self.cfg.start_rate.max(DataRate::from_size_per(two_packets, self.cfg.frame_interval))
            }
        };
        rate.clamp(self.cfg.min_rate, self.cfg.max_rate)
    }

    /// Inter-send gap clamp(avg/5, 0.5 ms, 2 ms) (§8.4); 2 ms before any estimate.
    fn gap(&self) -> Duration {
        match self.acked_avg_us() {
            Some(avg) => Duration::from_micros(avg / GAP_DIVISOR).max(MIN_GAP).min(MAX_GAP),
            None => MAX_GAP,
        }
    }

    /// One reported packet, in transport order (§8.3).
    fn on_reported(&mut self, p: &PacketResult) {
        if let (Some(last), Some(t)) = (self.last, p.arrival) {
            if let Some(t_prev) = last.arrival.filter(|_| last.seq + 1 == p.seq) {
                // The grace: the sender's idle time before a packet that does
                // not continue a frame (§8.2).
                let continues = p.kind == PacketKind::Media && p.pos.is_frame() && p.pos.index > 0;
                let grace = if continues { Duration::ZERO } else { (p.send_time - last.send_time).max(Duration::ZERO) };
                let sample = ((t - t_prev) - grace).max(Duration::ZERO).as_micros() as f64;
                // A pair inside a frame is one packet's service time, which
                // grows with its size: scaled to one P-byte packet. A frame's
                // first packet samples how the queue changed since the last
                // frame, which does not: scaled, a one-packet frame of 125 B
                // would read 1 ms of that change as 9.6 ms, its budget would
                // stay at zero and the flow at its floor beside a competitor.
                let sample = if continues {
                    sample * self.cfg.packet.bytes() as f64 / p.size.bytes().max(1) as f64
                } else {
                    sample
                };
                let a = self.cfg.alpha;
                self.avg = match self.avg {
                    Some(avg) => Some(a * sample + (1.0 - a) * avg),
                    // The first estimate is a sample of two packets of one
                    // frame: a frame's first packet usually samples 0.
                    None => continues.then_some(sample),
                };
            }
        }
        self.last = Some(Last { seq: p.seq, send_time: p.send_time, arrival: p.arrival });
    }
}

impl Controller for Salsify {
    fn name(&self) -> &str {
        "salsify"
    }

    fn on_packet_sent(&mut self, _now: Time, p: &SentPacket) {
        if self.newest_reported.is_some_and(|n| p.seq <= n) {
            return;
        }
        if self.unreported.len() >= MAX_TRACKED {
            if let Some((_, b)) = self.unreported.pop_front() {
                self.unreported_bytes -= b;
            }
        }
        self.unreported.push_back((p.seq, p.size.bytes()));
        self.unreported_bytes += p.size.bytes();
    }

    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        let mut packets: Vec<&PacketResult> = fb.packets.iter().collect();
        packets.sort_by_key(|p| p.seq);
        for p in packets {
            if self.last.is_none_or(|l| p.seq > l.seq) {
                self.on_reported(p);
            }
        }
        // Everything up to the newest reported packet has left the network
        // or was lost (alfalfa: fragments after the newest ACK are in flight).
        let Some(newest) = fb.packets.iter().map(|p| p.seq).max() else { return };
        self.newest_reported = Some(self.newest_reported.map_or(newest, |n| n.max(newest)));
        while let Some(&(seq, bytes)) = self.unreported.front() {
            if seq > newest {
                break;
            }
            self.unreported.pop_front();
            self.unreported_bytes -= bytes;
        }
    }

    fn on_sender_state(&mut self, _now: Time, st: &SenderState) {
        self.queued = st.queued;
        self.queued_packets = st.queued_packets;
    }

    fn decision(&self) -> Decision {
        let schedule = if self.cfg.burst { FrameSchedule::Burst } else { FrameSchedule::Paced };
        let pacing = DataRate::from_size_per(self.cfg.packet, self.gap());
        Decision { schedule, ..Decision::rates(self.target(), pacing) }
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("target_kbps", self.target().kbps_f64());
        out("in_flight_packets", self.in_flight_packets() as f64);
        out("pacing_gap_ms", self.gap().as_millis_f64());
        if let (Some(avg), Some(c), Some(b)) = (self.avg, self.capacity_estimate(), self.budget()) {
            out("avg_interarrival_ms", avg / 1000.0);
            out("capacity_estimate_kbps", c.kbps_f64());
            out("budget_bytes", b.bytes() as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{fixed_link, us};
    use crate::controller::{FramePos, ParamValue};

    const P: DataSize = DataSize::from_bytes(1200);

    fn salsify() -> Salsify {
        Salsify::new(SalsifyConfig::from_params(&Params::new(), &ControllerContext::default()).unwrap())
    }

    fn state(c: &dyn Controller, key: &str) -> f64 {
        let mut v = f64::NAN;
        c.state(&mut |k, x| v = if k == key { x } else { v });
        v
    }

    /// Media packet `seq`, `index` of `count` in `frame`, of `size` bytes,
    /// sent at `sent` µs and arrived at `arrival` µs (or lost).
    fn packet(
        seq: u64,
        frame: u32,
        index: u16,
        count: u16,
        size: u64,
        sent: i64,
        arrival: Option<i64>,
    ) -> PacketResult {
        PacketResult {
            seq,
            kind: PacketKind::Media,
            size: DataSize::from_bytes(size),
            send_time: us(sent),
            arrival: arrival.map(us),
            probe_cluster: -1,
            pos: FramePos { frame, index, count },
            late: false,
            ..Default::default()
        }
    }

    fn sent(c: &mut Salsify, p: &PacketResult) {
        let s = SentPacket {
            seq: p.seq,
            kind: p.kind,
            size: p.size,
            send_time: p.send_time,
            pos: p.pos,
            ..SentPacket::default()
        };
        c.on_packet_sent(p.send_time, &s);
    }

    fn report(c: &mut Salsify, at: i64, packets: &[PacketResult]) {
        let fb =
            Feedback { report_time: us(at), received_at: us(at), packets: packets.to_vec(), ..Feedback::default() };
        c.on_feedback(us(at), &fb);
    }

    /// Two frames over a 3 Mbps link (1200 B in 3.2 ms) and 20 ms: frame 0's
    /// three packets leave 0.6 ms apart and queue, so they arrive 3.2 ms
    /// apart; frame 1 starts 32.8 ms after frame 0's last packet, on an idle
    /// link.
    fn two_frames() -> Vec<PacketResult> {
        vec![
            packet(0, 0, 0, 3, 1200, 0, Some(23_200)),
            packet(1, 0, 1, 3, 1200, 600, Some(26_400)),
            packet(2, 0, 2, 3, 1200, 1_200, Some(29_600)),
            packet(3, 1, 0, 2, 1200, 34_000, Some(57_200)),
            packet(4, 1, 1, 2, 1200, 34_600, Some(60_400)),
        ]
    }

    /// 0→1 and 1→2: 3.2 ms each, avg = 3.2 ms (the first sample sets it).
    /// 2→3: arrivals 27.6 ms apart less a grace of 34.0 − 1.2 = 32.8 ms is
    /// below zero: sample 0, avg = 0.9·3.2 = 2.88 ms. 3→4: 3.2 ms, avg =
    /// 0.1·3.2 + 0.9·2.88 = 2.912 ms.
    #[test]
    fn ewma_of_inter_arrivals_with_the_grace_of_each_frame() {
        let mut c = salsify();
        let pkts = two_frames();
        pkts.iter().for_each(|p| sent(&mut c, p));
        report(&mut c, 30_000, &pkts[..2]);
        assert_eq!(c.avg, Some(3_200.0));
        report(&mut c, 62_000, &pkts[2..]);
        assert_eq!(c.avg, Some(2_912.0));
        assert_eq!(state(&c, "avg_interarrival_ms"), 2.912);
        // C = 1200 B / 2912 µs = 3296.7 kbps.
        assert!((state(&c, "capacity_estimate_kbps") - 3296.703).abs() < 1e-3);
        // Without the grace the frame gap would count: 27.6 ms, not 0.
        let mut plain = salsify();
        let mut no_grace = two_frames();
        no_grace[3].pos.index = 1;
        no_grace.iter().for_each(|p| sent(&mut plain, p));
        report(&mut plain, 62_000, &no_grace);
        assert_eq!(plain.avg, Some(0.9 * (0.1 * 27_600.0 + 0.9 * 3_200.0) + 0.1 * 3_200.0));
    }

    /// Packets of 600 B 1.6 ms apart are a 1200 B packet's 3.2 ms; a packet
    /// outside any frame (audio) takes the grace of its own send gap.
    #[test]
    fn samples_are_scaled_to_the_nominal_packet() {
        let mut c = salsify();
        let mut audio = packet(2, 0, 0, 0, 100, 10_000, Some(32_000));
        audio.kind = PacketKind::Audio;
        audio.pos = FramePos::NONE;
        let pkts = [
            packet(0, 0, 0, 2, 600, 0, Some(21_600)),
            packet(1, 0, 1, 2, 600, 500, Some(23_200)),
            // Sent 9.5 ms after the previous packet, arrived 8.8 ms after it:
            // 0, however small the packet.
            audio,
        ];
        report(&mut c, 40_000, &pkts);
        assert_eq!(c.avg, Some(0.9 * 3_200.0));
    }

    /// A one-packet frame of 125 B that arrives 1.5 ms later than its send
    /// gap samples 1.5 ms, not 14.4 ms: that is the queue's change between
    /// frames, not the packet's service time.
    #[test]
    fn frame_start_samples_are_not_scaled() {
        let mut c = salsify();
        let pkts = [
            packet(0, 0, 0, 2, 1200, 0, Some(21_600)),
            packet(1, 0, 1, 2, 1200, 500, Some(24_800)),
            packet(2, 1, 0, 1, 125, 33_333, Some(24_800 + 34_333)),
        ];
        report(&mut c, 70_000, &pkts);
        // 3.2 ms, then 33.333 - 0.5 ms of grace against 34.333 ms: 1.5 ms.
        assert_eq!(c.avg, Some(0.1 * 1_500.0 + 0.9 * 3_200.0));
    }

    /// A lost packet breaks two pairs; a pair spanning two reports counts.
    #[test]
    fn losses_skip_their_pairs_and_pairs_span_reports() {
        let mut c = salsify();
        let mut pkts = two_frames();
        pkts[1].arrival = None;
        report(&mut c, 30_000, &pkts[..3]);
        assert_eq!(c.avg, None, "0→1 and 1→2 have a lost packet");
        report(&mut c, 62_000, &pkts[3..]);
        // 2→3 (across the reports) starts a frame: its 0 does not start the
        // average; 3→4 does, at 3.2 ms.
        assert_eq!(c.avg, Some(3_200.0));
        report(&mut c, 63_000, &[packet(5, 1, 2, 3, 1200, 35_200, Some(63_600))]);
        assert_eq!(c.avg, Some(3_200.0));
        // A packet reported again, or out of order, is not taken twice.
        report(&mut c, 64_000, &pkts[4..]);
        assert_eq!(c.avg, Some(3_200.0));
    }

    /// Before the first estimate: no limit, the start rate, 2 ms gaps
    /// (1200 B / 2 ms = 4.8 Mbps). A report of one packet gives no pair.
    #[test]
    fn the_start_rate_holds_until_the_first_estimate() {
        let mut c = salsify();
        let d = c.decision();
        assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_kbps(300), DataRate::from_bps(4_800_000)));
        assert_eq!((d.cwnd, d.schedule, d.skip_threshold), (None, FrameSchedule::Paced, None));
        assert_eq!(c.budget(), None);
        assert!(state(&c, "budget_bytes").is_nan());
        let pkts = two_frames();
        pkts.iter().for_each(|p| sent(&mut c, p));
        report(&mut c, 24_000, &pkts[..1]);
        assert_eq!((c.budget(), c.target()), (None, DataRate::from_kbps(300)));
        report(&mut c, 27_000, &pkts[1..2]);
        assert!(c.budget().is_some());
    }

    /// avg 2912 µs: ⌊100 000/2912⌋ = 34 packets. Five 1200 B packets
    /// unreported leave 29: 34 800 B, over 33.333 ms = 8.352 Mbps. Pacing:
    /// 2912/5 = 582 µs per 1200 B = 16.49 Mbps.
    #[test]
    fn budget_is_what_drains_in_the_delay_target_less_what_is_in_flight() {
        let mut c = salsify();
        let pkts = two_frames();
        pkts.iter().for_each(|p| sent(&mut c, p));
        report(&mut c, 62_000, &pkts);
        assert_eq!(c.budget(), Some(DataSize::from_bytes(34 * 1200)));
        for seq in 5..10 {
            sent(&mut c, &packet(seq, 2, (seq - 5) as u16, 5, 1200, 66_667 + 600 * (seq as i64 - 5), None));
        }
        assert_eq!(c.budget(), Some(DataSize::from_bytes(29 * 1200)));
        let d = c.decision();
        assert_eq!(d.target_rate, DataRate::from_bps(8_352_083));
        assert_eq!(d.pacing_rate, DataRate::from_bps(16_494_845));
        assert_eq!((state(&c, "budget_bytes"), state(&c, "target_kbps")), (34_800.0, 8_352.083));
        assert_eq!(state(&c, "pacing_gap_ms"), 0.582);
    }

    /// In flight: sent above the newest reported sequence (a loss below it
    /// is not in flight), plus the pacer's queue.
    #[test]
    fn in_flight_counts_unreported_and_queued_packets() {
        let mut c = salsify();
        for seq in 0..10 {
            sent(&mut c, &packet(seq, 0, seq as u16, 10, 1000 + seq, 600 * seq as i64, None));
        }
        let st = SenderState { queued: DataSize::from_bytes(3600), queued_packets: 3, in_flight: DataSize::ZERO };
        c.on_sender_state(us(6_000), &st);
        assert_eq!((c.in_flight_packets(), c.in_flight().bytes()), (13, 10_045 + 3600));
        let pkts: Vec<PacketResult> = (0..5)
            .map(|seq| packet(seq, 0, seq as u16, 10, 1000 + seq, 600 * seq as i64, (seq != 2).then_some(30_000)))
            .collect();
        report(&mut c, 40_000, &pkts);
        // 5..=9: 1005 + 1006 + ... + 1009 = 5035 B, and 3600 B queued.
        assert_eq!((c.in_flight_packets(), c.in_flight().bytes()), (8, 5_035 + 3600));
        assert_eq!(state(&c, "in_flight_packets"), 8.0);
        // Ahead of the latest report, nothing changes; behind it, nothing is added.
        report(&mut c, 41_000, &pkts[..2]);
        sent(&mut c, &pkts[3]);
        assert_eq!(c.in_flight().bytes(), 5_035 + 3600);
    }

    /// A full network sends the flow's smallest frame; an avg of 0 (read as
    /// 1 µs) allows 100 000 packets a frame, held at max_rate. Gaps clamp at
    /// 0.5 and 2 ms.
    #[test]
    fn target_and_gap_are_clamped() {
        let mut c = salsify();
        c.avg = Some(0.4);
        assert_eq!(c.budget(), Some(DataSize::from_bytes(100_000 * 1200)));
        let d = c.decision();
        assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_mbps(50), DataRate::from_bps(19_200_000)));
        c.avg = Some(60_000.0);
        assert_eq!(c.budget(), Some(DataSize::from_bytes(1200)), "⌊100/60⌋ = 1 packet, nothing in flight");
        sent(&mut c, &packet(0, 0, 0, 1, 1200, 0, None));
        assert_eq!(c.budget(), Some(DataSize::ZERO));
        let d = c.decision();
        assert_eq!((d.target_rate, d.pacing_rate), (DataRate::from_kbps(30), DataRate::from_bps(4_800_000)));
    }

    #[test]
    fn params_are_checked() {
        let ctx = ControllerContext::default();
        let with = |k: &str, v: ParamValue| Params::new().with(k, v);
        for (k, v) in [
            ("delay_target", ParamValue::Str("0ms".into())),
            ("alpha", ParamValue::Num(0.0)),
            ("alpha", ParamValue::Num(1.5)),
            ("burst", ParamValue::Str("yes".into())),
            ("min_rate", ParamValue::Str("60Mbps".into())),
            ("gamma", ParamValue::Num(0.1)),
        ] {
            assert!(crate::controller::create("salsify", &with(k, v.clone()), &ctx).is_err(), "{k} = {v:?}");
        }
        let c = crate::controller::create("salsify", &with("burst", ParamValue::Bool(true)), &ctx).unwrap();
        assert_eq!((c.name(), c.decision().schedule), ("salsify", FrameSchedule::Burst));
        let p = with("delay_target", ParamValue::Str("150ms".into())).with("alpha", ParamValue::Num(0.25));
        let cfg = SalsifyConfig::from_params(&p, &ctx).unwrap();
        assert_eq!((cfg.delay_target, cfg.alpha, cfg.packet), (Duration::from_millis(150), 0.25, P));
    }

    /// Closed loop over a 3 Mbps FIFO bottleneck, 20 ms each way, 50 ms
    /// reports, ideal encoder: the link stays nearly full and the queue
    /// short, as PIBES Fig. 10 found for Salsify on such a link.
    #[test]
    fn fills_a_3_mbps_link_with_a_short_queue() {
        let ctx = ControllerContext::default();
        let c = Salsify::new(SalsifyConfig::from_params(&Params::new(), &ctx).unwrap());
        let (utilisation, mean_owd) = fixed_link(Box::new(c), DataRate::from_mbps(3));
        eprintln!("salsify on 3 Mbps: utilisation {utilisation:.3}, mean one-way delay {mean_owd:.1} ms");
        assert!(utilisation > 0.85, "{utilisation}");
        assert!(mean_owd < 60.0, "{mean_owd} ms");
    }
}
