//! What the two BBR video controllers (`bbr`, `rbbr`) share: the BBR v1
//! model (`crate::bbr`) fed from video transport feedback instead of TCP
//! ACKs, with the constants of the QUIC-derived BBR that WebRTC carried in
//! 2018 (`modules/congestion_controller/bbr/bbr_network_controller.cc`, the
//! tree of the webrtc-uwp port; cross.txt §IV, ref. [31]).
//!
//! Per report (`BbrNetworkController::OnTransportPacketsFeedback`): the
//! sampler (`sampler.rs`) turns the acknowledged packets into one delivery
//! rate sample and the smallest RTT among them (QUIC takes the minimum over
//! the report, `UpdateBandwidthAndMinRtt`), losses and in-flight bytes; the
//! recovery state follows QUIC's `UpdateRecoveryState`; then the model takes
//! one `BbrAck`.
//!
//! App-limited: video rarely fills the pipe (ALGORITHMS.md §3.8), so a
//! packet is marked app-limited (Linux `tcp_rate_check_app_limited`) when
//! the sender reports an empty pacer queue, no padding running and room in
//! the window: the encoder's target was below what the pacer could send.
//! `rbbr` does; `bbr` by default does not (`Feed::mark_app_limited`), as
//! WebRTC's BBR did not.

pub mod sampler;

use crate::bbr::{Bbr, BbrAck, BbrConfig, Mode};
use crate::controller::{Decision, SenderState, SentPacket};
use crate::feedback::Feedback;
use crate::units::{DataRate, DataSize, Duration, Time};

pub use sampler::{Delivery, Sampler};

/// QUIC BBR's packet size for window arithmetic (`kDefaultTCPMSS`).
pub const MSS: DataSize = DataSize::from_bytes(1460);

/// Largest window (`kDefaultMaxCongestionWindowPackets` = 2000 × 1460 B).
pub const MAX_CWND: DataSize = DataSize::from_bytes(2000 * MSS.bytes());

/// RTT assumed before any sample (`RttStats` `kInitialRttMs`).
pub const INITIAL_RTT: Duration = Duration::from_millis(100);

/// The model's constants as QUIC BBR in WebRTC sets them, where they differ
/// from Linux v1 (`bbr_network_controller.cc`, top of file and
/// `BbrControllerConfig::DefaultConfig`):
///
/// - gains 2.885 and 1/2.885 (`kHighGain`, `kDrainGain`), not 2/ln 2;
/// - initial window 32 packets of 1460 B (`kInitialCongestionWindowPackets`,
///   `kDefaultTCPMSS`), floor 4 (`kDefaultMinCongestionWindowPackets`);
/// - pacing at exactly gain × bw (`CalculatePacingRate`; no 1 % margin);
/// - target window gain × BDP in bytes (`GetTargetCongestionWindow`), no
///   packet rounding or quantisation budget;
/// - STARTUP also ends at a round without growth during loss recovery
///   (`exit_startup_on_loss = true`);
/// - no long-term (policer) sampling: QUIC BBR has none.
///
/// The gain cycle (1.25, 0.75, six × 1: `probe_bw_pacing_gain_offset`
/// 0.25), the 10-round bandwidth window (`kBandwidthWindowSize`), the 10 s
/// min-RTT expiry, 200 ms PROBE_RTT and 3 STARTUP rounds are Linux's too.
pub fn webrtc_config(seed: u64) -> BbrConfig {
    BbrConfig {
        high_gain: 2.885,
        drain_gain: 1.0 / 2.885,
        initial_cwnd_packets: 32,
        min_cwnd_packets: 4,
        packet: MSS,
        pacing_margin: 0.0,
        quantize: false,
        full_bw_on_loss: true,
        lt_sampling: false,
        seed,
        ..BbrConfig::DEFAULT
    }
}

/// The PROBE_BW gains 1 + o, 1 − o, then 1 (`GetPacingGain(round_offset)`).
pub fn gain_cycle(up: f64, down: f64) -> [f64; 8] {
    let mut cycle = [1.0; 8];
    cycle[0] = up;
    cycle[1] = down;
    cycle
}

/// QUIC loss recovery's extent (`UpdateRecoveryState`): it starts at a
/// report with a loss and ends at a report without one that acknowledges a
/// packet sent after the last loss was seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Recovery {
    active: bool,
    /// The newest sequence sent when a loss was last reported
    /// (`end_recovery_at_`).
    end_at: Option<u64>,
}

