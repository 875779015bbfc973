//! The sending side of one call: frame source at a frame rate → encoder →
//! packetizer (MTU) → FEC → pacer → wire, plus NACK-driven retransmission,
//! key frames on request, an optional audio stream, per-flow rate caps and a
//! resolution policy. A real codec's frame bytes ride in every packet of the
//! frame and its retransmissions (`Packet::payload`). The controller sees
//! every sent packet, encoded frame and feedback report. Sans-IO:
//! `handle_timeout`, `poll_transmit`, `handle_report`, `poll_timeout`.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::adapter::Outcome;
use crate::controller::{Controller, Decision, FecPlan, FrameInfo, FramePos, SenderState, SentPacket};
use crate::encoder::{EncodedFrame, FrameEncoder};
use crate::fec::{FecConfig, FecEncoder};
use crate::feedback::{Feedback, PacketResult, ReceiverReport, ReportFormat, ReportStats};
use crate::pacer::{Pacer, PacerConfig, Queued};
use crate::packet::{
    abs_send_time, rtp_timestamp, Packet, PacketKind, Payload, FLAG_FIRST, FLAG_FRAME, FLAG_KEY, FLAG_MARKER,
    FLAG_PROTECTED, NO_FRAME, RTX_OSN,
};
use crate::resolution::{Resolution, ResolutionPolicy, ResolutionState};
use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

/// An audio stream sharing the flow's budget (the "non-video rate" of
/// Dumbo's target formula): one packet every `ptime`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AudioConfig {
    /// Opus at 32 kbps with 20 ms frames is WebRTC's usual voice setting.
    pub rate: DataRate,
    pub ptime: Duration,
}

/// Upper bound of the encoder target besides the flow's `max_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateCap {
    None,
    /// libwebrtc's resolution-dependent default maximum
    /// (`Resolution::webrtc_max_rate`).
    Webrtc,
}

/// How a real sender's clocks and threads move frames and packets off the
/// ideal grid `start + k·interval`. With every field off (`OFF`, this
/// type's default; a scenario's default is rtcc-sim's realistic values)
/// captures and pacer wake-ups are exact, so two flows keep one phase for
/// the whole run; each field on draws from the flow's `seed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderTiming {
    /// First capture uniformly within one frame interval of the start (each
    /// camera starts at its own moment), and the pacer's wake-up grid
    /// uniformly within one tick.
    pub phase: bool,
    /// Bound of the camera clock's rate error: the flow's error is drawn
    /// uniformly in ±`drift_ppm` and stretches the frame interval.
    pub drift_ppm: f64,
    /// Capture → encoder hand-over delay, uniform in [0, `handover`]
    /// (libwebrtc VideoStreamEncoder::OnFrame posts the frame to the encoder
    /// task queue).
    pub handover: Duration,
    /// Encode time: normal with this mean and standard deviation, at least
    /// 0; the encoder codes one frame at a time, so a frame waits for the
    /// previous one.
    pub encode_time: Duration,
    pub encode_jitter: Duration,
    /// Pacer wake-ups on a grid of this period (0: exactly when a packet is
    /// due). libwebrtc's PacingController sleeps at least kMinSleepTime,
    /// 1 ms (modules/pacing/pacing_controller.cc); the older process-thread
    /// PacedSender ran every kMinPacketLimitMs, 5 ms (paced_sender.cc). A
    /// packet enqueued between wake-ups may still leave at once, as
    /// enqueuing processes the queue there too.
    pub pacer_tick: Duration,
    /// The flow's stream for these draws.
    pub seed: u64,
}

impl SenderTiming {
    pub const OFF: SenderTiming = SenderTiming {
        phase: false,
        drift_ppm: 0.0,
        handover: Duration::ZERO,
        encode_time: Duration::ZERO,
        encode_jitter: Duration::ZERO,
        pacer_tick: Duration::ZERO,
        seed: 0,
    };

    /// Whether every part is off (the seed aside): the exact grid.
    pub fn is_off(&self) -> bool {
        SenderTiming { seed: 0, ..*self } == SenderTiming::OFF
    }

    /// Whether frames wait between capture and the packetizer.
    fn delays_frames(&self) -> bool {
        self.handover.is_positive() || self.encode_time.is_positive() || self.encode_jitter.is_positive()
    }
}

impl Default for SenderTiming {
    fn default() -> Self {
        SenderTiming::OFF
    }
}

/// With `sim-layout`, in declaration order (`repr(C)`): what the sender
/// reads on every packet first, in one cache line (`align(64)`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub struct SenderConfig {
    pub start: Time,
    pub stop: Option<Time>,
    /// A backlogged bulk sender instead of video (Dumbo Fig. 3-1's
    /// "backlogged" reference): the send queue never runs dry.
    pub bulk: bool,
    pub flow: u16,
    pub audio: Option<AudioConfig>,
    /// How long sent packets are remembered for feedback; unacknowledged
    /// packets older than this leave the in-flight count.
    pub history: Duration,
    /// Retransmit NACKed media while its frame is younger than this.
    pub nack: Option<Duration>,
    /// Largest packet on the wire.
    pub mtu: DataSize,
    /// Encoder target bounds (per-flow caps).
    pub min_rate: DataRate,
    /// Skip encoding a frame while the pacer queue would take longer than this
    /// to drain at the target rate (`None` = never skip); a controller may
    /// ask for its own (`Decision::skip_threshold`, Dumbo's 100 ms).
    pub skip_threshold: Option<Duration>,
    /// Pause the encoder while the pacer is over its queue-time limit, as
    /// libwebrtc does.
    pub pause_on_queue_limit: bool,
    pub frame_interval: Duration,
    pub max_rate: DataRate,
    pub cap: RateCap,
    pub fec: Option<FecConfig>,
    pub resolution: ResolutionPolicy,
    /// Largest resolution an adaptive policy may pick: the source's (a real
    /// encoder cannot send more pixels than it is given).
    pub max_resolution: Resolution,
    /// libwebrtc's congestion-window pushback: scale the encoder target
    /// down while in-flight bytes exceed the window. Applies to window-based
    /// controllers that do not fill the window with padding.
    pub cwnd_pushback: bool,
    /// Count the pacer queue in the pushback's fill (libwebrtc's
    /// off-by-default WebRTC-AddPacingToCongestionWindowPushback trial).
    pub pushback_pacer: bool,
    pub pacer: PacerConfig,
    pub timing: SenderTiming,
    /// Frames come from outside (`handle_capture`, then
    /// `handle_encoded_frame` once an encoder running elsewhere is done), as
    /// a camera and a real-time encoder deliver them; the internal frame
    /// clock is off and the encoder given to `Sender::new` is never called
    /// (key frame requests and skips reach the outside encoder through
    /// `EncodeRequest` and `handle_capture`'s `None`).
    pub external_frames: bool,
    /// The wire's first transport-wide and RTP sequence numbers (RFC 3550
    /// §5.1: random, so that a stream's numbers say nothing of when it
    /// began). The sender's own packet numbering (`SentPacket::seq`) starts
    /// at 0 whatever they are.
    pub transport_base: u16,
    pub media_base: u16,
    /// The controller's one-way delay is absolute (the default): receiver
    /// clock minus sender clock as measured, which the simulator's one clock
    /// gives and which FBRA gets without synchronised clocks from Sync &
    /// Sense (fbra.txt §4.1, its ref. [36]). `false` models a receiver that
    /// reports raw differences of unsynchronised clocks: only differences
    /// mean anything, and the delay is given relative to the smallest seen
    /// on the flow.
    pub clocks_agree: bool,
    /// RTCP sender reports about this often (`sr::VIDEO_INTERVAL`, 1 s, as
    /// libwebrtc sends video RTCP), each one at a random point of [0.5, 1.5]
    /// intervals after the last; `None`: no SRs, so receiver reports echo
    /// none and give no round trip (`Feedback::rtcp_rtt`).
    pub rtcp_interval: Option<Duration>,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            flow: 0,
            frame_interval: Duration::from_micros(33_333),
            mtu: DataSize::from_bytes(1200),
            start: Time::ZERO,
            stop: None,
            min_rate: DataRate::from_kbps(30),
            max_rate: DataRate::from_mbps(50),
            cap: RateCap::None,
            skip_threshold: None,
            pause_on_queue_limit: true,
            history: Duration::from_secs(5),
            nack: None,
            fec: None,
            audio: None,
            resolution: ResolutionPolicy::Fixed(Resolution::R720),
            max_resolution: Resolution::R1080,
            bulk: false,
            cwnd_pushback: true,
            pushback_pacer: false,
            pacer: PacerConfig::default(),
            timing: SenderTiming::OFF,
            external_frames: false,
            transport_base: 0,
            media_base: 0,
            clocks_agree: true,
            rtcp_interval: Some(crate::sr::VIDEO_INTERVAL),
        }
    }
}

/// What happened to a frame on the sending side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SentFrame {
    /// Encoded frame id (consecutive over encoded frames, as a picture id);
    /// `NO_FRAME` for a skipped capture.
    pub frame: u32,
    pub capture: Time,
    pub size: DataSize,
    pub key: bool,
    pub packets: u16,
    /// Encoder target when the frame was encoded.
    pub target: DataRate,
    pub resolution: Resolution,
    pub first_sent: Option<Time>,
    pub last_sent: Option<Time>,
    pub skipped: bool,
    /// Its media packets sent so far (retransmissions not counted).
    pub media_sent: u16,
}

