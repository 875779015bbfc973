//! The `[link]` table of a scenario ([`LinkConfig`]): capacity, delays, queue, loss and jitter, built into a [`Link`].

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rtcc_core::rng::Rng;
use rtcc_core::units::{DataRate, DataSize, Duration, Quantity, Time};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::Link;
use crate::loss::LossModel;
use crate::path::PathSpec;
use crate::queue::{CodelParams, FqCodelConfig, Item, QueueDiscipline, QueueLimit, MIN_QUEUE_BYTES};
use crate::trace::{self, Capacity, Trace, TraceFormat, TraceOptions};

/// A refused config value: `field` is a dotted path such as
/// `link.capacity.high`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FieldError { field: field.into(), reason: reason.into() }
    }
}

/// A quantity as written: a string with a unit (`"3Mbps"`, `"25ms"`) or a
/// bare number. Parsed when the config is built, so errors name the field.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UnitValue {
    Text(String),
    Number(f64),
}

impl UnitValue {
    fn text(s: &str) -> Self {
        UnitValue::Text(s.to_string())
    }

    /// A duration, rate or size by the one rule of `Quantity`: text with a
    /// unit, or a bare number in seconds, bits per second or bytes.
    pub fn quantity<Q: Quantity>(&self, field: &str) -> Result<Q, FieldError> {
        match self {
            UnitValue::Text(s) => Q::from_text(s),
            UnitValue::Number(v) => Q::from_number(*v),
        }
        .map_err(|e| FieldError::new(field, e.to_string()))
    }

    pub fn rate(&self, field: &str) -> Result<DataRate, FieldError> {
        self.quantity(field)
    }

    pub fn duration(&self, field: &str) -> Result<Duration, FieldError> {
        self.quantity(field)
    }
}

impl fmt::Display for UnitValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitValue::Text(s) => write!(f, "{s}"),
            UnitValue::Number(v) => write!(f, "{v}"),
        }
    }
}

