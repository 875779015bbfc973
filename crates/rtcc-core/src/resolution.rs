//! Sending resolution: fixed, or the Dumbo thesis's adaptive policy (§5.1,
//! Table 5.1): an EWMA of the controller's target rate with time constant τ,
//! stepping one resolution down below the current one's switch-low threshold
//! and one up above its switch-high threshold, at most once per hold time.

use crate::units::{DataRate, Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resolution {
    R180,
    R360,
    R720,
    R1080,
}

impl Resolution {
    pub const ALL: [Resolution; 4] = [Resolution::R180, Resolution::R360, Resolution::R720, Resolution::R1080];

    pub const fn size(self) -> (u32, u32) {
        match self {
            Resolution::R180 => (320, 180),
            Resolution::R360 => (640, 360),
            Resolution::R720 => (1280, 720),
            Resolution::R1080 => (1920, 1080),
        }
    }

    pub fn parse(s: &str) -> Option<Resolution> {
        Some(match s {
            "180p" | "320x180" => Resolution::R180,
            "360p" | "640x360" => Resolution::R360,
            "720p" | "1280x720" => Resolution::R720,
            "1080p" | "1920x1080" => Resolution::R1080,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Resolution::R180 => "180p",
            Resolution::R360 => "360p",
            Resolution::R720 => "720p",
            Resolution::R1080 => "1080p",
        }
    }

    /// Dumbo Table 5.1 (switch low, switch high) in kbps. The bands overlap
    /// so the choice does not flap at a boundary.
    fn dumbo_band(self) -> (u64, u64) {
        match self {
            Resolution::R180 => (0, 400),
            Resolution::R360 => (300, 1500),
            Resolution::R720 => (1000, 3000),
            Resolution::R1080 => (2500, 12_000),
        }
    }

    fn step(self, up: bool) -> Resolution {
        let i = Resolution::ALL.iter().position(|r| *r == self).unwrap_or(0);
        let j = if up { (i + 1).min(3) } else { i.saturating_sub(1) };
        Resolution::ALL[j]
    }

    /// libwebrtc's default maximum bitrate for a camera stream of this size
    /// (webrtc_video_engine.cc GetMaxDefaultVideoBitrateKbps): 600 kbps up to
    /// 320×240, 1700 up to 640×480, 2000 up to 960×540, 2500 above.
    pub fn webrtc_max_rate(self) -> DataRate {
        let (w, h) = self.size();
        let px = w * h;
        DataRate::from_kbps(if px <= 320 * 240 {
            600
        } else if px <= 640 * 480 {
            1700
        } else if px <= 960 * 540 {
            2000
        } else {
            2500
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResolutionPolicy {
    Fixed(Resolution),
    /// Dumbo §5.1: τ = 500 ms, 4 s between switches (Table A.1).
    Dumbo {
        tau: Duration,
        hold: Duration,
        start: Resolution,
    },
}

impl ResolutionPolicy {
    pub const DUMBO_TAU: Duration = Duration::from_millis(500);
    pub const DUMBO_HOLD: Duration = Duration::from_secs(4);

    pub fn dumbo() -> Self {
        ResolutionPolicy::Dumbo { tau: Self::DUMBO_TAU, hold: Self::DUMBO_HOLD, start: Resolution::R360 }
    }
}

/// Runs a policy: fed every target-rate update, read once per frame.
#[derive(Clone, Debug)]
pub struct ResolutionState {
    policy: ResolutionPolicy,
    current: Resolution,
    max: Resolution,
    smoothed: Option<f64>,
    last_sample: Time,
    last_switch: Option<Time>,
}

impl ResolutionState {
    pub fn new(policy: ResolutionPolicy) -> Self {
        let current = match policy {
            ResolutionPolicy::Fixed(r) => r,
            ResolutionPolicy::Dumbo { start, .. } => start,
        };
        ResolutionState {
            policy,
            current,
            max: Resolution::R1080,
            smoothed: None,
            last_sample: Time::ZERO,
            last_switch: None,
        }
    }

    /// Never step above `max` (an adaptive policy starting above it starts
    /// at it).
    pub fn with_max(mut self, max: Resolution) -> Self {
        self.max = max;
        if matches!(self.policy, ResolutionPolicy::Dumbo { .. }) {
            self.current = self.current.min(max);
        }
        self
    }

    pub fn current(&self) -> Resolution {
        self.current
    }

    pub fn smoothed_rate(&self) -> Option<DataRate> {
        self.smoothed.map(DataRate::from_bps_f64)
    }

    /// A new target-rate sample at `now`; returns true when the resolution changed.
    pub fn update(&mut self, now: Time, target: DataRate) -> bool {
        let ResolutionPolicy::Dumbo { tau, hold, .. } = self.policy else { return false };
        let b = target.bps() as f64;
        // Dumbo eq. in §5.1: s_i = (1 − e^{−Δt/τ})·b_i + e^{−Δt/τ}·s_{i−1}.
        let s = match self.smoothed {
            None => b,
            Some(prev) => {
                let dt = (now - self.last_sample).as_secs_f64().max(0.0);
                let w = (-dt / tau.as_secs_f64().max(1e-6)).exp();
                (1.0 - w) * b + w * prev
            }
        };
        self.smoothed = Some(s);
        self.last_sample = now;
        if self.last_switch.is_some_and(|t| now - t < hold) {
            return false;
        }
        let (lo, hi) = self.current.dumbo_band();
        let kbps = s / 1e3;
        let next = if kbps < lo as f64 {
            self.current.step(false)
        } else if kbps > hi as f64 && self.current < self.max {
            self.current.step(true)
        } else {
            self.current
        };
        if next != self.current {
            self.current = next;
            self.last_switch = Some(now);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbo_steps_with_hold_and_hysteresis() {
        let mut r = ResolutionState::new(ResolutionPolicy::dumbo());
        assert_eq!(r.current(), Resolution::R360);
        // 2 Mbps > 1500 kbps switch-high of 360p: one step up at once.
        assert!(r.update(Time::ZERO, DataRate::from_mbps(2)));
        assert_eq!(r.current(), Resolution::R720);
        // 5 Mbps: above 720p's 3000 kbps, but the 4 s hold applies.
        let mut t = Time::ZERO;
        let mut switched_at = None;
        for _ in 0..100 {
            t += Duration::from_millis(100);
            if r.update(t, DataRate::from_mbps(5)) {
                switched_at = Some(t);
                break;
            }
        }
        assert_eq!(switched_at, Some(Time::from_millis(4000)));
        assert_eq!(r.current(), Resolution::R1080);
        // 2.7 Mbps sits inside 1080p's band (2500..12000): no change.
        for _ in 0..100 {
            t += Duration::from_millis(100);
            assert!(!r.update(t, DataRate::from_kbps(2700)));
        }
    }

    #[test]
    fn dumbo_never_steps_above_the_cap() {
        let mut r = ResolutionState::new(ResolutionPolicy::dumbo()).with_max(Resolution::R720);
        assert!(r.update(Time::ZERO, DataRate::from_mbps(8)));
        assert_eq!(r.current(), Resolution::R720);
        assert!(!r.update(Time::from_millis(5000), DataRate::from_mbps(8)));
        assert_eq!(r.current(), Resolution::R720);
        let low = ResolutionState::new(ResolutionPolicy::dumbo()).with_max(Resolution::R180);
        assert_eq!(low.current(), Resolution::R180);
    }

    #[test]
    fn ewma_uses_tau() {
        let mut r = ResolutionState::new(ResolutionPolicy::dumbo());
        r.update(Time::ZERO, DataRate::from_kbps(1000));
        r.update(Time::from_millis(500), DataRate::from_kbps(2000));
        // One τ later the average has moved 1 − e^{-1} = 63.2 % of the way.
        let s = r.smoothed_rate().unwrap().kbps_f64();
        assert!((s - 1632.1).abs() < 0.5, "{s}");
    }

    #[test]
    fn webrtc_caps() {
        assert_eq!(Resolution::R180.webrtc_max_rate(), DataRate::from_kbps(600));
        assert_eq!(Resolution::R360.webrtc_max_rate(), DataRate::from_kbps(1700));
        assert_eq!(Resolution::R720.webrtc_max_rate(), DataRate::from_kbps(2500));
    }
}
