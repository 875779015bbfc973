//! The four states Cross inherits from BBR (§V): StartUp probes fast and
//! ends once the queue load B exceeds B_th for three rounds in a row; Drain
//! empties the queue StartUp built; ProbeBW runs Algorithm 2 once per
//! monitor epoch and Algorithm 3 on every report; ProbeRTT halves the rate
//! when RTT_min has not been lowered for 5 s (or Algorithm 3 asks for it) to
//! sample RTT_min and OWD_min afresh.
//!
//! The paper calls StartUp's probe "similar to BBR" without its gain, and
//! says nothing of Drain's rate and exit nor of ProbeRTT's length; the
//! choices, each a parameter, are BBR v1's (ALGORITHMS.md §3):
//! - StartUp: cur_rate_ = max(cur_rate_, startup_gain · bw) once per round,
//!   bw the largest delivered rate of the good_put_ window, startup_gain
//!   2/ln 2 (BBR's high gain). Growing from the delivered rate rather than
//!   from cur_rate_ bounds the rate at startup_gain × the bottleneck while
//!   the three rounds of queue load are counted, and BBR's window,
//!   startup_gain · bw · RTT_min, bounds the queue (`Cross::startup_window`;
//!   RBBR, the paper's rate-based BBR, drops the window in ProbeBW only,
//!   §IV). BBR's own exit (bw grew less than 25 % in three rounds) is left
//!   out: with a lagging encoder the delivered rate stalls at the encoder's
//!   output, not the path's.
//! - Drain: cur_rate_ = bw, sent at drain_gain · bw (ln 2/2, BBR) until a
//!   round's queue load is at most B_th; then ProbeBW at bw.
//! - ProbeRTT: at probe_rtt_gain (½, §V) of cur_rate_ for at least
//!   probe_rtt_duration (200 ms, BBR) and until a packet sent in it is
//!   reported; RTT_min and OWD_min are then the smallest samples of packets
//!   sent in ProbeRTT (a lower earlier one is kept unless the minimum had
//!   expired), and ProbeBW (or StartUp, if it never ended) resumes at the
//!   rate before ProbeRTT.

use super::adapt::{fast_adaptation, Inputs};
use super::monitor::{action, owd_m, queue_load};
use super::Cross;
use crate::units::{Duration, Time};

/// Cross's states (§V) are BBR's four, numbered alike in the `mode` column.
pub use crate::bbr::Mode;

/// A ProbeRTT in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ProbeRtt {
    /// Not before this.
    pub(super) until: Time,
    /// Given up at this time: the queue did not drain (module comment).
    pub(super) deadline: Time,
    /// The first sequence sent in ProbeRTT.
    pub(super) start_seq: u64,
    /// Entered because RTT_min expired (else Algorithm 3 line 10).
    pub(super) expired: bool,
    /// Smallest samples of packets sent in ProbeRTT.
    pub(super) rtt: Option<Duration>,
    pub(super) owd: Option<Duration>,
}

