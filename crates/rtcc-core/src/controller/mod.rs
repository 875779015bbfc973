//! The `Controller` trait every congestion controller implements, its typed
//! parameters, and the name → config registry shared by scenarios, the CLI and
//! Python. Controllers are pure state machines: time comes in as `now`,
//! decisions are read back; they never fail (they clamp).

pub mod bbr;
mod bbr_video;
pub mod burstrtc;
pub mod cnadu;
pub mod copa;
pub mod cross;
mod declaration;
pub mod dumbo;
pub mod fbra;
pub mod fixed;
pub mod gcc;
pub mod nada;
mod params;
pub mod pibes;
pub mod pudica;
pub mod rbbr;
pub mod rocc;
pub mod rrtcc;
pub mod salsify;
pub mod sqp;
#[cfg(test)]
pub(crate) mod testing;
pub mod vivace;
mod window;

pub use declaration::{Bounds, DefaultValue, Integer, Kind, Param, ParamInfo};
pub use params::{ConfigError, ParamType, ParamValue, Params};

use std::sync::RwLock;

use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

pub mod estimator;
pub use estimator::{EstimatorFactory, ReceiverEstimator};

pub use crate::packet::FramePos;

/// A packet as it left the pacer, told to the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SentPacket {
    pub seq: u64,
    pub kind: PacketKind,
    pub size: DataSize,
    pub send_time: Time,
    pub probe_cluster: i32,
    /// Bytes in flight after this packet, as the sender counts them.
    pub in_flight: DataSize,
    pub pos: FramePos,
}

/// The sender's queue and window state, given to the controller whenever it
/// changes (after every enqueue and every send).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderState {
    /// Bytes and packets waiting in the pacer (media, audio, FEC, RTX).
    pub queued: DataSize,
    pub queued_packets: usize,
    /// Bytes sent and not yet acknowledged or declared lost.
    pub in_flight: DataSize,
}

/// An encoded frame, for frame-aware controllers; told when the encoder
/// hands it over (`now`), which is at or after its capture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameInfo {
    pub frame: u32,
    pub capture_time: Time,
    pub size: DataSize,
    pub packets: u16,
    pub key: bool,
    /// ITU-T P.910 spatial and temporal information of the frame's picture
    /// (TI against the previous capture), as BurstRTC's frame-size model
    /// takes them (burstrtc.txt §III-C, eq. 8); 0 when the encoder does not
    /// know them. The `content` model and real codecs fill them.
    pub si: f32,
    pub ti: f32,
}

/// A request to send a probe cluster (GCC): `min_bytes` and `min_packets` at
/// `rate`, tagged with `id` so feedback can be matched to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeCluster {
    pub id: i32,
    pub rate: DataRate,
    pub min_bytes: DataSize,
    pub min_packets: u32,
}

/// How the packets of each new frame leave the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameSchedule {
    /// Every packet at the pacing rate (WebRTC's pacer).
    #[default]
    Paced,
    /// The whole frame at once, not held by the pacing rate (Salsify,
    /// BurstRTC); the congestion window still applies.
    Burst,
    /// The first `packets` of each frame at once, the rest at the pacing rate
    /// (PIBES §III: a probing burst, then paced). The burst's bytes count
    /// against the pacing budget, so the paced rest follows the burst at the
    /// pacing rate rather than overlapping it.
    BurstThenPaced { packets: u16 },
    /// As `BurstThenPaced` with a burst sized to each frame: n_b =
    /// max(min, min(⌈n_f/2⌉, max)) of its n_f packets, at most the whole
    /// frame (PIBES eq. 1).
    HalfBurst { min: u16, max: u16 },
    /// The paced part first, then the rest of the frame at once as soon as
    /// the last paced packet has left (BurstRTC §III-B, Fig. 7; sizes from
    /// §IV-A1): a frame of n ≥ 2·`min` packets is cut in two halves, its
    /// last min(⌊n/2⌋, `max`) packets the burst (a burst above `max` gives
    /// its excess to the paced part); a smaller frame is all burst when
    /// `small_burst` and all paced otherwise (BurstRTC alternates them: the
    /// controller sets it per frame). The burst's bytes count against the
    /// pacing budget, as `BurstThenPaced`'s do.
    PacedThenBurst { min: u16, max: u16, small_burst: bool },
}

