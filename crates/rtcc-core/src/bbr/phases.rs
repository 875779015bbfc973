//! The small state machines BBR v1 steps on each ACK: the packet-timed
//! round counter, the PROBE_BW gain cycle, the full-pipe detector and the
//! PROBE_RTT timer.

use super::{BbrConfig, ProbeRttStyle};
use crate::rng::Rng;
use crate::units::{DataSize, Duration, Time};

/// Packet-timed rounds: a round ends when a packet sent after the round
/// began is delivered (`bbr_update_bw`; draft §4.1.1.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    count: u64,
    next_delivered: DataSize,
    start: bool,
}

impl RoundCounter {
    pub fn count(&self) -> u64 {
        self.count
    }

    /// This ACK began a new round.
    pub fn start(&self) -> bool {
        self.start
    }

    /// A valid rate sample whose packet was sent when `prior_delivered`
    /// bytes had been delivered; `delivered` now. Returns a round start.
    pub fn on_sample(&mut self, prior_delivered: DataSize, delivered: DataSize) -> bool {
        self.start = prior_delivered >= self.next_delivered;
        if self.start {
            self.next_delivered = delivered;
            self.count += 1;
        }
        self.start
    }

    /// Clear `start` for an ACK without a valid sample (`round_start = 0`).
    pub fn clear(&mut self) {
        self.start = false;
    }

    /// Treat now as a round end (an RTO, `bbr_set_state`).
    pub fn mark_start(&mut self) {
        self.start = true;
    }

    /// The next round starts once what is in flight now is delivered
    /// (`next_rtt_delivered = tp->delivered`: recovery, PROBE_RTT).
    pub fn restart(&mut self, delivered: DataSize) {
        self.next_delivered = delivered;
    }
}

/// Phases in the gain cycle, 1 to 8.
fn len(cfg: &BbrConfig) -> usize {
    cfg.cycle_len.clamp(1, cfg.cycle.len())
}

/// The PROBE_BW pacing-gain cycle (`bbr_update_cycle_phase`; draft §4.3.4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GainCycle {
    index: usize,
    start: Time,
}

impl GainCycle {
    pub fn index(&self) -> usize {
        self.index
    }

    pub fn gain(&self, cfg: &BbrConfig) -> f64 {
        cfg.cycle[self.index]
    }

    /// Next phase from `now` (`bbr_advance_cycle_phase`).
    pub fn advance(&mut self, now: Time, cfg: &BbrConfig) {
        self.index = (self.index + 1) % len(cfg);
        self.start = now;
    }

    /// Enter PROBE_BW at a random phase other than the draining one
    /// (`bbr_reset_probe_bw_mode`: `CYCLE_LEN - 1 - prandom_u32_max(7)`,
    /// then advance; draft §4.3.4.4). QUIC BBR draws the same set, "0 or
    /// 2..7" (`EnterProbeBandwidthMode`).
    pub fn reset(&mut self, now: Time, cfg: &BbrConfig, rng: &mut Rng) {
        let n = len(cfg);
        // At most n − 1 choices, so a shorter cycle never starts in its
        // draining phase whatever `cycle_rand` says (n = 8: Linux's 7).
        let choices = cfg.cycle_rand.clamp(1, (n as u32).saturating_sub(1).max(1));
        let draw = (rng.next_u64() % u64::from(choices)) as usize;
        self.index = n - 1 - draw;
        self.advance(now, cfg);
    }

    /// Whether the phase is over (`bbr_is_next_cycle_phase`): every phase
    /// lasts min_rtt; the probing phase also until a loss or until in-flight
    /// reached `gain × BDP`; the draining phase ends early once in-flight
    /// fell to BDP. `target` is `bbr_inflight` at this phase's gain,
    /// `bdp` at gain 1.
    #[allow(clippy::too_many_arguments)]
    pub fn is_due(
        &self,
        now: Time,
        min_rtt: Option<Duration>,
        gain: f64,
        lost: bool,
        prior_in_flight: DataSize,
        target: DataSize,
        bdp: DataSize,
    ) -> bool {
        let full_length = min_rtt.is_some_and(|m| now.saturating_since(self.start) > m);
        if gain == 1.0 {
            full_length
        } else if gain > 1.0 {
            full_length && (lost || prior_in_flight >= target)
        } else {
            full_length || prior_in_flight <= bdp
        }
    }
}

/// STARTUP's exit test: btl_bw grew less than 25 % for three rounds
/// (`bbr_check_full_bw_reached`; draft §4.3.2.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FullPipe {
    full_bw: u64,
    count: u32,
    reached: bool,
}

impl FullPipe {
    pub fn reached(&self) -> bool {
        self.reached
    }

    /// At a round start with a non-app-limited sample, compare `max_bw`
    /// with the bw at the last growth; `in_recovery` ends STARTUP at a
    /// round without growth if `full_bw_on_loss`.
    pub fn on_round(&mut self, max_bw: u64, in_recovery: bool, cfg: &BbrConfig) {
        if self.reached {
            return;
        }
        if max_bw as f64 >= self.full_bw as f64 * cfg.full_bw_growth {
            self.full_bw = max_bw;
            self.count = 0;
            return;
        }
        self.count += 1;
        self.reached = self.count >= cfg.full_bw_rounds || (cfg.full_bw_on_loss && in_recovery);
    }

    /// Forget the reference bw (RTO, `bbr_set_state`).
    pub fn reset_bw(&mut self) {
        self.full_bw = 0;
    }
}

/// PROBE_RTT's timer: hold the window at the minimum for 200 ms and one
/// round once in-flight reached it (`bbr_update_min_rtt`; draft §4.3.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeRtt {
    done: Option<Time>,
    round_done: bool,
}

impl ProbeRtt {
    /// Entering PROBE_RTT (`probe_rtt_done_stamp = 0`).
    pub fn enter(&mut self) {
        self.done = None;
        self.round_done = false;
    }

    /// One ACK in PROBE_RTT; returns whether PROBE_RTT may end. With
    /// `ProbeRttStyle::ScaleRate` the timer starts on the first ACK, whatever
    /// is in flight.
    pub fn on_ack(
        &mut self,
        now: Time,
        in_flight: DataSize,
        delivered: DataSize,
        cfg: &BbrConfig,
        round: &mut RoundCounter,
    ) -> bool {
        let drained = match cfg.probe_rtt {
            ProbeRttStyle::MinWindow => in_flight <= cfg.min_cwnd(),
            ProbeRttStyle::ScaleRate(_) => true,
        };
        if self.done.is_none() && drained {
            self.done = Some(now + cfg.probe_rtt_duration);
            self.round_done = false;
            round.restart(delivered);
            false
        } else if self.done.is_some() {
            if round.start() {
                self.round_done = true;
            }
            self.round_done && self.is_done(now)
        } else {
            false
        }
    }

    /// The 200 ms passed (`bbr_check_probe_rtt_done`).
    pub fn is_done(&self, now: Time) -> bool {
        self.done.is_some_and(|d| now > d)
    }
}
