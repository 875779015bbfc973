//! CUBIC (RFC 9438) in segments, following Linux `net/ipv4/tcp_cubic.c`
//! (`bictcp_update`) where the RFC leaves a choice, with HyStart++ (RFC
//! 9406) in slow start. `whole_segments = true` makes the target and the
//! increase count whole segments, as Linux's (and ns-3's `TcpCubic::Update`):
//! near W_max the truncated target is W_max itself, so the window reaches the
//! plateau up to 1.36 s (C·t³ < 1) before K; the default keeps RFC 9438's
//! continuous curve, which the cross-traffic results were measured with.
//!
//! Linux runs classic HyStart (ACK-train length and a delay increase of
//! delay_min/8 clamped to 4–16 ms) and leaves slow start outright. This
//! implements HyStart++, the IETF's version: the same delay signal over
//! per-round minimum RTTs, no ACK-train test (ACK spacing depends on
//! delayed-ACK and scheduling details that a simulated path represents
//! only coarsely), and Conservative Slow Start rather than a hard exit, so
//! a spurious delay rise costs a few rounds of slower growth.

use super::cc::{AckSample, CongestionControl, Window};
use super::reno::slow_start;
use crate::units::{Duration, Time};

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: i64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u32 = 4;
const CSS_ROUNDS: u32 = 5;
/// Per-ACK slow-start increase cap without pacing (RFC 9406 §4.3 L = 8).
const L_UNPACED: u32 = 8;

/// CUBIC parameters (defaults: RFC 9438 §4 and Linux module parameters).
#[derive(Clone, Debug)]
pub struct CubicConfig {
    /// C in segments/s³ (RFC 9438 §5.1: 0.4; Linux `bic_scale` 41/1024·10).
    pub c: f64,
    /// Multiplicative decrease (RFC 9438 §4.6: 0.7; Linux `beta` 717/1024).
    pub beta: f64,
    /// RFC 9438 §4.7, Linux `fast_convergence` = 1.
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3, Linux `tcp_friendliness` = 1).
    pub tcp_friendliness: bool,
    /// HyStart++ in slow start (RFC 9406).
    pub hystart: bool,
    /// The target and the per-ACK increase in whole segments, as Linux
    /// `bictcp_update`: the curve's offset from W_max is truncated to whole
    /// segments (`delta = cube_rtt_scale·offs³ >> …`) and the window grows
    /// one segment per `cnt = cwnd / (target − cwnd)` acknowledged
    /// (`tcp_cong_avoid_ai`). Off: RFC 9438 §4.2's continuous curve, an
    /// increase of (target − cwnd)/cwnd per segment.
    pub whole_segments: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            whole_segments: false,
        }
    }
}

/// HyStart++ state (RFC 9406 §4.2).
#[derive(Clone, Debug, Default)]
struct HyStart {
    /// `delivered` at the start of the round; an ACK for a packet sent
    /// after it ends the round (RFC 9406 uses SND.NXT, the same boundary).
    round_start: u64,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
    /// In Conservative Slow Start, with its baseline and rounds so far.
    css_baseline: Option<Duration>,
    css_rounds: u32,
}

