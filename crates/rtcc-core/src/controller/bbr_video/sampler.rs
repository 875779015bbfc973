//! Delivery-rate samples from video transport feedback
//! (draft-cheng-iccrg-delivery-rate-estimation-02 §3, Linux
//! `net/ipv4/tcp_rate.c`), in bytes: every sent packet is stamped with the
//! flow's delivery state; a report turns the stamp of the most recently sent
//! packet it acknowledges into one sample.
//!
//! `tcp::rate` does the same for TCP but counts segments, takes TCP's
//! cumulative and selective ACKs and is private to `tcp`; a report here
//! acknowledges an arbitrary set of transport sequences at once, says which
//! were lost, and settles the unreported ones before its newest (as the
//! sender's in-flight count does, libwebrtc `TransportFeedbackAdapter`).

use std::collections::VecDeque;

use crate::bbr::BbrAck;
use crate::feedback::Feedback;
use crate::units::{DataSize, Duration, Time};

/// Stamps older than this are dropped unreported: the sender forgets its
/// packets after `SenderConfig::history` (5 s by default) and reports
/// nothing about them.
const KEEP: Duration = Duration::from_secs(10);

/// One transmission's stamp (draft §2.3: `P.delivered`, `P.delivered_time`,
/// `P.first_sent_time`, `P.is_app_limited`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Stamp {
    sent: Time,
    size: DataSize,
    delivered: DataSize,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
}

/// What one report told the sampler: the model's input, all but what the
/// caller knows (`srtt`, `in_recovery`), and the newest acknowledged
/// sequence for the recovery state. Reads through to the `BbrAck`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Delivery {
    pub ack: BbrAck,
    /// Highest acknowledged transport sequence.
    pub newest_acked: Option<u64>,
}

impl std::ops::Deref for Delivery {
    type Target = BbrAck;
    fn deref(&self) -> &BbrAck {
        &self.ack
    }
}

/// The flow's delivery state and the stamps of packets not yet reported.
#[derive(Clone, Debug)]
pub struct Sampler {
    /// `stamps[i]` is sequence `base + i`; `None` once reported or unknown.
    stamps: VecDeque<Option<Stamp>>,
    base: u64,
    /// Draft §2.2: `C.delivered`, `C.delivered_time`, `C.first_sent_time`.
    delivered: DataSize,
    delivered_time: Time,
    first_sent_time: Time,
    /// `C.app_limited`: packets sent until `delivered` passes this mark are
    /// app-limited. The first flight is (Linux `tcp_init_sock` sets
    /// `app_limited = ~0U`), until the first delivery.
    app_limited: Option<DataSize>,
    in_flight: DataSize,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            stamps: VecDeque::new(),
            base: 0,
            delivered: DataSize::ZERO,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            app_limited: Some(DataSize::ZERO),
            in_flight: DataSize::ZERO,
        }
    }
}

impl Sampler {
    /// Bytes sent and not yet reported (acknowledged, lost or settled).
    pub fn in_flight(&self) -> DataSize {
        self.in_flight
    }

    #[cfg(test)]
    fn delivered(&self) -> DataSize {
        self.delivered
    }

