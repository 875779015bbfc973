//! The TCP sender: segmentation of application writes, the SACK scoreboard
//! (RFC 6675) or NewReno (RFC 6582), PRR (RFC 6937) in fast recovery, the
//! retransmission timer (RFC 6298) with go-back-N after it fires (Linux
//! `tcp_enter_loss`), RTT from timestamps (RFC 7323), delivery-rate samples
//! and pacing for a congestion control that asks for it.
//!
//! Loss detection differs from Linux's. Linux detects losses by time with
//! RACK-TLP (RFC 8985): RACK on by default since 4.4, and since 4.18 ("tcp:
//! disable RFC6675 loss detection") the only detection unless
//! `net.ipv4.tcp_recovery` = 0; Tail Loss Probes (since 3.10) turn a lost
//! tail into a fast recovery instead of an RTO. Implemented here: RFC 6675
//! DupThresh marking for first transmissions (`mark_lost_sack`), plus a
//! RACK-lite for retransmissions (`rack_mark_lost_retrans`: a
//! retransmission is lost once a segment sent min_rtt/4 after it is
//! delivered). No RACK reordering timer and no TLP: a lost tail, or a hole
//! with fewer than DupThresh segments SACKed above it, waits for the RTO.
//!
//! Per-segment state lives in a ring indexed by `seq - snd_una`, so memory
//! follows the window, never the connection's length.

use std::collections::VecDeque;

use super::cc::{AckSample, CongestionControl, Window};
use super::prr::Prr;
use super::rate::{RateAcc, RateState, TxStamp};
use super::rtt::RttEstimator;
use super::{Ack, Segment, DEFAULT_MSS, HEADER};
use crate::units::{DataRate, DataSize, Duration, Time};

/// Sender settings; the defaults are Linux's.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Payload per segment (Linux's MSS with timestamps on a 1500 B MTU).
    pub mss: DataSize,
    /// Initial window in segments (RFC 6928, Linux `TCP_INIT_CWND`).
    pub initial_window: u32,
    /// SACK loss recovery (RFC 6675); false: NewReno (RFC 6582).
    pub sack: bool,
    /// Floor of the RTO (Linux `TCP_RTO_MIN`, 200 ms; RFC 6298 says 1 s).
    pub min_rto: Duration,
    /// Ceiling of the RTO (Linux `TCP_RTO_MAX`, 120 s; RFC 6298 §2.5).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1, Linux `TCP_TIMEOUT_INIT`).
    pub initial_rto: Duration,
    /// Restart from the initial window after an idle RTO (RFC 5681 §4.1,
    /// Linux `net.ipv4.tcp_slow_start_after_idle` = 1).
    pub slow_start_after_idle: bool,
    /// SACKed segments above a hole that make it lost (RFC 6675 §2
    /// DupThresh, Linux `tcp_reordering` = 3).
    pub dupthresh: u32,
    /// Receive window assumed before the first ACK, in segments.
    pub initial_rwnd: u32,
    /// Host scheduling delay of each arriving ACK before the sender
    /// processes it, uniform in [0, this], in arrival order; applied by the
    /// driver (`rtcc_sim::traffic`). 0: processed on arrival.
    pub host_jitter: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: DEFAULT_MSS,
            initial_window: 10,
            sack: true,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            initial_rto: Duration::from_secs(1),
            slow_start_after_idle: true,
            dupthresh: 3,
            initial_rwnd: u32::MAX,
            host_jitter: Duration::ZERO,
        }
    }
}

/// Linux's congestion states that matter here (`tcp_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// Fast recovery (RFC 6675 / RFC 6582) until `RecoveryPoint` is acked.
    Recovery,
    /// After an RTO: go-back-N until everything sent before it is acked.
    Loss,
}

/// What the sender did, cumulatively.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segments_sent: u64,
    /// Wire bytes (payload + `HEADER`) of every transmission.
    pub bytes_sent: DataSize,
    pub retransmits: u64,
    pub fast_recoveries: u64,
    pub rtos: u64,
    /// RTOs whose original segment was delivered after all (Eifel
    /// detection by timestamps, RFC 3522); counted, not undone.
    pub spurious_rtos: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: DataSize,
}

