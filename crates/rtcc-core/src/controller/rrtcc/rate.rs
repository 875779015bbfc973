//! The receive-side rate controller of `rrtcc`: libwebrtc's
//! `remote_rate_control.cc` and `bitrate_estimator.cc` at trunk r4855 (2013).
//! Once a second, and at once on a new over-use, it takes the detector's
//! hypothesis, the rate received over the last 500 ms and the noise variance
//! and moves its estimate: up by a sigmoid factor per second, down to β times
//! what arrives, or holds. Rates in bps, times in whole milliseconds.

use std::collections::VecDeque;

use super::receiver::Usage;

// remote_rate_control.cc (r4855).
/// kDefaultRttMs: the RTT assumed until RTCP gives one.
pub const DEFAULT_RTT_MS: i64 = 200;
/// Decrease factor β away from a known maximum (AboveMax, MaxUnknown)…
pub const BETA: f64 = 0.9;
/// …and near one (NearMax).
pub const BETA_NEAR_MAX: f64 = 0.95;
/// The first estimate is the incoming rate after this long (ms).
const INIT_AFTER_MS: i64 = 500;
/// Smoothing of the rate at decreases, α of UpdateMaxBitRateEstimate.
const MAX_RATE_ALPHA: f64 = 0.05;
/// Clamp of its variance normalised by the mean ("0.4 ≈ 14 kbit/s at 500 kbit/s").
const MAX_RATE_VAR: (f64, f64) = (0.4, 2.5);
/// Increase: alpha = 1.005 + B/(1 + exp(b·(d·T_r − (c1·σ² + c2)))), clamped
/// to [1.005, 1.3] per second (RateIncreaseFactor).
const INC_B: f64 = 0.0407;
const INC_SMALL_B: f64 = 0.0025;
const INC_C1: f64 = -6700.0 / (33.0 * 33.0);
const INC_C2: f64 = 800.0;
const INC_D: f64 = 0.85;
const INC_RANGE: (f64, f64) = (1.005, 1.3);
/// The increase never takes the estimate above 1.5× the incoming rate once
/// either is past these (bps).
const CAP_INCOMING_ABOVE: u64 = 100_000;
const CAP_RATE_ABOVE: u64 = 150_000;

/// kBitrateAverageWindowMs (bitrate_estimator.cc).
const RATE_WINDOW_MS: i64 = 500;

/// Where the incoming rate is against the rates seen at past decreases
/// (bwe_defines.h RateControlRegion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    NearMax,
    AboveMax,
    MaxUnknown,
}

/// The rate controller's state (bwe_defines.h RateControlState).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcState {
    Hold,
    Increase,
    Decrease,
}

/// Bytes received over the last 500 ms, as a rate (BitRateStats).
#[derive(Clone, Debug, Default)]
pub struct IncomingRate {
    samples: VecDeque<(i64, u64)>,
    bytes: u64,
}

impl IncomingRate {
    pub fn update(&mut self, bytes: u64, now_ms: i64) {
        self.samples.push_back((now_ms, bytes));
        self.bytes += bytes;
        self.expire(now_ms);
    }

    fn expire(&mut self, now_ms: i64) {
        while let Some(&(t, b)) = self.samples.front() {
            if now_ms - t <= RATE_WINDOW_MS {
                break;
            }
            self.bytes -= b;
            self.samples.pop_front();
        }
    }

    /// bps, always over the whole window (low for the first 500 ms).
    pub fn rate(&mut self, now_ms: i64) -> u64 {
        self.expire(now_ms);
        (self.bytes as f64 * 8.0 * 1000.0 / RATE_WINDOW_MS as f64 + 0.5) as u64
    }
}

/// What the rate controller is given at each update (RateControlInput).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Input {
    pub usage: Usage,
    pub incoming: u64,
    pub noise_var: f64,
}

/// The receive-side rate controller (RemoteRateControl, r4855). Rates in bps.
#[derive(Clone, Debug)]
pub struct RemoteRate {
    min_rate: u64,
    max_rate: u64,
    pub rate: u64,
    max_hold_rate: u64,
    /// Mean (kbps) and normalised variance of the incoming rate at decreases.
    pub avg_max: Option<f64>,
    pub var_max: f64,
    pub state: RcState,
    pub region: Region,
    pub last_change_ms: Option<i64>,
    input: Input,
    updated: bool,
    first_incoming_ms: Option<i64>,
    pub initialized: bool,
    /// EWMA of the time between updates (ms) and when the last one was.
    pub avg_change_period: f64,
    last_update_ms: Option<i64>,
    pub beta: f64,
    pub rtt_ms: i64,
}

