//! A two-endpoint harness: drives one [`Sender`] and one [`Receiver`] over a
//! fixed-delay, optionally lossy and capacity-limited path, sans-IO, for tests
//! and examples (as quinn-proto's `tests::util::Pair` and str0m's
//! `tests/common.rs`). Each [`Pair::step`] advances whichever of the sender,
//! the receiver, the forward path and the reverse path is due earliest, so a
//! test states the path and the endpoints once and reads back what happened:
//! every packet put on the wire and its fate ([`Pair::sent`],
//! [`Pair::delivered`]), every report ([`Pair::reports`]) and every frame the
//! receiver displayed ([`Pair::displayed`]).
//!
//! The path: packets the drop predicates refuse are lost before the
//! bottleneck; the others queue FIFO at the bottleneck's capacity (if any),
//! then take the one-way delay. Reports take the reverse delay and never
//! queue; a report drop predicate loses them.
//!
//! ```
//! use rtcc_core::pair::Pair;
//! use rtcc_core::packet::PacketKind;
//! use rtcc_core::receiver::ReceiverConfig;
//! use rtcc_core::sender::SenderConfig;
//! use rtcc_core::units::{Duration, Time};
//!
//! // 1 Mbps of 30 fps video over 25 ms each way; every tenth packet is lost
//! // and repaired by retransmission.
//! let mut pair = Pair::builder()
//!     .sender(SenderConfig { nack: Some(Duration::from_millis(300)), ..SenderConfig::default() })
//!     .receiver(ReceiverConfig { nack: true, ..ReceiverConfig::default() })
//!     .delay(Duration::from_millis(25))
//!     .drop(|p| p.seq % 10 == 9)
//!     .build();
//! pair.run_until(Time::from_millis(1000));
//! assert!(pair.sent().iter().any(|t| t.packet.kind == PacketKind::Rtx));
//! // Repaired frames are late, not lost: every frame is shown, in order.
//! let shown = pair.displayed();
//! assert!(shown.len() >= 20);
//! assert!(shown.iter().enumerate().all(|(i, d)| d.frame == i as u32));
//! //! ```

use std::collections::VecDeque;

use crate::controller::fixed::Fixed;
use crate::controller::{Controller, SentPacket};
use crate::encoder::{Encoder, EncoderConfig, FrameEncoder};
use crate::estimator::ReceiverEstimator;
use crate::feedback::ReceiverReport;
use crate::packet::{Packet, NO_FRAME};
use crate::receiver::{Receiver, ReceiverConfig};
use crate::rng::Rng;
use crate::sender::{Sender, SenderConfig};
use crate::units::{DataRate, Duration, Time};

/// Steps at one instant after which the pair is taken to be stuck (an
/// endpoint that keeps asking for a timeout it does not act on).
const MAX_STEPS_AT_ONE_INSTANT: u32 = 100_000;

/// A packet the sender put on the wire, and its fate.
#[derive(Clone, Debug, PartialEq)]
pub struct Transmitted {
    /// As sent (its send time is `sent.send_time`).
    pub packet: Packet,
    /// The sender's record of it, as its controller was told.
    pub sent: SentPacket,
    /// When it reaches (or reached) the receiver; `None` = dropped.
    pub arrival: Option<Time>,
}

/// A report the receiver sent, and its fate.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportRecord {
    /// Receiver clock when sent (also `report.report_time`).
    pub sent: Time,
    /// When it reaches (or reached) the sender; `None` = dropped.
    pub arrival: Option<Time>,
    pub report: ReceiverReport,
}

/// A frame the receiver decoded and displayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Displayed {
    pub frame: u32,
    pub at: Time,
    pub key: bool,
}

type PacketFilter = Box<dyn FnMut(&Packet, &SentPacket) -> bool>;
type ReportFilter = Box<dyn FnMut(&ReceiverReport) -> bool>;
type CapacityFn = Box<dyn FnMut(Time) -> DataRate>;

/// Builds a [`Pair`]. Defaults: `SenderConfig::default()`, a fixed 1 Mbps
/// controller paced at 1 Mbps, the ideal encoder, `ReceiverConfig::default()`,
/// 25 ms each way, no loss, no bottleneck.
pub struct PairBuilder {
    sender: SenderConfig,
    controller: Option<Box<dyn Controller>>,
    encoder: Option<Box<dyn FrameEncoder>>,
    receiver: ReceiverConfig,
    estimator: Option<Box<dyn ReceiverEstimator>>,
    delay: Duration,
    reverse_delay: Option<Duration>,
    drops: Vec<PacketFilter>,
    report_drops: Vec<ReportFilter>,
    capacity: Option<CapacityFn>,
}

