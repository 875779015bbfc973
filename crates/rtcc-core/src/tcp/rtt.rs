//! RTT estimation and the retransmission timeout: RFC 6298 §2 smoothing,
//! the RTO as Linux `tcp_set_rto`, exponential backoff (RFC 6298 §5.5).

use crate::units::Duration;

#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// Lowest sample seen (Linux keeps a 5-minute windowed minimum,
    /// `tcp_min_rtt_wlen` = 300 s; a run here is shorter).
    min_rtt: Option<Duration>,
    /// RTO before backoff.
    base: Duration,
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            base: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The current RTO, backoff included, at most `max_rto` (RFC 6298 §5.5).
    pub fn rto(&self) -> Duration {
        let mut r = self.base.min(self.max_rto);
        for _ in 0..self.backoff.min(32) {
            r = (r * 2).min(self.max_rto);
        }
        r
    }

    /// The timer fired: double the RTO (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff += 1;
    }

    /// RFC 6298 §2.2–2.3 for srtt/rttvar; the RTO as Linux `tcp_set_rto`:
    /// srtt + max(4·rttvar, TCP_RTO_MIN), so the floor bounds the variance
    /// term, not the whole RTO (RFC 6298 §2.4 would floor srtt + 4·rttvar).
    pub fn sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let err = if s > r { s - r } else { r - s };
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((s * 7 + r) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        let srtt = self.srtt.unwrap_or(r);
        self.base = (srtt + (self.rttvar * 4).max(self.min_rto)).min(self.max_rto);
        // RFC 6298 §5.7: a fresh sample ends the backoff.
        self.backoff = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: i64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn tcp_rto_follows_rfc6298_with_linux_floor() {
        let mut e = RttEstimator::new(ms(1000), ms(200), Duration::from_secs(120));
        assert_eq!(e.rto(), ms(1000));
        e.sample(ms(100));
        // srtt 100, rttvar 50: 4·rttvar = 200 ≥ floor → 300 ms.
        assert_eq!((e.srtt(), e.rto()), (Some(ms(100)), ms(300)));
        for _ in 0..50 {
            e.sample(ms(100));
        }
        // rttvar decays to ~0: the floor holds the RTO at srtt + 200 ms.
        assert_eq!(e.rto(), ms(300));
        e.sample(ms(20));
        assert_eq!((e.srtt(), e.min_rtt()), (Some(ms(90)), Some(ms(20))));
        assert_eq!(e.rto(), ms(290));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), ms(1160));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(120));
        e.sample(ms(90));
        assert_eq!(e.rto(), ms(290));
    }
}
