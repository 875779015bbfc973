//! BBR v1, the model: Cardwell et al., "BBR: Congestion-Based Congestion
//! Control", ACM Queue 2016; Linux `net/ipv4/tcp_bbr.c` (4.9–5.x) and
//! draft-cardwell-iccrg-bbr-congestion-control-00 ("the draft");
//! ALGORITHMS.md §3. One model in bytes, fed per ACK with a delivery-rate
//! sample (draft-cheng-iccrg-delivery-rate-estimation), shared by TCP BBR
//! (`tcp::bbr`) and the video controllers fed from transport feedback
//! (`controller::bbr`, `controller::rbbr`).
//!
//! Per ACK, as `bbr_main`: update the model (`bbr_update_model`: round and
//! btl_bw, long-term bw, gain cycle, full pipe, drain, min_rtt and
//! PROBE_RTT), then the pacing rate and the window.
//!
//! Left out of Linux v1: the ACK-aggregation allowance of 4.20+
//! (`bbr_update_ack_aggregation`, not in ALGORITHMS.md §3 nor the draft;
//! our links do not aggregate ACKs) and the EDT in-flight estimate
//! (`bbr_packets_in_net_at_edt`, 5.0+, specific to the fq qdisc's time
//! stamps); in-flight is the sender's, as in 4.9–4.19.

mod config;
mod filter;
mod lt;
mod phases;

pub use config::{BbrConfig, ProbeRttStyle};
pub use filter::{MaxFilter, MinRttFilter};
pub use lt::{LtAction, LtBw, LtSample};
pub use phases::{FullPipe, GainCycle, ProbeRtt, RoundCounter};

use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

/// BBR's state machine (draft §4.3; `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at 2/ln 2 to find the bottleneck rate.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cruise at btl_bw, probing with the gain cycle.
    ProbeBw,
    /// Shrink the window to refresh min_rtt.
    ProbeRtt,
}

impl Mode {
    /// The `mode` state column: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT.
    pub fn index(self) -> u8 {
        match self {
            Mode::Startup => 0,
            Mode::Drain => 1,
            Mode::ProbeBw => 2,
            Mode::ProbeRtt => 3,
        }
    }
}

/// One acknowledgement as BBR sees it, in bytes (Linux `struct rate_sample`
/// plus the `tcp_sock` fields `bbr_main` reads).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BbrAck {
    pub now: Time,
    /// Bytes newly delivered by this ACK (`rs->acked_sacked`).
    pub acked: DataSize,
    /// Bytes newly marked lost (`rs->losses`).
    pub lost: DataSize,
    /// In flight before and after this ACK (`rs->prior_in_flight`,
    /// `tcp_packets_in_flight`).
    pub prior_in_flight: DataSize,
    pub in_flight: DataSize,
    /// Delivered so far, this ACK included (`tp->delivered`).
    pub delivered_total: DataSize,
    /// `delivered_total` when the sampled packet was sent (`rs->prior_delivered`).
    pub prior_delivered: DataSize,
    /// Delivered over `interval` (`rs->delivered`).
    pub sample_delivered: DataSize,
    /// The sample's interval; zero when no valid sample (`rs->interval_us`).
    pub interval: Duration,
    /// The sampled packet left while the sender had nothing to send.
    pub is_app_limited: bool,
    /// RTT of the sampled packet (`rs->rtt_us`).
    pub rtt: Option<Duration>,
    /// Smoothed RTT, for the first pacing rate (`tp->srtt_us`).
    pub srtt: Option<Duration>,
    /// In loss recovery (fast recovery, or after an RTO).
    pub in_recovery: bool,
}

impl BbrAck {
    /// The delivery-rate sample, if valid (`bbr_update_bw`).
    pub fn rate(&self) -> Option<DataRate> {
        self.interval.is_positive().then(|| DataRate::from_size_per(self.sample_delivered, self.interval))
    }
}

/// Linux's congestion states as BBR distinguishes them (`icsk_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    /// After an RTO (`TCP_CA_Loss`).
    Loss,
}

