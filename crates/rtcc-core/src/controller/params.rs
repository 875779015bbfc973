//! Typed controller parameters, independent of the scenario file format.

use std::collections::BTreeMap;

use super::ParamInfo;
use crate::units::{DataRate, DataSize, Duration};

#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Num(f64),
    Str(String),
    Bool(bool),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Num(v) => write!(f, "{v}"),
            ParamValue::Str(s) => write!(f, "\"{s}\""),
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Parameters given to a controller (`{ name = "gcc", loss = "classic" }`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(pub BTreeMap<String, ParamValue>);

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown controller '{name}' (registered: {known})")]
    UnknownController { name: String, known: String },
    #[error("{param}: unknown parameter (known: {known})")]
    UnknownParam { param: String, known: String },
    #[error("{param}: {reason}")]
    Invalid { param: String, reason: String },
}

impl ConfigError {
    pub fn invalid(param: &str, reason: impl Into<String>) -> Self {
        ConfigError::Invalid { param: param.to_string(), reason: reason.into() }
    }
}

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, k: &str, v: ParamValue) -> Self {
        self.0.insert(k.to_string(), v);
        self
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

    pub fn check_known(&self, known: &[ParamInfo]) -> Result<(), ConfigError> {
        for k in self.0.keys() {
            if !known.iter().any(|p| p.name == k) {
                return Err(ConfigError::UnknownParam {
                    param: k.clone(),
                    known: if known.is_empty() {
                        "none".into()
                    } else {
                        known.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                    },
                });
            }
        }
        Ok(())
    }

    pub fn f64(&self, name: &str, default: f64) -> Result<f64, ConfigError> {
        match self.0.get(name) {
            None => Ok(default),
            Some(ParamValue::Num(v)) if v.is_finite() => Ok(*v),
            Some(ParamValue::Str(s)) => {
                s.trim().parse::<f64>().map_err(|_| ConfigError::invalid(name, format!("'{s}' is not a number")))
            }
            Some(v) => Err(ConfigError::invalid(name, format!("expected a number, got {v}"))),
        }
    }

    /// A number within [lo, hi].
    pub fn f64_in(&self, name: &str, default: f64, lo: f64, hi: f64) -> Result<f64, ConfigError> {
        let v = self.f64(name, default)?;
        if !(lo..=hi).contains(&v) {
            return Err(ConfigError::invalid(name, format!("{v} is outside [{lo}, {hi}]")));
        }
        Ok(v)
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.0.get(name) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(v) => Err(ConfigError::invalid(name, format!("expected true or false, got {v}"))),
        }
    }

    /// One of `allowed` strings.
    pub fn choice(&self, name: &str, default: &'static str, allowed: &[&'static str]) -> Result<String, ConfigError> {
        match self.0.get(name) {
            None => Ok(default.to_string()),
            Some(ParamValue::Str(s)) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            Some(v) => Err(ConfigError::invalid(name, format!("{v} is not one of {}", allowed.join(", ")))),
        }
    }

    /// A rate: a string with unit ("3Mbps") or a number of bits per second.
    pub fn rate(&self, name: &str, default: DataRate) -> Result<DataRate, ConfigError> {
        match self.0.get(name) {
            None => Ok(default),
            Some(ParamValue::Num(v)) if v.is_finite() && *v >= 0.0 => Ok(DataRate::from_bps_f64(*v)),
            Some(ParamValue::Str(s)) => s.parse().map_err(|e| ConfigError::invalid(name, format!("{e}"))),
            Some(v) => Err(ConfigError::invalid(name, format!("expected a rate such as \"3Mbps\", got {v}"))),
        }
    }

    /// A duration: a string with unit ("25ms") or a number of seconds.
    pub fn duration(&self, name: &str, default: Duration) -> Result<Duration, ConfigError> {
        match self.0.get(name) {
            None => Ok(default),
            Some(ParamValue::Num(v)) if v.is_finite() && *v >= 0.0 => Ok(Duration::from_secs_f64(*v)),
            Some(ParamValue::Str(s)) => s.parse().map_err(|e| ConfigError::invalid(name, format!("{e}"))),
            Some(v) => Err(ConfigError::invalid(name, format!("expected a duration such as \"25ms\", got {v}"))),
        }
    }

    /// A size: a string with unit ("1500B") or a number of bytes.
    pub fn size(&self, name: &str, default: DataSize) -> Result<DataSize, ConfigError> {
        match self.0.get(name) {
            None => Ok(default),
            Some(ParamValue::Num(v)) if v.is_finite() && *v >= 0.0 => Ok(DataSize::from_bytes(v.round() as u64)),
            Some(ParamValue::Str(s)) => s.parse().map_err(|e| ConfigError::invalid(name, format!("{e}"))),
            Some(v) => Err(ConfigError::invalid(name, format!("expected a size such as \"1500B\", got {v}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn typed_access() {
        let p = Params::new()
            .with("rate", ParamValue::Str("2Mbps".into()))
            .with("k", ParamValue::Num(0.5))
            .with("mode", ParamValue::Str("x".into()));
        assert_eq!(p.rate("rate", DataRate::ZERO).unwrap(), DataRate::from_mbps(2));
        assert_eq!(p.f64("k", 1.0).unwrap(), 0.5);
        assert!(p.f64_in("k", 1.0, 0.6, 1.0).is_err());
        assert!(p.choice("mode", "a", &["a", "b"]).is_err());
        assert_eq!(p.f64("absent", 3.0).unwrap(), 3.0);
    }
}
