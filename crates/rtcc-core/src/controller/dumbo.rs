//! `copa+dumbo`, `rocc+dumbo`: Dumbo (Karimi, "Bridging the Gap Between
//! Real-time Video and Backlogged Traffic Congestion Control", MIT MS thesis
//! 2023; `papers/dumbo.txt`), a sender policy that makes a video flow look
//! backlogged to a window-based controller (Ch. 4, Fig. 4-1).
//!
//! The wrapper owns no congestion control of its own: every event goes to the
//! inner controller (`copa` or `rocc`, created through the registry), whose
//! cwnd and pacing rate pass through unchanged. It adds:
//! - dummy traffic (§4 "Dummy Generator", §5.1 "Pacing Controller"):
//!   `padding_rate = pacing_rate`, so the pacer sends media first and
//!   otherwise padding whenever bytes in flight < cwnd and the pacing rate
//!   allows; the pacer sizes padding packets to the free window, ≥ 200 B (§5.1
//!   "Dummy Generator"); `dummy = false` turns it off, §6.2.2's Copa and
//!   RoCC "without the dummy stream";
//! - frame skipping (§4 "Latency Control", first mechanism): the encoder skips
//!   frames while the pacer queue would take longer than the latency threshold
//!   to drain — 100 ms (Table A.1, both schemes);
//! - the encoder target (§4 "Latency Control", second mechanism):
//!   `Target_Rate = cwnd/RTT − Standing_PQ/T − Non_Video_Rate`, where RTT is the
//!   smoothed RTT (§4 "Congestion Controller": "cwnd divided by smoothed RTT
//!   (using an exponentially weighted moving average of the RTT samples)";
//!   eqs. 5.2–5.3: `propagation_time`, the EWMA with α = 0.95 of Table A.1 of
//!   each report's mean RTT, §5.2.1), and Standing_PQ is the minimum
//!   pacer-queue size over the last T. cwnd/RTT is capped at the inner's
//!   pacing rate, which in the thesis is that same rate (see `sending_rate`).
//!
//! The RTT keeps the time the receiver held packets before reporting. §5.2.1
//! removes that hold only from `min_rtt`; `propagation_time` is "the
//! round-trip-time measured upon receiving each acknowledgment". It is also
//! the only reading under which cwnd/RTT is a rate the window can carry: with
//! periodic feedback a packet leaves the in-flight count when its report
//! arrives, so a window is turned over once per send → report-arrival time.
//! Without the hold (50 ms reports on a 50 ms path: ~25 ms of it) the target
//! would exceed the link by half. (`Feedback::rtt_sample` removes the hold,
//! as `min_rtt` needs, so it is not used here.)
//!
//! Constants the thesis leaves open, and the values chosen:
//! - T (`standing_window`): "around 100–200 ms", chosen "with the same logic as
//!   the latency threshold" (§4) — so 100 ms, the threshold of Table A.1.
//! - The RTT before the first feedback: the inner controller's own target is
//!   used until the first RTT sample (the thesis does not say).
//! - Burst interval: the pacer "occasionally allow[s] bursts of maximum
//!   duration (burst-interval)" of "a few milliseconds (variable to tune)"
//!   (§5.1 "Pacing Controller") — no value is given. In rtcc the pacer's burst
//!   (`PacerConfig::burst`) is a per-flow scenario setting, not a controller
//!   output, so nothing is exposed here.

use std::collections::VecDeque;

use super::{
    copa, rocc, ConfigError, Controller, ControllerContext, Decision, FrameInfo, Param, ParamInfo, Params,
    ProbeCluster, SenderState, SentPacket, WrapperInfo,
};
use crate::feedback::Feedback;
use crate::units::{DataRate, DataSize, Duration, Time};

/// Table A.1 "Latency threshold 100 ms" (RoCC and Copa); §4 "Latency Control":
/// "around 100–200 ms based on human's sensitivity to the lag time between
/// two consecutive frames".
pub const DEFAULT_LATENCY_THRESHOLD: Duration = Duration::from_millis(100);
/// §4 "Latency Control": T "around 100–200 ms", "with the same logic as the
/// latency threshold"; the low end, equal to Table A.1's threshold.
pub const DEFAULT_STANDING_WINDOW: Duration = Duration::from_millis(100);
/// Table A.1 α = 0.95 (RoCC and Copa), the weight of the newest report in the
/// smoothed RTT `propagation_time` (eq. 5.2; Copa reuses it, §5.2.2).
pub const DEFAULT_RTT_ALPHA: f64 = 0.95;

const LATENCY_THRESHOLD: Param<Duration> = Param::duration(
    "latency_threshold",
    DEFAULT_LATENCY_THRESHOLD,
    Duration::ZERO,
    Duration::from_secs(10),
    "skip frames while the pacer queue needs longer than this to drain (Dumbo §4, Table A.1)",
)
.above_min();
const STANDING_WINDOW: Param<Duration> = Param::duration(
    "standing_window",
    DEFAULT_STANDING_WINDOW,
    Duration::ZERO,
    Duration::from_secs(10),
    "T: Standing_PQ = min pacer queue over the last T; target = cwnd/RTT - Standing_PQ/T (Dumbo §4)",
)
.above_min();
const RTT_ALPHA: Param<f64> = Param::number(
    "rtt_alpha",
    DEFAULT_RTT_ALPHA,
    0.0,
    1.0,
    "EWMA weight of the newest report's RTT in the target's RTT (eq. 5.2, Table A.1); \
     default: the inner's `alpha` when given",
)
.above_min();
/// §6.2.2 "Impact of Dummy Traffic" runs Copa and RoCC "with and without the
/// dummy stream", everything else of Dumbo kept (Table A.1 gives both schemes
/// the 100 ms latency threshold): `dummy = false` is that "without".
const DUMMY: Param<bool> = Param::flag(
    "dummy",
    true,
    "send dummy (padding) packets up to cwnd (Dumbo §4); false = §6.2.2's \"without the dummy stream\"",
);

