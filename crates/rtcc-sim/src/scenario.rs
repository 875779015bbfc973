//! TOML scenarios: parsed strictly (unknown fields refused) and validated into
//! typed values, with every error naming the source, the field and the reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rtcc_core::controller::{self, ControllerContext, Param, ParamInfo, ParamValue, Params, Pushback};
use rtcc_core::encoder::{ContentProfile, EncoderConfig};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use rtcc_core::fec::FecConfig;
use rtcc_core::feedback::ReportFormat;
use rtcc_core::pacer::PacerConfig;
use rtcc_core::playout::{Playout, WebrtcPlayout};
use rtcc_core::quality::QualityModel;
use rtcc_core::receiver::ReceiverConfig;
use rtcc_core::resolution::{Resolution, ResolutionPolicy};
use rtcc_core::sender::{AudioConfig, RateCap, SenderConfig, SenderTiming};

use crate::link::{Link, LinkConfig};
use crate::path::PathSpec;
use crate::profile::{self, param_value};
use crate::video;
use rtcc_video::real::VideoSpec;

/// A refused scenario: `source: field: reason` — the core's one
/// configuration error, with the scenario's file as its source.
pub use rtcc_core::controller::ConfigError as ScenarioError;

/// A quantity as written: a number (in the base unit) or a string with a
/// unit. Anything else is refused in plain words ("expected a number or a
/// string with a unit …, got a table").
#[derive(Debug)]
pub enum Quantity {
    Num(f64),
    Str(String),
}

/// A name (`controller = "gcc"`) or a table of parameters.
#[derive(Debug)]
pub enum Spec {
    Name(String),
    Table(toml::Table),
}

/// "expected …, got …": a value of the wrong TOML type, in plain words.
fn wrong_type<E: de::Error>(expected: &str, got: &str) -> E {
    E::custom(format!("expected {expected}, got {got}"))
}

/// What a map from the TOML reader is: a table, or a date (which reaches
/// serde as a one-entry map with a private key).
fn map_kind<'de, A: MapAccess<'de>>(mut map: A) -> &'static str {
    match map.next_key::<String>() {
        Ok(Some(k)) if k.contains("datetime") => "a date",
        _ => "a table",
    }
}

/// Implements the `visit_*` methods that refuse a TOML type with
/// [`wrong_type`]; `$exp` says what was expected.
macro_rules! refuse {
    (bool, $exp:expr) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Err(wrong_type($exp, &format!("a boolean ({v})")))
        }
    };
    (num, $exp:expr) => {
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Err(wrong_type($exp, &format!("a number ({v})")))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Err(wrong_type($exp, &format!("a number ({v})")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Err(wrong_type($exp, &format!("a number ({v})")))
        }
    };
    (str, $exp:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(wrong_type($exp, "a string"))
        }
    };
    (seq, $exp:expr) => {
        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(wrong_type($exp, "an array"))
        }
    };
    (map, $exp:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Err(wrong_type($exp, map_kind(map)))
        }
    };
}

const QUANTITY_EXPECTED: &str = "a number or a string with a unit such as \"25ms\", \"3Mbps\" or \"1500B\"";

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(QUANTITY_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity::Str(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v as f64))
            }
            refuse!(bool, QUANTITY_EXPECTED);
            refuse!(seq, QUANTITY_EXPECTED);
            refuse!(map, QUANTITY_EXPECTED);
        }
        d.deserialize_any(V)
    }
}

