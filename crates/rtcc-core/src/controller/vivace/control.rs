//! The rate-control state machine (ALGORITHMS.md §6.4, §6.5; libwebrtc
//! pcc_network_controller.cc): startup at the start rate, slow start while
//! an MI's utility grows (the paper's starting state), then online learning:
//! each pair of MIs at r(1±ε) probes the utility gradient and moves r along
//! it (gradient.rs), a pair whose loss contradicts its rates is measured
//! again, and an MI whose feedback is late halves the rate.

use super::monitor::Mi;
use super::{MiLength, Outcome, RateSource, Vivace};
use crate::units::{DataRate, DataSize, Duration, Time};

/// Controller phases; `state()` reports them as numbers. libwebrtc has no
/// separate "moving" phase: every online-learning pair both probes and moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    SlowStart = 1,
    OnlineLearning = 2,
    /// The pair's loss contradicted its rates: measure again before moving.
    DoubleCheck = 3,
}

/// kMonitorIntervalDurationRatio: adaptive MIs last at least this many RTTs.
const MI_RTT_RATIO: f64 = 1.0;

impl Vivace {
    /// Half the spread of a probing pair, bps: ε·r, or min_rate_change
    /// below kMinRateHaveMultiplicativeRateChange = min_rate_change / ε.
    fn probe_delta(&self) -> f64 {
        let (r, step) = (self.estimate.bps() as f64, self.cfg.min_rate_change.bps() as f64);
        if r >= step / self.cfg.epsilon {
            r * self.cfg.epsilon
        } else {
            step
        }
    }

    /// The probing step as a fraction of the estimate.
    pub(super) fn epsilon(&self) -> f64 {
        let r = self.estimate.bps() as f64;
        if r > 0.0 {
            self.probe_delta() / r
        } else {
            self.cfg.epsilon
        }
    }

    /// ComputeMonitorIntervalsDuration.
    fn mi_duration(&self) -> Duration {
        let packets = Duration::from_micros((self.gap_us * f64::from(self.cfg.mi_packets)).min(1e13) as i64);
        let d = match self.cfg.mi_length {
            MiLength::Fixed => packets,
            MiLength::Adaptive => packets.max(self.rtt.mul_f64(MI_RTT_RATIO)),
        };
        d.max(self.cfg.min_mi)
    }

    /// Rate over the last received packets (all but the first's bytes over
    /// the arrival span), or `None` without a span.
    fn receive_rate(&self) -> Option<DataRate> {
        let (first, last) = (self.recent.front()?, self.recent.back()?);
        let bytes = self.recent.iter().skip(1).fold(DataSize::ZERO, |a, p| a + p.1);
        (last.0 > first.0).then(|| DataRate::from_size_per(bytes, last.0 - first.0))
    }

    /// Start a block of MIs at `rates`, the first at `now`.
    pub(super) fn start_block(&mut self, now: Time, rates: &[DataRate]) {
        self.n_rates = rates.len().min(2);
        for (i, r) in rates.iter().take(2).enumerate() {
            self.rates[i] = self.clamp(*r);
        }
        self.started = 1;
        self.complete = 0;
        self.mis[0].reset(self.rates[0], now, self.mi_duration);
    }

    pub(super) fn feedback_done(&self) -> bool {
        self.n_rates > 0 && self.complete >= self.n_rates
    }

    fn timeout_expired(&self, now: Time) -> bool {
        self.complete < self.started && now - self.mis[self.complete].end >= self.mi_timeout
    }

    /// Close MIs that have ended and open the next of the block (timer or send).
    pub(super) fn roll_mis(&mut self, now: Time) {
        if self.started == 0 || now < self.mis[self.started - 1].end {
            return;
        }
        self.mis[self.started - 1].close(self.next_seq);
        if self.started < self.n_rates {
            let (i, rate, d) = (self.started, self.rates[self.started], self.mi_duration);
            self.mis[i].reset(rate, now, d);
            self.started += 1;
        }
    }

    /// CreateRateUpdate: the open MI's rate, else the estimate.
    pub(super) fn update_rate(&mut self, now: Time) {
        let open = self.started > 0 && now < self.mis[self.started - 1].end;
        self.rate = self.clamp(if open { self.mis[self.started - 1].rate } else { self.estimate });
    }

