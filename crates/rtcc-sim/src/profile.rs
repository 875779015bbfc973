//! Encoder profiles: constants of the `lagging` encoder model and of the
//! rate–quality model measured from a real codec by `rtcc calibrate-encoder`.
//! A flow loads one with `encoder = { kind = "lagging", profile = "vp8" }`
//! (a built-in name, or a path to a profile file); parameters written next to
//! `profile` override the profile's.
//!
//! A profile file:
//!
//! ```toml
//! codec = "vp8"
//! [encoder]                  # lagging-model parameters
//! tau_up = "1.1s"
//! [quality.talking-head]     # rate–quality model parameters, per content
//! psnr_at_1bpp = 47.0
//! ```

use std::path::Path;

use rtcc_core::controller::{ParamInfo, ParamValue, Params};

/// Built-in profiles, made by `rtcc calibrate-encoder` (see each file's
/// header for the command and machine).
const BUILTIN: &[(&str, &str)] =
    &[("vp8", include_str!("../profiles/vp8.toml")), ("h264", include_str!("../profiles/h264.toml"))];

pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A parsed profile.
#[derive(Clone, Debug)]
pub struct Profile {
    pub encoder: toml::Table,
    pub quality: toml::Table,
}

/// Load `name` (built-in) or a file path relative to `base`.
pub fn load(name: &str, base: &Path) -> Result<Profile, String> {
    let (text, origin) = match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((_, t)) => (t.to_string(), format!("built-in profile '{name}'")),
        None => {
            let path = base.join(name);
            if !path.is_file() {
                return Err(format!(
                    "'{name}' is neither a built-in profile ({}) nor a file ({})",
                    builtin_names().join(", "),
                    path.display()
                ));
            }
            (
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?,
                path.display().to_string(),
            )
        }
    };
    let mut t: toml::Table = toml::from_str(&text).map_err(|e| format!("{origin}: {}", e.message()))?;
    let table = |t: &mut toml::Table, k: &str| match t.remove(k) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(x)) => Ok(x),
        Some(_) => Err(format!("{origin}: '{k}' must be a table")),
    };
    Ok(Profile { encoder: table(&mut t, "encoder")?, quality: table(&mut t, "quality")? })
}

/// A TOML scalar as a parameter value; `None` for arrays and tables.
pub fn param_value(v: &toml::Value) -> Option<ParamValue> {
    Some(match v {
        toml::Value::String(s) => ParamValue::Str(s.clone()),
        toml::Value::Integer(i) => ParamValue::Num(*i as f64),
        toml::Value::Float(f) => ParamValue::Num(*f),
        toml::Value::Boolean(b) => ParamValue::Bool(*b),
        _ => return None,
    })
}

/// Fill `p` with the profile's values for the parameters `known` documents,
/// leaving those already set.
pub fn fill(p: &mut Params, from: &toml::Table, known: &[ParamInfo]) {
    for (k, v) in from {
        if known.iter().any(|i| i.name == k) && !p.0.contains_key(k) {
            if let Some(pv) = param_value(v) {
                p.0.insert(k.clone(), pv);
            }
        }
    }
}

/// The profile's quality table for a content kind.
pub fn quality_for<'a>(p: &'a Profile, content: &str) -> Option<&'a toml::Table> {
    p.quality.get(content).and_then(|v| v.as_table())
}
