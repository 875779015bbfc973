//! The simulation driver. Each flow is two ends apart, a [`SendEnd`] and a
//! [`RecvEnd`] (a video call, `call.rs`); the driver moves their packets through the bottleneck and
//! the forward path, what they send back through the reverse bottleneck (if
//! any) and the reverse path, and tells the [`Recorder`] what happened.
//! Every component (the link, each flow's forward delivery, receiving end,
//! reverse delivery and sending end) reports its next deadline; the
//! schedule picks the earliest, so an event costs O(log flows) however many
//! flows share the link. Equal times are served in a fixed order — link →
//! deliveries → receiving ends → arrivals back at senders → sending ends →
//! reverse bottleneck, flows in index order — so the same scenario and seed
//! give the same event order.

use rtcc_core::controller;
use rtcc_core::rng::Rng;
use rtcc_core::units::{Duration, Time};

use crate::call::VideoCall;
use crate::endpoint::{Back, Datagram, Ends, Envelope, RecvEnd, SendEnd};
use crate::frames::FrameLog;
use crate::link::Link;
use crate::path::Path;
use crate::queue::Item;
use crate::recorder::{Event, FlowLabel, Recorder};
use crate::scenario::Direction;
use crate::scenario::{Scenario, ScenarioError};
use crate::schedule::{Schedule, SlotKey};
use crate::traffic;
use rtcc_record::CapacityTruth;

/// Laid out from a cache line's start (`repr(C)`): what every event reads
/// (deadlines, the two ends) fills the first line; the direction is in
/// `Simulation::reverse`.
#[repr(C, align(64))]
pub(crate) struct Flow {
    /// Each stage's deadline (deliveries, receiver, reports, sender); the
    /// schedule holds the earliest.
    due: [Time; 4],
    send: Box<dyn SendEnd>,
    recv: Box<dyn RecvEnd>,
    name: String,
}

/// Flows from which the next event's state is prefetched. Below this the
/// flows' state stays in cache and prefetching only costs: measured in
/// paired runs of `examples/bench flows-N` (100 flows 7 % slower with it,
/// 200 the same, 1000 10-13 % faster).
const PREFETCH_FLOWS: usize = 200;

/// What the scheduler wakes, in the order served at equal times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// The bottleneck: departures.
    Link,
    /// A flow's packets arriving at its receiver.
    Deliver,
    /// A flow's receiver: reports, NACKs, PLIs.
    Receiver,
    /// A flow's reports arriving at its sender.
    Feedback,
    /// A flow's sender: frames, audio, controller timers, the pacer.
    Sender,
    /// The reverse bottleneck, if the link has one: report departures.
    /// Last, so it changes no order among the other stages.
    ReverseLink,
}

impl Stage {
    const ALL: [Stage; 6] =
        [Stage::Link, Stage::Deliver, Stage::Receiver, Stage::Feedback, Stage::Sender, Stage::ReverseLink];
}

/// A schedule key: (time, stage, flow) packed into one integer, so the
/// heap compares with one instruction instead of three branches, and a heap
/// entry with its slot is 16 bytes (four children to a cache line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u64);

/// Bits of the flow index (flows are `u16` on the wire) and of the stage.
const KEY_FLOW_BITS: u32 = 16;
const KEY_STAGE_BITS: u32 = 3;
/// The latest time a key holds, 2^45 µs (about 407 days); later deadlines
/// saturate there, far past any run's end (at most 24 hours).
const KEY_TIME_MAX: u64 = (1 << (64 - KEY_FLOW_BITS - KEY_STAGE_BITS)) - 1;

impl Key {
    fn new(t: Time, stage: Stage, flow: usize) -> Key {
        debug_assert!(flow < 1 << KEY_FLOW_BITS && (stage as usize) < 1 << KEY_STAGE_BITS);
        // Times in the schedule are never negative (the run starts at 0).
        let t = (t.as_micros().max(0) as u64).min(KEY_TIME_MAX);
        Key(t << (KEY_FLOW_BITS + KEY_STAGE_BITS) | (stage as u64) << KEY_FLOW_BITS | flow as u64)
    }
    fn time(self) -> Time {
        Time::from_micros((self.0 >> (KEY_FLOW_BITS + KEY_STAGE_BITS)) as i64)
    }
    fn stage(self) -> Stage {
        Stage::ALL[(self.0 >> KEY_FLOW_BITS) as usize & ((1 << KEY_STAGE_BITS) - 1)]
    }
    fn flow(self) -> usize {
        self.0 as usize & ((1 << KEY_FLOW_BITS) - 1)
    }
}