/// CUBIC congestion control.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// W_max (Linux `last_max_cwnd`), 0 before any loss.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch, its K and origin.
    epoch: Option<Time>,
    k: f64,
    origin: f64,
    /// Reno-friendly estimate (RFC 9438 §4.3 W_est).
    w_est: f64,
    /// Fractional window growth not yet applied.
    frac: f64,
    /// Segments acknowledged toward the next increase (Linux `snd_cwnd_cnt`).
    ack_cnt: u32,
    hy: HyStart,
    /// Still in the initial slow start (ssthresh at its initial, infinite
    /// value): the only one HyStart++ runs in (RFC 9406 §4.2).
    initial_slow_start: bool,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        Cubic {
            cfg,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            origin: 0.0,
            w_est: 0.0,
            frac: 0.0,
            ack_cnt: 0,
            hy: HyStart::default(),
            initial_slow_start: true,
        }
    }

    /// W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 eq. 1), t in seconds
    /// from the epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.origin
    }
    /// K (RFC 9438 eq. 2) of the current epoch, seconds.
    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    pub fn in_css(&self) -> bool {
        self.hy.css_baseline.is_some()
    }

    fn grow(&mut self, w: &mut Window, inc: f64) {
        self.frac += inc;
        if self.frac >= 1.0 {
            let whole = self.frac.floor();
            self.frac -= whole;
            w.cwnd = w.cwnd.saturating_add(whole as u32);
        }
    }

    /// RFC 9406 §4.2 round tracking and the delay test; true when slow
    /// start ends (CSS ran its rounds).
    fn hystart(&mut self, w: &mut Window, ack: &AckSample) -> bool {
        let hy = &mut self.hy;
        let mut leave = false;
        if ack.rate.delivered > 0 && ack.rate.prior_delivered >= hy.round_start {
            hy.round_start = ack.rate.delivered_total;
            hy.last_round_min = hy.current_round_min;
            hy.current_round_min = None;
            hy.samples = 0;
            if hy.css_baseline.is_some() {
                hy.css_rounds += 1;
                leave = hy.css_rounds >= CSS_ROUNDS;
            }
        }
        if let Some(r) = ack.rtt {
            hy.current_round_min = Some(hy.current_round_min.map_or(r, |m| m.min(r)));
            hy.samples += 1;
        }
        if let (true, Some(cur), Some(last)) = (hy.samples >= N_RTT_SAMPLE, hy.current_round_min, hy.last_round_min) {
            match hy.css_baseline {
                None => {
                    let thresh = (last / MIN_RTT_DIVISOR).max(MIN_RTT_THRESH).min(MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        hy.css_baseline = Some(cur);
                        hy.css_rounds = 0;
                    }
                }
                // The delay rise was spurious: back to slow start.
                Some(base) if cur < base => hy.css_baseline = None,
                Some(_) => {}
            }
        }
        if leave {
            // RFC 9406 §4.2: enter congestion avoidance at the current window.
            w.ssthresh = w.cwnd;
            hy.css_baseline = None;
            self.initial_slow_start = false;
        }
        leave
    }

    /// Congestion avoidance (RFC 9438 §4.2–4.4 as Linux `bictcp_update`).
    fn avoid(&mut self, w: &mut Window, ack: &AckSample, acked: u32) {
        let cwnd = w.cwnd as f64;
        let epoch = *self.epoch.get_or_insert_with(|| {
            // RFC 9438 §4.2 eq. 2; a window above W_max starts at the inflection.
            if cwnd < self.w_max {
                self.k = ((self.w_max - cwnd) / self.cfg.c).cbrt();
                self.origin = self.w_max;
            } else {
                self.k = 0.0;
                self.origin = cwnd;
            }
            self.w_est = cwnd;
            ack.now
        });
        // Aim one RTT ahead; Linux uses the minimum RTT (delay_min), RFC
        // 9438 §4.2 the smoothed one.
        let rtt = ack.min_rtt.or(ack.srtt).unwrap_or(Duration::ZERO);
        let t = (ack.now - epoch + rtt).as_secs_f64();
        if self.cfg.whole_segments {
            self.avoid_linux(w, t, acked);
            return;
        }
        // RFC 9438 §4.2: the target stays within [cwnd, 1.5·cwnd].
        let target = self.w_cubic(t).clamp(cwnd, 1.5 * cwnd);
        let mut per_seg = if target > cwnd {
            (target - cwnd) / cwnd
        } else {
            // Linux: cnt = 100·cwnd, a crawl at the plateau.
            0.01 / cwnd
        };
        if self.w_max == 0.0 {
            // Linux: no loss yet, at least 1 segment per 20 ACKed.
            per_seg = per_seg.max(0.05);
        }
        if self.cfg.tcp_friendliness {
            // RFC 9438 §4.3: W_est grows by α·acked/cwnd, α = 3(1−β)/(1+β).
            let beta = self.cfg.beta;
            let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
            self.w_est += alpha * acked as f64 / cwnd;
            if self.w_est > cwnd {
                per_seg = per_seg.max((self.w_est - cwnd) / cwnd);
            }
        }
        // Linux: at most one segment per two acknowledged.
        per_seg = per_seg.min(0.5);
        self.grow(w, per_seg * acked as f64);
    }
}