#[derive(Clone, Copy, Debug)]
struct HistEntry {
    kind: PacketKind,
    size: DataSize,
    send_time: Time,
    probe_cluster: i32,
    pos: FramePos,
    outstanding: bool,
}

/// A packetized media packet kept for retransmission.
#[derive(Clone, Debug)]
struct MediaEntry {
    item: Queued,
    capture: Time,
    last_rtx: Option<Time>,
}

/// Cumulative per-kind counters, read by metrics. With `sim-layout`, in
/// declaration order (`repr(C)`): what every sender wake-up and packet
/// books first.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "sim-layout", repr(C))]
pub struct SendCounters {
    /// Time since the start with the send buffer (the pacer queue) over
    /// `BUFFER_OVERSHOOT` of sending at the pacing rate, and empty
    /// (BurstRTC §II-C overshooting and undershooting), of `buffer_time`.
    pub buffer_over: Duration,
    pub buffer_empty: Duration,
    pub buffer_time: Duration,
    pub bytes: [u64; 6],
    pub packets: [u64; 6],
    pub key_frames: u64,
    /// Frames the encoder's own rate control dropped (real codecs).
    pub encoder_drops: u64,
    /// Real frames the payload format could not cut into RTP payloads (a
    /// bitstream its packetizer refuses); sent as sizes only, so the
    /// receiver counts them as decode errors.
    pub packetize_errors: u64,
    /// Captures dropped for the controller's `cwnd_reduce_ratio` (GCC's
    /// congestion-window frame dropping).
    pub cwnd_drops: u64,
    pub resolution_switches: u64,
    /// Times the call sent no media, retransmission, FEC or audio for
    /// `STALL` while live (after its first such packet): a window held by
    /// lost packets stalls until their history expires unless the pacer
    /// sends keep-alives (`PacerConfig::keepalive`).
    pub stalls: u64,
}

/// With `sim-layout`, fields in declaration order (`repr(C)`): those every
/// packet touches first, so that with many flows a packet costs few cache
/// lines. The first seven lines hold the scalars, pacer, history and the
/// counters' hot part; `cfg` starts a line of its own (it is line-aligned).
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub struct Sender {
    stopped: bool,
    /// The controller's decision never changes (`Controller::fixed_decision`):
    /// it is read once, not after every packet.
    fixed_decision: bool,
    /// The frame whose media is being sent (`NO_FRAME`: none), and the send
    /// times of its run of packets, not yet written to its `frames` entry:
    /// with many flows that entry is out of cache by the next packet.
    run_frame: u32,
    run_first: Time,
    run_last: Time,
    next_seq: u64,
    hist_base: u64,
    /// The newest packet sent, as the controller was told (what a driver
    /// may record beside the packet: its full sequence and place in a frame).
    newest_sent: SentPacket,
    in_flight: DataSize,
    /// When the oldest entry of `history` (`media`) expires; `Time::MAX`
    /// when empty.
    hist_expire: Time,
    media_expire: Time,
    next_frame: Time,
    next_audio: Time,
    /// When the next RTCP sender report is due (`None`: SRs off), the
    /// draws that spread them (RFC 3550 §6.3.1), and one due but not yet
    /// taken (`poll_rtcp`).
    next_sr: Option<Time>,
    sr_rng: Rng,
    sr_pending: bool,
    /// The newest RR round trip not yet handed to the controller.
    rtcp_rtt: Option<Duration>,
    /// The newest report time a report's bytes gave (receiver clock).
    last_report_time: Option<Time>,
    /// `poll_timeout`, computed on demand after any input changed it.
    timeout: Cell<Option<Option<Time>>>,
    /// When the send buffer's state was last booked (`book_buffer`).
    buffer_at: Option<Time>,
    controller: Box<dyn Controller>,
    pacer: Pacer,
    /// Send history, `history[i]` has sequence `hist_base + i`.
    history: VecDeque<HistEntry>,
    /// A packet books its first 80 bytes (buffer times, media bytes and
    /// packets).
    counters: SendCounters,
    /// What each transmitted packet reads of it is its first 64 bytes, one
    /// cache line here.
    cfg: SenderConfig,
    // The rest is read per frame or report.
    /// The controller's FEC plan turned FEC off (`FecPlan { group: 0 }`).
    fec_off: bool,
    /// The controller plans FEC (FBRA's probe rides on top of the media
    /// rate); otherwise the flow's FEC is protection inside the target.
    fec_planned: bool,
    next_frame_id: u32,
    /// Captures handed to an external encoder (`handle_capture`) and not
    /// yet back (`handle_encoded_frame`), oldest first: no newer capture's
    /// record is handed on before theirs, so records stay in capture order.
    encoding: std::collections::VecDeque<Time>,
    next_media_seq: u32,
    media_base: u32,
    frame_base: u32,
    decision: Decision,
    /// Encoded frames not yet collected; `frames[i]` is frame `frame_base + i`.
    frames: VecDeque<SentFrame>,
    /// Media packets by media sequence, `media[i]` has `media_base + i`.
    media: VecDeque<MediaEntry>,
    /// Sequences below this are settled (reported, or their report lost).
    settled_upto: u64,
    /// Encoder-rate ratio of the congestion-window pushback.
    pushback: f64,
    rtt: Duration,
    /// Smallest one-way delay reported so far (`SenderConfig::clocks_agree`).
    owd_floor: Option<Duration>,
    encoder: Box<dyn FrameEncoder>,
    /// Skipped captures not yet collected.
    skipped: VecDeque<SentFrame>,
    fec: Option<FecEncoder>,
    /// Parity bytes per media byte of recent frames (EWMA over frames).
    fec_ratio: f64,
    resolution: ResolutionState,
    /// libwebrtc's cwnd_frame_counter_: captures seen while dropping.
    cwnd_frame_counter: u64,
    /// A key frame was asked for (PLI, resolution switch) and not yet
    /// encoded: `EncodeRequest::key` for an encoder outside.
    key_requested: bool,
    /// When the last packet with content (not padding or probe) left, and
    /// whether the gap since has been counted as a stall.
    last_content: Option<Time>,
    stall_counted: bool,
    /// `SenderTiming` on: its draws, the capture grid (origin, captures
    /// since, interval in µs with the clock's drift), the frames between
    /// capture and packetizer (ready time, capture) and when the encoder is
    /// free, and the origin of the pacer's wake-up grid.
    clock: Option<FrameClock>,
}

struct FrameClock {
    rng: Rng,
    origin: Time,
    captures: u64,
    interval_us: f64,
    encoding: VecDeque<(Time, Time)>,
    encoder_free: Time,
    tick_origin: Time,
}

impl FrameClock {
    fn new(cfg: &SenderConfig) -> Option<FrameClock> {
        let t = cfg.timing;
        if t.is_off() {
            return None;
        }
        let mut rng = Rng::new(t.seed);
        let mut within = |d: Duration| match t.phase {
            true => Duration::from_micros((rng.uniform() * d.as_micros() as f64) as i64),
            false => Duration::ZERO,
        };
        let origin = cfg.start + within(cfg.frame_interval);
        let tick_origin = cfg.start + within(t.pacer_tick);
        let drift = (2.0 * rng.uniform() - 1.0) * t.drift_ppm * 1e-6;
        Some(FrameClock {
            origin,
            captures: 0,
            interval_us: cfg.frame_interval.as_micros() as f64 * (1.0 + drift),
            encoding: VecDeque::new(),
            encoder_free: cfg.start,
            tick_origin,
            rng,
        })
    }

    fn next_capture(&self) -> Time {
        self.origin + Duration::from_micros((self.captures as f64 * self.interval_us).round() as i64)
    }

    /// When a frame captured at `capture` reaches the packetizer.
    fn ready_at(&mut self, t: &SenderTiming, capture: Time) -> Time {
        let handover = Duration::from_micros((self.rng.uniform() * t.handover.as_micros() as f64) as i64);
        let encode = t.encode_time.as_micros() as f64 + self.rng.normal() * t.encode_jitter.as_micros() as f64;
        let start = (capture + handover).max(self.encoder_free);
        self.encoder_free = start + Duration::from_micros(encode.max(0.0) as i64);
        self.encoder_free
    }

    /// `at` moved up to the pacer's next wake-up on its grid.
    fn tick_up(&self, tick: Duration, at: Time) -> Time {
        if !tick.is_positive() || at <= self.tick_origin {
            return at;
        }
        let (since, tick) = ((at - self.tick_origin).as_micros(), tick.as_micros());
        self.tick_origin + Duration::from_micros((since + tick - 1) / tick * tick)
    }
}