const SPEC_EXPECTED: &str = "a name (a string such as \"gcc\") or a table of parameters";

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Spec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(SPEC_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Spec, E> {
                Ok(Spec::Name(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Spec, A::Error> {
                toml::Table::deserialize(de::value::MapAccessDeserializer::new(map)).map(Spec::Table)
            }
            refuse!(bool, SPEC_EXPECTED);
            refuse!(num, SPEC_EXPECTED);
            refuse!(seq, SPEC_EXPECTED);
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Option<String>,
    pub duration: Quantity,
    pub seed: Option<u64>,
    /// Accept a capacity under `link::config::MIN_CAPACITY` or a one-way
    /// delay over `MAX_DELAY`, refused otherwise as a likely dropped unit.
    #[serde(default)]
    pub allow_extreme: bool,
    /// `"realistic"` (default) or `"exact"`: the defaults of the timing
    /// models (`ModelTiming`).
    pub model_timing: Option<String>,
    pub link: LinkConfig,
    /// Each flow's table: its `kind` picks how the rest is read.
    #[serde(rename = "flow", default)]
    pub flows: Vec<toml::Table>,
    #[serde(default)]
    pub record: RecordFile,
    #[serde(default)]
    pub limits: LimitsFile,
    #[serde(default)]
    pub wire: WireFile,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct WireFile {
    /// Every video packet crosses as its RTP datagram: the sending end's
    /// packet is encoded to bytes (`rtcc_core::datagram`) and the receiving
    /// end is handed what those bytes parse to (default false; a check of the
    /// wire format, slower).
    pub datagrams: Option<bool>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Packets all flows may send in the run (default `DEFAULT_MAX_PACKETS`).
    pub packets: Option<u64>,
    /// Packet-table rows the run may hold in memory at once (default
    /// `recorder::MAX_PACKET_ROWS`).
    pub packet_rows: Option<u64>,
}

/// The default packet budget of a run: about a minute of simulation, and a
/// few GB of packet rows in memory when they are not written as the run
/// goes; far beyond any call the papers ran (the Dumbo thesis's longest,
/// 13 traces × 120 s, sends under 2 million).
pub const DEFAULT_MAX_PACKETS: u64 = 100_000_000;

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RecordFile {
    /// Keep a per-packet table (default true).
    pub packets: Option<bool>,
    /// Keep a per-frame table (default true; frame metrics are streamed either way).
    pub frames: Option<bool>,
    /// Keep the per-bin time series (default true).
    pub timeseries: Option<bool>,
    /// Time-series bin width (default 100 ms).
    pub bin: Option<Quantity>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    pub name: Option<String>,
    pub direction: Option<String>,
    pub controller: Spec,
    pub encoder: Option<Spec>,
    pub start: Option<Quantity>,
    pub stop: Option<Quantity>,
    pub fps: Option<f64>,
    pub mtu: Option<Quantity>,
    pub access_delay: Option<Quantity>,
    pub feedback_interval: Option<Quantity>,
    pub start_rate: Option<Quantity>,
    pub min_rate: Option<Quantity>,
    pub max_rate: Option<Quantity>,
    pub skip_threshold: Option<Quantity>,
    pub nack: Option<bool>,
    pub nack_max_age: Option<Quantity>,
    pub keyframe_wait: Option<Quantity>,
    pub max_delay: Option<Quantity>,
    pub early_reports: Option<bool>,
    pub report_format: Option<String>,
    /// The controller's one-way delay is absolute (default true), else
    /// relative to the smallest seen (`SenderConfig::clocks_agree`).
    pub clocks_agree: Option<bool>,
    /// RTCP sender reports about this often (default 1 s, as libwebrtc's
    /// video RTCP); "0s" sends none, so no RR gives a round trip.
    pub rtcp_interval: Option<Quantity>,
    pub playout: Option<Spec>,
    pub fec: Option<Toggle>,
    pub audio: Option<Toggle>,
    pub resolution: Option<String>,
    pub caps: Option<String>,
    pub queue_time_limit: Option<Quantity>,
    pub source: Option<String>,
    pub cwnd_pushback: Option<bool>,
    pub pacer_burst: Option<Quantity>,
    pub timing: Option<Toggle>,
    pub pacer_keepalive: Option<Quantity>,
    pub content: Option<toml::Value>,
    pub quality: Option<toml::Table>,
}

/// `false`, `true` (defaults) or a table of parameters.
#[derive(Debug)]
pub enum Toggle {
    On(bool),
    Table(toml::Table),
}

const TOGGLE_EXPECTED: &str = "true, false or a table of parameters";

impl<'de> Deserialize<'de> for Toggle {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Toggle;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(TOGGLE_EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Toggle, E> {
                Ok(Toggle::On(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Toggle, A::Error> {
                toml::Table::deserialize(de::value::MapAccessDeserializer::new(map)).map(Toggle::Table)
            }
            refuse!(str, TOGGLE_EXPECTED);
            refuse!(num, TOGGLE_EXPECTED);
            refuse!(seq, TOGGLE_EXPECTED);
        }
        d.deserialize_any(V)
    }
}

/// A serde message in plain words: "invalid type: map, expected f64"
/// becomes "expected a number, got a table"; Rust type names become what a
/// TOML writer knows.
pub fn plain_message(msg: &str) -> String {
    let msg = msg.trim();
    if msg.starts_with("data did not match any variant of untagged enum") {
        return "has the wrong type".to_string();
    }
    // "invalid value: integer `-1`, expected u64": a number outside the type's range.
    if let Some(rest) = msg.strip_prefix("invalid value: integer ") {
        let (v, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let (v, at) = (v.trim_matches('`'), expected.find(" (").map_or("", |i| &expected[i..]));
        let range = match expected.split(' ').next().unwrap_or("") {
            "u64" => format!("0 to {}", u64::MAX),
            "u32" => format!("0 to {}", u32::MAX),
            "u16" => format!("0 to {}", u16::MAX),
            "u8" => format!("0 to {}", u8::MAX),
            _ => return msg.to_string(),
        };
        return format!("{v} is outside {range}{at}");
    }
    let Some(rest) = msg.strip_prefix("invalid type: ") else { return msg.to_string() };
    let Some((got, expected)) = rest.split_once(", expected ") else { return msg.to_string() };
    let got = match got.split_once(' ') {
        _ if got == "map" => "a table".to_string(),
        _ if got == "sequence" => "an array".to_string(),
        Some(("boolean", v)) => format!("a boolean ({})", v.trim_matches('`')),
        Some(("integer", v)) | Some(("floating", v)) => {
            format!("a number ({})", v.trim_start_matches("point ").trim_matches('`'))
        }
        Some(("string", v)) => format!("a string ({})", crate::trace::excerpt(v)),
        _ => got.to_string(),
    };
    let expected = match expected {
        "f64" | "f32" => "a number",
        "u64" | "u32" | "u16" | "u8" | "usize" => "a whole number, at least 0",
        "i64" | "i32" => "a whole number",
        "bool" | "a boolean" => "true or false",
        "a string" | "string" => "a string",
        "a sequence" => "an array",
        "a map" => "a table",
        e if e.starts_with("struct ") => "a table",
        e => e,
    };
    format!("expected {expected}, got {got}")
}

/// Which way a flow's data runs over the link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Sender → bottleneck → receiver; what comes back takes the reverse path.
    #[default]
    Forward,
    /// From the receiving side: over the reverse bottleneck (`[link]
    /// reverse_capacity`), sharing it with the forward flows' feedback.
    Reverse,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

/// A validated flow.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    /// Cross traffic (TCP, web-like, UDP); `None` for a video call, which
    /// is what the other fields describe.
    pub traffic: Option<crate::traffic::TrafficSpec>,
    pub direction: Direction,
    pub controller: String,
    pub params: Params,
    pub ctx: ControllerContext,
    pub encoder: EncoderConfig,
    pub access_delay: Duration,
    /// The core's own configs, parsed straight from the flow's table (the
    /// sender's `max_resolution` is set once the content is opened).
    pub sender: SenderConfig,
    pub receiver: ReceiverConfig,
    /// Rate–quality model for PSNR/SSIM estimates.
    pub quality: QualityModel,
    /// A real codec (`encoder = "vp8" | "h264"`) and its content; then
    /// `encoder` is unused and quality is measured on decoded pictures.
    pub video: Option<VideoSpec>,
    /// What the flow sends whatever the network does, and in packets of
    /// what size: a `fixed` controller its rate and padding, UDP its rate
    /// (taken as always on); `None` for adaptive flows. The run's packet
    /// floor (`packets_floor`) is built from it.
    pub constant_rate: Option<(DataRate, DataSize)>,
}

impl FlowSpec {
    /// "video", "tcp", "web" or "udp".
    pub fn kind(&self) -> &'static str {
        self.traffic.as_ref().map_or("video", |t| t.kind())
    }

    /// Encoder kind as written in the scenario ("" for cross traffic).
    pub fn encoder_kind(&self) -> &'static str {
        if self.traffic.is_some() {
            return "";
        }
        match &self.video {
            Some(v) => v.codec.name(),
            None => self.encoder.kind(),
        }
    }
}

/// Most flows one scenario may have.
pub const MAX_FLOWS: usize = 1000;

/// The scenario's `model_timing`: what a video flow's `timing`,
/// `pacer_keepalive` and `playout.max_video_delay` are when it does not set
/// them (a flow's own value wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelTiming {
    /// As a WebRTC sender and receiver run: `timing = true`,
    /// `pacer_keepalive = "500ms"`, `max_video_delay = "10s"`. The default:
    /// what a user gets without reading the docs is what a real sender has.
    #[default]
    Realistic,
    /// Every model off: frames on the exact grid, a silent window-limited
    /// pacer, no playout timing bound (the papers' equations exactly; two
    /// flows keep one capture phase for a whole run).
    Exact,
}

/// A validated scenario, ready to build a simulation.
pub struct Scenario {
    pub name: String,
    pub source: String,
    pub text: String,
    pub duration: Duration,
    pub seed: u64,
    pub link: LinkConfig,
    pub base_dir: PathBuf,
    pub flows: Vec<FlowSpec>,
    pub record_packets: bool,
    pub record_frames: bool,
    pub record_timeseries: bool,
    pub bin: Duration,
    /// Packets all flows may send (`[limits] packets`): a run that would send
    /// more is refused before it starts when constant-rate flows alone
    /// would, and stops with an error when it gets there.
    pub max_packets: u64,
    /// Packet-table rows held in memory at once (`[limits] packet_rows`):
    /// a run that would hold more stops with an error on that field.
    pub max_packet_rows: usize,
    /// Folder of default photographs for generated content (the Python
    /// package passes scikit-image's); without it, procedural pictures.
    pub photo_dir: Option<PathBuf>,
    /// Write each real-video flow's received and side-by-side video here.
    pub video_dir: Option<PathBuf>,
    /// `[wire] datagrams`.
    pub datagrams: bool,
}

impl Scenario {
    /// Parse and validate `text`; `source` names it in errors and resolves
    /// relative trace paths (its directory).
    pub fn parse(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        Self::parse_with(text, source, &HashMap::new())
    }

    /// `parse`, with content files in container formats replaced by the Y4M
    /// files they were converted to (`media`: original path → Y4M path).
    pub fn parse_with(text: &str, source: &str, media: &HashMap<PathBuf, PathBuf>) -> Result<Scenario, ScenarioError> {
        let err = |field: &str, reason: String| ScenarioError {
            source_name: source.to_string(),
            field: field.to_string(),
            reason,
        };
        let de = toml::Deserializer::new(text);
        let file: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = plain_message(inner.message());
            let at = inner
                .span()
                .map(|s| format!(" (line {})", text[..s.start.min(text.len())].matches('\n').count() + 1))
                .unwrap_or_default();
            let field = if path == "." || path.is_empty() { "scenario".to_string() } else { path };
            err(&field, format!("{msg}{at}"))
        })?;
        let base_dir = Path::new(source).parent().map(Path::to_path_buf).unwrap_or_default();
        let duration = duration_of(&file.duration).map_err(|r| err("duration", r))?;
        if duration <= Duration::ZERO {
            return Err(err("duration", "must be positive".into()));
        }
        if duration > Duration::from_secs(86_400) {
            return Err(err("duration", "must be at most 24 hours".into()));
        }
        if file.flows.is_empty() {
            return Err(err("flow", "at least one [[flow]] is required".into()));
        }
        // Each flow keeps its own endpoints, histograms and frame state
        // (about 100 kB); beyond this a typo (a generated list gone wrong) is likelier
        // than a real experiment.
        if file.flows.len() > MAX_FLOWS {
            return Err(err("flow", format!("{} flows; at most {MAX_FLOWS} share one link", file.flows.len())));
        }
        // Build once to validate the link (trace files, rates, queue).
        file.link
            .build(&base_dir)
            .map_err(|e| err(&format!("link.{}", e.field.trim_start_matches("link.")), e.reason))?;
        file.link.build_reverse::<crate::endpoint::Envelope>(&base_dir, "link").map_err(|e| err(&e.field, e.reason))?;
        let reverse_link = file.link.reverse_capacity.is_some();
        let model_timing = match file.model_timing.as_deref() {
            None | Some("realistic") => ModelTiming::Realistic,
            Some("exact") => ModelTiming::Exact,
            Some(o) => return Err(err("model_timing", format!("'{o}' is not one of realistic, exact"))),
        };
        let headers = flow_lines(text);
        let mut flows = Vec::new();
        for (i, table) in file.flows.iter().enumerate() {
            let fld = |name: &str| format!("flow[{i}].{name}");
            // Where the flow's table starts, for errors that have no line of their own.
            let at = match headers.get(i) {
                Some(l) if headers.len() == file.flows.len() => format!(" (flow at line {l})"),
                _ => String::new(),
            };
            let flow = read_flow(i, table, duration, &base_dir, media, &at, model_timing)
                .map_err(|(name, reason)| err(&fld(&name), reason))?;
            if flow.direction == Direction::Reverse && !reverse_link {
                return Err(err(
                    &fld("direction"),
                    format!("a reverse flow crosses the reverse bottleneck: set [link] reverse_capacity{at}"),
                ));
            }
            if flow.name.trim().is_empty() {
                return Err(err(&fld("name"), "must not be empty (it labels the flow's rows and files)".into()));
            }
            if flows.iter().any(|o: &FlowSpec| o.name == flow.name) {
                return Err(err(&fld("name"), format!("'{}' is used by another flow", flow.name)));
            }
            flows.push(flow);
        }
        if !file.allow_extreme {
            extremes(&file, &flows).map_err(|e| err(&e.field, e.reason))?;
        }
        let bin = match &file.record.bin {
            None => Duration::from_millis(100),
            Some(q) => duration_of(q).map_err(|r| err("record.bin", r))?,
        };
        if bin < Duration::from_millis(1) || bin > Duration::from_secs(10) {
            return Err(err("record.bin", "must be between 1ms and 10s".into()));
        }
        let name = file.name.clone().unwrap_or_else(|| {
            Path::new(source).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string()
        });
        let max_packets = file.limits.packets.unwrap_or(DEFAULT_MAX_PACKETS);
        if max_packets == 0 {
            return Err(err("limits.packets", "must be at least 1".into()));
        }
        let max_packet_rows = file.limits.packet_rows.unwrap_or(crate::recorder::MAX_PACKET_ROWS as u64);
        if max_packet_rows == 0 {
            return Err(err("limits.packet_rows", "must be at least 1".into()));
        }
        let max_packet_rows = usize::try_from(max_packet_rows).unwrap_or(usize::MAX);
        let floor = packets_floor(&flows, duration);
        if floor > max_packets {
            return Err(err(
                "limits.packets",
                format!(
                    "the constant-rate flows alone would send about {floor} packets in {duration}, more than the \
                     run's budget of {max_packets}; raise [limits] packets or shorten the run"
                ),
            ));
        }
        Ok(Scenario {
            name,
            source: source.to_string(),
            text: text.to_string(),
            duration,
            seed: file.seed.unwrap_or(1),
            link: file.link,
            base_dir,
            flows,
            record_packets: file.record.packets.unwrap_or(true),
            record_frames: file.record.frames.unwrap_or(true),
            record_timeseries: file.record.timeseries.unwrap_or(true),
            bin,
            max_packets,
            max_packet_rows,
            photo_dir: None,
            video_dir: None,
            datagrams: file.wire.datagrams.unwrap_or(false),
        })
    }

    pub fn build_link<T: crate::queue::Item>(
        &self,
        rng: &mut rtcc_core::rng::Rng,
    ) -> Result<(Link<T>, PathSpec), ScenarioError> {
        let err = |e: crate::link::FieldError| ScenarioError {
            source_name: self.source.clone(),
            field: format!("link.{}", e.field.trim_start_matches("link.")),
            reason: e.reason,
        };
        let mut link = self.link.build_named(&self.base_dir, "link").map_err(err)?;
        link.set_rng(rng);
        Ok((link, self.link.path_spec("link").map_err(err)?))
    }

    /// The reverse bottleneck (`link.reverse_capacity`), if any.
    pub fn build_reverse_link<T: crate::queue::Item>(&self) -> Result<Option<Link<T>>, ScenarioError> {
        self.link.build_reverse(&self.base_dir, "link").map_err(|e| ScenarioError {
            source_name: self.source.clone(),
            field: e.field,
            reason: e.reason,
        })
    }
}

/// The link's capacities and delays, and each flow's access delay, within
/// the plausible range (`LinkConfig::check_extremes`).
fn extremes(file: &ScenarioFile, flows: &[FlowSpec]) -> Result<(), crate::link::FieldError> {
    use crate::link::config::{extreme_error, UnitValue, MAX_DELAY};
    file.link.check_extremes("link")?;
    for (i, (table, flow)) in file.flows.iter().zip(flows).enumerate() {
        if flow.access_delay > MAX_DELAY {
            let written = match table.get("access_delay") {
                Some(toml::Value::Integer(n)) => UnitValue::Number(*n as f64),
                Some(toml::Value::Float(x)) => UnitValue::Number(*x),
                Some(v) => UnitValue::Text(v.as_str().unwrap_or_default().to_string()),
                None => UnitValue::Text(flow.access_delay.to_string()),
            };
            return Err(extreme_error(&format!("flow[{i}].access_delay"), &written, false));
        }
    }
    Ok(())
}

/// Lines where each `[[flow]]` table starts.
fn flow_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[flow]]") || l.trim_start().starts_with("[[ flow ]]"))
        .map(|(n, _)| n + 1)
        .collect()
}

