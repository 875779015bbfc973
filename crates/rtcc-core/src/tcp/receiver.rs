//! The TCP receiver: in-order delivery, delayed ACKs as Linux
//! (`__tcp_ack_snd_check`), SACK blocks (RFC 2018 §4), the timestamp echo
//! (RFC 7323 §4.3) and a fixed receive window. The application is taken to
//! read in-order data at once, so the advertised window never shrinks.

use super::{Ack, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::units::{Duration, Time};

/// Receiver settings; the defaults are Linux's.
#[derive(Clone, Debug)]
pub struct TcpReceiverConfig {
    /// Advertised window in segments. Linux `tcp_rmem` max 6 MiB with
    /// `tcp_adv_win_scale` = 1 advertises half: 3 MiB / 1448 B = 2172.
    pub rwnd: u32,
    /// Delayed-ACK timer (Linux `TCP_DELACK_MIN`, 40 ms; the adaptive `ato`
    /// starts there and stays there for bulk data).
    pub delack: Duration,
    /// Segments ACKed at once when data starts (Linux `tcp_incr_quickack`
    /// with `TCP_MAX_QUICKACKS` = 16 on the first data segment).
    pub quickacks: u32,
    /// A silence longer than this before a segment refills the quick ACKs
    /// (Linux `tcp_event_data_recv`: gap > `icsk_rto`, which for a receiver
    /// whose handshake RTT is short sits at the 200 ms `TCP_RTO_MIN`).
    pub idle_quickack_gap: Duration,
}

impl Default for TcpReceiverConfig {
    fn default() -> Self {
        TcpReceiverConfig {
            rwnd: 2172,
            delack: Duration::from_millis(40),
            quickacks: 16,
            idle_quickack_gap: Duration::from_millis(200),
        }
    }
}

/// A run of received segments above `rcv_nxt`, with its payload bytes.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: u32,
    end: u32,
    bytes: u64,
}

/// A TCP receiver, sans-IO. Poll for an ACK after every segment: each
/// out-of-order arrival owes its own (duplicate) ACK.
#[derive(Debug)]
pub struct TcpReceiver {
    cfg: TcpReceiverConfig,
    rcv_nxt: u32,
    /// Out-of-order runs, sorted, disjoint, above `rcv_nxt`.
    ooo: Vec<Run>,
    /// SACK blocks as last reported, most recent first (RFC 2018 §4).
    sacks: Vec<SackBlock>,
    /// RFC 7323 §4.3: TS.Recent and Last.ACK.sent.
    ts_recent: Time,
    last_ack_sent: u32,
    /// Segments received in order since the last ACK.
    unacked: u32,
    ack_now: bool,
    delack_at: Option<Time>,
    quickacks: u32,
    started: bool,
    /// The latest input's time: an immediate ACK is due then.
    last_now: Time,
    delivered_segments: u64,
    delivered_bytes: u64,
    duplicates: u64,
}

impl TcpReceiver {
    pub fn new(cfg: TcpReceiverConfig) -> Self {
        TcpReceiver {
            cfg,
            rcv_nxt: 0,
            ooo: Vec::new(),
            sacks: Vec::new(),
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            unacked: 0,
            ack_now: false,
            delack_at: None,
            quickacks: 0,
            started: false,
            last_now: Time::ZERO,
            delivered_segments: 0,
            delivered_bytes: 0,
            duplicates: 0,
        }
    }