/// libwebrtc RTPSender: a packet is not retransmitted again within one RTT
/// (rtp_sender.cc, `min_resend_time`); 100 ms before any RTT sample
/// (kDefaultRtt).
const DEFAULT_RTT: Duration = Duration::from_millis(100);
/// Bytes a bulk sender keeps queued: more than any window it will be given
/// needs within one pacer step.
const BULK_BACKLOG: DataSize = DataSize::from_bytes(64_000);
/// BurstRTC §II-C: the send buffer overshoots while what it holds takes
/// more than 150 ms to send, "a typical RTC application ... demands
/// consistent latency below 150 ms".
pub const BUFFER_OVERSHOOT: Duration = Duration::from_millis(150);
/// A gap in sending content this long is a stall (`SendCounters::stalls`):
/// thirty frame intervals at 30 fps, and twice libwebrtc's 500 ms keep-alive
/// interval, so a keep-alive whose feedback reopens the window ends the gap
/// before it counts.
pub const STALL: Duration = Duration::from_secs(1);

impl Sender {
    pub fn new(cfg: SenderConfig, controller: Box<dyn Controller>, encoder: Box<dyn FrameEncoder>) -> Self {
        // Applied from the controller's first decision below.
        let decision = Decision::default();
        let mut s = Sender {
            // A pacer that wakes on a grid catches up what the grid made late
            // (PacerConfig::catch_up), unless the caller set its own bound.
            pacer: Pacer::new(match cfg.pacer.catch_up.is_positive() || cfg.timing.is_off() {
                true => cfg.pacer,
                false => PacerConfig { catch_up: cfg.timing.pacer_tick, ..cfg.pacer },
            }),
            next_frame: cfg.start,
            next_audio: cfg.start,
            fec: cfg.fec.map(FecEncoder::new),
            fec_off: false,
            fec_planned: false,
            fixed_decision: controller.fixed_decision(),
            // Until frames are measured: one parity per `group` packets.
            fec_ratio: cfg.fec.map_or(0.0, |f| 1.0 / f64::from(f.group.max(1))),
            resolution: ResolutionState::new(cfg.resolution).with_max(cfg.max_resolution),
            cfg,
            controller,
            encoder,
            decision,
            next_frame_id: 0,
            encoding: std::collections::VecDeque::new(),
            cwnd_frame_counter: 0,
            // A stream starts with a key frame.
            key_requested: true,
            last_content: None,
            stall_counted: false,
            next_seq: 0,
            next_media_seq: u32::from(cfg.media_base),
            history: VecDeque::with_capacity(256),
            hist_base: 0,
            newest_sent: SentPacket::default(),
            hist_expire: Time::MAX,
            media_expire: Time::MAX,
            settled_upto: 0,
            media: VecDeque::with_capacity(64),
            media_base: 0,
            in_flight: DataSize::ZERO,
            frames: VecDeque::with_capacity(64),
            frame_base: 0,
            run_frame: NO_FRAME,
            run_first: Time::ZERO,
            run_last: Time::ZERO,
            skipped: VecDeque::new(),
            counters: SendCounters::default(),
            rtt: DEFAULT_RTT,
            stopped: false,
            buffer_at: None,
            pushback: 1.0,
            owd_floor: None,
            timeout: Cell::new(None),
            clock: FrameClock::new(&cfg),
            next_sr: None,
            // A stream of the timing seed of its own: SRs move no other draw.
            sr_rng: Rng::new(cfg.timing.seed).fork(0x5352),
            sr_pending: false,
            rtcp_rtt: None,
            last_report_time: None,
        };
        if let Some(iv) = cfg.rtcp_interval.filter(|iv| iv.is_positive()) {
            // RFC 3550 §6.2: the first report after half an interval.
            s.next_sr = Some(cfg.start + s.sr_spread(iv / 2));
        }
        if let Some(c) = &s.clock {
            s.next_frame = c.next_capture();
        }
        s.apply_decision(cfg.start);
        s
    }

    pub fn controller(&self) -> &dyn Controller {
        self.controller.as_ref()
    }
    pub fn decision(&self) -> Decision {
        self.decision
    }
    pub fn encoder(&self) -> &dyn FrameEncoder {
        self.encoder.as_ref()
    }
    /// Puts `encoder` in the sender's place and returns the one it had: a
    /// driver that encodes elsewhere (`external_frames`) takes the real one
    /// to its own thread and leaves a stand-in that reports its rate.
    pub fn replace_encoder(&mut self, encoder: Box<dyn FrameEncoder>) -> Box<dyn FrameEncoder> {
        std::mem::replace(&mut self.encoder, encoder)
    }
    pub fn resolution(&self) -> Resolution {
        self.resolution.current()
    }
    /// An encoded frame not yet collected with `pop_frame`.
    pub fn frame(&self, id: u32) -> Option<SentFrame> {
        self.frames.get(id.checked_sub(self.frame_base)? as usize).map(|f| self.with_run(*f))
    }
    /// The oldest uncollected capture (encoded or skipped), unless an
    /// older one is still with an external encoder.
    pub fn oldest_frame(&self) -> Option<SentFrame> {
        let f = match (self.frames.front(), self.skipped.front()) {
            (Some(f), Some(s)) => Some(if s.capture < f.capture { *s } else { self.with_run(*f) }),
            (f, s) => f.map(|f| self.with_run(*f)).or(s.copied()),
        };
        f.filter(|f| !self.behind_encoder(f.capture))
    }
    /// Whether a capture older than `capture` is still being encoded.
    fn behind_encoder(&self, capture: Time) -> bool {
        self.encoding.front().is_some_and(|&c| c < capture)
    }
    /// `f` with the send times of the current run, if they are its.
    fn with_run(&self, mut f: SentFrame) -> SentFrame {
        if f.frame == self.run_frame {
            f.first_sent.get_or_insert(self.run_first);
            f.last_sent = Some(self.run_last);
        }
        f
    }
    /// Write the current run's send times to its frame's entry.
    fn flush_run(&mut self) {
        if let Some(i) = self.run_frame.checked_sub(self.frame_base).filter(|_| self.run_frame != NO_FRAME) {
            if let Some(f) = self.frames.get(i as usize).copied() {
                self.frames[i as usize] = self.with_run(f);
            }
        }
        self.run_frame = NO_FRAME;
    }
    /// The oldest capture's record if nothing more of it can be sent at
    /// `now`: a skipped capture, a frame whose media packets have all left,
    /// any frame once the sender has stopped, or any `settle` after its
    /// capture. A driver hands these on as they come, apart from the
    /// receiving end's records.
    pub fn pop_final_frame(&mut self, now: Time, settle: Duration) -> Option<SentFrame> {
        let f = self.oldest_frame()?;
        let last = f.skipped || self.stopped || f.media_sent >= f.packets || now >= f.capture + settle;
        if last {
            self.pop_frame()
        } else {
            None
        }
    }
    /// Hand the oldest capture's record to the driver (keeps memory flat).
    pub fn pop_frame(&mut self) -> Option<SentFrame> {
        let skipped_first = match (self.frames.front(), self.skipped.front()) {
            (Some(f), Some(s)) => s.capture < f.capture,
            (None, Some(_)) => true,
            _ => false,
        };
        let next = if skipped_first {
            self.skipped.front().map(|s| s.capture)
        } else {
            self.frames.front().map(|f| f.capture)
        };
        if next.is_some_and(|c| self.behind_encoder(c)) {
            return None;
        }
        if skipped_first {
            return self.skipped.pop_front();
        }
        self.flush_run();
        let f = self.frames.pop_front()?;
        self.frame_base += 1;
        Some(f)
    }
    pub fn counters(&self) -> &SendCounters {
        &self.counters
    }
    pub fn in_flight(&self) -> DataSize {
        self.in_flight
    }
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    fn audio_rate(&self) -> DataRate {
        self.cfg.audio.map_or(DataRate::ZERO, |a| a.rate)
    }

    /// Upper bound of the video target: the flow's cap and, with
    /// `RateCap::Webrtc`, libwebrtc's default for the current resolution.
    pub fn max_video_rate(&self) -> DataRate {
        match self.cfg.cap {
            RateCap::None => self.cfg.max_rate,
            RateCap::Webrtc => self.cfg.max_rate.min(self.resolution.current().webrtc_max_rate()),
        }
    }

    /// Encoder target: the controller's budget less the audio rate, within
    /// the flow's caps, less what congestion-window frame dropping sheds.
    pub fn target_rate(&self) -> DataRate {
        self.encoder_target().0
    }

    /// The encoder target and, while GCC's window drops frames, one capture
    /// in how many is dropped (the target shed by as much).
    fn encoder_target(&self) -> (DataRate, Option<u64>) {
        let budget = self.video_budget();
        let interval = self.cwnd_drop_interval(budget);
        (interval.map_or(budget, |n| budget - DataRate::from_bps(budget.bps() / n)), interval)
    }

    /// The controller's budget less audio and, for the flow's own FEC, the
    /// parity it adds: libwebrtc takes the protection rate off the encoder
    /// target (VideoSendStreamImpl::OnBitrateUpdated). A controller's FEC
    /// plan (FBRA's probe) rides on top instead.
    fn video_budget(&self) -> DataRate {
        let budget = self.decision.target_rate.mul_f64(self.pushback) - self.audio_rate();
        let protected = self.fec.is_some() && !self.fec_off && !self.fec_planned;
        let budget = if protected { budget.mul_f64(1.0 / (1.0 + self.fec_ratio)) } else { budget };
        budget.clamp(self.cfg.min_rate, self.max_video_rate())
    }