/// Deserialize a flow's table as `T`, naming the field at fault.
/// A malformed table is told with where the flow starts (`at`).
fn typed<T: serde::de::DeserializeOwned>(t: &toml::Table, at: &str) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(toml::Value::Table(t.clone())).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "kind".into() } else { path };
        (field, format!("{}{at}", plain_message(e.into_inner().message())))
    })
}

/// Flow `i` from its table: a video call unless `kind` says otherwise.
fn read_flow(
    i: usize,
    table: &toml::Table,
    duration: Duration,
    base: &Path,
    media: &HashMap<PathBuf, PathBuf>,
    at: &str,
    model: ModelTiming,
) -> Result<FlowSpec, (String, String)> {
    let kind = match table.get("kind") {
        None => "video",
        Some(toml::Value::String(k)) => k.as_str(),
        Some(v) => return Err(("kind".into(), format!("must be a string, not {}", v.type_str()))),
    };
    match kind {
        "video" => {
            let mut t = table.clone();
            t.remove("kind");
            let f: FlowFile = typed(&t, at)?;
            let direction = match f.direction.as_deref() {
                None | Some("forward") => Direction::Forward,
                Some("reverse") => Direction::Reverse,
                Some(d) => return Err(("direction".into(), format!("'{d}' is not one of forward, reverse"))),
            };
            Ok(FlowSpec { direction, ..flow_spec(i, &f, duration, base, media, model)? })
        }
        "tcp" | "web" | "udp" => {
            let f: crate::traffic::TrafficFile = typed(table, at)?;
            let (traffic, common) = crate::traffic::parse(&f)?;
            let start = common.start.unwrap_or(Duration::ZERO);
            if start >= duration {
                return Err(("start".into(), format!("{start} is not before the end of the run ({duration})")));
            }
            if let Some(s) = common.stop {
                if s <= start {
                    return Err(("stop".into(), format!("{s} is not after start ({start})")));
                }
            }
            let ctx = ControllerContext::default();
            let constant_rate = match &traffic {
                crate::traffic::TrafficSpec::Udp(u) => Some((u.rate, u.packet)),
                _ => None,
            };
            Ok(FlowSpec {
                name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
                controller: traffic.cc().unwrap_or("").to_string(),
                traffic: Some(traffic),
                direction: common.direction,
                params: Params::new(),
                encoder: EncoderConfig::from_params("ideal", &Params::new()).map_err(|er| config_err("encoder", er))?,
                access_delay: common.access_delay,
                sender: SenderConfig {
                    flow: i as u16,
                    start: Time::ZERO + start,
                    stop: common.stop.map(|s| Time::ZERO + s),
                    ..SenderConfig::default()
                },
                receiver: ReceiverConfig { flow: i as u16, ..ReceiverConfig::default() },
                quality: QualityModel::default(),
                video: None,
                constant_rate,
                ctx,
            })
        }
        k => Err(("kind".into(), format!("'{k}' is not one of video, tcp, web, udp"))),
    }
}