    pub fn handle_segment(&mut self, now: Time, seg: &Segment) {
        if !self.started || now - self.last_now > self.cfg.idle_quickack_gap {
            self.started = true;
            self.quickacks = self.cfg.quickacks;
        }
        self.last_now = now;
        // RFC 7323 §4.3 (2): remember TSval of the segment at the left edge.
        if seg.seq <= self.last_ack_sent && seg.ts >= self.ts_recent {
            self.ts_recent = seg.ts;
        }
        let bytes = seg.len.bytes();
        if seg.seq < self.rcv_nxt || self.ooo.iter().any(|r| r.start <= seg.seq && seg.seq < r.end) {
            // Duplicate: ACK at once (Linux tcp_data_queue → tcp_enter_quickack_mode).
            self.duplicates += 1;
            self.ack_now = true;
            return;
        }
        if seg.seq >= self.rcv_nxt.saturating_add(self.cfg.rwnd) {
            // Beyond the window: dropped, ACKed at once (RFC 9293 §3.10.7.4).
            self.ack_now = true;
            return;
        }
        let had_ooo = !self.ooo.is_empty();
        if seg.seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.deliver(1, bytes);
            // Pull in the run the new segment joins.
            if self.ooo.first().is_some_and(|r| r.start == self.rcv_nxt) {
                let r = self.ooo.remove(0);
                self.rcv_nxt = r.end;
                self.deliver((r.end - r.start) as u64, r.bytes);
            }
            self.sacks.retain(|b| b.end > self.rcv_nxt);
            self.unacked += 1;
            // Filling a hole: ACK at once (tcp_data_queue, ICSK_ACK_NOW).
            if had_ooo {
                self.ack_now = true;
            }
        } else {
            let run = self.insert_ooo(seg.seq, bytes);
            // RFC 2018 §4: the first block holds the newest arrival, then
            // the most recently reported blocks it does not cover.
            let b = SackBlock { start: run.start, end: run.end };
            self.sacks.retain(|s| s.end < b.start || s.start > b.end);
            self.sacks.insert(0, b);
            self.sacks.truncate(MAX_SACK_BLOCKS);
            // Out-of-order data: ACK at once (tcp_ack_snd_check).
            self.ack_now = true;
        }
        if self.quickacks > 0 {
            self.quickacks -= 1;
            self.ack_now = true;
        }
        // More than one full segment unacknowledged: ACK now
        // (__tcp_ack_snd_check); else arm the delayed-ACK timer.
        if self.unacked >= 2 {
            self.ack_now = true;
        }
        if !self.ack_now && self.delack_at.is_none() {
            self.delack_at = Some(now + self.cfg.delack);
        }
    }

    fn deliver(&mut self, n: u64, bytes: u64) {
        self.delivered_segments += n;
        self.delivered_bytes += bytes;
    }

    /// Add `seq` to the out-of-order runs, merging neighbours; the run it
    /// ends up in.
    fn insert_ooo(&mut self, seq: u32, bytes: u64) -> Run {
        let i = self.ooo.partition_point(|r| r.end < seq);
        if i < self.ooo.len() && self.ooo[i].end == seq {
            self.ooo[i].end += 1;
            self.ooo[i].bytes += bytes;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].start == self.ooo[i].end {
                let next = self.ooo.remove(i + 1);
                self.ooo[i].end = next.end;
                self.ooo[i].bytes += next.bytes;
            }
            return self.ooo[i];
        }
        if i < self.ooo.len() && self.ooo[i].start == seq + 1 {
            self.ooo[i].start = seq;
            self.ooo[i].bytes += bytes;
            return self.ooo[i];
        }
        let r = Run { start: seq, end: seq + 1, bytes };
        self.ooo.insert(i, r);
        r
    }

    /// When `poll_ack` has something: at once for an immediate ACK, else
    /// the delayed-ACK timer.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.ack_now {
            return Some(self.last_now);
        }
        self.delack_at
    }

    /// The ACK due now, if any.
    pub fn poll_ack(&mut self, now: Time) -> Option<Ack> {
        let due = self.ack_now || self.delack_at.is_some_and(|t| now >= t);
        if !due {
            return None;
        }
        self.ack_now = false;
        self.delack_at = None;
        self.unacked = 0;
        self.last_ack_sent = self.rcv_nxt;
        let mut ack = Ack { cum: self.rcv_nxt, ts_echo: self.ts_recent, rwnd: self.cfg.rwnd, ..Ack::default() };
        for (i, b) in self.sacks.iter().enumerate() {
            ack.sack[i] = *b;
        }
        ack.sack_n = self.sacks.len() as u8;
        Some(ack)
    }

    /// Segments delivered in order.
    pub fn delivered_segments(&self) -> u64 {
        self.delivered_segments
    }
    /// Payload bytes delivered in order.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }
    pub fn duplicate_segments(&self) -> u64 {
        self.duplicates
    }
    /// Next segment expected.
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::DataSize;

    fn seg(seq: u32, ts_ms: i64) -> Segment {
        Segment { seq, len: DataSize::from_bytes(1000), retransmit: false, ts: Time::from_millis(ts_ms) }
    }
    fn blocks(a: &Ack) -> Vec<(u32, u32)> {
        a.sacks().iter().map(|b| (b.start, b.end)).collect()
    }
    fn no_quickack() -> TcpReceiver {
        TcpReceiver::new(TcpReceiverConfig { quickacks: 0, ..TcpReceiverConfig::default() })
    }

    #[test]
    fn tcp_receiver_acks_every_second_segment() {
        let mut rx = no_quickack();
        let t = Time::from_millis(10);
        rx.handle_segment(t, &seg(0, 1));
        assert_eq!(rx.poll_ack(t), None);
        assert_eq!(rx.poll_timeout(), Some(t + Duration::from_millis(40)));
        rx.handle_segment(t, &seg(1, 2));
        let a = rx.poll_ack(t).expect("second segment ACKed at once");
        assert_eq!((a.cum, a.sack_n, a.rwnd), (2, 0, 2172));
        // RFC 7323 §4.3 (1): the echo is of the earlier unacknowledged segment.
        assert_eq!(a.ts_echo, Time::from_millis(1));
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn tcp_receiver_delays_a_lone_segment_40ms() {
        let mut rx = no_quickack();
        let t = Time::from_millis(100);
        rx.handle_segment(t, &seg(0, 90));
        assert_eq!(rx.poll_ack(t + Duration::from_micros(39_999)), None);
        let a = rx.poll_ack(t + Duration::from_millis(40)).expect("delayed ACK");
        assert_eq!((a.cum, a.ts_echo), (1, Time::from_millis(90)));
    }

    #[test]
    fn tcp_receiver_quickacks_the_first_16() {
        let mut rx = TcpReceiver::new(TcpReceiverConfig::default());
        let t = Time::ZERO;
        for i in 0..16 {
            rx.handle_segment(t, &seg(i, 0));
            assert_eq!(rx.poll_ack(t).map(|a| a.cum), Some(i + 1));
        }
        rx.handle_segment(t, &seg(16, 0));
        assert_eq!(rx.poll_ack(t), None);
        // After a silence longer than the gap, quick ACKs again.
        let later = t + Duration::from_millis(300);
        rx.handle_segment(later, &seg(17, 0));
        assert_eq!(rx.poll_ack(later).map(|a| a.cum), Some(18));
    }

    #[test]
    fn tcp_receiver_sack_blocks_follow_rfc2018() {
        let mut rx = no_quickack();
        let t = Time::ZERO;
        let put = |rx: &mut TcpReceiver, s: u32| {
            rx.handle_segment(t, &seg(s, s as i64));
            rx.poll_ack(t).expect("out-of-order data is ACKed at once")
        };
        rx.handle_segment(t, &seg(0, 0));
        rx.handle_segment(t, &seg(1, 1));
        assert_eq!(rx.poll_ack(t).unwrap().cum, 2);
        let a = put(&mut rx, 3);
        assert_eq!((a.cum, blocks(&a)), (2, vec![(3, 4)]));
        let a = put(&mut rx, 5);
        assert_eq!(blocks(&a), [(5, 6), (3, 4)]);
        let a = put(&mut rx, 6);
        assert_eq!(blocks(&a), [(5, 7), (3, 4)]);
        let a = put(&mut rx, 8);
        assert_eq!(blocks(&a), [(8, 9), (5, 7), (3, 4)]);
        let a = put(&mut rx, 10);
        assert_eq!(blocks(&a), [(10, 11), (8, 9), (5, 7)]);
        // Out-of-order arrivals do not move TS.Recent (RFC 7323 §4.3): it
        // still holds segment 0's, the first of the last ACKed pair.
        assert_eq!(a.ts_echo, Time::ZERO);
        // Filling the first hole: cum jumps over [3, 4), ACKed at once.
        let a = put(&mut rx, 2);
        assert_eq!((a.cum, blocks(&a)), (4, vec![(10, 11), (8, 9), (5, 7)]));
        assert_eq!(a.ts_echo, Time::from_millis(2));
        let a = put(&mut rx, 4);
        assert_eq!((a.cum, blocks(&a)), (7, vec![(10, 11), (8, 9)]));
        let a = put(&mut rx, 4);
        assert_eq!(a.cum, 7);
        assert_eq!(rx.duplicate_segments(), 1);
        assert_eq!((rx.delivered_segments(), rx.delivered_bytes()), (7, 7000));
        put(&mut rx, 7);
        let a = put(&mut rx, 9);
        assert_eq!((a.cum, blocks(&a)), (11, vec![]));
        assert_eq!(rx.delivered_bytes(), 11_000);
    }
}