impl FrameSchedule {
    /// Packets of an `n`-packet frame that leave at once.
    pub fn burst_packets(self, n: u16) -> u16 {
        match self {
            FrameSchedule::Paced => 0,
            FrameSchedule::Burst => n,
            FrameSchedule::BurstThenPaced { packets } => packets.min(n),
            FrameSchedule::HalfBurst { min, max } => n.div_ceil(2).min(max).max(min).min(n),
            FrameSchedule::PacedThenBurst { min, max, small_burst } => {
                if n < min.saturating_mul(2) {
                    if small_burst {
                        n
                    } else {
                        0
                    }
                } else {
                    (n / 2).min(max)
                }
            }
        }
    }

    /// Whether packet `index` of an `n`-packet frame leaves at once: the
    /// first `burst_packets` of it, or for `PacedThenBurst` the last.
    pub fn is_burst(self, index: u16, n: u16) -> bool {
        match self {
            FrameSchedule::PacedThenBurst { .. } => index >= n - self.burst_packets(n),
            _ => index < self.burst_packets(n),
        }
    }
}

/// Forward error correction for frames encoded from now on: one XOR parity
/// packet per `group` media packets (RFC 5109); `group = 0` sends none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecPlan {
    pub group: u16,
}

/// The controller's current decision, read after every input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Target bitrate of the encoder (the whole media budget of the flow).
    pub target_rate: DataRate,
    /// Rate at which the pacer releases packets.
    pub pacing_rate: DataRate,
    /// Congestion window; `None` = not window-limited.
    pub cwnd: Option<DataSize>,
    /// Rate of padding the pacer sends when it has no media.
    pub padding_rate: DataRate,
    /// Transmission schedule of each frame's packets.
    pub schedule: FrameSchedule,
    /// FEC to apply from now on; `None` changes nothing: the flow's
    /// configured FEC until a plan is given, then the last plan.
    pub fec: Option<FecPlan>,
    /// Skip encoding frames while the send queue would take longer than this
    /// to drain at the target rate (Dumbo §4 "Latency Control"); the flow's
    /// own threshold, if any, applies too (the smaller wins).
    pub skip_threshold: Option<Duration>,
    /// Share of the target the congestion window asks the encoder to shed by
    /// dropping frames (goog_cc's `cwnd_reduce_ratio` under its default
    /// DropFrame trial); the sender drops one capture in max(2, 1/ratio) and
    /// lowers the encoder target by as much, as libwebrtc's
    /// `VideoStreamEncoder::UpdateTargetBitrate` does. 0 = none.
    pub cwnd_reduce_ratio: f64,
}

impl Default for Decision {
    fn default() -> Self {
        Decision::rates(DataRate::ZERO, DataRate::ZERO)
    }
}

impl Decision {
    /// Paced at `pacing_rate`, no window, no padding, FEC and skipping as configured.
    pub const fn rates(target_rate: DataRate, pacing_rate: DataRate) -> Decision {
        Decision {
            target_rate,
            pacing_rate,
            cwnd: None,
            padding_rate: DataRate::ZERO,
            schedule: FrameSchedule::Paced,
            fec: None,
            skip_threshold: None,
            cwnd_reduce_ratio: 0.0,
        }
    }
}

/// Fixed inputs a controller is created with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControllerContext {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    pub mtu: DataSize,
    pub frame_interval: Duration,
    /// How often the flow's receiver reports (`feedback_interval`), for
    /// parameters that count in report intervals.
    pub feedback_interval: Duration,
    /// Seed forked from the run's seed for this flow's controller: a
    /// controller that needs randomness builds its `Rng` from it, so `--seed`
    /// replays it and flows draw independent streams.
    pub seed: u64,
}

impl ControllerContext {
    /// What a flow gets unless its scenario says otherwise; controllers'
    /// rate parameters list these as their defaults.
    pub const DEFAULT: ControllerContext = ControllerContext {
        start_rate: DataRate::from_kbps(300),
        min_rate: DataRate::from_kbps(30),
        max_rate: DataRate::from_mbps(50),
        mtu: DataSize::from_bytes(1200),
        frame_interval: Duration::from_micros(33_333),
        feedback_interval: Duration::from_millis(50),
        seed: 0,
    };
}

