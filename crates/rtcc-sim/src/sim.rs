//! The simulation driver. Every component (the link, each flow's forward
//! delivery, receiver, reverse delivery and sender) reports its next
//! deadline; a heap keyed by (time, stage, flow) picks the earliest, so an
//! event costs O(log components) however many flows share the link. Equal
//! times are served in a fixed order — link → deliveries → receiver reports
//! → reports at senders → senders, flows in index order — so the same
//! scenario and seed give the same event order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rtcc_core::controller;
use rtcc_core::encoder::{Encoder, FrameEncoder};
use rtcc_core::fec::FecConfig;
use rtcc_core::feedback::ReceiverReport;
use rtcc_core::pacer::PacerConfig;
use rtcc_core::packet::Packet;
use rtcc_core::receiver::{Receiver, ReceiverConfig};
use rtcc_core::resolution::Resolution;
use rtcc_core::rng::Rng;
use rtcc_core::sender::{SendCounters, Sender, SenderConfig};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use crate::frames::FrameLog;
use crate::link::Link;
use crate::metrics::FlowStats;
use crate::output::Series;
use crate::path::Path;
use crate::scenario::{FlowSpec, Scenario, ScenarioError};
use crate::video;
use rtcc_video::real::{ContentSpec, RealEncoder, RealQuality};

pub(crate) struct Flow {
    pub spec: FlowSpec,
    pub sender: Sender,
    pub receiver: Receiver,
    /// Deadline each stage is queued at in the heap (`Time::MAX`: none).
    armed: [Time; 4],
    pub stats: FlowStats,
    pub prev: SendCounters,
    pub series: Series,
    pub frames: FrameLog,
    pub target_sum: f64,
    pub target_n: u64,
}

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
}

impl Stage {
    /// Index into `Flow::armed` (the link has its own slot).
    fn slot(self) -> usize {
        self as usize - 1
    }
}

pub struct Simulation {
    pub(crate) scenario: Scenario,
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) link: Link,
    /// Beyond the bottleneck to the receivers, and back to the senders.
    fwd: Path<Packet>,
    rev: Path<ReceiverReport>,
    heap: BinaryHeap<Reverse<(Time, Stage, u32)>>,
    link_armed: Time,
    pub(crate) flows: Vec<Flow>,
    pub(crate) events: u64,
    pub(crate) next_bin: Time,
    pub(crate) link_series: Series,
    pub(crate) bin_delivered: u64,
    pub(crate) bin_drops: u64,
    pub(crate) delivered_bytes: u64,
    pub(crate) wall: std::time::Duration,
    pub(crate) seed: u64,
    /// Saved-video streams written (`--save-video`): path and frame rate.
    pub saved_videos: Vec<(std::path::PathBuf, f64)>,
    record_packets: bool,
    record_timeseries: bool,
    spins: u32,
    done: bool,
}

