//! NADA's receiver-side computation (RFC 8698 §4.2, §5.1), run at the
//! sender from per-packet feedback as the ns-3 reference implementation does
//! (RFC 8698 §6.4, §7): every packet's one-way delay, loss and size as the
//! receiver would have seen them, and every DELTA the report the receiver
//! would have sent — rmode, x_curr and r_recv.
//!
//! Windows over "the last LOGWIN" are on the receiver's clock: a packet
//! counts at its arrival, a lost packet when the receiver would notice the
//! sequence gap (the next arrival, or the report if none follows), and the
//! window ends at the report's send time. Delays are in milliseconds where
//! they enter the RFC's equations.

use std::collections::VecDeque;

use super::sender::{ms, Report};
use super::NadaConfig;
use crate::controller::window::Windowed;
use crate::feedback::{Feedback, PacketResult};
use crate::units::{Duration, Time};

/// Per-packet RTT samples the sender's rtt is the minimum of (ns-3
/// `getCurrentRTT`, the same 15-tap minimum as d_queue's, §5.1.1).
const RTT_SAMPLES: usize = 15;
/// TFRC's loss-interval weights, newest first (RFC 5348 §5.4, n = 8).
const TFRC_WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// No ECN in rtcc: the marking ratio of eq. 2 is always zero.
const P_MARK: f64 = 0.0;

/// How d_fwd is filtered.
#[derive(Clone, Debug)]
pub(super) enum Filter {
    /// NADA: d_queue = d_fwd − d_base through a minimum over the last `n`
    /// per-packet samples (§5.1.1: 15).
    Samples(usize),
    /// NADAR: d_fwd is the standing one-way delay (cross.txt §VI-A).
    Standing(Standing),
}

/// The standing one-way delay: the minimum over a recent window (Copa's
/// standing RTT filter, NSDI'18 §2.1, which Cross applies to one-way delay,
/// cross.txt §V Algorithm 3), by default srtt/2 as in Copa; the window is
/// keyed by arrival time.
#[derive(Clone, Debug)]
pub(super) struct Standing {
    filter: Windowed<Duration>,
    /// A fixed window; `None` = srtt/2.
    window: Option<Duration>,
    srtt: Option<Duration>,
    gain: f64,
}

impl Standing {
    pub fn new(window: Option<Duration>, srtt_gain: f64) -> Standing {
        Standing { filter: Windowed::new(true), window, srtt: None, gain: srtt_gain }
    }

    fn on_rtt(&mut self, rtt: Duration) {
        self.srtt = Some(self.srtt.map_or(rtt, |s| s + (rtt - s).mul_f64(self.gain)));
    }

    fn update(&mut self, arrival: Time, owd: Duration) -> Duration {
        let srtt_half = self.srtt.map_or(Duration::ZERO, |s| s / 2);
        // At least 1 ms, so a window exists before the first RTT sample.
        let window = self.window.unwrap_or(srtt_half).max(Duration::from_millis(1));
        self.filter.update(arrival, owd, window)
    }
}

/// One observation in the LOGWIN window.
#[derive(Clone, Copy, Debug)]
struct Observed {
    /// Receiver clock: the arrival, or when a loss was noticed.
    at: Time,
    bytes: u64,
    /// The packet's d_fwd sample; `None` for a loss.
    d_fwd: Option<Duration>,
}

/// d_base being measured again (NADAR's ProbeRTT): the minimum one-way delay
/// of the packets sent since `since`.
#[derive(Clone, Copy, Debug)]
struct Resample {
    since: Time,
    min: Option<Duration>,
    /// Newest send time among those packets that arrived.
    through: Option<Time>,
}

/// Loss intervals in packets, the open one first (RFC 5348 §5.4; §4.2
/// "loss_int ... follows Section 5.4 of TFRC"). A run of consecutive
/// losses is one loss event, as ns-3's `updateInterLossData` counts them.
#[derive(Clone, Debug)]
pub(super) struct LossIntervals {
    intervals: VecDeque<u64>,
    in_loss: bool,
}