/// One outstanding segment.
#[derive(Clone, Copy, Debug)]
struct Sent {
    len: u32,
    tx: TxStamp,
    sacked: bool,
    lost: bool,
    /// Retransmitted and that retransmission still in flight (Linux
    /// `TCPCB_SACKED_RETRANS`).
    retrans: bool,
}

/// A TCP sender, sans-IO.
pub struct TcpSender {
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    w: Window,
    state: CaState,

    /// Lowest unacknowledged segment and next new one.
    snd_una: u32,
    snd_nxt: u32,
    /// One past the last segment written; unsent writes as (end, last length).
    write_end: u32,
    writes: VecDeque<(u32, u32)>,
    unlimited: bool,
    unsent_bytes: u64,
    /// Segments `snd_una..snd_nxt`.
    segs: VecDeque<Sent>,
    /// Scoreboard counters (Linux `sacked_out`, `lost_out`, `retrans_out`);
    /// without SACK `sacked_out` counts duplicate ACKs (`tcp_add_reno_sack`).
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// No lost, unretransmitted segment lies below this.
    rtx_hint: u32,
    dupacks: u32,

    recovery_point: u32,
    /// RACK.xmit_ts (RFC 8985 §6.2): latest transmission time of a segment
    /// delivered so far, for detecting lost retransmissions.
    rack_xmit: Option<Time>,
    prr: Prr,
    rtt: RttEstimator,
    /// The RTT sample the last ACK gave, if it gave one.
    last_rtt: Option<Duration>,
    rto_deadline: Option<Time>,
    /// When the last RTO fired, for Eifel detection.
    rto_at: Option<Time>,

    peer_rwnd: u32,
    pace_next: Time,
    /// The latest input's time: a send the window allows is due then.
    last_input: Time,
    last_send: Option<Time>,
    rate: RateState,
    /// Linux `tcp_cwnd_validate` state for `tcp_is_cwnd_limited`.
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u32,

    stats: TcpStats,
}

impl TcpSender {
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        let iw = cfg.initial_window.max(1);
        TcpSender {
            // Linux starts with ssthresh "infinite" (TCP_INFINITE_SSTHRESH).
            w: Window { cwnd: iw, ssthresh: u32::MAX },
            state: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            write_end: 0,
            writes: VecDeque::new(),
            unlimited: false,
            unsent_bytes: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            rtx_hint: 0,
            dupacks: 0,
            recovery_point: 0,
            rack_xmit: None,
            prr: Prr::default(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            last_rtt: None,
            rto_deadline: None,
            rto_at: None,
            peer_rwnd: cfg.initial_rwnd,
            pace_next: Time::ZERO,
            last_input: Time::ZERO,
            last_send: None,
            rate: RateState::default(),
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            stats: TcpStats::default(),
            cfg,
            cc,
        }
    }

    // ---- application side ----

    /// Append `bytes` of application data at `now`, cut at the MSS (the
    /// last segment may be short). Returns the segment number one past the
    /// write's last segment: the write is delivered once `cum_acked()`
    /// reaches it.
    pub fn write(&mut self, now: Time, bytes: u64) -> u32 {
        self.last_input = self.last_input.max(now);
        if bytes == 0 || self.unlimited {
            return self.write_end;
        }
        let mss = self.cfg.mss.bytes().max(1);
        let n = bytes.div_ceil(mss) as u32;
        let last = (bytes - (n as u64 - 1) * mss) as u32;
        self.write_end += n;
        self.writes.push_back((self.write_end, last));
        self.unsent_bytes += bytes;
        self.write_end
    }

    /// Bulk transfer: from now on there is always data to send (after any
    /// pending writes), in full segments.
    pub fn set_unlimited(&mut self, now: Time) {
        self.last_input = self.last_input.max(now);
        self.unlimited = true;
    }

    /// Written but never sent; `u64::MAX` once unlimited.
    pub fn unsent_bytes(&self) -> u64 {
        if self.unlimited {
            u64::MAX
        } else {
            self.unsent_bytes
        }
    }