impl Default for ControllerContext {
    fn default() -> Self {
        ControllerContext::DEFAULT
    }
}

/// Per-controller overrides of the flow's rates (`ControllerContext`), for
/// controllers that take them as parameters; one declaration for all.
pub const START_RATE: Param<DataRate> = Param::rate(
    "start_rate",
    ControllerContext::DEFAULT.start_rate,
    DataRate::ZERO,
    DataRate::MAX,
    "initial rate (default: the flow's start_rate)",
);
pub const MIN_RATE: Param<DataRate> = Param::rate(
    "min_rate",
    ControllerContext::DEFAULT.min_rate,
    DataRate::ZERO,
    DataRate::MAX,
    "lowest rate (default: the flow's min_rate)",
);
pub const MAX_RATE: Param<DataRate> = Param::rate(
    "max_rate",
    ControllerContext::DEFAULT.max_rate,
    DataRate::ZERO,
    DataRate::MAX,
    "highest rate, probes included (default: the flow's max_rate)",
)
.above_min();

/// `min_rate` and `max_rate` as given, else the flow's, and in order.
pub fn rate_bounds(p: &Params, ctx: &ControllerContext) -> Result<(DataRate, DataRate), ConfigError> {
    let min_rate = p.get_or(&MIN_RATE, ctx.min_rate)?;
    let max_rate = p.get_or(&MAX_RATE, ctx.max_rate)?;
    ConfigError::check_order("min_rate", min_rate, "max_rate", max_rate)?;
    Ok((min_rate, max_rate))
}

/// Bounds a controller read or adjusted (floors, caps): `max_rate`
/// positive, then in order.
pub fn check_positive_bounds(min_rate: DataRate, max_rate: DataRate) -> Result<(), ConfigError> {
    if max_rate == DataRate::ZERO {
        return Err(ConfigError::invalid("max_rate", "must be positive"));
    }
    ConfigError::check_order("min_rate", min_rate, "max_rate", max_rate)
}

/// A congestion controller. Every input carries `now`, which never goes
/// backwards across calls; outputs are read back with `decision`,
/// `poll_probe` and `poll_timeout`.
pub trait Controller: Send {
    fn name(&self) -> &str;
    fn on_packet_sent(&mut self, _now: Time, _packet: &SentPacket) {}
    fn on_feedback(&mut self, _now: Time, _feedback: &Feedback) {}
    fn on_frame_encoded(&mut self, _now: Time, _frame: &FrameInfo) {}
    /// The sender's queue or in-flight bytes changed.
    fn on_sender_state(&mut self, _now: Time, _state: &SenderState) {}
    /// Called when `poll_timeout` has passed.
    fn on_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn decision(&self) -> Decision;
    /// Re-read a decision set from outside the controller's own calls (a
    /// Python agent between two reports, `rtcc.gym`); Rust controllers
    /// decide only in their calls and have nothing to re-read.
    fn refresh(&mut self, _now: Time) {}
    /// Whether `decision` is the same for the controller's whole life,
    /// whatever the inputs: the sender then reads it once, at the start.
    /// A wrapper that can change the decision must not forward it.
    fn fixed_decision(&self) -> bool {
        false
    }
    /// Probe clusters to start now, one per call.
    fn poll_probe(&mut self) -> Option<ProbeCluster> {
        None
    }
    /// Internal state for the time-series table (habit 6): (column, value).
    fn state(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
}

/// Builds a controller from its parameters.
pub type Factory = fn(&Params, &ControllerContext) -> Result<Box<dyn Controller>, ConfigError>;

/// A registry entry: name, one-line summary, parameters and factory, the
/// receiver-side estimator the controller needs, if any (REMB, NADA), and
/// whether its window, if it gives one, drives libwebrtc's congestion-window
/// pushback by default (a flow's `cwnd_pushback` overrides it).
#[derive(Clone, Copy)]
pub struct ControllerInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamInfo],
    pub create: Factory,
    pub receiver: Option<EstimatorFactory>,
    /// Whether a window, if the controller gives one, also steers the
    /// encoder through pushback, or only holds the pacer (the Dumbo thesis's
    /// Copa and RoCC, WebRTC's BBR, cross.txt §IV).
    pub pushback: Pushback,
    /// Whether it reads per-packet arrival times (`PacketResult::arrival`,
    /// RTT samples from them). RTCP RR + XR (`report_format = "rtcp-xr"`)
    /// carry none, so a flow naming such a controller with that format is
    /// refused; `false` means it runs on what RR + XR carry (per-sequence
    /// received, lost or discarded, the RR block, the interval's one-way
    /// delay, REMB).
    pub needs_arrivals: bool,
    /// The feedback it was designed for: a flow that names no
    /// `report_format` gets this one (FBRA's RR + XR, fbra.txt §4.1: TWCC
    /// carries no discards; everyone else libwebrtc's transport-wide CC).
    pub report_format: crate::feedback::ReportFormat,
}

