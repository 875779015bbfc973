//! TCP BBR: Linux `tcp_bbr.c` v1 as a `CongestionControl` over the shared
//! model (`crate::bbr`). It owns the window (`cong_control`) and paces;
//! segments become bytes at `AckSample::segment` wire bytes each.

use super::cc::{AckSample, CongestionControl, Window};
use crate::bbr::{Bbr, BbrAck, BbrConfig};
use crate::units::{DataRate, DataSize, Duration, Time};

/// Linux's `TCP_INFINITE_SSTHRESH`: no slow-start threshold.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

pub struct TcpBbr {
    model: Bbr,
}

impl TcpBbr {
    pub fn new(cfg: BbrConfig) -> TcpBbr {
        TcpBbr { model: Bbr::new(cfg) }
    }

    pub fn model(&self) -> &Bbr {
        &self.model
    }

    fn segments(&self, size: DataSize) -> u32 {
        self.model.config().ceil_packets(size).min(u64::from(INFINITE_SSTHRESH)) as u32
    }

    /// The model's window and threshold, in segments.
    fn write(&self, w: &mut Window) {
        w.cwnd = self.segments(self.model.cwnd()).max(1);
        w.ssthresh = self.model.ssthresh().map_or(INFINITE_SSTHRESH, |s| self.segments(s));
    }
}

fn bytes(segments: u64, seg: DataSize) -> DataSize {
    DataSize::from_bytes(segments * seg.bytes())
}

/// One ACK in bytes (Linux `struct rate_sample` as `bbr_main` reads it).
fn to_bytes(a: &AckSample) -> BbrAck {
    let seg = a.segment;
    BbrAck {
        now: a.now,
        acked: bytes(a.acked.into(), seg),
        lost: bytes(a.lost.into(), seg),
        prior_in_flight: bytes(a.prior_in_flight.into(), seg),
        in_flight: bytes(a.in_flight.into(), seg),
        delivered_total: bytes(a.rate.delivered_total, seg),
        prior_delivered: bytes(a.rate.prior_delivered, seg),
        sample_delivered: bytes(a.rate.delivered, seg),
        interval: a.rate.interval,
        is_app_limited: a.rate.is_app_limited,
        rtt: a.rtt,
        srtt: a.srtt,
        in_recovery: a.in_recovery,
    }
}