impl SlotKey for Key {
    /// A flow's schedule slot is its index.
    fn slot(self) -> usize {
        self.flow()
    }
}

pub struct Simulation {
    pub(crate) scenario: Scenario,
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) link: Link<Datagram>,
    /// Beyond the bottleneck to the receivers, and back to the senders,
    /// indexed by the flow's `reverse`: [forward path, reverse path] for
    /// data, [reverse path, forward path] for what is sent back.
    data: [Path<Envelope>; 2],
    back: [Path<Back>; 2],
    /// Flows' next (time, stage), one entry each.
    schedule: Schedule<Key>,
    /// The link's next departure: due for every packet, so kept beside the
    /// heap rather than sifted through it.
    link_due: Option<Key>,
    /// The reverse bottleneck (`link.reverse_capacity`) and its next
    /// departure. What a flow sends back crosses it whole, as one datagram
    /// of its wire size.
    rev_link: Option<Link<Datagram>>,
    rev_due: Option<Key>,
    pub(crate) flows: Vec<Flow>,
    /// Each flow's direction: its data runs from the receiving side, over
    /// the reverse bottleneck, with what it sends back over the forward one.
    reverse: Vec<bool>,
    pub(crate) events: u64,
    pub(crate) next_bin: Time,
    /// Everything measured goes here, as events.
    pub(crate) recorder: Recorder,
    pub(crate) wall: std::time::Duration,
    pub(crate) seed: u64,
    /// Saved-video streams written (`--save-video`): path and frame rate.
    pub saved_videos: Vec<(std::path::PathBuf, f64)>,
    spins: u32,
    /// The last pause stopped inside an instant, whose rest is not a spin.
    resumed_in_step: bool,
    /// Whether to prefetch the next event's flow state (`prefetch_after`).
    prefetch: bool,
    /// Set when the run went over its packet budget.
    over_budget: Option<Time>,
    /// Set when the run went over its packet-row limit (`[limits] packet_rows`).
    over_rows: Option<Time>,
    /// `run_until` returns once this many more packet rows are held (for
    /// a caller that takes them as the run goes), and says so in `paused`.
    pause_rows: Option<usize>,
    paused: bool,
    /// `set_pause_flag`: stop after the event that raised it.
    pause_flag: Option<&'static std::sync::atomic::AtomicBool>,
    done: bool,
}

/// A run stopped at `at` because its packet table would hold more than
/// `[limits] packet_rows` rows (`rows` now).
pub fn rows_over_error(scenario: &Scenario, at: Time, rows: usize) -> ScenarioError {
    ScenarioError {
        source_name: scenario.source.clone(),
        field: "limits.packet_rows".into(),
        reason: format!(
            "the run stopped at {:.3} s: its packet table would hold more than {} rows in memory (a row \
             waits for every earlier packet of its flow to arrive or be dropped, so a sender far beyond \
             its link piles them up behind its queue); set [record] packets = false, give the link a \
             smaller queue, or raise [limits] packet_rows",
            (at - Time::ZERO).as_secs_f64(),
            rows
        ),
    }
}

/// A run stopped at `at` for sending more than `[limits] packets`.
pub fn packets_over_error(scenario: &Scenario, at: Time) -> ScenarioError {
    ScenarioError {
        source_name: scenario.source.clone(),
        field: "limits.packets".into(),
        reason: format!(
            "the run stopped at {:.3} s, having sent more than its budget of {} packets; raise [limits] \
             packets to run it whole",
            (at - Time::ZERO).as_secs_f64(),
            scenario.max_packets
        ),
    }
}

/// The recorder of a run of `scenario` (its bins, what it records, its row
/// limit) over a bottleneck whose capacity is `capacity` and, when the link
/// has one, a reverse bottleneck whose capacity is `reverse` (each `None`
/// where no one knows it).
pub fn scenario_recorder(
    scenario: &Scenario,
    capacity: Option<Box<dyn CapacityTruth>>,
    reverse: Option<Box<dyn CapacityTruth>>,
) -> Recorder {
    let mut recorder = Recorder::new(capacity, scenario.bin, scenario.record_packets, scenario.record_timeseries);
    recorder.set_row_limit(scenario.max_packet_rows);
    if reverse.is_some() {
        recorder.set_reverse(reverse);
    }
    recorder
}

