//! Random packet loss: independent (Bernoulli) or bursty (Gilbert–Elliott
//! two-state Markov chain), plus the `loss = ...` config forms.

use std::fmt;

use rtcc_core::rng::Rng;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::link::FieldError;

#[derive(Clone, Debug, Default, PartialEq)]
pub enum LossModel {
    #[default]
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state chain, stepped once per packet: good→bad with `p_gb`,
    /// bad→good with `p_bg`; then the packet is lost with the probability of
    /// the state it is in. `bad` is the current state (starts good).
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
}

impl LossModel {
    pub fn bernoulli(p: f64) -> Self {
        if p > 0.0 {
            LossModel::Bernoulli { p }
        } else {
            LossModel::None
        }
    }

    pub fn gilbert_elliott(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64) -> Self {
        LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad: false }
    }

    /// Draws the fate of one packet.
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli { p } => rng.chance(*p),
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let flip = if *bad { *p_bg } else { *p_gb };
                if rng.chance(flip) {
                    *bad = !*bad;
                }
                rng.chance(if *bad { *loss_bad } else { *loss_good })
            }
        }
    }

    /// Long-run loss rate. Gilbert–Elliott: stationary P(bad) =
    /// p_gb / (p_gb + p_bg); with both zero the chain stays in its state.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let pi_bad = if p_gb + p_bg > 0.0 {
                    p_gb / (p_gb + p_bg)
                } else if bad {
                    1.0
                } else {
                    0.0
                };
                (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
            }
        }
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossTable {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
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

impl LossSpec {
    /// Validates into a model; `field` names this entry in errors
    /// (e.g. `"link.loss"`).
    pub fn build(&self, field: &str) -> Result<LossModel, FieldError> {
        let sub = |k: &str| format!("{field}.{k}");
        Ok(match self {
            LossSpec::Probability(p) => LossModel::bernoulli(probability(field, "loss", *p)?),
            LossSpec::Table(LossTable::None) => LossModel::None,
            LossSpec::Table(LossTable::Bernoulli { p }) => LossModel::bernoulli(probability(&sub("p"), "p", *p)?),
            LossSpec::Table(LossTable::GilbertElliott { p_gb, p_bg, loss_good, loss_bad }) => {
                LossModel::gilbert_elliott(
                    probability(&sub("p_gb"), "p_gb", *p_gb)?,
                    probability(&sub("p_bg"), "p_bg", *p_bg)?,
                    probability(&sub("loss_good"), "loss_good", *loss_good)?,
                    probability(&sub("loss_bad"), "loss_bad", *loss_bad)?,
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_one_percent() {
        let mut m = LossModel::bernoulli(0.01);
        let mut rng = Rng::new(1);
        let n = 100_000;
        let lost = (0..n).filter(|_| m.lose(&mut rng)).count();
        let rate = lost as f64 / n as f64;
        assert!((0.009..=0.011).contains(&rate), "rate {rate}");
        assert_eq!(m.mean_loss(), 0.01);
        assert_eq!(LossModel::bernoulli(0.0), LossModel::None);
        assert!(!LossModel::None.lose(&mut rng));
    }

    #[test]
    fn gilbert_elliott_matches_stationary_mean() {
        // π_bad = 0.01 / 0.31 ≈ 3.23 % lost when the bad state loses everything.
        let mut m = LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0);
        let expect = 0.01 / 0.31;
        assert!((m.mean_loss() - expect).abs() < 1e-12);
        let mut rng = Rng::new(7);
        let n = 500_000;
        let mut lost = 0;
        let mut bursts = 0;
        let mut prev = false;
        for _ in 0..n {
            let l = m.lose(&mut rng);
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate / expect - 1.0).abs() < 0.1, "rate {rate} vs {expect}");
        // Losses come in bursts of mean length 1 / p_bg ≈ 3.3.
        let burst = lost as f64 / bursts as f64;
        assert!((burst - 1.0 / 0.3).abs() < 0.4, "burst {burst}");

        let m = LossModel::gilbert_elliott(0.1, 0.4, 0.01, 0.5);
        assert!((m.mean_loss() - (0.8 * 0.01 + 0.2 * 0.5)).abs() < 1e-12);
    }

    #[derive(Deserialize)]
    struct T {
        loss: LossSpec,
    }

    fn parse(s: &str) -> Result<LossModel, String> {
        let t: T = toml::from_str(s).map_err(|e| e.to_string())?;
        t.loss.build("link.loss").map_err(|e| e.to_string())
    }

    #[test]
    fn config_forms() {
        assert_eq!(parse("loss = 0.0"), Ok(LossModel::None));
        assert_eq!(parse("loss = 0"), Ok(LossModel::None));
        assert_eq!(parse("loss = 0.02"), Ok(LossModel::Bernoulli { p: 0.02 }));
        assert_eq!(parse("loss = { kind = \"bernoulli\", p = 0.01 }"), Ok(LossModel::Bernoulli { p: 0.01 }));
        assert_eq!(parse("loss = { kind = \"none\" }"), Ok(LossModel::None));
        assert_eq!(
            parse("loss = { kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 1.0 }"),
            Ok(LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0))
        );
        assert_eq!(
            parse("loss = { kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }"),
            Ok(LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0))
        );
    }

    #[test]
    fn config_errors_name_the_field() {
        assert_eq!(parse("loss = 1.5").unwrap_err(), "link.loss: loss = 1.5 is not a probability in [0, 1]");
        let e = parse("loss = { kind = \"gilbert_elliott\", p_gb = -0.1, p_bg = 0.3 }").unwrap_err();
        assert!(e.starts_with("link.loss.p_gb:"), "{e}");
        let e = parse("loss = { kind = \"bernoulli\", q = 0.1 }").unwrap_err();
        assert!(e.contains("unknown field `q`"), "{e}");
        let e = parse("loss = { kind = \"burst\" }").unwrap_err();
        assert!(e.contains("unknown variant `burst`"), "{e}");
        let e = parse("loss = \"1%\"").unwrap_err();
        assert!(e.contains("a loss probability"), "{e}");
    }
}