impl CongestionControl for TcpBbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_main`, on every ACK, in recovery too.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if ack.segment != self.model.config().packet && ack.segment > DataSize::ZERO {
            self.model.set_packet(ack.segment);
        }
        self.model.on_ack(&to_bytes(ack));
        self.write(w);
    }

    /// `bbr_ssthresh`: save the window to restore after recovery; the
    /// threshold stays infinite (or the BDP STARTUP ended at).
    fn ssthresh(&mut self, _w: &Window, _now: Time) -> u32 {
        self.model.on_enter_recovery();
        self.model.ssthresh().map_or(INFINITE_SSTHRESH, |s| self.segments(s))
    }

    /// The restore branch of `bbr_set_cwnd_to_recover_or_restore`.
    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        self.model.on_exit_recovery();
        self.write(w);
    }

    /// `tcp_enter_loss` (window = in flight + 1, in flight ≈ 0 once all is
    /// marked lost) and `bbr_set_state(TCP_CA_Loss)`.
    fn on_rto(&mut self, w: &mut Window, now: Time) {
        self.model.on_rto(now, DataSize::ZERO);
        self.write(w);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`.
    /// Sending resumes with nothing in flight: after an application-limited
    /// pause (Linux `bbr_cwnd_event` on `CA_EVENT_TX_START` when app-limited;
    /// with nothing in flight the sender had nothing to send), PROBE_BW
    /// paces at the estimated bandwidth rather than a probing gain.
    fn on_tx_start(&mut self, w: &mut Window, now: Time, _idle: Duration, app_limited: bool) {
        if app_limited {
            self.model.on_idle_restart(now);
            self.write(w);
        }
    }

    fn owns_window(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<DataRate> {
        Some(self.model.pacing_rate())
    }

    fn state(&self, put: &mut dyn FnMut(&str, f64)) {
        self.model.state(put);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbr::Mode;
    use crate::tcp::cc::RateSample;
    use crate::units::Duration;

    const SEG: DataSize = DataSize::from_bytes(1500);

    fn ack(now_ms: i64, delivered_total: u64, in_flight: u32) -> AckSample {
        AckSample {
            now: Time::from_millis(now_ms),
            acked: 1,
            lost: 0,
            prior_in_flight: in_flight + 1,
            in_flight,
            rtt: Some(Duration::from_millis(40)),
            srtt: Some(Duration::from_millis(40)),
            min_rtt: Some(Duration::from_millis(40)),
            rate: RateSample {
                // 10 segments per 40 ms: 3 Mbit/s.
                delivered: 10,
                interval: Duration::from_millis(40),
                prior_delivered: delivered_total.saturating_sub(10),
                delivered_total,
                is_app_limited: false,
            },
            in_recovery: false,
            cwnd_limited: true,
            segment: SEG,
        }
    }

    #[test]
    fn window_in_segments_follows_model() {
        let mut cc = TcpBbr::new(BbrConfig::DEFAULT);
        assert_eq!(cc.name(), "bbr");
        assert!(cc.owns_window());
        let mut w = Window { cwnd: 10, ssthresh: INFINITE_SSTHRESH };
        for i in 0..5u32 {
            cc.on_ack(&mut w, &ack(40 + i64::from(i), 11 + u64::from(i), 10));
            assert_eq!(u64::from(w.cwnd) * SEG.bytes(), cc.model().cwnd().bytes());
        }
        // STARTUP grows by one segment per segment acked.
        assert_eq!(w.cwnd, 15);
        assert_eq!(w.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(cc.model().mode(), Mode::Startup);
        let r = cc.pacing_rate().unwrap();
        // 3 Mbit/s × 2.885 × 0.99.
        assert!((r.bps() as f64 / 3.0e6 - 2.0 / std::f64::consts::LN_2 * 0.99).abs() < 0.01, "{r}");
    }

    #[test]
    fn sending_after_an_app_limited_pause_paces_at_the_estimate() {
        let mut cc = TcpBbr::new(BbrConfig::DEFAULT);
        let mut w = Window { cwnd: 10, ssthresh: INFINITE_SSTHRESH };
        // A steady 3 Mbit/s until PROBE_BW is in a probing (1.25) phase.
        let mut t = 40;
        while !(cc.model().mode() == Mode::ProbeBw && cc.model().pacing_gain() > 1.0) {
            t += 1;
            assert!(t < 20_000, "never reached PROBE_BW's probing phase");
            cc.on_ack(&mut w, &ack(t, t as u64 / 4, 10));
        }
        let probing = cc.pacing_rate().unwrap();
        // Not after a loss: the pipe emptied by an RTO is no pause.
        cc.on_tx_start(&mut w, Time::from_millis(t + 100), Duration::from_millis(100), false);
        assert_eq!(cc.pacing_rate().unwrap(), probing);
        cc.on_tx_start(&mut w, Time::from_millis(t + 100), Duration::from_millis(100), true);
        let resumed = cc.pacing_rate().unwrap();
        // bbr_cwnd_event: pacing gain 1 on the estimate (less the 1 % margin).
        let bw = cc.model().bw().bps() as f64;
        assert!((resumed.bps() as f64 / (bw * 0.99) - 1.0).abs() < 0.01, "{resumed} vs bw {bw}");
        assert!(resumed < probing, "{resumed} !< {probing}");
    }

    #[test]
    fn recovery_and_rto() {
        let mut cc = TcpBbr::new(BbrConfig::DEFAULT);
        let mut w = Window { cwnd: 10, ssthresh: INFINITE_SSTHRESH };
        for i in 0..10u32 {
            cc.on_ack(&mut w, &ack(40 + i64::from(i), 11 + u64::from(i), 20));
        }
        assert_eq!(w.cwnd, 20);
        assert_eq!(cc.ssthresh(&w, Time::from_millis(50)), INFINITE_SSTHRESH);
        let mut a = ack(51, 21, 8);
        a.in_recovery = true;
        a.lost = 3;
        cc.on_ack(&mut w, &a);
        // Packet conservation: in flight + acked.
        assert_eq!(w.cwnd, 9);
        cc.on_recovery_exit(&mut w, Time::from_millis(60));
        assert_eq!(w.cwnd, 20);
        // RTO: one segment, then the 4-segment floor on the next ACK.
        cc.ssthresh(&w, Time::from_millis(70));
        cc.on_rto(&mut w, Time::from_millis(70));
        assert_eq!(w.cwnd, 1);
        let mut a = ack(300, 22, 0);
        a.in_recovery = true;
        cc.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 4);
        let a = ack(310, 23, 0);
        cc.on_ack(&mut w, &a);
        // Leaving RTO recovery restores the window saved before it (20),
        // then STARTUP grows it by the segment acked.
        assert_eq!(w.cwnd, 21);
    }
}
