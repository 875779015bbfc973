//! The bottleneck link: the transmitter that serves packets at the capacity
//! (models in [`crate::trace`], re-exported here), and [`Link`] = drop-tail
//! queue + server + post-bottleneck random loss + jitter + propagation
//! delays; then the `[link]` config.

use rtcc_core::packet::Packet;
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataSize, Duration, Time};

use crate::loss::LossModel;
use crate::queue::{DropTail, QueueLimit};
use crate::trace::{bits_per_us, us, OpportunityCursor, OPPORTUNITY_BYTES};

pub use self::config::{CapacitySpec, CapacityTable, FieldError, LinkConfig, UnitValue};
pub use crate::trace::{Capacity, MahimahiTrace, Schedule, TraceCapacity, TraceError, TRACE_RATE_WINDOW};

/// The bottleneck transmitter: when does the last byte of a packet leave?
#[derive(Clone, Debug)]
pub struct Server {
    capacity: Capacity,
    /// Departure time and exact cumulative service (bits) of the previous
    /// packet, so back-to-back packets do not lose the sub-µs remainder of
    /// each rounded departure time.
    carry: Option<(Time, f64)>,
    cursor: OpportunityCursor,
}

impl Server {
    pub fn new(capacity: Capacity) -> Self {
        let bytes = match &capacity {
            Capacity::Trace(tc) => tc.bytes_per_opportunity,
            _ => OPPORTUNITY_BYTES,
        };
        Server { capacity, carry: None, cursor: OpportunityCursor::new(bytes) }
    }

    pub fn capacity(&self) -> &Capacity {
        &self.capacity
    }

    /// When the last byte of a `size` packet leaves if its service starts at
    /// `start` with the link idle. Rate capacities are integrated from
    /// `start` (zero-rate stretches are waited out); `Time::MAX` if the
    /// capacity stays zero forever. Traces use Mahimahi's byte-level
    /// opportunities. Calls must come in order of `start`.
    pub fn finish_time(&mut self, start: Time, size: DataSize) -> Time {
        let bits = size.bits() as f64;
        let (f0, target) = match &self.capacity {
            Capacity::Trace(tc) => {
                let off = tc.offset.as_micros();
                let d = self.cursor.serve(&tc.trace, start.as_micros() + off, size.bytes());
                return Time::from_micros(d - off).max(start);
            }
            Capacity::Constant(r) if r.bps() == 0 => return Time::MAX,
            Capacity::Constant(r) => {
                let f0 = self.carried(start).unwrap_or_else(|| us(start) * bits_per_us(*r));
                (f0, (f0 + bits) / bits_per_us(*r))
            }
            Capacity::Piecewise(s) => {
                let f0 = self.carried(start).unwrap_or_else(|| s.cumulative(us(start)));
                match s.inverse(f0 + bits) {
                    Some(t) => (f0, t),
                    None => {
                        self.carry = None;
                        return Time::MAX;
                    }
                }
            }
        };
        let done = round_up(target).max(start);
        self.carry = Some((done, f0 + bits));
        done
    }

    fn carried(&self, start: Time) -> Option<f64> {
        self.carry.filter(|c| c.0 == start).map(|c| c.1)
    }
}

/// Exact µs → `Time`, rounding up (a packet is not out before its last bit),
/// with 1 ns of slack for floating-point noise.
fn round_up(t_us: f64) -> Time {
    if t_us >= Time::MAX.as_micros() as f64 {
        Time::MAX
    } else {
        Time::from_micros((t_us - 1e-3).ceil() as i64)
    }
}

/// A packet that has crossed the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Departure {
    pub packet: Packet,
    pub enqueued: Time,
    pub service_start: Time,
    /// When its last byte left the bottleneck (before propagation delay).
    pub departed: Time,
    /// Dropped by random loss after the bottleneck; still used capacity.
    pub lost: bool,
}