/// Accepts strings and numbers; anything else is refused with a message
/// that says what was expected.
struct UnitVisitor;
impl Visitor<'_> for UnitVisitor {
    type Value = UnitValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or a string with a unit such as \"3Mbps\" or \"25ms\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<UnitValue, E> {
        Ok(UnitValue::text(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<UnitValue, E> {
        Ok(UnitValue::Number(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<UnitValue, E> {
        Ok(UnitValue::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<UnitValue, E> {
        Ok(UnitValue::Number(v as f64))
    }
}

impl<'de> Deserialize<'de> for UnitValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor)
    }
}

/// `capacity = "3Mbps"` or `capacity = { kind = ..., ... }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CapacitySpec {
    Rate(UnitValue),
    Table(CapacityTable),
}

/// Deserialized through [`RawCapacity`], so a wrong field names its path
/// (`link.capacity.file`); an internally tagged enum would buffer the table
/// and lose it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CapacityTable {
    Constant {
        rate: UnitValue,
    },
    /// Alternating high/low every `every`, starting high.
    Pulse {
        high: UnitValue,
        low: UnitValue,
        every: UnitValue,
    },
    /// High for `duty × period`, then low.
    Square {
        high: UnitValue,
        low: UnitValue,
        period: UnitValue,
        duty: f64,
    },
    /// `[[time, rate], ...]`; optional linear interpolation and looping.
    Step {
        steps: Vec<(UnitValue, UnitValue)>,
        #[serde(default)]
        linear: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period: Option<UnitValue>,
    },
    Ramp {
        from: UnitValue,
        to: UnitValue,
        #[serde(default = "zero")]
        start: UnitValue,
        duration: UnitValue,
    },
    /// A trace file (`trace::TraceFormat`: `format`, else detected from
    /// its content); `file` is relative to the scenario, or to the folder
    /// of trace set `set` (`trace::traces_root`). `scale` multiplies the
    /// bytes per opportunity (Mahimahi) or the rates, `offset` is where in
    /// the trace the run starts; a rate trace's numbers are in `unit` (its
    /// format's own by default) and its rates above `drop_above` are left
    /// out, time and all.
    Trace {
        file: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        drop_above: Option<UnitValue>,
        #[serde(default = "one")]
        scale: f64,
        #[serde(default = "zero")]
        offset: UnitValue,
    },
}

fn zero() -> UnitValue {
    UnitValue::text("0s")
}
fn one() -> f64 {
    1.0
}

/// `Deserialize` for the "a value with a unit, or a table with `kind`"
/// fields (capacity, queue).
macro_rules! unit_or_table {
    ($spec:ident, $unit:ident, $table:ident, $expecting:expr) => {
        impl<'de> Deserialize<'de> for $spec {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $spec;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$spec, E> {
                        UnitVisitor.visit_str(v).map($spec::$unit)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$spec, E> {
                        UnitVisitor.visit_f64(v).map($spec::$unit)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$spec, E> {
                        UnitVisitor.visit_i64(v).map($spec::$unit)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$spec, E> {
                        UnitVisitor.visit_u64(v).map($spec::$unit)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$spec, A::Error> {
                        $table::deserialize(de::value::MapAccessDeserializer::new(map)).map($spec::Table)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_or_table!(
    CapacitySpec,
    Rate,
    CapacityTable,
    "a rate such as \"3Mbps\" or a table with `kind` (constant, pulse, square, step, ramp, trace)"
);

/// The `[link]` table. Defaults: delay 25 ms, reverse_delay = delay,
/// queue unlimited, no loss either way, no jitter, and a reverse path
/// without a bottleneck (reports are never queued behind each other).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub capacity: CapacitySpec,
    /// One-way forward propagation delay.
    #[serde(default = "default_delay")]
    pub delay: UnitValue,
    /// One-way reverse (feedback) delay; defaults to `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_delay: Option<UnitValue>,
    /// Drop-tail limit ("unlimited", "100ms", "64kB", "100pkt") or a
    /// table choosing the discipline ([`QueueTable`]).
    #[serde(default = "default_queue")]
    pub queue: QueueSpec,
    #[serde(default)]
    pub loss: LossSpec,
    #[serde(default)]
    pub reverse_loss: LossSpec,
    /// Capacity of the reverse (feedback) bottleneck, any capacity form;
    /// absent: none, reports take no serialisation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_capacity: Option<CapacitySpec>,
    /// The reverse bottleneck's queue, as `queue`; needs `reverse_capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<QueueSpec>,
    /// σ of the extra one-way delay |N(0, σ²)| (half-normal); the
    /// simulator never lets it reorder packets.
    #[serde(default = "zero")]
    pub jitter: UnitValue,
}

fn default_delay() -> UnitValue {
    UnitValue::text("25ms")
}
fn default_queue() -> QueueSpec {
    QueueSpec::Limit(unlimited())
}
fn unlimited() -> UnitValue {
    UnitValue::text("unlimited")
}

/// `queue = "100ms"` (drop-tail with that limit) or
/// `queue = { kind = ..., ... }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueueSpec {
    Limit(UnitValue),
    Table(QueueTable),
}

/// The queue discipline table. Omitted fields take the defaults of
/// [`crate::queue`] (RFC 8289 / RFC 8290 / Linux).
/// Deserialized through [`RawQueue`] (see [`CapacityTable`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueTable {
    /// `limit` as in the string form; default unlimited.
    #[serde(rename = "droptail", alias = "drop_tail")]
    DropTail {
        #[serde(default = "unlimited")]
        limit: UnitValue,
    },
    /// CoDel: `target` (5ms), `interval` (100ms), `mtu` (1514B),
    /// `limit` (1000pkt; any limit form).
    Codel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mtu: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<UnitValue>,
    },
    /// FQ-CoDel: CoDel's `target`, `interval`, `mtu`, plus `quantum`
    /// (1514B), `limit` (10240pkt; packets only), `memory_limit` (32MiB),
    /// `drop_batch` (64).
    FqCodel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mtu: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quantum: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_limit: Option<UnitValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        drop_batch: Option<UnitValue>,
    },
}

unit_or_table!(
    QueueSpec,
    Limit,
    QueueTable,
    "a queue limit such as \"100ms\", \"64kB\", \"100pkt\" or \"unlimited\", \
     or a table with `kind` (droptail, codel, fq_codel)"
);

impl QueueSpec {
    /// Validates into a discipline; `field` names this entry in errors
    /// (e.g. `"link.queue"`).
    pub fn build(&self, field: &str) -> Result<QueueDiscipline, FieldError> {
        let f = |k: &str| format!("{field}.{k}");
        let table = match self {
            QueueSpec::Limit(v) => return Ok(QueueDiscipline::DropTail(queue_limit(v, field)?)),
            QueueSpec::Table(t) => t,
        };
        Ok(match table {
            QueueTable::DropTail { limit } => QueueDiscipline::DropTail(queue_limit(limit, &f("limit"))?),
            QueueTable::Codel { target, interval, mtu, limit } => {
                let params = codel_params(target, interval, mtu, field)?;
                let limit = match limit {
                    Some(l) => queue_limit(l, &f("limit"))?,
                    None => QueueDiscipline::codel().limit(),
                };
                QueueDiscipline::Codel { params, limit }
            }
            QueueTable::FqCodel { target, interval, mtu, quantum, limit, memory_limit, drop_batch } => {
                let d = FqCodelConfig::default();
                let limit = match limit {
                    None => d.limit,
                    Some(l) => match queue_limit(l, &f("limit"))? {
                        QueueLimit::Packets(n) if n > 0 => n,
                        _ => {
                            return Err(FieldError::new(
                                f("limit"),
                                format!("'{l}': fq_codel's limit is a positive packet count, e.g. \"10240pkt\""),
                            ))
                        }
                    },
                };
                let drop_batch = match drop_batch {
                    None => d.drop_batch,
                    Some(v) => count(v, &f("drop_batch"))?,
                };
                FqCodelConfig {
                    codel: codel_params(target, interval, mtu, field)?,
                    quantum: positive_size(quantum.as_ref(), d.quantum, &f("quantum"))?,
                    limit,
                    memory_limit: positive_size(memory_limit.as_ref(), d.memory_limit, &f("memory_limit"))?,
                    drop_batch,
                }
                .into()
            }
        })
    }
}

fn queue_limit(v: &UnitValue, field: &str) -> Result<QueueLimit, FieldError> {
    match v {
        UnitValue::Text(s) => QueueLimit::parse(s),
        UnitValue::Number(n) => QueueLimit::parse(&n.to_string()),
    }
    .map_err(|r| FieldError::new(field, r))
}

fn codel_params(
    target: &Option<UnitValue>,
    interval: &Option<UnitValue>,
    mtu: &Option<UnitValue>,
    field: &str,
) -> Result<CodelParams, FieldError> {
    let f = |k: &str| format!("{field}.{k}");
    let d = CodelParams::default();
    let time = |v: &Option<UnitValue>, k: &str, default: Duration| match v {
        Some(v) => positive(&f(k), v.duration(&f(k))?),
        None => Ok(default),
    };
    Ok(CodelParams {
        target: time(target, "target", d.target)?,
        interval: time(interval, "interval", d.interval)?,
        mtu: match mtu {
            Some(v) => size(v, &f("mtu"))?,
            None => d.mtu,
        },
    })
}

/// A whole number of packets, at least 1.
fn count(v: &UnitValue, field: &str) -> Result<usize, FieldError> {
    let n = match v {
        UnitValue::Number(n) if n.fract() == 0.0 && *n >= 1.0 => Some(*n as usize),
        UnitValue::Text(s) => s.trim().parse::<usize>().ok().filter(|&n| n >= 1),
        _ => None,
    };
    n.ok_or_else(|| FieldError::new(field, format!("'{v}' must be a whole number of packets, at least 1")))
}

/// A size: "1514B", "64kB"; a bare number is bytes.
fn size(v: &UnitValue, field: &str) -> Result<DataSize, FieldError> {
    v.quantity(field)
}

fn positive_size(v: Option<&UnitValue>, default: DataSize, field: &str) -> Result<DataSize, FieldError> {
    match v {
        None => Ok(default),
        Some(v) => match size(v, field)? {
            DataSize::ZERO => Err(FieldError::new(field, "must be positive")),
            s => Ok(s),
        },
    }
}

/// `loss = 0.01` or `loss = { kind = ..., ... }` in a link table.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LossSpec {
    Probability(f64),
    Table(LossTable),
}

impl Default for LossSpec {
    fn default() -> Self {
        LossSpec::Probability(0.0)
    }
}

/// Deserialized through [`RawLoss`] (see [`CapacityTable`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LossTable {
    None,
    /// `start`: no loss before this time (a run that lets controllers
    /// find the capacity first, as Cross §VI-B starts its loss at 10 s).
    Bernoulli {
        p: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<UnitValue>,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<UnitValue>,
    },
}

impl<'de> Deserialize<'de> for LossSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LossSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a loss probability or a table with `kind` (bernoulli, gilbert_elliott, none)")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LossSpec, E> {
                Ok(LossSpec::Probability(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LossSpec, E> {
                Ok(LossSpec::Probability(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LossSpec, E> {
                Ok(LossSpec::Probability(v as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LossSpec, A::Error> {
                LossTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(LossSpec::Table)
            }
        }
        d.deserialize_any(V)
    }
}

fn probability(field: &str, name: &str, v: f64) -> Result<f64, FieldError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(FieldError::new(field, format!("{name} = {v} is not a probability in [0, 1]")))
    }
}

fn loss_start(v: &Option<UnitValue>, field: &str) -> Result<Time, FieldError> {
    match v {
        None => Ok(Time::ZERO),
        Some(v) => Ok(Time::ZERO + v.duration(field)?),
    }
}

impl LossSpec {
    /// Validates into a model; `field` names this entry in errors
    /// (e.g. `"link.loss"`).
    pub fn build(&self, field: &str) -> Result<LossModel, FieldError> {
        let sub = |k: &str| format!("{field}.{k}");
        Ok(match self {
            LossSpec::Probability(p) => LossModel::bernoulli(probability(field, "loss", *p)?),
            LossSpec::Table(LossTable::None) => LossModel::None,
            LossSpec::Table(LossTable::Bernoulli { p, start }) => {
                LossModel::bernoulli(probability(&sub("p"), "p", *p)?).starting(loss_start(start, &sub("start"))?)
            }
            LossSpec::Table(LossTable::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, start }) => {
                LossModel::gilbert_elliott(
                    probability(&sub("p_gb"), "p_gb", *p_gb)?,
                    probability(&sub("p_bg"), "p_bg", *p_bg)?,
                    probability(&sub("loss_good"), "loss_good", *loss_good)?,
                    probability(&sub("loss_bad"), "loss_bad", *loss_bad)?,
                )
                .starting(loss_start(start, &sub("start"))?)
            }
        })
    }
}

impl LinkConfig {
    /// A constant-rate link with every other field at its default.
    pub fn constant(rate: &str) -> Self {
        LinkConfig {
            capacity: CapacitySpec::Rate(UnitValue::text(rate)),
            delay: default_delay(),
            reverse_delay: None,
            queue: default_queue(),
            loss: LossSpec::default(),
            reverse_loss: LossSpec::default(),
            reverse_capacity: None,
            reverse_queue: None,
            jitter: zero(),
        }
    }

    /// Validates the whole table and builds the bottleneck (its paths come
    /// from [`path_spec`](Self::path_spec)). Relative trace paths resolve
    /// against `base_dir`. The link draws from `Rng::new(0)` until
    /// [`Link::set_rng`] gives it the run's stream.
    pub fn build(&self, base_dir: &Path) -> Result<Link, FieldError> {
        self.build_named(base_dir, "link")
    }

    /// As [`build`](Self::build), naming fields under `prefix`.
    pub fn build_named<T: Item>(&self, base_dir: &Path, prefix: &str) -> Result<Link<T>, FieldError> {
        let f = |k: &str| format!("{prefix}.{k}");
        let capacity = build_capacity(&self.capacity, base_dir, &f("capacity"))?;
        self.path_spec(prefix)?;
        let queue = self.queue.build(&f("queue"))?;
        holds_a_packet(&queue, &capacity, &self.queue, &f("queue"))?;
        let loss: LossModel = self.loss.build(&f("loss"))?;
        if self.reverse_queue.is_some() && self.reverse_capacity.is_none() {
            return Err(FieldError::new(f("reverse_queue"), "needs reverse_capacity (without it nothing queues)"));
        }
        Ok(Link::new(capacity, queue, loss, Rng::new(0)))
    }

    /// The paths beyond the bottleneck: delays, jitter, reverse loss.
    pub fn path_spec(&self, prefix: &str) -> Result<PathSpec, FieldError> {
        let f = |k: &str| format!("{prefix}.{k}");
        let delay = self.delay.duration(&f("delay"))?;
        let reverse_delay = match &self.reverse_delay {
            Some(d) => d.duration(&f("reverse_delay"))?,
            None => delay,
        };
        Ok(PathSpec {
            delay,
            reverse_delay,
            jitter: self.jitter.duration(&f("jitter"))?.max(Duration::ZERO),
            reverse_loss: self.reverse_loss.build(&f("reverse_loss"))?,
        })
    }

    /// The reverse bottleneck, if `reverse_capacity` is set: its capacity
    /// and queue only (the reverse path's delay and loss are `reverse_delay`
    /// and `reverse_loss`, applied around it).
    pub fn build_reverse<T: Item>(&self, base_dir: &Path, prefix: &str) -> Result<Option<Link<T>>, FieldError> {
        let Some(cap) = &self.reverse_capacity else { return Ok(None) };
        let f = |k: &str| format!("{prefix}.{k}");
        let capacity = build_capacity(cap, base_dir, &f("reverse_capacity"))?;
        let spec = self.reverse_queue.clone().unwrap_or_else(default_queue);
        let queue = spec.build(&f("reverse_queue"))?;
        holds_a_packet(&queue, &capacity, &spec, &f("reverse_queue"))?;
        Ok(Some(Link::new(capacity, queue, LossModel::None, Rng::new(0))))
    }
}

/// A time limit must hold one MTU-sized packet ([`MIN_QUEUE_BYTES`]) at the
/// link's peak capacity, or every full-sized packet is dropped (byte
/// limits are checked when parsed).
fn holds_a_packet(q: &QueueDiscipline, cap: &Capacity, spec: &QueueSpec, field: &str) -> Result<(), FieldError> {
    let QueueLimit::Time(t) = q.limit() else { return Ok(()) };
    let peak = cap.peak_rate();
    let holds = peak.bps() as f64 * t.as_secs_f64() / 8.0;
    if holds >= MIN_QUEUE_BYTES.bytes() as f64 {
        return Ok(());
    }
    let field = match spec {
        QueueSpec::Table(_) => format!("{field}.limit"),
        QueueSpec::Limit(_) => field.to_string(),
    };
    let need = Duration::from_secs_f64(MIN_QUEUE_BYTES.bytes() as f64 * 8.0 / peak.bps().max(1) as f64);
    Err(FieldError::new(
        field,
        format!(
            "queue limit {t} holds {holds:.0} B at the link's peak capacity {peak}, less than one {}-byte packet \
             (one MTU), so every packet would be dropped; use at least {need}",
            MIN_QUEUE_BYTES.bytes()
        ),
    ))
}

/// The scenario's opt-in to values beyond [`MIN_CAPACITY`] and [`MAX_DELAY`]
/// (a top-level `allow_extreme = true`).
pub const ALLOW_EXTREME: &str = "allow_extreme";

/// Below this (and above zero, an outage) a capacity is likelier a dropped
/// unit (`3` read as 3 bit/s, meant as 3 Mbps) than a link: a 1200-byte
/// packet would take about a second to cross it.
pub const MIN_CAPACITY: DataRate = DataRate::from_kbps(10);

/// Above this a one-way delay is likelier a dropped unit (`25` read as 25 s,
/// meant as 25 ms) than a path: a geostationary satellite hop is ~0.3 s.
pub const MAX_DELAY: Duration = Duration::from_secs(10);

/// Why a capacity under [`MIN_CAPACITY`] or a delay over [`MAX_DELAY`] is
/// refused, naming the value as written (and the base unit of a bare number).
pub fn extreme_error(field: &str, written: &UnitValue, rate: bool) -> FieldError {
    let (limit, unit, base) = match rate {
        true => (format!("is under {MIN_CAPACITY}"), "bps", "bits/s"),
        false => (format!("is over {} s", MAX_DELAY.as_secs_f64()), "s", "seconds"),
    };
    let reason = match written {
        UnitValue::Number(v) => {
            format!("{v} {unit} (a bare number is {base}) {limit}; write a unit, or set {ALLOW_EXTREME} = true")
        }
        UnitValue::Text(t) => format!("\"{t}\" {limit}; set {ALLOW_EXTREME} = true if the scenario means it"),
    };
    FieldError::new(field, reason)
}

/// A rate given for a capacity, refused if in (0, [`MIN_CAPACITY`]).
fn plausible_rate(v: &UnitValue, field: &str) -> Result<(), FieldError> {
    let r = v.rate(field)?;
    match r > DataRate::ZERO && r < MIN_CAPACITY {
        true => Err(extreme_error(field, v, true)),
        false => Ok(()),
    }
}

/// A one-way delay, refused if over [`MAX_DELAY`].
fn plausible_delay(v: &UnitValue, field: &str) -> Result<(), FieldError> {
    match v.duration(field)? > MAX_DELAY {
        true => Err(extreme_error(field, v, false)),
        false => Ok(()),
    }
}

/// Every rate a capacity form is given (a trace's come from its file).
fn plausible_capacity(spec: &CapacitySpec, field: &str) -> Result<(), FieldError> {
    let f = |k: &str| format!("{field}.{k}");
    match spec {
        CapacitySpec::Rate(v) => plausible_rate(v, field),
        CapacitySpec::Table(CapacityTable::Constant { rate }) => plausible_rate(rate, &f("rate")),
        CapacitySpec::Table(CapacityTable::Pulse { high, low, .. } | CapacityTable::Square { high, low, .. }) => {
            plausible_rate(high, &f("high")).and(plausible_rate(low, &f("low")))
        }
        CapacitySpec::Table(CapacityTable::Ramp { from, to, .. }) => {
            plausible_rate(from, &f("from")).and(plausible_rate(to, &f("to")))
        }
        CapacitySpec::Table(CapacityTable::Step { steps, .. }) => {
            steps.iter().enumerate().try_for_each(|(i, (_, r))| plausible_rate(r, &format!("{field}.steps[{i}]")))
        }
        CapacitySpec::Table(CapacityTable::Trace { .. }) => Ok(()),
    }
}

impl LinkConfig {
    /// Refuses a capacity (either bottleneck, any form but a trace) under
    /// [`MIN_CAPACITY`] and a delay (`delay`, `reverse_delay`, `jitter`)
    /// over [`MAX_DELAY`]; the scenario skips this with `allow_extreme = true`.
    /// Call after [`build`](Self::build), which refuses unreadable values.
    pub fn check_extremes(&self, prefix: &str) -> Result<(), FieldError> {
        let f = |k: &str| format!("{prefix}.{k}");
        plausible_capacity(&self.capacity, &f("capacity"))?;
        if let Some(c) = &self.reverse_capacity {
            plausible_capacity(c, &f("reverse_capacity"))?;
        }
        plausible_delay(&self.delay, &f("delay"))?;
        if let Some(d) = &self.reverse_delay {
            plausible_delay(d, &f("reverse_delay"))?;
        }
        plausible_delay(&self.jitter, &f("jitter"))
    }
}

fn positive(field: &str, d: Duration) -> Result<Duration, FieldError> {
    if d.is_positive() {
        Ok(d)
    } else {
        Err(FieldError::new(field, "must be positive"))
    }
}

fn not_all_zero(field: &str, rates: &[DataRate]) -> Result<(), FieldError> {
    if rates.iter().all(|r| *r == DataRate::ZERO) {
        Err(FieldError::new(field, "the capacity is zero at all times"))
    } else {
        Ok(())
    }
}

/// Largest trace `scale`: 1500 kB per opportunity.
const MAX_TRACE_SCALE: f64 = 1000.0;

fn build_capacity(spec: &CapacitySpec, base_dir: &Path, field: &str) -> Result<Capacity, FieldError> {
    let f = |k: &str| format!("{field}.{k}");
    let table = match spec {
        CapacitySpec::Rate(v) => {
            let r = v.rate(field)?;
            not_all_zero(field, &[r])?;
            return Ok(Capacity::constant(r));
        }
        CapacitySpec::Table(t) => t,
    };
    Ok(match table {
        CapacityTable::Constant { rate } => {
            let r = rate.rate(&f("rate"))?;
            not_all_zero(&f("rate"), &[r])?;
            Capacity::constant(r)
        }
        CapacityTable::Pulse { high, low, every } => {
            let (h, l) = (high.rate(&f("high"))?, low.rate(&f("low"))?);
            let every = positive(&f("every"), every.duration(&f("every"))?)?;
            not_all_zero(field, &[h, l])?;
            Capacity::pulse(h, l, every)
        }
        CapacityTable::Square { high, low, period, duty } => {
            let (h, l) = (high.rate(&f("high"))?, low.rate(&f("low"))?);
            let period = positive(&f("period"), period.duration(&f("period"))?)?;
            let on = period.as_micros() as f64 * duty;
            if !(*duty > 0.0 && *duty < 1.0) || on < 1.0 || period.as_micros() as f64 - on < 1.0 {
                return Err(FieldError::new(f("duty"), format!("duty {duty} must be strictly between 0 and 1")));
            }
            not_all_zero(field, &[h, l])?;
            Capacity::square(h, l, period, *duty)
        }
        CapacityTable::Step { steps, linear, period } => {
            let mut points = Vec::with_capacity(steps.len());
            for (i, (t, r)) in steps.iter().enumerate() {
                let at = format!("{field}.steps[{i}]");
                let t = Time::ZERO + t.duration(&at)?;
                if let Some(&(prev, _)) = points.last() {
                    if t <= prev {
                        return Err(FieldError::new(
                            at,
                            format!("step at {t} is not after the previous one ({prev}); steps must be sorted by time"),
                        ));
                    }
                }
                points.push((t, r.rate(&at)?));
            }
            if points.is_empty() {
                return Err(FieldError::new(f("steps"), "at least one [time, rate] step is needed"));
            }
            not_all_zero(&f("steps"), &points.iter().map(|p| p.1).collect::<Vec<_>>())?;
            let period = match period {
                Some(p) => Some(positive(&f("period"), p.duration(&f("period"))?)?),
                None => None,
            };
            Capacity::piecewise(points, *linear, period).map_err(|r| FieldError::new(f("period"), r))?
        }
        CapacityTable::Ramp { from, to, start, duration } => {
            let (a, b) = (from.rate(&f("from"))?, to.rate(&f("to"))?);
            let start = Time::ZERO + start.duration(&f("start"))?;
            let duration = duration.duration(&f("duration"))?;
            not_all_zero(field, &[a, b])?;
            Capacity::ramp(a, b, start, duration)
        }
        CapacityTable::Trace { file, set, format, unit, drop_above, scale, offset } => {
            let path = match set {
                Some(set) => trace::set_file(set, file).map_err(|(k, reason)| FieldError::new(f(k), reason))?,
                None => base_dir.join(file),
            };
            let format = match format {
                Some(name) => Some(TraceFormat::from_name(name).ok_or_else(|| {
                    FieldError::new(
                        f("format"),
                        format!("'{}' is not a trace format ({})", trace::excerpt(name), TraceFormat::known()),
                    )
                })?),
                None => None,
            };
            let unit_bps = match unit {
                Some(u) => Some(trace::unit_bps(u).ok_or_else(|| {
                    let units: Vec<&str> = trace::RATE_UNITS.iter().map(|u| u.0).collect();
                    FieldError::new(
                        f("unit"),
                        format!("'{}' is not a rate unit ({})", trace::excerpt(u), units.join(", ")),
                    )
                })?),
                None => None,
            };
            let loaded = trace::load_trace(&path, &TraceOptions { format, unit_bps })
                .map_err(|e| FieldError::new(f("file"), e.to_string()))?;
            // Each opportunity carries round(1500 B × scale) bytes: at
            // least 1 byte (scale ≥ 1/3000), at most 1500 kB (scale 1000,
            // 12 Gbps per line per ms), so byte counts cannot overflow.
            if !(scale.is_finite() && *scale * 1500.0 >= 0.5 && *scale <= MAX_TRACE_SCALE) {
                return Err(FieldError::new(
                    f("scale"),
                    format!(
                        "scale {scale} is outside 1/3000 (0.00033…) to {MAX_TRACE_SCALE}: each opportunity \
                         carries 1500 B × scale, which must round to at least 1 byte and at most 1500 kB"
                    ),
                ));
            }
            let offset = offset.duration(&f("offset"))?;
            match loaded {
                Trace::Mahimahi(t) => {
                    for (k, given) in [("unit", unit.is_some()), ("drop_above", drop_above.is_some())] {
                        if given {
                            return Err(FieldError::new(
                                f(k),
                                "a Mahimahi trace has no rates (each line is one 1500-byte opportunity); \
                                 scale multiplies its capacity",
                            ));
                        }
                    }
                    Capacity::trace(Arc::new(t), offset, *scale)
                }
                Trace::Rates(r) => {
                    let r = match drop_above {
                        Some(v) => {
                            r.without_above(v.rate(&f("drop_above"))?)
                                .map_err(|e| FieldError::new(f("drop_above"), e))?
                                .0
                        }
                        None => match r.first_above(trace::IMPLAUSIBLE_RATE) {
                            Some((place, rate)) => {
                                return Err(FieldError::new(
                                    f("drop_above"),
                                    format!(
                                        "{}: {place} is {rate}, above {}, likely a recording artefact; set \
                                         drop_above = \"1Gbps\" to leave such rates out (their time too), or \
                                         a drop_above above them to keep them",
                                        path.display(),
                                        trace::IMPLAUSIBLE_RATE
                                    ),
                                ))
                            }
                            None => r,
                        },
                    };
                    if r.peak_rate() == DataRate::ZERO || r.peak_rate().mul_f64(*scale) == DataRate::ZERO {
                        return Err(FieldError::new(f("file"), "the capacity is zero at all times"));
                    }
                    r.capacity(offset, *scale).map_err(|e| FieldError::new(f("file"), e))?
                }
            }
        }
    })
}

/// The fields present in a raw table that its `kind` does not take, and the
/// ones it needs but lacks, as one reason (the table's path is the field).
fn kind_fields(kind: &str, present: &[(&str, bool)], allowed: &[&str]) -> Result<(), String> {
    match present.iter().find(|(name, here)| *here && !allowed.contains(name)) {
        Some((name, _)) => {
            let takes = if allowed.is_empty() { "no other fields".to_string() } else { allowed.join(", ") };
            Err(format!("`{name}` is not a field of kind = \"{kind}\" (it takes {takes})"))
        }
        None => Ok(()),
    }
}

fn needs<T>(value: Option<T>, kind: &str, name: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("missing field `{name}` (kind = \"{kind}\" needs it)"))
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CapacityKind {
    Constant,
    Pulse,
    Square,
    Step,
    Ramp,
    Trace,
}

/// Every field any capacity kind takes, deserialized as one flat struct.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCapacity {
    kind: CapacityKind,
    rate: Option<UnitValue>,
    high: Option<UnitValue>,
    low: Option<UnitValue>,
    every: Option<UnitValue>,
    period: Option<UnitValue>,
    duty: Option<f64>,
    steps: Option<Vec<(UnitValue, UnitValue)>>,
    linear: Option<bool>,
    from: Option<UnitValue>,
    to: Option<UnitValue>,
    start: Option<UnitValue>,
    duration: Option<UnitValue>,
    file: Option<String>,
    set: Option<String>,
    format: Option<String>,
    unit: Option<String>,
    drop_above: Option<UnitValue>,
    scale: Option<f64>,
    offset: Option<UnitValue>,
}

impl RawCapacity {
    fn table(self) -> Result<CapacityTable, String> {
        let present = [
            ("rate", self.rate.is_some()),
            ("high", self.high.is_some()),
            ("low", self.low.is_some()),
            ("every", self.every.is_some()),
            ("period", self.period.is_some()),
            ("duty", self.duty.is_some()),
            ("steps", self.steps.is_some()),
            ("linear", self.linear.is_some()),
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("start", self.start.is_some()),
            ("duration", self.duration.is_some()),
            ("file", self.file.is_some()),
            ("set", self.set.is_some()),
            ("format", self.format.is_some()),
            ("unit", self.unit.is_some()),
            ("drop_above", self.drop_above.is_some()),
            ("scale", self.scale.is_some()),
            ("offset", self.offset.is_some()),
        ];
        let (name, allowed): (&str, &[&str]) = match self.kind {
            CapacityKind::Constant => ("constant", &["rate"]),
            CapacityKind::Pulse => ("pulse", &["high", "low", "every"]),
            CapacityKind::Square => ("square", &["high", "low", "period", "duty"]),
            CapacityKind::Step => ("step", &["steps", "linear", "period"]),
            CapacityKind::Ramp => ("ramp", &["from", "to", "start", "duration"]),
            CapacityKind::Trace => ("trace", &["file", "set", "format", "unit", "drop_above", "scale", "offset"]),
        };
        kind_fields(name, &present, allowed)?;
        Ok(match self.kind {
            CapacityKind::Constant => CapacityTable::Constant { rate: needs(self.rate, name, "rate")? },
            CapacityKind::Pulse => CapacityTable::Pulse {
                high: needs(self.high, name, "high")?,
                low: needs(self.low, name, "low")?,
                every: needs(self.every, name, "every")?,
            },
            CapacityKind::Square => CapacityTable::Square {
                high: needs(self.high, name, "high")?,
                low: needs(self.low, name, "low")?,
                period: needs(self.period, name, "period")?,
                duty: needs(self.duty, name, "duty")?,
            },
            CapacityKind::Step => CapacityTable::Step {
                steps: needs(self.steps, name, "steps")?,
                linear: self.linear.unwrap_or(false),
                period: self.period,
            },
            CapacityKind::Ramp => CapacityTable::Ramp {
                from: needs(self.from, name, "from")?,
                to: needs(self.to, name, "to")?,
                start: self.start.unwrap_or_else(zero),
                duration: needs(self.duration, name, "duration")?,
            },
            CapacityKind::Trace => CapacityTable::Trace {
                file: needs(self.file, name, "file")?,
                set: self.set,
                format: self.format,
                unit: self.unit,
                drop_above: self.drop_above,
                scale: self.scale.unwrap_or_else(one),
                offset: self.offset.unwrap_or_else(zero),
            },
        })
    }
}

impl<'de> Deserialize<'de> for CapacityTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawCapacity::deserialize(d)?.table().map_err(de::Error::custom)
    }
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QueueKind {
    #[serde(rename = "droptail", alias = "drop_tail")]
    DropTail,
    Codel,
    FqCodel,
}

/// Every field any queue kind takes, as one flat struct.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQueue {
    kind: QueueKind,
    limit: Option<UnitValue>,
    target: Option<UnitValue>,
    interval: Option<UnitValue>,
    mtu: Option<UnitValue>,
    quantum: Option<UnitValue>,
    memory_limit: Option<UnitValue>,
    drop_batch: Option<UnitValue>,
}

impl RawQueue {
    fn table(self) -> Result<QueueTable, String> {
        let present = [
            ("limit", self.limit.is_some()),
            ("target", self.target.is_some()),
            ("interval", self.interval.is_some()),
            ("mtu", self.mtu.is_some()),
            ("quantum", self.quantum.is_some()),
            ("memory_limit", self.memory_limit.is_some()),
            ("drop_batch", self.drop_batch.is_some()),
        ];
        let (name, allowed): (&str, &[&str]) = match self.kind {
            QueueKind::DropTail => ("droptail", &["limit"]),
            QueueKind::Codel => ("codel", &["target", "interval", "mtu", "limit"]),
            QueueKind::FqCodel => {
                ("fq_codel", &["target", "interval", "mtu", "quantum", "limit", "memory_limit", "drop_batch"])
            }
        };
        kind_fields(name, &present, allowed)?;
        Ok(match self.kind {
            QueueKind::DropTail => QueueTable::DropTail { limit: self.limit.unwrap_or_else(unlimited) },
            QueueKind::Codel => {
                QueueTable::Codel { target: self.target, interval: self.interval, mtu: self.mtu, limit: self.limit }
            }
            QueueKind::FqCodel => QueueTable::FqCodel {
                target: self.target,
                interval: self.interval,
                mtu: self.mtu,
                quantum: self.quantum,
                limit: self.limit,
                memory_limit: self.memory_limit,
                drop_batch: self.drop_batch,
            },
        })
    }
}

impl<'de> Deserialize<'de> for QueueTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawQueue::deserialize(d)?.table().map_err(de::Error::custom)
    }
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LossKind {
    None,
    Bernoulli,
    GilbertElliott,
}

