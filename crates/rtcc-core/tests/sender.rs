//! Unit tests of `Sender`, with hand-computed numbers: packetization, frame
//! skipping, pacing and frame schedules, FEC plans, NACK retransmission,
//! in-flight accounting, audio, and what the controller is told.
//!
//! Driven through `rtcc_core::pair::Pair`. A scripted encoder fixes every
//! frame's size and a recording controller fixes the decisions (switching
//! them from its own timer, as a real controller would) and records every
//! callback. Where a test needs exact reports it silences the path (every
//! packet dropped, so the receiver never reports) and hands the sender
//! reports it wrote itself.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use rtcc_core::controller::{
    Controller, Decision, FecPlan, FrameInfo, FramePos, FrameSchedule, SenderState, SentPacket,
};
use rtcc_core::encoder::{EncodedFrame, FrameEncoder};
use rtcc_core::fec::FecConfig;
use rtcc_core::feedback::{Feedback, ReceiverReport, ReportFormat};
use rtcc_core::pacer::PacerConfig;
use rtcc_core::packet::{abs_send_time, Packet, PacketKind, FLAG_FIRST, FLAG_KEY, FLAG_MARKER, NO_FRAME};
use rtcc_core::pair::Pair;
use rtcc_core::receiver::ReceiverConfig;
use rtcc_core::resolution::Resolution;
use rtcc_core::sender::{AudioConfig, SenderConfig};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

fn ms(x: i64) -> Time {
    Time::from_millis(x)
}

const MS: Duration = Duration::from_millis(1);

fn kbps(x: u64) -> DataRate {
    DataRate::from_kbps(x)
}