impl Cubic {
    /// Linux `bictcp_update` → `tcp_cong_avoid_ai`, in whole segments (the
    /// `ca->last_time` cache, one update per jiffy or HZ/32 when cwnd is
    /// unchanged, is left out: it only delays a recount by up to 31 ms).
    fn avoid_linux(&mut self, w: &mut Window, t: f64, acked: u32) {
        let cwnd = w.cwnd;
        // delta = (cube_rtt_scale·offs³) >> (10 + 3·BICTCP_HZ): whole segments.
        let delta = (self.cfg.c * (t - self.k).abs().powi(3)).floor();
        let origin = self.origin.floor();
        let target = if t < self.k { (origin - delta).max(0.0) } else { origin + delta };
        let target = target.min(u32::MAX as f64) as u32;
        let mut cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.saturating_mul(100) };
        if self.w_max == 0.0 {
            // No loss yet: at least 5 % per RTT (Linux: cnt ≤ 20).
            cnt = cnt.min(20);
        }
        if self.cfg.tcp_friendliness {
            // RFC 9438 §4.3 / Linux `tcp_cwnd`: W_est in whole segments.
            let beta = self.cfg.beta;
            self.w_est += 3.0 * (1.0 - beta) / (1.0 + beta) * acked as f64 / cwnd as f64;
            let est = self.w_est.floor() as u32;
            if est > cwnd {
                cnt = cnt.min(cwnd / (est - cwnd));
            }
        }
        // At most one segment per two acknowledged (Linux: cnt ≥ 2).
        super::reno::cong_avoid_ai(w, &mut self.ack_cnt, cnt.max(2), acked);
    }
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicConfig::default())
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// Linux `cubictcp_cong_avoid`.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.cwnd_limited || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if w.cwnd < w.ssthresh {
            // RFC 9406 §4.2: HyStart++ only in the initial slow start (a
            // SHOULD); later slow starts (after an RTO) stop at the ssthresh
            // the loss set. Linux's classic HyStart differs: it runs in any
            // slow start once cwnd >= hystart_low_window (16) and resets on
            // TCP_CA_Loss (`cubictcp_acked`, `cubictcp_state`).
            if self.cfg.hystart && self.initial_slow_start {
                acked = acked.min(L_UNPACED);
                if !self.hystart(w, ack) && self.in_css() {
                    // RFC 9406 §4.2: CSS grows by acked / CSS_GROWTH_DIVISOR.
                    self.grow(w, acked as f64 / CSS_GROWTH_DIVISOR as f64);
                    return;
                }
            }
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        self.avoid(w, ack, acked);
    }

    /// RFC 9438 §4.6–4.7 (Linux `cubictcp_recalc_ssthresh`).
    fn ssthresh(&mut self, w: &Window, _now: Time) -> u32 {
        let cwnd = w.cwnd as f64;
        self.epoch = None;
        self.frac = 0.0;
        self.ack_cnt = 0;
        self.hy.css_baseline = None;
        self.initial_slow_start = false;
        // Fast convergence: below the last maximum, release more.
        self.w_max =
            if self.cfg.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.cfg.beta) / 2.0 } else { cwnd };
        if self.cfg.whole_segments {
            // Linux `last_max_cwnd` is a whole number of segments.
            self.w_max = self.w_max.floor();
        }
        ((cwnd * self.cfg.beta) as u32).max(2)
    }

    /// Linux `bictcp_state(TCP_CA_Loss)`: forget W_max and the epoch.
    fn on_rto(&mut self, _w: &mut Window, _now: Time) {
        self.w_max = 0.0;
        self.epoch = None;
        self.frac = 0.0;
        self.ack_cnt = 0;
        self.hy = HyStart::default();
        self.initial_slow_start = false;
    }

    /// A new epoch after an idle restart, so the curve does not run on
    /// through time nothing was sent (Linux shifts `epoch_start` by the
    /// idle time instead; with the window already cut to the restart
    /// window a fresh epoch is the closer fit).
    fn on_idle_restart(&mut self, _w: &mut Window, _now: Time) {
        self.epoch = None;
    }

    /// Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`, RFC 9438 §5.8: after
    /// an application-limited pause the epoch moves forward by the idle
    /// time (never past now), so the curve does not run on through time
    /// nothing was sent.
    fn on_tx_start(&mut self, _w: &mut Window, now: Time, idle: Duration, _app_limited: bool) {
        if let Some(e) = self.epoch.as_mut() {
            if idle.is_positive() {
                *e = (*e + idle).min(now);
            }
        }
    }

    fn state(&self, put: &mut dyn FnMut(&str, f64)) {
        put("w_max", self.w_max);
        put("k", self.k);
        put("w_est", self.w_est);
        put("css", self.in_css() as u8 as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::RateSample;

    #[test]
    fn tcp_cubic_decrease_and_fast_convergence() {
        let mut c = Cubic::default();
        let w = Window { cwnd: 100, ssthresh: u32::MAX };
        // RFC 9438 §4.6: ssthresh = β·cwnd; W_max = cwnd on the first loss.
        assert_eq!(c.ssthresh(&w, Time::ZERO), 70);
        assert_eq!(c.w_max(), 100.0);
        // §4.7: a loss below W_max sets W_max = cwnd·(1 + β)/2.
        assert_eq!(c.ssthresh(&Window { cwnd: 80, ssthresh: 70 }, Time::ZERO), 56);
        assert!((c.w_max() - 68.0).abs() < 1e-9);
        let mut slow = Cubic::new(CubicConfig { fast_convergence: false, ..CubicConfig::default() });
        slow.ssthresh(&w, Time::ZERO);
        slow.ssthresh(&Window { cwnd: 80, ssthresh: 70 }, Time::ZERO);
        assert_eq!(slow.w_max(), 80.0);
    }

    #[test]
    fn tcp_cubic_k_and_curve() {
        let mut c = Cubic::new(CubicConfig { hystart: false, ..CubicConfig::default() });
        let mut w = Window { cwnd: 100, ssthresh: u32::MAX };
        w.ssthresh = c.ssthresh(&w, Time::ZERO);
        w.cwnd = w.ssthresh;
        let ack = AckSample {
            now: Time::from_secs_f64(1.0),
            acked: 1,
            lost: 0,
            prior_in_flight: 70,
            in_flight: 70,
            rtt: None,
            srtt: None,
            min_rtt: None,
            rate: Default::default(),
            in_recovery: false,
            cwnd_limited: true,
            segment: crate::units::DataSize::from_bytes(1500),
        };
        c.on_ack(&mut w, &ack);
        // RFC 9438 eq. 2: K = cbrt((100 − 70) / 0.4) = 4.217 s.
        assert!((c.k() - 75f64.cbrt()).abs() < 1e-9);
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k() + 2.0) - 103.2).abs() < 1e-9);
    }

    /// Slow-start rounds of one ACK per segment whose RTT rises 10 ms per
    /// round (a queue building); whether Conservative Slow Start began.
    fn rising_delay_rounds(c: &mut Cubic, w: &mut Window, rounds: u32) -> bool {
        let mut delivered = 0u64;
        let mut css = false;
        for r in 0..rounds {
            let start = delivered;
            for _ in 0..w.cwnd {
                delivered += 1;
                let rtt = Duration::from_millis(40 + 10 * r as i64);
                let ack = AckSample {
                    now: Time::from_millis(100 * r as i64),
                    acked: 1,
                    lost: 0,
                    prior_in_flight: w.cwnd,
                    in_flight: w.cwnd,
                    rtt: Some(rtt),
                    srtt: Some(rtt),
                    min_rtt: Some(Duration::from_millis(40)),
                    rate: RateSample {
                        delivered: 1,
                        interval: rtt,
                        prior_delivered: start,
                        delivered_total: delivered,
                        is_app_limited: false,
                    },
                    in_recovery: false,
                    cwnd_limited: true,
                    segment: crate::units::DataSize::from_bytes(1500),
                };
                c.on_ack(w, &ack);
                css |= c.in_css();
            }
        }
        css
    }

    #[test]
    fn tcp_cubic_idle_shifts_the_epoch() {
        // After a loss at W_max 100 (cwnd 70, K = 4.2 s), ten rounds of a
        // window of ACKs 40 ms apart, each followed by 100 ms of idle
        // (below the RTO): with the epoch shifted by each pause (Linux
        // CA_EVENT_TX_START, RFC 9438 §5.8) the window follows the curve
        // in sending time, as a twin that never paused.
        let run = |pause: bool| {
            let mut c = Cubic::new(CubicConfig { hystart: false, ..CubicConfig::default() });
            let mut w = Window { cwnd: 100, ssthresh: u32::MAX };
            w.ssthresh = c.ssthresh(&w, Time::ZERO);
            w.cwnd = w.ssthresh;
            let mut now = Time::from_secs_f64(1.0);
            for _ in 0..10 {
                let n = w.cwnd;
                for i in 0..n {
                    let ack = AckSample {
                        now: now + Duration::from_millis(40) * i as i64 / n as i64,
                        acked: 1,
                        lost: 0,
                        prior_in_flight: n,
                        in_flight: n,
                        rtt: Some(Duration::from_millis(40)),
                        srtt: Some(Duration::from_millis(40)),
                        min_rtt: Some(Duration::from_millis(40)),
                        rate: RateSample::default(),
                        in_recovery: false,
                        cwnd_limited: true,
                        segment: crate::units::DataSize::from_bytes(1500),
                    };
                    c.on_ack(&mut w, &ack);
                }
                now += Duration::from_millis(40);
                if pause {
                    // The last send was at the end of the round.
                    now += Duration::from_millis(100);
                    c.on_tx_start(&mut w, now, Duration::from_millis(100), true);
                }
            }
            w.cwnd
        };
        let (busy, paused) = (run(false), run(true));
        eprintln!("cubic after 10 rounds: {busy} without pauses, {paused} with 10 × 100 ms idle");
        assert_eq!(busy, paused);
    }

    /// The window after a loss at cwnd 100 (W_max 100, ssthresh 70, K =
    /// 4.22 s) and rounds of full-window ACKs 40 ms apart until `until`
    /// seconds after the epoch began.
    fn window_after_loss(whole_segments: bool, until: f64) -> u32 {
        // Without the Reno-friendly region: at a 40 ms RTT its W_est (0.53
        // segments per RTT from 70) passes W_max at 3 s and would hide the curve.
        let mut c = Cubic::new(CubicConfig {
            hystart: false,
            tcp_friendliness: false,
            whole_segments,
            ..CubicConfig::default()
        });
        let mut w = Window { cwnd: 100, ssthresh: u32::MAX };
        w.ssthresh = c.ssthresh(&w, Time::ZERO);
        w.cwnd = w.ssthresh;
        let rtt = Duration::from_millis(40);
        let mut now = Time::from_secs_f64(1.0);
        while now < Time::from_secs_f64(1.0 + until) {
            let n = w.cwnd;
            for i in 0..n {
                let ack = AckSample {
                    now: now + rtt * i as i64 / n as i64,
                    acked: 1,
                    lost: 0,
                    prior_in_flight: n,
                    in_flight: n,
                    rtt: Some(rtt),
                    srtt: Some(rtt),
                    min_rtt: Some(rtt),
                    rate: RateSample::default(),
                    in_recovery: false,
                    cwnd_limited: true,
                    segment: crate::units::DataSize::from_bytes(1500),
                };
                c.on_ack(&mut w, &ack);
            }
            now += rtt;
        }
        w.cwnd
    }

    #[test]
    fn tcp_cubic_whole_segment_target_reaches_w_max_before_k() {
        // Linux bictcp_update truncates C·(K − t)³ to whole segments, so the
        // target is W_max once that is under one segment (K − t < 1.36 s)
        // and cnt = cwnd/(target − cwnd) closes the gap within rounds; RFC
        // 9438's continuous target is still 0.4·1.3³ = 0.88 below W_max at
        // K − 1.3 s, where the window grows by (target − cwnd)/cwnd (it gets
        // to 100 at K − 1.2 s).
        let k = 75f64.cbrt();
        let linux = window_after_loss(true, k - 1.3);
        let rfc = window_after_loss(false, k - 1.3);
        eprintln!("cwnd at K − 1.3 s: {linux} whole segments, {rfc} continuous");
        assert_eq!(linux, 100);
        assert!(rfc < 100, "{rfc}");
        // Far from K both follow the curve: W(1 s) = 100 − 0.4·3.22³ = 86.7.
        for whole in [true, false] {
            let w = window_after_loss(whole, 1.0 - 0.04) as f64;
            assert!((w - 86.7).abs() <= 1.5, "whole_segments {whole}: {w}");
        }
    }

    #[test]
    fn tcp_cubic_hystart_only_in_the_initial_slow_start() {
        // The initial slow start: the delay rise starts CSS.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 10, ssthresh: u32::MAX };
        assert!(rising_delay_rounds(&mut c, &mut w, 4), "{w:?}");
        // After an RTO (RFC 9406 §4.2): plain slow start, up to ssthresh.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 400, ssthresh: u32::MAX };
        w.ssthresh = c.ssthresh(&w, Time::ZERO);
        c.on_rto(&mut w, Time::ZERO);
        w.cwnd = 10;
        assert!(!rising_delay_rounds(&mut c, &mut w, 4), "{w:?}");
        assert_eq!(w.cwnd, 160, "doubling per round");
    }
}