impl PairBuilder {
    pub fn sender(mut self, cfg: SenderConfig) -> Self {
        self.sender = cfg;
        self
    }
    pub fn controller(mut self, controller: Box<dyn Controller>) -> Self {
        self.controller = Some(controller);
        self
    }
    pub fn encoder(mut self, encoder: Box<dyn FrameEncoder>) -> Self {
        self.encoder = Some(encoder);
        self
    }
    pub fn receiver(mut self, cfg: ReceiverConfig) -> Self {
        self.receiver = cfg;
        self
    }
    /// A receiver-side estimator whose estimate rides in every report.
    pub fn estimator(mut self, estimator: Box<dyn ReceiverEstimator>) -> Self {
        self.estimator = Some(estimator);
        self
    }
    /// One-way delay sender → receiver (after the bottleneck, if any); also
    /// the reverse delay unless `reverse_delay` sets it.
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    /// One-way delay of reports, receiver → sender.
    pub fn reverse_delay(mut self, d: Duration) -> Self {
        self.reverse_delay = Some(d);
        self
    }
    /// Lose every packet for which `f` is true (called once per packet, in
    /// send order). Several drop rules add up: a packet is lost if any says so.
    pub fn drop(mut self, mut f: impl FnMut(&Packet) -> bool + 'static) -> Self {
        self.drops.push(Box::new(move |p, _| f(p)));
        self
    }
    /// As `drop`, judged by the sender's record of the packet (its full
    /// sequence and its place in its frame, which the wire does not carry).
    pub fn drop_sent(mut self, mut f: impl FnMut(&SentPacket) -> bool + 'static) -> Self {
        self.drops.push(Box::new(move |_, s| f(s)));
        self
    }
    /// Lose each packet independently with probability `p`, from `seed`.
    pub fn loss(self, p: f64, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        self.drop(move |_| rng.chance(p))
    }
    /// Lose every report for which `f` is true.
    pub fn drop_report(mut self, f: impl FnMut(&ReceiverReport) -> bool + 'static) -> Self {
        self.report_drops.push(Box::new(f));
        self
    }
    /// A FIFO bottleneck of constant `rate` before the one-way delay.
    pub fn bottleneck(self, rate: DataRate) -> Self {
        self.capacity(move |_| rate)
    }
    /// A FIFO bottleneck whose rate is `f(t)` when a packet starts
    /// serialisation at `t`.
    pub fn capacity(mut self, f: impl FnMut(Time) -> DataRate + 'static) -> Self {
        self.capacity = Some(Box::new(f));
        self
    }

    pub fn build(self) -> Pair {
        let cfg = self.sender;
        let controller =
            self.controller.unwrap_or_else(|| Box::new(Fixed::new(DataRate::from_mbps(1), 1.0, DataRate::ZERO)));
        let encoder = self
            .encoder
            .unwrap_or_else(|| Box::new(Encoder::new(EncoderConfig::Ideal, cfg.frame_interval, Rng::new(1))));
        let mut receiver = Receiver::new(self.receiver);
        if let Some(e) = self.estimator {
            receiver = receiver.with_estimator(e);
        }
        Pair {
            sender: Sender::new(cfg, controller, encoder),
            receiver,
            now: Time::ZERO,
            steps_at_now: 0,
            delay: self.delay,
            reverse_delay: self.reverse_delay.unwrap_or(self.delay),
            drops: self.drops,
            report_drops: self.report_drops,
            capacity: self.capacity,
            link_free: Time::ZERO,
            forward: VecDeque::new(),
            rtcp: VecDeque::new(),
            reverse: VecDeque::new(),
            sent: Vec::new(),
            reports: Vec::new(),
            displayed: Vec::new(),
            display_next: 0,
        }
    }
}