impl LossIntervals {
    fn new() -> LossIntervals {
        LossIntervals { intervals: VecDeque::from([0]), in_loss: false }
    }

    fn on_packet(&mut self, lost: bool) {
        if lost && !self.in_loss {
            self.intervals.push_front(0);
            self.intervals.truncate(1 + TFRC_WEIGHTS.len());
        }
        self.in_loss = lost;
        self.intervals[0] += 1;
    }

    /// loss_int: the weighted mean of the closed intervals (RFC 5348 §5.4's
    /// I_tot1/W_tot); `None` before the first loss. TFRC's other sum, which
    /// includes the open interval, is left out here: with it the open
    /// interval could never exceed MULTILOSS·loss_int and a loss would never
    /// expire.
    fn mean(&self) -> Option<f64> {
        let closed = self.intervals.iter().skip(1);
        let (sum, weights) = closed.zip(TFRC_WEIGHTS).fold((0.0, 0.0), |(s, w), (&i, wi)| (s + wi * i as f64, w + wi));
        (weights > 0.0).then(|| sum / weights)
    }

    /// How much of the warped delay d_tilde to use (§4.2): all of it while
    /// the packets since the last loss are fewer than loss_exp =
    /// MULTILOSS·loss_int, then linearly less over the next loss_int packets
    /// ("linearly interpolate ... during the transitional period lasting for
    /// the duration of loss_int"), then none.
    fn warp_weight(&self, multiloss: f64) -> f64 {
        let Some(avg) = self.mean() else { return 0.0 };
        let current = self.intervals[0] as f64;
        let expiry = multiloss * avg;
        if current < expiry {
            1.0
        } else if current < expiry + avg {
            1.0 - (current - expiry) / avg
        } else {
            0.0
        }
    }
}

/// Eq. 1: d_queue below QTH as it is, above it QTH·exp(−LAMBDA·(d_queue − QTH)/QTH).
pub(super) fn warp(cfg: &NadaConfig, d_queue: f64) -> f64 {
    let qth = ms(cfg.qth);
    if d_queue < qth {
        d_queue
    } else {
        qth * (-cfg.lambda * (d_queue - qth) / qth).exp()
    }
}

/// Eq. 2: x_curr = d_tilde + DMARK·(p_mark/PMRREF)² + DLOSS·(p_loss/PLRREF)²,
/// clipped at XMAX (ns-3 `NADA_PARAM_XMAX`).
pub(super) fn aggregate(cfg: &NadaConfig, d_tilde: f64, p_mark: f64, p_loss: f64) -> f64 {
    let mark = ms(cfg.dmark) * (p_mark / cfg.pmrref).powi(2);
    let loss = ms(cfg.dloss) * (p_loss / cfg.plrref).powi(2);
    (d_tilde + mark + loss).min(ms(cfg.xmax))
}

/// The receiver's state (§4.2 "on initialization") and the sender's rtt.
#[derive(Clone, Debug)]
pub(super) struct Signal {
    filter: Filter,
    logwin: Duration,
    /// NADA: the last `n` one-way delays.
    recent: VecDeque<Duration>,
    /// The filtered d_fwd: NADA the minimum of `recent`, NADAR the standing delay.
    d_fwd: Option<Duration>,
    d_base: Option<Duration>,
    /// Sender clock when a one-way delay last came at or below d_base.
    base_stamp: Option<Time>,
    resample: Option<Resample>,
    window: VecDeque<Observed>,
    first_arrival: Option<Time>,
    /// Losses seen since the last arrival, not yet timed.
    pending_losses: u32,
    losses: LossIntervals,
    p_loss: f64,
    rtts: VecDeque<Duration>,
}