    /// OnSentPacket's block logic: timeout, end of startup, next block.
    pub(super) fn on_send(&mut self, now: Time) {
        self.roll_mis(now);
        let expired = self.timeout_expired(now);
        if expired {
            let half = self.estimate.mul_f64(0.5);
            self.estimate = self.clamp(self.receive_rate().map_or(half, |r| half.min(r)));
            if self.mode == Mode::SlowStart {
                self.mode = Mode::OnlineLearning;
            }
        }
        if self.mode == Mode::Startup {
            if self.start.is_some_and(|s| now - s >= self.cfg.startup) {
                let measured = self.clamp(self.receive_rate().unwrap_or(self.estimate));
                self.mode = Mode::SlowStart;
                self.mi_duration = self.mi_duration();
                self.start_block(now, &[measured]);
                // The first slow-start MI runs at the measured rate itself.
                self.estimate = self.clamp(measured.mul_f64(1.0 / self.cfg.slow_start_factor));
            }
            return;
        }
        if self.feedback_done() || expired {
            self.mi_timeout = self.rtt.mul_f64(self.cfg.timeout_ratio);
            self.mi_duration = self.mi_duration();
            if self.mode == Mode::SlowStart {
                self.start_block(now, &[self.estimate.mul_f64(self.cfg.slow_start_factor)]);
            } else {
                let sign = if self.rng.next_u64() & 1 == 0 { -1.0 } else { 1.0 };
                let (r, delta) = (self.estimate.bps() as f64, self.probe_delta());
                let pair = [DataRate::from_bps_f64(r + sign * delta), DataRate::from_bps_f64(r - sign * delta)];
                self.start_block(now, &pair);
            }
        }
    }

    /// The rate the utility is evaluated at.
    fn mi_rate(&self, mi: &Mi) -> f64 {
        match self.cfg.rate_source {
            RateSource::Target => mi.rate.bps() as f64,
            RateSource::Sent => mi.sent_rate().bps() as f64,
        }
    }

    /// Utility of MI `i` and what it measured.
    fn evaluate(&self, i: usize) -> Outcome {
        let mi = &self.mis[i];
        let (rtt_gradient, loss) = (mi.fit.slope(), mi.loss_rate());
        let utility = self.cfg.utility.compute(self.mi_rate(mi), rtt_gradient, loss);
        Outcome { utility, utility_gradient: 0.0, rtt_gradient, loss, throughput: mi.throughput() }
    }

    /// UpdateSendingRateAndMode, once the block's feedback is complete.
    pub(super) fn on_block_done(&mut self) {
        match self.mode {
            Mode::Startup => {}
            Mode::SlowStart => {
                let o = self.evaluate(0);
                self.last = Outcome { throughput: o.throughput.or(self.last.throughput), ..o };
                let u = self.last.utility;
                let old = self.estimate;
                // ComputeRateUpdateForSlowStartMode: keep climbing while utility grows.
                if self.slow_start_best.is_none_or(|best| u > best) {
                    self.slow_start_best = Some(u);
                    self.estimate = self.clamp(self.mis[0].rate);
                }
                if self.estimate <= old {
                    self.mode = Mode::OnlineLearning;
                }
            }
            Mode::OnlineLearning | Mode::DoubleCheck => {
                if self.n_rates < 2 {
                    return;
                }
                let (l0, l1) = (self.mis[0].loss_rate(), self.mis[1].loss_rate());
                let (r0, r1) = (self.mis[0].rate.bps() as f64, self.mis[1].rate.bps() as f64);
                // NeedDoubleCheckMeasurments: more loss at the lower rate.
                if self.mode == Mode::DoubleCheck {
                    self.mode = Mode::OnlineLearning;
                } else if (r0 - r1) * (l0 - l1) < 0.0 {
                    self.mode = Mode::DoubleCheck;
                    return;
                }
                let (a, b) = (self.evaluate(0), self.evaluate(1));
                let (u0, u1) = (a.utility, b.utility);
                let unit = self.cfg.utility.unit_bps();
                let (x0, x1) = (self.mi_rate(&self.mis[0]) / unit, self.mi_rate(&self.mis[1]) / unit);
                let gradient = if x0 != x1 { (u0 - u1) / (x0 - x1) } else { 0.0 };
                let next = self.stepper.next_rate(gradient, self.estimate.bps() as f64, unit);
                self.estimate = self.clamp(DataRate::from_bps_f64(next));
                self.last = Outcome {
                    utility: 0.5 * (u0 + u1),
                    utility_gradient: gradient,
                    rtt_gradient: 0.5 * (a.rtt_gradient + b.rtt_gradient),
                    loss: 0.5 * (a.loss + b.loss),
                    throughput: b.throughput.or(a.throughput).or(self.last.throughput),
                };
            }
        }
    }
}