impl Cross {
    /// After a report: the ProbeRTT check, then ProbeRTT's end or ProbeBW's
    /// rules. `epoch` says a monitor epoch's decision is due, `max_seq` is
    /// the highest sequence reported.
    pub(super) fn step(&mut self, now: Time, epoch: bool, max_seq: u64) {
        // §V: "If RTT_min is not sampled again within 5 seconds, Cross
        // enters into the ProbeRTT state."
        if self.cfg.probe_rtt && self.mode != Mode::ProbeRtt && self.rtt_min.expired(now, self.cfg.probe_rtt_interval) {
            self.enter_probe_rtt(now, true);
        }
        match self.mode {
            Mode::ProbeRtt => {
                if self.probe.is_some_and(|p| now >= p.until && max_seq >= p.start_seq) {
                    self.exit_probe_rtt(now, true);
                } else if self.probe.is_some_and(|p| now >= p.deadline) {
                    self.exit_probe_rtt(now, false);
                }
            }
            Mode::ProbeBw => self.probe_bw(now, epoch),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// At the end of a round: StartUp's and Drain's checks on the delays
    /// reported in it.
    pub(super) fn on_round(&mut self, now: Time) {
        match self.mode {
            Mode::Startup => self.startup_round(),
            Mode::Drain => self.drain_round(now),
            Mode::ProbeBw | Mode::ProbeRtt => {}
        }
        self.round_owd.clear();
    }

    /// Eq. 3 over the round's delays (eq. 5), at `cur_rate_`.
    fn round_queue_load(&mut self) -> Option<f64> {
        let d_min = self.owd_min.get()?;
        let d_m = owd_m(&mut self.round_owd, self.cfg.quantile)?;
        let b = queue_load(self.cur_rate, d_m, d_min);
        (self.last_owd_m, self.last_b) = (Some(d_m), Some(b));
        Some(b)
    }

    /// §V: "when the queue load B exceeds B_th for three consecutive
    /// rounds, Cross enters into Drain state"; until then the rate grows
    /// from the delivered rate (module comment). A round without delay
    /// samples neither counts nor breaks the run.
    fn startup_round(&mut self) {
        if let Some(b) = self.round_queue_load() {
            self.loaded_rounds = if b > self.b_th() { self.loaded_rounds + 1 } else { 0 };
        }
        if self.loaded_rounds >= self.cfg.startup_rounds {
            self.enter_drain();
            return;
        }
        if let Some(bw) = self.goodput.get() {
            self.cur_rate = self.clamp(self.cur_rate.max(bw.mul_f64(self.cfg.startup_gain)));
        }
    }

    fn enter_drain(&mut self) {
        self.startup_done = true;
        self.mode = Mode::Drain;
        if let Some(bw) = self.goodput.get().filter(|b| b.bps() > 0) {
            self.cur_rate = self.clamp(bw);
        }
    }

    fn drain_round(&mut self, now: Time) {
        if self.round_queue_load().is_some_and(|b| b <= self.b_th()) {
            self.enter_probe_bw(now);
        }
    }

    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.monitor.restart(now);
    }

    /// §V: "the rate is cut by half to sample new values for RTT_min and
    /// OWD_min"; the rate before is kept in cur_rate_ (decision() halves it).
    pub(super) fn enter_probe_rtt(&mut self, now: Time, expired: bool) {
        self.mode = Mode::ProbeRtt;
        self.monitor.stop();
        self.probe = Some(ProbeRtt {
            until: now + self.cfg.probe_rtt_duration,
            deadline: now + self.cfg.probe_rtt_duration.max(self.cfg.probe_rtt_timeout),
            start_seq: self.next_seq,
            expired,
            rtt: None,
            owd: None,
        });
        self.probe_rtts += 1;
    }

    /// `sampled`: `probe_rtt_duration` passed and a packet sent in ProbeRTT
    /// was reported; otherwise the deadline passed first.
    fn exit_probe_rtt(&mut self, now: Time, sampled: bool) {
        let Some(p) = self.probe.take() else { return };
        // An expired minimum takes ProbeRTT's samples (the path may have
        // lengthened), but not samples above Algorithm 3's "excess"
        // (OWD_min + m·RTT_min): halving did not drain the queue, so the
        // capacity fell, and raising the minima would hide it from
        // Algorithm 3 (whose thresholds grow with them). Otherwise, and
        // after the deadline, only a lower sample counts.
        let excess = match (self.owd_min.get(), self.rtt_min.get()) {
            (Some(owd), Some(rtt)) => Some(owd + rtt.mul_f64(self.cfg.thresholds.m)),
            _ => None,
        };
        let accept = sampled && p.expired && p.owd.is_some_and(|o| excess.is_none_or(|e| o <= e));
        if let Some(rtt) = p.rtt {
            if accept || self.rtt_min.get().is_none_or(|m| rtt < m) {
                self.rtt_min.reset(now, rtt);
            }
        }
        if let Some(owd) = p.owd {
            if accept || self.owd_min.get().is_none_or(|m| owd < m) {
                self.owd_min.reset(now, owd);
            }
        }
        // BBR after PROBE_RTT: wait another interval before the next.
        self.rtt_min.touch(now);
        if self.startup_done {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
            self.loaded_rounds = 0;
        }
    }

    /// ProbeBW: Algorithm 3 on every report, Algorithm 2 at each epoch's end.
    fn probe_bw(&mut self, now: Time, epoch: bool) {
        if self.cfg.fast_adaptation && self.rounds.count() >= self.held_until {
            if let Some(i) = self.adapt_inputs() {
                let v = fast_adaptation(&self.cfg.thresholds, &i);
                self.verdict = Some(v);
                if let Some((rate, probe)) = v.reset() {
                    self.cur_rate = self.clamp(rate);
                    self.adaptations += 1;
                    // §V: "this algorithm will not be triggered again for
                    // the next two rounds": the rest of this one and two more.
                    self.held_until = self.rounds.count() + 1 + u64::from(self.cfg.hold_rounds);
                    if probe && self.cfg.probe_rtt {
                        self.enter_probe_rtt(now, false);
                    } else {
                        // The epoch under way measured the rate before the reset.
                        self.monitor.restart(now);
                    }
                    return;
                }
            }
        }
        if epoch {
            self.decide();
            self.monitor.restart(now);
        }
    }

    /// Eqs. 3–5 on cycle 1's delays, then Algorithm 2.
    fn decide(&mut self) {
        let (Some(d_min), Some(rtt_min)) = (self.owd_min.get(), self.rtt_min.get()) else { return };
        let Some(d_m) = self.monitor.owd_m(self.cfg.quantile) else { return };
        let b = queue_load(self.cur_rate, d_m, d_min);
        let act = action(b, self.cfg.b_th);
        let next = self.adjust.apply(&self.cfg.gains, act, self.cur_rate, d_m, d_min, rtt_min);
        self.cur_rate = self.clamp(next);
        (self.last_owd_m, self.last_b) = (Some(d_m), Some(b));
        self.decisions += 1;
    }

    fn adapt_inputs(&self) -> Option<Inputs> {
        Some(Inputs {
            send_rate_m: self.send_max.get()?,
            ack_rate_m: self.ack_max.get()?,
            standing_owd: self.standing.get()?,
            owd_min: self.owd_min.get()?,
            rtt_min: self.rtt_min.get()?,
            cur_rate: self.cur_rate,
            goodput: self.goodput.get()?,
            bw_lo: self.cfg.min_rate,
        })
    }
}