fn flow_spec(
    i: usize,
    f: &FlowFile,
    duration: Duration,
    base: &Path,
    media: &HashMap<PathBuf, PathBuf>,
    model: ModelTiming,
) -> Result<FlowSpec, (String, String)> {
    let e = |field: &str, r: String| (field.to_string(), r);
    let exact = model == ModelTiming::Exact;
    let (controller, params) = match &f.controller {
        Spec::Name(n) => (n.clone(), Params::new()),
        Spec::Table(t) => table_params(t, "name").map_err(|(k, r)| e(&format!("controller.{k}"), r))?,
    };
    let fps = f.fps.unwrap_or(30.0);
    if !(fps > 0.0 && fps <= 240.0) {
        return Err(e("fps", format!("{fps} is outside (0, 240]")));
    }
    let frame_interval = Duration::from_secs_f64(1.0 / fps);
    let opt_dur = |q: &Option<Quantity>, name: &str| -> Result<Option<Duration>, (String, String)> {
        q.as_ref().map(duration_of).transpose().map_err(|r| e(name, r))
    };
    let opt_rate = |q: &Option<Quantity>, name: &str| -> Result<Option<DataRate>, (String, String)> {
        q.as_ref().map(rate_of).transpose().map_err(|r| e(name, r))
    };
    let start = opt_dur(&f.start, "start")?.unwrap_or(Duration::ZERO);
    if start >= duration {
        return Err(e("start", format!("{start} is not before the end of the run ({duration})")));
    }
    let stop = opt_dur(&f.stop, "stop")?;
    if let Some(s) = stop {
        if s <= start {
            return Err(e("stop", format!("{s} is not after start ({start})")));
        }
    }
    let mtu = match &f.mtu {
        None => DataSize::from_bytes(1200),
        Some(q) => size_of(q).map_err(|r| e("mtu", r))?,
    };
    if !(100..=65_000).contains(&mtu.bytes()) {
        return Err(e("mtu", format!("{mtu} is outside 100B..65000B")));
    }
    let feedback_interval = opt_dur(&f.feedback_interval, "feedback_interval")?.unwrap_or(Duration::from_millis(50));
    if feedback_interval < Duration::from_millis(1) || feedback_interval > Duration::from_secs(5) {
        return Err(e("feedback_interval", format!("{feedback_interval} is outside 1ms..5s")));
    }
    let mut ctx = ControllerContext { mtu, frame_interval, feedback_interval, ..Default::default() };
    if let Some(r) = opt_rate(&f.start_rate, "start_rate")? {
        ctx.start_rate = r;
    }
    if let Some(r) = opt_rate(&f.min_rate, "min_rate")? {
        ctx.min_rate = r;
    }
    if let Some(r) = opt_rate(&f.max_rate, "max_rate")? {
        ctx.max_rate = r;
    }
    for (name, r) in [("start_rate", ctx.start_rate), ("min_rate", ctx.min_rate), ("max_rate", ctx.max_rate)] {
        if r > MAX_FLOW_RATE {
            return Err(e(name, above_max_rate(r)));
        }
    }
    if ctx.max_rate == DataRate::ZERO || ctx.min_rate > ctx.max_rate {
        return Err(e(
            "max_rate",
            format!("max_rate {} must be positive and >= min_rate {}", ctx.max_rate, ctx.min_rate),
        ));
    }
    // A start rate the controller would only clamp is a mistake to say, not to hide.
    if f.start_rate.is_some() && (ctx.start_rate < ctx.min_rate || ctx.start_rate > ctx.max_rate) {
        return Err(e(
            "start_rate",
            format!("{} is outside min_rate {} .. max_rate {}", ctx.start_rate, ctx.min_rate, ctx.max_rate),
        ));
    }
    let ctrl = controller::create(&controller, &params, &ctx).map_err(|er| config_err("controller", er))?;
    let pushback = controller::pushback_of(&controller).unwrap_or(Pushback::InFlight);
    let mut constant_rate = None;
    if controller == "fixed" {
        // The encoder's target never leaves [min_rate, max_rate] while the
        // pacer follows `rate`: refused rather than run inconsistent (a
        // 5 kbps pacer under a 30 kbps encoder skips most frames).
        let d = ctrl.decision();
        let rate = d.target_rate;
        constant_rate = Some(d.target_rate + d.padding_rate);
        let field = if params.0.contains_key("rate") { "controller.rate" } else { "min_rate" };
        if d.pacing_rate > MAX_FLOW_RATE {
            let field = if params.0.contains_key("pacing_factor") { "controller.pacing_factor" } else { field };
            let what = match d.pacing_rate == rate {
                true => above_max_rate(rate),
                false => format!("pacing at rate × pacing_factor: {}", above_max_rate(d.pacing_rate)),
            };
            return Err(e(field, what));
        }
        if d.padding_rate > MAX_FLOW_RATE {
            return Err(e("controller.padding", above_max_rate(d.padding_rate)));
        }
        if rate < ctx.min_rate {
            return Err(e(
                field,
                format!(
                    "the fixed rate {rate} is below the flow's min_rate {}: the encoder never goes below min_rate, \
                     so the pacer could not keep up; raise controller.rate or lower min_rate",
                    ctx.min_rate
                ),
            ));
        }
    }
    let (enc_kind, enc_params) = match &f.encoder {
        None => ("lagging".to_string(), Params::new()),
        Some(Spec::Name(k)) => (k.clone(), Params::new()),
        Some(Spec::Table(t)) => table_params(t, "kind").map_err(|(k, r)| e(&format!("encoder.{k}"), r))?,
    };
    let mut enc_params = enc_params;
    // The `content` model's own profiles ("static", "dynamic") are its
    // parameter; any other name is a profile file, as for the other models.
    let content_profile =
        |v: &ParamValue| enc_kind == "content" && matches!(v, ParamValue::Str(n) if ContentProfile::parse(n).is_some());
    let enc_profile = match enc_params.0.remove("profile") {
        None => None,
        Some(v) if content_profile(&v) => {
            enc_params.0.insert("profile".into(), v);
            None
        }
        Some(ParamValue::Str(name)) if enc_kind == "content" && profile::builtin_names().contains(&name.as_str()) => {
            return Err(e(
                "encoder.profile",
                format!(
                    "'{name}' is a codec profile; the content model's are {} or a file from \
                     `rtcc calibrate-encoder --content`",
                    ContentProfile::NAMES.join(", ")
                ),
            ))
        }
        Some(ParamValue::Str(name)) if !video::REAL_KINDS.contains(&enc_kind.as_str()) => {
            Some(profile::load(&name, base).map_err(|r| e("encoder.profile", r))?)
        }
        Some(ParamValue::Str(_)) => {
            return Err(e("encoder.profile", format!("'{enc_kind}' is a real codec; profiles are for model encoders")))
        }
        Some(_) => return Err(e("encoder.profile", "must be a profile name or file".into())),
    };
    if let Some(pr) = &enc_profile {
        profile::fill(&mut enc_params, &pr.encoder, EncoderConfig::param_info(&enc_kind));
    }
    let real = if video::REAL_KINDS.contains(&enc_kind.as_str()) {
        Some(video::parse_encoder(&enc_kind, &enc_params)?)
    } else {
        None
    };
    let encoder = if real.is_some() {
        EncoderConfig::Ideal
    } else {
        EncoderConfig::from_params(&enc_kind, &enc_params).map_err(|er| match er.field == "kind" {
            true => ("encoder.kind".to_string(), format!("{}, {}", er.reason, video::REAL_KINDS.join(", "))),
            false => config_err("encoder", er),
        })?
    };
    let resolution = match f.resolution.as_deref() {
        None => ResolutionPolicy::Fixed(Resolution::R720),
        Some("dumbo") => ResolutionPolicy::dumbo(),
        Some(r) => ResolutionPolicy::Fixed(
            Resolution::parse(r)
                .ok_or_else(|| e("resolution", format!("'{r}' is not one of 180p, 360p, 720p, 1080p, dumbo")))?,
        ),
    };
    let (content, motion) = video::parse_content(f.content.as_ref(), resolution, base, media)?;
    let video = real.map(|r| video::video_spec(r, content));
    // WebRTC negotiates NACK for video by default; a frame older than 1 s
    // is past any interactive playout deadline.
    let nack = match f.nack.unwrap_or(true) {
        true => Some(opt_dur(&f.nack_max_age, "nack_max_age")?.unwrap_or(Duration::from_secs(1))),
        false => None,
    };
    let keyframe_wait = match opt_dur(&f.keyframe_wait, "keyframe_wait")? {
        None => Duration::from_millis(200),
        Some(d) if d >= Duration::from_millis(1) && d <= Duration::from_secs(10) => d,
        Some(d) => return Err(e("keyframe_wait", format!("{d} is outside 1ms..10s"))),
    };
    let playout = parse_playout(f.playout.as_ref(), exact).map_err(|(k, r)| e(&k, r))?;
    // Unnamed, the controller's own: transport-wide CC as libwebrtc sends
    // it, RTCP RR + XR for FBRA (§4.1).
    let report_format = match f.report_format.as_deref() {
        None => controller::report_format_of(&controller).unwrap_or(ReportFormat::Twcc),
        Some("twcc") => ReportFormat::Twcc,
        Some("rfc8888") => ReportFormat::Rfc8888,
        Some("rtcp-xr") => ReportFormat::RtcpXr,
        Some(other) => return Err(e("report_format", format!("'{other}' is not one of twcc, rfc8888, rtcp-xr"))),
    };
    // RTCP RR + XR carry per-sequence outcomes, the RR block and the
    // interval's OWD, no arrival times (RFC 3550 §6.4.2, RFC 3611 §4.1).
    if report_format == ReportFormat::RtcpXr && controller::needs_arrivals_of(&controller).unwrap_or(true) {
        return Err(e(
            "report_format",
            format!(
                "'rtcp-xr' carries no per-packet arrival times (RTCP RR + XR: received, lost or discarded per \
                 sequence, the RR block, the interval's one-way delay), and controller '{controller}' reads them; \
                 use 'twcc' or 'rfc8888', or a controller that runs on RR + XR (fbra, fixed)"
            ),
        ));
    }
    // FBRA §5: "the maximum allowed end-to-end packet delay ... packets
    // arriving after this cut-off are discarded by the receiver". WebRTC has
    // no such cut-off: none unless the flow sets one.
    let max_delay = match opt_dur(&f.max_delay, "max_delay")? {
        Some(d) if d < Duration::from_millis(1) || d > Duration::from_secs(60) => {
            return Err(e("max_delay", format!("{d} is outside 1ms..60s")))
        }
        d => d,
    };
    let fec = match &f.fec {
        None | Some(Toggle::On(false)) => None,
        Some(Toggle::On(true)) => Some(FecConfig::from_params(&Params::new()).map_err(|er| config_err("fec", er))?),
        Some(Toggle::Table(t)) => {
            let p = plain_params(t, None).map_err(|(k, r)| e(&format!("fec.{k}"), r))?;
            Some(FecConfig::from_params(&p).map_err(|er| config_err("fec", er))?)
        }
    };
    let queue_time_limit = match &f.queue_time_limit {
        Some(Quantity::Str(s)) if s == "off" => None,
        None => Some(Duration::from_secs(2)),
        Some(q) => Some(duration_of(q).map_err(|r| e("queue_time_limit", r))?),
    };
    let sender = SenderConfig {
        flow: i as u16,
        frame_interval: ctx.frame_interval,
        mtu: ctx.mtu,
        start: Time::ZERO + start,
        stop: stop.map(|s| Time::ZERO + s),
        min_rate: ctx.min_rate,
        max_rate: ctx.max_rate,
        skip_threshold: opt_dur(&f.skip_threshold, "skip_threshold")?,
        cap: match f.caps.as_deref() {
            None | Some("none") => RateCap::None,
            Some("webrtc") => RateCap::Webrtc,
            Some(c) => return Err(e("caps", format!("'{c}' is not one of none, webrtc"))),
        },
        pause_on_queue_limit: queue_time_limit.is_some(),
        nack,
        fec,
        audio: match &f.audio {
            None | Some(Toggle::On(false)) => None,
            Some(Toggle::On(true)) => Some(AudioConfig { rate: AUDIO_RATE.default(), ptime: AUDIO_PTIME.default() }),
            Some(Toggle::Table(t)) => {
                let p = plain_params(t, None).map_err(|(k, r)| e(&format!("audio.{k}"), r))?;
                p.check_known(AUDIO_PARAMS).map_err(|er| config_err("audio", er))?;
                let rate = p.get(&AUDIO_RATE).map_err(|er| config_err("audio", er))?;
                let ptime = p.get(&AUDIO_PTIME).map_err(|er| config_err("audio", er))?;
                Some(AudioConfig { rate, ptime })
            }
        },
        resolution,
        bulk: match f.source.as_deref() {
            None | Some("video") => false,
            Some("bulk") => true,
            Some(o) => return Err(e("source", format!("'{o}' is not one of video, bulk"))),
        },
        // The controller's default (Copa, RoCC and WebRTC's BBR leave their
        // window to the pacer); a flow's `cwnd_pushback` overrides on/off.
        cwnd_pushback: f.cwnd_pushback.unwrap_or(pushback != Pushback::Off),
        pushback_pacer: pushback == Pushback::WithPacer,
        clocks_agree: f.clocks_agree.unwrap_or(true),
        rtcp_interval: match opt_dur(&f.rtcp_interval, "rtcp_interval")? {
            None => Some(rtcc_core::sr::VIDEO_INTERVAL),
            Some(d) if d == Duration::ZERO => None,
            Some(d) if d >= Duration::from_millis(100) && d <= Duration::from_secs(60) => Some(d),
            Some(d) => return Err(e("rtcp_interval", format!("{d} is neither 0s (off) nor in 100ms..60s"))),
        },
        pacer: PacerConfig {
            queue_time_limit,
            burst: match opt_dur(&f.pacer_burst, "pacer_burst")? {
                None => Duration::ZERO,
                Some(d) if d <= Duration::from_secs(1) => d,
                Some(d) => return Err(e("pacer_burst", format!("{d} is above 1s"))),
            },
            // libwebrtc's kCongestedPacketInterval, 500 ms
            // (modules/pacing/pacing_controller.cc).
            keepalive: match &f.pacer_keepalive {
                None if exact => None,
                None => Some(KEEPALIVE),
                Some(Quantity::Str(s)) if s == "off" => None,
                Some(q) => match duration_of(q).map_err(|r| e("pacer_keepalive", r))? {
                    d if d >= Duration::from_millis(10) && d <= Duration::from_secs(10) => Some(d),
                    d => return Err(e("pacer_keepalive", format!("{d} is outside 10ms..10s"))),
                },
            },
            ..PacerConfig::default()
        },
        timing: match &f.timing {
            None if exact => SenderTiming::OFF,
            None => crate::timing::realistic(),
            Some(Toggle::On(false)) => SenderTiming::OFF,
            Some(Toggle::On(true)) => crate::timing::realistic(),
            Some(Toggle::Table(t)) => {
                let p = plain_params(t, None).map_err(|(k, r)| e(&format!("timing.{k}"), r))?;
                crate::timing::from_params(&p).map_err(|er| config_err("timing", er))?
            }
        },
        ..SenderConfig::default()
    };
    let receiver = ReceiverConfig {
        flow: i as u16,
        interval: feedback_interval,
        nack: nack.is_some(),
        keyframe_wait,
        max_delay,
        early_reports: f.early_reports.unwrap_or(false),
        report_format,
        fec_overhead: fec.map_or(FecConfig::default().overhead, |f| f.overhead),
        playout,
        ..ReceiverConfig::default()
    };
    Ok(FlowSpec {
        name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
        traffic: None,
        direction: Direction::Forward,
        controller,
        params,
        ctx,
        encoder,
        access_delay: opt_dur(&f.access_delay, "access_delay")?.unwrap_or(Duration::ZERO),
        sender,
        receiver,
        quality: {
            let mut p = match &f.quality {
                Some(t) => plain_params(t, None).map_err(|(k, r)| e(&format!("quality.{k}"), r))?,
                None => Params::new(),
            };
            if let Some(m) = motion {
                if p.0.contains_key("content") {
                    return Err(e("content", "given twice (also in quality.content)".into()));
                }
                p.0.insert("content".into(), ParamValue::Str(m.name().into()));
            }
            // A quality profile of its own, else the encoder's.
            let q_profile = match p.0.remove("profile") {
                None => enc_profile,
                Some(ParamValue::Str(name)) => Some(profile::load(&name, base).map_err(|r| e("quality.profile", r))?),
                Some(_) => return Err(e("quality.profile", "must be a profile name or file".into())),
            };
            if let Some(pr) = &q_profile {
                let content = match p.0.get("content") {
                    Some(ParamValue::Str(c)) => c.replace('_', "-"),
                    _ => "talking-head".to_string(),
                };
                if let Some(t) = profile::quality_for(pr, &content) {
                    profile::fill(&mut p, t, rtcc_core::quality::PARAMS);
                }
            }
            QualityModel::from_params(&p).map_err(|er| match er.field == "content" && motion.is_some() {
                true => ("content".to_string(), er.reason),
                false => config_err("quality", er),
            })?
        },
        constant_rate: constant_rate.map(|r| (r, sender.mtu)),
        video,
    })
}

