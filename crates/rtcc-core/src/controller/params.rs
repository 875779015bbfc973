//! Parameters as given (`Params`), read by their declaration
//! (`declaration.rs`), and the one configuration error (`ConfigError`).
//!
//! Parsing reads a parameter with `Params::get(&DECL)` (or `get_or` where the
//! default comes from the run, e.g. the scenario's start rate), so its default
//! and range live only in the declaration. Durations, rates and sizes follow
//! `units::Quantity`'s one rule: text carries a unit, a bare number is
//! seconds, bits per second or bytes.
//!
//! ```
//! use rtcc_core::controller::{Param, ParamValue, Params};
//! use rtcc_core::units::Duration;
//! const WINDOW: Param<Duration> =
//!     Param::duration("window", Duration::from_millis(100), Duration::ZERO, Duration::from_secs(10), "span")
//!         .above_min();
//! const PACKETS: Param<u32> = Param::integer("packets", 20, 1, 10_000, "packets per interval");
//! let p = Params::new().with("window", ParamValue::Str("25ms".into())).with("packets", ParamValue::Num(2.5));
//! assert_eq!(p.get(&WINDOW).unwrap(), Duration::from_millis(25));
//! assert_eq!(p.get(&PACKETS).unwrap_err().to_string(), "packets: 2.5 is not a whole number");
//! assert_eq!(WINDOW.info().default_text(), "100ms");
//! ```

use std::collections::BTreeMap;
use std::fmt;

use super::declaration::{Bounds, DefaultValue, Integer, Kind, Param, ParamInfo};
use crate::units::{DataRate, DataSize, Duration, Quantity};

/// A refused configuration: the source it came from (a scenario file, empty
/// when not known yet), the field path within it (`flow[0].controller.delta`)
/// and why. Displays as one line, `source: field: reason`, leaving out empty
/// parts. Parameter parsing fills the field with the parameter's name; each
/// layer above prefixes its own path (`within`) and the file (`in_source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub source_name: String,
    pub field: String,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        for part in [&self.source_name, &self.field, &self.reason] {
            if !part.is_empty() {
                write!(f, "{sep}{part}")?;
                sep = ": ";
            }
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// `field` refused for `reason`, source not yet known.
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        ConfigError { source_name: String::new(), field: field.to_string(), reason: reason.into() }
    }

    /// A pair of bounds in order: `low` refused unless `lo ≤ hi`, with one
    /// message for every controller's pairs.
    pub fn check_order<T: PartialOrd + fmt::Display>(low: &str, lo: T, high: &str, hi: T) -> Result<(), Self> {
        if lo > hi {
            return Err(ConfigError::invalid(low, format!("{lo} is above {high} {hi}")));
        }
        Ok(())
    }

    /// A parameter that no declaration names.
    pub fn unknown_param(param: &str, known: &[ParamInfo]) -> Self {
        let known = if known.is_empty() {
            "none".to_string()
        } else {
            known.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        };
        ConfigError::invalid(param, format!("unknown parameter (known: {known})"))
    }

    /// The same error one level down: `prefix.field` (`prefix` alone when the
    /// error names no field, e.g. an unknown controller).
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = match (prefix.is_empty(), self.field.is_empty()) {
            (true, _) => self.field,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{}", self.field),
        };
        self
    }

    /// The same error, naming the file (or other source) it came from.
    pub fn in_source(mut self, source: &str) -> Self {
        self.source_name = source.to_string();
        self
    }
}