/// One step of libwebrtc's CongestionWindowPushbackController
/// (`congestion_window_pushback_controller.cc` UpdatePushbackRate): the
/// encoder-rate ratio falls by 10 % while the window is over 1.5× full and
/// 5 % while over full, resets to 1 when under 10 % full, and otherwise
/// recovers by 5 %, capped at 1.
pub fn pushback_step(ratio: f64, fill: f64) -> f64 {
    if fill > 1.5 {
        ratio * 0.9
    } else if fill > 1.0 {
        ratio * 0.95
    } else if fill < 0.1 {
        1.0
    } else {
        (ratio * 1.05).min(1.0)
    }
}

/// libwebrtc's CongestionWindowPushbackController as a controller's window
/// default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushback {
    /// The window only holds the pacer.
    Off,
    /// The encoder target backs off while in-flight bytes exceed the window
    /// (libwebrtc's default).
    InFlight,
    /// In-flight plus pacer-queue bytes (libwebrtc's off-by-default
    /// WebRTC-AddPacingToCongestionWindowPushback trial).
    WithPacer,
}

/// Builds a wrapper named `name` around `inner`.
pub type WrapFactory =
    fn(&str, Box<dyn Controller>, &Params, &ControllerContext) -> Result<Box<dyn Controller>, ConfigError>;

/// A wrapper that runs around any controller: `"<inner>+<suffix>"`
/// (`copa+dumbo`). Its own parameters are its to take; the rest go to the
/// inner controller.
#[derive(Clone, Copy)]
pub struct WrapperInfo {
    pub suffix: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamInfo],
    /// Builds the wrapper around `inner`, given all parameters (already
    /// checked); it reads its own, and may read the inner's.
    pub wrap: WrapFactory,
    /// Inner controllers listed as `<inner>+<suffix>` by `rtcc controllers`;
    /// any other registered controller can be wrapped too.
    pub listed: &'static [&'static str],
}

/// Every built-in controller. Adding an algorithm = one module + one line here.
const BUILTIN: &[ControllerInfo] = &[
    fixed::INFO,
    gcc::INFO,
    gcc::INFO_PROBING,
    copa::INFO,
    rocc::INFO,
    vivace::INFO,
    nada::INFO,
    nada::INFO_NADAR,
    cross::INFO,
    bbr::INFO,
    rbbr::INFO,
    pibes::INFO,
    sqp::INFO,
    pudica::INFO,
    salsify::INFO,
    rrtcc::INFO,
    burstrtc::INFO,
    cnadu::INFO,
    fbra::INFO,
];

/// Controllers rebuilt from a public description, without their paper's
/// constants or code: SQP (arXiv 2207.11857), Pudica (NSDI'24) and C-NADU
/// (FBRA's baseline [24]). Their numbers are a reconstruction's, not the
/// scheme's, and every page and table that shows them says so.
const RECONSTRUCTIONS: &[&str] = &["sqp", "pudica", "c-nadu"];

/// Whether `name` (a wrapper: its inner controller) is a reconstruction.
pub fn is_reconstruction(name: &str) -> bool {
    match split_wrapped(name) {
        Some((_, inner)) => is_reconstruction(inner),
        None => RECONSTRUCTIONS.contains(&name),
    }
}

/// Every built-in wrapper.
const WRAPPERS: &[WrapperInfo] = &[dumbo::WRAPPER];

/// Controllers registered at run time (`register`): the extension point for
/// algorithms defined outside this crate, e.g. in a test or a user's crate.
static EXTRA: RwLock<Vec<&'static ControllerInfo>> = RwLock::new(Vec::new());