/// How the model's recovery changed with one report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecoveryChange {
    None,
    Enter,
    Exit,
}

impl Recovery {
    fn on_report(&mut self, lost: bool, newest_acked: u64, last_sent: Option<u64>) -> RecoveryChange {
        if lost {
            self.end_at = last_sent;
        }
        if !self.active {
            self.active = lost;
            return if lost { RecoveryChange::Enter } else { RecoveryChange::None };
        }
        if !lost && self.end_at.is_none_or(|e| newest_acked > e) {
            self.active = false;
            return RecoveryChange::Exit;
        }
        RecoveryChange::None
    }
}

/// The model and what feeds it.
#[derive(Clone, Debug)]
pub struct Feed {
    pub model: Bbr,
    sampler: Sampler,
    recovery: Recovery,
    /// Smoothed RTT, α = 1/8 (`RttStats::UpdateRtt`), for the model's
    /// first pacing rate.
    srtt: Option<Duration>,
    last_sent: Option<u64>,
    /// The sender's last queue and in-flight report.
    state: Option<SenderState>,
    /// Mark app-limited periods (Linux, `rbbr`); WebRTC's QUIC BBR never
    /// did outside PROBE_RTT (`OnApplicationLimited` is private and no
    /// input reaches it), so its samples below the maximum enter the filter.
    pub mark_app_limited: bool,
}

impl Feed {
    pub fn new(cfg: BbrConfig) -> Feed {
        Feed {
            model: Bbr::new(cfg),
            sampler: Sampler::default(),
            recovery: Recovery::default(),
            srtt: None,
            last_sent: None,
            state: None,
            mark_app_limited: true,
        }
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery.active
    }

    /// The sender's last `SenderState`, `None` before the first.
    pub fn sender_state(&self) -> Option<SenderState> {
        self.state
    }

    /// The model's bandwidth, or `fallback` before any sample
    /// (`CreateRateUpdate`: `default_bandwidth_`, the start rate).
    pub fn bandwidth(&self, fallback: DataRate) -> DataRate {
        let bw = self.model.bw();
        if bw == DataRate::ZERO {
            fallback
        } else {
            bw
        }
    }

    /// min_rtt, or the 100 ms initial RTT before any sample (`GetMinRtt`).
    pub fn min_rtt(&self) -> Duration {
        self.model.min_rtt().unwrap_or(INITIAL_RTT)
    }

    /// The model's pacing rate; before any RTT sample, the initial window
    /// at high gain over the initial RTT (`PacingRate` with
    /// `pacing_rate_` still zero), where Linux assumes 1 ms.
    pub fn pacing_rate(&self) -> DataRate {
        if self.model.min_rtt().is_some() {
            return self.model.pacing_rate();
        }
        let cfg = self.model.config();
        DataRate::from_size_per(cfg.initial_cwnd(), INITIAL_RTT).mul_f64(cfg.high_gain)
    }

    /// A packet left the pacer. Sending into an empty pipe while
    /// app-limited is a restart from idle (QUIC `exiting_quiescence_`,
    /// Linux `CA_EVENT_TX_START`): no PROBE_RTT until data is acknowledged.
    /// Returns whether it was one, so the caller recomputes its decision
    /// (a restart can end PROBE_RTT) rather than wait for the next report.
    pub fn on_sent(&mut self, now: Time, p: &SentPacket) -> bool {
        let restart = self.sampler.in_flight() == DataSize::ZERO && self.sampler.is_app_limited();
        if restart {
            self.model.on_idle_restart(now);
        }
        self.sampler.on_sent(now, p.seq, p.size);
        self.last_sent = Some(self.last_sent.map_or(p.seq, |s| s.max(p.seq)));
        restart
    }

    /// The sender's queue or in-flight bytes changed. An empty queue with
    /// no padding and room in the window, both as the controller's last
    /// `decision` set them, starts an app-limited period.
    pub fn on_sender_state(&mut self, st: &SenderState, decision: &Decision) {
        let (padding, cwnd) = (decision.padding_rate > DataRate::ZERO, decision.cwnd);
        self.state = Some(*st);
        // The sender's in-flight count: it reports before the feedback
        // that would update the sampler's.
        let room = cwnd.is_none_or(|w| st.in_flight < w);
        if self.mark_app_limited && st.queued == DataSize::ZERO && !padding && room {
            self.sampler.mark_app_limited();
        }
    }