    /// libwebrtc VideoStreamEncoder::UpdateTargetBitrate: with the window's
    /// reduce ratio above 1 % and the target above the codec's minimum (the
    /// flow's min_rate), one frame in max(2, target / reduction) is dropped,
    /// the reduction capped at target − minimum ("at maximum the congestion
    /// window can drop 1/2 frames").
    fn cwnd_drop_interval(&self, target: DataRate) -> Option<u64> {
        let ratio = self.decision.cwnd_reduce_ratio;
        if !(ratio > 0.01) || target <= self.cfg.min_rate {
            return None;
        }
        let reduce = ((target.bps() as f64 * ratio) as u64).min((target - self.cfg.min_rate).bps());
        (reduce > 0).then(|| (target.bps() / reduce).max(2))
    }

    /// libwebrtc CongestionWindowPushbackController::UpdateTargetBitrate:
    /// fill > 1.5 → ×0.9, > 1 → ×0.95, < 0.1 → 1, else ×1.05 (capped at 1).
    /// The fill is outstanding bytes over the window, plus the pacer queue
    /// with `pushback_pacer` (libwebrtc's off-by-default
    /// WebRTC-AddPacingToCongestionWindowPushback trial).
    fn update_pushback(&mut self) {
        let Some(w) =
            self.decision.cwnd.filter(|_| self.cfg.cwnd_pushback && self.decision.padding_rate == DataRate::ZERO)
        else {
            self.pushback = 1.0;
            return;
        };
        let queued = if self.cfg.pushback_pacer { self.pacer.queued_bytes() } else { DataSize::ZERO };
        let fill = (self.in_flight + queued).bytes() as f64 / w.bytes().max(1) as f64;
        self.pushback = crate::controller::pushback_step(self.pushback, fill);
    }

    /// Takes up a decision the controller changed outside its calls
    /// (`Controller::refresh`) from `now`.
    pub fn refresh_decision(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        self.controller.refresh(now);
        self.apply_decision(now);
        self.refresh_timeout();
    }

    fn apply_decision(&mut self, now: Time) {
        // A fixed decision, applied at the start, cannot differ later.
        if !self.fixed_decision || now == self.cfg.start {
            let d = self.controller.decision();
            if d != self.decision || now == self.cfg.start {
                if d.fec != self.decision.fec {
                    if let Some(plan) = d.fec {
                        self.apply_fec(now, plan);
                    }
                }
                self.decision = d;
                self.pacer.set_rates(now, d.pacing_rate, d.padding_rate, d.cwnd);
            }
        }
        while let Some(c) = self.controller.poll_probe() {
            self.pacer.add_probe(c);
        }
    }

    /// A new FEC plan from the controller: the group size for the packets
    /// encoded from now on, starting FEC if the flow had none; group 0 stops
    /// it after closing the open group, so packets already sent keep their
    /// protection.
    fn apply_fec(&mut self, now: Time, plan: FecPlan) {
        self.fec_planned = true;
        if plan.group == 0 {
            self.fec_off = true;
            if let Some(p) = self.fec.as_mut().and_then(FecEncoder::flush) {
                self.pacer.enqueue(parity(p, now));
            }
            return;
        }
        self.fec_off = false;
        self.fec.get_or_insert_with(|| FecEncoder::new(FecConfig::default())).set_group(plan.group);
    }

    fn sender_state(&self) -> SenderState {
        SenderState {
            queued: self.pacer.queued_bytes(),
            queued_packets: self.pacer.queued_packets(),
            in_flight: self.in_flight,
        }
    }

    /// Tell the controller the queue or in-flight bytes changed.
    fn notify_state(&mut self, now: Time) {
        let st = self.sender_state();
        self.controller.on_sender_state(now, &st);
    }

    fn is_stopped(&self, now: Time) -> bool {
        self.stopped || self.cfg.stop.is_some_and(|s| now >= s)
    }

