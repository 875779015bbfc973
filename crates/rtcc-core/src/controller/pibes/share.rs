//! The Fig. 4 finite-state machine over the bandwidth share s_k (§III-B),
//! stepped once per encoded frame.

/// FSM constants (§IV: s_max 0.95, Δ 0.05, s_share 0.8, s_min 0.5, Δ+ 0.01,
/// Δ− 0.05).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareConfig {
    pub s_max: f64,
    pub s_share: f64,
    pub s_min: f64,
    /// Δ: per-frame increase back to s_max once competition has gone.
    pub delta: f64,
    /// Δ+: per-frame increase towards s_share while the RTT falls.
    pub delta_up: f64,
    /// Δ−: per-frame decrease towards s_min while the RTT rises.
    pub delta_down: f64,
}

/// Fig. 4's two modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// c = 0: send at s_max.
    Alone,
    /// c = 1: share with competing flows, between s_min and s_share.
    Sharing,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    cfg: ShareConfig,
    pub(super) s: f64,
    mode: Mode,
}

impl Share {
    /// s_0 = s_max, no competition (§III-B).
    pub fn new(cfg: ShareConfig) -> Self {
        Share { cfg, s: cfg.s_max, mode: Mode::Alone }
    }

    pub fn get(&self) -> f64 {
        self.s
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// One frame's step. `competing` is c; `rtt_trend` is rtt_k − rtt_{k−1}
    /// when a new frame's RTT has arrived since the last step, else `None`.
    pub fn step(&mut self, competing: bool, rtt_trend: Option<f64>) {
        let c = &self.cfg;
        match (self.mode, competing) {
            // "Once a competing flow is detected (c = 1), s_k will be
            // reduced to s_share."
            (Mode::Alone, true) => {
                self.mode = Mode::Sharing;
                self.s = self.s.min(c.s_share);
            }
            // "if rtt_k > rtt_{k−1} … decrease the send proportion by Δ− per
            // frame, down to a lower limit of s_min"; "if rtt_k decreases …
            // increase the send proportion by Δ+ per frame until … s_share".
            (Mode::Sharing, true) => match rtt_trend {
                Some(t) if t > 0.0 => self.s = (self.s - c.delta_down).max(c.s_min),
                Some(t) if t < 0.0 => self.s = (self.s + c.delta_up).min(c.s_share),
                _ => {}
            },
            // "As soon as the competing flow leaves the network (c = 0),
            // PIBES will further increase the send proportion by Δ per frame
            // up to s_max again."
            (Mode::Sharing, false) => {
                self.mode = Mode::Alone;
                self.s = (self.s + c.delta).min(c.s_max);
            }
            (Mode::Alone, false) => self.s = (self.s + c.delta).min(c.s_max),
        }
    }
}