/// Everything the recording controller was told, and its decisions.
#[derive(Default)]
struct Log {
    decision: Decision,
    /// Decisions to switch to, each from its time on (via `on_timeout`).
    script: VecDeque<(Time, Decision)>,
    calls: Vec<(&'static str, Time)>,
    sent: Vec<SentPacket>,
    feedback: Vec<Feedback>,
    frames: Vec<FrameInfo>,
    states: Vec<(Time, SenderState)>,
}

/// A controller that records every callback, asserts that `now` never goes
/// backwards across them, and decides what its script says.
#[derive(Clone)]
struct Recorder(Arc<Mutex<Log>>);

impl Recorder {
    fn new(decision: Decision) -> Self {
        Recorder(Arc::new(Mutex::new(Log { decision, ..Log::default() })))
    }
    /// Switch to `d` at `at`.
    fn then(self, at: Time, d: Decision) -> Self {
        self.log().script.push_back((at, d));
        self
    }
    fn log(&self) -> MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn boxed(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn call(&self, what: &'static str, now: Time) -> MutexGuard<'_, Log> {
        let mut log = self.log();
        if let Some(&(prev, at)) = log.calls.last() {
            assert!(now >= at, "{what} at {now} after {prev} at {at}: time went backwards");
        }
        log.calls.push((what, now));
        log
    }
    fn sent(&self, kind: PacketKind) -> Vec<SentPacket> {
        self.log().sent.iter().filter(|p| p.kind == kind).copied().collect()
    }
}

impl Controller for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn on_packet_sent(&mut self, now: Time, packet: &SentPacket) {
        self.call("sent", now).sent.push(*packet);
    }
    fn on_feedback(&mut self, now: Time, feedback: &Feedback) {
        self.call("feedback", now).feedback.push(feedback.clone());
    }
    fn on_frame_encoded(&mut self, now: Time, frame: &FrameInfo) {
        self.call("frame", now).frames.push(*frame);
    }
    fn on_sender_state(&mut self, now: Time, state: &SenderState) {
        self.call("state", now).states.push((now, *state));
    }
    fn on_timeout(&mut self, now: Time) {
        let mut log = self.call("timeout", now);
        while let Some((_, d)) = log.script.front().copied().filter(|s| s.0 <= now) {
            log.decision = d;
            log.script.pop_front();
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.log().script.front().map(|s| s.0)
    }
    fn decision(&self) -> Decision {
        self.log().decision
    }
}

/// What the scripted encoder was asked.
#[derive(Default)]
struct EncLog {
    /// Sizes of the next frames; the last one repeats.
    sizes: VecDeque<u64>,
    last: u64,
    key_pending: bool,
    /// (frame id, capture time, target) of each encoded frame.
    encoded: Vec<(u32, Time, DataRate)>,
    /// (capture time, target) of each skipped frame.
    skipped: Vec<(Time, DataRate)>,
}

/// An encoder whose frames have the sizes it is given; the first frame and
/// requested ones are key frames.
#[derive(Clone)]
struct Script(Arc<Mutex<EncLog>>);

impl Script {
    fn new(sizes: &[u64]) -> Self {
        Script(Arc::new(Mutex::new(EncLog {
            sizes: sizes.iter().copied().collect(),
            key_pending: true,
            ..EncLog::default()
        })))
    }
    fn log(&self) -> MutexGuard<'_, EncLog> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn boxed(&self) -> Box<dyn FrameEncoder> {
        Box::new(self.clone())
    }
}

impl FrameEncoder for Script {
    fn kind(&self) -> &str {
        "script"
    }
    fn encode_frame(&mut self, id: u32, now: Time, target: DataRate, _: Resolution) -> Option<EncodedFrame> {
        let mut log = self.log();
        let size = log.sizes.pop_front().unwrap_or(log.last);
        log.last = size;
        let key = std::mem::take(&mut log.key_pending);
        log.encoded.push((id, now, target));
        Some(EncodedFrame::sized(DataSize::from_bytes(size), key))
    }
    fn request_key_frame(&mut self) {
        self.log().key_pending = true;
    }
    fn skip(&mut self, now: Time, target: DataRate) {
        self.log().skipped.push((now, target));
    }
    fn output_rate(&self) -> DataRate {
        DataRate::ZERO
    }
}

/// A frame every `interval_ms`, MTU 1200 B, otherwise the defaults.
fn flow(interval_ms: i64) -> SenderConfig {
    SenderConfig { frame_interval: MS * interval_ms, ..SenderConfig::default() }
}

/// A controller that sends every frame's packets at once: 1 Mbps target,
/// `pacing` for the pacer.
fn bursts(pacing: DataRate) -> Recorder {
    Recorder::new(Decision { schedule: FrameSchedule::Burst, ..Decision::rates(kbps(1000), pacing) })
}

/// A pair whose receiver never hears anything, so never reports.
fn silent(cfg: SenderConfig, ctl: &Recorder, enc: &Script) -> Pair {
    Pair::builder().sender(cfg).controller(ctl.boxed()).encoder(enc.boxed()).drop(|_| true).build()
}

/// Send times and sizes of `kind` packets put on the wire.
fn wire(pair: &Pair, kind: PacketKind) -> Vec<(Time, u64)> {
    pair.sent().iter().filter(|t| t.packet.kind == kind).map(|t| (t.sent.send_time, t.packet.size.bytes())).collect()
}

fn send_times(pair: &Pair, kind: PacketKind) -> Vec<Time> {
    wire(pair, kind).into_iter().map(|w| w.0).collect()
}

/// A report sent at `report_time` with these arrivals (ms) and NACKs.
fn report(report_time: i64, arrivals: &[(u64, Option<i64>)], nacks: &[u32]) -> ReceiverReport {
    ReceiverReport {
        report_time: ms(report_time),
        arrivals: arrivals.iter().map(|&(s, a)| (s, a.map(ms))).collect(),
        nacks: nacks.to_vec(),
        ..ReceiverReport::default()
    }
}

#[test]
fn packetization_splits_each_frame_evenly_at_the_mtu() {
    let ctl = Recorder::new(Decision::rates(DataRate::from_mbps(1), DataRate::from_mbps(100)));
    let enc = Script::new(&[5003, 2400, 1, 3601]);
    let mut pair = silent(flow(100), &ctl, &enc);
    pair.run_until(ms(399));
    let media: Vec<&Packet> = pair.sent().iter().map(|t| &t.packet).collect();
    let sizes = |f: u16| media.iter().filter(|p| p.frame == f).map(|p| p.size.bytes()).collect::<Vec<_>>();
    // ceil(5003 / 1200) = 5 packets of 5003 / 5 = 1000 B, the 3 B left over
    // going one each to the first three.
    assert_eq!(sizes(0), [1001, 1001, 1001, 1000, 1000]);
    assert_eq!(sizes(1), [1200, 1200]);
    assert_eq!(sizes(2), [1]);
    // 3601 B: 4 packets of 900 B and one byte over.
    assert_eq!(sizes(3), [901, 900, 900, 900]);
    assert_eq!(media.len(), 12);
    for (i, p) in media.iter().enumerate() {
        assert_eq!(p.kind, PacketKind::Media);
        assert_eq!(p.seq, i as u16);
        assert_eq!(p.media_seq, i as u16, "media sequence numbers run on across frames");
        assert_eq!(p.flags & FLAG_KEY != 0, p.frame == 0, "only the first frame is a key frame");
    }
    // The wire marks each frame's first packet (the descriptor's start bit)
    // and last (the marker bit); the sender's record has the rest.
    let bits: Vec<(u16, bool, bool)> =
        media.iter().map(|p| (p.frame, p.flags & FLAG_FIRST != 0, p.flags & FLAG_MARKER != 0)).collect();
    let pos: Vec<(u32, u16, u16)> =
        pair.sent().iter().map(|t| (t.sent.pos.frame, t.sent.pos.index, t.sent.pos.count)).collect();
    let (mut expect, mut expect_bits) = (vec![], vec![]);
    for (f, n) in [(0, 5), (1, 2), (2, 1), (3, 4)] {
        expect.extend((0..n).map(|i| (f, i, n)));
        expect_bits.extend((0..n).map(|i| (f as u16, i == 0, i + 1 == n)));
    }
    assert_eq!(pos, expect);
    assert_eq!(bits, expect_bits);
    // The controller hears of each frame once, whole.
    let log = ctl.log();
    let frames: Vec<(u32, u64, u16, bool)> =
        log.frames.iter().map(|f| (f.frame, f.size.bytes(), f.packets, f.key)).collect();
    assert_eq!(frames, [(0, 5003, 5, true), (1, 2400, 2, false), (2, 1, 1, false), (3, 3601, 4, false)]);
    assert_eq!(log.frames[1].capture_time, ms(100));
    // Queue and in-flight bytes after the frame is queued and after each send
    // (no reports: everything stays in flight).
    let states: Vec<(u64, usize, u64)> =
        log.states[..6].iter().map(|(_, s)| (s.queued.bytes(), s.queued_packets, s.in_flight.bytes())).collect();
    assert_eq!(
        states,
        [(5003, 5, 0), (4002, 4, 1001), (3001, 3, 2002), (2000, 2, 3003), (1000, 1, 4003), (0, 0, 5003)]
    );
    drop(log);
    let f0 = pair.sender.frame(0).expect("frame 0 kept");
    assert_eq!((f0.size, f0.packets, f0.key, f0.first_sent), (DataSize::from_bytes(5003), 5, true, Some(ms(0))));
    // Each packet waits for its predecessor's bytes at 100 Mbps: 1001 B take
    // 80.08 µs, rounded up to 81 µs (three times), 1000 B take 80 µs.
    assert_eq!(f0.last_sent, Some(Time::from_micros(3 * 81 + 80)));
    // The frame being sent keeps its send times in the sender until the
    // next frame's packets go: what `frame` shows is what is collected.
    let shown: Vec<_> = (0..4).map(|i| pair.sender.frame(i).expect("frame kept")).collect();
    assert!(shown.iter().all(|f| f.first_sent.is_some() && f.last_sent >= f.first_sent), "{shown:?}");
    assert!(shown[3].last_sent > shown[2].last_sent);
    let popped: Vec<_> = std::iter::from_fn(|| pair.sender.pop_frame()).collect();
    assert_eq!(popped, shown);
}

#[test]
fn frames_are_skipped_past_the_smaller_of_the_flow_and_controller_thresholds() {
    // 5000 B frames every 40 ms for a 1 Mbps target, paced at 8 kbps: one
    // 1000 B packet leaves at 0 and the next not before 1 s, so the queue
    // holds 4000 B at 40 ms (32 ms at the target rate), 9000 B at 80 ms
    // (72 ms) and 14000 B at 120 ms (112 ms) if nothing is skipped. Only the
    // target rate counts: at the pacing rate 4000 B are already 4 s.
    let skipped_captures = |flow_th: Option<i64>, ctl_th: Option<i64>| {
        let cfg = SenderConfig {
            skip_threshold: flow_th.map(|t| MS * t),
            pause_on_queue_limit: false,
            pacer: PacerConfig { queue_time_limit: None, ..PacerConfig::default() },
            ..flow(40)
        };
        let d = Decision { skip_threshold: ctl_th.map(|t| MS * t), ..Decision::rates(kbps(1000), kbps(8)) };
        let ctl = Recorder::new(d);
        let enc = Script::new(&[5000]);
        let mut pair = silent(cfg, &ctl, &enc);
        pair.run_until(ms(160));
        let log = enc.log();
        let skipped: Vec<i64> = log.skipped.iter().map(|s| s.0.as_micros() / 1000).collect();
        let encoded: Vec<i64> = log.encoded.iter().map(|e| e.1.as_micros() / 1000).collect();
        assert_eq!(skipped.len() + encoded.len(), 5, "every capture is encoded or skipped");
        // The sender's frame records agree: skipped captures carry no frame.
        let mut records = vec![];
        while let Some(f) = pair.sender.pop_frame() {
            records.push((f.capture.as_micros() / 1000, f.skipped, f.frame == NO_FRAME));
        }
        let expect: Vec<(i64, bool, bool)> =
            (0..5).map(|i| (i * 40, skipped.contains(&(i * 40)), skipped.contains(&(i * 40)))).collect();
        assert_eq!(records, expect);
        skipped
    };
    assert_eq!(skipped_captures(None, None), Vec::<i64>::new());
    assert_eq!(skipped_captures(Some(100), None), [120, 160]);
    assert_eq!(skipped_captures(None, Some(100)), [120, 160]);
    // The smaller threshold wins, whichever side sets it.
    assert_eq!(skipped_captures(Some(100), Some(60)), [80, 120, 160]);
    assert_eq!(skipped_captures(Some(60), Some(100)), [80, 120, 160]);
    // A queue of exactly the threshold is not over it.
    assert_eq!(skipped_captures(Some(72), None), [120, 160]);
}

#[test]
fn a_cwnd_reduce_ratio_drops_frames_and_lowers_the_target_as_libwebrtcs_encoder() {
    // libwebrtc VideoStreamEncoder::UpdateTargetBitrate: one capture in
    // max(2, target / (target·ratio)) dropped, the first of each interval,
    // and target / interval taken off the encoder target; nothing at 1 % or
    // below, or at the codec's minimum.
    let run = |ratio: f64, target: u64| {
        let d = Decision { cwnd_reduce_ratio: ratio, ..Decision::rates(kbps(target), kbps(100_000)) };
        let ctl = Recorder::new(d);
        let enc = Script::new(&[1000]);
        let mut pair = silent(flow(10), &ctl, &enc);
        pair.run_until(ms(95));
        let log = enc.log();
        let skipped: Vec<i64> = log.skipped.iter().map(|s| s.0.as_micros() / 1000).collect();
        let targets: Vec<u64> = log.encoded.iter().map(|e| e.2.bps()).collect();
        (skipped, targets, pair.sender.counters().cwnd_drops)
    };
    // 1000 kbps · 0.2 = 200 kbps: interval 5, encoder target 800 kbps.
    let (skipped, targets, drops) = run(0.2, 1000);
    assert_eq!(skipped, [0, 50]);
    assert_eq!(drops, 2);
    assert!(targets.iter().all(|&t| t == 800_000), "{targets:?}");
    // Above 0.5 it is still one frame in two, and half the target.
    let (skipped, targets, _) = run(0.9, 1000);
    assert_eq!(skipped, [0, 20, 40, 60, 80]);
    assert!(targets.iter().all(|&t| t == 500_000), "{targets:?}");
    // The reduction stops at the flow's minimum (30 kbps): 40 kbps · 0.9
    // would be 36 kbps, capped at 10 kbps, so one frame in four.
    let (skipped, targets, _) = run(0.9, 40);
    assert_eq!(skipped, [0, 40, 80]);
    assert!(targets.iter().all(|&t| t == 30_000), "{targets:?}");
    // 1 % or less, or a target at the minimum: no drops.
    assert_eq!(run(0.01, 1000).2, 0);
    assert_eq!(run(0.5, 30).2, 0);
}

#[test]
fn the_pacing_rate_spaces_packets() {
    // 6000 B frames every 100 ms = five 1200 B packets; 1200 B at 960 kbps
    // is 10 ms, at 480 kbps (from 100 ms on) 20 ms.
    let ctl =
        Recorder::new(Decision::rates(kbps(1000), kbps(960))).then(ms(100), Decision::rates(kbps(1000), kbps(480)));
    let enc = Script::new(&[6000]);
    let mut pair = silent(flow(100), &ctl, &enc);
    pair.run_until(ms(199));
    let t: Vec<Time> = send_times(&pair, PacketKind::Media);
    assert_eq!(t, [0, 10, 20, 30, 40, 100, 120, 140, 160, 180].map(ms));
    assert_eq!(pair.sender.pacer().pacing_rate(), kbps(480));
}

#[test]
fn frame_schedules_burst_then_pace() {
    // 6000 B frames every 100 ms = five 1200 B packets, paced at 960 kbps
    // (10 ms per packet).
    let times = |schedule: FrameSchedule| {
        let ctl = Recorder::new(Decision { schedule, ..Decision::rates(kbps(1000), kbps(960)) });
        let enc = Script::new(&[6000]);
        let mut pair = silent(flow(100), &ctl, &enc);
        pair.run_until(ms(199));
        send_times(&pair, PacketKind::Media)
    };
    assert_eq!(times(FrameSchedule::Paced), [0, 10, 20, 30, 40, 100, 110, 120, 130, 140].map(ms));
    assert_eq!(times(FrameSchedule::Burst), [0, 0, 0, 0, 0, 100, 100, 100, 100, 100].map(ms));
    // Two at once; their 2400 B count against the pacing budget, so the
    // third waits 20 ms.
    assert_eq!(
        times(FrameSchedule::BurstThenPaced { packets: 2 }),
        [0, 0, 20, 30, 40, 100, 100, 120, 130, 140].map(ms)
    );
    assert_eq!(times(FrameSchedule::BurstThenPaced { packets: 9 }), times(FrameSchedule::Burst));
    // PIBES eq. 1: max(3, min(⌈5/2⌉, 6)) = 3 at once, the rest paced.
    assert_eq!(times(FrameSchedule::HalfBurst { min: 3, max: 6 }), [0, 0, 0, 30, 40, 100, 100, 100, 130, 140].map(ms));
    assert_eq!(times(FrameSchedule::HalfBurst { min: 1, max: 2 }), times(FrameSchedule::BurstThenPaced { packets: 2 }));
    // BurstRTC §IV-A1: 5 ≥ 2·2 packets, so ⌊5/2⌋ = 2 leave at once after
    // the three paced ones, at 20 ms with the third; their bytes are paid
    // back at 960 kbps by 50 ms, before the next frame.
    let paced_then_burst = |min, max, small_burst| FrameSchedule::PacedThenBurst { min, max, small_burst };
    assert_eq!(times(paced_then_burst(2, 20, false)), [0, 10, 20, 20, 20, 100, 110, 120, 120, 120].map(ms));
    // A burst above `max` gives its excess to the paced part.
    assert_eq!(times(paced_then_burst(2, 1, false)), [0, 10, 20, 30, 30, 100, 110, 120, 130, 130].map(ms));
    // Under 2·min packets a frame is one part, burst or paced as told.
    assert_eq!(times(paced_then_burst(3, 20, true)), times(FrameSchedule::Burst));
    assert_eq!(times(paced_then_burst(3, 20, false)), times(FrameSchedule::Paced));
}

/// A controller that alternates BurstRTC's small-frame schedule by the id
/// of the frame to come: even frames burst, odd ones paced (§IV-A1).
struct Alternate {
    next: u32,
}

impl Controller for Alternate {
    fn name(&self) -> &str {
        "alternate"
    }
    fn on_frame_encoded(&mut self, _now: Time, frame: &FrameInfo) {
        self.next = frame.frame + 1;
    }
    fn decision(&self) -> Decision {
        let schedule = FrameSchedule::PacedThenBurst { min: 4, max: 20, small_burst: self.next.is_multiple_of(2) };
        Decision { schedule, ..Decision::rates(kbps(1000), kbps(960)) }
    }
}

#[test]
fn a_schedule_chosen_after_each_frame_applies_to_the_next() {
    // Five-packet frames are under 2·4: frame 0 bursts, frame 1 is paced
    // (the decision read after frame 0's `on_frame_encoded`), frame 2
    // bursts again; 12 000 B frames (10 packets) split 5 + 5.
    let enc = Script::new(&[6000, 6000, 6000, 12000]);
    let mut pair = Pair::builder()
        .sender(flow(100))
        .controller(Box::new(Alternate { next: 0 }))
        .encoder(enc.boxed())
        .drop(|_| true)
        .build();
    pair.run_until(ms(399));
    let t = send_times(&pair, PacketKind::Media);
    let mut want = vec![0, 0, 0, 0, 0, 100, 110, 120, 130, 140, 200, 200, 200, 200, 200];
    want.extend([300, 310, 320, 330, 340, 340, 340, 340, 340, 340]);
    assert_eq!(t, want.into_iter().map(ms).collect::<Vec<_>>());
}

#[test]
fn an_fec_plan_sets_the_parity_count_per_frame() {
    // Five 1200 B media packets per frame, a frame every 100 ms, paced fast
    // enough that each frame and its parities leave within its 100 ms.
    let rates = Decision::rates(kbps(1000), DataRate::from_mbps(10));
    let plan = |group| Decision { fec: Some(FecPlan { group }), ..rates };
    let parities_per_frame = |fec: Option<FecConfig>| {
        let ctl = Recorder::new(rates)
            .then(ms(100), plan(2))
            .then(ms(200), plan(5))
            .then(ms(300), plan(0))
            .then(ms(400), plan(1))
            // No plan leaves FEC as it is.
            .then(ms(500), rates);
        let enc = Script::new(&[6000]);
        let mut pair = silent(SenderConfig { fec, ..flow(100) }, &ctl, &enc);
        pair.run_until(ms(599));
        let fec = wire(&pair, PacketKind::Fec);
        assert!(fec.iter().all(|&(_, size)| size == 1214), "1200 B + 14 B of headers: {fec:?}");
        let parities: Vec<usize> =
            (0..6).map(|f| fec.iter().filter(|(t, _)| *t >= ms(100 * f) && *t < ms(100 * f + 100)).count()).collect();
        let media = wire(&pair, PacketKind::Media);
        assert_eq!(media.len(), 30);
        (parities, pair)
    };
    // No FEC configured; group 2 closes groups of 2, 2 and (at the frame's
    // end) 1; group 5 one; group 0 none; group 1 one per packet.
    let (parities, pair) = parities_per_frame(None);
    assert_eq!(parities, [0, 3, 1, 0, 5, 5]);
    let groups: Vec<(u16, u16)> = pair
        .sent()
        .iter()
        .filter(|t| t.packet.kind == PacketKind::Fec)
        .take(4)
        .map(|t| (t.packet.media_seq, t.packet.group))
        .collect();
    assert_eq!(groups, [(5, 2), (7, 2), (9, 1), (10, 5)]);
    // Configured FEC (one parity per 10, closed at each 5-packet frame's end)
    // until the first plan.
    let (parities, _) = parities_per_frame(Some(FecConfig::default()));
    assert_eq!(parities, [1, 3, 1, 0, 5, 5]);
}

#[test]
fn the_flows_own_fec_comes_out_of_the_encoder_target_and_a_plan_rides_on_top() {
    // 6000 B frames = five 1200 B packets; the flow's FEC with one parity per
    // frame (group 5): parity 1214 B per 6000 B of media, 20.2 %.
    let targets = |fec: Option<FecConfig>, d: Decision| {
        let ctl = Recorder::new(d);
        let enc = Script::new(&[6000]);
        let mut pair = silent(SenderConfig { fec, ..flow(100) }, &ctl, &enc);
        pair.run_until(ms(3000));
        let log = enc.log();
        log.encoded.last().map(|e| e.2.bps()).unwrap_or(0)
    };
    let rates = Decision::rates(kbps(1000), DataRate::from_mbps(10));
    let fec = FecConfig { group: 5, ..FecConfig::default() };
    let with = targets(Some(fec), rates);
    // libwebrtc: encoder target = target − protection; here 1 Mbps / 1.202.
    assert!((with as f64 - 1e6 / (1.0 + 1214.0 / 6000.0)).abs() < 5_000.0, "{with}");
    assert_eq!(targets(None, rates), 1_000_000);
    // FBRA's FEC plan is a probe on top of the media rate: the target stays.
    let planned = Decision { fec: Some(FecPlan { group: 5 }), ..rates };
    assert_eq!(targets(None, planned), 1_000_000);
}

/// Run to `t` and hand the sender `r` then.
fn report_at(pair: &mut Pair, t: Time, r: &ReceiverReport) {
    pair.run_until(t);
    pair.sender.handle_report(pair.now(), r);
}

#[test]
fn nacked_media_is_retransmitted_while_young_and_once_per_rtt() {
    // Three 1000 B packets per frame every 100 ms, each frame sent at once
    // (and its 3000 B of pacing debt gone 240 µs later at 100 Mbps): frame k
    // is media sequence 3k..3k+3. Media younger than 150 ms is retransmitted.
    let ctl = bursts(DataRate::from_mbps(100));
    let cfg = SenderConfig { nack: Some(MS * 150), ..flow(100) };
    let mut pair = silent(cfg, &ctl, &Script::new(&[3000]));
    // Packet 0 arrived at 20 ms, reported at once, back at 50 ms: RTT 50 ms.
    // The NACK of media 1 in the same report is served at once.
    report_at(&mut pair, ms(50), &report(20, &[(0, Some(20))], &[1]));
    // 30 ms later: within the 50 ms RTT, not again.
    report_at(&mut pair, ms(80), &report(80, &[], &[1]));
    // 51 ms later: again (with the default 100 ms RTT it would not be).
    report_at(&mut pair, ms(101), &report(101, &[], &[1]));
    // Media 0 is exactly 150 ms old at 150 ms: still sent.
    report_at(&mut pair, ms(150), &report(150, &[], &[0]));
    // Media 2, 1 µs older than that, is not; nor is a sequence never sent.
    report_at(&mut pair, ms(150) + Duration::from_micros(1), &report(150, &[], &[2, 999]));
    // At 250 ms media 3 (frame 1, captured at 100 ms) is 150 ms old: sent;
    // media 2 has been forgotten.
    report_at(&mut pair, ms(250), &report(250, &[], &[2, 3]));
    pair.run_until(ms(399));
    let rtx: Vec<(Time, u16)> = pair
        .sent()
        .iter()
        .filter(|t| t.packet.kind == PacketKind::Rtx)
        .map(|t| (t.sent.send_time, t.packet.media_seq))
        .collect();
    assert_eq!(rtx, [(ms(50), 1), (ms(101), 1), (ms(150), 0), (ms(250), 3)]);
    // A retransmission is the original packet again: same place in its
    // frame, and the controller is told so.
    let sent = ctl.sent(PacketKind::Rtx);
    let pos: Vec<FramePos> = sent.iter().map(|p| p.pos).collect();
    let at = |frame, index| FramePos { frame, index, count: 3 };
    assert_eq!(pos, [at(0, 1), at(0, 1), at(0, 0), at(1, 0)]);
    // Two bytes more than the original: its sequence number before the
    // payload (RFC 4588 §4).
    assert!(sent.iter().all(|p| p.size == DataSize::from_bytes(1002)));
    // Retransmissions take transport sequence numbers, not media ones.
    let media: Vec<u16> =
        pair.sent().iter().filter(|t| t.packet.kind == PacketKind::Media).map(|t| t.packet.media_seq).collect();
    assert_eq!(media, (0..12).collect::<Vec<u16>>());

    // Without `nack` the sender keeps nothing to retransmit.
    let ctl = bursts(DataRate::from_mbps(100));
    let mut pair = silent(flow(100), &ctl, &Script::new(&[3000]));
    pair.run_until(ms(50));
    pair.sender.handle_report(pair.now(), &report(20, &[(0, Some(20))], &[1]));
    pair.run_until(ms(99));
    assert!(wire(&pair, PacketKind::Rtx).is_empty());
}

#[test]
fn in_flight_settles_when_reports_cover_packets_even_if_one_is_lost() {
    // One 5000 B frame (five 1000 B packets, sent at once at 0 ms) per second.
    let ctl = bursts(DataRate::from_mbps(10));
    let mut pair = silent(flow(1000), &ctl, &Script::new(&[5000]));
    pair.run_until(ms(10));
    let in_flight: Vec<u64> = ctl.log().sent.iter().map(|p| p.in_flight.bytes()).collect();
    assert_eq!(in_flight, [1000, 2000, 3000, 4000, 5000]);
    assert_eq!(pair.sender.in_flight(), DataSize::from_bytes(5000));
    // Packets 0 and 2 arrived, 1 was lost: all three leave the count.
    let first = report(30, &[(0, Some(25)), (1, None), (2, Some(27))], &[]);
    pair.run_until(ms(60));
    pair.sender.handle_report(pair.now(), &first);
    assert_eq!(pair.sender.in_flight(), DataSize::from_bytes(2000));
    // The same report again changes nothing.
    pair.run_until(ms(70));
    pair.sender.handle_report(pair.now(), &first);
    assert_eq!(pair.sender.in_flight(), DataSize::from_bytes(2000));
    // The report covering packet 3 is lost; the next covers packet 4 only.
    // Packet 3, older than the newest reported, is settled too.
    pair.run_until(ms(160));
    pair.sender.handle_report(pair.now(), &report(130, &[(4, Some(125))], &[]));
    assert_eq!(pair.sender.in_flight(), DataSize::ZERO);
    // The controller saw only what was reported: 3 + 3 + 1 packets.
    let seqs: Vec<Vec<u64>> = ctl.log().feedback.iter().map(|f| f.packets.iter().map(|p| p.seq).collect()).collect();
    assert_eq!(seqs, [vec![0, 1, 2], vec![0, 1, 2], vec![4]]);

    // With every report lost, packets leave the count when the history
    // (300 ms here) forgets them, at the sender's next timeout (the next
    // frame, at 1 s): frame 1's first packet then has only itself in flight.
    // (No sender reports, whose timer would wake it earlier.)
    let ctl = bursts(DataRate::from_mbps(10));
    let cfg = SenderConfig { history: MS * 300, rtcp_interval: None, ..flow(1000) };
    let mut pair = silent(cfg, &ctl, &Script::new(&[5000]));
    pair.run_until(ms(999));
    assert_eq!(pair.sender.in_flight(), DataSize::from_bytes(5000));
    pair.run_until(ms(1000));
    let in_flight: Vec<u64> = ctl.log().sent.iter().map(|p| p.in_flight.bytes()).collect();
    assert_eq!(in_flight, [1000, 2000, 3000, 4000, 5000, 1000, 2000, 3000, 4000, 5000]);
}

#[test]
fn audio_takes_its_rate_off_the_video_target() {
    // Opus-like audio, 32 kbps in 20 ms packets of 32 kbps × 20 ms = 80 B.
    let audio = AudioConfig { rate: kbps(32), ptime: MS * 20 };
    let cfg = SenderConfig { audio: Some(audio), ..flow(100) };
    // 1 Mbps, then 50 kbps from 500 ms: 50 − 32 = 18 kbps is below the
    // flow's 30 kbps minimum, so the encoder gets 30 kbps.
    let fast = DataRate::from_mbps(10);
    let ctl = Recorder::new(Decision::rates(kbps(1000), fast)).then(ms(500), Decision::rates(kbps(50), fast));
    let enc = Script::new(&[1000]);
    let mut pair = silent(cfg, &ctl, &enc);
    pair.run_until(ms(999));
    let targets: Vec<u64> = enc.log().encoded.iter().map(|e| e.2.bps()).collect();
    assert_eq!(targets, [968_000, 968_000, 968_000, 968_000, 968_000, 30_000, 30_000, 30_000, 30_000, 30_000]);
    assert_eq!(pair.sender.target_rate(), kbps(30));
    // Audio goes first: one 80 B packet every 20 ms, on time.
    let audio = wire(&pair, PacketKind::Audio);
    let expect: Vec<(Time, u64)> = (0..50).map(|i| (ms(20 * i), 80)).collect();
    assert_eq!(audio, expect);
    // Audio packets belong to no frame.
    assert!(ctl.sent(PacketKind::Audio).iter().all(|p| p.pos == FramePos::NONE));
}

/// A busy call over a lossy, capacity-limited path with every sender
/// feature on: the recorder asserts on every callback that `now` did not go
/// backwards; and every feedback record matches the packet sent.
#[test]
fn the_controller_sees_time_move_forward_and_results_match_what_was_sent() {
    let base = Decision {
        cwnd: Some(DataSize::from_bytes(30_000)),
        padding_rate: kbps(300),
        schedule: FrameSchedule::BurstThenPaced { packets: 2 },
        ..Decision::rates(kbps(1200), kbps(1500))
    };
    let mut ctl = Recorder::new(base);
    for (i, g) in [2u16, 0, 4, 1, 0, 3].into_iter().enumerate() {
        let t = ms(250 + 300 * i as i64);
        ctl = ctl.then(t, Decision { fec: Some(FecPlan { group: g }), skip_threshold: Some(MS * 80), ..base });
    }
    let cfg = SenderConfig {
        nack: Some(MS * 300),
        audio: Some(AudioConfig { rate: kbps(32), ptime: MS * 20 }),
        fec: Some(FecConfig::default()),
        ..SenderConfig::default()
    };
    let enc = Script::new(&[9000, 3000, 4000, 2500, 5000, 3500]);
    let mut pair = Pair::builder()
        .sender(cfg)
        .receiver(ReceiverConfig { nack: true, ..ReceiverConfig::default() })
        .controller(ctl.boxed())
        .encoder(enc.boxed())
        .delay(MS * 20)
        .reverse_delay(MS * 35)
        .bottleneck(kbps(1000))
        .loss(0.05, 3)
        .build();
    pair.run_until(ms(2500));
    let log = ctl.log();
    let count = |what: &str| log.calls.iter().filter(|c| c.0 == what).count();
    for what in ["sent", "feedback", "frame", "state", "timeout"] {
        assert!(count(what) > 0, "no {what} callback");
    }
    assert_eq!(count("timeout"), 6);
    assert!(count("sent") > 300, "{} sent", count("sent"));
    assert!(log.calls.windows(2).all(|w| w[0].1 <= w[1].1));
    // Every packet told to the controller is the one put on the wire.
    let wire = pair.sent();
    assert_eq!(log.sent.len(), wire.len());
    for (s, t) in log.sent.iter().zip(wire) {
        let p = &t.packet;
        assert_eq!(*s, t.sent);
        assert_eq!((s.seq as u16, s.kind, s.size), (p.seq, p.kind, p.size));
        assert_eq!(abs_send_time(s.send_time), p.abs_send_time);
        // Parities claim no place in a frame (see the next test).
        if p.kind == PacketKind::Fec {
            assert_eq!(s.pos, FramePos::NONE);
        } else if p.is_frame_data() {
            let bits = (p.frame, p.flags & FLAG_FIRST != 0, p.flags & FLAG_MARKER != 0);
            assert_eq!(bits, (s.pos.frame as u16, s.pos.index == 0, s.pos.is_last()));
        }
    }
    // Every result names the packet it reports, with the receiver's arrival.
    let mut results = 0;
    for fb in &log.feedback {
        for r in &fb.packets {
            let s = &log.sent[r.seq as usize];
            assert_eq!((r.kind, r.size, r.send_time, r.pos), (s.kind, s.size, s.send_time, s.pos), "seq {}", r.seq);
            // As TWCC carries it: 250 us ticks that never drift from the
            // reference (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1.5).
            let (got, truth) = (r.arrival, wire[r.seq as usize].arrival);
            let close = match (got, truth) {
                (Some(g), Some(t)) => g.as_micros() % 250 == 0 && (g - t).as_micros().abs() <= 125,
                (g, t) => g == t,
            };
            assert!(close, "seq {}: {got:?} against {truth:?}", r.seq);
            results += 1;
        }
    }
    for k in [PacketKind::Rtx, PacketKind::Fec, PacketKind::Padding, PacketKind::Audio] {
        assert!(log.sent.iter().any(|p| p.kind == k), "no {} packet", k.name());
    }
    assert!(results > 300, "{results} results");
}

#[test]
fn packet_results_carry_frame_position_and_lateness() {
    // Frame 0: three 1000 B packets at 0 ms; frame 1 one 1000 B packet at 100 ms.
    let ctl = bursts(DataRate::from_mbps(10));
    let mut pair = silent(flow(100), &ctl, &Script::new(&[3000, 1000]));
    pair.run_until(ms(150));
    // Packet 1 arrived too late for its frame (the receiver lists it in
    // `late`), packet 2 was lost; a late sequence not in the report is ignored.
    // TWCC carries arrivals and no discards: `late` stays false there.
    let r = ReceiverReport {
        late: vec![1, 5],
        ..report(140, &[(0, Some(20)), (1, Some(21)), (2, None), (3, Some(120))], &[])
    };
    pair.sender.handle_report(pair.now(), &r);
    let log = ctl.log();
    let fb = &log.feedback[0];
    // TWCC carries no report time: its newest arrival stands for it.
    assert_eq!((fb.report_time, fb.received_at), (ms(120), ms(150)));
    let got: Vec<(u64, FramePos, bool, Option<Time>, Time)> =
        fb.packets.iter().map(|p| (p.seq, p.pos, p.late, p.arrival, p.send_time)).collect();
    let pos = |frame, index, count| FramePos { frame, index, count };
    assert_eq!(
        got,
        [
            (0, pos(0, 0, 3), false, Some(ms(20)), ms(0)),
            (1, pos(0, 1, 3), false, Some(ms(21)), ms(0)),
            (2, pos(0, 2, 3), false, None, ms(0)),
            (3, pos(1, 0, 1), false, Some(ms(120)), ms(100)),
        ]
    );
    drop(log);
    // RR + XR: the discard RLE (RFC 7097) says 1 was discarded; no times.
    pair.sender.handle_report(pair.now(), &ReceiverReport { format: ReportFormat::RtcpXr, ..r });
    let log = ctl.log();
    let fb = &log.feedback[1];
    let got: Vec<(u64, FramePos, bool, bool, Option<Time>)> =
        fb.packets.iter().map(|p| (p.seq, p.pos, p.late, p.received(), p.arrival)).collect();
    assert_eq!(
        got,
        [
            (0, pos(0, 0, 3), false, true, None),
            (1, pos(0, 1, 3), true, true, None),
            (2, pos(0, 2, 3), false, false, None),
            (3, pos(1, 0, 1), false, true, None),
        ]
    );
    assert!(fb.packets[3].pos.is_last() && !fb.packets[1].pos.is_last());
}

/// Bug: a parity packet's `pos` is the XOR of the frame fields of the
/// packets it protects (fec.rs keeps the RFC 5109 header XOR in the parity's
/// `frame`/`index`/`count`, "NOT a frame id"), but the sender hands it to the
/// controller as the packet's frame position (sender.rs `transmit`:
/// `pos: pkt.pos()`, also stored for `PacketResult::pos`).
#[test]
fn fec_parities_do_not_claim_a_place_in_a_frame() {
    // Frame 1 (id 1): five 1200 B packets, group 2: parities over (0, 1),
    // (2, 3) and (4). Their XORs read as frame 1^1 = 0, index 0^1 = 1,
    // count 5^5 = 0; and frame 1, index 4, count 5 — "the last packet of
    // frame 1".
    let fec = Decision { fec: Some(FecPlan { group: 2 }), ..Decision::rates(kbps(1000), DataRate::from_mbps(10)) };
    let ctl = Recorder::new(fec);
    let mut pair = silent(flow(100), &ctl, &Script::new(&[6000]));
    pair.run_until(ms(199));
    let parity = ctl.sent(PacketKind::Fec);
    assert_eq!(parity.len(), 6);
    for p in &parity {
        // Either no frame, or the frame protected — never another frame or
        // a media packet's slot.
        let protected = if p.send_time < ms(100) { 0 } else { 1 };
        assert!(
            p.pos == FramePos::NONE || (p.pos.frame == protected && p.pos.count == 0),
            "parity sent at {} claims {:?}",
            p.send_time,
            p.pos
        );
    }
}

/// Bug: `Controller::on_sender_state` is documented as called when "the
/// sender's queue or in-flight bytes changed" (controller/mod.rs), but
/// `Sender::on_report` (sender.rs) lowers `in_flight` for reported packets
/// and `trim_history` for forgotten ones without calling `notify_state`, so
/// the controller's last `SenderState` keeps the old in-flight bytes until
/// the next enqueue or send.
#[test]
fn the_controller_hears_in_flight_fall_when_a_report_settles_packets() {
    let ctl = bursts(DataRate::from_mbps(10));
    let mut pair = silent(flow(1000), &ctl, &Script::new(&[5000]));
    pair.run_until(ms(60));
    pair.sender.handle_report(pair.now(), &report(30, &[(0, Some(25)), (1, Some(26)), (2, Some(27))], &[]));
    assert_eq!(pair.sender.in_flight(), DataSize::from_bytes(2000));
    let last = ctl.log().states.last().copied().expect("states");
    assert_eq!((last.0, last.1.in_flight), (ms(60), DataSize::from_bytes(2000)), "last state {last:?}");
}

#[test]
fn late_flags_reach_packets_reported_out_of_order() {
    // One frame of three packets sent at once; the receiver saw 0, 2, then 1
    // (reordered, too late for its frame); the wire lists them by sequence.
    let ctl = bursts(DataRate::from_mbps(10));
    let mut pair = silent(flow(1000), &ctl, &Script::new(&[3000]));
    // RR + XR carry discards (RFC 7097); TWCC does not.
    let r = ReceiverReport {
        late: vec![1],
        format: ReportFormat::RtcpXr,
        ..report(40, &[(0, Some(20)), (2, Some(21)), (1, Some(39))], &[])
    };
    report_at(&mut pair, ms(60), &r);
    let log = ctl.log();
    let fb = log.feedback.last().expect("a feedback");
    let late: Vec<(u64, bool)> = fb.packets.iter().map(|p| (p.seq, p.late)).collect();
    assert_eq!(late, [(0, false), (1, true), (2, false)]);
}

#[test]
fn the_controller_hears_each_frames_si_and_ti() {
    use rtcc_core::encoder::{Encoder, EncoderConfig};
    use rtcc_core::rng::Rng;
    // The content model reports SI/TI; the sender passes them on, frame by
    // frame, as the encoder gave them.
    let cfg = EncoderConfig::from_params("content", &rtcc_core::controller::Params::new()).unwrap();
    let ctl = Recorder::new(Decision::rates(kbps(2000), kbps(100_000)));
    let enc = Encoder::new(cfg.clone(), MS * 40, Rng::new(3));
    let mut pair = Pair::builder().sender(flow(40)).controller(ctl.boxed()).encoder(Box::new(enc)).build();
    pair.run_until(ms(3999));
    let mut twin = Encoder::new(cfg, MS * 40, Rng::new(3));
    let log = ctl.log();
    assert_eq!(log.frames.len(), 100);
    for f in &log.frames {
        let e = twin.encode(f.capture_time, kbps(2000));
        assert_eq!((f.si, f.ti, f.size, f.key), (e.si, e.ti, e.size, e.key), "frame {}", f.frame);
        assert!(f.si > 0.0 && f.ti > 0.0);
    }
    // Models without content report none.
    let ctl = Recorder::new(Decision::rates(kbps(2000), kbps(100_000)));
    let enc = Script::new(&[3000]);
    let mut pair = silent(flow(40), &ctl, &enc);
    pair.run_until(ms(399));
    assert!(ctl.log().frames.iter().all(|f| f.si == 0.0 && f.ti == 0.0));
}

/// Under RR + XR the controller gets outcomes, the RR block and the OWD
/// block, never an arrival time; under TWCC the same call gives arrivals.
#[test]
fn a_controller_never_sees_an_arrival_time_under_rtcp_xr() {
    let run = |format: ReportFormat, clocks_agree: bool| {
        let ctl = Recorder::new(Decision::rates(kbps(600), kbps(600)));
        let mut pair = Pair::builder()
            .sender(SenderConfig { clocks_agree, ..flow(33) })
            .controller(ctl.boxed())
            .encoder(Script::new(&[2500]).boxed())
            .receiver(ReceiverConfig { report_format: format, ..ReceiverConfig::default() })
            .delay(MS * 30)
            .loss(0.1, 7)
            .build();
        pair.run_until(ms(2000));
        let fb = ctl.log().feedback.clone();
        fb
    };
    let xr = run(ReportFormat::RtcpXr, true);
    assert!(xr.len() > 10);
    let packets = xr.iter().flat_map(|f| &f.packets);
    assert!(packets.clone().all(|p| p.arrival.is_none()));
    assert!(packets.clone().any(|p| p.received()) && packets.clone().any(|p| !p.received()));
    for f in &xr {
        assert_eq!(f.format, ReportFormat::RtcpXr);
        let rr = f.rr.expect("RR block");
        assert_eq!(rr.highest_seq, f.packets.iter().map(|p| p.seq).max().unwrap());
        // In sequence order, as the Loss RLE lists them.
        assert!(f.packets.windows(2).all(|w| w[0].seq < w[1].seq));
        // The clocks agree here: the OWD block is the 30 ms path and up
        // (16.16 seconds on the wire: within 8 µs).
        if let Some(d) = f.stats.owd_min {
            assert!(d >= MS * 30 - Duration::from_micros(8) && d < MS * 40, "{d}");
        }
    }
    let twcc = run(ReportFormat::Twcc, true);
    assert!(twcc.iter().flat_map(|f| &f.packets).any(|p| p.arrival.is_some()));
    assert!(twcc.iter().all(|f| f.rr.is_none()));
    // Clocks not known to agree: the OWD is relative to the smallest seen.
    for (fbs, format) in [(run(ReportFormat::RtcpXr, false), "xr"), (run(ReportFormat::Twcc, false), "twcc")] {
        let mins: Vec<Duration> = fbs.iter().filter_map(|f| f.stats.owd_min).collect();
        assert!(mins.iter().all(|&d| d >= Duration::ZERO && d < MS * 10), "{format}: {mins:?}");
        assert!(mins.contains(&Duration::ZERO), "{format}");
    }
}

/// RFC 3550 §6.4.1 end to end: the sender's SRs cross the forward path (25
/// ms), the receiver's RR echoes the newest (LSR) with its wait since (DLSR),
/// and the report crosses back (40 ms): the sender reads 65 ms on its own
/// clock, to two 1/65,536 s units of the fields, under every report format: once
/// a second beside TWCC and RFC 8888, in every RR + XR report.
#[test]
fn receiver_reports_echo_sender_reports_into_the_round_trip() {
    for format in [ReportFormat::Twcc, ReportFormat::Rfc8888, ReportFormat::RtcpXr] {
        let ctl = bursts(DataRate::from_mbps(10));
        let enc = Script::new(&[5000; 200]);
        let mut pair = Pair::builder()
            .sender(flow(33))
            .controller(ctl.boxed())
            .encoder(enc.boxed())
            .receiver(ReceiverConfig { report_format: format, ..ReceiverConfig::default() })
            .delay(MS * 25)
            .reverse_delay(MS * 40)
            .build();
        pair.run_until(ms(5_000));
        let log = ctl.log();
        let rtts: Vec<(Time, Duration)> =
            log.feedback.iter().filter_map(|f| f.rtcp_rtt.map(|r| (f.received_at, r))).collect();
        // SRs every 0.5–1.5 s from about 0.5 s; one RR a second (TWCC,
        // RFC 8888) or every report (RR + XR) echoes the newest.
        let expect = if format == ReportFormat::RtcpXr { 40 } else { 3 };
        assert!(rtts.len() >= expect, "{format:?}: {} round trips", rtts.len());
        for (at, rtt) in &rtts {
            // A, LSR and DLSR each truncated to 1/65,536 s: within two units.
            assert!((rtt.as_micros() - 65_000).abs() <= 31, "{format:?} at {at}: {rtt}");
        }
        // Before the first SR arrived, an RR echoes none and gives none.
        assert!(log.feedback.iter().take_while(|f| f.received_at < ms(300)).all(|f| f.rtcp_rtt.is_none()));
        // What the controller sees has no SR in it: RTP only.
        assert!(pair.sent().iter().all(|t| t.packet.kind != PacketKind::Feedback));
    }
}

/// An SR goes out only from an active sender, at a random point of
/// [0.5, 1.5] intervals after the last; none with `rtcp_interval = None`.
#[test]
fn sender_reports_follow_the_interval_and_only_an_active_sender_sends_them() {
    let ctl = bursts(DataRate::from_mbps(10));
    let mut s = rtcc_core::sender::Sender::new(flow(33), ctl.boxed(), Script::new(&[5000; 400]).boxed());
    let (mut srs, mut now) = (vec![], Time::ZERO);
    while now < ms(20_000) {
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
        while let Some(p) = s.poll_rtcp(now) {
            assert_eq!(p.kind, PacketKind::Feedback);
            let bytes = p.payload.as_ref().unwrap().bytes().to_vec();
            assert_eq!(p.size.bytes(), 28 + bytes.len() as u64);
            assert_eq!(rtcc_core::sr::read_sender_report(0, &bytes), Some(rtcc_core::sr::ntp_middle(now)));
            srs.push(now);
        }
        while s.poll_transmit(now).is_some() {}
        now += MS;
    }
    assert!(srs[0] >= ms(250) && srs[0] <= ms(750), "{srs:?}");
    for w in srs.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= MS * 500 && gap <= MS * 1_501, "{srs:?}");
    }
    assert!((14..=26).contains(&srs.len()), "{}", srs.len());