impl RemoteRate {
    /// Before its first estimate the rate is the configured maximum, as in
    /// libwebrtc; it is not valid (no REMB) until initialised.
    pub fn new(min_rate: u64, max_rate: u64, rtt_ms: i64) -> Self {
        RemoteRate {
            min_rate,
            max_rate,
            rate: max_rate,
            max_hold_rate: 0,
            avg_max: None,
            var_max: MAX_RATE_VAR.0,
            state: RcState::Hold,
            region: Region::MaxUnknown,
            last_change_ms: None,
            input: Input { usage: Usage::Normal, incoming: 0, noise_var: 1.0 },
            updated: false,
            first_incoming_ms: None,
            initialized: false,
            avg_change_period: 1000.0,
            last_update_ms: None,
            beta: BETA,
            rtt_ms,
        }
    }

    pub fn valid(&self) -> bool {
        self.initialized
    }

    /// Whether a continued over-use may lower the rate again now: a reduction
    /// interval (RTT clamped to [10, 200] ms) has passed, or the estimate is
    /// more than 2.05× the incoming rate.
    pub fn time_to_reduce_further(&self, now_ms: i64, incoming: u64) -> bool {
        let interval = self.rtt_ms.clamp(10, 200);
        if self.last_change_ms.is_none_or(|t| now_ms - t >= interval) {
            return true;
        }
        self.initialized && self.rate as f64 - incoming as f64 > 1.05 * incoming as f64
    }

    /// Takes a new input; returns the region the detector should use. An
    /// over-use not yet acted on is kept (only its rate and noise refreshed).
    pub fn update(&mut self, input: Input, now_ms: i64) -> Region {
        if !self.initialized {
            match self.first_incoming_ms {
                None if input.incoming > 0 => self.first_incoming_ms = Some(now_ms),
                Some(t) if now_ms - t > INIT_AFTER_MS && input.incoming > 0 => {
                    self.rate = input.incoming;
                    self.initialized = true;
                }
                _ => {}
            }
        }
        if self.updated && self.input.usage == Usage::Overusing {
            self.input.noise_var = input.noise_var;
            self.input.incoming = input.incoming;
            return self.region;
        }
        self.updated = true;
        self.input = input;
        self.region
    }