    /// What both controllers announce for `target` and `pacing`: each within
    /// the flow's bounds (`TargetRateConstraints`), and padding at the pacing
    /// rate while the model probes (STARTUP, or a PROBE_BW gain above 1), as
    /// WebRTC's pacer config did.
    pub fn decision(
        &self,
        target: DataRate,
        pacing: DataRate,
        cwnd: Option<DataSize>,
        bounds: (DataRate, DataRate),
    ) -> Decision {
        let m = &self.model;
        let pacing = pacing.clamp(bounds.0, bounds.1);
        let probing = m.mode() == Mode::Startup || (m.mode() == Mode::ProbeBw && m.pacing_gain() > 1.0);
        Decision {
            target_rate: target.clamp(bounds.0, bounds.1),
            pacing_rate: pacing,
            cwnd,
            padding_rate: if probing { pacing } else { DataRate::ZERO },
            ..Decision::default()
        }
    }

    /// The model's state columns, shared by both controllers.
    pub fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let m = &self.model;
        out("mode", f64::from(m.mode().index()));
        out("btl_bw_kbps", m.btl_bw().kbps_f64());
        if let Some(r) = m.min_rtt() {
            out("min_rtt_ms", r.as_millis_f64());
        }
        out("pacing_gain", m.pacing_gain());
        out("cycle", m.cycle_index() as f64);
        out("round", m.round_count() as f64);
        out("filled_pipe", f64::from(u8::from(m.filled_pipe())));
        out("in_recovery", f64::from(u8::from(self.recovery.active)));
        out("app_limited", f64::from(u8::from(self.sampler.is_app_limited())));
    }

    /// One report: the model takes it as one ACK. Returns the delivery, or
    /// `None` if the report named no packet awaiting one.
    pub fn on_feedback(&mut self, now: Time, fb: &Feedback) -> Option<Delivery> {
        let d = self.sampler.on_feedback(now, fb, self.model.min_rtt())?;
        if let Some(r) = fb.rtt_sample() {
            self.srtt = Some(self.srtt.map_or(r, |s| s.mul_f64(0.875) + r.mul_f64(0.125)));
        }
        let lost = d.lost > DataSize::ZERO;
        // QUIC updates the recovery state only on reports that acknowledge
        // something.
        if let Some(newest) = d.newest_acked {
            match self.recovery.on_report(lost, newest, self.last_sent) {
                // Linux's order: save the window (`bbr_ssthresh`) before
                // the first ACK in recovery; restore it before the first
                // one after.
                RecoveryChange::Enter => self.model.on_enter_recovery(),
                RecoveryChange::Exit => self.model.on_exit_recovery(),
                RecoveryChange::None => {}
            }
        }
        self.model.on_ack(&BbrAck { srtt: self.srtt, in_recovery: self.recovery.active, ..d.ack });
        Some(d)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::controller::Controller;
    use crate::encoder::{Encoder, EncoderConfig};
    use crate::packet::PacketKind;
    use crate::pair::Pair;
    use crate::rng::Rng;
    use crate::sender::SenderConfig;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::{Arc, Mutex};

    /// A bottleneck of `capacity` with a drop-tail buffer of `buffer` of link
    /// time, `owd` each way beyond it.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Link {
        pub capacity: DataRate,
        pub owd: Duration,
        pub buffer: Duration,
        /// From this time on, this capacity.
        pub step: Option<(Time, DataRate)>,
    }

    impl Link {
        fn rate(&self, t: Time) -> DataRate {
            match self.step {
                Some((at, r)) if t >= at => r,
                _ => self.capacity,
            }
        }
    }

    /// Cross Table I, case 1: 6 Mbps, 100 ms one way, 6 Mbps × 300 ms of buffer.
    pub(crate) const CASE_1: Link = Link {
        capacity: DataRate::from_mbps(6),
        owd: Duration::from_millis(100),
        buffer: Duration::from_millis(300),
        step: None,
    };

    /// What a controller said after one input.
    #[derive(Clone, Debug)]
    pub(crate) struct Step {
        pub t: Time,
        pub decision: crate::controller::Decision,
        pub state: Vec<(&'static str, f64)>,
        /// For a send: bytes in flight after it, and its size.
        pub sent: Option<(DataSize, DataSize)>,
        /// The window the pacer applied to that send.
        pub cwnd_before: Option<DataSize>,
    }

    impl Step {
        pub fn col(&self, k: &str) -> f64 {
            self.state.iter().find(|c| c.0 == k).map_or(f64::NAN, |c| c.1)
        }
    }

    /// A controller that logs every send and report to a shared list.
    pub(crate) struct Watch {
        pub inner: Box<dyn Controller>,
        pub log: Arc<Mutex<Vec<Step>>>,
    }

    impl Watch {
        pub fn boxed(inner: Box<dyn Controller>) -> (Box<dyn Controller>, Arc<Mutex<Vec<Step>>>) {
            let log = Arc::new(Mutex::new(Vec::new()));
            (Box::new(Watch { inner, log: log.clone() }), log)
        }

        fn record(&self, t: Time, sent: Option<(DataSize, DataSize)>, cwnd_before: Option<DataSize>) {
            let mut state = vec![];
            self.inner.state(&mut |k, v| state.push((k, v)));
            self.log.lock().expect("one test thread").push(Step {
                t,
                decision: self.inner.decision(),
                state,
                sent,
                cwnd_before,
            });
        }
    }

    impl Controller for Watch {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
            let before = self.inner.decision().cwnd;
            self.inner.on_packet_sent(now, p);
            self.record(now, Some((p.in_flight, p.size)), before);
        }
        fn on_feedback(&mut self, now: Time, fb: &Feedback) {
            self.inner.on_feedback(now, fb);
            self.record(now, None, None);
        }
        fn on_sender_state(&mut self, now: Time, st: &SenderState) {
            self.inner.on_sender_state(now, st);
        }
        fn decision(&self) -> crate::controller::Decision {
            self.inner.decision()
        }
        fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
            self.inner.state(out);
        }
    }

    /// What a call measured over its span.
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct Outcome {
        /// Bytes the bottleneck delivered (media, padding, everything) and
        /// media alone, over capacity × span.
        pub utilisation: f64,
        pub media: f64,
        /// Packets dropped at the bottleneck over packets sent.
        pub loss: f64,
        /// Bottleneck queuing delay, mean and 95th percentile, ms.
        pub qdelay_ms: f64,
        pub qdelay_p95_ms: f64,
        /// Largest pacer queue drain time, ms, sampled every 100 ms.
        pub pacer_max_ms: f64,
        /// Mean encoder target, kbps, sampled every 100 ms.
        pub target_kbps: f64,
        /// Captures not encoded (the pacer over its queue-time limit).
        pub skipped: u32,
        /// Capture-to-display delay of the frames shown, 95th percentile, ms.
        pub frame_delay_p95_ms: f64,
    }

    /// A 30 fps call with the ideal encoder and 50 ms reports over `link`,
    /// measured from `from` to `until` seconds.
    pub(crate) fn call(ctrl: Box<dyn Controller>, link: Link, pushback: bool, from: i64, until: i64) -> Outcome {
        let (start, end) = (Time::from_millis(from * 1000), Time::from_millis(until * 1000));
        // goog_cc-style pushback counting the pacer queue: a window that
        // only holds the pacer never has more than itself in flight.
        let sender = SenderConfig { cwnd_pushback: pushback, pushback_pacer: pushback, ..SenderConfig::default() };
        let enc = Encoder::new(EncoderConfig::Ideal, sender.frame_interval, Rng::new(1));
        // The drop-tail buffer, in front of the pair's own FIFO: the same
        // link, so the same departures.
        let queue = Rc::new(RefCell::new((Time::ZERO, Vec::<(Time, Duration, bool)>::new())));
        let q = queue.clone();
        let mut pair = Pair::builder()
            .sender(sender)
            .controller(ctrl)
            .encoder(Box::new(enc))
            .delay(link.owd)
            .capacity(move |t| link.rate(t))
            .drop_sent(move |p| {
                let (free, log) = &mut *q.borrow_mut();
                let now = p.send_time;
                let wait = (*free).max(now) - now;
                // The buffer holds `buffer` of link time at the rate now.
                let drop = link.rate(now) * wait > link.rate(now) * link.buffer;
                if !drop {
                    let start = (*free).max(now);
                    *free = start + p.size / link.rate(start);
                }
                log.push((now, wait, drop));
                drop
            })
            .build();
        let (mut targets, mut pacer_max) = (vec![], Duration::ZERO);
        let mut t = Time::ZERO;
        while t < end {
            t += Duration::from_millis(100);
            pair.run_until(t);
            if t > start {
                targets.push(pair.sender.target_rate().kbps_f64());
                pacer_max = pacer_max.max(pair.sender.pacer().queue_drain_time());
            }
        }
        let span = |a: Time| a >= start && a < end;
        let (mut all, mut media) = (0u64, 0u64);
        for tr in pair.delivered() {
            if span(tr.arrival.expect("delivered")) {
                all += tr.packet.size.bytes();
                if tr.packet.kind == PacketKind::Media {
                    media += tr.packet.size.bytes();
                }
            }
        }
        let capacity: f64 = (from * 10..until * 10)
            .map(|i| (link.rate(Time::from_millis(i * 100)) * Duration::from_millis(100)).bytes() as f64)
            .sum();
        let log = &queue.borrow().1;
        let sent: Vec<_> = log.iter().filter(|e| span(e.0)).collect();
        let mut waits: Vec<f64> = sent.iter().filter(|e| !e.2).map(|e| e.1.as_millis_f64()).collect();
        waits.sort_by(f64::total_cmp);
        let mut skipped = 0;
        let mut captures = std::collections::HashMap::new();
        while let Some(f) = pair.sender.pop_frame() {
            if span(f.capture) {
                skipped += u32::from(f.skipped);
                if !f.skipped {
                    captures.insert(f.frame, f.capture);
                }
            }
        }
        let mut delays: Vec<f64> = pair
            .displayed()
            .iter()
            .filter_map(|d| captures.get(&d.frame).map(|&c| (d.at - c).as_millis_f64()))
            .collect();
        delays.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let p95 = |v: &[f64]| v.get(v.len() * 95 / 100).copied().unwrap_or(f64::NAN);
        Outcome {
            utilisation: all as f64 / capacity,
            media: media as f64 / capacity,
            loss: sent.iter().filter(|e| e.2).count() as f64 / sent.len().max(1) as f64,
            qdelay_ms: mean(&waits),
            qdelay_p95_ms: p95(&waits),
            pacer_max_ms: pacer_max.as_millis_f64(),
            target_kbps: mean(&targets),
            skipped,
            frame_delay_p95_ms: p95(&delays),
        }
    }

    #[test]
    fn recovery_ends_after_a_clean_report_past_the_last_loss() {
        let mut r = Recovery::default();
        assert_eq!(r.on_report(false, 5, Some(10)), RecoveryChange::None);
        // A loss when 20 was the newest sent.
        assert_eq!(r.on_report(true, 8, Some(20)), RecoveryChange::Enter);
        assert_eq!(r.on_report(false, 15, Some(25)), RecoveryChange::None);
        // Another loss moves the end to 30.
        assert_eq!(r.on_report(true, 21, Some(30)), RecoveryChange::None);
        assert_eq!(r.on_report(false, 30, Some(35)), RecoveryChange::None);
        assert_eq!(r.on_report(false, 31, Some(40)), RecoveryChange::Exit);
        assert!(!r.active);
    }

    #[test]
    fn quic_constants() {
        let c = webrtc_config(3);
        assert_eq!((c.high_gain, c.initial_cwnd(), c.min_cwnd()), (2.885, MSS.mul_f64(32.0), MSS.mul_f64(4.0)));
        assert_eq!((c.pacing_margin, c.quantize, c.full_bw_on_loss, c.lt_sampling), (0.0, false, true, false));
        assert_eq!(c.cycle, gain_cycle(1.25, 0.75));
        assert_eq!((c.bw_rounds, c.min_rtt_window, c.cycle_len), (10, Duration::from_secs(10), 8));
        // Before any RTT: 2.885 × 32 × 1460 B / 100 ms = 10.78 Mbps.
        let f = Feed::new(c);
        assert_eq!(f.pacing_rate(), DataRate::from_bps(10_782_976));
        assert_eq!(f.bandwidth(DataRate::from_kbps(300)), DataRate::from_kbps(300));
        assert_eq!(f.min_rtt(), INITIAL_RTT);
    }
}