/// One sender and one receiver joined by a path; see the module docs.
pub struct Pair {
    pub sender: Sender,
    pub receiver: Receiver,
    now: Time,
    steps_at_now: u32,
    delay: Duration,
    reverse_delay: Duration,
    drops: Vec<PacketFilter>,
    report_drops: Vec<ReportFilter>,
    capacity: Option<CapacityFn>,
    /// When the bottleneck has finished serialising its queue.
    link_free: Time,
    /// Indices into `sent` of packets on their way, by arrival time (FIFO,
    /// so in order).
    forward: VecDeque<usize>,
    /// The sender's RTCP on its way (arrival, packet): through the same
    /// bottleneck and delay, never dropped, in no `sent` record.
    rtcp: VecDeque<(Time, Packet)>,
    /// Indices into `reports` of reports on their way.
    reverse: VecDeque<usize>,
    sent: Vec<Transmitted>,
    reports: Vec<ReportRecord>,
    displayed: Vec<Displayed>,
    /// Lowest frame id not yet known to be displayed or passed over.
    display_next: u32,
}

impl Pair {
    pub fn builder() -> PairBuilder {
        PairBuilder {
            sender: SenderConfig::default(),
            controller: None,
            encoder: None,
            receiver: ReceiverConfig::default(),
            estimator: None,
            delay: Duration::from_millis(25),
            reverse_delay: None,
            drops: Vec::new(),
            report_drops: Vec::new(),
            capacity: None,
        }
    }

    /// The time of the last step, or of the last `run_until`.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Every packet put on the wire so far, in send order.
    pub fn sent(&self) -> &[Transmitted] {
        &self.sent
    }