    /// Start loading what sending a packet touches: the struct's lines up to
    /// the config's first, the pacer's next packets and both ends of the send
    /// history and media rings (`crate::cache`).
    #[inline]
    #[cfg(feature = "sim-layout")]
    pub fn prefetch(&self) {
        crate::cache::prefetch(self as *const Sender as *const u8, std::mem::offset_of!(Sender, cfg) + 64);
        self.pacer.prefetch();
        // Both ends: a send appends after the back, and `trim_history`
        // reads the front whenever the oldest entry has expired (about once
        // a packet at a steady rate); it was sent `cfg.history` ago and is
        // long out of cache.
        if let Some(h) = self.history.front() {
            crate::cache::prefetch_val(h);
        }
        if let Some(h) = self.history.back() {
            crate::cache::prefetch_with_next(h, 2);
        }
        for m in [self.media.front(), self.media.back()].into_iter().flatten() {
            crate::cache::prefetch_val(m);
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        if let Some(t) = self.timeout.get() {
            return t;
        }
        let t = self.compute_timeout();
        self.timeout.set(Some(t));
        t
    }

    fn refresh_timeout(&mut self) {
        self.timeout.set(None);
    }

    fn compute_timeout(&self) -> Option<Time> {
        let t = self.timeout_except_sr();
        match self.next_sr_due() {
            Some(sr) => Some(t.map_or(sr, |t| t.min(sr))),
            None => t,
        }
    }

    /// When the next SR is due, if SRs are on and the sender is active: only
    /// an active sender reports (RFC 3550 §6.4), so until its first RTP
    /// packet the SR timer wakes nothing.
    fn next_sr_due(&self) -> Option<Time> {
        self.next_sr.filter(|_| !self.stopped && self.counters.packets[PacketKind::Media as usize] > 0)
    }

    /// When the sender is next due for anything but a sender report.
    fn timeout_except_sr(&self) -> Option<Time> {
        if self.stopped {
            return None;
        }
        let mut t = self.pacer.poll_timeout(self.in_flight);
        if let Some(c) = &self.clock {
            t = t.map(|at| c.tick_up(self.cfg.timing.pacer_tick, at));
        }
        let mut take = |x: Option<Time>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t: Time| t.min(x)));
            }
        };
        if self.cfg.external_frames {
        } else if !self.cfg.bulk {
            take(Some(self.next_frame));
            take(self.clock.as_ref().and_then(|c| c.encoding.front()).map(|f| f.0));
        } else if self.pacer.queued_bytes() < BULK_BACKLOG {
            // Due at once (from the start) to top the backlog up.
            take(Some(self.cfg.start));
        }
        take(self.cfg.audio.map(|_| self.next_audio));
        take(self.controller.poll_timeout());
        take(self.cfg.stop);
        t
    }

    /// `interval` spread over [0.5, 1.5] of itself (RFC 3550 §6.3.1); with
    /// the timing models off (exact timing), the interval itself, so the run
    /// draws nothing from the seed.
    fn sr_spread(&mut self, interval: Duration) -> Duration {
        if self.cfg.timing.is_off() {
            return interval;
        }
        interval.mul_f64(0.5 + self.sr_rng.uniform())
    }

    /// An RTCP sender report due at `now` (RFC 3550 §6.4.1: SR and SDES
    /// CNAME in one compound datagram, `sr::sender_report`), as the packet
    /// that carries it: kind `Feedback` (RTCP), its bytes the payload, its
    /// size theirs plus IPv4 and UDP headers, as a report's. It goes out
    /// beside the pacer, as libwebrtc's RTCP does. None before the first
    /// RTP packet (only an active sender reports) or after the stop.
    /// Drained after `handle_timeout` like `poll_transmit`; one not taken
    /// before the next is due is replaced by it.
    pub fn poll_rtcp(&mut self, now: Time) -> Option<Packet> {
        if self.stopped || !std::mem::take(&mut self.sr_pending) {
            return None;
        }
        let m = PacketKind::Media as usize;
        let (packets, octets) = (self.counters.packets[m], self.counters.bytes[m]);
        let bytes = crate::sr::sender_report(self.cfg.flow, now, packets, octets);
        Some(Packet {
            kind: PacketKind::Feedback,
            size: DataSize::from_bytes(28 + bytes.len() as u64),
            payload: Some(Payload::new(bytes)),
            ..Packet::default()
        })
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.book_buffer(now);
        self.on_timeout(now);
        self.refresh_timeout();
    }

    fn on_timeout(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        if let Some(interval) = self.cfg.rtcp_interval.filter(|_| self.next_sr_due().is_some_and(|t| t <= now)) {
            self.next_sr = Some(now + self.sr_spread(interval));
            self.sr_pending = true;
            // A wake for the report alone touches nothing else (libwebrtc's
            // RTCP timer is not the pacer's), so SRs change no send.
            if self.timeout_except_sr().is_none_or(|t| t > now) {
                return;
            }
        }
        if self.is_stopped(now) {
            self.stopped = true;
            self.pacer.clear();
            return;
        }
        if self.controller.poll_timeout().is_some_and(|t| t <= now) {
            self.controller.on_timeout(now);
            self.apply_decision(now);
        }
        if let Some(a) = self.cfg.audio {
            while self.next_audio <= now {
                let size = (a.rate * a.ptime).max(DataSize::from_bytes(20));
                self.pacer.enqueue(Queued::filler(PacketKind::Audio, size, self.next_audio));
                self.next_audio += a.ptime;
            }
            self.notify_state(now);
        }
        if self.cfg.bulk {
            self.refill_bulk(now);
        } else if self.cfg.external_frames {
            // Frames arrive through `handle_capture`.
        } else if self.clock.is_some() {
            self.run_frame_clock(now);
        } else {
            while self.next_frame <= now {
                let capture = self.next_frame;
                self.next_frame += self.cfg.frame_interval;
                self.produce_frame(now, capture);
            }
        }
        self.trim_history(now);
    }

    /// The frame clock with `SenderTiming` on: captures on the drifting
    /// grid enter the encoder, and frames whose encode is done reach the
    /// packetizer.
    fn run_frame_clock(&mut self, now: Time) {
        let timing = self.cfg.timing;
        let Some(c) = self.clock.as_mut() else { return };
        while self.next_frame <= now {
            let capture = self.next_frame;
            c.captures += 1;
            self.next_frame = c.next_capture();
            let ready = if timing.delays_frames() { c.ready_at(&timing, capture) } else { capture };
            c.encoding.push_back((ready, capture));
        }
        loop {
            let Some(c) = self.clock.as_mut() else { return };
            match c.encoding.front() {
                Some(&(ready, capture)) if ready <= now => {
                    c.encoding.pop_front();
                    self.produce_frame(now, capture);
                }
                _ => return,
            }
        }
    }

    fn request_key_frame(&mut self) {
        if !self.cfg.external_frames {
            self.encoder.request_key_frame();
        }
        self.key_requested = true;
    }

    /// Encode the frame captured at `capture`, handed over at `now`
    /// (`capture <= now`; the controller only ever sees `now`), with the
    /// internal encoder.
    fn produce_frame(&mut self, now: Time, capture: Time) {
        let Some(req) = self.capture_request(capture) else { return };
        let enc = self.encoder.encode_frame(self.next_frame_id, capture, req.target, req.resolution);
        self.frame_encoded(now, req, enc);
    }

    /// A picture captured at `capture` reached the sender at `now` (the
    /// encoder as an input, `SenderConfig::external_frames`): what to encode
    /// it at, or `None` when the sender skips it (the controller's skip
    /// threshold, GCC's window frame dropping, the pacer over its limit).
    /// Hand the encoder's result to `handle_encoded_frame`, in capture order.
    pub fn handle_capture(&mut self, now: Time, capture: Time) -> Option<EncodeRequest> {
        self.book_buffer(now);
        let req = if self.is_stopped(now) || now < self.cfg.start { None } else { self.capture_request(capture) };
        if let Some(r) = &req {
            self.encoding.push_back(r.capture);
        }
        self.refresh_timeout();
        req
    }

    /// The encoder finished `req` at `now`: the frame (`None` if the
    /// encoder dropped it) is packetized and queued, as one from the
    /// internal encoder.
    pub fn handle_encoded_frame(&mut self, now: Time, req: EncodeRequest, frame: Option<EncodedFrame>) {
        self.book_buffer(now);
        if let Some(i) = self.encoding.iter().position(|&c| c == req.capture) {
            self.encoding.remove(i);
        }
        // Nothing goes out after the stop, as from the internal encoder;
        // the capture is recorded as not sent.
        if !self.is_stopped(now) && now >= self.cfg.start {
            self.frame_encoded(now, req, frame);
        } else {
            self.push_skipped(req.capture, req.target, req.resolution);
        }
        self.refresh_timeout();
    }

    /// The capture-time half of a frame: skip or ask for an encode.
    fn capture_request(&mut self, capture: Time) -> Option<EncodeRequest> {
        let (target, interval) = self.encoder_target();
        // VideoStreamEncoder::OnFrame: the counter runs only while dropping.
        let cwnd_drop = interval.is_some_and(|n| {
            self.cwnd_frame_counter += 1;
            (self.cwnd_frame_counter - 1) % n == 0
        });
        self.counters.cwnd_drops += u64::from(cwnd_drop);
        if self.resolution.update(capture, target) {
            // A new resolution starts with a key frame in every codec.
            self.request_key_frame();
            self.counters.resolution_switches += 1;
        }
        let resolution = self.resolution.current();
        let threshold = match (self.cfg.skip_threshold, self.decision.skip_threshold) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Dumbo §4 "Pacer": the queue's latency is its size over the target
        // bitrate (not the pacing rate, which Copa sets at twice its rate).
        let latency = self.pacer.queued_bytes() / self.decision.target_rate.max(self.cfg.min_rate);
        let skip = cwnd_drop
            || threshold.is_some_and(|th| latency > th)
            || (self.cfg.pause_on_queue_limit && self.pacer.over_queue_time_limit());
        let key = std::mem::take(&mut self.key_requested);
        if skip {
            // An external encoder's stand-in passes it on: a real codec's
            // rate decays over skipped captures wherever it runs.
            self.encoder.skip(capture, target);
            // A skipped capture leaves the key frame request standing.
            self.key_requested = key;
            self.push_skipped(capture, target, resolution);
            return None;
        }
        Some(EncodeRequest { capture, target, resolution, key })
    }

    fn push_skipped(&mut self, capture: Time, target: DataRate, resolution: Resolution) {
        self.skipped.push_back(SentFrame {
            frame: NO_FRAME,
            capture,
            size: DataSize::ZERO,
            key: false,
            packets: 0,
            target,
            resolution,
            first_sent: None,
            last_sent: None,
            skipped: true,
            media_sent: 0,
        });
    }

    /// The encode-time half: packetize, protect and queue the frame.
    fn frame_encoded(&mut self, now: Time, req: EncodeRequest, enc: Option<EncodedFrame>) {
        let EncodeRequest { capture, target, resolution, key } = req;
        let id = self.next_frame_id;
        self.counters.encoder_drops += u64::from(enc.is_none());
        let Some(enc) = enc else {
            // The request stands until a frame is encoded.
            self.key_requested |= key;
            self.push_skipped(capture, target, resolution);
            return;
        };
        self.next_frame_id += 1;
        if enc.key {
            self.counters.key_frames += 1;
        } else {
            // An encoder that ignored the request is asked again.
            self.key_requested |= key;
        }
        let mtu = self.cfg.mtu.bytes().max(1);
        let total = enc.size.bytes().max(1);
        // A real frame's packets carry their RTP payloads (descriptor and
        // share of the frame) and are as large as those; a model frame is
        // split evenly so no runt packet trails it (as libwebrtc's
        // RtpPacketizer does).
        let parts = enc.payload.as_ref().and_then(|f| {
            let parts = crate::rtp_payload::packetize(f, mtu as usize, id as u16)
                .filter(|p| !p.is_empty() && p.len() <= usize::from(u16::MAX));
            self.counters.packetize_errors += u64::from(parts.is_none());
            parts
        });
        let count = parts.as_ref().map_or(total.div_ceil(mtu).min(u16::MAX as u64) as u16, |p| p.len() as u16);
        let protected = !self.fec_off && self.fec.is_some();
        let flags = if enc.key { FLAG_KEY } else { 0 } | if protected { FLAG_PROTECTED } else { 0 };
        // The schedule as the controller left it after its last input (the
        // previous frame's `on_frame_encoded` at the latest), so a controller
        // can choose one per frame (BurstRTC §IV-A1 alternates small frames).
        let schedule = self.decision.schedule;
        let mut parity_bytes = 0u64;
        for i in 0..count {
            let payload = parts.as_ref().map(|p| p[usize::from(i)].clone());
            let size =
                payload.as_ref().map_or(crate::rtp_payload::share(total, count.into(), i.into()), |p| p.len() as u64);
            let item = Queued {
                kind: PacketKind::Media,
                size: DataSize::from_bytes(size),
                frame: id,
                index: i,
                count,
                media_seq: self.next_media_seq,
                group: 0,
                flags,
                timestamp: rtp_timestamp(capture),
                // The pacer's queue time starts at the hand-over.
                enqueued: if self.clock.is_some() || self.cfg.external_frames { now } else { capture },
                burst: schedule.is_burst(i, count),
                payload,
            };
            self.next_media_seq = self.next_media_seq.wrapping_add(1);
            if self.cfg.nack.is_some() {
                if self.media.is_empty() {
                    self.media_base = item.media_seq;
                    self.media_expire = capture + self.cfg.nack.unwrap_or(Duration::ZERO);
                }
                self.media.push_back(MediaEntry { item: item.clone(), capture, last_rtx: None });
            }
            // A group's parity, and the frame's last partial group's.
            let (full, last) = match self.fec.as_mut().filter(|_| protected) {
                Some(fec) => {
                    let p = fec.on_media(&to_packet(item.clone()));
                    (p, if i + 1 == count { fec.end_frame() } else { None })
                }
                None => (None, None),
            };
            self.pacer.enqueue(item);
            for p in [full, last].into_iter().flatten() {
                parity_bytes += p.size.bytes();
                self.pacer.enqueue(Queued { burst: schedule.is_burst(i, count), ..parity(p, capture) });
            }
        }
        if protected {
            self.fec_ratio += (parity_bytes as f64 / total as f64 - self.fec_ratio) / 8.0;
        }
        let info = FrameInfo {
            frame: id,
            capture_time: capture,
            size: DataSize::from_bytes(total),
            packets: count,
            key: enc.key,
            si: enc.si,
            ti: enc.ti,
        };
        self.frames.push_back(SentFrame {
            frame: id,
            capture,
            size: info.size,
            key: enc.key,
            packets: count,
            target,
            resolution,
            first_sent: None,
            last_sent: None,
            skipped: false,
            media_sent: 0,
        });
        self.controller.on_frame_encoded(now, &info);
        self.notify_state(now);
        self.apply_decision(now);
    }

    /// Books the time since the last input to the send buffer's state: the
    /// pacer queue changes only inside an input, so the state each input
    /// left held until the next one.
    fn book_buffer(&mut self, now: Time) {
        if self.stopped || now < self.cfg.start {
            return;
        }
        if !self.stall_counted && self.last_content.is_some_and(|t| now.saturating_since(t) >= STALL) {
            self.stall_counted = true;
            self.counters.stalls += 1;
        }
        if let Some(at) = self.buffer_at.replace(now) {
            let dt = now.saturating_since(at);
            let c = &mut self.counters;
            c.buffer_time += dt;
            if self.pacer.queued_bytes() == DataSize::ZERO {
                c.buffer_empty += dt;
            } else if self.pacer.queue_drain_time() > BUFFER_OVERSHOOT {
                c.buffer_over += dt;
            }
        }
    }

    /// Keep a bulk sender's queue at `BULK_BACKLOG`.
    fn refill_bulk(&mut self, now: Time) {
        if now < self.cfg.start {
            return;
        }
        while self.pacer.queued_bytes() < BULK_BACKLOG {
            let item =
                Queued { media_seq: self.next_media_seq, ..Queued::filler(PacketKind::Media, self.cfg.mtu, now) };
            self.next_media_seq = self.next_media_seq.wrapping_add(1);
            self.pacer.enqueue(item);
        }
    }

    /// The newest packet `poll_transmit` gave, as the controller saw it.
    pub fn newest_sent(&self) -> &SentPacket {
        &self.newest_sent
    }

    /// The next packet to put on the wire at `now`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.book_buffer(now);
        let p = self.transmit(now);
        self.refresh_timeout();
        p
    }

    fn transmit(&mut self, now: Time) -> Option<Packet> {
        if self.stopped {
            return None;
        }
        if self.cfg.bulk {
            self.refill_bulk(now);
        }
        let (q, probe) = self.pacer.poll_send(now, self.in_flight)?;
        let seq = self.next_seq;
        self.next_seq += 1;
        let (kind, size) = (q.kind, q.size);
        // A parity's frame fields are XORs for recovery (RFC 5109 §8), not a
        // place in a frame.
        let pos = match kind {
            PacketKind::Fec => FramePos::NONE,
            _ => FramePos { frame: q.frame, index: q.index, count: q.count },
        };
        // The wire carries the low 16 bits of the sequence number.
        let wire_seq = (seq as u16).wrapping_add(self.cfg.transport_base);
        let pkt = Packet { seq: wire_seq, abs_send_time: abs_send_time(now), ..to_packet(q) };
        self.in_flight += size;
        if self.history.is_empty() {
            self.hist_base = seq;
            self.hist_expire = now + self.cfg.history;
        }
        self.history.push_back(HistEntry { kind, size, send_time: now, probe_cluster: probe, pos, outstanding: true });
        if !matches!(kind, PacketKind::Padding | PacketKind::Probe) {
            (self.last_content, self.stall_counted) = (Some(now), false);
        }
        let k = kind as usize;
        self.counters.bytes[k] += size.bytes();
        self.counters.packets[k] += 1;
        if pkt.kind == PacketKind::Media {
            if let Some(f) = pos.frame.checked_sub(self.frame_base).and_then(|i| self.frames.get_mut(i as usize)) {
                f.media_sent = f.media_sent.saturating_add(1);
            }
            if pos.frame != self.run_frame {
                self.flush_run();
                (self.run_frame, self.run_first) = (pos.frame, now);
            }
            self.run_last = now;
        }
        let sent = SentPacket { seq, kind, size, send_time: now, probe_cluster: probe, in_flight: self.in_flight, pos };
        self.controller.on_packet_sent(now, &sent);
        self.newest_sent = sent;
        self.notify_state(now);
        self.apply_decision(now);
        Some(pkt)
    }

    /// Forget sent packets older than `history` and media older than the
    /// NACK age. The oldest entry's expiry is kept beside the deques, so a
    /// call with nothing to forget reads neither (their fronts are seconds
    /// old and out of cache when many flows run).
    fn trim_history(&mut self, now: Time) {
        if now > self.hist_expire {
            while let Some(h) = self.history.front() {
                if now.saturating_since(h.send_time) <= self.cfg.history {
                    break;
                }
                if h.outstanding {
                    self.in_flight -= h.size;
                }
                self.history.pop_front();
                self.hist_base += 1;
            }
            self.hist_expire = self.history.front().map_or(Time::MAX, |h| h.send_time + self.cfg.history);
        }
        if now > self.media_expire {
            let max_age = self.cfg.nack.unwrap_or(Duration::ZERO);
            while self.media.front().is_some_and(|m| now.saturating_since(m.capture) > max_age) {
                self.media.pop_front();
                self.media_base = self.media_base.wrapping_add(1);
            }
            self.media_expire = self.media.front().map_or(Time::MAX, |m| m.capture + max_age);
        }
    }

    /// Queue a retransmission of `media_seq` if its frame can still be played.
    fn retransmit(&mut self, now: Time, media_seq: u32) {
        let Some(max_age) = self.cfg.nack else { return };
        let i = media_seq.wrapping_sub(self.media_base) as usize;
        let rtt = self.rtt;
        let Some(m) = self.media.get_mut(i) else { return };
        if now.saturating_since(m.capture) > max_age || m.last_rtx.is_some_and(|t| now - t < rtt) {
            return;
        }
        m.last_rtx = Some(now);
        // The original packet with its sequence number before the payload
        // (RFC 4588 §4): two bytes larger.
        let size = m.item.size + RTX_OSN;
        let item = Queued { kind: PacketKind::Rtx, size, enqueued: now, burst: false, ..m.item.clone() };
        self.pacer.enqueue(item);
        self.notify_state(now);
    }

    /// A report arrived at `now`: NACKs and key-frame requests are served,
    /// the per-packet records are joined with the send history and handed to
    /// the controller.
    pub fn handle_report(&mut self, now: Time, report: &ReceiverReport) {
        self.book_buffer(now);
        self.on_report(now, report);
        self.refresh_timeout();
    }

    fn on_report(&mut self, now: Time, report: &ReceiverReport) {
        if self.stopped {
            return;
        }
        // What the report's bytes carry, not the receiver's full record.
        let newest_media = self.next_media_seq.wrapping_sub(1);
        let report =
            crate::adapter::adapt(report, self.next_seq.saturating_sub(1), newest_media, self.cfg.transport_base);
        if report.pli {
            self.request_key_frame();
        }
        for &m in &report.nacks {
            self.retransmit(now, m);
        }
        let mut stats = report.stats;
        // TWCC and RFC 8888: the one-way delay from the arrivals and the
        // sender's own send times (RR + XR carry it in their OWD block).
        let timed = report.format != ReportFormat::RtcpXr;
        let (mut owd_sum, mut owd_n, mut newest) = (0i64, 0i64, None::<(Time, Duration)>);
        let mut packets = Vec::with_capacity(report.packets.len());
        for &(seq, outcome) in &report.packets {
            let Some(i) = seq.checked_sub(self.hist_base) else { continue };
            let Some(h) = self.history.get_mut(i as usize) else { continue };
            if h.outstanding {
                h.outstanding = false;
                self.in_flight -= h.size;
            }
            let (arrival, received_untimed, late) = match outcome {
                Outcome::Arrived(t) => (Some(t), false, false),
                Outcome::Received { discarded } => (None, true, discarded),
                Outcome::Lost => (None, false, false),
            };
            if let (true, Some(t)) = (timed, arrival) {
                let owd = t - h.send_time;
                stats.owd_min = Some(stats.owd_min.map_or(owd, |m| m.min(owd)));
                stats.owd_max = Some(stats.owd_max.map_or(owd, |m| m.max(owd)));
                owd_sum += owd.as_micros();
                owd_n += 1;
                if newest.is_none_or(|(a, _)| t >= a) {
                    newest = Some((t, owd));
                }
            }
            packets.push(PacketResult {
                seq,
                kind: h.kind,
                size: h.size,
                send_time: h.send_time,
                arrival,
                probe_cluster: h.probe_cluster,
                pos: h.pos,
                late,
                received_untimed,
            });
        }
        if owd_n > 0 {
            stats.owd_mean = Some(Duration::from_micros(owd_sum / owd_n));
            stats.owd_newest = newest.map(|n| n.1);
        }
        if !self.cfg.clocks_agree {
            self.relative_owd(&mut stats);
        }
        // Everything older than the newest reported packet has been reported
        // or its report was lost: it is no longer in flight (libwebrtc
        // TransportFeedbackAdapter). Without this a lost report would hold a
        // window's worth of bytes "in flight" until the history expires.
        if let Some(newest) = report.packets.iter().map(|a| a.0).max() {
            let upto = newest.saturating_sub(self.hist_base).min(self.history.len() as u64) as usize;
            let from = self.settled_upto.saturating_sub(self.hist_base) as usize;
            for h in self.history.range_mut(from.min(upto)..upto) {
                if h.outstanding {
                    h.outstanding = false;
                    self.in_flight -= h.size;
                }
            }
            self.settled_upto = self.settled_upto.max(newest);
        }
        self.notify_state(now);
        // An RR's round trip in a report with nothing else for the
        // controller (a NACK- or PLI-only one) waits for the next report.
        if let Some(rtt) = report.sr_echo.and_then(|(lsr, dlsr)| crate::sr::round_trip(now, lsr, dlsr)) {
            self.rtcp_rtt = Some(rtt);
        }
        if let Some(t) = report.report_time {
            self.last_report_time = Some(t);
        }
        if packets.is_empty() {
            return;
        }
        let fb = Feedback {
            // None on the wire (RR + XR; a TWCC report of losses only): the
            // last one known, so the receiver's clock never goes back;
            // before any, the arrival (nothing is timed against it).
            report_time: self.last_report_time.unwrap_or(now),
            received_at: now,
            packets,
            stats,
            estimate: report.estimate,
            format: report.format,
            rr: report.rr,
            rtcp_rtt: self.rtcp_rtt.take(),
        };
        if let Some(r) = fb.rtt_sample() {
            self.rtt = r;
        }
        self.controller.on_feedback(now, &fb);
        self.apply_decision(now);
        self.update_pushback();
    }
}