/// Packets the flows that send at a constant rate whatever the network
/// does (a `fixed` controller: its rate and padding; UDP: its rate while
/// on, taken as always on) send over their active time: what a run sends
/// at least, known before it starts.
fn packets_floor(flows: &[FlowSpec], duration: Duration) -> u64 {
    let mut total = 0.0;
    for f in flows {
        let Some((rate, size)) = f.constant_rate else { continue };
        let start = f.sender.start - Time::ZERO;
        let stop = f.sender.stop.map_or(duration, |s| (s - Time::ZERO).min(duration));
        let active = (stop - start).as_secs_f64().max(0.0);
        total += rate.bps() as f64 * active / 8.0 / size.bytes().max(1) as f64;
    }
    total as u64
}

/// Highest rate a flow may ask for: the simulator's clock ticks in whole
/// µs, and one 1200-byte packet per µs is 9.6 Gbps, so faster cannot be
/// paced; beyond it a run only fills memory with queued packets (a fixed
/// 50 Gbps sender on a 3 Mbps link took 1.4 GB in 5 s).
pub const MAX_FLOW_RATE: DataRate = DataRate::from_mbps(10_000);

fn above_max_rate(r: DataRate) -> String {
    format!("{r} is above {MAX_FLOW_RATE}, the most one flow may send (the simulator's clock ticks in whole µs)")
}

