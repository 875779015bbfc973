//! The pacer: releases queued media at the pacing rate, honours a congestion
//! window when the controller gives one, fills idle time with padding at the
//! padding rate, and executes probe clusters. Leaky-bucket accounting as in
//! libwebrtc's PacingController: each sent packet adds its size to a debt that
//! drains at the pacing rate; the next packet may leave when the debt is at
//! most `burst` worth of bytes.

use std::collections::VecDeque;

use crate::controller::ProbeCluster;
use crate::packet::{PacketKind, Payload, NO_FRAME};
use crate::units::{DataRate, DataSize, Duration, Time};

/// Smallest padding packet (Dumbo §5.1: dummy packets are at least 200 B).
const MIN_PADDING: DataSize = DataSize::from_bytes(200);
/// A keep-alive is what libwebrtc's RTPSender::GeneratePadding builds for a
/// 1-byte request: too small for RTX payload padding (kMinPayloadPaddingBytes
/// = 50), so one pure padding packet of kMaxPaddingLength = 255 B
/// (rtp_sender.h) behind the 12-byte RTP header.
pub const KEEPALIVE_SIZE: DataSize = DataSize::from_bytes(255 + 12);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacerConfig {
    /// Debt allowed before the pacer waits: 0 = perfectly smooth pacing.
    /// libwebrtc's PacingController sends whenever the media debt is zero; a
    /// burst interval is an opt-in there too, so the default is none.
    pub burst: Duration,
    /// Size of padding and probe-padding packets.
    pub padding_size: DataSize,
    /// libwebrtc caps the media debt at 500 ms of data (kMaxDebtInTime) so a
    /// long stall does not let the queue leave as one burst later.
    pub max_debt: Duration,
    /// libwebrtc PacingController's queue-time limit (kMaxExpectedQueueLength,
    /// 2 s): when the average queued packet could not leave within it, the
    /// pacer sends faster than the pacing rate. `None` switches it off.
    pub queue_time_limit: Option<Duration>,
    /// libwebrtc PacingController::ShouldSendKeepalive: while the congestion
    /// window holds the pacer, one padding packet (`KEEPALIVE_SIZE`) leaves
    /// once nothing was sent for this long (kCongestedPacketInterval,
    /// 500 ms), so feedback on it settles a window whose tail was lost.
    /// `None`: the window holds until the send history expires.
    pub keepalive: Option<Duration>,
    /// How late a wake-up may be and still be caught up. libwebrtc's
    /// PacingController books a late send at the time it was due, not when
    /// the thread woke (ProcessPackets: UpdateTimeAndGetElapsed(target_send_time);
    /// the loop goes on while NextSendTime() <= now), so waking on a coarse
    /// timer does not lower the pacing rate; its prober times a cluster from
    /// the cluster's start. While a paced packet, padding or a probe waits,
    /// its debts may run below zero by up to this much time at their rates,
    /// and what was due meanwhile leaves at once. Zero: wake-ups are exact
    /// (no timing model), nothing to catch up.
    pub catch_up: Duration,
}

impl Default for PacerConfig {
    fn default() -> Self {
        PacerConfig {
            burst: Duration::ZERO,
            padding_size: DataSize::from_bytes(1200),
            max_debt: Duration::from_millis(500),
            queue_time_limit: Some(Duration::from_secs(2)),
            keepalive: None,
            catch_up: Duration::ZERO,
        }
    }
}

/// A packet the pacer holds before its sequence number is assigned.
#[derive(Clone, Debug, PartialEq)]
pub struct Queued {
    pub kind: PacketKind,
    pub size: DataSize,
    pub frame: u32,
    pub index: u16,
    pub count: u16,
    pub media_seq: u32,
    pub group: u16,
    pub flags: u8,
    /// `Packet::timestamp`: the RTP timestamp of its frame's capture (a
    /// parity's, its group's XOR).
    pub timestamp: u32,
    pub enqueued: Time,
    /// Leave without waiting for the pacing rate (a frame burst,
    /// `FrameSchedule`); the window still applies and the bytes still count
    /// against the pacing budget.
    pub burst: bool,
    /// `Packet::payload`.
    pub payload: Option<Payload>,
}