/// Register a controller defined outside this crate; a later registration of
/// the same name replaces the earlier one. Built-in names cannot be replaced.
pub fn register(info: ControllerInfo) -> Result<(), ConfigError> {
    if BUILTIN.iter().any(|c| c.name == info.name) || info.name.contains('+') || info.name.is_empty() {
        return Err(ConfigError::invalid(info.name, "name is built in, empty or contains '+'"));
    }
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    extra.retain(|c| c.name != info.name);
    extra.push(Box::leak(Box::new(info)));
    // A plain registration replaces a named one too.
    NAMED.write().unwrap_or_else(|e| e.into_inner()).retain(|(n, _)| *n != info.name);
    Ok(())
}

/// Builds a controller registered with `register_named`, told the name it
/// was asked for: one factory serving many names (controllers written in
/// Python, each name its own class).
pub type NamedFactory = fn(&str, &Params, &ControllerContext) -> Result<Box<dyn Controller>, ConfigError>;

/// Registers, on demand, a name nothing registered yet: `Ok(true)` once it
/// is, `Ok(false)` if it knows no such name, `Err` with why it could not
/// (a module that failed to import).
pub type Resolver = fn(&str) -> Result<bool, ConfigError>;

static NAMED: RwLock<Vec<(&'static str, NamedFactory)>> = RwLock::new(Vec::new());
static RESOLVER: RwLock<Option<Resolver>> = RwLock::new(None);

/// `register`, with a factory that is told the name (`info.create` is then
/// not called).
pub fn register_named(info: ControllerInfo, factory: NamedFactory) -> Result<(), ConfigError> {
    register(info)?;
    let mut named = NAMED.write().unwrap_or_else(|e| e.into_inner());
    named.retain(|(n, _)| *n != info.name);
    named.push((info.name, factory));
    Ok(())
}

/// Sets the one resolver asked about unknown names (the Python bindings':
/// `py:module:Class` references and installed entry points).
pub fn set_resolver(resolver: Resolver) {
    *RESOLVER.write().unwrap_or_else(|e| e.into_inner()) = Some(resolver);
}

/// Asks the resolver about a name not registered; called with no lock held,
/// since resolving registers.
fn resolve(name: &str) -> Result<bool, ConfigError> {
    let resolver = *RESOLVER.read().unwrap_or_else(|e| e.into_inner());
    match resolver {
        Some(r) if !name.is_empty() && !name.contains('+') => r(name),
        _ => Ok(false),
    }
}

fn lookup_registered(name: &str) -> Option<&'static ControllerInfo> {
    if let Some(c) = BUILTIN.iter().find(|c| c.name == name) {
        return Some(c);
    }
    EXTRA.read().unwrap_or_else(|e| e.into_inner()).iter().copied().find(|c| c.name == name)
}

/// Every registered controller: built-ins, then run-time registrations.
pub fn registry() -> Vec<&'static ControllerInfo> {
    let extra = EXTRA.read().unwrap_or_else(|e| e.into_inner());
    BUILTIN.iter().chain(extra.iter().copied()).collect()
}

/// Every wrapper.
pub fn wrappers() -> &'static [WrapperInfo] {
    WRAPPERS
}

/// A registered controller, or one the resolver registers now.
pub fn lookup(name: &str) -> Option<&'static ControllerInfo> {
    lookup_registered(name).or_else(|| resolve(name).ok().filter(|&found| found).and_then(|_| lookup_registered(name)))
}

/// The wrapper and inner name of `"<inner>+<suffix>"`, if `name` has that form.
pub fn split_wrapped(name: &str) -> Option<(&'static WrapperInfo, &str)> {
    let (inner, suffix) = name.rsplit_once('+')?;
    Some((WRAPPERS.iter().find(|w| w.suffix == suffix)?, inner))
}

/// Names listed by `rtcc controllers`: every controller, then each wrapper
/// around its listed inner controllers.
pub fn listed_names() -> Vec<String> {
    let mut v: Vec<String> = registry().iter().map(|c| c.name.to_string()).collect();
    for w in WRAPPERS {
        v.extend(w.listed.iter().map(|i| format!("{i}+{}", w.suffix)));
    }
    v
}