/// What the sender asks of an encoder for one capture (`handle_capture`):
/// the encoder's target and resolution at that moment, and whether a key
/// frame was asked for since the last encoded frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncodeRequest {
    pub capture: Time,
    pub target: DataRate,
    pub resolution: Resolution,
    pub key: bool,
}

impl Sender {
    /// One-way delays relative to the smallest seen on the flow: across
    /// clocks not known to agree only differences are meaningful (the
    /// minimum stands for propagation plus the clocks' offset).
    fn relative_owd(&mut self, stats: &mut ReportStats) {
        let Some(min) = stats.owd_min else { return };
        let floor = self.owd_floor.map_or(min, |f| f.min(min));
        self.owd_floor = Some(floor);
        for d in [&mut stats.owd_min, &mut stats.owd_mean, &mut stats.owd_max, &mut stats.owd_newest] {
            *d = d.map(|d| d - floor);
        }
    }
}

/// A parity packet from the FEC encoder, queued at `now`: its frame number,
/// flags and timestamp are XORs (RFC 5109 §8), kept as they are.
fn parity(p: Packet, now: Time) -> Queued {
    Queued {
        kind: PacketKind::Fec,
        size: p.size,
        frame: u32::from(p.frame),
        index: 0,
        count: 0,
        media_seq: u32::from(p.media_seq),
        group: p.group,
        flags: p.flags,
        timestamp: p.timestamp,
        enqueued: now,
        burst: false,
        payload: p.payload,
    }
}