    /// Payload bytes cumulatively acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.stats.bytes_acked.bytes()
    }

    /// Every segment below this is acknowledged (`snd_una`).
    pub fn cum_acked(&self) -> u32 {
        self.snd_una
    }

    // ---- getters ----

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn window(&self) -> Window {
        self.w
    }
    pub fn state(&self) -> CaState {
        self.state
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// The RTT sample of the last ACK: only ACKs of new data give one
    /// (RFC 7323 §4.3; a duplicate ACK echoes an old timestamp).
    pub fn last_rtt_sample(&self) -> Option<Duration> {
        self.last_rtt
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.rtt.min_rtt()
    }
    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    /// Segments in flight: RFC 6675 pipe, as Linux `tcp_packets_in_flight`
    /// (out − sacked − lost + retransmitted).
    pub fn in_flight(&self) -> u32 {
        (self.snd_nxt - self.snd_una + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    pub fn pacing_rate(&self) -> Option<DataRate> {
        self.cc.pacing_rate()
    }
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    /// Nothing outstanding and nothing to send.
    pub fn is_idle(&self) -> bool {
        self.snd_una == self.snd_nxt && !self.has_unsent()
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    fn has_unsent(&self) -> bool {
        self.unlimited || self.snd_nxt < self.write_end
    }
    fn packets_out(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }
    fn wants_rtx(&self) -> bool {
        self.lost_out > self.retrans_out
    }
    /// Linux `tcp_is_cwnd_limited`: limited in this round, or in slow start
    /// with less than twice the window's use.
    fn cwnd_limited(&self) -> bool {
        self.is_cwnd_limited || (self.w.cwnd < self.w.ssthresh && self.w.cwnd < 2 * self.max_packets_out)
    }

    // ---- timers ----

    /// The earliest instant something is due: the RTO, or a segment the
    /// window already allows — at its pacing release, or unpaced at the
    /// latest input's time (due now: an ACK or a write opened the way).
    pub fn poll_timeout(&self) -> Option<Time> {
        let sendable = (self.has_unsent() && self.packets_out() < self.peer_rwnd || self.wants_rtx())
            && self.in_flight() < self.w.cwnd;
        let pace = sendable.then(|| match self.cc.pacing_rate() {
            Some(_) => self.pace_next,
            None => self.last_input,
        });
        match (self.rto_deadline, pace) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.last_input = self.last_input.max(now);
        if self.rto_deadline.is_some_and(|d| now >= d) {
            if self.packets_out() == 0 {
                self.rto_deadline = None;
            } else {
                self.on_rto(now);
            }
        }
    }

    /// RFC 6298 §5.4–5.7 with Linux `tcp_retransmit_timer` → `tcp_enter_loss`.
    fn on_rto(&mut self, now: Time) {
        self.stats.rtos += 1;
        // ssthresh is cut once per window of data: not again in fast
        // recovery or on a repeated RTO (tcp_enter_loss).
        if self.state == CaState::Open {
            self.w.ssthresh = self.cc.ssthresh(&self.w, now).max(2);
        }
        if !self.cc.owns_window() {
            // cwnd = in flight + 1 with everything marked lost (tcp_enter_loss).
            self.w.cwnd = 1;
        }
        // Go-back-N: every unSACKed segment lost, no retransmission in
        // flight (tcp_timeout_mark_lost).
        for s in self.segs.iter_mut() {
            s.retrans = false;
            if !s.sacked {
                s.lost = true;
            }
        }
        self.lost_out = self.segs.iter().filter(|s| s.lost).count() as u32;
        self.retrans_out = 0;
        if !self.cfg.sack {
            self.sacked_out = 0;
            self.dupacks = 0;
        }
        self.rtx_hint = self.snd_una;
        self.recovery_point = self.snd_nxt;
        self.state = CaState::Loss;
        self.prr = Prr::default();
        // §5.5 back off, §5.6 restart the timer.
        self.rtt.back_off();
        self.rto_at = Some(now);
        self.rto_deadline = Some(now + self.rto());
        self.cc.on_rto(&mut self.w, now);
    }

    // ---- sending ----

    /// The next segment allowed now: retransmissions first (RFC 6675 §4
    /// NextSeg rule 1), then new data (rule 2); limited by cwnd against
    /// pipe, the peer's window and pacing.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        let rtx = self.wants_rtx();
        let new = self.has_unsent() && self.packets_out() < self.peer_rwnd;
        if !rtx && !new {
            if !self.has_unsent() && self.in_flight() < self.w.cwnd {
                self.rate.mark_app_limited(self.in_flight());
            }
            self.cwnd_validate(false);
            return None;
        }
        if self.packets_out() == 0 {
            self.idle_restart(now);
        }
        if self.in_flight() >= self.w.cwnd {
            self.cwnd_validate(true);
            return None;
        }
        if self.cc.pacing_rate().is_some() && now < self.pace_next {
            return None;
        }
        // Linux tcp_event_data_sent: a transmission with nothing in flight
        // is CA_EVENT_TX_START, idle counted from the last send (lsndtime).
        if self.in_flight() == 0 {
            if let Some(last) = self.last_send {
                let app_limited = self.rate.app_limited != 0 && self.state == CaState::Open;
                self.cc.on_tx_start(&mut self.w, now, now - last, app_limited);
            }
        }
        let seg = if rtx { self.retransmit(now) } else { self.send_new(now) };
        self.on_sent(now, &seg);
        Some(seg)
    }

    fn retransmit(&mut self, now: Time) -> Segment {
        let start = self.rtx_hint.max(self.snd_una);
        let i = (start - self.snd_una) as usize;
        let off = self.segs.range(i..).position(|s| s.lost && !s.retrans && !s.sacked);
        // lost_out > retrans_out guarantees one exists at or above the hint.
        let i = i + off.expect("a lost segment to retransmit");
        let tx = self.rate.on_send(now, self.packets_out());
        let s = &mut self.segs[i];
        s.retrans = true;
        s.tx = tx;
        self.retrans_out += 1;
        let seq = self.snd_una + i as u32;
        self.rtx_hint = seq + 1;
        self.stats.retransmits += 1;
        Segment { seq, len: DataSize::from_bytes(s.len as u64), retransmit: true, ts: now }
    }

    fn send_new(&mut self, now: Time) -> Segment {
        let seq = self.snd_nxt;
        let mss = self.cfg.mss.bytes() as u32;
        let len = match self.writes.front() {
            Some(&(end, last)) => {
                if seq + 1 == end {
                    self.writes.pop_front();
                    last
                } else {
                    mss
                }
            }
            None => mss,
        };
        if seq < self.write_end {
            self.unsent_bytes -= len as u64;
        } else {
            // Unlimited data beyond the last write: keep numbering in step.
            self.write_end = seq + 1;
        }
        let tx = self.rate.on_send(now, self.packets_out());
        self.segs.push_back(Sent { len, tx, sacked: false, lost: false, retrans: false });
        self.snd_nxt += 1;
        Segment { seq, len: DataSize::from_bytes(len as u64), retransmit: false, ts: now }
    }

    fn on_sent(&mut self, now: Time, seg: &Segment) {
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.wire_size();
        if let Some(rate) = self.cc.pacing_rate() {
            // Linux internal pacing (tcp_update_skb_after_send): no credit
            // for time spent not sending.
            self.pace_next = self.pace_next.max(now) + seg.wire_size() / rate;
        }
        if self.state == CaState::Recovery {
            self.prr.on_sent();
        }
        self.last_send = Some(now);
        // RFC 6298 §5.1: the timer runs while data is outstanding.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        self.cwnd_validate(false);
    }

    /// Linux `tcp_cwnd_validate`: whether the window limited this round.
    fn cwnd_validate(&mut self, limited: bool) {
        let out = self.packets_out();
        if self.snd_una >= self.cwnd_usage_seq || limited || (!self.is_cwnd_limited && out > self.max_packets_out) {
            self.is_cwnd_limited = limited;
            self.max_packets_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Sending again after an idle period longer than the RTO (Linux
    /// `tcp_slow_start_after_idle_check` → `tcp_cwnd_restart`; RFC 5681 §4.1):
    /// ssthresh keeps ¾ of cwnd, cwnd halves per idle RTO down to the
    /// initial window. Not for a congestion control that owns the window
    /// (Linux skips it when `cong_control` is set).
    fn idle_restart(&mut self, now: Time) {
        // tcp_slow_start_after_idle_check: not for a congestion control
        // that sets the window itself (BBR hears the restart as a TX start).
        if self.cc.owns_window() {
            return;
        }
        let Some(last) = self.last_send else { return };
        let idle = now - last;
        if !self.cfg.slow_start_after_idle || idle <= self.rto() {
            return;
        }
        let cwnd = self.w.cwnd;
        // tcp_current_ssthresh.
        self.w.ssthresh = self.w.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        let restart = self.cfg.initial_window.min(cwnd);
        let mut c = cwnd;
        let mut d = idle - self.rto();
        while d.is_positive() && c > restart {
            c >>= 1;
            d -= self.rto();
        }
        self.w.cwnd = c.max(restart);
        self.cc.on_idle_restart(&mut self.w, now);
    }

    // ---- acknowledgements ----

    pub fn handle_ack(&mut self, now: Time, ack: &Ack) {
        self.last_input = self.last_input.max(now);
        self.peer_rwnd = ack.rwnd;
        // An old ACK (reordered) or one for data never sent.
        if ack.cum < self.snd_una || ack.cum > self.snd_nxt {
            return;
        }
        let prior_in_flight = self.in_flight();
        let prior_delivered = self.rate.delivered;
        let cwnd_limited = self.cwnd_limited();
        let mut acc = RateAcc::default();
        let advanced = ack.cum - self.snd_una;

        let mut newly_sacked = false;
        // The latest transmission this ACK newly delivers (RACK).
        let mut rack_delivered: Option<Time> = None;
        let min_rtt = self.rtt.min_rtt();
        if self.cfg.sack {
            for b in ack.sacks() {
                let (lo, hi) = (b.start.max(ack.cum), b.end.min(self.snd_nxt));
                for seq in lo..hi.max(lo) {
                    let i = (seq - self.snd_una) as usize;
                    let s = &mut self.segs[i];
                    if s.sacked {
                        continue;
                    }
                    s.sacked = true;
                    self.sacked_out += 1;
                    self.lost_out -= s.lost as u32;
                    self.retrans_out -= s.retrans as u32;
                    rack_delivered = rack_delivered.max(Self::rack_sent(s, now, min_rtt));
                    s.lost = false;
                    s.retrans = false;
                    RateState::take(&mut acc, &s.tx, seq);
                    self.rate.deliver(1, now);
                    newly_sacked = true;
                }
            }
        }

        // Cumulative ACK: drop the acknowledged front of the ring.
        let mut cum_newly = 0u64;
        for k in 0..advanced {
            let s = self.segs.pop_front().expect("segment below snd_nxt");
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                cum_newly += 1;
                RateState::take(&mut acc, &s.tx, self.snd_una + k);
                rack_delivered = rack_delivered.max(Self::rack_sent(&s, now, min_rtt));
            }
            self.lost_out -= s.lost as u32;
            self.retrans_out -= s.retrans as u32;
            self.stats.bytes_acked += DataSize::from_bytes(s.len as u64);
        }
        self.snd_una = ack.cum;
        if self.cfg.sack {
            self.rate.deliver(cum_newly, now);
        } else {
            self.reno_count(advanced, now);
        }
        if self.snd_una == self.snd_nxt {
            self.rtx_hint = self.snd_una;
        }

        // RTT from the timestamp echo of an ACK for new data (RFC 7323
        // §4.3, valid also for retransmissions, so Karn's rule is not
        // needed for sampling).
        let rtt = (advanced > 0).then(|| now - ack.ts_echo).filter(|r| r.is_positive());
        self.last_rtt = rtt;
        if let Some(r) = rtt {
            self.rtt.sample(r);
        }
        if advanced > 0 {
            if let Some(at) = self.rto_at.take() {
                // Eifel (RFC 3522 §3.2): the echo predates the latest RTO's
                // retransmission, so an earlier transmission arrived.
                if ack.ts_echo < at {
                    self.stats.spurious_rtos += 1;
                }
            }
        }

        let newly_lost = if self.cfg.sack {
            let mut n = if newly_sacked { self.mark_lost_sack() } else { 0 };
            if rack_delivered.is_some() {
                self.rack_xmit = self.rack_xmit.max(rack_delivered);
                n += self.rack_mark_lost_retrans();
            }
            n
        } else {
            0
        };

        // Leaving recovery: RecoveryPoint acknowledged (RFC 6675 §5, RFC 6582 §3.2 step 4).
        if self.state != CaState::Open && self.snd_una >= self.recovery_point && advanced > 0 {
            if self.state == CaState::Recovery && !self.cc.owns_window() {
                // Linux tcp_end_cwnd_reduction: cwnd = ssthresh.
                self.w.cwnd = self.w.ssthresh.max(1);
            }
            // After an RTO the window stays where slow start took it.
            self.state = CaState::Open;
            self.dupacks = 0;
            if !self.cfg.sack {
                self.sacked_out = 0;
            }
            self.cc.on_recovery_exit(&mut self.w, now);
        }
        let mut newly_lost = newly_lost;
        if self.state == CaState::Open {
            let enter = if self.cfg.sack { self.lost_out > 0 } else { self.dupacks >= self.cfg.dupthresh };
            if enter {
                self.enter_recovery(now);
            }
        }
        // NewReno: the first unacknowledged segment is lost on entry and
        // after each partial ACK (RFC 6582 §3.2 steps 2 and 5).
        if !self.cfg.sack && self.state == CaState::Recovery && self.mark_head_lost() {
            newly_lost += 1;
        }

        let delivered = (self.rate.delivered - prior_delivered) as u32;
        let rs = self.rate.finish(&acc, now, self.rtt.min_rtt());
        let sample = AckSample {
            now,
            acked: delivered,
            lost: newly_lost,
            prior_in_flight,
            in_flight: self.in_flight(),
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            rate: rs,
            in_recovery: self.state != CaState::Open,
            cwnd_limited,
            segment: self.cfg.mss + HEADER,
        };
        if self.cc.owns_window() {
            // Linux cong_control: every ACK, in any state.
            self.cc.on_ack(&mut self.w, &sample);
        } else if self.state == CaState::Recovery {
            let (pipe, ssthresh) = (self.in_flight(), self.w.ssthresh);
            if let Some(cwnd) = self.prr.cwnd(delivered, newly_lost, advanced > 0, pipe, ssthresh) {
                self.w.cwnd = cwnd;
            }
        } else if advanced > 0 {
            // Linux tcp_cong_avoid outside cwnd reduction (Open, and Loss
            // where slow start regrows the window), only for ACKs of new
            // data (tcp_may_raise_cwnd: FLAG_DATA_ACKED); `acked` counts
            // what this ACK delivered, SACKed segments included.
            self.cc.on_ack(&mut self.w, &sample);
        }
        self.w.cwnd = self.w.cwnd.max(1);

        // RFC 6298 §5.2–5.3: restart on new data acked, stop when all is.
        if advanced > 0 {
            self.rto_deadline = (self.packets_out() > 0).then(|| now + self.rto());
        }
    }

    /// NewReno delivery counting from duplicate ACKs (Linux
    /// `tcp_add_reno_sack`, `tcp_remove_reno_sacks`).
    fn reno_count(&mut self, advanced: u32, now: Time) {
        if advanced == 0 {
            if self.packets_out() > 0 {
                self.dupacks += 1;
                // Each duplicate ACK stands for one segment that left the
                // network (RFC 5681 §3.2 step 4 inflation; Linux counts it
                // in sacked_out) but never more than what is out
                // (tcp_limit_reno_sacked).
                let cap = self.packets_out().saturating_sub(self.lost_out.max(1));
                if self.sacked_out < cap {
                    self.sacked_out += 1;
                    self.rate.deliver(1, now);
                }
            }
            return;
        }
        self.rate.deliver((advanced as u64).saturating_sub(self.sacked_out as u64).max(1), now);
        self.sacked_out = self.sacked_out.saturating_sub(advanced - 1);
        if self.state == CaState::Open {
            self.dupacks = 0;
            self.sacked_out = 0;
        }
    }

    fn mark_head_lost(&mut self) -> bool {
        match self.segs.front_mut() {
            Some(s) if !s.lost && !s.sacked => {
                s.lost = true;
                self.lost_out += 1;
                self.rtx_hint = self.snd_una;
                true
            }
            _ => false,
        }
    }

    /// RFC 6675 §4 IsLost: a segment with at least DupThresh SACKed
    /// segments above it is lost. (Linux 4.18+ uses RACK's time rule
    /// instead, `tcp_rack_detect_loss`; see the module doc.) Walks down from the top; stops at the
    /// first segment already marked (all below it were marked with it).
    fn mark_lost_sack(&mut self) -> u32 {
        let thresh = self.cfg.dupthresh.max(1);
        if self.sacked_out < thresh {
            return 0;
        }
        let (mut above, mut newly) = (0u32, 0u32);
        for i in (0..self.segs.len()).rev() {
            let s = &mut self.segs[i];
            if s.sacked {
                above += 1;
            } else if above >= thresh {
                if s.lost {
                    break;
                }
                s.lost = true;
                newly += 1;
                self.rtx_hint = self.rtx_hint.min(self.snd_una + i as u32);
            }
        }
        self.lost_out += newly;
        newly
    }

    /// The transmission time RACK may take from a newly delivered segment
    /// (Linux `tcp_rack_advance`): for a segment marked lost, whose
    /// retransmission may be what arrived, an RTT below min_rtt means the
    /// ACK is for an earlier transmission, so its time is unknown.
    fn rack_sent(s: &Sent, now: Time, min_rtt: Option<Duration>) -> Option<Time> {
        if s.lost && min_rtt.is_none_or(|m| now - s.tx.sent < m) {
            return None;
        }
        Some(s.tx.sent)
    }

    /// RACK-lite for retransmissions (RFC 8985 §6.2 step 5, Linux
    /// `tcp_rack_detect_loss`; before 4.18 `tcp_mark_lost_retrans`): a
    /// retransmission still in flight is lost when a segment sent more
    /// than a reordering window (min_rtt/4, RFC 8985 §6.2) after it has
    /// been delivered. Its `retrans` flag is cleared, so it goes out again
    /// in this recovery instead of waiting for the RTO. Returns how many
    /// (new losses for the congestion control, as Linux `tcp_sum_lost`).
    fn rack_mark_lost_retrans(&mut self) -> u32 {
        let (Some(xmit), Some(min_rtt)) = (self.rack_xmit, self.rtt.min_rtt()) else { return 0 };
        if self.retrans_out == 0 {
            return 0;
        }
        let reo_wnd = min_rtt / 4;
        let mut newly = 0;
        for (i, s) in self.segs.iter_mut().enumerate() {
            if s.retrans && xmit > s.tx.sent + reo_wnd {
                s.retrans = false;
                newly += 1;
                self.rtx_hint = self.rtx_hint.min(self.snd_una + i as u32);
            }
        }
        self.retrans_out -= newly;
        newly
    }

    /// RFC 6675 §5 / RFC 6582 §3.2 step 2, with Linux's
    /// `tcp_init_cwnd_reduction` for PRR.
    fn enter_recovery(&mut self, now: Time) {
        self.stats.fast_recoveries += 1;
        self.recovery_point = self.snd_nxt;
        self.w.ssthresh = self.cc.ssthresh(&self.w, now).max(2);
        self.prr = Prr::start(self.w.cwnd);
        self.state = CaState::Recovery;
    }
}

#[cfg(test)]
impl TcpSender {
    /// The scoreboard counters agree with the per-segment flags.
    pub(crate) fn check_scoreboard(&self) {
        let count = |f: fn(&Sent) -> bool| self.segs.iter().filter(|s| f(s)).count() as u32;
        assert_eq!(self.segs.len() as u32, self.packets_out());
        assert_eq!(count(|s| s.lost), self.lost_out);
        assert_eq!(count(|s| s.retrans), self.retrans_out);
        assert!(self.segs.iter().all(|s| !(s.sacked && (s.lost || s.retrans))));
        assert!(self.segs.iter().all(|s| !s.retrans || s.lost));
        if self.cfg.sack {
            assert_eq!(count(|s| s.sacked), self.sacked_out);
        }
        assert!(self.in_flight() <= self.packets_out() + self.retrans_out);
        assert!(self.w.cwnd >= 1);
    }
}

impl std::fmt::Debug for TcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender")
            .field("cc", &self.cc.name())
            .field("window", &self.w)
            .field("state", &self.state)
            .field("snd_una", &self.snd_una)
            .field("snd_nxt", &self.snd_nxt)
            .field("in_flight", &self.in_flight())
            .finish()
    }
}
