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