/// What the wire carries of a queued packet (its transport-wide sequence
/// and send time are set as it leaves): 16-bit RTP sequence and frame
/// numbers, and the descriptor's start-of-frame and marker bits in place of
/// its index and its frame's packet count.
fn to_packet(q: Queued) -> Packet {
    let flags = match q.kind {
        PacketKind::Fec => q.flags,
        _ if q.frame == NO_FRAME => q.flags,
        _ => {
            q.flags
                | FLAG_FRAME
                | if q.index == 0 { FLAG_FIRST } else { 0 }
                | if q.index + 1 >= q.count { FLAG_MARKER } else { 0 }
        }
    };
    Packet {
        kind: q.kind,
        size: q.size,
        // Outside any frame the wire has no frame number: 0.
        frame: if q.frame == NO_FRAME && q.kind != PacketKind::Fec { 0 } else { q.frame as u16 },
        media_seq: q.media_seq as u16,
        group: q.group,
        flags,
        timestamp: q.timestamp,
        payload: q.payload,
        ..Packet::default()
    }
}

#[cfg(test)]
mod timing_tests {
    use super::*;
    use crate::controller::fixed::Fixed;
    use crate::encoder::{Encoder, EncoderConfig};

    const INTERVAL: Duration = Duration::from_micros(33_333);

    /// Run a 1 Mbps fixed-rate sender, paced at 2.5 Mbps (the queue drains
    /// between frames), for `secs` with `timing`: each
    /// capture's time and first send, and every packet's send time.
    fn run(timing: SenderTiming, secs: i64) -> (Vec<(Time, Option<Time>)>, Vec<Time>) {
        let cfg = SenderConfig { frame_interval: INTERVAL, timing, ..SenderConfig::default() };
        let ctrl = Box::new(Fixed::new(DataRate::from_mbps(1), 2.5, DataRate::ZERO));
        let enc = Box::new(Encoder::new(EncoderConfig::Ideal, INTERVAL, Rng::new(1)));
        let mut s = Sender::new(cfg, ctrl, enc);
        let (mut frames, mut sends) = (Vec::new(), Vec::new());
        let end = Time::from_millis(secs * 1000);
        while let Some(now) = s.poll_timeout().filter(|&t| t < end) {
            s.handle_timeout(now);
            while s.poll_transmit(now).is_some() {
                sends.push(s.newest_sent().send_time);
            }
        }
        while let Some(f) = s.pop_frame() {
            frames.push((f.capture, f.first_sent));
        }
        (frames, sends)
    }

    fn on(seed: u64) -> SenderTiming {
        SenderTiming { phase: true, seed, ..SenderTiming::OFF }
    }

    #[test]
    fn off_captures_on_the_exact_grid() {
        assert!(SenderTiming::default().is_off() && SenderTiming { seed: 7, ..SenderTiming::OFF }.is_off());
        let (frames, _) = run(SenderTiming::OFF, 1);
        let caps: Vec<i64> = frames.iter().map(|f| f.0.as_micros()).collect();
        assert_eq!(caps, (0..=30).map(|k| k * 33_333).collect::<Vec<_>>());
        // Sent the moment they are captured.
        assert!(frames.iter().all(|f| f.1 == Some(f.0)));
    }

    #[test]
    fn phase_is_drawn_per_seed_within_one_interval() {
        let first = |seed| run(on(seed), 1).0[0].0;
        assert_eq!(first(3), first(3), "same seed, same phase");
        let phases: Vec<Time> = (1..=8).map(first).collect();
        assert!(phases.iter().all(|&p| p >= Time::ZERO && p < Time::ZERO + INTERVAL), "{phases:?}");
        let mut distinct = phases.clone();
        distinct.dedup();
        assert!(distinct.len() >= 6, "{phases:?}");
        // After the phase, the grid is exact without drift.
        let (frames, _) = run(on(3), 1);
        assert!(frames.windows(2).all(|w| (w[1].0 - w[0].0).as_micros().abs_diff(33_333) <= 1));
    }

    #[test]
    fn drift_stretches_the_frame_interval_within_its_bound() {
        let mean_interval = |seed| {
            let (frames, _) = run(SenderTiming { drift_ppm: 10_000.0, ..on(seed) }, 4);
            (frames.last().unwrap().0 - frames[0].0).as_micros() as f64 / (frames.len() - 1) as f64
        };
        let rates: Vec<f64> = (1..=6).map(mean_interval).collect();
        // ±1 %, and not all the same.
        assert!(rates.iter().all(|r| (r / 33_333.0 - 1.0).abs() <= 0.0101), "{rates:?}");
        assert!(rates.iter().any(|r| (r / 33_333.0 - 1.0).abs() > 0.001), "{rates:?}");
    }