impl Signal {
    pub fn new(filter: Filter, logwin: Duration) -> Signal {
        Signal {
            filter,
            logwin,
            recent: VecDeque::new(),
            d_fwd: None,
            d_base: None,
            base_stamp: None,
            resample: None,
            window: VecDeque::new(),
            first_arrival: None,
            pending_losses: 0,
            losses: LossIntervals::new(),
            p_loss: 0.0,
            rtts: VecDeque::new(),
        }
    }

    /// One packet of a report the sender received at `now` (§4.2 "on
    /// receiving a media packet"). Packets come in sequence order; one
    /// reported lost counts as a loss, as §5.1.2 counts reordering.
    pub fn on_packet(&mut self, now: Time, fb: &Feedback, p: &PacketResult) {
        let Some(arrival) = p.arrival else {
            self.pending_losses += 1;
            self.losses.on_packet(true);
            return;
        };
        self.note_losses(arrival);
        self.losses.on_packet(false);
        if let Some(rtt) = fb.rtt(p) {
            self.rtts.push_back(rtt);
            if self.rtts.len() > RTT_SAMPLES {
                self.rtts.pop_front();
            }
            if let Filter::Standing(s) = &mut self.filter {
                s.on_rtt(rtt);
            }
        }
        // d_fwd = t_curr − t_sent; d_base = min(d_base, d_fwd) (§4.2).
        let owd = arrival - p.send_time;
        if self.d_base.is_none_or(|b| owd <= b) {
            self.d_base = Some(owd);
            self.base_stamp = Some(now);
        }
        if let Some(r) = self.resample.as_mut().filter(|r| p.send_time >= r.since) {
            r.min = Some(r.min.map_or(owd, |m| m.min(owd)));
            r.through = Some(r.through.map_or(p.send_time, |t| t.max(p.send_time)));
        }
        let sample = match &mut self.filter {
            Filter::Samples(n) => {
                self.recent.push_back(owd);
                while self.recent.len() > (*n).max(1) {
                    self.recent.pop_front();
                }
                self.d_fwd = self.recent.iter().min().copied();
                owd
            }
            Filter::Standing(s) => {
                let standing = s.update(arrival, owd);
                self.d_fwd = Some(standing);
                standing
            }
        };
        self.first_arrival.get_or_insert(arrival);
        self.window.push_back(Observed { at: arrival, bytes: p.size.bytes(), d_fwd: Some(sample) });
        self.trim(arrival);
    }

    /// The report's packets are all in: losses after the last arrival are
    /// noticed by the report's send time.
    pub fn end_feedback(&mut self, report_time: Time) {
        self.note_losses(report_time);
    }

    fn note_losses(&mut self, at: Time) {
        for _ in 0..std::mem::take(&mut self.pending_losses) {
            self.window.push_back(Observed { at, bytes: 0, d_fwd: None });
        }
    }

    /// Forget what left the LOGWIN window ending at `t`.
    fn trim(&mut self, t: Time) {
        while self.window.front().is_some_and(|o| o.at <= t - self.logwin) {
            self.window.pop_front();
        }
    }

    /// The report the receiver would send at `t` (§4.2 "on time to send a
    /// new feedback report").
    pub fn report(&mut self, cfg: &NadaConfig, t: Time) -> Report {
        self.trim(t);
        let (mut lost, mut received, mut peak) = (0u32, 0u32, None::<Duration>);
        for o in &self.window {
            match o.d_fwd {
                Some(d) => {
                    received += 1;
                    peak = Some(peak.map_or(d, |p| p.max(d)));
                }
                None => lost += 1,
            }
        }
        // p_inst = missing / transmitted within LOGWIN; eq. 10 smooths it
        // once per report, as ns-3 does (`m_plr += ALPHA·(plr − m_plr)`).
        let total = lost + received;
        let p_inst = if total > 0 { f64::from(lost) / f64::from(total) } else { 0.0 };
        self.p_loss = cfg.alpha * p_inst + (1.0 - cfg.alpha) * self.p_loss;
        let x_curr = aggregate(cfg, self.d_tilde(cfg), P_MARK, self.p_loss);
        // rmode 0 only without losses and with every d_fwd − d_base below
        // QEPS within LOGWIN (§4.2, end).
        let build_up = match (peak, self.d_base) {
            (Some(p), Some(b)) => ms(p - b) >= ms(cfg.qeps),
            _ => false,
        };
        let rmode = u8::from(lost > 0 || build_up);
        Report { rmode, x_curr, r_recv: self.r_recv(t) }
    }