/// A parameter value as written (TOML scalar or Python value), before its
/// declaration gives it a type.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Num(f64),
    Str(String),
    Bool(bool),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Num(v) => write!(f, "{v}"),
            ParamValue::Str(s) => write!(f, "\"{s}\""),
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Parameters given to a controller, encoder model, FEC or quality model
/// (`{ name = "gcc", loss = "classic" }`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(pub BTreeMap<String, ParamValue>);

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, k: &str, v: ParamValue) -> Self {
        self.0.insert(k.to_string(), v);
        self
    }

    /// The declared parameter: its value if given, else its declared default.
    pub fn get<T: ParamType>(&self, decl: &Param<T>) -> Result<T, ConfigError> {
        match self.0.get(decl.info.name) {
            Some(v) => T::read(v, &decl.info).map_err(|r| ConfigError::invalid(decl.info.name, r)),
            None => T::declared(&decl.info).ok_or_else(|| {
                ConfigError::invalid(
                    decl.info.name,
                    format!("declared default {:?} is not a {}", decl.info.default, decl.info.kind.name()),
                )
            }),
        }
    }

    /// The declared parameter if given (checked against its declaration),
    /// else `fallback`: for defaults that come from the run (the scenario's
    /// start rate, the run's seed) or from another parameter.
    pub fn get_or<T: ParamType>(&self, decl: &Param<T>, fallback: T) -> Result<T, ConfigError> {
        match self.0.get(decl.info.name) {
            Some(v) => T::read(v, &decl.info).map_err(|r| ConfigError::invalid(decl.info.name, r)),
            None => Ok(fallback),
        }
    }

    /// Whether the parameter was given.
    pub fn has<T>(&self, decl: &Param<T>) -> bool {
        self.0.contains_key(decl.info.name)
    }

    /// These parameters without the ones named in `own`.
    pub fn without(&self, own: &[ParamInfo]) -> Params {
        Params(
            self.0
                .iter()
                .filter(|(k, _)| !own.iter().any(|p| p.name == *k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    /// Refuses any parameter `known` does not declare.
    pub fn check_known(&self, known: &[ParamInfo]) -> Result<(), ConfigError> {
        match self.0.keys().find(|k| !known.iter().any(|p| p.name == k.as_str())) {
            Some(k) => Err(ConfigError::unknown_param(k, known)),
            None => Ok(()),
        }
    }
}

/// A Rust type a parameter can be read as.
pub trait ParamType: Sized {
    /// The declared default as this type; `None` if the declaration is of
    /// another kind (impossible through `Param`'s constructors).
    fn declared(info: &ParamInfo) -> Option<Self>;
    /// A given value, checked against the declaration; the error is the reason.
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String>;
}

fn outside(v: impl fmt::Display, info: &ParamInfo) -> String {
    let range = info.bounds_text().unwrap_or_default();
    match range.starts_with(['≥', '>']) {
        true => format!("{v} must be {range}"),
        false => format!("{v} is outside {range}"),
    }
}

fn in_bounds<T: PartialOrd + fmt::Display + Copy>(v: T, b: Bounds<T>, info: &ParamInfo) -> Result<T, String> {
    let above = if b.open_min { v > b.min } else { v >= b.min };
    if above && v <= b.max {
        Ok(v)
    } else {
        Err(outside(v, info))
    }
}

/// A number given as a number or as text ("0.5").
fn number_of(v: &ParamValue, what: &str) -> Result<f64, String> {
    match v {
        ParamValue::Num(x) if x.is_finite() => Ok(*x),
        ParamValue::Str(s) => match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!("'{s}' is not {what}")),
        },
        v => Err(format!("expected {what}, got {v}")),
    }
}

impl ParamType for f64 {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Number(x) => Some(x),
            _ => None,
        }
    }
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
        let Kind::Number(b) = info.kind else { return Err(format!("is a {}, not a number", info.kind.name())) };
        in_bounds(number_of(v, "a number")?, b, info)
    }
}

fn whole(v: &ParamValue, info: &ParamInfo) -> Result<i64, String> {
    let Kind::Integer(b) = info.kind else { return Err(format!("is a {}, not an integer", info.kind.name())) };
    let x = number_of(v, "a whole number")?;
    if x.fract() != 0.0 {
        return Err(format!("{x} is not a whole number"));
    }
    // Beyond ±2^63 the cast saturates, and the range check refuses it.
    in_bounds(x as i64, b, info)
}

impl<T: Integer> ParamType for T {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Integer(i) => T::try_from(i).ok(),
            _ => None,
        }
    }
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
        let i = whole(v, info)?;
        T::try_from(i).map_err(|_| outside(i, info))
    }
}

impl ParamType for Option<u64> {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Integer(i) => Some(u64::try_from(i).ok()),
            DefaultValue::Unset => Some(None),
            _ => None,
        }
    }
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
        if is_none_word(v, info) {
            return Ok(None);
        }
        let i = whole(v, info)?;
        u64::try_from(i).map(Some).map_err(|_| outside(i, info))
    }
}

fn is_none_word(v: &ParamValue, info: &ParamInfo) -> bool {
    matches!(v, ParamValue::Str(s) if info.none.is_some_and(|w| s.trim() == w) || matches!(s.trim(), "none" | "off"))
}

/// A quantity by `units::Quantity`'s one rule: a number is in the base unit;
/// text is converted by its unit, and text without one is refused.
fn quantity<Q: Quantity>(v: &ParamValue) -> Result<Q, String> {
    let r = match v {
        ParamValue::Num(x) => Q::from_number(*x),
        ParamValue::Str(s) => Q::from_text(s),
        ParamValue::Bool(_) => {
            return Err(format!("expected a {} such as \"{}\", got {v}", Q::KIND.name(), Q::KIND.example()))
        }
    };
    r.map_err(|e| e.to_string())
}

macro_rules! quantity_param {
    ($t:ty, $variant:ident) => {
        impl ParamType for $t {
            fn declared(info: &ParamInfo) -> Option<Self> {
                match info.default {
                    DefaultValue::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
                let Kind::$variant(b) = info.kind else {
                    return Err(format!("is a {}, not a {}", info.kind.name(), stringify!($variant)));
                };
                in_bounds(quantity::<$t>(v)?, b, info)
            }
        }
    };
}
quantity_param!(Duration, Duration);
quantity_param!(DataRate, Rate);
quantity_param!(DataSize, Size);

impl ParamType for Option<Duration> {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Duration(d) => Some(Some(d)),
            DefaultValue::Unset => Some(None),
            _ => None,
        }
    }
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
        if is_none_word(v, info) {
            return Ok(None);
        }
        let d: Duration = quantity(v)?;
        if d == Duration::ZERO {
            return Ok(None);
        }
        let Kind::Duration(b) = info.kind else { return Err(format!("is a {}, not a duration", info.kind.name())) };
        in_bounds(d, b, info).map(Some)
    }
}