    /// Applies the last input (UpdateBandwidthEstimate → ChangeBitRate).
    pub fn update_estimate(&mut self, now_ms: i64) -> u64 {
        if !self.updated {
            return self.rate;
        }
        self.updated = false;
        let period = self.last_update_ms.map_or(0, |t| now_ms - t) as f64;
        self.last_update_ms = Some(now_ms);
        self.avg_change_period = 0.9 * self.avg_change_period + 0.1 * period;
        self.transition(now_ms);
        let incoming = self.input.incoming;
        let incoming_kbps = incoming as f64 / 1000.0;
        let mut new_rate = self.rate;
        let mut recovery = false;
        match self.state {
            RcState::Hold => self.max_hold_rate = self.max_hold_rate.max(incoming),
            RcState::Increase => {
                if let Some(avg) = self.avg_max {
                    let std = (self.var_max * avg).sqrt();
                    if incoming_kbps > avg + 3.0 * std {
                        self.set_region(Region::MaxUnknown);
                        self.avg_max = None;
                    } else if incoming_kbps > avg + 2.5 * std {
                        self.set_region(Region::AboveMax);
                    }
                }
                let response_ms = (self.avg_change_period + 0.5) as i64 + self.rtt_ms + 300;
                let alpha = self.increase_factor(now_ms, response_ms, self.input.noise_var);
                new_rate = (new_rate as f64 * alpha) as u64 + 1000;
                // Back to just under the rate held before, if the increase is slower.
                if self.max_hold_rate > 0 && self.beta * self.max_hold_rate as f64 > new_rate as f64 {
                    new_rate = (self.beta * self.max_hold_rate as f64) as u64;
                    self.avg_max = Some(self.beta * self.max_hold_rate as f64 / 1000.0);
                    self.set_region(Region::NearMax);
                    recovery = true;
                }
                self.max_hold_rate = 0;
                self.last_change_ms = Some(now_ms);
            }
            RcState::Decrease => {
                if incoming < self.min_rate {
                    new_rate = self.min_rate;
                } else {
                    // Just under what arrives, to drain the self-inflicted queue.
                    new_rate = (self.beta * incoming as f64 + 0.5) as u64;
                    if new_rate > self.rate {
                        // Never raise the rate on an over-use.
                        if let (Some(avg), false) = (self.avg_max, self.region == Region::MaxUnknown) {
                            new_rate = (self.beta * avg * 1000.0 + 0.5) as u64;
                        }
                        new_rate = new_rate.min(self.rate);
                    }
                    self.set_region(Region::NearMax);
                    if let Some(avg) = self.avg_max {
                        if incoming_kbps < avg - 3.0 * (self.var_max * avg).sqrt() {
                            self.avg_max = None;
                        }
                    }
                    self.update_max(incoming_kbps);
                }
                // Hold until the queues have drained.
                self.state = RcState::Hold;
                self.last_change_ms = Some(now_ms);
            }
        }
        let limited = incoming > CAP_INCOMING_ABOVE || new_rate > CAP_RATE_ABOVE;
        if !recovery && limited && new_rate as f64 > 1.5 * incoming as f64 {
            // The sender is far below the estimate: do not run away from it.
            new_rate = self.rate;
            self.last_change_ms = Some(now_ms);
        }
        self.rate = new_rate.clamp(self.min_rate.min(self.max_rate), self.max_rate);
        self.rate
    }

    /// Hold → Increase on normal, any → Decrease on over-use, Hold on under-use.
    fn transition(&mut self, now_ms: i64) {
        match self.input.usage {
            Usage::Normal if self.state == RcState::Hold => {
                self.last_change_ms = Some(now_ms);
                self.state = RcState::Increase;
            }
            Usage::Normal => {}
            Usage::Overusing => self.state = RcState::Decrease,
            Usage::Underusing => self.state = RcState::Hold,
        }
    }

    /// The multiplicative increase since the last change: a per-second
    /// factor from a sigmoid of the response time and the noise variance
    /// (RateIncreaseFactor), to the power
    /// of the seconds elapsed, halved near the maximum and tripled when none
    /// is known.
    pub fn increase_factor(&self, now_ms: i64, response_ms: i64, noise_var: f64) -> f64 {
        let x = INC_SMALL_B * (INC_D * response_ms as f64 - (INC_C1 * noise_var + INC_C2));
        let mut alpha = (1.005 + INC_B / (1.0 + x.exp())).clamp(INC_RANGE.0, INC_RANGE.1);
        if let Some(last) = self.last_change_ms {
            alpha = alpha.powf((now_ms - last) as f64 / 1000.0);
        }
        match self.region {
            Region::NearMax => alpha - (alpha - 1.0) / 2.0,
            Region::MaxUnknown => alpha + (alpha - 1.0) * 2.0,
            Region::AboveMax => alpha,
        }
    }

    /// EWMA (α = 0.05) of the incoming rate at decreases, and its variance
    /// normalised by the mean, clamped to [0.4, 2.5].
    fn update_max(&mut self, incoming_kbps: f64) {
        let avg = match self.avg_max {
            None => incoming_kbps,
            Some(a) => (1.0 - MAX_RATE_ALPHA) * a + MAX_RATE_ALPHA * incoming_kbps,
        };
        self.avg_max = Some(avg);
        let dev = avg - incoming_kbps;
        let var = (1.0 - MAX_RATE_ALPHA) * self.var_max + MAX_RATE_ALPHA * dev * dev / avg.max(1.0);
        self.var_max = var.clamp(MAX_RATE_VAR.0, MAX_RATE_VAR.1);
    }

    /// β is 0.95 near the maximum, 0.9 elsewhere (ChangeRegion).
    fn set_region(&mut self, region: Region) {
        self.region = region;
        self.beta = if region == Region::NearMax { BETA_NEAR_MAX } else { BETA };
    }
}
