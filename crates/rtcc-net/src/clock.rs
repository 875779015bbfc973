//! Wall time at one boundary: everything inside takes `Time` as a sans-IO
//! object does; only the driver reads the clock.

use std::time::Instant;

use rtcc_core::units::{Duration, Time};

/// A monotonic clock whose zero is when it was made.
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    start: Instant,
}

impl WallClock {
    pub fn new() -> Self {
        WallClock { start: Instant::now() }
    }

    /// Now, in µs since the clock's zero.
    pub fn now(&self) -> Time {
        Time::from_micros(self.start.elapsed().as_micros() as i64)
    }

    /// How long until `t` (zero if it has passed).
    pub fn until(&self, t: Time) -> std::time::Duration {
        let d: Duration = t.saturating_since(self.now());
        std::time::Duration::from_micros(d.as_micros().max(0) as u64)
    }
}

impl Default for WallClock {
    fn default() -> Self {
        Self::new()
    }
}

/// How late a real-time loop did what was due (or other durations), in
/// µs: the first 2^20 samples (a day of a busy loop would otherwise grow
/// without bound).
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    us: Vec<i64>,
}

impl Lateness {
    const MAX_SAMPLES: usize = 1 << 20;

    /// Something due at `due` was done at `now`.
    pub fn note(&mut self, due: Time, now: Time) {
        self.add((now - due).as_micros().max(0));
    }

    /// A sample of any other duration, in µs (an encode's time, say).
    pub fn add(&mut self, us: i64) {
        if self.us.len() < Self::MAX_SAMPLES {
            self.us.push(us);
        }
    }

    /// Median, 99th percentile and maximum (nearest rank); None with no
    /// sample.
    pub fn percentiles(&mut self) -> Option<[i64; 3]> {
        let v = &mut self.us;
        v.sort_unstable();
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        (!v.is_empty()).then(|| [at(0.5), at(0.99), v[v.len() - 1]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles_by_nearest_rank() {
        let mut l = Lateness::default();
        assert_eq!(l.percentiles(), None);
        for us in (1..=100).rev() {
            l.note(Time::ZERO, Time::from_micros(us));
        }
        // Early is not late.
        l.note(Time::from_micros(50), Time::ZERO);
        assert_eq!(l.percentiles(), Some([50, 99, 100]));
    }
}