    /// The packets handed to the receiver so far, in arrival order.
    pub fn delivered(&self) -> impl Iterator<Item = &Transmitted> + '_ {
        let now = self.now;
        self.sent.iter().filter(move |t| t.arrival.is_some_and(|a| a <= now))
    }

    /// Every report the receiver sent so far, in order.
    pub fn reports(&self) -> &[ReportRecord] {
        &self.reports
    }

    /// Frames displayed so far, in display (and frame) order.
    pub fn displayed(&self) -> &[Displayed] {
        &self.displayed
    }

    /// When frame `id` was displayed, if it was.
    pub fn display_of(&self, id: u32) -> Option<&Displayed> {
        self.displayed.iter().find(|d| d.frame == id)
    }

    /// The earliest time any part is due.
    pub fn next_event(&self) -> Option<Time> {
        let reverse = self.reverse.front().and_then(|&i| self.reports[i].arrival);
        let forward = self.forward.front().and_then(|&i| self.sent[i].arrival);
        let rtcp = self.rtcp.front().map(|r| r.0);
        [self.sender.poll_timeout(), self.receiver.poll_timeout(), forward, rtcp, reverse].into_iter().flatten().min()
    }

    /// Advance to the earliest due event if it is at or before `until` and
    /// handle everything due then: arrivals at the receiver, the receiver's
    /// report, reports arriving at the sender, the sender's timeout, and the
    /// sender's transmissions. Returns false (and moves `now` to `until`)
    /// when nothing is due by `until`.
    pub fn step(&mut self, until: Time) -> bool {
        let Some(next) = self.next_event().filter(|&t| t <= until) else {
            self.now = self.now.max(until);
            return false;
        };
        let now = next.max(self.now);
        if now == self.now {
            self.steps_at_now += 1;
            assert!(self.steps_at_now < MAX_STEPS_AT_ONE_INSTANT, "pair: no progress at {now}");
        } else {
            self.steps_at_now = 0;
        }
        self.now = now;
        while let Some(&i) = self.forward.front().filter(|&&i| self.sent[i].arrival.is_some_and(|a| a <= now)) {
            self.forward.pop_front();
            let t = &self.sent[i];
            self.receiver.handle_packet(t.arrival.expect("on its way"), &t.packet);
            self.collect_displays();
        }
        while let Some((at, p)) = self.rtcp.pop_front_if(|r| r.0 <= now) {
            self.receiver.handle_packet(at, &p);
        }
        if self.receiver.poll_timeout().is_some_and(|t| t <= now) {
            if let Some(report) = self.receiver.poll_report(now) {
                let mut lost = false;
                for f in &mut self.report_drops {
                    lost |= f(&report);
                }
                let arrival = (!lost).then_some(now + self.reverse_delay);
                if !lost {
                    self.reverse.push_back(self.reports.len());
                }
                self.reports.push(ReportRecord { sent: now, arrival, report });
            }
        }
        while let Some(&i) = self.reverse.front().filter(|&&i| self.reports[i].arrival.is_some_and(|a| a <= now)) {
            self.reverse.pop_front();
            self.sender.handle_report(now, &self.reports[i].report);
        }
        if self.sender.poll_timeout().is_some_and(|t| t <= now) {
            self.sender.handle_timeout(now);
        }
        // A sender report crosses the same forward path, ahead of the
        // pacer's packets.
        while let Some(p) = self.sender.poll_rtcp(now) {
            let leaves = self.serialise(now, p.size);
            self.rtcp.push_back((leaves + self.delay, p));
        }
        while let Some(p) = self.sender.poll_transmit(now) {
            self.transmit(now, p);
        }
        true
    }

    /// Handle every event due at or before `t`; afterwards `now() == t`.
    pub fn run_until(&mut self, t: Time) {
        while self.step(t) {}
    }

    /// `run_until(now + d)`.
    pub fn run_for(&mut self, d: Duration) {
        self.run_until(self.now + d);
    }

    /// When `size` bytes put on the bottleneck at `now` have left it.
    fn serialise(&mut self, now: Time, size: crate::units::DataSize) -> Time {
        match &mut self.capacity {
            Some(rate) => {
                let start = self.link_free.max(now);
                self.link_free = start + size / rate(start);
                self.link_free
            }
            None => now,
        }
    }

    fn transmit(&mut self, now: Time, p: Packet) {
        let sent = *self.sender.newest_sent();
        let mut lost = false;
        for f in &mut self.drops {
            lost |= f(&p, &sent);
        }
        let arrival = (!lost).then(|| self.serialise(now, p.size) + self.delay);
        if arrival.is_some() {
            self.forward.push_back(self.sent.len());
        }
        self.sent.push(Transmitted { packet: p, sent, arrival });
    }

    /// Record frames the receiver displayed since the last look. The receiver
    /// decodes in frame order, so a frame before a displayed one that is not
    /// displayed itself never will be.
    fn collect_displays(&mut self) {
        loop {
            let id = self.display_next;
            if id == NO_FRAME {
                return;
            }
            let f = self.receiver.frame(id);
            if let Some(at) = f.display {
                self.displayed.push(Displayed { frame: id, at, key: f.key });
            } else if self.receiver.next_display_after(id).is_none() {
                return;
            }
            self.display_next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::DataSize;

    const MS: Duration = Duration::from_millis(1);

    /// 12 000 B frames every 100 ms (960 kbps, ideal encoder), paced at
    /// 9.6 Mbps: ten 1200 B packets 1 ms apart.
    fn frames_of_ten() -> PairBuilder {
        let cfg = SenderConfig { frame_interval: MS * 100, ..SenderConfig::default() };
        Pair::builder().sender(cfg).controller(Box::new(Fixed::new(DataRate::from_kbps(960), 10.0, DataRate::ZERO)))
    }

    #[test]
    fn bottleneck_serialises_then_delays() {
        let mut pair = frames_of_ten().delay(MS * 25).bottleneck(DataRate::from_kbps(960)).build();
        pair.run_until(Time::from_millis(99));
        let sent = pair.sent();
        assert_eq!(sent.len(), 10);
        for (i, t) in sent.iter().enumerate() {
            let i = i as i64;
            assert_eq!(t.packet.size, DataSize::from_bytes(1200));
            assert_eq!(t.sent.send_time, Time::from_millis(i));
            // 1200 B at 960 kbps = 10 ms each, back to back from 0, then 25 ms.
            assert_eq!(t.arrival, Some(Time::from_millis(10 * (i + 1) + 25)), "packet {i}");
        }
        // Delivered by 99 ms: those arriving at 35..=95 ms.
        assert_eq!(pair.delivered().count(), 7);
        assert_eq!(pair.now(), Time::from_millis(99));
        // The frame completes with its last packet at 125 ms and is shown
        // after WebRTC's 5 ms decode and 10 ms render delay.
        pair.run_until(Time::from_millis(150));
        assert_eq!(pair.displayed(), &[Displayed { frame: 0, at: Time::from_millis(140), key: true }]);
    }

    #[test]
    fn drops_lose_packets_before_the_bottleneck() {
        let mut pair =
            frames_of_ten().bottleneck(DataRate::from_kbps(960)).drop(|p| p.seq == 0).drop(|p| p.seq == 5).build();
        pair.run_until(Time::from_millis(99));
        let arrivals: Vec<Option<i64>> = pair.sent().iter().map(|t| t.arrival.map(|a| a.as_micros() / 1000)).collect();
        // Packet 1 finds the bottleneck idle at 1 ms; the rest queue behind it.
        let expect = [None, Some(36), Some(46), Some(56), Some(66), None, Some(76), Some(86), Some(96), Some(106)];
        assert_eq!(arrivals, expect);
        // Both drop rules applied, and the frame never completes.
        pair.run_until(Time::from_millis(150));
        assert_eq!(pair.display_of(0), None);
    }

    #[test]
    fn reports_take_the_reverse_delay_and_can_be_lost() {
        let mut n = 0;
        let mut pair = frames_of_ten()
            .delay(MS * 10)
            .reverse_delay(MS * 40)
            .drop_report(move |_| {
                n += 1;
                n % 2 == 0
            })
            .build();
        pair.run_until(Time::from_millis(500));
        let reports = pair.reports();
        // The first packet arrives at 10 ms; reports every 50 ms from 60 ms.
        let sent: Vec<i64> = reports.iter().map(|r| r.sent.as_micros() / 1000).collect();
        assert_eq!(sent, [60, 110, 160, 210, 260, 310, 360, 410, 460]);
        for (i, r) in reports.iter().enumerate() {
            assert_eq!(r.report.report_time, r.sent);
            let expect = (i % 2 == 0).then_some(r.sent + MS * 40);
            assert_eq!(r.arrival, expect, "report {i}");
        }
        // Every packet of the five frames is reported once, lost report or not.
        let reported: usize = reports.iter().map(|r| r.report.arrivals.len()).sum();
        assert_eq!(reported, 50);
        assert!(pair.sent().iter().all(|t| t.packet.kind == PacketKind::Media));
    }

    /// A real codec stand-in: frame `id` is `bytes_of(id)`, 3001 B (three
    /// packets: 1001, 1000, 1000 B) for even ids and 700 B (one packet) for
    /// odd ones.
    struct Bytes;

    fn bytes_of(id: u32) -> Vec<u8> {
        let n = if id.is_multiple_of(2) { 3001 } else { 700 };
        (0..n).map(|i: u32| (i.wrapping_mul(7) ^ id.wrapping_mul(131)) as u8).collect()
    }

    impl FrameEncoder for Bytes {
        fn kind(&self) -> &str {
            "bytes"
        }
        fn encode_frame(
            &mut self,
            id: u32,
            _: Time,
            _: DataRate,
            _: crate::resolution::Resolution,
        ) -> Option<crate::encoder::EncodedFrame> {
            let b = bytes_of(id);
            let size = DataSize::from_bytes(b.len() as u64);
            Some(crate::encoder::EncodedFrame {
                payload: Some(crate::packet::Payload::new(b)),
                ..crate::encoder::EncodedFrame::sized(size, id == 0)
            })
        }
        fn request_key_frame(&mut self) {}
        fn skip(&mut self, _: Time, _: DataRate) {}
        fn output_rate(&self) -> DataRate {
            DataRate::ZERO
        }
    }

    /// Runs a second (30 frames) of `Bytes` and checks that every displayed
    /// frame holds exactly the bytes encoded for it.
    fn bytes_arrive(cfg: SenderConfig, rcfg: ReceiverConfig, drop: impl FnMut(&SentPacket) -> bool + 'static) -> Pair {
        let mut pair = Pair::builder().sender(cfg).receiver(rcfg).encoder(Box::new(Bytes)).drop_sent(drop).build();
        pair.run_until(Time::from_millis(1000));
        assert_eq!(pair.displayed().len(), 30, "every frame shown");
        for d in pair.displayed() {
            let f = pair.receiver.frame(d.frame);
            let got = f.payload.as_ref().map(|p| p.bytes());
            assert_eq!(got, Some(&bytes_of(d.frame)[..]), "frame {}", d.frame);
        }
        // Every media packet and retransmission carries its own share of its
        // frame, as large as the packet (a retransmission two bytes more, its
        // original sequence number, RFC 4588 §4); in index order they make
        // the frame.
        let mut shares: std::collections::BTreeMap<(u32, u16), Vec<u8>> = Default::default();
        for t in pair.sent().iter().filter(|t| t.packet.is_frame_data()) {
            let p = &t.packet;
            let b = p.payload.as_ref().expect("a real frame's packet carries bytes");
            let osn = if p.kind == PacketKind::Rtx { crate::packet::RTX_OSN } else { DataSize::ZERO };
            assert_eq!(b.len() as u64 + osn.bytes(), p.size.bytes(), "{p:?}");
            let prev = shares.insert((t.sent.pos.frame, t.sent.pos.index), b.bytes().to_vec());
            assert!(prev.is_none_or(|v| v == b.bytes()), "a retransmission repeats its original: {p:?}");
        }
        for f in 0..30 {
            let joined: Vec<u8> = shares.range((f, 0)..(f + 1, 0)).flat_map(|(_, b)| b.clone()).collect();
            assert_eq!(joined, bytes_of(f), "frame {f}");
        }
        pair
    }

    #[test]
    fn payload_arrives_intact() {
        bytes_arrive(SenderConfig::default(), ReceiverConfig::default(), |_| false);
    }

    #[test]
    fn payload_arrives_through_retransmission() {
        let cfg = SenderConfig { nack: Some(MS * 300), ..SenderConfig::default() };
        let rcfg = ReceiverConfig { nack: true, ..ReceiverConfig::default() };
        // The first packet of frame 4, and frame 5 whole: only retransmissions
        // bring them.
        let lost = |p: &SentPacket| {
            p.kind == PacketKind::Media && ((p.pos.frame == 4 && p.pos.index == 0) || p.pos.frame == 5)
        };
        let pair = bytes_arrive(cfg, rcfg, lost);
        let rtx: Vec<u32> =
            pair.delivered().filter(|t| t.packet.kind == PacketKind::Rtx).map(|t| t.sent.pos.frame).collect();
        assert_eq!(rtx, [4, 5]);
    }

    #[test]
    fn payload_arrives_through_fec() {
        let cfg = SenderConfig { fec: Some(crate::fec::FecConfig::default()), ..SenderConfig::default() };
        // Packet 1 of frame 6 (1000 B, in a group with a 1001 B packet: its
        // length comes from the length recovery field), and frame 7's only
        // packet (a group of one: the parity is its bytes).
        let lost = |p: &SentPacket| {
            p.kind == PacketKind::Media && ((p.pos.frame == 6 && p.pos.index == 1) || p.pos.frame == 7)
        };
        let pair = bytes_arrive(cfg, ReceiverConfig::default(), lost);
        assert_eq!(pair.receiver.repair().fec.recovered, 2);
        // Each parity carries an RFC 5109 FEC payload as large as the parity
        // is modelled (headers 14 B + the longest payload) and the XOR of the
        // protected packets' descriptor blocks, which the model counts as
        // header (no packet's size holds its extension block).
        for t in pair.sent().iter().filter(|t| t.packet.kind == PacketKind::Fec) {
            let b = t.packet.payload.as_ref().expect("a parity over real packets carries their XOR");
            assert_eq!(b.format(), crate::packet::PayloadFormat::Parity);
            let ext = crate::datagram::PROTECTED_EXT_LEN as u64;
            assert_eq!(b.len() as u64, t.packet.size.bytes() + ext, "{:?}", t.packet);
        }
    }

    #[test]
    fn model_frames_carry_no_payload() {
        let mut pair = Pair::builder().build();
        pair.run_until(Time::from_millis(500));
        assert!(!pair.displayed().is_empty());
        assert!(pair.sent().iter().all(|t| t.packet.payload.is_none()));
        assert!(pair.displayed().iter().all(|d| pair.receiver.frame(d.frame).payload.is_none()));
    }

    #[test]
    fn loss_is_seeded_and_independent_per_packet() {
        let run = |seed| {
            let mut pair = frames_of_ten().loss(0.25, seed).build();
            pair.run_until(Time::from_millis(1999));
            pair.sent().iter().map(|t| t.arrival.is_none()).collect::<Vec<bool>>()
        };
        let (a, b, c) = (run(7), run(7), run(8));
        assert_eq!(a, b, "same seed, same losses");
        assert_ne!(a, c);
        let lost = a.iter().filter(|&&l| l).count();
        // 200 packets at 25 %: 50 expected, σ ≈ 6.1.
        assert_eq!(a.len(), 200);
        assert!((32..=68).contains(&lost), "{lost} lost");
    }
}