impl Queued {
    /// A packet without media fields (padding, probe padding).
    pub fn filler(kind: PacketKind, size: DataSize, now: Time) -> Queued {
        Queued {
            kind,
            size,
            frame: NO_FRAME,
            index: 0,
            count: 0,
            media_seq: 0,
            group: 0,
            flags: 0,
            timestamp: crate::packet::rtp_timestamp(now),
            enqueued: now,
            burst: false,
            payload: None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct ActiveProbe {
    cluster: ProbeCluster,
    sent_bytes: DataSize,
    sent_packets: u32,
    /// When its first packet left (libwebrtc's prober starts a cluster's
    /// clock there): no catch-up before it, nor while a window holds it back
    /// before its first packet.
    started: Option<Time>,
}

pub struct Pacer {
    cfg: PacerConfig,
    /// [0]: audio and retransmissions (first come, first served), [1]: video
    /// and FEC. libwebrtc orders audio > retransmission > video/FEC; here
    /// audio and retransmissions share the first level.
    queues: [VecDeque<Queued>; 2],
    queued_bytes: DataSize,
    /// Sum of the queued packets' enqueue times (µs), for the average age.
    enqueued_sum: i64,
    pacing_rate: DataRate,
    padding_rate: DataRate,
    cwnd: Option<DataSize>,
    /// Bytes sent ahead of the pacing rate, drained since `updated`.
    debt: f64,
    padding_debt: f64,
    probe_debt: f64,
    updated: Time,
    probes: VecDeque<ProbeCluster>,
    probe: Option<ActiveProbe>,
    /// Whether the pacer has sent anything: libwebrtc sends no padding before
    /// the first media packet.
    sent_media: bool,
    /// When the last packet of any kind left (`PacerConfig::keepalive`).
    last_sent: Time,
}

impl Pacer {
    pub fn new(cfg: PacerConfig) -> Self {
        Pacer {
            cfg,
            queues: [VecDeque::with_capacity(64), VecDeque::with_capacity(64)],
            queued_bytes: DataSize::ZERO,
            enqueued_sum: 0,
            pacing_rate: DataRate::ZERO,
            padding_rate: DataRate::ZERO,
            cwnd: None,
            debt: 0.0,
            padding_debt: 0.0,
            probe_debt: 0.0,
            updated: Time::ZERO,
            probes: VecDeque::new(),
            probe: None,
            sent_media: false,
            last_sent: Time::ZERO,
        }
    }

    pub fn set_rates(&mut self, now: Time, pacing: DataRate, padding: DataRate, cwnd: Option<DataSize>) {
        self.drain(now);
        self.pacing_rate = pacing;
        self.padding_rate = padding;
        self.cwnd = cwnd;
        // Credit is at most `catch_up` at the rate it is spent at.
        let cap = |rate: DataRate| (rate * self.cfg.catch_up).bytes() as f64;
        self.debt = self.debt.max(-cap(self.effective_rate(now)));
        self.padding_debt = self.padding_debt.max(-cap(padding));
    }

    pub fn pacing_rate(&self) -> DataRate {
        self.pacing_rate
    }

    pub fn add_probe(&mut self, cluster: ProbeCluster) {
        if cluster.rate > DataRate::ZERO {
            self.probes.push_back(cluster);
        }
    }

    pub fn enqueue(&mut self, item: Queued) {
        if self.front().is_none() {
            // Credit left from before (padding's, or a head that has left at
            // this instant) was not earned by this packet.
            self.debt = self.debt.max(0.0);
            self.padding_debt = self.padding_debt.max(0.0);
        }
        self.queued_bytes += item.size;
        self.enqueued_sum += item.enqueued.as_micros();
        let q = if matches!(item.kind, PacketKind::Audio | PacketKind::Rtx) { 0 } else { 1 };
        self.queues[q].push_back(item);
    }

    fn front(&self) -> Option<&Queued> {
        self.queues[0].front().or_else(|| self.queues[1].front())
    }

    fn pop(&mut self) -> Option<Queued> {
        let q = self.queues[0].pop_front().or_else(|| self.queues[1].pop_front())?;
        self.queued_bytes -= q.size;
        self.enqueued_sum -= q.enqueued.as_micros();
        Some(q)
    }

    /// Average time the queued packets have waited.
    pub fn average_age(&self, now: Time) -> Duration {
        let n = self.queued_packets() as i64;
        if n == 0 {
            return Duration::ZERO;
        }
        now.saturating_since(Time::from_micros(self.enqueued_sum / n))
    }

    /// The pacing rate, raised when the queue-time limit applies
    /// (PacingController: min_rate_needed = queue_size / max(1 ms, limit − average queue time)).
    pub fn effective_rate(&self, now: Time) -> DataRate {
        let Some(limit) = self.cfg.queue_time_limit else { return self.pacing_rate };
        if self.queued_bytes == DataSize::ZERO {
            return self.pacing_rate;
        }
        let left = (limit - self.average_age(now)).max(Duration::from_millis(1));
        let needed = self.queued_bytes.bytes() as f64 * 8e6 / left.as_micros() as f64;
        if needed <= self.pacing_rate.bps() as f64 {
            return self.pacing_rate;
        }
        DataRate::from_bps_f64(needed)
    }

    /// Whether the queue is over the queue-time limit at the pacing rate:
    /// libwebrtc then pauses the encoder until it drains.
    pub fn over_queue_time_limit(&self) -> bool {
        self.cfg.queue_time_limit.is_some_and(|l| self.queue_drain_time() > l)
    }

    pub fn queued_bytes(&self) -> DataSize {
        self.queued_bytes
    }

    pub fn queued_packets(&self) -> usize {
        self.queues[0].len() + self.queues[1].len()
    }

    /// Time to drain the media queue at the pacing rate.
    pub fn queue_drain_time(&self) -> Duration {
        if self.queued_bytes == DataSize::ZERO {
            return Duration::ZERO;
        }
        self.queued_bytes / self.pacing_rate
    }

    /// Drop every queued packet (flow stopped).
    pub fn clear(&mut self) {
        self.queues.iter_mut().for_each(VecDeque::clear);
        self.queued_bytes = DataSize::ZERO;
        self.enqueued_sum = 0;
        self.probes.clear();
        self.probe = None;
    }

    fn drain(&mut self, now: Time) {
        let dt = (now - self.updated).as_secs_f64();
        if dt > 0.0 {
            let rate = self.effective_rate(now);
            let per_s = rate.bps() as f64 / 8.0;
            let pad_per_s = self.padding_rate.bps() as f64 / 8.0;
            let probe_per_s = self.probe.as_ref().map_or(0.0, |p| p.cluster.rate.bps() as f64 / 8.0);
            // Each floor is taken before any debt moves: it reads the debts
            // as they stood at `updated`.
            let (media, padding, probe) = self.credit(now, per_s, pad_per_s, probe_per_s);
            self.debt = (self.debt - per_s * dt).max(-media);
            self.padding_debt = (self.padding_debt - pad_per_s * dt).max(-padding);
            if self.probe.is_some() {
                self.probe_debt = (self.probe_debt - probe_per_s * dt).max(-probe);
            }
            self.updated = now;
        }
    }

    /// When a debt at `per_s` bytes per second is (or was) paid off; signed:
    /// a debt already below zero is credit granted at `updated`, so what it
    /// held back has been due since before then, and a wake-up in between (a
    /// rate update, a spurious timer) does not forfeit what it had earned.
    fn paid_off(&self, debt: f64, per_s: f64) -> Time {
        self.updated + Duration::from_micros((debt / per_s * 1e6).round() as i64)
    }

    /// Bytes a late wake-up may catch up (`PacerConfig::catch_up`), as
    /// (media, padding, probe) debt below zero: libwebrtc's PacingController
    /// books what it sends on a late wake-up at the time it was due
    /// (ProcessPackets: `UpdateTimeAndGetElapsed(target_send_time)`), and its
    /// prober times a cluster from the cluster's start, so neither a paced
    /// packet, padding nor a probe loses the lateness. Here: the time the
    /// next packet has been due, at most `catch_up`, at each debt's rate.
    /// Nothing for what is not next to leave, and nothing while there is
    /// nothing to send: idle time earns no credit. Time a head waits for the
    /// congestion window counts as waiting (one tick at most), as a wake-up
    /// on the tick after the acknowledgement would be that late.
    fn credit(&self, now: Time, per_s: f64, pad_per_s: f64, probe_per_s: f64) -> (f64, f64, f64) {
        if !self.cfg.catch_up.is_positive() {
            return (0.0, 0.0, 0.0);
        }
        let earliest = now - self.cfg.catch_up;
        let since = |due: Time| now.saturating_since(due.max(earliest)).as_secs_f64();
        if let Some(p) = &self.probe {
            if probe_per_s <= 0.0 {
                return (0.0, 0.0, 0.0);
            }
            let Some(started) = p.started else { return (0.0, 0.0, 0.0) };
            let due = self.paid_off(self.probe_debt, probe_per_s).max(started);
            return (0.0, 0.0, probe_per_s * since(due));
        }
        if !self.probes.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        if let Some(head) = self.front() {
            if head.burst || per_s <= 0.0 {
                return (0.0, 0.0, 0.0);
            }
            let due = self.paid_off(self.debt, per_s).max(head.enqueued);
            return (per_s * since(due), 0.0, 0.0);
        }
        // Padding waits for both debts, the media one at the pacing rate.
        let pace_per_s = self.pacing_rate.bps() as f64 / 8.0;
        if pad_per_s <= 0.0 || pace_per_s <= 0.0 || !self.sent_media {
            return (0.0, 0.0, 0.0);
        }
        let due = self.paid_off(self.padding_debt, pad_per_s).max(self.paid_off(self.debt, pace_per_s));
        let s = since(due);
        (pace_per_s * s, pad_per_s * s, 0.0)
    }

    fn allowance(&self, rate: DataRate) -> f64 {
        (rate * self.cfg.burst).bytes() as f64
    }

    fn cwnd_allows(&self, in_flight: DataSize, size: DataSize) -> bool {
        match self.cwnd {
            None => true,
            // libwebrtc lets one packet out when nothing is in flight so a
            // window below one packet cannot stall the flow.
            Some(w) => in_flight == DataSize::ZERO || in_flight + size <= w,
        }
    }

    /// The window holds the pacer: full (PacingController's congested_,
    /// outstanding ≥ window), or too full for the packet it would send next.
    fn congested(&self, in_flight: DataSize) -> bool {
        let Some(w) = self.cwnd else { return false };
        in_flight > DataSize::ZERO
            && (in_flight >= w || self.front().is_some_and(|q| !self.cwnd_allows(in_flight, q.size)))
    }

    /// When a keep-alive is due, if the window holds the pacer: after media
    /// has been sent ("We can not send padding unless a normal packet has
    /// first been sent"), `keepalive` after the last send.
    fn keepalive_at(&self, in_flight: DataSize) -> Option<Time> {
        let every = self.cfg.keepalive?;
        (self.sent_media && self.congested(in_flight)).then(|| self.last_sent + every)
    }

    /// Wait until `debt` at `rate` is within the burst allowance.
    fn ready_at(&self, debt: f64, rate: DataRate) -> Option<Time> {
        let excess = debt - self.allowance(rate);
        if excess <= 0.0 {
            return Some(self.updated);
        }
        if rate == DataRate::ZERO {
            return None;
        }
        // Round up without a libm call: this runs once per paced packet.
        let x = excess * 8e6 / rate.bps() as f64;
        let mut us = x as i64;
        if (us as f64) < x {
            us += 1;
        }
        Some(self.updated + Duration::from_micros(us))
    }

    fn start_probe_if_any(&mut self) {
        if self.probe.is_none() {
            if let Some(c) = self.probes.pop_front() {
                self.probe =
                    Some(ActiveProbe { cluster: c, sent_bytes: DataSize::ZERO, sent_packets: 0, started: None });
                self.probe_debt = 0.0;
            }
        }
    }

    /// Start loading the packets each queue sends next (`crate::cache`):
    /// two, as one wake-up often sends two.
    #[inline]
    #[cfg(feature = "sim-layout")]
    pub fn prefetch(&self) {
        for q in &self.queues {
            for x in q.range(..q.len().min(2)) {
                crate::cache::prefetch_val(x);
            }
        }
    }

    /// When the pacer next wants to send, given the bytes in flight.
    pub fn poll_timeout(&self, in_flight: DataSize) -> Option<Time> {
        let t = self.next_send(in_flight);
        match self.keepalive_at(in_flight) {
            Some(k) => Some(t.map_or(k, |t| t.min(k))),
            None => t,
        }
    }

    fn next_send(&self, in_flight: DataSize) -> Option<Time> {
        if let Some(p) = &self.probe {
            if !self.cwnd_allows(in_flight, self.cfg.padding_size) {
                return None;
            }
            return self.ready_at(self.probe_debt, p.cluster.rate);
        }
        if !self.probes.is_empty() {
            return Some(self.updated);
        }
        if let Some(head) = self.front() {
            if !self.cwnd_allows(in_flight, head.size) {
                return None;
            }
            if head.burst {
                return Some(self.updated);
            }
            return self.ready_at(self.debt, self.effective_rate(self.updated));
        }
        if self.padding_rate > DataRate::ZERO
            && self.sent_media
            && self.cwnd_allows(in_flight, self.padding_size(in_flight))
        {
            let a = self.ready_at(self.padding_debt, self.padding_rate)?;
            let b = self.ready_at(self.debt, self.pacing_rate)?;
            return Some(a.max(b));
        }
        None
    }

    /// The next packet to send at `now`, if any; `seq` is assigned by the caller.
    pub fn poll_send(&mut self, now: Time, in_flight: DataSize) -> Option<(Queued, i32)> {
        self.drain(now);
        if self.keepalive_at(in_flight).is_some_and(|t| t <= now) {
            // PacingController::ProcessPackets sends it first and books it
            // as padding (OnPacketSent: media and padding debt).
            let size = KEEPALIVE_SIZE.bytes() as f64;
            self.debt = (self.debt + size).min(self.max_debt_bytes());
            self.padding_debt += size;
            self.last_sent = now;
            return Some((Queued::filler(PacketKind::Padding, KEEPALIVE_SIZE, now), -1));
        }
        let sent = self.send(now, in_flight);
        if sent.is_some() {
            self.last_sent = now;
        }
        sent
    }

    fn send(&mut self, now: Time, in_flight: DataSize) -> Option<(Queued, i32)> {
        self.start_probe_if_any();
        if let Some(p) = self.probe {
            if !self.cwnd_allows(in_flight, self.cfg.padding_size)
                || self.ready_at(self.probe_debt, p.cluster.rate)? > now
            {
                return None;
            }
            let item = match self.pop() {
                Some(q) => {
                    self.sent_media = true;
                    q
                }
                None => Queued::filler(PacketKind::Probe, self.cfg.padding_size, now),
            };
            let size = item.size.bytes() as f64;
            self.probe_debt += size;
            self.debt = (self.debt + size).min(self.max_debt_bytes());
            let ap = self.probe.as_mut()?;
            ap.sent_bytes += item.size;
            ap.sent_packets += 1;
            ap.started.get_or_insert(now);
            let id = ap.cluster.id;
            if ap.sent_bytes >= ap.cluster.min_bytes && ap.sent_packets >= ap.cluster.min_packets {
                self.probe = None;
            }
            return Some((item, id));
        }
        if let Some(head) = self.front() {
            if !self.cwnd_allows(in_flight, head.size)
                || (!head.burst && self.ready_at(self.debt, self.effective_rate(now))? > now)
            {
                return None;
            }
            let q = self.pop()?;
            self.debt = (self.debt + q.size.bytes() as f64).min(self.max_debt_bytes());
            self.sent_media = true;
            return Some((q, -1));
        }
        if self.padding_rate > DataRate::ZERO && self.sent_media {
            let size = self.padding_size(in_flight);
            if !self.cwnd_allows(in_flight, size)
                || self.ready_at(self.padding_debt, self.padding_rate)? > now
                || self.ready_at(self.debt, self.pacing_rate)? > now
            {
                return None;
            }
            self.padding_debt += size.bytes() as f64;
            self.debt = (self.debt + size.bytes() as f64).min(self.max_debt_bytes());
            return Some((Queued::filler(PacketKind::Padding, size, now), -1));
        }
        None
    }

    /// Padding fills the window exactly when it is nearly full (Dumbo §5.1:
    /// dummy packets of at least 200 B, up to the window).
    fn padding_size(&self, in_flight: DataSize) -> DataSize {
        match self.cwnd {
            Some(w) => (w - in_flight).clamp(MIN_PADDING, self.cfg.padding_size.max(MIN_PADDING)),
            None => self.cfg.padding_size,
        }
    }

    fn max_debt_bytes(&self) -> f64 {
        ((self.pacing_rate * self.cfg.max_debt).bytes() as f64).max(self.cfg.padding_size.bytes() as f64 * 4.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_time_limit_raises_the_rate() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_mbps(1), DataRate::ZERO, None);
        // 500 kB queued at once: 4 s at 1 Mbps, but the limit is 2 s.
        for _ in 0..500 {
            p.enqueue(media(1000));
        }
        assert!(p.over_queue_time_limit());
        assert_eq!(p.effective_rate(Time::ZERO), DataRate::from_mbps(2));
        let sent = drain_all(&mut p, DataSize::ZERO, Time::from_secs_f64(10.0));
        let last = sent.last().unwrap().0;
        assert!(last <= Time::from_millis(2010), "drained at {last}");
        assert!(last >= Time::from_millis(1800), "drained at {last}");
    }

    #[test]
    fn burst_lets_packets_leave_together() {
        let cfg = PacerConfig { burst: Duration::from_millis(5), ..PacerConfig::default() };
        let mut p = Pacer::new(cfg);
        p.set_rates(Time::ZERO, DataRate::from_kbps(9600), DataRate::ZERO, None);
        for _ in 0..10 {
            p.enqueue(media(1200));
        }
        // 5 ms at 9.6 Mbps = 6000 B of allowance: six packets at once.
        let mut n = 0;
        while p.poll_send(Time::ZERO, DataSize::ZERO).is_some() {
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn retransmissions_go_first() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_mbps(1), DataRate::ZERO, None);
        p.enqueue(media(1000));
        p.enqueue(Queued { kind: PacketKind::Rtx, ..media(500) });
        let (q, _) = p.poll_send(Time::ZERO, DataSize::ZERO).unwrap();
        assert_eq!(q.kind, PacketKind::Rtx);
    }

    fn media(size: u64) -> Queued {
        Queued { frame: 0, count: 1, ..Queued::filler(PacketKind::Media, DataSize::from_bytes(size), Time::ZERO) }
    }

    fn drain_all(p: &mut Pacer, in_flight: DataSize, until: Time) -> Vec<(Time, Queued)> {
        let mut out = vec![];
        let mut now = Time::ZERO;
        while let Some(t) = p.poll_timeout(in_flight) {
            if t > until {
                break;
            }
            now = now.max(t);
            while let Some((q, _)) = p.poll_send(now, in_flight) {
                out.push((now, q));
            }
        }
        out
    }

    #[test]
    fn paces_at_rate() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_kbps(960), DataRate::ZERO, None);
        for _ in 0..10 {
            p.enqueue(media(1200));
        }
        let sent = drain_all(&mut p, DataSize::ZERO, Time::from_millis(1000));
        assert_eq!(sent.len(), 10);
        // 1200 B at 960 kbps = 10 ms apart.
        assert_eq!(sent[9].0, Time::from_millis(90));
    }

    #[test]
    fn cwnd_blocks() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_mbps(10), DataRate::ZERO, Some(DataSize::from_bytes(3000)));
        p.enqueue(media(1200));
        assert!(p.poll_send(Time::ZERO, DataSize::from_bytes(2400)).is_none());
        assert!(p.poll_timeout(DataSize::from_bytes(2400)).is_none());
        assert!(p.poll_send(Time::ZERO, DataSize::from_bytes(1800)).is_some());
    }

    #[test]
    fn padding_fills_idle_at_padding_rate() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_mbps(10), DataRate::from_kbps(960), None);
        p.enqueue(media(1200));
        let sent = drain_all(&mut p, DataSize::ZERO, Time::from_millis(1000));
        let padding = sent.iter().filter(|(_, q)| q.kind == PacketKind::Padding).count();
        // 960 kbps of 1200 B padding = 100 packets per second.
        assert!((99..=101).contains(&padding), "{padding}");
    }

    #[test]
    fn keepalive_leaves_every_interval_while_the_window_is_full() {
        let window = Some(DataSize::from_bytes(3000));
        let on = PacerConfig { keepalive: Some(Duration::from_millis(500)), ..PacerConfig::default() };
        let mut p = Pacer::new(on);
        p.set_rates(Time::ZERO, DataRate::from_mbps(10), DataRate::ZERO, window);
        let full = DataSize::from_bytes(3000);
        p.enqueue(media(1200));
        // Nothing sent yet: no keep-alive before the first media packet.
        assert!(p.poll_timeout(full).is_none());
        p.enqueue(media(1200));
        let (q, _) = p.poll_send(Time::from_millis(100), DataSize::ZERO).unwrap();
        assert_eq!(q.kind, PacketKind::Media);
        // The window is full: the media waits, a keep-alive leaves 500 ms
        // after the last send, and the next 500 ms after it.
        assert_eq!(p.poll_timeout(full), Some(Time::from_millis(600)));
        assert!(p.poll_send(Time::from_millis(599), full).is_none());
        let (k, id) = p.poll_send(Time::from_millis(600), full).unwrap();
        assert_eq!((k.kind, k.size, id), (PacketKind::Padding, KEEPALIVE_SIZE, -1));
        assert_eq!(p.queued_packets(), 1);
        let fuller = full + KEEPALIVE_SIZE;
        assert_eq!(p.poll_timeout(fuller), Some(Time::from_millis(1100)));
        // Feedback empties the window: the media goes, no keep-alive.
        let (q, _) = p.poll_send(Time::from_millis(700), DataSize::ZERO).unwrap();
        assert_eq!(q.kind, PacketKind::Media);
        assert!(p.poll_timeout(DataSize::from_bytes(1200)).is_none());
        // Off (the default): the window holds the pacer with no timer.
        let mut off = Pacer::new(PacerConfig::default());
        off.set_rates(Time::ZERO, DataRate::from_mbps(10), DataRate::ZERO, window);
        off.enqueue(media(1200));
        off.enqueue(media(1200));
        assert!(off.poll_send(Time::ZERO, DataSize::ZERO).is_some());
        assert!(off.poll_timeout(full).is_none());
        assert!(off.poll_send(Time::from_millis(3000), full).is_none());
    }

    #[test]
    fn probe_cluster_sends_at_probe_rate() {
        let mut p = Pacer::new(PacerConfig::default());
        p.set_rates(Time::ZERO, DataRate::from_kbps(300), DataRate::ZERO, None);
        p.add_probe(ProbeCluster {
            id: 7,
            rate: DataRate::from_kbps(9600),
            min_bytes: DataSize::from_bytes(6000),
            min_packets: 5,
        });
        let mut now = Time::ZERO;
        let mut ids = vec![];
        while let Some(t) = p.poll_timeout(DataSize::ZERO) {
            now = t;
            let (q, id) = p.poll_send(now, DataSize::ZERO).unwrap();
            assert_eq!(q.kind, PacketKind::Probe);
            ids.push(id);
        }
        assert_eq!(ids, vec![7; 5]);
        // 4 gaps of 1200 B at 9.6 Mbps = 1 ms each.
        assert_eq!(now, Time::from_millis(4));
    }

    /// Sends every packet due by each wake-up of a `tick` grid: a wake-up for a
    /// packet due at t happens at the first grid instant at or after t.
    fn drain_on_grid(p: &mut Pacer, tick: Duration, until: Time) -> usize {
        let mut sent = 0;
        while let Some(t) = p.poll_timeout(DataSize::ZERO) {
            let ticks = (t.as_micros() + tick.as_micros() - 1) / tick.as_micros();
            let now = Time::from_micros(ticks * tick.as_micros());
            if now > until {
                break;
            }
            while p.poll_send(now, DataSize::ZERO).is_some() {
                sent += 1;
            }
        }
        sent
    }

    #[test]
    fn a_coarse_wake_up_grid_keeps_the_pacing_rate_with_catch_up() {
        // 1000 B at 1.3 Mbps: one packet every 6.15 ms. Waking on a 1 ms grid
        // without catch-up, each packet leaves on the tick after it is due and
        // the next one is timed from there: every interval rounds up to 7 ms.
        let tick = Duration::from_millis(1);
        let run = |catch_up: Duration| {
            let mut p = Pacer::new(PacerConfig { catch_up, ..PacerConfig::default() });
            p.set_rates(Time::ZERO, DataRate::from_kbps(1300), DataRate::ZERO, None);
            // 1.23 s of data: under the 2 s queue-time limit, which would raise the rate.
            for _ in 0..200 {
                p.enqueue(media(1000));
            }
            drain_on_grid(&mut p, tick, Time::from_millis(1000))
        };
        let exact = 1_300_000 / 8 / 1000; // 162 packets in 1 s
        let caught_up = run(tick);
        let lost = run(Duration::ZERO);
        assert!(caught_up.abs_diff(exact) <= 1, "with catch-up: {caught_up} packets, exact {exact}");
        assert!(lost <= 1000 / 7 + 1, "without catch-up: {lost} packets (7 ms apart)");
    }

    #[test]
    fn a_wake_up_that_changes_nothing_changes_no_send_time() {
        // The same grid, once with an extra rate update (same rates) between
        // ticks: the catch-up credit is what it was, so every packet leaves at
        // the same instant.
        let tick = Duration::from_millis(1);
        let run = |extra: bool| {
            let mut p = Pacer::new(PacerConfig { catch_up: tick, ..PacerConfig::default() });
            let rate = DataRate::from_kbps(1300);
            p.set_rates(Time::ZERO, rate, DataRate::ZERO, None);
            for _ in 0..100 {
                p.enqueue(media(1000));
            }
            let mut sent = vec![];
            while let Some(t) = p.poll_timeout(DataSize::ZERO) {
                let now = Time::from_micros((t.as_micros() + 999) / 1000 * 1000);
                if extra {
                    p.set_rates(now - Duration::from_micros(370), rate, DataRate::ZERO, None);
                }
                while p.poll_send(now, DataSize::ZERO).is_some() {
                    sent.push(now);
                }
            }
            sent
        };
        assert_eq!(run(true), run(false));
    }

    #[test]
    fn padding_and_probes_on_a_coarse_grid_keep_their_rates_with_catch_up() {
        // 1000 B of padding at 1.3 Mbps (one every 6.15 ms) and a 9.6 Mbps
        // probe of 1200 B packets (one every 1 ms, so each late wake-up would
        // push the next): on a 1 ms grid both lose rate without catch-up.
        let tick = Duration::from_millis(1);
        let padding = |catch_up: Duration| {
            let mut p = Pacer::new(PacerConfig {
                catch_up,
                padding_size: DataSize::from_bytes(1000),
                ..PacerConfig::default()
            });
            p.set_rates(Time::ZERO, DataRate::from_mbps(10), DataRate::from_kbps(1300), None);
            p.enqueue(media(1000));
            drain_on_grid(&mut p, tick, Time::from_millis(1000))
        };
        // The media packet, then 1 s of padding.
        let exact = 1 + 1_300_000 / 8 / 1000;
        assert!(padding(tick).abs_diff(exact) <= 1, "padding with catch-up: {} packets, exact {exact}", padding(tick));
        assert!(padding(Duration::ZERO) <= 1 + 1000 / 7 + 1, "padding without catch-up: {}", padding(Duration::ZERO));
        let probe = |catch_up: Duration| {
            let mut p = Pacer::new(PacerConfig { catch_up, ..PacerConfig::default() });
            p.set_rates(Time::ZERO, DataRate::from_kbps(300), DataRate::ZERO, None);
            p.add_probe(ProbeCluster {
                id: 1,
                rate: DataRate::from_kbps(9600),
                min_bytes: DataSize::from_bytes(60_000),
                min_packets: 50,
            });
            // Wake-ups 0.4 ms after each grid instant: every probe is late.
            let mut last = Time::ZERO;
            while let Some(t) = p.poll_timeout(DataSize::ZERO) {
                let now = Time::from_micros((t.as_micros() + 999) / 1000 * 1000 + 400);
                if now > Time::from_millis(1000) {
                    break;
                }
                while let Some((q, _)) = p.poll_send(now, DataSize::ZERO) {
                    if q.kind == PacketKind::Probe {
                        last = now;
                    }
                }
            }
            last
        };
        // 50 packets 1 ms apart, the first at 0.4 ms: the last is due at
        // 49.4 ms and leaves on the next wake-up, one tick late, with no
        // lateness carried from the 48 before it.
        assert_eq!(probe(tick), Time::from_micros(50_400));
        assert!(
            probe(Duration::ZERO) >= Time::from_millis(90),
            "probe without catch-up ends at {:?}",
            probe(Duration::ZERO)
        );
    }

    #[test]
    fn credit_is_earned_only_by_what_waits() {
        let tick = Duration::from_millis(1);
        let ms = |x: f64| Time::from_micros((x * 1000.0) as i64);
        // A probe the window holds back before its first packet earns nothing:
        // when the window opens 3 ms later, one packet leaves, the next 1 ms on.
        let mut p = Pacer::new(PacerConfig { catch_up: tick, ..PacerConfig::default() });
        p.set_rates(Time::ZERO, DataRate::from_kbps(300), DataRate::ZERO, Some(DataSize::from_bytes(10_000)));
        p.add_probe(ProbeCluster {
            id: 1,
            rate: DataRate::from_kbps(9600),
            min_bytes: DataSize::from_bytes(6000),
            min_packets: 5,
        });
        assert!(p.poll_send(Time::ZERO, DataSize::from_bytes(9_500)).is_none());
        assert!(p.poll_send(ms(3.0), DataSize::ZERO).is_some());
        assert!(p.poll_send(ms(3.0), DataSize::ZERO).is_none());
        assert_eq!(p.poll_timeout(DataSize::ZERO), Some(ms(4.0)));
        // Padding's credit (a late wake-up at 10.9 ms for padding due at 10 ms)
        // is not spent by media enqueued at that instant: its next packet is
        // due a whole packet time after the first.
        let mut p = Pacer::new(PacerConfig {
            catch_up: tick,
            padding_size: DataSize::from_bytes(1250),
            ..PacerConfig::default()
        });
        let mbps = DataRate::from_mbps(1);
        p.set_rates(Time::ZERO, mbps, mbps, None);
        p.enqueue(media(1250));
        assert!(p.poll_send(Time::ZERO, DataSize::ZERO).is_some());
        p.set_rates(ms(10.9), mbps, mbps, None);
        for _ in 0..2 {
            p.enqueue(Queued { enqueued: ms(10.9), ..media(1250) });
        }
        assert!(p.poll_send(ms(10.9), DataSize::ZERO).is_some());
        assert_eq!(p.poll_timeout(DataSize::ZERO), Some(ms(20.9)));
    }

    #[test]
    fn idle_time_earns_no_catch_up() {
        // A frame enqueued after 100 ms of idle leaves paced, catch-up or not:
        // only time a paced packet spent waiting is caught up.
        let mut p = Pacer::new(PacerConfig { catch_up: Duration::from_millis(1), ..PacerConfig::default() });
        p.set_rates(Time::ZERO, DataRate::from_mbps(1), DataRate::ZERO, None);
        let at = Time::from_millis(100);
        for _ in 0..10 {
            p.enqueue(Queued { enqueued: at, ..media(1250) });
        }
        let mut first = 0;
        while p.poll_send(at, DataSize::ZERO).is_some() {
            first += 1;
        }
        // 1250 B at 1 Mbps is 10 ms: one packet now (the debt starts at zero), the rest paced.
        assert_eq!(first, 1);
        assert_eq!(p.poll_timeout(DataSize::ZERO), Some(at + Duration::from_millis(10)));
    }
}