/// Every field any loss kind takes, as one flat struct.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoss {
    kind: LossKind,
    p: Option<f64>,
    p_gb: Option<f64>,
    p_bg: Option<f64>,
    loss_good: Option<f64>,
    loss_bad: Option<f64>,
    start: Option<UnitValue>,
}

impl RawLoss {
    fn table(self) -> Result<LossTable, String> {
        let present = [
            ("p", self.p.is_some()),
            ("p_gb", self.p_gb.is_some()),
            ("p_bg", self.p_bg.is_some()),
            ("loss_good", self.loss_good.is_some()),
            ("loss_bad", self.loss_bad.is_some()),
            ("start", self.start.is_some()),
        ];
        let (name, allowed): (&str, &[&str]) = match self.kind {
            LossKind::None => ("none", &[]),
            LossKind::Bernoulli => ("bernoulli", &["p", "start"]),
            LossKind::GilbertElliott => ("gilbert_elliott", &["p_gb", "p_bg", "loss_good", "loss_bad", "start"]),
        };
        kind_fields(name, &present, allowed)?;
        Ok(match self.kind {
            LossKind::None => LossTable::None,
            LossKind::Bernoulli => LossTable::Bernoulli { p: needs(self.p, name, "p")?, start: self.start },
            LossKind::GilbertElliott => LossTable::GilbertElliott {
                p_gb: needs(self.p_gb, name, "p_gb")?,
                p_bg: needs(self.p_bg, name, "p_bg")?,
                loss_good: self.loss_good.unwrap_or(0.0),
                loss_bad: self.loss_bad.unwrap_or(1.0),
                start: self.start,
            },
        })
    }
}