/// One flow of a scenario built as the simulator builds it.
pub struct BuiltFlow {
    /// Its two ends.
    pub ends: Ends,
    pub frames: FrameLog,
    pub label: FlowLabel,
    /// Its controller's seed (the run's seed forked for it).
    pub seed: u64,
}

/// Every flow of `scenario` with its ends, frame log and label, drawing
/// from the run's `seed` and its stream `rng` as the simulator does, so
/// another driver of the same scenario (a runtime on sockets) gets the same
/// ends with the same random streams. Saved-video streams are added to
/// `saved_videos`.
pub fn build_flows(
    scenario: &Scenario,
    seed: u64,
    rng: &mut Rng,
    saved_videos: &mut Vec<(std::path::PathBuf, f64)>,
    reverse_bottleneck: bool,
) -> Result<Vec<BuiltFlow>, ScenarioError> {
    // Controller seeds come from a stream of their own, so they leave
    // every other random draw of the run as it was.
    let mut controller_seeds = Rng::new(seed).fork(0x005E_EDC7);
    let mut out = Vec::with_capacity(scenario.flows.len());
    for (i, spec) in scenario.flows.iter().enumerate() {
        if spec.direction == Direction::Reverse && !reverse_bottleneck {
            // Parsing refuses this too; a scenario built in code may not have been parsed.
            return Err(ScenarioError {
                source_name: scenario.source.clone(),
                field: format!("flow[{i}].direction"),
                reason: "a reverse flow crosses the reverse bottleneck: set [link] reverse_capacity".into(),
            });
        }
        let ctx = controller::ControllerContext { seed: controller_seeds.next_u64(), ..spec.ctx };
        let (ends, frames): (Ends, FrameLog) = match &spec.traffic {
            None => VideoCall::build(i, spec, scenario, ctx, rng, saved_videos)?,
            Some(t) => {
                // Its own stream, so cross traffic leaves the video flows' draws alone.
                let stream = traffic::stream(ctx.seed);
                let ends =
                    traffic::build(i as u16, t, spec.sender.start, spec.sender.stop, stream).map_err(|reason| {
                        ScenarioError { source_name: scenario.source.clone(), field: format!("flow[{i}].cc"), reason }
                    })?;
                (ends, FrameLog::new(false, Default::default(), spec.ctx.frame_interval, None, spec.sender.stop))
            }
        };
        let label = FlowLabel {
            name: spec.name.clone(),
            kind: spec.kind(),
            direction: spec.direction.name(),
            cc: spec.traffic.as_ref().and_then(|t| t.cc()).map(str::to_string),
            controller: spec.controller.clone(),
            encoder: spec.encoder_kind().to_string(),
            start: spec.sender.start,
            stop: spec.sender.stop,
        };
        out.push(BuiltFlow { ends, frames, label, seed: ctx.seed });
    }
    Ok(out)
}