/// A controller or encoder config error as (field, reason).
fn config_err(prefix: &str, er: controller::ConfigError) -> (String, String) {
    let er = er.within(prefix);
    (er.field, er.reason)
}

/// Opus at 32 kbps with 20 ms frames is WebRTC's usual voice setting.
const AUDIO_RATE: Param<DataRate> =
    Param::rate("rate", DataRate::from_kbps(32), DataRate::ZERO, DataRate::MAX, "audio bitrate (Opus voice)")
        .above_min();
const AUDIO_PTIME: Param<Duration> = Param::duration(
    "ptime",
    Duration::from_millis(20),
    Duration::from_millis(2),
    Duration::from_millis(120),
    "audio packet interval",
);
/// libwebrtc's kCongestedPacketInterval (modules/pacing/pacing_controller.cc):
/// a window-limited pacer's keep-alive padding interval.
const KEEPALIVE: Duration = Duration::from_millis(500);
const AUDIO_PARAMS: &[ParamInfo] = &[AUDIO_RATE.info(), AUDIO_PTIME.info()];

/// VCMTiming's settings (`rtcc_core::playout::WebrtcPlayout`).
const PLAYOUT_DECODE: Param<Duration> = Param::duration(
    "decode_time",
    Duration::from_millis(5),
    Duration::ZERO,
    Duration::from_secs(1),
    "decode time the timing reserves (VCMCodecTimer's; 5 ms, a software 720p decode, is a choice)",
);
const PLAYOUT_RENDER: Param<Duration> = Param::duration(
    "render_delay",
    Duration::from_millis(10),
    Duration::ZERO,
    Duration::from_secs(1),
    "render delay (kDefaultRenderDelay)",
);
const PLAYOUT_MIN: Param<Duration> =
    Param::duration("min_delay", Duration::ZERO, Duration::ZERO, Duration::from_secs(10), "minimum playout delay");
