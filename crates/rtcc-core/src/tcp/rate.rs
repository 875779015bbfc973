//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02,
//! Linux `net/ipv4/tcp_rate.c`): every transmission is stamped with the
//! connection's delivery state; an ACK turns the stamp of the most recently
//! sent packet it delivers into a `RateSample`.

use super::cc::RateSample;
use crate::units::{Duration, Time};

/// The connection's delivery state (draft §2.2: `C.delivered`, …).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RateState {
    /// Segments delivered so far (`C.delivered`).
    pub delivered: u64,
    /// When `delivered` last grew (`C.delivered_time`).
    pub delivered_time: Time,
    /// Send time of the packet last sampled (`C.first_sent_time`).
    pub first_sent_time: Time,
    /// `C.app_limited`: the `delivered` mark that ends an app-limited
    /// period; 0 when not app-limited.
    pub app_limited: u64,
}

/// Linux `tcp_init_sock` sets `app_limited = ~0U`: the first flight is
/// app-limited, and the first ACK ends it.
const START: u64 = u64::MAX;

impl Default for RateState {
    fn default() -> Self {
        RateState { delivered: 0, delivered_time: Time::ZERO, first_sent_time: Time::ZERO, app_limited: START }
    }
}

/// One transmission's stamp (draft §2.3: `P.delivered`, …).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TxStamp {
    pub sent: Time,
    pub delivered: u64,
    pub delivered_time: Time,
    pub first_sent_time: Time,
    pub app_limited: bool,
}

/// The sample being built while one ACK is processed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RateAcc {
    /// The chosen packet: its stamp and sequence number.
    chosen: Option<(TxStamp, u32)>,
}

impl RateState {
    /// Stamp a transmission (draft §3.2, Linux `tcp_rate_skb_sent`).
    pub fn on_send(&mut self, now: Time, packets_out: u32) -> TxStamp {
        // Nothing in flight: the sending interval starts now.
        if packets_out == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxStamp {
            sent: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited != 0,
        }
    }

    /// `n` segments newly delivered, cumulatively or by SACK.
    pub fn deliver(&mut self, n: u64, now: Time) {
        if n > 0 {
            self.delivered += n;
            self.delivered_time = now;
        }
    }

    /// Offer a newly delivered packet; the most recently sent one wins
    /// (Linux `tcp_rate_skb_delivered`, `tcp_skb_sent_after`).
    pub fn take(acc: &mut RateAcc, tx: &TxStamp, seq: u32) {
        let later = match acc.chosen {
            None => true,
            Some((c, cseq)) => tx.sent > c.sent || (tx.sent == c.sent && seq > cseq),
        };
        if later {
            acc.chosen = Some((*tx, seq));
        }
    }

    /// The sample for this ACK (draft §3.3, Linux `tcp_rate_gen`).
    pub fn finish(&mut self, acc: &RateAcc, now: Time, min_rtt: Option<Duration>) -> RateSample {
        // The app-limited period ends once its last packet is delivered.
        if self.app_limited == START || (self.app_limited != 0 && self.delivered > self.app_limited) {
            self.app_limited = 0;
        }
        let Some((p, _)) = acc.chosen else {
            return RateSample { delivered_total: self.delivered, ..RateSample::default() };
        };
        self.first_sent_time = p.sent;
        let send_elapsed = p.sent - p.first_sent_time;
        let ack_elapsed = now - p.delivered_time;
        let mut interval = send_elapsed.max(ack_elapsed);
        // Shorter than min_rtt means a compressed ACK train: no valid
        // sample (tcp_rate_gen).
        if min_rtt.is_some_and(|m| interval < m) {
            interval = Duration::ZERO;
        }
        RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            prior_delivered: p.delivered,
            delivered_total: self.delivered,
            is_app_limited: p.app_limited,
        }
    }

    /// The sender had room in the window but nothing to send (draft §3.4,
    /// Linux `tcp_rate_check_app_limited`).
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }
}