impl Simulation {
    /// Build a run of `scenario`; `seed` overrides the scenario's seed.
    pub fn new(scenario: Scenario, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let seed = seed.unwrap_or(scenario.seed);
        let mut rng = Rng::new(seed);
        // The bottleneck's loss, then the paths' jitter and reverse loss,
        // each a stream of its own forked from this one.
        let mut link_rng = rng.fork(0xC0FFEE);
        let (link, paths) = scenario.build_link(&mut link_rng)?;
        let rev_link = scenario.build_reverse_link()?;
        let reverse_truth = rev_link.as_ref().map(|r| Box::new(r.capacity().clone()) as Box<dyn CapacityTruth>);
        let mut recorder = scenario_recorder(&scenario, Some(Box::new(link.capacity().clone())), reverse_truth);
        let mut saved_videos = Vec::new();
        let built = build_flows(&scenario, seed, &mut rng, &mut saved_videos, rev_link.is_some())?;
        let mut flows = Vec::with_capacity(built.len());
        let mut reverses = Vec::with_capacity(built.len());
        for b in built {
            flows.push(Flow { name: b.label.name.clone(), due: [Time::MAX; 4], send: b.ends.send, recv: b.ends.recv });
            reverses.push(b.label.direction == Direction::Reverse.name());
            recorder.add_flow(b.label, b.frames);
        }
        let (mut fwd, mut rev) = paths.build(&mut link_rng);
        let (mut fwd_back, mut rev_data) = paths.build_crossed(&mut link_rng);
        for (spec, &reverse) in scenario.flows.iter().zip(&reverses) {
            fwd.add_flow(spec.access_delay, !reverse);
            rev.add_flow(spec.access_delay, !reverse);
            fwd_back.add_flow(spec.access_delay, reverse);
            rev_data.add_flow(spec.access_delay, reverse);
        }
        let mut sim = Simulation {
            data: [fwd, rev_data],
            back: [rev, fwd_back],
            schedule: Schedule::new(flows.len()),
            prefetch: flows.len() >= PREFETCH_FLOWS,
            link_due: None,
            rev_link,
            rev_due: None,
            end: Time::ZERO + scenario.duration,
            next_bin: Time::ZERO + scenario.bin,
            recorder,
            scenario,
            now: Time::ZERO,
            link,
            flows,
            reverse: reverses,
            events: 0,
            wall: std::time::Duration::ZERO,
            seed,
            spins: 0,
            resumed_in_step: false,
            over_budget: None,
            over_rows: None,
            pause_rows: None,
            paused: false,
            pause_flag: None,
            done: false,
            saved_videos,
        };
        for i in 0..sim.flows.len() {
            for stage in [Stage::Deliver, Stage::Receiver, Stage::Feedback, Stage::Sender] {
                sim.arm(stage, i);
            }
        }
        sim.arm(Stage::Link, 0);
        Ok(sim)
    }

    pub fn set_record_packets(&mut self, on: bool) {
        self.recorder.set_record_packets(on);
    }

    /// Make `run_until` return early once `rows` more packet rows are held
    /// than when it was called, so a caller taking the tables as the run
    /// goes (`take_tables`) holds about that many whatever the load.
    pub fn set_pause_rows(&mut self, rows: Option<usize>) {
        self.pause_rows = rows.map(|r| r.max(1));
    }

    /// Stop `run_until` right after the event that sets `flag` (a Python
    /// controller's report, for an agent that acts on it before the run
    /// goes on); the caller clears it.
    pub fn set_pause_flag(&mut self, flag: Option<&'static std::sync::atomic::AtomicBool>) {
        self.pause_flag = flag;
    }