impl Simulation {
    /// Build a run of `scenario`; `seed` overrides the scenario's seed.
    pub fn new(scenario: Scenario, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
        let seed = seed.unwrap_or(scenario.seed);
        let mut rng = Rng::new(seed);
        let link = scenario.build_link(rng.fork(0xC0FFEE))?;
        let mut flows = Vec::with_capacity(scenario.flows.len());
        let mut saved_videos = Vec::new();
        // Controller seeds come from a stream of their own, so they leave
        // every other random draw of the run as it was.
        let mut controller_seeds = Rng::new(seed).fork(0x005E_EDC7);
        for (i, spec) in scenario.flows.iter().enumerate() {
            let cerr = |e: controller::ConfigError| ScenarioError {
                source_name: scenario.source.clone(),
                field: format!("flow[{i}].controller"),
                reason: e.to_string(),
            };
            let ctx = controller::ControllerContext { seed: controller_seeds.next_u64(), ..spec.ctx };
            let ctrl = controller::create(&spec.controller, &spec.params, &ctx).map_err(cerr)?;
            let estimator = match controller::receiver_of(&spec.controller) {
                Some(make) => Some(make(&spec.params, &ctx).map_err(cerr)?),
                None => None,
            };
            let fps = 1.0 / spec.ctx.frame_interval.as_secs_f64();
            let vfail = |reason: String| ScenarioError {
                source_name: scenario.source.clone(),
                field: format!("flow[{i}].encoder"),
                reason,
            };
            let mut real = None;
            let mut max_resolution = Resolution::R1080;
            let encoder: Box<dyn FrameEncoder> = match &spec.video {
                None => Box::new(Encoder::new(spec.encoder.clone(), spec.ctx.frame_interval, rng.fork(i as u64 + 1))),
                Some(v) => {
                    let mut v = v.clone();
                    if let (ContentSpec::Generated { motion, photos, .. }, Some(dir)) =
                        (&mut v.content, &scenario.photo_dir)
                    {
                        if photos.is_empty() {
                            *photos = video::default_photos(*motion, dir);
                        }
                    }
                    let field = match &v.content {
                        ContentSpec::Generated { photos, .. } if !photos.is_empty() => "content.photos",
                        ContentSpec::Generated { .. } => "content",
                        _ => "content.file",
                    };
                    let src = v.content.open(fps).map_err(|reason| ScenarioError {
                        source_name: scenario.source.clone(),
                        field: format!("flow[{i}].{field}"),
                        reason,
                    })?;
                    // Dumbo's policy cannot send more lines than the source has.
                    let h = src.size().1;
                    max_resolution =
                        Resolution::ALL.into_iter().rev().find(|r| r.size().1 <= h).unwrap_or(Resolution::R180);
                    let enc = RealEncoder::new(&v, fps, spec.start).map_err(vfail)?;
                    let mut q = RealQuality::new(&v, fps, spec.start).map_err(vfail)?;
                    if let Some(dir) = &scenario.video_dir {
                        let size = q.source_size();
                        let label = format!("{} ({})", spec.controller, v.codec.name());
                        let sink = video::SaveVideo::create(dir, &spec.name, size, fps, &label).map_err(vfail)?;
                        saved_videos.extend(sink.paths().into_iter().map(|p| (p, fps)));
                        q.sink = Some(Box::new(sink));
                    }
                    real = Some(q);
                    Box::new(enc)
                }
            };
            let cfg = SenderConfig {
                flow: i as u16,
                frame_interval: spec.ctx.frame_interval,
                mtu: spec.ctx.mtu,
                start: spec.start,
                stop: spec.stop,
                min_rate: spec.ctx.min_rate,
                max_rate: spec.ctx.max_rate,
                skip_threshold: spec.skip_threshold,
                cap: spec.cap,
                pause_on_queue_limit: spec.queue_time_limit.is_some(),
                nack: spec.nack,
                fec: spec.fec,
                audio: spec.audio,
                resolution: spec.resolution,
                max_resolution,
                bulk: spec.bulk,
                cwnd_pushback: spec.cwnd_pushback,
                pacer: PacerConfig {
                    queue_time_limit: spec.queue_time_limit,
                    burst: spec.pacer_burst,
                    ..PacerConfig::default()
                },
                ..SenderConfig::default()
            };
            let rcfg = ReceiverConfig {
                flow: i as u16,
                interval: spec.feedback_interval,
                nack: spec.nack.is_some(),
                keyframe_wait: spec.keyframe_wait,
                fec_overhead: spec.fec.map_or(FecConfig::default().overhead, |f| f.overhead),
                ..ReceiverConfig::default()
            };
            flows.push(Flow {
                spec: spec.clone(),
                sender: Sender::new(cfg, ctrl, encoder),
                receiver: match estimator {
                    Some(e) => Receiver::new(rcfg).with_estimator(e),
                    None => Receiver::new(rcfg),
                },
                armed: [Time::MAX; 4],
                stats: FlowStats::default(),
                prev: SendCounters::default(),
                series: Series::default(),
                frames: FrameLog::new(scenario.record_frames, spec.quality, spec.ctx.frame_interval, real, spec.stop),
                target_sum: 0.0,
                target_n: 0,
            });
        }
        let (mut fwd, mut rev) = link.paths();
        for spec in &scenario.flows {
            fwd.add_flow(spec.access_delay);
            rev.add_flow(spec.access_delay);
        }
        let mut sim = Simulation {
            fwd,
            rev,
            heap: BinaryHeap::with_capacity(4 * flows.len() + 4),
            link_armed: Time::MAX,
            end: Time::ZERO + scenario.duration,
            next_bin: Time::ZERO + scenario.bin,
            record_packets: scenario.record_packets,
            record_timeseries: scenario.record_timeseries,
            scenario,
            now: Time::ZERO,
            link,
            flows,
            events: 0,
            link_series: Series::default(),
            bin_delivered: 0,
            bin_drops: 0,
            delivered_bytes: 0,
            wall: std::time::Duration::ZERO,
            seed,
            spins: 0,
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
        self.record_packets = on;
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

    fn armed(&self, stage: Stage, flow: usize) -> Time {
        match stage {
            Stage::Link => self.link_armed,
            _ => self.flows[flow].armed[stage.slot()],
        }
    }

    fn set_armed(&mut self, stage: Stage, flow: usize, t: Time) {
        match stage {
            Stage::Link => self.link_armed = t,
            _ => self.flows[flow].armed[stage.slot()] = t,
        }
    }

    fn deadline(&self, stage: Stage, flow: usize) -> Option<Time> {
        match stage {
            Stage::Link => self.link.poll_timeout(),
            Stage::Deliver => self.fwd.poll_timeout(flow),
            Stage::Receiver => self.flows[flow].receiver.poll_timeout(),
            Stage::Feedback => self.rev.poll_timeout(flow),
            Stage::Sender => self.flows[flow].sender.poll_timeout(),
        }
    }

    /// Queue `stage` of `flow` at its current deadline unless it is queued
    /// there already; a superseded entry is skipped when it surfaces.
    fn arm(&mut self, stage: Stage, flow: usize) {
        let t = self.deadline(stage, flow).unwrap_or(Time::MAX);
        if t != self.armed(stage, flow) {
            self.set_armed(stage, flow, t);
            if t < Time::MAX {
                self.heap.push(Reverse((t, stage, flow as u32)));
            }
        }
    }

    /// The earliest time any component is due (bins and the end excluded).
    fn next_deadline(&mut self) -> Time {
        while let Some(&Reverse((t, stage, flow))) = self.heap.peek() {
            if self.armed(stage, flow as usize) == t {
                return t;
            }
            self.heap.pop();
        }
        Time::MAX
    }

    /// Run until simulated time `limit` (or the end). Returns false once done.
    pub fn run_until(&mut self, limit: Time) -> bool {
        let wall = std::time::Instant::now();
        while !self.done {
            let due = self.next_deadline();
            let mut t = due.min(self.next_bin).min(self.end).max(self.now);
            if t == self.now {
                // A component that claims to be due but makes no progress
                // must not stall the clock.
                self.spins += 1;
                if self.spins > 1_000 {
                    t = self.now + Duration::from_micros(1);
                    self.spins = 0;
                }
            } else {
                self.spins = 0;
            }
            if t > limit {
                break;
            }
            self.now = t;
            // A bin boundary alone only samples: stepping the components at
            // times they did not ask for would make results depend on the
            // bin width.
            if due <= t {
                self.step(t);
            }
            if self.next_bin <= t && self.next_bin <= self.end {
                self.sample_bin();
                self.next_bin += self.scenario.bin;
            }
            if t >= self.end {
                self.done = true;
                for (i, f) in self.flows.iter_mut().enumerate() {
                    f.frames.collect(i, &mut f.sender, &mut f.receiver, t, true);
                }
            }
        }
        self.wall += wall.elapsed();
        !self.done
    }

    /// The first real-codec failure (library error, unwritable video), if
    /// any: the run's quality numbers are not to be trusted then.
    pub fn failure(&self) -> Option<String> {
        self.flows.iter().enumerate().find_map(|(i, f)| {
            let e = f.sender.encoder().failure().or_else(|| f.frames.failure())?;
            Some(format!("flow[{i}] ({}): {e}", f.spec.name))
        })
    }

    pub fn run(&mut self) {
        self.run_until(Time::MAX);
    }

    /// Serve every component due at or before `t`, in (time, stage, flow)
    /// order. A component that stays due without progress is moved on by
    /// 1 µs after 1000 tries, so it cannot stall the clock.
    fn step(&mut self, t: Time) {
        let mut serves = 0u32;
        while let Some(&Reverse((at, stage, flow))) = self.heap.peek() {
            if at > t {
                break;
            }
            self.heap.pop();
            let flow = flow as usize;
            if self.armed(stage, flow) != at {
                continue;
            }
            self.set_armed(stage, flow, Time::MAX);
            serves += 1;
            if serves > 1_000 * (self.flows.len() as u32 + 1) {
                self.set_armed(stage, flow, t + Duration::from_micros(1));
                self.heap.push(Reverse((t + Duration::from_micros(1), stage, flow as u32)));
                continue;
            }
            match stage {
                Stage::Link => self.serve_link(t),
                Stage::Deliver => self.serve_deliveries(t, flow),
                Stage::Receiver => self.serve_receiver(t, flow),
                Stage::Feedback => self.serve_feedback(t, flow),
                Stage::Sender => self.serve_sender(t, flow),
            }
            self.arm(stage, flow);
        }
    }

    fn serve_link(&mut self, t: Time) {
        while let Some(d) = self.link.poll_departure(t) {
            self.events += 1;
            self.delivered_bytes += d.packet.size.bytes();
            self.bin_delivered += d.packet.size.bytes();
            let i = d.packet.flow as usize;
            self.flows[i].stats.on_departed(&d.packet, d.service_start - d.enqueued, d.lost);
            if d.lost {
                self.fwd.discard();
            } else {
                self.fwd.send(d.departed, i, d.packet);
                self.arm(Stage::Deliver, i);
            }
        }
        self.record_aqm_drops();
    }

    fn serve_deliveries(&mut self, t: Time, i: usize) {
        let f = &mut self.flows[i];
        while let Some((at, p)) = self.fwd.poll_arrival(i, t) {
            self.events += 1;
            f.stats.on_arrived(at, &p);
            f.receiver.handle_packet(at, &p);
        }
        self.arm(Stage::Receiver, i);
    }

    fn serve_receiver(&mut self, t: Time, i: usize) {
        self.events += 1;
        if let Some(rep) = self.flows[i].receiver.poll_report(t) {
            if !self.rev.lose() {
                self.rev.send(t, i, rep);
                self.arm(Stage::Feedback, i);
            }
        }
    }

    fn serve_feedback(&mut self, t: Time, i: usize) {
        while let Some((_, rep)) = self.rev.poll_arrival(i, t) {
            self.events += 1;
            self.flows[i].sender.handle_report(t, &rep);
        }
        self.arm(Stage::Sender, i);
    }

    fn serve_sender(&mut self, t: Time, i: usize) {
        let f = &mut self.flows[i];
        if f.sender.poll_timeout().is_some_and(|x| x <= t) {
            self.events += 1;
            f.sender.handle_timeout(t);
        }
        while let Some(p) = f.sender.poll_transmit(t) {
            self.events += 1;
            f.stats.on_sent(&p, self.record_packets);
            let seq = p.seq;
            if !self.link.enqueue(t, p) {
                f.stats.on_dropped(seq);
                self.bin_drops += 1;
            }
        }
        self.record_aqm_drops();
        self.arm(Stage::Link, 0);
    }

    /// Packets an AQM dropped inside the queue (CoDel at dequeue, fq_codel
    /// on overflow from the fattest flow).
    fn record_aqm_drops(&mut self) {
        while let Some((p, _)) = self.link.poll_drop() {
            self.flows[p.flow as usize].stats.on_dropped(p.seq);
            self.bin_drops += 1;
        }
    }

    /// Close the time-series bin ending at `next_bin`.
    fn sample_bin(&mut self) {
        let t1 = self.next_bin;
        let t0 = t1 - self.scenario.bin;
        let secs = self.scenario.bin.as_secs_f64();
        let cap = self.link.capacity().bytes_between(t0, t1);
        let cap_rate = DataRate::from_bps_f64(cap * 8.0 / secs);
        let qbytes = self.link.queue_bytes();
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.frames.collect(i, &mut f.sender, &mut f.receiver, t1, false);
            if t1 > f.spec.start && f.spec.stop.is_none_or(|s| t1 <= s) {
                f.target_sum += f.sender.target_rate().kbps_f64();
                f.target_n += 1;
            }
        }
        if self.record_timeseries {
            self.record_bin(t1, cap_rate, qbytes);
        }
        self.bin_delivered = 0;
        self.bin_drops = 0;
        for f in &mut self.flows {
            f.prev = *f.sender.counters();
            f.stats.bin = Default::default();
        }
    }

    /// Append the bin ending at `t1` to the link and flow time series.
    fn record_bin(&mut self, t1: Time, cap_rate: DataRate, qbytes: DataSize) {
        let secs = self.scenario.bin.as_secs_f64();
        let kbps = |bytes: u64| bytes as f64 * 8.0 / secs / 1e3;
        let ls = &mut self.link_series;
        ls.push("t_s", t1.as_secs_f64());
        ls.push("capacity_kbps", cap_rate.kbps_f64());
        ls.push("delivered_kbps", kbps(self.bin_delivered));
        ls.push("queue_bytes", qbytes.bytes() as f64);
        ls.push("queue_ms", if qbytes == DataSize::ZERO { 0.0 } else { (qbytes / cap_rate).as_millis_f64().min(1e7) });
        ls.push("drops", self.bin_drops as f64);
        for (i, f) in self.flows.iter_mut().enumerate() {
            let c = *f.sender.counters();
            let d = |k: usize| c.bytes[k] - f.prev.bytes[k];
            let dec = f.sender.decision();
            let s = &mut f.series;
            s.push("t_s", t1.as_secs_f64());
            s.push("flow", i as f64);
            s.push("target_kbps", f.sender.target_rate().kbps_f64());
            s.push("pacing_kbps", dec.pacing_rate.kbps_f64());
            s.push("encoder_kbps", f.sender.encoder().output_rate().kbps_f64());
            s.push("resolution_p", f.sender.resolution().size().1 as f64);
            s.push("send_kbps", kbps((0..6).map(d).sum()));
            s.push("video_kbps", kbps(d(0)));
            s.push("padding_kbps", kbps(d(1)));
            s.push("probe_kbps", kbps(d(2)));
            s.push("fec_kbps", kbps(d(3)));
            s.push("rtx_kbps", kbps(d(4)));
            s.push("audio_kbps", kbps(d(5)));
            s.push("goodput_kbps", kbps(f.stats.bin.media_recv_bytes));
            s.push("recv_kbps", kbps(f.stats.bin.recv_bytes));
            let b = &f.stats.bin;
            s.push("owd_ms", if b.owd_n > 0 { b.owd_sum_us / b.owd_n as f64 / 1e3 } else { f64::NAN });
            s.push("queue_ms", if b.queue_n > 0 { b.queue_sum_us / b.queue_n as f64 / 1e3 } else { f64::NAN });
            s.push("cwnd_bytes", dec.cwnd.map_or(f64::NAN, |w| w.bytes() as f64));
            s.push("in_flight_bytes", f.sender.in_flight().bytes() as f64);
            s.push("pacer_queue_bytes", f.sender.pacer().queued_bytes().bytes() as f64);
            f.sender.controller().state(&mut |k, v| s.push_state(k, v));
            s.end_row();
        }
        self.link_series.end_row();
    }
}