    /// §5.1.3: bytes arrived within LOGWIN over LOGWIN; over the time since
    /// the first arrival while that is shorter (the first packet's bytes
    /// then fall before the span, as in ns-3's `getCurrentRecvRate`).
    fn r_recv(&self, t: Time) -> f64 {
        let Some(first) = self.first_arrival else { return 0.0 };
        let span = self.logwin.min(t - first);
        if !span.is_positive() {
            return 0.0;
        }
        let bytes: u64 = self.window.iter().filter(|o| o.at > t - span && o.at <= t).map(|o| o.bytes).sum();
        bytes as f64 * 8.0 / span.as_secs_f64()
    }

    /// d_tilde: eq. 1 while a loss is recent, blended back to d_queue as it expires.
    fn d_tilde(&self, cfg: &NadaConfig) -> f64 {
        let d_queue = self.d_queue();
        let w = self.losses.warp_weight(cfg.multiloss);
        w * warp(cfg, d_queue) + (1.0 - w) * d_queue
    }

    /// d_queue = d_fwd − d_base, ms (zero before any arrival).
    pub fn d_queue(&self) -> f64 {
        match (self.d_fwd, self.d_base) {
            (Some(f), Some(b)) => ms(f - b).max(0.0),
            _ => 0.0,
        }
    }

    pub fn d_base(&self) -> Option<Duration> {
        self.d_base
    }

    pub fn p_loss(&self) -> f64 {
        self.p_loss
    }

    /// The sender's rtt: the minimum of the last 15 per-packet RTTs, each
    /// without the receiver's hold time; zero before any (§4.3 "set rtt = 0").
    pub fn rtt(&self) -> Duration {
        self.rtts.iter().min().copied().unwrap_or(Duration::ZERO)
    }

    /// Sender clock when d_base was last sampled again.
    pub fn base_stamp(&self) -> Option<Time> {
        self.base_stamp
    }

    /// Measure d_base again from the packets sent from `since` on.
    pub fn start_resample(&mut self, since: Time) {
        self.resample = Some(Resample { since, min: None, through: None });
    }

    /// The newest send time of a packet that arrived since re-sampling began.
    pub fn resampled_through(&self) -> Option<Time> {
        self.resample.and_then(|r| r.through)
    }