    /// Whether the last `run_until` returned early for `set_pause_rows`
    /// or `set_pause_flag`.
    pub fn paused(&self) -> bool {
        self.paused
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn duration(&self) -> Duration {
        self.scenario.duration
    }
    pub fn is_done(&self) -> bool {
        self.done
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    fn deadline(&self, stage: Stage, flow: usize) -> Option<Time> {
        match stage {
            Stage::Link => self.link.poll_timeout(),
            Stage::ReverseLink => self.rev_link.as_ref().and_then(|l| l.poll_timeout()),
            Stage::Deliver => self.data[self.reverse[flow] as usize].poll_timeout(flow),
            Stage::Receiver => self.flows[flow].recv.poll_timeout(),
            Stage::Feedback => self.back[self.reverse[flow] as usize].poll_timeout(flow),
            Stage::Sender => self.flows[flow].send.poll_timeout(),
        }
    }

    /// Schedule `stage` of `flow` at its current deadline. A flow has one
    /// schedule entry, its earliest (time, stage), so the global order is
    /// still (time, stage, flow) with a quarter of the entries, and a stage
    /// that is not the flow's next leaves the schedule untouched.
    fn arm(&mut self, stage: Stage, flow: usize) {
        let t = self.deadline(stage, flow).unwrap_or(Time::MAX);
        self.set_due(stage, flow, t);
    }

    fn set_due(&mut self, stage: Stage, flow: usize, t: Time) {
        let key = (t < Time::MAX).then(|| Key::new(t, stage, 0));
        match stage {
            Stage::Link => return self.link_due = key,
            Stage::ReverseLink => return self.rev_due = key,
            _ => {}
        }
        let f = &mut self.flows[flow];
        let k = stage as usize - 1;
        if f.due[k] == t {
            return;
        }
        f.due[k] = t;
        let (at, i) = f.due.iter().enumerate().map(|(i, &d)| (d, i)).min().expect("four stages");
        self.schedule.set(flow, (at < Time::MAX).then(|| Key::new(at, Stage::ALL[i + 1], flow)));
    }

    /// The earliest time any component is due (bins and the end excluded).
    fn next_deadline(&self) -> Time {
        self.head().map_or(Time::MAX, Key::time)
    }

    /// The next component to serve.
    fn head(&self) -> Option<Key> {
        // Plain comparisons: building an array of the three here costs a
        // store-forwarding stall on every event.
        fn earlier(a: Option<Key>, b: Option<Key>) -> Option<Key> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        }
        earlier(earlier(self.link_due, self.rev_due), self.schedule.peek())
    }

    /// Every sending end takes up a decision its controller changed between
    /// events (an agent acting between two reports), from now.
    pub fn refresh_decisions(&mut self) {
        let now = self.now;
        for i in 0..self.flows.len() {
            self.flows[i].send.refresh_decision(now);
            self.arm(Stage::Sender, i);
        }
    }

    /// Run until simulated time `limit` (or the end). Returns false once done.
    pub fn run_until(&mut self, limit: Time) -> bool {
        let wall = std::time::Instant::now();
        self.paused = false;
        let pause_at = self.pause_rows.map(|n| self.recorder.packet_rows().saturating_add(n));
        while !self.done {
            let due = self.next_deadline();
            let mut t = due.min(self.next_bin).min(self.end).max(self.now);
            // The rest of an instant a pause interrupted is not a spin.
            let resumed = std::mem::take(&mut self.resumed_in_step);
            if t != self.now {
                self.spins = 0;
            } else if !resumed {
                // A component that claims to be due but makes no progress
                // must not stall the clock.
                self.spins += 1;
                if self.spins > 1_000 {
                    t = self.now + Duration::from_micros(1);
                    self.spins = 0;
                }
            }
            if t > limit {
                break;
            }
            self.now = t;
            // A bin boundary alone only samples: stepping the components at
            // times they did not ask for would make results depend on the
            // bin width.
            if due <= t && self.step(t) {
                // Paused inside the instant: the rest of its events (and the
                // bin sample) run when the caller resumes.
                self.paused = true;
                self.resumed_in_step = true;
                break;
            }
            if self.next_bin <= t && self.next_bin <= self.end {
                self.sample_bin();
                self.next_bin += self.scenario.bin;
            }
            if self.recorder.sent > self.scenario.max_packets {
                // Stopped where it is: no end-of-call records, no output.
                self.over_budget = Some(self.now);
                self.done = true;
                break;
            }
            if self.recorder.rows_over() {
                self.over_rows = Some(self.now);
                self.done = true;
                break;
            }
            if t >= self.end {
                self.done = true;
                for (i, f) in self.flows.iter_mut().enumerate() {
                    f.send.record_settled(i, t, true, &mut self.recorder);
                    f.recv.record_settled(i, t, true, &mut self.recorder);
                    f.recv.record_end(i, t, &mut self.recorder);
                    f.send.record_end(i, t, &mut self.recorder);
                }
            }
            if !self.done && pause_at.is_some_and(|p| self.recorder.packet_rows() >= p) {
                self.paused = true;
                break;
            }
            if !self.done && self.pause_flag.is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                self.paused = true;
                break;
            }
        }
        self.wall += wall.elapsed();
        !self.done
    }

    /// When the run stopped for sending more packets than its budget
    /// (`[limits] packets`): a clear error naming the field.
    pub fn budget_error(&self) -> Option<ScenarioError> {
        if let Some(at) = self.over_rows {
            return Some(rows_over_error(&self.scenario, at, self.recorder.packet_rows()));
        }
        Some(packets_over_error(&self.scenario, self.over_budget?))
    }

    /// The first real-codec failure (library error, unwritable video), if
    /// any: the run's quality numbers are not to be trusted then.
    pub fn failure(&self) -> Option<String> {
        self.flows.iter().enumerate().find_map(|(i, f)| {
            let e = f.send.failure().or_else(|| self.recorder.frames_failure(i).map(str::to_string))?;
            Some(format!("flow[{i}] ({}): {e}", f.name))
        })
    }