/// The BBR v1 model.
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    rng: Rng,
    mode: Mode,
    /// btl_bw in bit/s over rounds.
    bw: MaxFilter,
    min_rtt: MinRttFilter,
    round: RoundCounter,
    cycle: GainCycle,
    full: FullPipe,
    probe_rtt: ProbeRtt,
    lt: LtBw,
    pacing_rate: DataRate,
    has_seen_rtt: bool,
    cwnd: DataSize,
    /// The window before recovery or PROBE_RTT, restored after.
    prior_cwnd: DataSize,
    /// The slow-start threshold TCP reports: infinite until DRAIN.
    ssthresh: Option<DataSize>,
    prev_ca: CaState,
    after_rto: bool,
    packet_conservation: bool,
    idle_restart: bool,
    /// Samples of packets sent in PROBE_RTT count as app-limited: those
    /// sent while `delivered` was in `[from, until)` (Linux marks the
    /// connection app-limited in PROBE_RTT, `tp->app_limited`).
    probe_rtt_app_limited: (DataSize, DataSize),
    lost_total: DataSize,
    delivered: DataSize,
}

impl Bbr {
    /// A new flow in STARTUP (`bbr_init`).
    pub fn new(cfg: BbrConfig) -> Bbr {
        let mut b = Bbr {
            cfg,
            rng: Rng::new(cfg.seed),
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            min_rtt: MinRttFilter::default(),
            round: RoundCounter::default(),
            cycle: GainCycle::default(),
            full: FullPipe::default(),
            probe_rtt: ProbeRtt::default(),
            lt: LtBw::default(),
            pacing_rate: DataRate::ZERO,
            has_seen_rtt: false,
            cwnd: cfg.initial_cwnd(),
            prior_cwnd: DataSize::ZERO,
            ssthresh: None,
            prev_ca: CaState::Open,
            after_rto: false,
            packet_conservation: false,
            idle_restart: false,
            probe_rtt_app_limited: (DataSize::ZERO, DataSize::ZERO),
            lost_total: DataSize::ZERO,
            delivered: DataSize::ZERO,
        };
        b.init_pacing_rate(None);
        b
    }

    pub fn config(&self) -> &BbrConfig {
        &self.cfg
    }

    /// Bytes per packet from now on (TCP learns its segment size from the
    /// first ACK); the window stays in bytes.
    pub fn set_packet(&mut self, packet: DataSize) {
        self.cfg.packet = packet;
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The windowed-max delivery rate (`bbr_max_bw`).
    pub fn btl_bw(&self) -> DataRate {
        DataRate::from_bps(self.bw.get())
    }

    /// The bandwidth the model paces at: lt_bw while policed, else btl_bw
    /// (`bbr_bw`).
    pub fn bw(&self) -> DataRate {
        self.lt.bw().unwrap_or_else(|| self.btl_bw())
    }

    /// The policed rate, while in use.
    pub fn lt_bw(&self) -> Option<DataRate> {
        self.lt.bw()
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt.get()
    }

    pub fn pacing_rate(&self) -> DataRate {
        self.pacing_rate
    }

    pub fn cwnd(&self) -> DataSize {
        self.cwnd
    }

    /// The slow-start threshold: `None` (infinite) until STARTUP ends, then
    /// the BDP it ended at (`bbr_check_drain`).
    pub fn ssthresh(&self) -> Option<DataSize> {
        self.ssthresh
    }

    pub fn round_count(&self) -> u64 {
        self.round.count()
    }

    pub fn filled_pipe(&self) -> bool {
        self.full.reached()
    }

    pub fn cycle_index(&self) -> usize {
        self.cycle.index()
    }

    /// The mode's pacing gain (`bbr_update_gains`).
    pub fn pacing_gain(&self) -> f64 {
        match self.mode {
            Mode::Startup => self.cfg.high_gain,
            Mode::Drain => self.cfg.drain_gain,
            Mode::ProbeBw if self.lt.bw().is_some() => 1.0,
            Mode::ProbeBw => self.cycle.gain(&self.cfg),
            Mode::ProbeRtt => match self.cfg.probe_rtt {
                ProbeRttStyle::MinWindow => 1.0,
                ProbeRttStyle::ScaleRate(gain) => gain,
            },
        }
    }

    /// The mode's cwnd gain (`bbr_update_gains`).
    pub fn cwnd_gain(&self) -> f64 {
        match self.mode {
            // DRAIN keeps STARTUP's window while the pacing drains.
            Mode::Startup | Mode::Drain => self.cfg.high_gain,
            Mode::ProbeBw => self.cfg.cwnd_gain,
            Mode::ProbeRtt => 1.0,
        }
    }

    /// Time-series columns.
    pub fn state(&self, put: &mut dyn FnMut(&str, f64)) {
        put("mode", f64::from(self.mode.index()));
        put("btl_bw_kbps", self.btl_bw().kbps_f64());
        put("min_rtt_ms", self.min_rtt().map_or(f64::NAN, |d| d.as_millis_f64()));
        put("pacing_kbps", self.pacing_rate.kbps_f64());
        put("cwnd_bytes", self.cwnd.bytes() as f64);
        put("pacing_gain", self.pacing_gain());
        put("cwnd_gain", self.cwnd_gain());
        put("round", self.round.count() as f64);
        put("filled_pipe", f64::from(u8::from(self.full.reached())));
        put("cycle_index", self.cycle.index() as f64);
        put("lt_bw_kbps", self.lt.bw().map_or(f64::NAN, |r| r.kbps_f64()));
    }

    /// One ACK (`bbr_main`).
    pub fn on_ack(&mut self, ack: &BbrAck) {
        self.delivered = ack.delivered_total;
        self.lost_total += ack.lost;
        self.update_model(ack);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain(), ack.srtt);
        self.set_cwnd(ack, bw);
    }