    let cfg = SenderConfig { rtcp_interval: None, ..flow(33) };
    let ctl = bursts(DataRate::from_mbps(10));
    let mut s = rtcc_core::sender::Sender::new(cfg, ctl.boxed(), Script::new(&[5000; 100]).boxed());
    for t in 0..3_000 {
        let now = ms(t);
        s.handle_timeout(now);
        assert!(s.poll_rtcp(now).is_none());
        while s.poll_transmit(now).is_some() {}
    }
}

/// An RTCP datagram on the media path that holds no SR of the flow (broken
/// bytes, another flow's SR, no bytes at all) is counted and dropped; it
/// starts no report and echoes nothing.
#[test]
fn the_receiver_drops_rtcp_without_its_flows_sender_report() {
    use rtcc_core::packet::Payload;
    use rtcc_core::receiver::Receiver;
    let mut r = Receiver::new(ReceiverConfig::default());
    let rtcp = |bytes: Option<Vec<u8>>| Packet {
        kind: PacketKind::Feedback,
        size: DataSize::from_bytes(60),
        payload: bytes.map(Payload::new),
        ..Packet::default()
    };
    let other = rtcc_core::sr::sender_report(9, ms(100), 10, 10_000);
    for (i, p) in
        [rtcp(None), rtcp(Some(vec![0x80, 200, 0xff])), rtcp(Some(other)), rtcp(Some(vec![]))].iter().enumerate()
    {
        r.handle_packet(ms(100 + i as i64), p);
        assert_eq!(r.rtcp_ignored(), i as u64 + 1);
    }
    assert_eq!(r.poll_timeout(), None, "no report started");
    assert!(r.poll_report(ms(1_000)).is_none());
}