    /// Whether the flow is in an app-limited period.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited.is_some()
    }

    /// The sender has nothing to send and room to send it (draft §3.4, Linux
    /// `tcp_rate_check_app_limited`): samples of packets sent until what is
    /// in flight now is delivered say nothing about the path's capacity.
    pub fn mark_app_limited(&mut self) {
        self.app_limited = Some(self.delivered + self.in_flight);
    }

    /// Stamp packet `seq` of `size` sent at `now` (draft §3.2, Linux
    /// `tcp_rate_skb_sent`). A sequence at or below one already stamped is
    /// ignored: the sender numbers its packets in send order.
    pub fn on_sent(&mut self, now: Time, seq: u64, size: DataSize) {
        while self.stamps.front().is_some_and(|s| s.is_none_or(|s| now.saturating_since(s.sent) > KEEP)) {
            if let Some(Some(s)) = self.stamps.pop_front() {
                self.in_flight -= s.size;
            }
            self.base += 1;
        }
        if self.stamps.is_empty() {
            self.base = self.base.max(seq);
        }
        let Some(gap) = seq.checked_sub(self.base + self.stamps.len() as u64) else { return };
        // Nothing in flight: the sending interval starts now.
        if self.in_flight == DataSize::ZERO {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let stamp = Stamp {
            sent: now,
            size,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited.is_some(),
        };
        if gap > KEEP_GAP {
            // A jump in numbering: start afresh rather than fill the gap.
            self.stamps.iter().flatten().for_each(|s| self.in_flight -= s.size);
            self.stamps.clear();
            self.base = seq;
        } else {
            self.stamps.extend((0..gap).map(|_| None));
        }
        self.stamps.push_back(Some(stamp));
        self.in_flight += size;
    }

    /// One report received at `now`: acknowledged bytes are delivered, lost
    /// ones leave the flight, and the most recently sent acknowledged packet
    /// gives the rate sample (draft §3.3, Linux `tcp_rate_gen`). `min_rtt`
    /// invalidates samples over a shorter interval. `None` if the report
    /// named no packet still awaiting one.
    pub fn on_feedback(&mut self, now: Time, fb: &Feedback, min_rtt: Option<Duration>) -> Option<Delivery> {
        let prior_in_flight = self.in_flight;
        let mut d = BbrAck { now, prior_in_flight, ..BbrAck::default() };
        let mut newest_acked = None;
        // The chosen packet: the most recently sent, the higher sequence on
        // a tie (Linux `tcp_rate_skb_delivered`, `tcp_skb_sent_after`).
        let mut chosen: Option<(Stamp, u64)> = None;
        let mut newest_reported = None;
        for p in &fb.packets {
            let Some(i) = p.seq.checked_sub(self.base) else { continue };
            let Some(s) = self.stamps.get_mut(i as usize).and_then(Option::take) else { continue };
            newest_reported = newest_reported.max(Some(p.seq));
            self.in_flight -= s.size;
            if p.arrival.is_none() {
                d.lost += s.size;
                continue;
            }
            d.acked += s.size;
            self.delivered += s.size;
            self.delivered_time = now;
            newest_acked = newest_acked.max(Some(p.seq));
            if let Some(rtt) = fb.rtt(p) {
                d.rtt = Some(d.rtt.map_or(rtt, |r: Duration| r.min(rtt)));
            }
            if chosen.is_none_or(|(c, cseq)| s.sent > c.sent || (s.sent == c.sent && p.seq > cseq)) {
                chosen = Some((s, p.seq));
            }
        }
        let newest = newest_reported?;
        // Older packets not in this report were reported before, or their
        // report was lost: out of flight either way.
        let upto = ((newest - self.base) as usize).min(self.stamps.len());
        for s in self.stamps.range_mut(..upto) {
            if let Some(s) = s.take() {
                self.in_flight -= s.size;
            }
        }
        while self.stamps.front().is_some_and(Option::is_none) {
            self.stamps.pop_front();
            self.base += 1;
        }
        // The app-limited period ends once its last packet is delivered.
        if self.app_limited.is_some_and(|mark| self.delivered > mark) {
            self.app_limited = None;
        }
        d.in_flight = self.in_flight;
        d.delivered_total = self.delivered;
        if let Some((p, _)) = chosen {
            self.first_sent_time = p.sent;
            let send_elapsed = p.sent - p.first_sent_time;
            let ack_elapsed = now - p.delivered_time;
            let interval = send_elapsed.max(ack_elapsed);
            d.prior_delivered = p.delivered;
            d.sample_delivered = self.delivered - p.delivered;
            d.is_app_limited = p.app_limited;
            // Shorter than min_rtt: a compressed train, no valid sample.
            d.interval = if min_rtt.is_some_and(|m| interval < m) { Duration::ZERO } else { interval };
        }
        Some(Delivery { ack: d, newest_acked })
    }
}