/// One direction's bottleneck plus the path parameters around it. Drive it
/// with `poll_departure(now)` until `None` before `enqueue(now, ..)`, and wake
/// at `poll_timeout()`.
#[derive(Clone, Debug)]
pub struct Link {
    queue: DropTail,
    server: Server,
    /// (service start, departure) of the packet at the head of `queue`.
    head: Option<(Time, Time)>,
    last_departure: Time,
    loss: LossModel,
    reverse_loss: LossModel,
    jitter: Duration,
    delay: Duration,
    reverse_delay: Duration,
    // Separate streams so that, e.g., turning jitter on does not change
    // which packets are lost.
    loss_rng: Rng,
    jitter_rng: Rng,
    reverse_rng: Rng,
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        capacity: Capacity,
        queue: QueueLimit,
        loss: LossModel,
        jitter: Duration,
        delay: Duration,
        reverse_delay: Duration,
        reverse_loss: LossModel,
        mut rng: Rng,
    ) -> Self {
        Link {
            queue: DropTail::new(queue),
            server: Server::new(capacity),
            head: None,
            last_departure: Time::ZERO,
            loss,
            reverse_loss,
            jitter: jitter.max(Duration::ZERO),
            delay,
            reverse_delay,
            loss_rng: rng.fork(1),
            jitter_rng: rng.fork(2),
            reverse_rng: rng.fork(3),
        }
    }

    /// Replaces the random streams (loss, jitter, reverse loss) with ones
    /// forked from `rng`, e.g. the run's seeded stream.
    pub fn set_rng(&mut self, mut rng: Rng) {
        self.loss_rng = rng.fork(1);
        self.jitter_rng = rng.fork(2);
        self.reverse_rng = rng.fork(3);
    }

    /// Offers a packet to the bottleneck buffer; `false` if tail-dropped.
    pub fn enqueue(&mut self, now: Time, packet: Packet) -> bool {
        let capacity = self.server.capacity();
        if !self.queue.enqueue(now, packet, || capacity.rate_at(now)) {
            return false;
        }
        if self.head.is_none() {
            self.start_service();
        }
        true
    }

    /// FIFO, pull model: the head starts service once it has arrived and the
    /// previous packet has left.
    fn start_service(&mut self) {
        self.head = self.queue.front().map(|&(p, enqueued)| {
            let start = enqueued.max(self.last_departure);
            (start, self.server.finish_time(start, p.size))
        });
    }

    /// When the packet in service leaves; `None` if idle or never.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.head.map(|h| h.1).filter(|&t| t < Time::MAX)
    }

    /// The packet whose last byte left at or before `now`, if any.
    pub fn poll_departure(&mut self, now: Time) -> Option<Departure> {
        let (service_start, departed) = self.head.filter(|h| h.1 <= now)?;
        let (packet, enqueued) = self.queue.pop_front().expect("a packet in service is queued");
        self.last_departure = departed;
        self.start_service();
        let lost = self.loss.lose(&mut self.loss_rng);
        Some(Departure { packet, enqueued, service_start, departed, lost })
    }

    /// Bytes at the bottleneck, waiting and in service.
    pub fn queue_bytes(&self) -> DataSize {
        self.queue.bytes()
    }

    /// Packets at the bottleneck, waiting and in service.
    pub fn queue_packets(&self) -> usize {
        self.queue.len()
    }

    pub fn queue_limit(&self) -> QueueLimit {
        self.queue.limit()
    }

    pub fn capacity(&self) -> &Capacity {
        self.server.capacity()
    }

    pub fn loss(&self) -> &LossModel {
        &self.loss
    }

    pub fn reverse_loss(&self) -> &LossModel {
        &self.reverse_loss
    }

    /// One-way forward propagation delay.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// One-way reverse (feedback) propagation delay.
    pub fn reverse_delay(&self) -> Duration {
        self.reverse_delay
    }

    pub fn jitter(&self) -> Duration {
        self.jitter
    }

    /// Extra one-way delay for one packet: |N(0, jitter²)| (half-normal, mean
    /// jitter·√(2/π)). The caller keeps packets in order.
    pub fn jitter_sample(&mut self) -> Duration {
        if !self.jitter.is_positive() {
            return Duration::ZERO;
        }
        let us = (self.jitter.as_micros() as f64 * self.jitter_rng.normal()).abs();
        Duration::from_micros(us.round() as i64)
    }

    /// Whether one feedback packet is lost on the reverse path.
    pub fn reverse_lost(&mut self) -> bool {
        self.reverse_loss.lose(&mut self.reverse_rng)
    }
}

/// The `[link]` table of a scenario.
pub mod config {
    use std::fmt;
    use std::path::Path;
    use std::sync::Arc;

    use rtcc_core::rng::Rng;
    use rtcc_core::units::{DataRate, Duration, Time};
    use serde::de::{self, Deserializer, MapAccess, Visitor};
    use serde::{Deserialize, Serialize};

    use super::{Capacity, Link};
    use crate::loss::{LossModel, LossSpec};
    use crate::queue::QueueLimit;
    use crate::trace::MahimahiTrace;

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

        /// A rate; a bare number is bits per second.
        pub fn rate(&self, field: &str) -> Result<DataRate, FieldError> {
            match self {
                UnitValue::Text(s) => s.parse().map_err(|e| FieldError::new(field, format!("{e}"))),
                UnitValue::Number(v) if *v >= 0.0 && v.is_finite() => Ok(DataRate::from_bps_f64(*v)),
                UnitValue::Number(v) => Err(FieldError::new(field, format!("rate {v} must not be negative"))),
            }
        }