    /// Fast recovery begins: remember the window to restore after it
    /// (`bbr_ssthresh` → `bbr_save_cwnd`). Packet conservation starts on
    /// the first ACK with `in_recovery`.
    pub fn on_enter_recovery(&mut self) {
        self.save_cwnd();
    }

    /// Recovery is over: restore the window saved on entry
    /// (`bbr_set_cwnd_to_recover_or_restore`, the exit branch).
    pub fn on_exit_recovery(&mut self) {
        if self.prev_ca >= CaState::Recovery {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = CaState::Open;
        self.after_rto = false;
    }

    /// A retransmission timeout with `in_flight` left after marking lost
    /// (`bbr_set_state(TCP_CA_Loss)`; `tcp_enter_loss` sets the window to
    /// in-flight + 1). Call `on_enter_recovery` first, as TCP calls
    /// `ssthresh` first.
    pub fn on_rto(&mut self, now: Time, in_flight: DataSize) {
        self.prev_ca = CaState::Loss;
        self.after_rto = true;
        self.full.reset_bw();
        // Treat an RTO like the end of a round, with a loss.
        self.round.mark_start();
        self.lt_sample(now, true, false);
        self.cwnd = in_flight + self.cfg.packet;
    }

    /// Sending resumes after idle with nothing else queued
    /// (`bbr_cwnd_event(CA_EVENT_TX_START)` while app-limited): no
    /// PROBE_RTT until data is acknowledged; pace at btl_bw, no faster.
    pub fn on_idle_restart(&mut self, now: Time) {
        self.idle_restart = true;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), 1.0, None),
            Mode::ProbeRtt if self.probe_rtt.is_done(now) => self.exit_probe_rtt(now),
            _ => {}
        }
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, ack: &BbrAck) {
        self.update_bw(ack);
        self.update_cycle_phase(ack);
        // Full pipe: at round starts of non-app-limited samples.
        if self.round.start() && !ack.is_app_limited {
            self.full.on_round(self.bw.get(), ack.in_recovery, &self.cfg);
        }
        self.check_drain(ack);
        self.update_min_rtt(ack);
    }

    /// Rounds, long-term bw and the btl_bw filter (`bbr_update_bw`).
    fn update_bw(&mut self, ack: &BbrAck) {
        self.round.clear();
        let Some(rate) = ack.rate() else { return };
        if self.round.on_sample(ack.prior_delivered, ack.delivered_total) {
            // Packet conservation lasts one round of recovery.
            self.packet_conservation = false;
        }
        let (from, until) = self.probe_rtt_app_limited;
        let app_limited = ack.is_app_limited || (ack.prior_delivered >= from && ack.prior_delivered < until);
        self.lt_sample(ack.now, ack.lost > DataSize::ZERO, app_limited);
        // App-limited samples lower nothing: take them only if they raise
        // the max (draft §4.1.1.5).
        if !app_limited || rate.bps() >= self.bw.get() {
            self.bw.update(self.cfg.bw_rounds, self.round.count(), rate.bps());
        }
    }

    fn lt_sample(&mut self, now: Time, lost: bool, app_limited: bool) {
        if !self.cfg.lt_sampling {
            return;
        }
        let s = LtSample {
            now,
            delivered: self.delivered,
            lost_total: self.lost_total,
            lost,
            app_limited,
            round_start: self.round.start(),
            probe_bw: self.mode == Mode::ProbeBw,
        };
        if self.lt.on_sample(&s, &self.cfg) == LtAction::Stop {
            self.reset_probe_bw(now);
        }
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, ack: &BbrAck) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let gain = self.pacing_gain();
        let bw = self.btl_bw();
        let target = self.inflight(bw, gain);
        let bdp = self.inflight(bw, 1.0);
        let lost = ack.lost > DataSize::ZERO;
        if self.cycle.is_due(ack.now, self.min_rtt(), gain, lost, ack.prior_in_flight, target, bdp) {
            self.cycle.advance(ack.now, &self.cfg);
        }
    }

    /// STARTUP → DRAIN once the pipe is full; DRAIN → PROBE_BW once
    /// in-flight is down to one BDP (`bbr_check_drain`; draft §4.3.3).
    fn check_drain(&mut self, ack: &BbrAck) {
        if self.mode == Mode::Startup && self.full.reached() {
            self.mode = Mode::Drain;
            self.ssthresh = Some(self.inflight(self.btl_bw(), 1.0));
        }
        if self.mode == Mode::Drain && ack.in_flight <= self.inflight(self.btl_bw(), 1.0) {
            self.reset_probe_bw(ack.now);
        }
    }

    /// min_rtt, entering and leaving PROBE_RTT (`bbr_update_min_rtt`;
    /// draft §4.3.5).
    fn update_min_rtt(&mut self, ack: &BbrAck) {
        let expired = self.min_rtt.update(ack.now, ack.rtt, self.cfg.min_rtt_window);
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            // Linux sets the mode before `bbr_save_cwnd`, so the save keeps
            // max(prior_cwnd, cwnd): a window saved at an earlier recovery
            // that is larger than today's survives PROBE_RTT.
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt.enter();
            self.probe_rtt_app_limited = (ack.delivered_total, ack.delivered_total);
        }
        if self.mode == Mode::ProbeRtt {
            // Samples of packets sent now are not the path's capacity.
            let until = ack.delivered_total + ack.in_flight.max(DataSize::from_bytes(1));
            self.probe_rtt_app_limited.1 = self.probe_rtt_app_limited.1.max(until);
            if self.probe_rtt.on_ack(ack.now, ack.in_flight, ack.delivered_total, &self.cfg, &mut self.round) {
                self.exit_probe_rtt(ack.now);
            }
        }
        // The idle restart is over once new data is acknowledged.
        if ack.sample_delivered > DataSize::ZERO {
            self.idle_restart = false;
        }
    }

    /// `bbr_check_probe_rtt_done` once due.
    fn exit_probe_rtt(&mut self, now: Time) {
        // Wait a full window before the next PROBE_RTT.
        self.min_rtt.touch(now);
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        // `bbr_reset_mode`.
        if self.full.reached() {
            self.reset_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_reset_probe_bw_mode`.
    fn reset_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle.reset(now, &self.cfg, &mut self.rng);
    }

    /// `bbr_save_cwnd`: outside recovery and PROBE_RTT the window is good
    /// enough; inside, keep the larger of the saved and the current.
    fn save_cwnd(&mut self) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bw × gain` less the pacing margin (`bbr_rate_bytes_per_sec`).
    fn rate(&self, bw: DataRate, gain: f64) -> DataRate {
        bw.mul_f64(gain * (1.0 - self.cfg.pacing_margin))
    }

    /// First pacing rate: the initial window over the smoothed RTT (1 ms
    /// before any sample) at high gain (`bbr_init_pacing_rate_from_rtt`).
    fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(Duration::from_micros(1))
            }
            None => Duration::from_millis(1),
        };
        let bw = DataRate::from_size_per(self.cwnd, rtt);
        self.pacing_rate = self.rate(bw, self.cfg.high_gain);
    }

    /// `bbr_set_pacing_rate`: never lowered before the pipe is full.
    fn set_pacing_rate(&mut self, bw: DataRate, gain: f64, srtt: Option<Duration>) {
        let rate = self.rate(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        if self.full.reached() || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bw × min_rtt × gain` rounded up to whole packets; the initial
    /// window before any RTT sample (`bbr_bdp`; draft §4.2.3.2).
    fn bdp(&self, bw: DataRate, gain: f64) -> DataSize {
        let Some(rtt) = self.min_rtt() else { return self.cfg.initial_cwnd() };
        let bytes = (bw * rtt).mul_f64(gain);
        if !self.cfg.quantize {
            return bytes;
        }
        self.cfg.packets(self.cfg.ceil_packets(bytes) as u32)
    }

    /// Room for TSO bursts and delayed ACKs: `3 × tso_segs_goal` packets,
    /// an even packet count, and 2 more in the probing phase
    /// (`bbr_quantization_budget`; draft §4.2.3.2).
    fn quantize(&self, cwnd: DataSize) -> DataSize {
        if !self.cfg.quantize {
            return cwnd;
        }
        let mut n = self.cfg.ceil_packets(cwnd) + 3 * u64::from(self.cfg.tso_segs_goal);
        n = (n + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle.index() == 0 {
            n += 2;
        }
        self.cfg.packets(n as u32)
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: DataRate, gain: f64) -> DataSize {
        self.quantize(self.bdp(bw, gain))
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, ack: &BbrAck, bw: DataRate) {
        if ack.acked > DataSize::ZERO {
            if let Some(cwnd) = self.recover_or_restore(ack) {
                self.cwnd = cwnd;
            } else {
                let target = self.inflight(bw, self.cwnd_gain());
                if self.full.reached() {
                    // Only cut the window once the pipe was filled.
                    self.cwnd = (self.cwnd + ack.acked).min(target);
                } else if self.cwnd < target || ack.delivered_total < self.cfg.initial_cwnd() {
                    // Below target: grow as slow start does.
                    self.cwnd += ack.acked;
                }
                self.cwnd = self.cwnd.max(self.cfg.min_cwnd());
            }
        }
        if self.mode == Mode::ProbeRtt && self.cfg.probe_rtt == ProbeRttStyle::MinWindow {
            // Drain the queue, refresh min_rtt.
            self.cwnd = self.cwnd.min(self.cfg.min_cwnd());
        }
    }

    /// Losses come off the window; the first round of recovery conserves
    /// packets (send one per one delivered), later rounds grow by what is
    /// delivered, and leaving recovery restores the window saved on entry
    /// (`bbr_set_cwnd_to_recover_or_restore`). `Some(cwnd)` while
    /// conserving.
    fn recover_or_restore(&mut self, ack: &BbrAck) -> Option<DataSize> {
        let state = match (ack.in_recovery, self.after_rto) {
            (false, _) => CaState::Open,
            (true, false) => CaState::Recovery,
            (true, true) => CaState::Loss,
        };
        let mut cwnd = self.cwnd;
        if ack.lost > DataSize::ZERO {
            cwnd = (cwnd - ack.lost).max(self.cfg.packet);
        }
        if state == CaState::Recovery && self.prev_ca != CaState::Recovery {
            self.packet_conservation = true;
            // The round starts now.
            self.round.restart(ack.delivered_total);
            // Cut window the application, TSQ or TSO left unused.
            cwnd = ack.in_flight + ack.acked;
        } else if self.prev_ca >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = state;
        if state == CaState::Open {
            self.after_rto = false;
        }
        if self.packet_conservation {
            return Some(cwnd.max(ack.in_flight + ack.acked));
        }
        self.cwnd = cwnd;
        None
    }
}

#[cfg(test)]
mod tests;