/// Largest numbering gap filled with empty slots (a sender numbers every
/// packet it sends, so gaps come only from packets it never told about).
const KEEP_GAP: u64 = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::ms;
    use crate::feedback::PacketResult;
    use crate::packet::PacketKind;

    const PKT: DataSize = DataSize::from_bytes(1000);

    /// A report sent at `at` ms, received 10 ms later, on `(seq, sent ms,
    /// arrival ms or lost)`.
    fn report(at: i64, packets: &[(u64, i64, Option<i64>)]) -> Feedback {
        let packets = packets
            .iter()
            .map(|&(seq, sent, arrival)| PacketResult {
                seq,
                kind: PacketKind::Media,
                size: PKT,
                send_time: ms(sent),
                arrival: arrival.map(ms),
                probe_cluster: -1,
                ..PacketResult::default()
            })
            .collect();
        Feedback { report_time: ms(at), received_at: ms(at + 10), packets, ..Feedback::default() }
    }

    /// Ten packets 10 ms apart from 0 ms; one report at 150 ms acks 0–4,
    /// loses 5; one at 200 ms acks 6–9.
    #[test]
    fn samples_follow_the_draft() {
        let mut s = Sampler::default();
        for i in 0..10 {
            s.on_sent(ms(10 * i), i as u64, PKT);
        }
        assert_eq!(s.in_flight(), PKT.mul_f64(10.0));
        let fb = report(
            150,
            &[
                (0, 0, Some(50)),
                (1, 10, Some(60)),
                (2, 20, Some(70)),
                (3, 30, Some(80)),
                (4, 40, Some(90)),
                (5, 50, None),
            ],
        );
        let d = s.on_feedback(ms(160), &fb, None).unwrap();
        assert_eq!((d.acked, d.lost), (PKT.mul_f64(5.0), PKT));
        assert_eq!((d.prior_in_flight, d.in_flight), (PKT.mul_f64(10.0), PKT.mul_f64(4.0)));
        // Packet 4 (sent at 40 ms) is sampled: nothing was delivered when it
        // left; send_elapsed = 40 − 0 (first send), ack_elapsed = 160 − 0:
        // 5 packets over 160 ms.
        assert_eq!((d.prior_delivered, d.sample_delivered), (DataSize::ZERO, PKT.mul_f64(5.0)));
        assert_eq!(d.interval, Duration::from_millis(160));
        // The first flight is app-limited; the first delivery ends it.
        assert!(d.is_app_limited && !s.is_app_limited());
        // RTT = (160 − sent) − hold (150 − arrival) = 60 ms for each.
        assert_eq!((d.rtt, d.newest_acked), (Some(Duration::from_millis(60)), Some(4)));
        // Packets 6–9 left before that report (delivered 0 at 0 ms);
        // packet 10 after it (delivered 5 at 160 ms, first_sent 40 ms).
        s.on_sent(ms(170), 10, PKT);
        let fb = report(200, &[(6, 60, Some(110)), (7, 70, Some(120)), (8, 80, Some(130)), (9, 90, Some(140))]);
        let d = s.on_feedback(ms(210), &fb, Some(Duration::from_millis(50))).unwrap();
        // Packet 9: 9 packets since 0, over max(90 − 0, 210 − 0) = 210 ms.
        assert_eq!((d.sample_delivered, d.interval), (PKT.mul_f64(9.0), Duration::from_millis(210)));
        assert!(d.is_app_limited, "sent in the first flight");
        assert_eq!((d.in_flight, s.delivered()), (PKT, PKT.mul_f64(9.0)));
        let fb = report(250, &[(10, 170, Some(220))]);
        let d = s.on_feedback(ms(260), &fb, Some(Duration::from_millis(50))).unwrap();
        // max(170 − 40, 260 − 160) = 130 ms for 10 − 5 packets.
        assert_eq!((d.prior_delivered, d.sample_delivered), (PKT.mul_f64(5.0), PKT.mul_f64(5.0)));
        assert_eq!(d.interval, Duration::from_millis(130));
        assert!(!d.is_app_limited);
        // A sample shorter than min_rtt is no sample.
        s.on_sent(ms(261), 11, PKT);
        let d = s.on_feedback(ms(300), &report(290, &[(11, 261, Some(280))]), Some(Duration::from_millis(50))).unwrap();
        assert_eq!((d.acked, d.interval), (PKT, Duration::ZERO));
        // Duplicates and unknown sequences change nothing.
        assert_eq!(s.on_feedback(ms(270), &report(260, &[(10, 170, Some(220)), (77, 0, None)]), None), None);
    }

    #[test]
    fn unreported_packets_before_the_newest_leave_the_flight() {
        let mut s = Sampler::default();
        for i in 0..4 {
            s.on_sent(ms(i), i as u64, PKT);
        }
        // Packets 0 and 1 were in a lost report: the report on 2 settles them.
        let d = s.on_feedback(ms(100), &report(90, &[(2, 2, Some(40))]), None).unwrap();
        assert_eq!((d.acked, d.lost, d.in_flight), (PKT, DataSize::ZERO, PKT));
    }

    #[test]
    fn app_limited_marks_last_until_the_flight_is_delivered() {
        let mut s = Sampler::default();
        s.on_sent(ms(0), 0, PKT);
        s.on_feedback(ms(60), &report(50, &[(0, 0, Some(25))]), None).unwrap();
        assert!(!s.is_app_limited());
        s.on_sent(ms(61), 1, PKT);
        s.on_sent(ms(62), 2, PKT);
        // Queue empty with 2 in flight: app-limited until delivered > 3 packets.
        s.mark_app_limited();
        s.on_sent(ms(63), 3, PKT);
        let d = s.on_feedback(ms(120), &report(110, &[(1, 61, Some(90)), (2, 62, Some(91))]), None).unwrap();
        assert!(!d.is_app_limited && s.is_app_limited(), "delivered 3 is not past the mark 3");
        let d = s.on_feedback(ms(130), &report(120, &[(3, 63, Some(92))]), None).unwrap();
        assert!(d.is_app_limited && !s.is_app_limited());
    }
}