    pub fn run(&mut self) {
        self.run_until(Time::MAX);
    }

    /// Summary and tables of the run so far (normally called when done).
    pub fn output(&self) -> crate::output::Output {
        self.recorder.output(&crate::output::RunInfo {
            scenario: self.scenario.name.clone(),
            seed: self.seed,
            end: self.now.min(self.end),
            wall: self.wall,
            events: self.events,
        })
    }

    /// Takes the table rows that are final so far (`Recorder::take_tables`);
    /// `output` then has only the rest.
    pub fn take_tables(&mut self) -> crate::output::Tables {
        self.recorder.take_tables()
    }

    /// Table rows kept in memory and not yet taken.
    pub fn pending_rows(&self) -> usize {
        self.recorder.pending_rows()
    }

    /// Serves every component due at or before `t`, in (time, stage, flow)
    /// order. After 1000 serves per flow at one instant in one call
    /// (something stays due without progress), whatever is still due is moved
    /// on by 1 µs, so nothing can stall the clock. True when the pause flag rose on an
    /// event, which stops the step right after it: an agent's decision then
    /// applies to the events of the same instant that follow the report (a
    /// pacer tick at the report's arrival), as a controller's own would.
    fn step(&mut self, t: Time) -> bool {
        let mut serves = 0u32;
        while let Some(key) = self.head() {
            if key.time() > t {
                break;
            }
            let (stage, flow) = (key.stage(), key.flow());
            if self.prefetch {
                self.prefetch_after(stage);
            }
            serves += 1;
            if serves > 1_000 * (self.flows.len() as u32 + 1) {
                self.set_due(stage, flow, t + Duration::from_micros(1));
                continue;
            }
            // The entry stays at the head while served; re-arming moves it
            // once (one sift instead of a removal and an insertion).
            match stage {
                Stage::Link => self.serve_link(t),
                Stage::Deliver => self.serve_deliveries(t, flow),
                Stage::Receiver => self.serve_receiver(t, flow),
                Stage::Feedback => self.serve_feedback(t, flow),
                Stage::Sender => self.serve_sender(t, flow),
                Stage::ReverseLink => self.serve_reverse_link(t),
            }
            self.arm(stage, flow);
            if self.pause_flag.is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                return true;
            }
        }
        false
    }

    /// Start loading the state of the flow the schedule serves after the
    /// event at its head (`stage`): with many flows it has left the cache,
    /// and its misses then overlap this event's work.
    #[inline]
    fn prefetch_after(&self, stage: Stage) {
        let next = match stage {
            Stage::Link | Stage::ReverseLink => self.schedule.peek(),
            _ => self.schedule.second(),
        };
        let Some(next) = next else { return };
        let (i, flow) = (next.flow(), &self.flows[next.flow()]);
        match next.stage() {
            Stage::Sender => {
                flow.send.prefetch();
                self.recorder.prefetch(i, false);
                // The packet leaves the bottleneck a few events later, onto
                // its path.
                self.data[self.reverse[i] as usize].prefetch_line(i);
            }
            Stage::Feedback => {
                self.back[self.reverse[i] as usize].prefetch(i);
                flow.send.prefetch();
            }
            Stage::Deliver => {
                self.data[self.reverse[i] as usize].prefetch(i);
                flow.recv.prefetch();
                self.recorder.prefetch(i, true);
            }
            Stage::Receiver => flow.recv.prefetch(),
            Stage::Link | Stage::ReverseLink => {}
        }
    }

    fn serve_link(&mut self, t: Time) {
        self.serve_bottleneck::<false>(t);
    }

    fn serve_deliveries(&mut self, t: Time, i: usize) {
        let f = &mut self.flows[i];
        let path = &mut self.data[self.reverse[i] as usize];
        while let Some((at, e)) = path.poll_arrival(i, t) {
            self.events += 1;
            self.recorder.record(i, Event::PacketArrived { at, packet: &e });
            f.recv.handle_packet(at, &e.packet);
        }
        self.arm(Stage::Receiver, i);
    }

    fn serve_receiver(&mut self, t: Time, i: usize) {
        self.events += 1;
        let Some(back) = self.flows[i].recv.poll_back(t) else { return };
        let reverse = self.reverse[i];
        let size = back.wire_size();
        let bytes = size.bytes();
        let (path, link) = match reverse {
            // A reverse flow answers over the forward bottleneck.
            true => (&mut self.back[1], Some(&mut self.link)),
            false => (&mut self.back[0], self.rev_link.as_mut()),
        };
        if path.lose(t) {
            self.recorder.record(i, Event::ReportSent { lost: true, bytes });
            return;
        }
        let Some(link) = link else {
            self.recorder.record(i, Event::ReportSent { lost: false, bytes });
            path.send(t, i, back);
            self.arm(Stage::Feedback, i);
            return;
        };
        let queued = link.enqueue(t, Datagram::Back { flow: i as u16, back: Box::new(back) });
        self.recorder.record(i, Event::ReportSent { lost: !queued, bytes });
        if !queued {
            self.recorder.record(i, Event::BackDropped { reverse: !reverse });
        }
        self.link_drops(!reverse);
        self.arm(if reverse { Stage::Link } else { Stage::ReverseLink }, 0);
    }

    fn serve_reverse_link(&mut self, t: Time) {
        self.serve_bottleneck::<true>(t);
    }

    /// Departures from a bottleneck (`reverse`: the reverse one). Data goes
    /// on over its path to the receiving end; what a flow sent back (reports,
    /// ACKs) goes on to its sending end. A path's own loss (the reverse
    /// path's `reverse_loss`) applies to everything that crosses it.
    /// Generic over the direction so each loop compiles to what it was when
    /// written twice (the forward one is every packet's path).
    fn serve_bottleneck<const REVERSE: bool>(&mut self, t: Time) {
        let (reverse, r) = (REVERSE, REVERSE as usize);
        loop {
            let link = if reverse { self.rev_link.as_mut() } else { Some(&mut self.link) };
            let Some(d) = link.and_then(|l| l.poll_departure(t)) else { break };
            self.events += 1;
            let packet = match d.packet {
                Datagram::Back { flow, back } => {
                    self.back_departed(flow as usize, *back, d.departed, d.lost, reverse);
                    continue;
                }
                Datagram::Data(p) => p,
            };
            let i = packet.flow as usize;
            let (queued, sojourn) = (d.service_start - d.enqueued, d.departed - d.enqueued);
            let lost = d.lost || self.data[r].lose(d.departed);
            self.recorder.record(i, Event::PacketDeparted { packet: &packet, queued, sojourn, lost, reverse });
            if lost {
                self.data[r].discard();
            } else {
                self.data[r].send(d.departed, i, packet);
                self.arm(Stage::Deliver, i);
            }
        }
        self.link_drops(reverse);
    }

    /// Something flow `i` sent back left a bottleneck (`reverse`: the
    /// reverse one) at `at`: on over its path back, unless lost after it.
    fn back_departed(&mut self, i: usize, back: Back, at: Time, lost: bool, reverse: bool) {
        self.recorder.record(i, Event::BackDeparted { size: back.wire_size(), reverse });
        if lost {
            self.recorder.record(i, Event::ReportLost);
            return;
        }
        let path = &mut self.back[self.reverse[i] as usize];
        path.send(at, i, back);
        self.arm(Stage::Feedback, i);
    }

    /// Packets a bottleneck's AQM dropped inside its queue (CoDel at
    /// dequeue, fq_codel on overflow from the fattest flow): data, or
    /// something sent back.
    fn link_drops(&mut self, reverse: bool) {
        loop {
            let drop = match reverse {
                true => self.rev_link.as_mut().and_then(Link::poll_drop),
                false => self.link.poll_drop(),
            };
            let Some((d, _)) = drop else { break };
            let i = d.flow() as usize;
            match d {
                Datagram::Back { .. } => {
                    self.recorder.record(i, Event::ReportLost);
                    self.recorder.record(i, Event::BackDropped { reverse });
                }
                Datagram::Data(p) => {
                    self.recorder.record(i, Event::PacketDropped { seq: p.seq, frame: p.frame, kind: p.kind })
                }
            }
        }
    }

    fn serve_feedback(&mut self, t: Time, i: usize) {
        let f = &mut self.flows[i];
        let path = &mut self.back[self.reverse[i] as usize];
        while let Some((_, back)) = path.poll_arrival(i, t) {
            self.events += 1;
            f.send.handle_back(t, &back);
        }
        self.arm(Stage::Sender, i);
    }

    fn serve_sender(&mut self, t: Time, i: usize) {
        let f = &mut self.flows[i];
        if f.send.poll_timeout().is_some_and(|x| x <= t) {
            self.events += 1;
            f.send.handle_timeout(t);
        }
        let link = match self.reverse[i] {
            true => self.rev_link.as_mut().expect("a reverse flow has a reverse bottleneck (checked in new)"),
            false => &mut self.link,
        };
        while let Some(p) = f.send.poll_transmit(t) {
            self.events += 1;
            self.recorder.record(i, Event::PacketSent(&p));
            let (seq, frame, kind) = (p.seq, p.frame, p.kind);
            if !link.enqueue(t, Datagram::Data(p)) {
                self.recorder.record(i, Event::PacketDropped { seq, frame, kind });
            }
        }
        let reverse = self.reverse[i];
        self.link_drops(reverse);
        self.arm(if reverse { Stage::ReverseLink } else { Stage::Link }, 0);
    }

    /// Close the time-series bin ending at `next_bin`: what settled, then
    /// the link's and each sending end's state.
    fn sample_bin(&mut self) {
        let t1 = self.next_bin;
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.send.record_settled(i, t1, false, &mut self.recorder);
            f.recv.record_settled(i, t1, false, &mut self.recorder);
        }
        self.recorder.record(0, Event::Link { at: t1, queue_bytes: self.link.queue_bytes() });
        for (i, f) in self.flows.iter().enumerate() {
            f.recv.record_sample(i, t1, &mut self.recorder);
            f.send.record_sample(i, t1, &mut self.recorder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys order by time, then stage, then flow, and give each back.
    #[test]
    fn keys_order_by_time_stage_flow_and_round_trip() {
        let t = |us| Time::from_micros(us);
        let keys = [
            Key::new(t(5), Stage::Link, 999),
            Key::new(t(5), Stage::Deliver, 0),
            Key::new(t(5), Stage::Deliver, 1),
            Key::new(t(5), Stage::ReverseLink, 0),
            Key::new(t(6), Stage::Link, 0),
            Key::new(t(86_400_000_000), Stage::Sender, 65_535),
        ];
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        let k = keys[5];
        assert_eq!((k.time(), k.stage(), k.flow()), (t(86_400_000_000), Stage::Sender, 65_535));
        // Deadlines past the key's range saturate, still after every run's end.
        let far = Key::new(t(i64::MAX / 2), Stage::Link, 0);
        assert!(far > keys[5] && far.time() > t(86_400_000_000));
    }

    /// Prefetching is a hint: with enough flows to turn it on, a run gives
    /// the same summary and tables with it as without.
    #[test]
    fn prefetching_changes_no_result() {
        let controllers = ["\"fixed\"", "\"gcc\"", "\"copa+dumbo\"", "{ name = \"fixed\", rate = \"500kbps\" }"];
        let mut text = String::from(
            "name = \"prefetch\"\nduration = \"2s\"\n[link]\ncapacity = \"150Mbps\"\ndelay = \"20ms\"\nloss = 0.02\n\
             jitter = \"3ms\"\n",
        );
        for i in 0..PREFETCH_FLOWS {
            let c = controllers[i % controllers.len()];
            let fec = if i % 3 == 0 { "true" } else { "false" };
            text += &format!("[[flow]]\ncontroller = {c}\nfec = {fec}\nstart = \"{}ms\"\n", i % 97);
        }
        let run = |prefetch: bool| {
            let mut sim = Simulation::new(Scenario::parse(&text, "prefetch").unwrap(), Some(3)).unwrap();
            assert!(sim.prefetch);
            sim.prefetch = prefetch;
            sim.run();
            sim.output()
        };
        let (on, off) = (run(true), run(false));
        assert!(on.summary.flows.iter().all(|f| f.video_kbps > 0.0));
        assert_eq!(on.summary, off.summary);
        // Debug text: a lost packet's arrival is NaN, never equal to itself.
        let text = |t: &crate::metrics::Table| format!("{t:?}");
        assert_eq!(text(&on.packets), text(&off.packets));
        assert_eq!(text(&on.frames), text(&off.frames));
        assert_eq!(text(&on.timeseries), text(&off.timeseries));
        assert_eq!(text(&on.link), text(&off.link));
    }
}