    /// d_base becomes the minimum measured since re-sampling began, stamped `now`.
    pub fn finish_resample(&mut self, now: Time) {
        if let Some(m) = self.resample.take().and_then(|r| r.min) {
            self.d_base = Some(m);
            self.base_stamp = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::MS;
    use crate::packet::PacketKind;
    use crate::units::DataSize;

    fn ms_t(v: i64) -> Time {
        Time::from_millis(v)
    }

    fn cfg() -> NadaConfig {
        NadaConfig::DEFAULT
    }

    fn nada() -> Signal {
        Signal::new(Filter::Samples(15), cfg().logwin)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// A 1200 B packet sent at `sent` ms, arriving after `owd` ms or lost.
    fn pkt(seq: u64, sent: i64, owd: Option<i64>) -> PacketResult {
        PacketResult {
            seq,
            kind: PacketKind::Media,
            size: DataSize::from_bytes(1200),
            send_time: ms_t(sent),
            arrival: owd.map(|d| ms_t(sent + d)),
            probe_cluster: -1,
            ..PacketResult::default()
        }
    }

    /// Feed `packets` as one report sent at `report` ms, received 25 ms later.
    fn feed(s: &mut Signal, report: i64, packets: &[PacketResult]) {
        let fb = Feedback {
            report_time: ms_t(report),
            received_at: ms_t(report + 25),
            packets: packets.to_vec(),
            ..Feedback::default()
        };
        for p in packets {
            s.on_packet(ms_t(report + 25), &fb, p);
        }
        s.end_feedback(ms_t(report));
    }

    /// §5.1.1: d_queue is the minimum over the last 15 samples. After a
    /// 25 ms base, one 35 ms sample then fourteen at 45 ms: the 35 ms one is
    /// still among the last 15 (d_queue 10 ms); one more 45 ms sample pushes
    /// it out (20 ms).
    #[test]
    fn queuing_delay_is_the_minimum_of_15_samples() {
        let mut s = nada();
        let mut owds = vec![25, 35];
        owds.extend([45; 14]);
        let packets: Vec<_> = owds.iter().enumerate().map(|(i, &d)| pkt(i as u64, 5 * i as i64, Some(d))).collect();
        feed(&mut s, 200, &packets);
        assert_eq!(s.d_base(), Some(MS * 25));
        assert_eq!(s.d_queue(), 10.0);
        feed(&mut s, 250, &[pkt(16, 80, Some(45))]);
        assert_eq!(s.d_queue(), 20.0);
        // A new minimum lowers d_base at once, and every sample is measured from it.
        feed(&mut s, 300, &[pkt(17, 85, Some(20))]);
        assert_eq!((s.d_base(), s.d_queue()), (Some(MS * 20), 0.0));
    }

    /// Eq. 1 at the RFC's QTH = 50 ms, LAMBDA = 0.5: 40 ms stays 40 ms;
    /// QTH maps to QTH·e⁰ = 50 ms; 2·QTH to 50·e^(−0.5) = 30.327 ms; 3·QTH to
    /// 50·e^(−1) = 18.394 ms.
    #[test]
    fn warping_follows_eq_1() {
        let c = cfg();
        assert_eq!(warp(&c, 40.0), 40.0);
        assert_eq!(warp(&c, 50.0), 50.0);
        assert!(close(warp(&c, 100.0), 50.0 * (-0.5f64).exp()));
        assert!((warp(&c, 100.0) - 30.327).abs() < 1e-3);
        assert!((warp(&c, 150.0) - 18.394).abs() < 1e-3);
    }

    /// Eq. 2: p_loss = PLRREF adds DLOSS = 10 ms; 2·PLRREF adds 4·DLOSS;
    /// XMAX = 500 ms caps the sum; no ECN, so p_mark = 0 adds nothing.
    #[test]
    fn loss_penalty_follows_eq_2() {
        let c = cfg();
        assert!(close(aggregate(&c, 0.0, 0.0, 0.01), 10.0));
        assert!(close(aggregate(&c, 20.0, 0.0, 0.02), 60.0));
        assert!(close(aggregate(&c, 5.0, 0.01, 0.0), 7.0), "DMARK at PMRREF");
        assert_eq!(aggregate(&c, 100.0, 0.0, 0.1), 500.0);
    }

    /// Ten packets in LOGWIN, one lost: p_inst = 0.1, so after one report
    /// p_loss = ALPHA·0.1 = 0.01 = PLRREF and, with no queue, x_curr = DLOSS.
    /// The loss also forces rmode 1. The next report, same window: p_loss =
    /// 0.01 + 0.1·(0.1 − 0.01) = 0.019.
    #[test]
    fn one_loss_in_ten_gives_the_reference_penalty() {
        let mut s = nada();
        let packets: Vec<_> = (0..10).map(|i| pkt(i, 10 * i as i64, (i != 4).then_some(25))).collect();
        feed(&mut s, 120, &packets);
        let r = s.report(&cfg(), ms_t(120));
        assert!(close(s.p_loss(), 0.01), "{}", s.p_loss());
        assert!(close(r.x_curr, 10.0), "{r:?}");
        assert_eq!(r.rmode, 1);
        s.report(&cfg(), ms_t(130));
        assert!(close(s.p_loss(), 0.019));
    }

    /// rmode (§4.2, end): 0 while every sample within LOGWIN is below
    /// QEPS = 10 ms above d_base and nothing was lost; one 10 ms sample makes
    /// it 1 until that sample is 500 ms old; so does a loss.
    #[test]
    fn rmode_needs_no_loss_and_no_build_up_within_logwin() {
        let mut s = nada();
        feed(&mut s, 100, &[pkt(0, 0, Some(25)), pkt(1, 10, Some(34))]);
        assert_eq!(s.report(&cfg(), ms_t(100)).rmode, 0, "9 ms < QEPS");
        feed(&mut s, 200, &[pkt(2, 100, Some(35))]);
        assert_eq!(s.report(&cfg(), ms_t(200)).rmode, 1, "10 ms = QEPS");
        // Sample at arrival 135 ms: in (t − 500, t] until t = 635 ms.
        feed(&mut s, 600, &[pkt(3, 550, Some(25))]);
        assert_eq!(s.report(&cfg(), ms_t(634)).rmode, 1);
        assert_eq!(s.report(&cfg(), ms_t(635)).rmode, 0);
        // Packet 4 lost, noticed at packet 5's arrival (625 ms).
        feed(&mut s, 700, &[pkt(4, 590, None), pkt(5, 600, Some(25))]);
        assert_eq!(s.report(&cfg(), ms_t(700)).rmode, 1);
        assert_eq!(s.report(&cfg(), ms_t(1124)).rmode, 1);
        assert_eq!(s.report(&cfg(), ms_t(1125)).rmode, 0);
    }

    /// §5.1.3: 1200 B every 5 ms over LOGWIN is 1.92 Mbps; at the start the
    /// span is the time since the first arrival, whose bytes fall before it.
    #[test]
    fn receive_rate_over_logwin() {
        let mut s = nada();
        let packets: Vec<_> = (0..200).map(|i| pkt(i, 5 * i as i64, Some(25))).collect();
        // Arrivals at 25 ... 1020 ms; at 1020 ms the window (520, 1020] holds 100 packets.
        feed(&mut s, 1020, &packets);
        assert!(close(s.report(&cfg(), ms_t(1020)).r_recv, 1.92e6));
        let mut s = nada();
        feed(&mut s, 125, &packets[..21]);
        // Arrivals 25 ... 125: 20 packets in (25, 125], over 100 ms.
        assert!(close(s.report(&cfg(), ms_t(125)).r_recv, 1.92e6));
    }

    /// TFRC loss intervals (RFC 5348 §5.4) and the expiry of §4.2: closed
    /// intervals of 100 packets give loss_int = 100 and loss_exp = 700; the
    /// warped delay is used fully below 700 packets since the last loss,
    /// half at 750, and not at all from 800 on.
    #[test]
    fn warping_expires_after_multiloss_intervals() {
        let mut l = LossIntervals::new();
        assert_eq!((l.mean(), l.warp_weight(7.0)), (None, 0.0));
        // Each loss event opens an interval: 99 received + the lost one.
        for _ in 0..3 {
            l.on_packet(true);
            (0..99).for_each(|_| l.on_packet(false));
        }
        // Intervals: open 100, closed 100, 100, 0 (nothing before the first loss).
        assert!(close(l.mean().unwrap(), 200.0 / 3.0));
        l.on_packet(true);
        (0..99).for_each(|_| l.on_packet(false));
        assert!(close(l.mean().unwrap(), 300.0 / 4.0));
        // Five more: eight closed intervals are kept, so the empty one before
        // the first loss falls out.
        for _ in 0..5 {
            l.on_packet(true);
            (0..99).for_each(|_| l.on_packet(false));
        }
        assert!(close(l.mean().unwrap(), 100.0));
        let weight_at = |since_loss: u64| {
            let mut l = l.clone();
            (100..since_loss).for_each(|_| l.on_packet(false));
            l.warp_weight(7.0)
        };
        assert_eq!(weight_at(100), 1.0);
        assert_eq!(weight_at(699), 1.0);
        assert!(close(weight_at(750), 0.5));
        assert_eq!(weight_at(800), 0.0);
        // A burst of losses is one event.
        let mut b = LossIntervals::new();
        (0..10).for_each(|_| b.on_packet(false));
        (0..3).for_each(|_| b.on_packet(true));
        b.on_packet(false);
        assert_eq!(Vec::from(b.intervals.clone()), vec![4, 10]);
    }

    /// With a recent loss the aggregate signal uses the warped delay: twenty
    /// packets at the 25 ms base, one lost, then sixteen with 100 ms of
    /// queue (2·QTH): the loss is 17 packets old against loss_int = 20, so
    /// d_tilde = 50·e^(−0.5) = 30.327 ms, plus the penalty of p_loss =
    /// 0.1·(1/37) (one loss in 37 packets within LOGWIN).
    #[test]
    fn recent_loss_warps_the_queuing_delay() {
        let mut s = nada();
        let mut packets: Vec<_> = (0..20).map(|i| pkt(i, 5 * i as i64, Some(25))).collect();
        packets.push(pkt(20, 100, None));
        packets.extend((21..37).map(|i| pkt(i, 5 * i as i64, Some(125))));
        feed(&mut s, 320, &packets);
        assert_eq!(s.d_queue(), 100.0);
        let r = s.report(&cfg(), ms_t(320));
        let p_loss = 0.1 / 37.0;
        let expected = 50.0 * (-0.5f64).exp() + 10.0 * (p_loss / 0.01f64).powi(2);
        assert!(close(r.x_curr, expected), "{} vs {expected}", r.x_curr);
        // Without the loss the same queue counts in full.
        let mut s = nada();
        packets[20].arrival = Some(ms_t(100 + 25));
        feed(&mut s, 320, &packets);
        assert_eq!(s.report(&cfg(), ms_t(320)).x_curr, 100.0);
    }

    /// NADAR's d_fwd: the minimum one-way delay over srtt/2 of arrivals.
    /// With a 50 ms RTT the window is 25 ms: a 40 ms sample is the standing
    /// delay until 25 ms of 45 ms samples pushed it out.
    #[test]
    fn standing_delay_is_the_minimum_over_half_an_srtt() {
        let mut s = Signal::new(Filter::Standing(Standing::new(None, 1.0 / 8.0)), cfg().logwin);
        // Report at arrival + 0 (no hold), received 25 ms later: RTT = owd + 25 ms.
        let one = |s: &mut Signal, seq: u64, sent: i64, owd: i64| {
            let p = pkt(seq, sent, Some(owd));
            let at = sent + owd;
            let fb =
                Feedback { report_time: ms_t(at), received_at: ms_t(at + 25), packets: vec![p], ..Default::default() };
            s.on_packet(ms_t(at + 25), &fb, &p);
            s.end_feedback(ms_t(at));
        };
        one(&mut s, 0, 0, 25);
        one(&mut s, 1, 100, 40);
        assert_eq!(s.d_queue(), 15.0);
        // srtt ≈ 50–65 ms, so the window is at least 25 ms: 45 ms samples
        // every 2 ms; the 40 ms sample (arrival 140) leaves the window before 175.
        let mut at_150 = None;
        for i in 0..20 {
            one(&mut s, 2 + i, 102 + 2 * i as i64, 45);
            if 102 + 2 * i as i64 + 45 == 149 {
                at_150 = Some(s.d_queue());
            }
        }
        assert_eq!(at_150, Some(15.0));
        assert_eq!(s.d_queue(), 20.0);
    }
}