/// Parameters a name accepts: a wrapper's own, then its inner controller's.
pub fn params_of(name: &str) -> Option<Vec<ParamInfo>> {
    match split_wrapped(name) {
        Some((w, inner)) => {
            let mut v = w.params.to_vec();
            v.extend(params_of(inner)?);
            Some(v)
        }
        None => Some(lookup(name)?.params.to_vec()),
    }
}

/// One-line summary of a name (wrappers: the wrapper's, naming the inner).
pub fn summary_of(name: &str) -> Option<String> {
    match split_wrapped(name) {
        Some((w, inner)) => {
            params_of(inner)?;
            Some(format!("{inner} behind {}: {}; plus {inner}'s parameters", w.suffix, w.summary))
        }
        None => Some(lookup(name)?.summary.to_string()),
    }
}

/// Whether a name reads per-packet arrival times (`ControllerInfo::needs_arrivals`);
/// a wrapper does if it or its inner controller does (`+dumbo` reads them
/// itself).
pub fn needs_arrivals_of(name: &str) -> Option<bool> {
    match split_wrapped(name) {
        Some((_, inner)) => {
            lookup(inner)?;
            Some(true)
        }
        None => Some(lookup(name)?.needs_arrivals),
    }
}

/// The report format a name was designed for (a wrapper: RFC 8888, as
/// Dumbo takes the receiver's wait out of its RTT, thesis §5.2.1, whatever
/// its inner controller).
pub fn report_format_of(name: &str) -> Option<crate::feedback::ReportFormat> {
    match split_wrapped(name) {
        Some((_, inner)) => {
            lookup(inner)?;
            Some(crate::feedback::ReportFormat::Rfc8888)
        }
        None => Some(lookup(name)?.report_format),
    }
}

/// How a name's window drives pushback by default (a wrapper: its inner's).
pub fn pushback_of(name: &str) -> Option<Pushback> {
    match split_wrapped(name) {
        Some((_, inner)) => pushback_of(inner),
        None => Some(lookup(name)?.pushback),
    }
}

/// The receiver-side estimator a name needs (a wrapper: its inner's).
pub fn receiver_of(name: &str) -> Option<EstimatorFactory> {
    match split_wrapped(name) {
        Some((_, inner)) => receiver_of(inner),
        None => lookup(name)?.receiver,
    }
}

/// An unknown controller; the error names no field (the caller's is
/// `controller`).
fn unknown(name: &str) -> ConfigError {
    ConfigError::invalid("", format!("unknown controller '{name}' (registered: {})", listed_names().join(", ")))
}

/// Create a controller by name; unknown names and parameters are refused.
/// `"<inner>+<wrapper>"` builds the inner controller and wraps it.
pub fn create(name: &str, params: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    if let Some((w, inner)) = split_wrapped(name) {
        let known = params_of(name).ok_or_else(|| unknown(name))?;
        params.check_known(&known)?;
        let inner_ctrl = create(inner, &params.without(w.params), ctx)?;
        return (w.wrap)(name, inner_ctrl, params, ctx);
    }
    let info = match lookup_registered(name) {
        Some(info) => info,
        // The resolver's own error (an import that failed) says more than the list.
        None => resolve(name)?.then(|| lookup_registered(name)).flatten().ok_or_else(|| unknown(name))?,
    };
    params.check_known(info.params)?;
    let named = NAMED.read().unwrap_or_else(|e| e.into_inner()).iter().find(|(n, _)| *n == name).map(|&(_, f)| f);
    match named {
        Some(factory) => factory(name, params, ctx),
        None => (info.create)(params, ctx),
    }
}

#[cfg(test)]
mod bounds_tests {
    use super::testing::{kbps, params};
    use super::*;

