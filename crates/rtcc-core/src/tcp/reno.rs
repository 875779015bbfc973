//! Reno (RFC 5681) as Linux `net/ipv4/tcp_cong.c`: slow start counting
//! acknowledged segments (`tcp_slow_start`, RFC 3465 ABC with L unbounded
//! as Linux), additive increase of one segment per window acknowledged
//! (`tcp_cong_avoid_ai`), halving on loss (`tcp_reno_ssthresh`).

use super::cc::{AckSample, CongestionControl, Window};
use crate::units::Time;

/// Linux `tcp_slow_start`: cwnd grows by the segments acknowledged, up to
/// ssthresh; returns the acknowledged segments left over for congestion
/// avoidance.
pub fn slow_start(w: &mut Window, acked: u32) -> u32 {
    let cwnd = w.cwnd.saturating_add(acked).min(w.ssthresh);
    let used = cwnd.saturating_sub(w.cwnd);
    w.cwnd = w.cwnd.max(cwnd);
    acked - used.min(acked)
}

/// Linux `tcp_cong_avoid_ai`: one segment per `per` acknowledged; `cnt`
/// carries the count between ACKs (`snd_cwnd_cnt`).
pub fn cong_avoid_ai(w: &mut Window, cnt: &mut u32, per: u32, acked: u32) {
    let per = per.max(1);
    // A window that shrank since the last increase: start over.
    if *cnt >= per {
        *cnt = 0;
        w.cwnd += 1;
    }
    *cnt += acked;
    if *cnt >= per {
        let delta = *cnt / per;
        *cnt -= delta * per;
        w.cwnd += delta;
    }
}

/// Reno congestion control.
#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// Segments acknowledged toward the next increase (Linux `snd_cwnd_cnt`).
    cnt: u32,
}

impl Reno {
    pub fn new() -> Self {
        Reno::default()
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// Linux `tcp_reno_cong_avoid`.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        // Grow only when the window limited sending (RFC 7661 §4.3 idea,
        // Linux tcp_is_cwnd_limited).
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked;
        if w.cwnd < w.ssthresh {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        cong_avoid_ai(w, &mut self.cnt, w.cwnd, acked);
    }

    /// Linux `tcp_reno_ssthresh`: half the window, at least 2. RFC 5681 eq. 4
    /// halves FlightSize; the two agree while the window limits sending.
    fn ssthresh(&mut self, w: &Window, _now: Time) -> u32 {
        (w.cwnd >> 1).max(2)
    }

    fn on_rto(&mut self, _w: &mut Window, _now: Time) {
        self.cnt = 0;
    }

    fn state(&self, put: &mut dyn FnMut(&str, f64)) {
        put("cwnd_cnt", self.cnt as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_reno_slow_start_stops_at_ssthresh() {
        let mut w = Window { cwnd: 10, ssthresh: 14 };
        assert_eq!(slow_start(&mut w, 6), 2);
        assert_eq!(w.cwnd, 14);
    }

    #[test]
    fn tcp_reno_additive_increase_one_per_window() {
        let mut w = Window { cwnd: 10, ssthresh: 5 };
        let mut cnt = 0;
        for _ in 0..10 {
            let per = w.cwnd;
            cong_avoid_ai(&mut w, &mut cnt, per, 1);
        }
        assert_eq!(w.cwnd, 11);
        assert_eq!(cnt, 0);
        // Five ACKs of two segments each over an 11-segment window: no step yet.
        for _ in 0..5 {
            let per = w.cwnd;
            cong_avoid_ai(&mut w, &mut cnt, per, 2);
        }
        assert_eq!((w.cwnd, cnt), (11, 10));
    }

    #[test]
    fn tcp_reno_ssthresh_halves() {
        let mut r = Reno::new();
        assert_eq!(r.ssthresh(&Window { cwnd: 41, ssthresh: u32::MAX }, Time::ZERO), 20);
        assert_eq!(r.ssthresh(&Window { cwnd: 3, ssthresh: u32::MAX }, Time::ZERO), 2);
    }
}
