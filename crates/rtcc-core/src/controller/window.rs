//! A windowed minimum or maximum over time, shared by the delay-based
//! controllers (Copa's min-RTT and standing RTT, NADAR's standing delay,
//! Cross's rate and delay filters).

use std::collections::VecDeque;

use crate::units::{Duration, Time};

/// Windowed minimum or maximum over time: a monotone deque (ALGORITHMS.md
/// §0). A sample within window/64 of the newest kept (and better) one is
/// not stored, so the deque holds at most ~65 entries at any packet rate;
/// such a sample is forgotten up to window/64 before it would expire.
#[derive(Clone, Debug)]
pub(crate) struct Windowed<T> {
    vals: VecDeque<(Time, T)>,
    min: bool,
    last: Option<T>,
}

impl<T: Copy + PartialOrd> Windowed<T> {
    /// A windowed minimum (`min`) or maximum.
    pub(crate) fn new(min: bool) -> Self {
        Windowed { vals: VecDeque::new(), min, last: None }
    }

    pub(crate) fn min() -> Self {
        Windowed::new(true)
    }

    pub(crate) fn max() -> Self {
        Windowed::new(false)
    }

    /// Adds `v` sampled at `t` and returns the extreme over [t − window, t].
    pub(crate) fn update(&mut self, t: Time, v: T, window: Duration) -> T {
        let min = self.min;
        let no_better = |a: T| if min { a >= v } else { a <= v };
        while self.vals.back().is_some_and(|b| no_better(b.1)) {
            self.vals.pop_back();
        }
        if self.vals.back().is_none_or(|b| t - b.0 >= window / 64) {
            self.vals.push_back((t, v));
        }
        while self.vals.len() > 1 && self.vals.front().is_some_and(|f| f.0 < t - window) {
            self.vals.pop_front();
        }
        let best = self.vals.front().map_or(v, |f| f.1);
        self.last = Some(best);
        best
    }

    /// The extreme as of the newest sample; `None` before any.
    pub(crate) fn get(&self) -> Option<T> {
        self.last
    }
}