        /// A duration. Bare numbers other than 0 are refused: `25` could be
        /// seconds or milliseconds.
        pub fn duration(&self, field: &str) -> Result<Duration, FieldError> {
            match self {
                UnitValue::Text(s) => s.parse().map_err(|e| FieldError::new(field, format!("{e}"))),
                UnitValue::Number(v) if *v == 0.0 => Ok(Duration::ZERO),
                UnitValue::Number(v) => {
                    Err(FieldError::new(field, format!("{v} needs a unit, e.g. \"{v}ms\" or \"{v}s\"")))
                }
            }
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

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
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
        /// Mahimahi trace; `scale` multiplies the bytes per opportunity,
        /// `offset` is where in the trace the run starts.
        Trace {
            file: String,
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

    impl<'de> Deserialize<'de> for CapacitySpec {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = CapacitySpec;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a rate such as \"3Mbps\" or a table with `kind` (constant, pulse, square, step, ramp, trace)")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<CapacitySpec, E> {
                    UnitVisitor.visit_str(v).map(CapacitySpec::Rate)
                }
                fn visit_f64<E: de::Error>(self, v: f64) -> Result<CapacitySpec, E> {
                    UnitVisitor.visit_f64(v).map(CapacitySpec::Rate)
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<CapacitySpec, E> {
                    UnitVisitor.visit_i64(v).map(CapacitySpec::Rate)
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<CapacitySpec, E> {
                    UnitVisitor.visit_u64(v).map(CapacitySpec::Rate)
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CapacitySpec, A::Error> {
                    CapacityTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(CapacitySpec::Table)
                }
            }
            d.deserialize_any(V)
        }
    }

    /// The `[link]` table. Defaults: delay 25 ms, reverse_delay = delay,
    /// queue unlimited, no loss either way, no jitter.
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
        /// "unlimited", "100ms", "64kB", "100pkt".
        #[serde(default = "default_queue")]
        pub queue: UnitValue,
        #[serde(default)]
        pub loss: LossSpec,
        #[serde(default)]
        pub reverse_loss: LossSpec,
        /// Std dev of extra half-normal one-way delay (never reorders).
        #[serde(default = "zero")]
        pub jitter: UnitValue,
    }

    fn default_delay() -> UnitValue {
        UnitValue::text("25ms")
    }
    fn default_queue() -> UnitValue {
        UnitValue::text("unlimited")
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
                jitter: zero(),
            }
        }

        /// Validates and builds the link. Relative trace paths resolve
        /// against `base_dir`. The link draws from `Rng::new(0)` until
        /// [`Link::set_rng`] gives it the run's stream.
        pub fn build(&self, base_dir: &Path) -> Result<Link, FieldError> {
            self.build_named(base_dir, "link")
        }

        /// As [`build`](Self::build), naming fields under `prefix`.
        pub fn build_named(&self, base_dir: &Path, prefix: &str) -> Result<Link, FieldError> {
            let f = |k: &str| format!("{prefix}.{k}");
            let capacity = build_capacity(&self.capacity, base_dir, &f("capacity"))?;
            let delay = self.delay.duration(&f("delay"))?;
            let reverse_delay = match &self.reverse_delay {
                Some(d) => d.duration(&f("reverse_delay"))?,
                None => delay,
            };
            let queue = match &self.queue {
                UnitValue::Text(s) => QueueLimit::parse(s),
                UnitValue::Number(v) => QueueLimit::parse(&v.to_string()),
            }
            .map_err(|r| FieldError::new(f("queue"), r))?;
            let loss: LossModel = self.loss.build(&f("loss"))?;
            let reverse_loss = self.reverse_loss.build(&f("reverse_loss"))?;
            let jitter = self.jitter.duration(&f("jitter"))?;
            Ok(Link::new(capacity, queue, loss, jitter, delay, reverse_delay, reverse_loss, Rng::new(0)))
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
                            return Err(FieldError::new(at, format!("step at {t} is not after the previous one ({prev}); steps must be sorted by time")));
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
            CapacityTable::Trace { file, scale, offset } => {
                let path = base_dir.join(file);
                let trace = MahimahiTrace::load(&path).map_err(|e| FieldError::new(f("file"), e.to_string()))?;
                if !(scale.is_finite() && *scale > 0.0 && *scale * 1500.0 >= 0.5) {
                    return Err(FieldError::new(f("scale"), format!("scale {scale} must be positive")));
                }
                let offset = offset.duration(&f("offset"))?;
                Capacity::trace(Arc::new(trace), offset, *scale)
            }
        })
    }
}
