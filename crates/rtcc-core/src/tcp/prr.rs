//! Proportional Rate Reduction (RFC 6937) as Linux `tcp_cwnd_reduction`:
//! during fast recovery the window follows what the network delivers,
//! proportionally while pipe exceeds ssthresh, by the slow-start reduction
//! bound (PRR-SSRB) below it.

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Prr {
    /// RecoverFS as Linux takes it: cwnd on entering recovery (`prior_cwnd`;
    /// RFC 6937 uses pipe).
    prior_cwnd: u32,
    delivered: u32,
    out: u32,
}

impl Prr {
    /// Entering recovery (Linux `tcp_init_cwnd_reduction`).
    pub fn start(cwnd: u32) -> Self {
        Prr { prior_cwnd: cwnd, delivered: 0, out: 0 }
    }

    /// A segment sent during recovery.
    pub fn on_sent(&mut self) {
        self.out += 1;
    }

    /// The window after an ACK that delivered `delivered` segments, with
    /// `pipe` in flight after it; `None` leaves cwnd as it is.
    pub fn cwnd(
        &mut self,
        delivered: u32,
        newly_lost: u32,
        una_advanced: bool,
        pipe: u32,
        ssthresh: u32,
    ) -> Option<u32> {
        if delivered == 0 || self.prior_cwnd == 0 {
            return None;
        }
        self.delivered += delivered;
        let (pipe, ssthresh) = (pipe as i64, ssthresh as i64);
        let (prr_delivered, prr_out) = (self.delivered as i64, self.out as i64);
        let delta = ssthresh - pipe;
        let sndcnt = if delta < 0 {
            // RFC 6937 §3: sndcnt = CEIL(prr_delivered·ssthresh/RecoverFS) − prr_out.
            (ssthresh * prr_delivered + self.prior_cwnd as i64 - 1) / self.prior_cwnd as i64 - prr_out
        } else {
            // PRR-SSRB, plus one when snd_una moved and nothing new was
            // lost (Linux).
            let mut n = (prr_delivered - prr_out).max(delivered as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Force the fast retransmit on entering recovery.
        let sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        Some((pipe + sndcnt).clamp(1, u32::MAX as i64) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_prr_spreads_the_reduction_over_a_round() {
        // cwnd 20 → ssthresh 10: one loss, 19 still in flight after the
        // first duplicate ACK. Proportional part: ~1 sent per 2 delivered.
        let mut p = Prr::start(20);
        let mut pipe = 19;
        let mut sent = 0;
        for _ in 0..18 {
            pipe -= 1;
            let cwnd = p.cwnd(1, 0, false, pipe, 10).unwrap();
            while pipe < cwnd {
                pipe += 1;
                sent += 1;
                p.on_sent();
            }
        }
        // RFC 6937 §3: after delivering 18 of RecoverFS 20, prr_out = ceil(18·10/20) = 9.
        assert_eq!(sent, 9);
        // Below ssthresh, SSRB: at most one more than delivered per ACK.
        let mut p = Prr::start(20);
        assert_eq!(p.cwnd(2, 0, true, 4, 10), Some(4 + 3));
        assert_eq!(p.cwnd(1, 1, true, 4, 10), Some(4 + 3), "prr_delivered 3 − prr_out 0");
    }
}
