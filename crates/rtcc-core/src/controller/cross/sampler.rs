//! Send-rate and acknowledged-rate samples for Algorithm 3, one per
//! acknowledged packet, "with the help of BandwidthSampler, which is a
//! functionality implemented in BBR" (Cross §V): the delivery-rate
//! estimation of draft-cheng-iccrg-delivery-rate-estimation (Linux
//! `tcp_rate.c`).
//!
//! Each packet remembers, when sent, how many bytes had been delivered, when
//! the newest of them arrived and when that newest one had been sent. When
//! it is acknowledged, the bytes delivered since then over the time between
//! those two sends is the send rate, and over the time between those two
//! arrivals the acknowledged rate. Arrivals are on the receiver's clock
//! (only differences are taken), so a report that acknowledges many packets
//! at once still yields the rate at which they reached the receiver.

use std::collections::VecDeque;

use crate::units::{DataRate, DataSize, Duration, Time};

/// Packets remembered: a few seconds at several hundred Mbps. Older ones
/// yield no sample.
const MAX_TRACKED: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    send_time: Time,
    /// Bytes delivered when it was sent.
    delivered: u64,
    /// Arrival of the newest delivered packet then, and its send time.
    delivered_at: Option<Time>,
    first_sent: Option<Time>,
    reported: bool,
}

/// One acknowledged packet's rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RateSample {
    pub(super) send: DataRate,
    pub(super) ack: DataRate,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Sampler {
    sent: VecDeque<Sent>,
    delivered: u64,
    delivered_at: Option<Time>,
    first_sent: Option<Time>,
}

impl Sampler {
    pub(super) fn on_sent(&mut self, seq: u64, t: Time) {
        // Transport sequences only grow; anything else is not tracked.
        if self.sent.back().is_some_and(|b| seq <= b.seq) {
            return;
        }
        if self.sent.len() == MAX_TRACKED {
            self.sent.pop_front();
        }
        self.sent.push_back(Sent {
            seq,
            send_time: t,
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_sent: self.first_sent,
            reported: false,
        });
    }

    /// Packet `seq` of `size` arrived at `arrival` (receiver clock). A
    /// sample needs a delivery before the packet was sent, and spans of at
    /// least `min_rtt` (tcp_rate_gen: a shorter one overestimates).
    pub(super) fn on_delivered(
        &mut self,
        seq: u64,
        size: DataSize,
        arrival: Time,
        min_rtt: Duration,
    ) -> Option<RateSample> {
        let i = self.sent.binary_search_by_key(&seq, |s| s.seq).ok()?;
        let s = &mut self.sent[i];
        if s.reported {
            return None;
        }
        s.reported = true;
        let s = *s;
        self.delivered += size.bytes();
        self.delivered_at = Some(self.delivered_at.map_or(arrival, |a| a.max(arrival)));
        self.first_sent = Some(self.first_sent.map_or(s.send_time, |f| f.max(s.send_time)));
        let (at0, first) = (s.delivered_at?, s.first_sent?);
        let bytes = DataSize::from_bytes(self.delivered - s.delivered);
        let send_elapsed = s.send_time - first;
        let ack_elapsed = self.delivered_at? - at0;
        if send_elapsed.max(ack_elapsed) < min_rtt || !send_elapsed.is_positive() || !ack_elapsed.is_positive() {
            return None;
        }
        Some(RateSample {
            send: DataRate::from_size_per(bytes, send_elapsed),
            ack: DataRate::from_size_per(bytes, ack_elapsed),
        })
    }

    /// Forget packets up to `seq`: reported, or never to be.
    pub(super) fn forget_through(&mut self, seq: u64) {
        while self.sent.front().is_some_and(|s| s.seq <= seq) {
            self.sent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::{ms, MS};

    const PKT: DataSize = DataSize::from_bytes(1200);

    /// 1200 B every 4 ms (2.4 Mbps) from 0 ms, arriving 25 ms later until
    /// the link halves at 100 ms (from packet 25 on, arrivals are 8 ms
    /// apart from 125 ms); each is acknowledged 25 ms after it arrives.
    ///
    /// Packet 20 (sent 80 ms) goes out after packet 7's acknowledgement (78
    /// ms): 8 packets delivered, newest arrived 53 ms, sent 28 ms. Acked at
    /// 130 ms with 21 delivered: 13 · 1200 B over 80 − 28 = 52 ms sent and
    /// 105 − 53 = 52 ms arrived: 2.4 Mbps both.
    ///
    /// Packet 60 (sent 240 ms) goes out after packet 36's acknowledgement
    /// (238 ms): 37 delivered, newest arrived 213 ms, sent 144 ms. Acked with
    /// 61 delivered: 24 · 1200 B over 96 ms sent (2.4 Mbps) but 405 − 213 =
    /// 192 ms arrived (1.2 Mbps).
    #[test]
    fn send_and_ack_rates_of_a_halved_link() {
        let arrival = |k: u64| if k < 25 { ms(4 * k as i64 + 25) } else { ms(125 + 8 * (k as i64 - 25)) };
        // (time, acknowledgement?, seq); sends and acknowledgements never tie.
        let mut events: Vec<(Time, bool, u64)> = (0..=70).map(|k| (ms(4 * k as i64), false, k)).collect();
        events.extend((0..=70).map(|k| (arrival(k) + MS * 25, true, k)));
        events.sort();
        let mut s = Sampler::default();
        let mut samples = vec![None; 71];
        for (t, ack, k) in events {
            match ack {
                true => samples[k as usize] = s.on_delivered(k, PKT, arrival(k), MS * 30),
                false => s.on_sent(k, t),
            }
        }
        assert_eq!(samples[0], None, "sent before any delivery");
        let r = samples[20].unwrap();
        assert_eq!((r.send, r.ack), (DataRate::from_kbps(2400), DataRate::from_kbps(2400)));
        let r = samples[60].unwrap();
        assert_eq!((r.send, r.ack), (DataRate::from_kbps(2400), DataRate::from_kbps(1200)));
        // A second report of the same packet yields nothing and counts nothing.
        assert_eq!(s.on_delivered(60, PKT, arrival(60), MS * 30), None);
        s.forget_through(60);
        assert_eq!(s.on_delivered(60, PKT, arrival(60), MS * 30), None);
    }

    /// Spans shorter than min_rtt give no sample (tcp_rate_gen).
    #[test]
    fn short_spans_are_refused() {
        let mut s = Sampler::default();
        s.on_sent(0, ms(0));
        s.on_delivered(0, PKT, ms(25), MS * 50);
        s.on_sent(1, ms(30));
        s.on_sent(2, ms(31));
        assert_eq!(s.on_delivered(1, PKT, ms(56), MS * 50), None, "30 ms sent, 31 ms arrived < 50 ms");
        assert!(s.on_delivered(2, PKT, ms(57), MS * 20).is_some());
    }
}
