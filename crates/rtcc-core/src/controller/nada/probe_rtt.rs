//! NADAR's ProbeRTT (cross.txt §VI-A): "When the minimum delay d_base is not
//! sampled again within 10 seconds, NADAR enters ProbeRTT and cuts its rate
//! by half. Then, NADAR resamples a new value for d_base."
//!
//! The paper gives no more than that; the rest follows BBR v1's PROBE_RTT,
//! which the paper's ProbeRTT is named after (cross.txt §II, Linux
//! `bbr_update_min_rtt`):
//! - "sampled again" = a one-way delay at or below d_base (Linux takes only
//!   a strictly lower RTT, so BBR probes every 10 s whatever the queue; the
//!   paper's "sampled again" reads as the same minimum seen again); expiry
//!   is strict (`after(now, stamp + window)`). A one-way delay includes the
//!   packet's serialisation at the bottleneck, so a minimum set by small
//!   packets may not recur once packets grow: ProbeRTT then re-samples it.
//! - ProbeRTT lasts until a packet sent `duration` (200 ms, BBR v1
//!   `bbr_probe_rtt_mode_ms`) after it began has been reported, so the
//!   halved rate had that long to drain the bottleneck (a queue of q drains
//!   in 2q at half the link rate: 200 ms covers q ≤ 100 ms, NADA's
//!   equilibrium for RMAX up to 10× the link rate) and its delays were seen.
//! - d_base becomes the minimum one-way delay of the packets sent during
//!   ProbeRTT, even if larger than the old one: that is the re-sampling that
//!   lets a flow drop a base delay measured before a route change or, for a
//!   late comer, one that included another flow's queue.
//! - r_ref is held at the halved value during ProbeRTT (BBR holds its
//!   window) and is not restored after it: NADA's accelerated ramp-up
//!   (rmode 0 once the queue is gone) brings it back.

use super::receiver::Signal;
use crate::units::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeRttConfig {
    /// Time without a new d_base sample before ProbeRTT (cross.txt §VI-A: 10 s).
    pub interval: Duration,
    /// Send time ProbeRTT lasts (BBR v1: 200 ms).
    pub duration: Duration,
    /// Window of the standing one-way delay; `None` = srtt/2 (Copa).
    pub standing_window: Option<Duration>,
    /// EWMA gain of srtt (RFC 9002 §5.3: 1/8, the srtt whose half is mvfst
    /// Copa's standing window).
    pub srtt_gain: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Transition {
    /// Halve r_ref and hold it.
    Enter,
    /// d_base re-sampled; NADA's updates resume.
    Exit,
}

#[derive(Clone, Debug)]
pub(super) struct ProbeRtt {
    cfg: ProbeRttConfig,
    /// Sender clock when the current ProbeRTT began.
    since: Option<Time>,
    /// ProbeRTTs entered so far.
    pub count: u32,
}

impl ProbeRtt {
    pub fn new(cfg: ProbeRttConfig) -> ProbeRtt {
        ProbeRtt { cfg, since: None, count: 0 }
    }

    pub fn probing(&self) -> bool {
        self.since.is_some()
    }

    /// After a report's packets reached `signal`, at `now` (sender clock).
    pub fn on_feedback(&mut self, now: Time, signal: &mut Signal) -> Option<Transition> {
        match self.since {
            None => {
                let stamp = signal.base_stamp()?;
                if now.saturating_since(stamp) <= self.cfg.interval {
                    return None;
                }
                self.since = Some(now);
                self.count += 1;
                signal.start_resample(now);
                Some(Transition::Enter)
            }
            Some(since) => {
                if signal.resampled_through().is_none_or(|t| t < since + self.cfg.duration) {
                    return None;
                }
                signal.finish_resample(now);
                self.since = None;
                Some(Transition::Exit)
            }
        }
    }
}