impl ParamType for bool {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Bool(b) => Some(b),
            _ => None,
        }
    }
    fn read(v: &ParamValue, _info: &ParamInfo) -> Result<Self, String> {
        match v {
            ParamValue::Bool(b) => Ok(*b),
            v => Err(format!("expected true or false, got {v}")),
        }
    }
}

impl ParamType for &'static str {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match (info.default, info.kind) {
            (DefaultValue::Text(s), Kind::Choice(_)) => Some(s),
            _ => None,
        }
    }
    fn read(v: &ParamValue, info: &ParamInfo) -> Result<Self, String> {
        let Kind::Choice(allowed) = info.kind else { return Err(format!("is a {}, not a choice", info.kind.name())) };
        match v {
            ParamValue::Str(s) => allowed.iter().find(|a| **a == s.as_str()).copied(),
            _ => None,
        }
        .ok_or_else(|| format!("{v} is not one of {}", allowed.join(", ")))
    }
}

impl ParamType for String {
    fn declared(info: &ParamInfo) -> Option<Self> {
        match info.default {
            DefaultValue::Text(s) => Some(s.to_string()),
            _ => None,
        }
    }
    fn read(v: &ParamValue, _info: &ParamInfo) -> Result<Self, String> {
        match v {
            ParamValue::Str(s) => Ok(s.clone()),
            v => Err(format!("expected text, got {v}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Param<DataRate> =
        Param::rate("rate", DataRate::from_mbps(1), DataRate::ZERO, DataRate::MAX, "rate").above_min();
    const K: Param<f64> = Param::number("k", 1.0, 0.6, 1.0, "k");
    const MODE: Param<&str> = Param::choice("mode", "a", &["a", "b"], "mode");
    const N: Param<u16> = Param::integer("n", 10, 1, 48, "n");
    const KEYS: Param<Option<Duration>> =
        Param::optional_duration("keys", None, Duration::from_millis(100), Duration::MAX, "none", "keys");

    #[test]
    fn typed_access() {
        let p = Params::new()
            .with("rate", ParamValue::Str("2Mbps".into()))
            .with("k", ParamValue::Num(0.5))
            .with("mode", ParamValue::Str("x".into()));
        assert_eq!(p.get(&RATE).unwrap(), DataRate::from_mbps(2));
        assert_eq!(p.get(&K).unwrap_err().to_string(), "k: 0.5 is outside [0.6, 1]");
        assert_eq!(p.get(&MODE).unwrap_err().to_string(), "mode: \"x\" is not one of a, b");
        assert_eq!(Params::new().get(&K).unwrap(), 1.0);
        assert_eq!(Params::new().get_or(&K, 3.0).unwrap(), 3.0);
    }

    #[test]
    fn bare_numbers_are_base_units_and_integers_are_whole() {
        let num = |k: &str, v: f64| Params::new().with(k, ParamValue::Num(v));
        assert_eq!(num("rate", 64_000.0).get(&RATE).unwrap(), DataRate::from_kbps(64));
        assert!(num("rate", 0.0).get(&RATE).is_err());
        assert_eq!(num("n", 12.0).get(&N).unwrap(), 12);
        assert_eq!(num("n", 2.5).get(&N).unwrap_err().reason, "2.5 is not a whole number");
        assert_eq!(num("n", 49.0).get(&N).unwrap_err().reason, "49 is outside [1, 48]");
        assert_eq!(num("keys", 2.0).get(&KEYS).unwrap(), Some(Duration::from_secs(2)));
        assert_eq!(num("keys", 0.0).get(&KEYS).unwrap(), None);
        let off = Params::new().with("keys", ParamValue::Str("off".into()));
        assert_eq!(off.get(&KEYS).unwrap(), None);
    }

    #[test]
    fn listing_renders_the_typed_default_and_range() {
        assert_eq!((RATE.info().default_text(), RATE.info().range_text().unwrap()), ("1Mbps".into(), "> 0bps".into()));
        assert_eq!(K.or_in("game", 0.7).info().default_text(), "1 (game: 0.7)");
        assert_eq!(N.info().range_text().unwrap(), "[1, 48]");
        assert_eq!(KEYS.info().default_text(), "none");
        assert_eq!(MODE.info().kind.name(), "choice");
    }

    #[test]
    fn errors_read_source_field_reason() {
        let e = ConfigError::invalid("delta", "2 is outside (0, 1]").within("controller").within("flow[0]");
        assert_eq!(e.to_string(), "flow[0].controller.delta: 2 is outside (0, 1]");
        assert_eq!(e.in_source("a.toml").to_string(), "a.toml: flow[0].controller.delta: 2 is outside (0, 1]");
        assert_eq!(ConfigError::invalid("", "unknown controller 'x'").within("controller").field, "controller");
    }
}