    #[test]
    fn frames_wait_for_handover_and_a_serial_encoder() {
        let t = SenderTiming {
            handover: Duration::from_millis(2),
            encode_time: Duration::from_millis(10),
            encode_jitter: Duration::from_millis(3),
            ..on(5)
        };
        let (frames, _) = run(t, 2);
        assert!(frames.len() >= 58);
        let waits: Vec<i64> = frames.iter().map(|f| (f.1.unwrap() - f.0).as_micros()).collect();
        assert!(waits.iter().all(|&w| w >= 0), "{waits:?}");
        let mean = waits.iter().sum::<i64>() as f64 / waits.len() as f64;
        // Mean hand-over 1 ms plus 10 ms of encode.
        assert!((mean - 11_000.0).abs() < 1_500.0, "{mean}");
        let spread = waits.iter().max().unwrap() - waits.iter().min().unwrap();
        assert!(spread > 3_000, "{waits:?}");
        // In capture order.
        assert!(frames.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn pacer_wakes_on_its_tick_grid() {
        let tick = Duration::from_millis(5);
        // No phase: the grid starts at the start.
        let t = SenderTiming { pacer_tick: tick, ..SenderTiming::OFF };
        let (frames, sends) = run(t, 1);
        // A frame's packets may leave when it is enqueued (its capture);
        // the rest on the grid.
        let captures: Vec<Time> = frames.iter().map(|f| f.0).collect();
        let paced: Vec<&Time> = sends.iter().filter(|s| !captures.contains(s)).collect();
        assert!(paced.len() > 30, "{}", paced.len());
        assert!(paced.iter().all(|s| s.as_micros() % 5_000 == 0), "{paced:?}");
        // Off: the same sender paces between grid points.
        let (_, exact) = run(SenderTiming::OFF, 1);
        assert!(exact.iter().any(|s| s.as_micros() % 5_000 != 0));
    }
}

#[cfg(test)]
mod external_frames_tests {
    use super::*;
    use crate::controller::fixed::Fixed;
    use crate::encoder::{Encoder, EncoderConfig};

    const INTERVAL: Duration = Duration::from_micros(33_333);

    fn encoder() -> Box<Encoder> {
        let cfg = EncoderConfig::Noise { sigma: 0.3, key_interval: None, key_ratio: 4.0 };
        Box::new(Encoder::new(cfg, INTERVAL, Rng::new(5)))
    }

    /// 2 s of a 1 Mbps call paced at 0.9 Mbps with a 60 ms skip threshold
    /// (so the sender skips captures) and a PLI at 0.5 s. Internal: the
    /// frame clock and encoder inside the sender. External: the same
    /// encoder driven from outside through `handle_capture` and
    /// `handle_encoded_frame` at the same times. Returns every packet sent
    /// and each settled frame's (capture, size, key, skipped).
    fn run(external: bool) -> (Vec<Packet>, Vec<(Time, u64, bool, bool)>, u32) {
        let cfg = SenderConfig {
            frame_interval: INTERVAL,
            skip_threshold: Some(Duration::from_millis(60)),
            external_frames: external,
            ..SenderConfig::default()
        };
        let ctrl = Box::new(Fixed::new(DataRate::from_kbps(1000), 0.9, DataRate::ZERO));
        let mut outside = encoder();
        let mut s = Sender::new(cfg, ctrl, encoder());
        let (end, pli) = (Time::from_millis(2000), Time::from_millis(500));
        let (mut sent, mut next_capture, mut encoded, mut keys_asked) = (Vec::new(), Time::ZERO, 0u32, 0u32);
        let mut pli_sent = false;
        loop {
            let mut now = s.poll_timeout().unwrap_or(end);
            if external {
                now = now.min(next_capture);
            }
            if !pli_sent {
                now = now.min(pli);
            }
            if now >= end {
                break;
            }
            if !pli_sent && now == pli {
                pli_sent = true;
                s.handle_report(now, &ReceiverReport { pli: true, report_time: now, ..ReceiverReport::default() });
            }
            if external && now == next_capture {
                next_capture += INTERVAL;
                if let Some(req) = s.handle_capture(now, now) {
                    if req.key {
                        keys_asked += 1;
                        outside.request_key_frame();
                    }
                    let frame = outside.encode_frame(encoded, req.capture, req.target, req.resolution);
                    encoded += u32::from(frame.is_some());
                    s.handle_encoded_frame(now, req, frame);
                } else {
                    outside.skip(now, s.target_rate());
                }
            }
            s.handle_timeout(now);
            while let Some(p) = s.poll_transmit(now) {
                sent.push(p);
            }
        }
        let mut frames = Vec::new();
        while let Some(f) = s.pop_frame() {
            frames.push((f.capture, f.size.bytes(), f.key, f.skipped));
        }
        (sent, frames, keys_asked)
    }

    #[test]
    fn an_encoder_outside_gives_the_same_call_as_the_internal_one() {
        let (a, fa, _) = run(false);
        let (b, fb, keys) = run(true);
        assert!(fa.iter().filter(|f| f.3).count() > 3, "the run skips captures");
        assert!(fa.iter().filter(|f| f.2).count() >= 2, "a key frame after the PLI");
        assert_eq!(fa, fb);
        assert_eq!(a, b);
        // The first frame and the PLI's are asked for as key frames.
        assert_eq!(keys, 2);
    }

    #[test]
    fn without_captures_an_external_sender_sends_nothing() {
        let cfg = SenderConfig { external_frames: true, ..SenderConfig::default() };
        let ctrl = Box::new(Fixed::new(DataRate::from_kbps(1000), 1.0, DataRate::ZERO));
        let mut s = Sender::new(cfg, ctrl, encoder());
        // Woken every millisecond for a second (the internal frame clock
        // would have made 30 frames), it neither asks to wake for a frame
        // nor sends one.
        for ms in 0..1000 {
            let now = Time::from_millis(ms);
            assert!(s.poll_timeout().is_none_or(|t| t > Time::from_millis(1000)), "{:?}", s.poll_timeout());
            s.handle_timeout(now);
            assert_eq!(s.poll_transmit(now), None);
        }
        assert_eq!(s.counters().packets.iter().sum::<u64>(), 0);
        assert!(s.pop_frame().is_none());
        // A capture after the stop is not encoded.
        let cfg = SenderConfig { external_frames: true, stop: Some(Time::from_millis(100)), ..SenderConfig::default() };
        let ctrl = Box::new(Fixed::new(DataRate::from_kbps(1000), 1.0, DataRate::ZERO));
        let mut s = Sender::new(cfg, ctrl, encoder());
        assert!(s.handle_capture(Time::from_millis(50), Time::from_millis(50)).is_some());
        assert!(s.handle_capture(Time::from_millis(150), Time::from_millis(150)).is_none());
        // The pacer's queue time starts at the hand-over, not the capture:
        // an encode taking 30 ms is not time in the send queue.
        let cfg = SenderConfig { external_frames: true, ..SenderConfig::default() };
        let ctrl = Box::new(Fixed::new(DataRate::from_kbps(1000), 1.0, DataRate::ZERO));
        let mut s = Sender::new(cfg, ctrl, encoder());
        let req = s.handle_capture(Time::ZERO, Time::ZERO).unwrap();
        let frame = encoder().encode_frame(0, req.capture, req.target, req.resolution);
        s.handle_encoded_frame(Time::from_millis(30), req, frame);
        assert_eq!(s.pacer().average_age(Time::from_millis(30)), Duration::ZERO);
    }

    /// An encoder that returns a later capture before an earlier one (an
    /// overrun handed back at once) cannot reorder the records: nothing
    /// newer than a capture still out is handed on. A frame back after the
    /// stop is recorded, as not sent.
    #[test]
    fn records_stay_in_capture_order_while_an_encode_is_out() {
        let t = Time::from_millis;
        let ctrl = || Box::new(Fixed::new(DataRate::from_kbps(1000), 1.0, DataRate::ZERO));
        let cfg = SenderConfig { external_frames: true, frame_interval: INTERVAL, ..SenderConfig::default() };
        let mut s = Sender::new(cfg, ctrl(), encoder());
        let r1 = s.handle_capture(t(0), t(0)).unwrap();
        let r2 = s.handle_capture(t(33), t(33)).unwrap();
        s.handle_encoded_frame(t(34), r2, None);
        assert!(s.oldest_frame().is_none() && s.pop_frame().is_none(), "the first capture is still out");
        let frame = encoder().encode_frame(0, r1.capture, r1.target, r1.resolution);
        s.handle_encoded_frame(t(40), r1, frame);
        let order: Vec<_> = std::iter::from_fn(|| s.pop_frame()).map(|f| (f.capture, f.skipped)).collect();
        assert_eq!(order, vec![(t(0), false), (t(33), true)]);
        let cfg = SenderConfig { external_frames: true, stop: Some(t(100)), ..SenderConfig::default() };
        let mut s = Sender::new(cfg, ctrl(), encoder());
        let r = s.handle_capture(t(90), t(90)).unwrap();
        let frame = encoder().encode_frame(0, r.capture, r.target, r.resolution);
        s.handle_encoded_frame(t(120), r, frame);
        let f = s.pop_frame().expect("the capture's record");
        assert_eq!((f.capture, f.skipped), (t(90), true));
    }

    #[test]
    fn a_frame_record_is_final_once_its_media_have_all_left() {
        // Paced at half the encoder's rate, so frames wait in the pacer.
        let cfg = SenderConfig { frame_interval: INTERVAL, ..SenderConfig::default() };
        let ctrl = Box::new(Fixed::new(DataRate::from_kbps(1000), 0.5, DataRate::ZERO));
        let mut s = Sender::new(cfg, ctrl, encoder());
        let (end, settle) = (Time::from_millis(1000), Duration::from_secs(30));
        let (mut last_media, mut popped) = (std::collections::HashMap::new(), Vec::new());
        let mut now = Time::ZERO;
        while now < end {
            s.handle_timeout(now);
            while let Some(p) = s.poll_transmit(now) {
                if p.kind == PacketKind::Media {
                    last_media.insert(u32::from(p.frame), (now, p.flags & FLAG_MARKER != 0));
                }
            }
            while let Some(f) = s.pop_final_frame(now, settle) {
                popped.push((now, f));
            }
            now = s.poll_timeout().unwrap_or(end).max(now + Duration::from_micros(1));
        }
        assert!(popped.len() > 10, "{}", popped.len());
        for (at, f) in &popped {
            assert!(!f.skipped && f.media_sent == f.packets, "{f:?}");
            // Handed on at its last packet's send, with that send time.
            let (t, last) = last_media[&f.frame];
            assert!(last && f.last_sent == Some(t) && *at == t, "{f:?} at {at:?}, last media {t:?}");
        }
        // What is still queued stays, and is not final before `settle`.
        let waiting = s.oldest_frame().expect("frames still queued");
        assert!(waiting.media_sent < waiting.packets);
        assert!(s.pop_final_frame(end, settle).is_none());
        assert_eq!(s.pop_final_frame(waiting.capture + settle, settle).map(|f| f.frame), Some(waiting.frame));
    }
}
