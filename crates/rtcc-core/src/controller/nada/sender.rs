//! NADA's sender side (RFC 8698 §4.3, §5.2.2): the reference rate r_ref from
//! each report {rmode, x_curr, r_recv}, clipped to [RMIN, RMAX], and the
//! rate-shaping buffer's coupling of the encoder target r_vin and the sending
//! rate r_send to r_ref. Delays in milliseconds and rates in bits per second,
//! as the RFC writes its equations.

use super::NadaConfig;
use crate::units::{Duration, Time};

/// What the receiver side hands the sender every DELTA (RFC 8698 §4.2,
/// §5.3): the mode, the aggregate congestion signal and the receive rate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Report {
    /// 0 = accelerated ramp-up, 1 = gradual update.
    pub rmode: u8,
    /// Aggregate congestion signal, ms (eq. 2).
    pub x_curr: f64,
    /// Receive rate over LOGWIN, bit/s (§5.1.3).
    pub r_recv: f64,
}

/// The sender's state (§4.3 "on initialization"): r_ref, x_prev, t_last.
#[derive(Clone, Debug)]
pub(super) struct Rate {
    /// Reference rate, bit/s.
    pub r_ref: f64,
    /// Aggregate congestion signal of the previous report, ms.
    pub x_prev: f64,
    /// When the previous report was acted on; `None` before the first.
    pub t_last: Option<Time>,
}

impl Rate {
    /// r_ref starts at `start` bit/s (the RFC starts at RMIN; see `NadaConfig::start_rate`).
    pub fn new(start: f64) -> Rate {
        Rate { r_ref: start, x_prev: 0.0, t_last: None }
    }

    /// One report at `now` (§4.3 "on receiving feedback report"), with the
    /// sender's RTT estimate. `hold` keeps r_ref as it is (NADAR's ProbeRTT)
    /// while x_prev and t_last still advance.
    pub fn on_report(&mut self, cfg: &NadaConfig, now: Time, report: &Report, rtt: Duration, hold: bool) {
        // delta = t_curr − t_last, the observed interval; a stalled feedback
        // loop would make one eq. 7 step arbitrarily large, so it is clamped
        // (ALGORITHMS.md §4.6).
        let delta = self.t_last.map_or(cfg.delta, |t| now.saturating_since(t)).min(cfg.delta_max);
        if !hold {
            self.r_ref = if report.rmode == 0 {
                ramp_up(self.r_ref, report.r_recv, gamma(cfg, ms(rtt)))
            } else {
                gradual(cfg, self.r_ref, report.x_curr, self.x_prev, ms(delta))
            };
            // Eqs. 8–9.
            self.r_ref = clip(cfg, self.r_ref);
        }
        self.x_prev = report.x_curr;
        self.t_last = Some(now);
    }
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_millis_f64()
}

/// Eqs. 8–9: r_ref within [RMIN, RMAX].
pub(super) fn clip(cfg: &NadaConfig, r: f64) -> f64 {
    r.clamp(cfg.rmin.bps() as f64, cfg.rmax.bps() as f64)
}

/// Eq. 3: gamma = min(GAMMA_MAX, QBOUND / (rtt + DELTA + DFILT)).
pub(super) fn gamma(cfg: &NadaConfig, rtt_ms: f64) -> f64 {
    let denom = rtt_ms + ms(cfg.delta) + ms(cfg.dfilt);
    if denom <= 0.0 {
        return cfg.gamma_max;
    }
    (ms(cfg.qbound) / denom).min(cfg.gamma_max)
}

/// Eq. 4: r_ref = max(r_ref, (1 + gamma)·r_recv).
pub(super) fn ramp_up(r_ref: f64, r_recv: f64, gamma: f64) -> f64 {
    r_ref.max((1.0 + gamma) * r_recv)
}

/// Eqs. 5–7: x_offset = x_curr − PRIO·XREF·RMAX/r_ref; x_diff = x_curr − x_prev;
/// r_ref −= KAPPA·(delta/TAU)·(x_offset/TAU)·r_ref + KAPPA·ETA·(x_diff/TAU)·r_ref.
pub(super) fn gradual(cfg: &NadaConfig, r_ref: f64, x_curr: f64, x_prev: f64, delta_ms: f64) -> f64 {
    let tau = ms(cfg.tau);
    let x_offset = x_curr - equilibrium(cfg, r_ref);
    let x_diff = x_curr - x_prev;
    r_ref - cfg.kappa * (delta_ms / tau) * (x_offset / tau) * r_ref - cfg.kappa * cfg.eta * (x_diff / tau) * r_ref
}