const PLAYOUT_MAX: Param<Duration> = Param::duration(
    "max_delay",
    Duration::from_secs(10),
    Duration::ZERO,
    Duration::from_secs(60),
    "maximum playout delay",
);
/// libwebrtc's kMaxVideoDelay, 10 s (modules/video_coding/frame_helpers.cc:
/// FrameHasBadRenderTiming, TargetVideoDelayIsTooLarge).
const MAX_VIDEO_DELAY: Duration = Duration::from_secs(10);
const PLAYOUT_MAX_VIDEO: Param<Option<Duration>> = Param::optional_duration(
    "max_video_delay",
    Some(MAX_VIDEO_DELAY),
    Duration::from_secs(1),
    Duration::from_secs(60),
    "off",
    "reset the timing when a frame's render time is further than this from now or the target delay above it \
     (libwebrtc's kMaxVideoDelay, 10s; off under model_timing = \"exact\")",
);
const PLAYOUT_PARAMS: &[ParamInfo] =
    &[PLAYOUT_DECODE.info(), PLAYOUT_RENDER.info(), PLAYOUT_MIN.info(), PLAYOUT_MAX.info(), PLAYOUT_MAX_VIDEO.info()];

/// `playout = "webrtc"` (default), `"immediate"`, or
/// `{ kind = "webrtc", decode_time = "5ms", ... }`; `exact` (`model_timing =
/// "exact"`): `max_video_delay` off unless the table sets it.
fn parse_playout(spec: Option<&Spec>, exact: bool) -> Result<Playout, (String, String)> {
    let kind_err = |k: &str| ("playout".to_string(), format!("'{k}' is not one of webrtc, immediate"));
    let webrtc = || {
        let max_video_delay = (!exact).then_some(MAX_VIDEO_DELAY);
        Playout::Webrtc(WebrtcPlayout { max_video_delay, ..WebrtcPlayout::default() })
    };
    match spec {
        None => Ok(webrtc()),
        Some(Spec::Name(n)) => match n.as_str() {
            "webrtc" => Ok(webrtc()),
            "immediate" => Ok(Playout::Immediate),
            other => Err(kind_err(other)),
        },
        Some(Spec::Table(t)) => {
            let (kind, p) = table_params(t, "kind").map_err(|(k, r)| (format!("playout.{k}"), r))?;
            match kind.as_str() {
                "immediate" => {
                    p.check_known(&[]).map_err(|er| config_err("playout", er))?;
                    Ok(Playout::Immediate)
                }
                "webrtc" => {
                    p.check_known(PLAYOUT_PARAMS).map_err(|er| config_err("playout", er))?;
                    let get = |d: &Param<Duration>| p.get(d).map_err(|er| config_err("playout", er));
                    let w = WebrtcPlayout {
                        decode_time: get(&PLAYOUT_DECODE)?,
                        render_delay: get(&PLAYOUT_RENDER)?,
                        min_delay: get(&PLAYOUT_MIN)?,
                        max_delay: get(&PLAYOUT_MAX)?,
                        max_video_delay: match p.0.contains_key(PLAYOUT_MAX_VIDEO.info().name) || !exact {
                            true => p.get(&PLAYOUT_MAX_VIDEO).map_err(|er| config_err("playout", er))?,
                            false => None,
                        },
                    };
                    if w.min_delay > w.max_delay {
                        return Err((
                            "playout.min_delay".into(),
                            format!("{} is above max_delay {}", w.min_delay, w.max_delay),
                        ));
                    }
                    Ok(Playout::Webrtc(w))
                }
                other => Err(("playout.kind".into(), format!("'{other}' is not one of webrtc, immediate"))),
            }
        }
    }
}