impl<'de> Deserialize<'de> for LossTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawLoss::deserialize(d)?.table().map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::queue::fixtures::{b, ms};

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Top {
        link: LinkConfig,
    }

    fn parse(text: &str) -> Result<LinkConfig, String> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize::<_, Top>(de)
            .map(|t| t.link)
            .map_err(|e| format!("{}: {}", e.path(), e.inner().message()))
    }

    /// A built link and its paths, read together as the tests do.
    #[derive(Debug)]
    struct Built {
        link: Link,
        paths: PathSpec,
    }

    impl std::ops::Deref for Built {
        type Target = Link;
        fn deref(&self) -> &Link {
            &self.link
        }
    }

    impl Built {
        fn delay(&self) -> Duration {
            self.paths.delay
        }
        fn reverse_delay(&self) -> Duration {
            self.paths.reverse_delay
        }
        fn jitter(&self) -> Duration {
            self.paths.jitter
        }
        fn reverse_loss(&self) -> &LossModel {
            &self.paths.reverse_loss
        }
    }

    fn build(text: &str) -> Result<Built, String> {
        let c = parse(text)?;
        let link = c.build(Path::new("/nonexistent-base")).map_err(|e| e.to_string())?;
        Ok(Built { link, paths: c.path_spec("link").map_err(|e| e.to_string())? })
    }

    fn cap(text: &str) -> Result<Built, String> {
        build(&format!("[link]\ncapacity = {text}\n"))
    }

    #[test]
    fn config_defaults_and_every_capacity_form() {
        let l = cap("\"3Mbps\"").unwrap();
        assert!(matches!(l.capacity(), Capacity::Constant(r) if *r == DataRate::from_mbps(3)));
        assert_eq!(
            (l.delay(), l.reverse_delay(), l.jitter()),
            (Duration::from_millis(25), Duration::from_millis(25), Duration::ZERO)
        );
        assert_eq!(l.queue_limit(), QueueLimit::Unlimited);
        assert_eq!((l.loss(), l.reverse_loss()), (&LossModel::None, &LossModel::None));
        assert_eq!(cap("3000000").unwrap().capacity().rate_at(Time::ZERO), DataRate::from_mbps(3));
        assert_eq!(
            cap("{ kind = \"constant\", rate = \"2Mbps\" }").unwrap().capacity().rate_at(ms(5)),
            DataRate::from_mbps(2)
        );

        let rate = |text: &str, t: i64| cap(text).unwrap().capacity().rate_at(ms(t)).kbps_f64();
        let pulse = "{ kind = \"pulse\", high = \"3Mbps\", low = \"500kbps\", every = \"40s\" }";
        assert_eq!((rate(pulse, 0), rate(pulse, 40_000)), (3000.0, 500.0));
        let square = "{ kind = \"square\", high = \"3Mbps\", low = \"1Mbps\", period = \"20s\", duty = 0.5 }";
        assert_eq!((rate(square, 9_999), rate(square, 10_000)), (3000.0, 1000.0));
        let step = "{ kind = \"step\", steps = [[\"0s\", \"3Mbps\"], [\"20s\", \"1Mbps\"]] }";
        assert_eq!((rate(step, 19_999), rate(step, 20_000)), (3000.0, 1000.0));
        let looped =
            "{ kind = \"step\", steps = [[\"0s\", \"3Mbps\"], [\"20s\", \"1Mbps\"]], period = \"30s\", linear = true }";
        assert_eq!(rate(looped, 30_000 + 10_000), 2000.0);
        let ramp = "{ kind = \"ramp\", from = \"1Mbps\", to = \"4Mbps\", start = \"10s\", duration = \"30s\" }";
        assert_eq!((rate(ramp, 0), rate(ramp, 25_000), rate(ramp, 60_000)), (1000.0, 2500.0, 4000.0));

        // A trace resolved against the base directory.
        let dir = std::env::temp_dir().join(format!("rtcc-link-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("traces")).unwrap();
        std::fs::write(dir.join("traces/one.down"), "1\n").unwrap();
        std::fs::write(dir.join("traces/bad.down"), "1\nx\n").unwrap();
        let trace = |extra: &str, file: &str| {
            let text = format!("[link]\ncapacity = {{ kind = \"trace\", file = \"traces/{file}\"{extra} }}\n");
            parse(&text).unwrap().build(&dir).map_err(|e| e.to_string())
        };
        assert_eq!(trace("", "one.down").unwrap().capacity().rate_at(Time::ZERO), DataRate::from_mbps(12));
        assert_eq!(
            trace(", scale = 0.5, offset = \"2s\"", "one.down").unwrap().capacity().rate_at(Time::ZERO),
            DataRate::from_mbps(6)
        );
        let e = trace("", "bad.down").unwrap_err();
        assert!(
            e.starts_with("link.capacity.file: ")
                && e.ends_with("bad.down:2: 'x' is not a timestamp (expected a non-negative integer number of ms)"),
            "{e}"
        );
        let e = trace("", "missing.down").unwrap_err();
        assert!(e.starts_with("link.capacity.file: ") && e.contains("missing.down: cannot read"), "{e}");
        assert!(trace(", scale = 0", "one.down").unwrap_err().starts_with("link.capacity.scale:"));
        // The real bounds are named, not "must be positive".
        let e = trace(", scale = 0.000001", "one.down").unwrap_err();
        assert!(e.starts_with("link.capacity.scale: scale 0.000001 is outside 1/3000 (0.00033…) to 1000: "), "{e}");
        assert!(trace(", scale = 0.0004", "one.down").is_ok());
        assert!(trace(", scale = 1e30", "one.down").unwrap_err().starts_with("link.capacity.scale: scale 1000000"));
        // A trace pointed at an arbitrary file echoes a short excerpt only.
        std::fs::write(dir.join("traces/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        let e = trace("", "passwd").unwrap_err();
        assert!(
            e.ends_with(
                "passwd: not a trace in a known format (mahimahi, pensieve, opennetlab, gnettrack): it starts \
                 'root:x:0:0:root:/roo…'"
            ),
            "{e}"
        );
        let e = trace(", format = \"mahimahi\"", "passwd").unwrap_err();
        assert!(e.contains("passwd:1: 'root:x:0:0:root:/roo…' is not a timestamp"), "{e}");
        let e = build("[link]\ncapacity = { kind = \"trace\", file = \"/dev/zero\" }\n").unwrap_err();
        assert!(e.starts_with("link.capacity.file: /dev/zero: is not a regular file"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn trace_sets_formats_units_and_artefacts() {
        let rate = |t: &str, at: f64| cap(t).map(|b| b.capacity().rate_at(Time::from_secs_f64(at)));
        // A bundled set by name; every format read by its content.
        let att = "{ kind = \"trace\", set = \"mahimahi\", file = \"ATT-LTE-driving-2016.up\" }";
        assert!(rate(att, 1.0).is_ok());
        let bus =
            |extra: &str| format!("{{ kind = \"trace\", set = \"pensieve-norway\", file = \"norway_bus_1\"{extra} }}");
        // norway_bus_1's second row: 4.79283060109 Mbps over (0, 0.55] s.
        assert_eq!(rate(&bus(""), 0.2).unwrap(), DataRate::from_bps(4_792_831));
        assert_eq!(rate(&bus(", format = \"pensieve\", unit = \"kbps\""), 0.2).unwrap(), DataRate::from_bps(4793));
        assert_eq!(rate(&bus(", scale = 0.5"), 0.2).unwrap(), DataRate::from_bps(2_396_415));
        let e = cap(&bus(", format = \"mahimahi\"")).unwrap_err();
        assert!(
            e.starts_with("link.capacity.file: ")
                && e.contains(
                    "is a pensieve trace, not mahimahi (formats known: mahimahi, pensieve, opennetlab, gnettrack)"
                ),
            "{e}"
        );
        let e = cap(&bus(", format = \"csv\"")).unwrap_err();
        assert_eq!(e, "link.capacity.format: 'csv' is not a trace format (mahimahi, pensieve, opennetlab, gnettrack)");
        let e = cap(&bus(", unit = \"MB\"")).unwrap_err();
        assert_eq!(e, "link.capacity.unit: 'MB' is not a rate unit (bps, kbps, Mbps, Gbps)");
        let e = cap(&att.replace(" }", ", unit = \"kbps\" }")).unwrap_err();
        assert!(e.starts_with("link.capacity.unit: a Mahimahi trace has no rates"), "{e}");
        let e = cap("{ kind = \"trace\", set = \"nope\", file = \"x\" }").unwrap_err();
        assert!(e.starts_with("link.capacity.set: no trace set 'nope' in "), "{e}");
        let e = cap("{ kind = \"trace\", set = \"mahimahi\", file = \"../opennetlab/x\" }").unwrap_err();
        assert!(e.starts_with("link.capacity.file: '../opennetlab/x' must be a file inside the set"), "{e}");
        // OpenNetLab's >1 Gbps entries: refused until drop_above says what to do.
        let onl =
            |extra: &str| format!("{{ kind = \"trace\", set = \"opennetlab\", file = \"4G_3mbps.json\"{extra} }}");
        let e = cap(&onl("")).unwrap_err();
        assert!(
            e.starts_with("link.capacity.drop_above: ")
                && e.contains("4G_3mbps.json: uplink.trace_pattern[")
                && e.contains("drop_above = \"1Gbps\""),
            "{e}"
        );
        let c = cap(&onl(", drop_above = \"1Gbps\"")).unwrap();
        let mean = c.capacity().mean_rate(Time::ZERO, Time::from_millis(600_000)).bps() as f64 / 1e6;
        assert!((mean - 3.80).abs() < 0.03, "{mean}");
        assert!(cap(&onl(", drop_above = \"100Gbps\"")).is_ok());
        // Only its zero-capacity entries are at or below 1 bps.
        let e = cap(&onl(", drop_above = \"1bps\"")).unwrap_err();
        assert_eq!(e, "link.capacity.file: the capacity is zero at all times");
        // Rates by the second: the UCC 5G set's DL_bitrate.
        assert!(rate(
            "{ kind = \"trace\", set = \"ucc-5g\", file = \"B_2019.12.16_11.49.59.csv\", offset = \"10s\" }",
            0.0
        )
        .is_ok());
        // The table round-trips with its new fields.
        let cfg = parse(&format!("[link]\ncapacity = {}\n", bus(", unit = \"Mbps\""))).unwrap();
        let back: LinkConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
    }

    #[test]
    fn config_other_fields() {
        let l = build(
            "[link]\ncapacity = \"3Mbps\"\ndelay = \"10ms\"\nreverse_delay = \"40ms\"\nqueue = \"100pkt\"\n\
             loss = { kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }\nreverse_loss = 0.05\njitter = \"2ms\"\n",
        )
        .unwrap();
        assert_eq!(
            (l.delay(), l.reverse_delay(), l.jitter()),
            (Duration::from_millis(10), Duration::from_millis(40), Duration::from_millis(2))
        );
        assert_eq!(l.queue_limit(), QueueLimit::Packets(100));
        assert_eq!(l.loss(), &LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0));
        assert_eq!(l.reverse_loss(), &LossModel::Bernoulli { p: 0.05 });
        let l =
            build("[link]\ncapacity = \"3Mbps\"\nloss = { kind = \"bernoulli\", p = 0.1, start = \"10s\" }\n").unwrap();
        assert_eq!(l.loss(), &LossModel::bernoulli(0.1).starting(Time::from_millis(10_000)));
        let e = build("[link]\ncapacity = \"3Mbps\"\nloss = { kind = \"bernoulli\", p = 0.1, start = \"soon\" }\n")
            .unwrap_err();
        assert!(e.contains("link.loss.start"), "{e}");
        let q = |s: &str| build(&format!("[link]\ncapacity = \"3Mbps\"\nqueue = \"{s}\"\n")).map(|l| l.queue_limit());
        assert_eq!(q("100ms"), Ok(QueueLimit::Time(Duration::from_millis(100))));
        assert_eq!(q("64kB"), Ok(QueueLimit::Bytes(b(64_000))));
        assert_eq!(q("150000B"), Ok(QueueLimit::Bytes(b(150_000))));
        assert_eq!(q("100 packets"), Ok(QueueLimit::Packets(100)));
        let l = build("[link]\ncapacity = \"3Mbps\"\ndelay = 0\n").unwrap();
        assert_eq!(l.reverse_delay(), Duration::ZERO);
    }

    #[test]
    fn config_errors_name_the_field() {
        let err = |text: &str| cap(text).unwrap_err();
        assert_eq!(err("\"-3Mbps\""), "link.capacity: '-3Mbps' must not be negative");
        assert_eq!(err("\"0Mbps\""), "link.capacity: the capacity is zero at all times");
        let e = err("{ kind = \"pulse\", high = \"-3Mbps\", low = \"500kbps\", every = \"40s\" }");
        assert_eq!(e, "link.capacity.high: '-3Mbps' must not be negative");
        let e = err("{ kind = \"pulse\", high = \"0Mbps\", low = \"0kbps\", every = \"40s\" }");
        assert_eq!(e, "link.capacity: the capacity is zero at all times");
        let e = err("{ kind = \"pulse\", high = \"3Mbps\", low = \"1Mbps\", every = \"0s\" }");
        assert_eq!(e, "link.capacity.every: must be positive");
        let e = err("{ kind = \"square\", high = \"3Mbps\", low = \"1Mbps\", period = \"20s\", duty = 1.5 }");
        assert_eq!(e, "link.capacity.duty: duty 1.5 must be strictly between 0 and 1");
        let e = err("{ kind = \"step\", steps = [[\"0s\", \"3Mbps\"], [\"20s\", \"1Mbps\"], [\"10s\", \"2Mbps\"]] }");
        assert!(e.starts_with("link.capacity.steps[2]: step at 10.000s is not after the previous one"), "{e}");
        let e = err("{ kind = \"step\", steps = [[\"0s\", \"3Mbps\"], [\"40s\", \"1Mbps\"]], period = \"30s\" }");
        assert!(e.starts_with("link.capacity.period: "), "{e}");
        let e = err("{ kind = \"ramp\", from = \"1Mbps\", to = \"4 furlongs\", duration = \"3s\" }");
        assert!(e.starts_with("link.capacity.to: unknown unit 'furlongs'"), "{e}");
        // Shape errors come from serde and carry the path.
        let e = err("{ kind = \"sawtooth\", high = \"3Mbps\" }");
        assert!(e.starts_with("link.capacity.kind: unknown variant `sawtooth`"), "{e}");
        let e = err("{ kind = \"pulse\", high = \"3Mbps\", low = \"1Mbps\", every = \"1s\", hgh = 1 }");
        assert!(e.starts_with("link.capacity.hgh: unknown field `hgh`"), "{e}");
        let e = err("{ kind = \"pulse\", high = \"3Mbps\", low = \"1Mbps\", every = \"1s\", file = \"x\" }");
        assert!(
            e.starts_with("link.capacity: `file` is not a field of kind = \"pulse\" (it takes high, low, every)"),
            "{e}"
        );
        let e = err("{ kind = \"trace\", file = 5 }");
        assert!(e.starts_with("link.capacity.file: "), "{e}");
        let e = err("{ kind = \"trace\", file = \"t\", scale = \"big\" }");
        assert!(e.starts_with("link.capacity.scale: "), "{e}");
        let e = err("{ kind = \"pulse\", high = \"3Mbps\", low = \"1Mbps\" }");
        assert!(e.contains("missing field `every`"), "{e}");
        let e = err("true");
        assert!(e.contains("a rate such as"), "{e}");
        let e = build("[link]\ncapacity = \"3Mbps\"\nbandwidth = \"1Mbps\"\n").unwrap_err();
        assert!(e.contains("unknown field `bandwidth`"), "{e}");
        let other = |k: &str, v: &str| build(&format!("[link]\ncapacity = \"3Mbps\"\n{k} = {v}\n")).unwrap_err();
        // One bare-number rule: a bare duration is seconds, as everywhere.
        let l = build("[link]\ncapacity = 3000000\ndelay = 0.025\njitter = 0\n").unwrap();
        assert_eq!((l.delay(), l.capacity().rate_at(Time::ZERO)), (Duration::from_millis(25), DataRate::from_mbps(3)));
        assert!(other("delay", "-1").starts_with("link.delay: "));
        assert!(other("queue", "100").starts_with("link.queue: queue limit '100' needs a unit"));
        assert!(other("queue", "\"-1pkt\"").starts_with("link.queue:"));
        assert!(other("loss", "2").starts_with("link.loss: "));
        assert!(other("reverse_loss", "{ kind = \"bernoulli\", p = -1 }").starts_with("link.reverse_loss.p: "));
        assert!(other("jitter", "\"-1ms\"").starts_with("link.jitter: "));
    }

    fn queue(v: &str) -> Result<QueueDiscipline, String> {
        build(&format!("[link]\ncapacity = \"3Mbps\"\nqueue = {v}\n")).map(|l| l.queue_discipline())
    }

    #[test]
    fn config_queue_disciplines() {
        let ms_ = Duration::from_millis;
        let drop_tail = |l: QueueLimit| Ok(QueueDiscipline::DropTail(l));
        // The string forms are drop-tail; the table says the same.
        assert_eq!(queue("\"100ms\""), drop_tail(QueueLimit::Time(ms_(100))));
        assert_eq!(queue("{ kind = \"droptail\", limit = \"100ms\" }"), drop_tail(QueueLimit::Time(ms_(100))));
        assert_eq!(queue("{ kind = \"drop_tail\", limit = \"64kB\" }"), drop_tail(QueueLimit::Bytes(b(64_000))));
        assert_eq!(queue("{ kind = \"droptail\" }"), drop_tail(QueueLimit::Unlimited));
        assert_eq!(build("[link]\ncapacity = \"3Mbps\"\n").unwrap().queue_discipline(), QueueDiscipline::default());

        // CoDel: RFC 8289 constants, Linux limit; every field settable.
        let codel = QueueDiscipline::codel();
        assert_eq!(
            codel,
            QueueDiscipline::Codel {
                params: CodelParams { target: ms_(5), interval: ms_(100), mtu: b(1514) },
                limit: QueueLimit::Packets(1000)
            }
        );
        assert_eq!(queue("{ kind = \"codel\" }"), Ok(codel));
        assert_eq!(
            queue("{ kind = \"codel\", target = \"5ms\", interval = \"100ms\", limit = \"1000pkt\" }"),
            Ok(codel)
        );
        let custom =
            queue("{ kind = \"codel\", target = \"15ms\", interval = \"0.2s\", mtu = 1500, limit = \"200ms\" }");
        assert_eq!(
            custom,
            Ok(QueueDiscipline::Codel {
                params: CodelParams { target: ms_(15), interval: ms_(200), mtu: b(1500) },
                limit: QueueLimit::Time(ms_(200))
            })
        );
        assert_eq!(custom.unwrap().to_string(), "codel(target=15ms, interval=200ms, mtu=1500B, limit=200ms)");
        assert_eq!(queue("{ kind = \"codel\", limit = \"unlimited\" }").unwrap().limit(), QueueLimit::Unlimited);

        // FQ-CoDel: RFC 8290 / Linux defaults; every field settable.
        let fq = QueueDiscipline::fq_codel();
        assert_eq!(
            fq,
            QueueDiscipline::FqCodel(FqCodelConfig {
                codel: CodelParams::default(),
                quantum: b(1514),
                limit: 10_240,
                memory_limit: b(32 << 20),
                drop_batch: 64
            })
        );
        assert_eq!(queue("{ kind = \"fq_codel\" }"), Ok(fq));
        let full = "{ kind = \"fq_codel\", target = \"5ms\", interval = \"100ms\", quantum = \"1514B\", limit = \"10240pkt\" }";
        assert_eq!(queue(full), Ok(fq));
        let custom = queue(
            "{ kind = \"fq_codel\", target = \"10ms\", interval = \"200ms\", mtu = \"1500B\", quantum = 300, \
             limit = \"100 packets\", memory_limit = \"1MB\", drop_batch = 8 }",
        )
        .unwrap();
        assert_eq!(
            custom,
            QueueDiscipline::FqCodel(FqCodelConfig {
                codel: CodelParams { target: ms_(10), interval: ms_(200), mtu: b(1500) },
                quantum: b(300),
                limit: 100,
                memory_limit: b(1_000_000),
                drop_batch: 8
            })
        );
        assert_eq!(
            custom.to_string(),
            "fq_codel(target=10ms, interval=200ms, mtu=1500B, quantum=300B, limit=100pkt, memory_limit=1000kB, drop_batch=8)"
        );
        let l = build(&format!("[link]\ncapacity = \"3Mbps\"\nqueue = {full}\n")).unwrap();
        assert_eq!(l.queue_limit(), QueueLimit::Packets(10_240));
        // The config serialises back to what was written.
        let cfg = parse(&format!("[link]\ncapacity = \"3Mbps\"\nqueue = {full}\n")).unwrap();
        let back: LinkConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
        let cfg = parse("[link]\ncapacity = \"3Mbps\"\nqueue = \"64kB\"\n").unwrap();
        assert_eq!(toml::to_string(&cfg).unwrap().lines().find(|l| l.starts_with("queue")), Some("queue = \"64kB\""));
    }

    #[test]
    fn config_queue_errors_name_the_field() {
        let err = |v: &str| queue(v).unwrap_err();
        let codel = |k: &str, v: &str| err(&format!("{{ kind = \"codel\", {k} = {v} }}"));
        let fq = |k: &str, v: &str| err(&format!("{{ kind = \"fq_codel\", {k} = {v} }}"));
        assert_eq!(codel("target", "\"-5ms\""), "link.queue.target: '-5ms' must not be negative");
        assert_eq!(codel("target", "\"0ms\""), "link.queue.target: must be positive");
        assert_eq!(fq("target", "0"), "link.queue.target: must be positive");
        assert_eq!(codel("interval", "-0.1"), "link.queue.interval: '-0.1' must not be negative");
        assert!(fq("interval", "\"1 fortnight\"").starts_with("link.queue.interval: unknown unit 'fortnight'"));
        assert!(codel("mtu", "\"big\"").starts_with("link.queue.mtu: "));
        assert_eq!(fq("mtu", "-1"), "link.queue.mtu: '-1' must not be negative");
        assert!(codel("limit", "\"100\"").starts_with("link.queue.limit: queue limit '100' needs a unit"));
        assert!(err("{ kind = \"droptail\", limit = \"-1pkt\" }").starts_with("link.queue.limit: "));
        let e = fq("limit", "\"100ms\"");
        assert_eq!(e, "link.queue.limit: '100ms': fq_codel's limit is a positive packet count, e.g. \"10240pkt\"");
        assert!(
            fq("limit", "\"0pkt\"").starts_with("link.queue.limit: queue limit '0pkt' must hold at least one packet")
        );
        assert!(err("\"0ms\"").starts_with("link.queue"));
        assert_eq!(fq("quantum", "\"0B\""), "link.queue.quantum: must be positive");
        assert!(fq("quantum", "\"12 furlongs\"").starts_with("link.queue.quantum: unknown unit 'furlongs'"));
        assert_eq!(fq("memory_limit", "0"), "link.queue.memory_limit: must be positive");
        assert_eq!(fq("drop_batch", "0"), "link.queue.drop_batch: '0' must be a whole number of packets, at least 1");
        assert!(fq("drop_batch", "2.5").starts_with("link.queue.drop_batch: '2.5' must be"));
        assert!(fq("drop_batch", "\"lots\"").starts_with("link.queue.drop_batch: 'lots' must be"));
        // Shape errors come from serde.
        let e = err("{ kind = \"red\" }");
        assert!(e.starts_with("link.queue.kind: unknown variant `red`"), "{e}");
        let e = codel("tagret", "\"5ms\"");
        assert!(e.starts_with("link.queue.tagret: unknown field `tagret`"), "{e}");
        // Fields belong to their kind.
        assert!(codel("quantum", "\"1514B\"").starts_with("link.queue: `quantum` is not a field of kind = \"codel\""));
        let e = err("{ kind = \"droptail\", target = \"5ms\" }");
        assert!(e.starts_with("link.queue: `target` is not a field of kind = \"droptail\" (it takes limit)"), "{e}");
        assert_eq!(err("{ limit = \"100ms\" }"), "link.queue: missing field `kind`");
        assert!(err("true").starts_with("link.queue: invalid type: boolean `true`, expected a queue limit"));
    }

    #[derive(Deserialize)]
    struct LossOnly {
        loss: LossSpec,
    }

    fn parse_loss(s: &str) -> Result<LossModel, String> {
        let t: LossOnly = toml::from_str(s).map_err(|e| e.to_string())?;
        t.loss.build("link.loss").map_err(|e| e.to_string())
    }

    #[test]
    fn loss_forms() {
        assert_eq!(parse_loss("loss = 0.0"), Ok(LossModel::None));
        assert_eq!(parse_loss("loss = 0"), Ok(LossModel::None));
        assert_eq!(parse_loss("loss = 0.02"), Ok(LossModel::Bernoulli { p: 0.02 }));
        assert_eq!(parse_loss("loss = { kind = \"bernoulli\", p = 0.01 }"), Ok(LossModel::Bernoulli { p: 0.01 }));
        assert_eq!(parse_loss("loss = { kind = \"none\" }"), Ok(LossModel::None));
        assert_eq!(
            parse_loss(
                "loss = { kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 1.0 }"
            ),
            Ok(LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0))
        );
        assert_eq!(
            parse_loss("loss = { kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }"),
            Ok(LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0))
        );
    }

    #[test]
    fn loss_errors_name_the_field() {
        assert_eq!(parse_loss("loss = 1.5").unwrap_err(), "link.loss: loss = 1.5 is not a probability in [0, 1]");
        let e = parse_loss("loss = { kind = \"gilbert_elliott\", p_gb = -0.1, p_bg = 0.3 }").unwrap_err();
        assert!(e.starts_with("link.loss.p_gb:"), "{e}");
        let e = parse_loss("loss = { kind = \"bernoulli\", q = 0.1 }").unwrap_err();
        assert!(e.contains("unknown field `q`"), "{e}");
        let e = parse_loss("loss = { kind = \"burst\" }").unwrap_err();
        assert!(e.contains("unknown variant `burst`"), "{e}");
        let e = parse_loss("loss = \"1%\"").unwrap_err();
        assert!(e.contains("a loss probability"), "{e}");
    }
}
