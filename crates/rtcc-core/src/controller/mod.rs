//! The `Controller` trait every congestion controller implements, its typed
//! parameters, and the name → config registry shared by scenarios, the CLI and
//! Python. Controllers are pure state machines: time comes in as `now`,
//! decisions are read back; they never fail (they clamp).

pub mod copa;
pub mod dumbo;
pub mod fixed;
pub mod gcc;
mod params;
pub mod rocc;
pub mod vivace;

pub use params::{ConfigError, ParamValue, Params};

use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

/// A packet as it left the pacer, told to the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SentPacket {
    pub seq: u64,
    pub kind: PacketKind,
    pub size: DataSize,
    pub send_time: Time,
    pub probe_cluster: i32,
    /// Bytes in flight after this packet, as the sender counts them.
    pub in_flight: DataSize,
}

/// An encoded frame, for frame-aware controllers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameInfo {
    pub frame: u32,
    pub capture_time: Time,
    pub size: DataSize,
    pub packets: u16,
    pub key: bool,
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
}

/// Fixed inputs a controller is created with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControllerContext {
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
    pub mtu: DataSize,
    pub frame_interval: Duration,
}

impl Default for ControllerContext {
    fn default() -> Self {
        ControllerContext {
            start_rate: DataRate::from_kbps(300),
            min_rate: DataRate::from_kbps(30),
            max_rate: DataRate::from_mbps(50),
            mtu: DataSize::from_bytes(1200),
            frame_interval: Duration::from_micros(33_333),
        }
    }
}

pub trait Controller: Send {
    fn name(&self) -> &str;
    fn on_packet_sent(&mut self, _now: Time, _packet: &SentPacket) {}
    fn on_feedback(&mut self, _now: Time, _feedback: &Feedback) {}
    fn on_frame_encoded(&mut self, _now: Time, _frame: &FrameInfo) {}
    /// Called when `poll_timeout` has passed.
    fn on_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn decision(&self) -> Decision;
    /// Probe clusters to start now, one per call.
    fn poll_probe(&mut self) -> Option<ProbeCluster> {
        None
    }
    /// Internal state for the time-series table (habit 6): (column, value).
    fn state(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
    /// The sender's media queue changed (after every enqueue and send).
    fn on_send_queue(&mut self, _now: Time, _queued: DataSize) {}
    /// Skip encoding frames while the send queue would take longer than this
    /// to drain at the target rate (Dumbo's latency threshold, §4 "Pacer").
    fn skip_threshold(&self) -> Option<Duration> {
        None
    }
}

/// One parameter of a registered controller.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// Builds a controller from its parameters.
pub type Factory = fn(&Params, &ControllerContext) -> Result<Box<dyn Controller>, ConfigError>;

/// A registry entry: name, one-line summary, parameters and factory.
pub struct ControllerInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamInfo],
    pub create: Factory,
}

/// Every registered controller. Adding an algorithm = one module + one line here.
pub fn registry() -> &'static [ControllerInfo] {
    static REGISTRY: &[ControllerInfo] = &[
        fixed::INFO,
        gcc::INFO,
        gcc::INFO_PROBING,
        copa::INFO,
        rocc::INFO,
        dumbo::INFO_COPA,
        dumbo::INFO_ROCC,
        vivace::INFO,
    ];
    REGISTRY
}

pub fn lookup(name: &str) -> Option<&'static ControllerInfo> {
    registry().iter().find(|c| c.name == name)
}

/// Create a controller by name; unknown names and parameters are refused.
pub fn create(name: &str, params: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    let info = lookup(name).ok_or_else(|| ConfigError::UnknownController {
        name: name.to_string(),
        known: registry().iter().map(|c| c.name).collect::<Vec<_>>().join(", "),
    })?;
    params.check_known(info.params)?;
    (info.create)(params, ctx)
}