/// The congestion signal at which eq. 7 holds r_ref still: PRIO·XREF·RMAX/r_ref, ms (§4.3).
pub(super) fn equilibrium(cfg: &NadaConfig, r_ref: f64) -> f64 {
    cfg.prio * ms(cfg.xref) * cfg.rmax.bps() as f64 / r_ref.max(1.0)
}

/// Eqs. 11–14: the encoder target r_vin and the sending rate r_send, each
/// moved from r_ref by BETA·8·buffer_len·FPS but by at most 5 % of r_ref,
/// and kept within [RMIN, RMAX]. `buffer_len` in bytes; rates in bit/s.
pub(super) fn shape(cfg: &NadaConfig, r_ref: f64, buffer_len: f64) -> (f64, f64) {
    let drain = 8.0 * buffer_len * cfg.fps;
    let r_diff_v = (0.05 * r_ref).min(cfg.beta_v * drain);
    let r_diff_s = (0.05 * r_ref).min(cfg.beta_s * drain);
    let r_vin = (r_ref - r_diff_v).max(cfg.rmin.bps() as f64);
    let r_send = (r_ref + r_diff_s).min(cfg.rmax.bps() as f64);
    (r_vin, r_send)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::DataRate;

    /// RFC 8698 Figure 3 defaults, with its RMIN/RMAX (150 kbps, 1.5 Mbps).
    fn rfc() -> NadaConfig {
        NadaConfig { rmin: DataRate::from_kbps(150), rmax: DataRate::from_kbps(1500), ..NadaConfig::DEFAULT }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Eq. 3: QBOUND/(rtt + DELTA + DFILT) = 50/(50 + 100 + 120) = 0.185185
    /// at a 50 ms RTT; 50/220 = 0.227273 at none; GAMMA_MAX binds only when
    /// the denominator is under 100 ms, e.g. with DFILT = 0 and DELTA = 20 ms.
    #[test]
    fn ramp_up_gamma_follows_eq_3() {
        let c = rfc();
        assert!(close(gamma(&c, 50.0), 50.0 / 270.0), "{}", gamma(&c, 50.0));
        assert!(close(gamma(&c, 0.0), 50.0 / 220.0));
        let short = NadaConfig { dfilt: Duration::ZERO, delta: Duration::from_millis(20), ..rfc() };
        assert_eq!(gamma(&short, 30.0), 0.5, "50/50 = 1 capped at GAMMA_MAX");
    }

    /// Eq. 4 at a 50 ms RTT: r_recv = 1 Mbps gives (1 + 0.185185)·1 Mbps =
    /// 1.185185 Mbps; r_ref never falls in ramp-up (r_recv = 500 kbps leaves
    /// 800 kbps as it is).
    #[test]
    fn ramp_up_scales_the_receive_rate() {
        let g = gamma(&rfc(), 50.0);
        assert!(close(ramp_up(800e3, 1e6, g), 1e6 * (1.0 + 50.0 / 270.0)));
        assert_eq!(ramp_up(800e3, 500e3, g), 800e3);
        // Through the report path: rtt 50 ms, rmode 0.
        let mut r = Rate::new(800e3);
        let report = Report { rmode: 0, x_curr: 3.0, r_recv: 1e6 };
        r.on_report(&rfc(), Time::from_millis(100), &report, Duration::from_millis(50), false);
        assert!(close(r.r_ref, 1_185_185.185_185_185), "{}", r.r_ref);
        assert_eq!((r.x_prev, r.t_last), (3.0, Some(Time::from_millis(100))));
    }

    /// Eqs. 5–7, one step: r_ref = 1 Mbps, RMAX = 1.5 Mbps, so the
    /// equilibrium is 10·1.5/1 = 15 ms; x_curr = 20 ms, x_prev = 10 ms,
    /// delta = 100 ms: x_offset = 5, x_diff = 10;
    /// r_ref = 1e6 − 0.5·(100/500)·(5/500)·1e6 − 0.5·2·(10/500)·1e6
    ///       = 1e6 − 1 000 − 20 000 = 979 000 bit/s.
    #[test]
    fn gradual_update_one_step() {
        let c = rfc();
        assert!(close(equilibrium(&c, 1e6), 15.0));
        assert!(close(gradual(&c, 1e6, 20.0, 10.0, 100.0), 979_000.0));
        // Below the equilibrium with a falling signal: x_offset = −5,
        // x_diff = −10: +1 000 + 20 000.
        assert!(close(gradual(&c, 1e6, 10.0, 20.0, 100.0), 1_021_000.0));
        // The same step through the report path, at a 100 ms interval.
        let mut r = Rate { r_ref: 1e6, x_prev: 10.0, t_last: Some(Time::from_millis(1000)) };
        let report = Report { rmode: 1, x_curr: 20.0, r_recv: 2e6 };
        r.on_report(&c, Time::from_millis(1100), &report, Duration::from_millis(50), false);
        assert!(close(r.r_ref, 979_000.0), "{}", r.r_ref);
    }

    /// At x_curr = PRIO·XREF·RMAX/r_ref with x_prev = x_curr the update is
    /// nil, whatever delta (§4.3's equilibrium).
    #[test]
    fn equilibrium_signal_holds_the_rate() {
        let c = rfc();
        for r_ref in [200e3, 750e3, 1.5e6] {
            let x = 10.0 * 1.5e6 / r_ref;
            for delta in [50.0, 100.0, 400.0] {
                assert!(close(gradual(&c, r_ref, x, x, delta), r_ref), "r_ref {r_ref}, delta {delta}");
            }
        }
        // PRIO scales it: PRIO = 2 holds 1 Mbps at 30 ms.
        let p2 = NadaConfig { prio: 2.0, ..c };
        assert!(close(gradual(&p2, 1e6, 30.0, 30.0, 100.0), 1e6));
    }

    /// The observed interval is clamped at `delta_max` (500 ms): a 2 s gap
    /// acts as 500 ms, x_offset = 5: −0.5·1·0.01·1e6 = −5 000.
    #[test]
    fn a_stalled_feedback_interval_is_clamped() {
        let c = rfc();
        let mut r = Rate { r_ref: 1e6, x_prev: 20.0, t_last: Some(Time::from_millis(1000)) };
        let report = Report { rmode: 1, x_curr: 20.0, r_recv: 1e6 };
        r.on_report(&c, Time::from_millis(3000), &report, Duration::ZERO, false);
        assert!(close(r.r_ref, 995_000.0), "{}", r.r_ref);
        // Held (ProbeRTT): r_ref stays, x_prev and t_last move on.
        let report = Report { rmode: 1, x_curr: 90.0, r_recv: 1e6 };
        r.on_report(&c, Time::from_millis(3100), &report, Duration::ZERO, true);
        assert_eq!((r.r_ref, r.x_prev, r.t_last), (995_000.0, 90.0, Some(Time::from_millis(3100))));
    }

    /// Eqs. 8–9: a step that would leave [RMIN, RMAX] is clipped.
    #[test]
    fn reference_rate_is_clipped() {
        let c = rfc();
        let mut r = Rate { r_ref: 1.4e6, x_prev: 0.0, t_last: Some(Time::ZERO) };
        let up = Report { rmode: 0, x_curr: 0.0, r_recv: 1.4e6 };
        r.on_report(&c, Time::from_millis(100), &up, Duration::ZERO, false);
        assert_eq!(r.r_ref, 1.5e6);
        // x_diff = 500 ms: the derivative term alone is −0.5·2·(500/500)·r_ref,
        // so r_ref would fall below zero; it is clipped at RMIN.
        let down = Report { rmode: 1, x_curr: 500.0, r_recv: 0.0 };
        r.on_report(&c, Time::from_millis(200), &down, Duration::ZERO, false);
        assert_eq!(r.r_ref, 150e3);
    }

    /// Eqs. 11–14 with the RFC's worked number (§5.2.2): a 2 000 B buffer at
    /// BETA = 0.1 and FPS = 30 moves each rate by 0.1·8·2000·30 = 48 kbps;
    /// a 20 000 B buffer (480 kbps) by the 5 % cap; RMIN and RMAX bound both.
    #[test]
    fn buffer_couples_the_encoder_and_sending_rates() {
        let c = rfc();
        assert_eq!(shape(&c, 1e6, 0.0), (1e6, 1e6));
        let (v, s) = shape(&c, 1e6, 2000.0);
        assert!(close(v, 952e3) && close(s, 1048e3), "{v} {s}");
        let (v, s) = shape(&c, 1e6, 20_000.0);
        assert!(close(v, 950e3) && close(s, 1050e3), "{v} {s}");
        assert_eq!(shape(&c, 1.5e6, 20_000.0), (1.425e6, 1.5e6), "r_send ≤ RMAX");
        assert_eq!(shape(&c, 150e3, 20_000.0), (150e3, 157.5e3), "r_vin ≥ RMIN");
        // BETA_V and BETA_S act separately.
        let only_s = NadaConfig { beta_v: 0.0, ..c };
        assert_eq!(shape(&only_s, 1e6, 2000.0).0, 1e6);
    }
}