    /// The shared checks name the field and give one message for every
    /// controller's pairs: a zero `max_rate` before the order.
    #[test]
    fn bounds_are_checked_with_one_message() {
        let e = ConfigError::check_order("low", 2, "high", 1).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("low", "2 is above high 1"));
        assert!(ConfigError::check_order("low", 1, "high", 1).is_ok());
        let e = check_positive_bounds(kbps(20), DataRate::ZERO).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("max_rate", "must be positive"));
        let e = check_positive_bounds(kbps(20), kbps(10)).unwrap_err();
        assert_eq!(e.field, "min_rate");
        assert!(check_positive_bounds(kbps(10), kbps(10)).is_ok());
        let ctx = ControllerContext::default();
        assert_eq!(rate_bounds(&Params::new(), &ctx).unwrap(), (ctx.min_rate, ctx.max_rate));
        let given = params(&[("min_rate", "300kbps"), ("max_rate", "2Mbps")]);
        assert_eq!(rate_bounds(&given, &ctx).unwrap(), (kbps(300), kbps(2000)));
        let e = rate_bounds(&params(&[("min_rate", "3Mbps"), ("max_rate", "2Mbps")]), &ctx).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("min_rate", "3 Mbps is above max_rate 2 Mbps"));
    }
}

#[cfg(test)]
mod consistency_tests {
    use super::testing::params;
    use super::*;

    /// The field a controller refuses `given` with, for a flow whose
    /// receiver reports every `feedback`.
    fn refused(name: &str, given: &[(&str, &str)], feedback: Duration) -> String {
        let ctx = ControllerContext { feedback_interval: feedback, ..ControllerContext::DEFAULT };
        match create(name, &params(given), &ctx) {
            Ok(_) => panic!("{name} {given:?}: accepted"),
            Err(e) => e.field,
        }
    }

    const FLOW: Duration = ControllerContext::DEFAULT.feedback_interval;

    /// Each check between parameters, and with the flow, refuses a crafted
    /// setting and names the parameter to change.
    #[test]
    fn settings_are_checked_together_and_against_the_flow() {
        assert_eq!(refused("sqp", &[("owd_window", "20s"), ("owd_window_long", "10s")], FLOW), "owd_window");
        assert_eq!(refused("fbra", &[("report_interval", "100ms")], FLOW), "report_interval");
        assert_eq!(refused("fbra", &[("down_edge", "1.5")], FLOW), "probe_down");
        assert_eq!(refused("fbra", &[("up_down", "1.8")], FLOW), "up_down");
        assert_eq!(refused("fbra", &[("probe_down", "1.2"), ("up_down", "1.1"), ("stay", "1.15")], FLOW), "stay");
        assert_eq!(refused("fbra", &[("rate_window", "3s")], FLOW), "rate_window");
        assert_eq!(refused("nada", &[("delta", "600ms")], FLOW), "delta");
        assert_eq!(refused("nadar", &[], Duration::from_secs(1)), "delta_max");
        assert_eq!(refused("cross", &[("f", "3")], FLOW), "f");
        assert_eq!(refused("cross", &[("probe_rtt_duration", "2s")], FLOW), "probe_rtt_duration");
        assert_eq!(refused("rrtcc", &[("rr_interval", "20ms")], FLOW), "rr_interval");
    }

    /// FBRA's report interval is the flow's unless given, so any feedback
    /// interval validates with the defaults.
    #[test]
    fn fbra_takes_the_flows_feedback_interval() {
        for ms in [20, 50, 100, 1000] {
            let ctx = ControllerContext { feedback_interval: Duration::from_millis(ms), ..ControllerContext::DEFAULT };
            assert!(create("fbra", &Params::new(), &ctx).is_ok(), "{ms} ms");
        }
    }

    /// Every listed controller's defaults pass their own checks.
    #[test]
    fn every_default_validates() {
        for name in listed_names().into_iter().filter(|n| n != "python") {
            if let Err(e) = create(&name, &Params::new(), &ControllerContext::DEFAULT) {
                panic!("{name}: {e}");
            }
        }
    }
}

#[cfg(test)]
mod reconstruction_tests {
    use super::*;

    /// The reconstructions are registered by these names (a renamed one
    /// would silently lose its mark), a wrapper takes its inner's flag, and
    /// controllers built from their papers are not marked.
    #[test]
    fn reconstructions_are_registered_and_marked() {
        for name in RECONSTRUCTIONS {
            assert!(lookup(name).is_some(), "{name} is not registered");
            assert!(is_reconstruction(name));
        }
        assert!(is_reconstruction("sqp+dumbo"));
        for name in ["gcc", "cross", "fbra", "burstrtc", "copa+dumbo", "nonexistent"] {
            assert!(!is_reconstruction(name), "{name}");
        }
    }
}