/// The wrapper's own parameters; every other parameter goes to the inner
/// controller.
const OWN_PARAMS: [ParamInfo; 4] = [LATENCY_THRESHOLD.info(), STANDING_WINDOW.info(), RTT_ALPHA.info(), DUMMY.info()];

/// The inner controller's parameter through which the thesis sets the one α
/// of `propagation_time` (eq. 5.2), RoCC's `alpha`; the wrapper's
/// `rtt_alpha` follows it unless given.
const INNER_ALPHA: Param<f64> = rocc::ALPHA;

/// The generic wrapper: `<inner>+dumbo` for any window-based controller;
/// `rtcc controllers` lists it around the thesis's two, Copa and RoCC.
pub const WRAPPER: WrapperInfo = WrapperInfo {
    suffix: "dumbo",
    summary: "dummy padding up to cwnd, frame skipping past 100 ms of pacer queue, \
              target = cwnd/RTT - Standing_PQ/T (Dumbo thesis Ch. 4)",
    params: &OWN_PARAMS,
    wrap,
    listed: &[copa::INFO.name, rocc::INFO.name],
};

/// The wrapper's parameters are checked here, so their errors name them; the
/// inner controller has already accepted the rest.
fn wrap(
    name: &str,
    inner: Box<dyn Controller>,
    p: &Params,
    ctx: &ControllerContext,
) -> Result<Box<dyn Controller>, ConfigError> {
    let cfg = DumboConfig::from_params(p)?;
    Ok(Box::new(Dumbo::new(name, inner, cfg, ctx)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DumboConfig {
    pub latency_threshold: Duration,
    /// T of the target formula and the span of Standing_PQ.
    pub standing_window: Duration,
    pub rtt_alpha: f64,
    /// Dummy traffic on (§4) or off (§6.2.2's "without the dummy stream").
    pub dummy: bool,
}

impl DumboConfig {
    /// Every parameter at its declared default.
    pub const DEFAULT: DumboConfig = DumboConfig {
        latency_threshold: LATENCY_THRESHOLD.default(),
        standing_window: STANDING_WINDOW.default(),
        rtt_alpha: RTT_ALPHA.default(),
        dummy: DUMMY.default(),
    };

    /// The wrapper's configuration from its own parameters (and the inner's
    /// `alpha`, which sets `rtt_alpha` unless that is given). Errors name the
    /// parameter the value came from.
    pub fn from_params(p: &Params) -> Result<Self, ConfigError> {
        let inner_alpha = p.get_or(&INNER_ALPHA, RTT_ALPHA.default())?;
        Ok(DumboConfig {
            latency_threshold: p.get(&LATENCY_THRESHOLD)?,
            standing_window: p.get(&STANDING_WINDOW)?,
            rtt_alpha: p.get_or(&RTT_ALPHA, inner_alpha)?,
            dummy: p.get(&DUMMY)?,
        })
    }
}

impl Default for DumboConfig {
    fn default() -> Self {
        DumboConfig::DEFAULT
    }
}

/// One queue-size sample, in effect from when it was reported until `end`
/// (the next sample; `None` while it is the latest).
#[derive(Clone, Copy, Debug)]
struct QueueSample {
    end: Option<Time>,
    size: DataSize,
}

/// Minimum of the pacer-queue size over the last `window` (Standing_PQ, §4).
/// The size is a step function of time; a sample counts while any part of
/// its span lies in [now − window, now]. Monotonic deque: each kept sample
/// is smaller than every later one, so the front is the minimum and the work
/// per sample is amortised O(1), without allocation once warm.
#[derive(Clone, Debug)]
struct StandingQueue {
    window: Duration,
    samples: VecDeque<QueueSample>,
}

impl StandingQueue {
    fn new(window: Duration) -> Self {
        StandingQueue { window, samples: VecDeque::with_capacity(64) }
    }

    fn push(&mut self, now: Time, size: DataSize) {
        match self.samples.back_mut() {
            // Unchanged: the latest sample simply stays in effect.
            Some(b) if b.size == size => {}
            Some(b) => {
                b.end = Some(now);
                // A sample no smaller than this one never is the minimum
                // again: whenever its span reaches into the window, this
                // later one is in the window too.
                while self.samples.back().is_some_and(|s| s.size >= size) {
                    self.samples.pop_back();
                }
                self.samples.push_back(QueueSample { end: None, size });
            }
            None => self.samples.push_back(QueueSample { end: None, size }),
        }
        self.expire(now);
    }

    fn expire(&mut self, now: Time) {
        let start = now - self.window;
        while self.samples.front().is_some_and(|s| s.end.is_some_and(|e| e <= start)) {
            self.samples.pop_front();
        }
    }

    fn min(&self) -> DataSize {
        self.samples.front().map_or(DataSize::ZERO, |s| s.size)
    }
}

/// `rtt_i` of eq. 5.2: the mean RTT of the packets acknowledged in one
/// report, measured when the report arrives (§5.2.1: "the average round-trip
/// time for those packets"; hold time included, see the module comment).
/// Padding counts like media: the controller "does not differentiate between
/// them" (§4 "Congestion Controller").
fn report_rtt(fb: &Feedback) -> Option<Duration> {
    let (mut sum, mut n) = (0i64, 0i64);
    for p in fb.packets.iter().filter(|p| p.arrival.is_some()) {
        let rtt = (fb.received_at - p.send_time).max(Duration::from_micros(1));
        sum = sum.saturating_add(rtt.as_micros());
        n += 1;
    }
    (n > 0).then(|| Duration::from_micros(sum / n))
}

/// Dumbo around a window-based controller.
pub struct Dumbo {
    name: String,
    inner: Box<dyn Controller>,
    cfg: DumboConfig,
    min_rate: DataRate,
    max_rate: DataRate,
    /// Smoothed RTT, `propagation_time` of eq. 5.2; `None` before feedback.
    srtt: Option<Duration>,
    standing: StandingQueue,
}

impl Dumbo {
    pub fn new(name: &str, inner: Box<dyn Controller>, cfg: DumboConfig, ctx: &ControllerContext) -> Self {
        Dumbo {
            name: name.to_string(),
            inner,
            cfg,
            min_rate: ctx.min_rate,
            max_rate: ctx.max_rate.max(ctx.min_rate),
            srtt: None,
            standing: StandingQueue::new(cfg.standing_window),
        }
    }

    pub fn config(&self) -> &DumboConfig {
        &self.cfg
    }

    /// Smoothed RTT used by the target formula.
    pub fn rtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Standing_PQ: the minimum pacer queue over the last T.
    pub fn standing_queue(&self) -> DataSize {
        self.standing.min()
    }

    fn advance(&mut self, now: Time) {
        self.standing.expire(now);
    }

    /// cwnd/RTT: the sending rate of all streams (§4 "Congestion Controller",
    /// eq. 5.3), at most the pacing rate; the inner's own target when it has
    /// no window or no RTT sample has arrived yet.
    ///
    /// In the thesis the pacer runs at this very rate (§4 "Pacer": "spacing
    /// packets according to the target rate"; §5.2.1: "RoCC sets the pacing
    /// rate at sending_rate"), so the cap changes nothing there. It matters
    /// when the inner paces below cwnd/RTT — rtcc's `rocc` hands the pacer a
    /// window enlarged by rate × the largest recent hold time and paces at
    /// eq. 5.3's rate — since no more than the pacing rate can leave, and a
    /// target above it only fills the pacer queue. A controller pacing above
    /// cwnd/RTT (`copa`, at 2×) is window-limited and keeps cwnd/RTT.
    fn sending_rate(&self, inner: &Decision) -> DataRate {
        match (inner.cwnd, self.srtt) {
            (Some(cwnd), Some(rtt)) => DataRate::from_size_per(cwnd, rtt).min(inner.pacing_rate),
            _ => inner.target_rate,
        }
    }

    /// `Target_Rate = cwnd/RTT − Standing_PQ/T − Non_Video_Rate` (§4 "Latency
    /// Control"). The non-video term is not subtracted here: the sender takes
    /// the audio rate off the controller's budget itself
    /// (`Sender::target_rate`), so subtracting it here would count it twice.
    fn target(&self, inner: &Decision) -> DataRate {
        let drain = DataRate::from_size_per(self.standing.min(), self.cfg.standing_window);
        (self.sending_rate(inner) - drain).clamp(self.min_rate, self.max_rate)
    }
}

impl Controller for Dumbo {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_packet_sent(&mut self, now: Time, packet: &SentPacket) {
        self.inner.on_packet_sent(now, packet);
        self.advance(now);
    }

    fn on_feedback(&mut self, now: Time, feedback: &Feedback) {
        self.inner.on_feedback(now, feedback);
        self.advance(now);
        if let Some(rtt) = report_rtt(feedback) {
            // Eq. 5.2: propagation_time_i = α·rtt_i + (1 − α)·propagation_time_{i−1}.
            self.srtt = Some(match self.srtt {
                None => rtt,
                Some(s) => rtt.mul_f64(self.cfg.rtt_alpha) + s.mul_f64(1.0 - self.cfg.rtt_alpha),
            });
        }
    }

    fn on_frame_encoded(&mut self, now: Time, frame: &FrameInfo) {
        self.inner.on_frame_encoded(now, frame);
        self.advance(now);
    }

    fn on_timeout(&mut self, now: Time) {
        self.inner.on_timeout(now);
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.inner.poll_timeout()
    }

    fn decision(&self) -> Decision {
        let d = self.inner.decision();
        Decision {
            target_rate: self.target(&d),
            pacing_rate: d.pacing_rate,
            cwnd: d.cwnd,
            // §4 "Dummy Generator": whenever cwnd > in flight and the media
            // queue is empty, send a dummy packet — at the pace media would go.
            padding_rate: if self.cfg.dummy { d.pacing_rate } else { d.padding_rate },
            // §4 "Latency Control" / §4 "Pacer": stop encoding while the media
            // queue would take longer than the threshold to drain.
            skip_threshold: Some(self.cfg.latency_threshold),
            ..d
        }
    }

    fn poll_probe(&mut self) -> Option<ProbeCluster> {
        self.inner.poll_probe()
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let d = self.inner.decision();
        out("target_kbps", self.target(&d).kbps_f64());
        out("sending_kbps", self.sending_rate(&d).kbps_f64());
        out("standing_pq_bytes", self.standing.min().bytes() as f64);
        if let Some(rtt) = self.srtt {
            out("rtt_ms", rtt.as_millis_f64());
        }
        // The inner's columns, renamed where they would collide with ours.
        self.inner.state(&mut |k, v| {
            let k = match k {
                "target_kbps" => "inner_target_kbps",
                "sending_kbps" => "inner_sending_kbps",
                "standing_pq_bytes" => "inner_standing_pq_bytes",
                "rtt_ms" => "inner_rtt_ms",
                k => k,
            };
            out(k, v)
        });
    }

    fn on_sender_state(&mut self, now: Time, state: &SenderState) {
        self.inner.on_sender_state(now, state);
        // Standing_PQ spans the "aggregated media and dummy queue" (§4); rtcc
        // makes dummy packets when the pacer sends them, so the media queue is
        // the whole of it.
        self.standing.push(now, state.queued);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::testing::MS;
    use crate::controller::ParamValue;
    use crate::encoder::{Encoder, EncoderConfig};
    use crate::feedback::{PacketResult, ReportStats};
    use crate::packet::PacketKind;
    use crate::pair::Pair;
    use crate::rng::Rng;

    /// A window controller standing in for Copa/RoCC: a fixed cwnd, a fixed
    /// pacing rate and target, and a count of the events it was given.
    struct FakeWindow {
        cwnd: Option<DataSize>,
        pacing: DataRate,
        events: u32,
        timer: Option<Time>,
    }

    impl FakeWindow {
        fn new(cwnd: u64, pacing: DataRate) -> Self {
            FakeWindow { cwnd: Some(DataSize::from_bytes(cwnd)), pacing, events: 0, timer: None }
        }
        fn boxed(cwnd: u64, pacing: DataRate) -> Box<dyn Controller> {
            Box::new(Self::new(cwnd, pacing))
        }
    }

    impl Controller for FakeWindow {
        fn name(&self) -> &str {
            "fake"
        }
        fn on_packet_sent(&mut self, _: Time, _: &SentPacket) {
            self.events += 1;
        }
        fn on_feedback(&mut self, _: Time, _: &Feedback) {
            self.events += 1;
        }
        fn on_frame_encoded(&mut self, _: Time, _: &FrameInfo) {
            self.events += 1;
        }
        fn on_timeout(&mut self, _: Time) {
            self.events += 1;
            self.timer = None;
        }
        fn on_sender_state(&mut self, _: Time, _: &SenderState) {
            self.events += 1;
        }
        fn poll_timeout(&self) -> Option<Time> {
            self.timer
        }
        fn decision(&self) -> Decision {
            Decision {
                target_rate: DataRate::from_kbps(700),
                pacing_rate: self.pacing,
                cwnd: self.cwnd,
                padding_rate: DataRate::ZERO,
                skip_threshold: Some(Duration::from_secs(5)),
                ..Decision::default()
            }
        }
        fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
            out("events", f64::from(self.events));
            out("rtt_ms", -1.0);
        }
    }

    fn queued(bytes: DataSize) -> SenderState {
        SenderState { queued: bytes, ..SenderState::default() }
    }

    fn dumbo(inner: Box<dyn Controller>, cfg: DumboConfig) -> Dumbo {
        Dumbo::new("copa+dumbo", inner, cfg, &ControllerContext::default())
    }

    /// One report acknowledging a packet sent at `sent_ms`, received
    /// `one_way_ms` later, reported `hold_ms` after that, back `one_way_ms`
    /// later.
    fn report(sent_ms: i64, one_way_ms: i64, hold_ms: i64) -> Feedback {
        let arrival = Time::from_millis(sent_ms + one_way_ms);
        Feedback {
            report_time: arrival + MS * hold_ms,
            received_at: arrival + MS * (hold_ms + one_way_ms),
            packets: vec![PacketResult {
                seq: 0,
                kind: PacketKind::Padding,
                size: DataSize::from_bytes(1200),
                send_time: Time::from_millis(sent_ms),
                arrival: Some(arrival),
                probe_cluster: -1,
                ..PacketResult::default()
            }],
            stats: ReportStats::default(),
            ..Feedback::default()
        }
    }

    #[test]
    fn target_is_cwnd_over_rtt_less_standing_queue_drain() {
        let mut d = dumbo(FakeWindow::boxed(30_000, DataRate::from_mbps(8)), DumboConfig::default());
        // 25 ms each way, held 10 ms at the receiver: RTT 60 ms.
        d.on_feedback(Time::from_millis(60), &report(0, 25, 10));
        assert_eq!(d.rtt(), Some(MS * 60));
        // 5000 B queued for the whole window T = 100 ms.
        d.on_sender_state(Time::from_millis(100), &queued(DataSize::from_bytes(5000)));
        d.on_sender_state(Time::from_millis(250), &queued(DataSize::from_bytes(5000)));
        assert_eq!(d.standing_queue(), DataSize::from_bytes(5000));
        // 30000 B / 60 ms = 4 Mbps; 5000 B / 100 ms = 400 kbps.
        assert_eq!(d.decision().target_rate, DataRate::from_kbps(3600));
        // An empty moment in the window drops the standing queue to zero.
        d.on_sender_state(Time::from_millis(260), &queued(DataSize::ZERO));
        d.on_sender_state(Time::from_millis(261), &queued(DataSize::from_bytes(5000)));
        assert_eq!(d.decision().target_rate, DataRate::from_mbps(4));
        // A standing queue worth more than cwnd/RTT leaves the floor.
        d.on_sender_state(Time::from_millis(400), &queued(DataSize::from_bytes(60_000)));
        d.on_sender_state(Time::from_millis(600), &queued(DataSize::from_bytes(60_000)));
        assert_eq!(d.standing_queue(), DataSize::from_bytes(60_000));
        assert_eq!(d.decision().target_rate, ControllerContext::default().min_rate);
        // cwnd/RTT is capped at the pacing rate: 4 Mbps by the window, 2 Mbps
        // paced, 400 kbps of standing queue: 1.6 Mbps.
        let mut d = dumbo(FakeWindow::boxed(30_000, DataRate::from_mbps(2)), DumboConfig::default());
        d.on_feedback(Time::from_millis(60), &report(0, 25, 10));
        d.on_sender_state(Time::from_millis(100), &queued(DataSize::from_bytes(5000)));
        d.on_sender_state(Time::from_millis(200), &queued(DataSize::from_bytes(5000)));
        assert_eq!(d.decision().target_rate, DataRate::from_kbps(1600));
    }

    #[test]
    fn rtt_is_the_eq_5_2_ewma_of_report_means_with_hold_time() {
        let mut d = dumbo(FakeWindow::boxed(30_000, DataRate::from_mbps(8)), DumboConfig::default());
        // 25 ms each way and no hold: 50 ms.
        d.on_feedback(Time::from_millis(50), &report(0, 25, 0));
        assert_eq!(d.rtt(), Some(MS * 50));
        // Sent at 100 ms, 40 ms each way, held 10 ms: the report arrives at
        // 190 ms, 90 ms after sending; a second packet of the same report,
        // sent 20 ms earlier, took 110 ms: mean 100 ms.
        let mut fb = report(100, 40, 10);
        let mut second = fb.packets[0];
        second.send_time = second.send_time - MS * 20;
        fb.packets.push(second);
        // A lost packet carries no RTT.
        fb.packets.push(PacketResult { arrival: None, send_time: Time::ZERO, ..second });
        d.on_feedback(fb.received_at, &fb);
        // 0.95 * 100 + 0.05 * 50 = 97.5 ms.
        assert_eq!(d.rtt(), Some(Duration::from_micros(97_500)));
        // Before any RTT the inner's own target stands in for cwnd/RTT.
        let fresh = dumbo(FakeWindow::boxed(30_000, DataRate::from_mbps(8)), DumboConfig::default());
        assert_eq!(fresh.decision().target_rate, DataRate::from_kbps(700));
    }

    #[test]
    fn standing_queue_is_the_minimum_over_the_window() {
        let mut q = StandingQueue::new(MS * 100);
        let at = |ms| Time::from_millis(ms);
        let b = DataSize::from_bytes;
        for (t, size) in [(0, 8000), (20, 5000), (40, 12_000), (70, 9000), (110, 15_000)] {
            q.push(at(t), b(size));
        }
        // Window [10, 110]: 8000 until 20, 5000 from 20 to 40.
        assert_eq!(q.min(), b(5000));
        q.expire(at(139));
        assert_eq!(q.min(), b(5000), "5000 is in effect until 40 > 39");
        q.expire(at(141));
        assert_eq!(q.min(), b(9000), "window [41, 141]: 12000, 9000, 15000");
        q.expire(at(209));
        assert_eq!(q.min(), b(9000), "9000 lasts until 110 > 109");
        q.expire(at(211));
        assert_eq!(q.min(), b(15_000));
        // A smaller value at once replaces every larger one.
        q.push(at(220), b(100));
        assert_eq!(q.min(), b(100));
        // Repeated sizes keep the first sample's start: the window sees 100
        // throughout, then only 700 once 100 has been gone for 100 ms.
        q.push(at(250), b(100));
        q.push(at(300), b(700));
        q.expire(at(399));
        assert_eq!(q.min(), b(100));
        q.expire(at(400));
        assert_eq!(q.min(), b(700));
        // A sample older than the window start but still in effect counts:
        // 1 at 0 ends at 50, 10 from 50 to 60, 5 from 60.
        let mut q = StandingQueue::new(MS * 100);
        q.push(at(0), b(1));
        q.push(at(50), b(10));
        q.push(at(60), b(5));
        q.expire(at(149));
        assert_eq!(q.min(), b(1));
        q.expire(at(155));
        assert_eq!(q.min(), b(5));
    }

    #[test]
    fn skip_threshold_defaults_to_100ms_and_ignores_the_inner() {
        let d = dumbo(FakeWindow::boxed(30_000, DataRate::from_mbps(8)), DumboConfig::default());
        assert_eq!(d.decision().skip_threshold, Some(MS * 100));
        let p = Params::new().with("latency_threshold", ParamValue::Str("150ms".into()));
        let cfg = DumboConfig::from_params(&p).unwrap();
        assert_eq!(dumbo(FakeWindow::boxed(1, DataRate::ZERO), cfg).decision().skip_threshold, Some(MS * 150));
    }

    #[test]
    fn window_and_pacing_are_the_inner_s_and_padding_follows_pacing() {
        let inner =
            FakeWindow { timer: Some(Time::from_millis(63)), ..FakeWindow::new(30_000, DataRate::from_kbps(8400)) };
        let mut d = dumbo(Box::new(inner), DumboConfig::default());
        d.on_feedback(Time::from_millis(60), &report(0, 30, 0));
        let dec = d.decision();
        assert_eq!(dec.cwnd, Some(DataSize::from_bytes(30_000)));
        assert_eq!(dec.pacing_rate, DataRate::from_kbps(8400));
        assert_eq!(dec.padding_rate, DataRate::from_kbps(8400));
        // Every event reaches the inner controller; its timer is the wrapper's.
        let sent = SentPacket {
            seq: 0,
            kind: PacketKind::Media,
            size: DataSize::from_bytes(1200),
            send_time: Time::from_millis(61),
            probe_cluster: -1,
            in_flight: DataSize::from_bytes(1200),
            ..SentPacket::default()
        };
        d.on_packet_sent(Time::from_millis(61), &sent);
        let frame = FrameInfo {
            frame: 0,
            capture_time: Time::ZERO,
            size: DataSize::from_bytes(1200),
            packets: 1,
            key: true,
            si: 0.0,
            ti: 0.0,
        };
        d.on_frame_encoded(Time::from_millis(62), &frame);
        assert_eq!(d.poll_timeout(), Some(Time::from_millis(63)));
        d.on_timeout(Time::from_millis(63));
        assert_eq!(d.poll_timeout(), None);
        d.on_sender_state(Time::from_millis(64), &queued(DataSize::ZERO));
        let mut cols = vec![];
        d.state(&mut |k, v| cols.push((k, v)));
        let col = |name: &str| cols.iter().find(|c| c.0 == name).map(|c| c.1);
        assert_eq!(col("events"), Some(5.0));
        assert_eq!(col("rtt_ms"), Some(60.0));
        assert_eq!(col("inner_rtt_ms"), Some(-1.0));
        assert_eq!(col("target_kbps"), Some(4000.0));
        assert_eq!(col("standing_pq_bytes"), Some(0.0));
    }

    /// §6.2.2 "without the dummy stream": no padding, but the latency
    /// threshold and the target formula stay Dumbo's.
    #[test]
    fn without_dummy_keeps_latency_control_but_sends_no_padding() {
        let p = Params::new().with("dummy", ParamValue::Bool(false));
        let cfg = DumboConfig::from_params(&p).unwrap();
        assert!(!cfg.dummy && DumboConfig::default().dummy);
        let mut d = dumbo(FakeWindow::boxed(30_000, DataRate::from_kbps(8400)), cfg);
        d.on_feedback(Time::from_millis(60), &report(0, 30, 0));
        d.on_sender_state(Time::from_millis(61), &queued(DataSize::from_bytes(5_000)));
        let dec = d.decision();
        assert_eq!(dec.padding_rate, DataRate::ZERO);
        assert_eq!(dec.cwnd, Some(DataSize::from_bytes(30_000)));
        assert_eq!(dec.skip_threshold, Some(DEFAULT_LATENCY_THRESHOLD));
        // 30 kB over 60 ms less 5 kB over 100 ms: 4000 - 400 kbps.
        assert_eq!(dec.target_rate, DataRate::from_kbps(3600));
    }

    #[test]
    fn params_split_between_wrapper_and_inner() {
        let p = Params::new()
            .with("latency_threshold", ParamValue::Str("200ms".into()))
            .with("standing_window", ParamValue::Num(0.15))
            .with("delta", ParamValue::Num(0.5))
            .with("alpha", ParamValue::Num(0.8));
        let cfg = DumboConfig::from_params(&p).unwrap();
        assert_eq!(cfg.latency_threshold, MS * 200);
        assert_eq!(cfg.standing_window, MS * 150);
        // The inner's α sets the RTT smoothing too (one α in eq. 5.2) and is
        // still passed on.
        assert_eq!(cfg.rtt_alpha, 0.8);
        let names: Vec<String> = p.without(WRAPPER.params).0.into_keys().collect();
        assert_eq!(names, ["alpha", "delta"]);
        let p = p.with("rtt_alpha", ParamValue::Num(0.5));
        assert_eq!(DumboConfig::from_params(&p).unwrap().rtt_alpha, 0.5);
        assert_eq!(DumboConfig::from_params(&Params::new()).unwrap(), DumboConfig::default());

        let bad = |k: &str, v: ParamValue| DumboConfig::from_params(&Params::new().with(k, v)).unwrap_err();
        let invalid = |e: ConfigError| e.field;
        assert_eq!(invalid(bad("latency_threshold", ParamValue::Str("0ms".into()))), "latency_threshold");
        assert_eq!(invalid(bad("latency_threshold", ParamValue::Str("3 furlongs".into()))), "latency_threshold");
        assert_eq!(invalid(bad("standing_window", ParamValue::Num(60.0))), "standing_window");
        assert_eq!(invalid(bad("rtt_alpha", ParamValue::Num(0.0))), "rtt_alpha");
        assert_eq!(invalid(bad("rtt_alpha", ParamValue::Num(1.5))), "rtt_alpha");
        assert_eq!(invalid(bad("alpha", ParamValue::Bool(true))), "alpha");
    }

    #[test]
    fn registry_lists_own_and_inner_params_and_refuses_others() {
        for inner in [copa::INFO, rocc::INFO] {
            let name = format!("{}+dumbo", inner.name);
            assert!(super::super::listed_names().contains(&name));
            let params = super::super::params_of(&name).unwrap();
            let names: Vec<&str> = params.iter().map(|p| p.name).collect();
            assert_eq!(names.len(), OWN_PARAMS.len() + inner.params.len());
            for p in OWN_PARAMS.iter().chain(inner.params) {
                assert!(names.contains(&p.name), "{name} lacks {}", p.name);
            }
            // The wrapper must not shadow a parameter of the inner controller.
            for p in inner.params {
                assert!(!OWN_PARAMS.iter().any(|o| o.name == p.name), "{} shadows {}'s {}", name, inner.name, p.name);
            }
            let ctx = ControllerContext::default();
            let unknown = Params::new().with("bogus", ParamValue::Num(1.0));
            match super::super::create(&name, &unknown, &ctx).err() {
                Some(ConfigError { field, reason, .. }) => {
                    assert_eq!(field, "bogus");
                    assert!(reason.contains("latency_threshold") && reason.contains("standing_window"), "{reason}");
                }
                e => panic!("{e:?}"),
            }
            let invalid = Params::new().with("standing_window", ParamValue::Str("0s".into()));
            assert_eq!(
                super::super::create(&name, &invalid, &ctx).err().map(|e| e.field),
                Some("standing_window".to_string())
            );
        }
    }

    #[test]
    fn wraps_the_registered_copa_and_rocc() {
        use super::super::create;
        let ctx = ControllerContext::default();
        let num = |k: &str, v: f64| Params::new().with(k, ParamValue::Num(v));
        for (name, inner) in [("copa+dumbo", "copa"), ("rocc+dumbo", "rocc")] {
            let w = create(name, &Params::new(), &ctx).unwrap();
            let alone = create(inner, &Params::new(), &ctx).unwrap().decision();
            assert_eq!(w.name(), name);
            let d = w.decision();
            assert_eq!((d.cwnd, d.pacing_rate, d.padding_rate), (alone.cwnd, alone.pacing_rate, alone.pacing_rate));
            assert!(d.cwnd.is_some(), "{name} is window-based");
            assert_eq!(w.decision().skip_threshold, Some(MS * 100));
        }
        // Inner parameters reach the inner controller, whose errors name them.
        let invalid = |name: &str, p: &Params| match create(name, p, &ctx).err() {
            Some(e) => e.field,
            e => panic!("{e:?}"),
        };
        assert_eq!(invalid("copa+dumbo", &num("delta", 2.0)), "delta");
        assert_eq!(invalid("rocc+dumbo", &num("gamma", 20.0)), "gamma");
        assert_eq!(invalid("rocc+dumbo", &num("alpha", 0.0)), "alpha");
        let p = num("delta", 0.1).with("latency_threshold", ParamValue::Str("150ms".into()));
        assert_eq!(create("copa+dumbo", &p, &ctx).unwrap().decision().skip_threshold, Some(MS * 150));
        assert!(create("rocc+dumbo", &num("alpha", 0.5).with("c_bytes", ParamValue::Num(3000.0)), &ctx).is_ok());
        // One inner's parameters are not the other's.
        assert!(matches!(
            create("rocc+dumbo", &num("delta", 0.5), &ctx).err(),
            Some(ConfigError { field, reason, .. }) if field == "delta" && reason.starts_with("unknown parameter")
        ));
    }

    /// 100 ms of a run: bytes delivered by the bottleneck, the encoder target
    /// at its end, frames skipped in it.
    #[derive(Clone, Copy, Debug, Default)]
    struct Slot {
        media: u64,
        padding: u64,
        target: DataRate,
        skipped: u32,
    }

    /// The whole sender (lagging encoder, pacer, receiver with 50 ms reports)
    /// with `ctrl` over a FIFO bottleneck of `capacity(t)` without loss and
    /// 25 ms each way. Returns one `Slot` per 100 ms.
    fn run(ctrl: Box<dyn Controller>, capacity: fn(Time) -> DataRate, secs: i64) -> Vec<Slot> {
        let frame_interval = Duration::from_micros(33_333);
        let enc = EncoderConfig::Lagging {
            tau_up: Duration::from_millis(1300),
            tau_down: Duration::from_millis(300),
            sigma: 0.0,
            key_interval: None,
            key_ratio: 1.0,
        };
        // The format Copa and RoCC default to: it carries the receiver's hold time.
        let receiver = crate::receiver::ReceiverConfig {
            report_format: crate::feedback::ReportFormat::Rfc8888,
            ..Default::default()
        };
        let mut pair = Pair::builder()
            .controller(ctrl)
            .encoder(Box::new(Encoder::new(enc, frame_interval, Rng::new(1))))
            .receiver(receiver)
            .delay(MS * 25)
            .capacity(capacity)
            .build();
        let mut slots = vec![Slot::default(); (secs * 10) as usize];
        let slot = |t: Time| (t.as_micros() / 100_000) as usize;
        for (i, sl) in slots.iter_mut().enumerate() {
            pair.run_until(Time::from_millis(100 * (i as i64 + 1)));
            sl.target = pair.sender.target_rate();
        }
        for t in pair.delivered() {
            if let Some(sl) = slots.get_mut(slot(t.arrival.expect("delivered"))) {
                match t.packet.kind {
                    PacketKind::Media => sl.media += t.packet.size.bytes(),
                    PacketKind::Padding => sl.padding += t.packet.size.bytes(),
                    _ => {}
                }
            }
        }
        while let Some(f) = pair.sender.pop_frame() {
            if let Some(sl) = slots.get_mut(slot(f.capture)) {
                sl.skipped += u32::from(f.skipped);
            }
        }
        slots
    }

    /// Mean delivered media and padding rate and mean target over slots.
    fn mean_kbps(slots: &[Slot]) -> (f64, f64, f64) {
        let n = slots.len() as f64;
        let kbps = |b: u64| b as f64 * 8.0 / 100.0 / n;
        let media = kbps(slots.iter().map(|s| s.media).sum());
        let padding = kbps(slots.iter().map(|s| s.padding).sum());
        let target = slots.iter().map(|s| s.target.kbps_f64()).sum::<f64>() / n;
        (media, padding, target)
    }

    /// Dumbo around a fixed 45 kB window over a 3 Mbps link: while the
    /// lagging encoder climbs from 700 kbps, dummy packets fill the window,
    /// so the link is full from the first round trips — the backlogged look
    /// of Fig. 3-9.
    #[test]
    fn sender_fills_the_link_with_dummy_packets_while_the_encoder_lags() {
        let ctx = ControllerContext::default();
        let inner = FakeWindow::boxed(45_000, DataRate::from_mbps(6));
        let ctrl = Box::new(Dumbo::new("copa+dumbo", inner, DumboConfig::default(), &ctx));
        let slots = run(ctrl, |_| DataRate::from_mbps(3), 2);
        let (media, padding, target) = mean_kbps(&slots[5..15]);
        // Over 0.5–1.5 s the link carries its 3 Mbps, over a third of it
        // dummy bytes, while the encoder is still below its target.
        assert!(media + padding > 2950.0, "media {media} + padding {padding} kbps");
        assert!(padding > 1000.0, "padding {padding} kbps");
        assert!(media < 2000.0, "media {media} kbps");
        // cwnd/RTT with the report-arrival RTT (~108 ms) is ~3.3 Mbps: above
        // 3 Mbps only because the window, half emptied by each 50 ms report,
        // refills at the 6 Mbps pacing rate rather than at once. (Without the
        // hold time the RTT would be ~80 ms and the target ~4.4 Mbps.)
        assert!((3000.0..3500.0).contains(&target), "mean target {target} kbps");
    }

    /// Dumbo's headline (thesis §6.2.1, Figs. 6-3, 6-6): on a step from
    /// 500 kbps to 3 Mbps the wrapped controllers fill the link within about
    /// a second — padding covers the encoder's slow climb — while RoCC on its
    /// own waits for the encoder; once the encoder has caught up the padding
    /// is small and the target sits at the link rate.
    #[test]
    fn copa_and_rocc_with_dumbo_fill_a_stepped_up_link_within_seconds() {
        let ctx = ControllerContext::default();
        let step =
            |t: Time| if t < Time::from_millis(5000) { DataRate::from_kbps(500) } else { DataRate::from_mbps(3) };
        let delivered = |s: &Slot| (s.media + s.padding) as f64 * 8.0 / 100.0;
        for name in ["copa+dumbo", "rocc+dumbo", "rocc"] {
            let slots = run(super::super::create(name, &Params::new(), &ctx).unwrap(), step, 11);
            // First 100 ms after the step carrying 90 % of 3 Mbps.
            let up = slots[50..].iter().position(|s| delivered(s) >= 2700.0).map(|i| i as f64 * 0.1);
            let (media, padding, target) = mean_kbps(&slots[100..110]);
            if name == "rocc" {
                assert!(up.is_none_or(|t| t > 3.0), "{name}: 90 % after {up:?} s");
                continue;
            }
            // Measured 0.6 s (Copa) and 0.9 s (RoCC); the thesis reports
            // 250 ms and 700 ms on its WebRTC testbed.
            let limit = if name == "copa+dumbo" { 1.0 } else { 1.5 };
            assert!(up.is_some_and(|t| t <= limit), "{name}: 90 % after {up:?} s");
            // 5 s after the step: media carries the link, padding < 10 %.
            assert!(media + padding > 2850.0, "{name}: media {media} + padding {padding} kbps");
            assert!(padding < 300.0, "{name}: padding {padding} kbps");
            assert!((2700.0..3300.0).contains(&target), "{name}: mean target {target} kbps");
        }
    }
}