/// `{ name = "gcc", loss = "classic" }` → ("gcc", params).
fn table_params(t: &toml::Table, key: &str) -> Result<(String, Params), (String, String)> {
    let name = match t.get(key) {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => return Err((key.into(), "must be a string".into())),
        None => return Err((key.into(), format!("missing '{key}'"))),
    };
    Ok((name, plain_params(t, Some(key))?))
}

/// A table of parameters, leaving out `skip` (the name key, if any).
fn plain_params(t: &toml::Table, skip: Option<&str>) -> Result<Params, (String, String)> {
    let mut p = Params::new();
    for (k, v) in t {
        if Some(k.as_str()) == skip {
            continue;
        }
        let pv = param_value(v).ok_or_else(|| (k.clone(), "must be a string, number or boolean".to_string()))?;
        p.0.insert(k.clone(), pv);
    }
    Ok(p)
}

/// A quantity field by the core's one rule (`rtcc_core::units::Quantity`):
/// text carries its unit, a bare number is in the base unit — seconds,
/// bits per second or bytes.
fn quantity<Q: rtcc_core::units::Quantity>(q: &Quantity) -> Result<Q, String> {
    match q {
        Quantity::Num(v) => Q::from_number(*v),
        Quantity::Str(s) => Q::from_text(s),
    }
    .map_err(|e| e.to_string())
}

pub fn duration_of(q: &Quantity) -> Result<Duration, String> {
    quantity(q)
}

pub fn rate_of(q: &Quantity) -> Result<DataRate, String> {
    quantity(q)
}

pub fn size_of(q: &Quantity) -> Result<DataSize, String> {
    quantity(q)
}
