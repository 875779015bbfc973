//! Monitor intervals (ALGORITHMS.md §6.2, libwebrtc monitor_interval.cc): the
//! stretch of time one trial rate is sent for, the packets sent in it (by
//! sequence, at send time) and what feedback said about them: loss, arrival
//! span and the RTT gradient, the least-squares slope of RTT against send
//! time (ComputeDelayGradient).

use crate::units::{DataRate, DataSize, Duration, Time};

/// Packets tracked per MI for duplicate reports (a 50 ms MI at 10 Gbps).
const MI_MAX_PACKETS: u64 = 1 << 16;

/// Running least-squares fit of RTT (ms) against send time (ms), both
/// relative to a first point so the sums keep their precision.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Fit {
    n: f64,
    origin: Option<(Time, f64)>,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
    min_x: f64,
    max_x: f64,
}

impl Fit {
    pub(super) fn push(&mut self, at: Time, rtt_ms: f64) {
        let (t0, y0) = *self.origin.get_or_insert((at, rtt_ms));
        let (x, y) = ((at - t0).as_millis_f64(), rtt_ms - y0);
        if self.n == 0.0 {
            (self.min_x, self.max_x) = (x, x);
        }
        self.n += 1.0;
        (self.sx, self.sy, self.sxx, self.sxy) = (self.sx + x, self.sy + y, self.sxx + x * x, self.sxy + x * y);
        (self.min_x, self.max_x) = (self.min_x.min(x), self.max_x.max(x));
    }

    /// Slope d(RTT)/d(send time); 0 without two distinct send times
    /// (ComputeDelayGradient's early return).
    pub(super) fn slope(&self) -> f64 {
        if self.n < 2.0 || self.max_x <= self.min_x {
            return 0.0;
        }
        let sxx = self.sxx - self.sx * self.sx / self.n;
        let sxy = self.sxy - self.sx * self.sy / self.n;
        let g = sxy / sxx;
        if sxx > 0.0 && g.is_finite() {
            g
        } else {
            0.0
        }
    }
}

/// One monitor interval: its rate, the packets sent in it (a sequence
/// range) and what feedback said about them.
#[derive(Clone, Debug, Default)]
pub(super) struct Mi {
    pub(super) rate: DataRate,
    pub(super) start: Time,
    pub(super) end: Time,
    pub(super) closed: bool,
    /// Sequences from here on were sent after the MI closed.
    floor: u64,
    lo: Option<u64>,
    hi: u64,
    sent: u32,
    sent_bytes: DataSize,
    seen: Vec<u64>,
    reported: u32,
    pub(super) lost: u32,
    pub(super) recv_bytes: DataSize,
    pub(super) first_arrival: Option<Time>,
    pub(super) last_arrival: Time,
    pub(super) fit: Fit,
}

impl Mi {
    /// Reuse in place (keeps the `seen` buffer: no allocation per MI).
    pub(super) fn reset(&mut self, rate: DataRate, start: Time, duration: Duration) {
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        *self = Mi { rate, start, end: start + duration, seen, ..Mi::default() };
    }

    pub(super) fn on_sent(&mut self, seq: u64, size: DataSize) {
        let lo = *self.lo.get_or_insert(seq);
        if seq < lo || seq - lo >= MI_MAX_PACKETS {
            return;
        }
        self.hi = self.hi.max(seq);
        self.sent += 1;
        self.sent_bytes += size;
        let words = ((seq - lo) / 64 + 1) as usize;
        if self.seen.len() < words {
            self.seen.resize(words, 0);
        }
    }

    pub(super) fn close(&mut self, next_seq: u64) {
        if !self.closed {
            self.closed = true;
            self.floor = next_seq;
        }
    }

    /// Marks `seq` reported; false if it is not this MI's or was reported before.
    pub(super) fn claim(&mut self, seq: u64) -> bool {
        let Some(lo) = self.lo else { return false };
        if seq < lo || seq > self.hi {
            return false;
        }
        let (w, b) = (((seq - lo) / 64) as usize, (seq - lo) % 64);
        match self.seen.get_mut(w) {
            Some(word) if *word & (1 << b) == 0 => {
                *word |= 1 << b;
                self.reported += 1;
                true
            }
            _ => false,
        }
    }

    pub(super) fn done(&self, max_reported: Option<u64>) -> bool {
        self.closed && ((self.sent > 0 && self.reported >= self.sent) || max_reported.is_some_and(|m| m >= self.floor))
    }

    pub(super) fn loss_rate(&self) -> f64 {
        if self.reported == 0 {
            0.0
        } else {
            f64::from(self.lost) / f64::from(self.reported)
        }
    }

    /// Bytes sent over the MI's length.
    pub(super) fn sent_rate(&self) -> DataRate {
        DataRate::from_size_per(self.sent_bytes, self.end - self.start)
    }

    /// Received bytes over the arrival span (GetTransmittedPacketsRate).
    pub(super) fn throughput(&self) -> Option<DataRate> {
        let first = self.first_arrival?;
        (self.last_arrival > first).then(|| DataRate::from_size_per(self.recv_bytes, self.last_arrival - first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::vivace::tests::close;

    /// RTT 50, 52, 54, 56 ms at send times 0, 10, 20, 30 ms: slope 0.2.
    #[test]
    fn rtt_gradient_is_the_least_squares_slope() {
        let mut f = Fit::default();
        for (t, rtt) in [(0, 50.0), (10, 52.0), (20, 54.0), (30, 56.0)] {
            f.push(Time::from_millis(1000 + t), rtt);
        }
        assert!(close(f.slope(), 0.2, 1e-12), "{}", f.slope());
        // Noisy: (0,50) (10,51) (20,50) (30,53): x̄ = 15, ȳ = 51,
        // Σ(x−x̄)(y−ȳ) = 15 + (−5)(0) ... = −15·−1 + −5·0 + 5·−1 + 15·2 = 40, Σ(x−x̄)² = 500.
        let mut f = Fit::default();
        for (t, rtt) in [(0, 50.0), (10, 51.0), (20, 50.0), (30, 53.0)] {
            f.push(Time::from_millis(t), rtt);
        }
        assert!(close(f.slope(), 0.08, 1e-12), "{}", f.slope());
        // One send time only: no slope (ComputeDelayGradient's early return).
        let mut f = Fit::default();
        f.push(Time::from_millis(5), 50.0);
        f.push(Time::from_millis(5), 80.0);
        assert_eq!(f.slope(), 0.0);
    }
}
