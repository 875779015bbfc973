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

/// Largest profile file read: `rtcc calibrate-encoder` writes about 1 kB, so
/// anything near this is not a profile, and is refused before it is read.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// What a profile file holds at its top level.
const TOP_LEVEL: &[&str] = &["codec", "encoder", "quality"];

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
            let size = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len();
            if size > MAX_PROFILE_BYTES {
                return Err(format!(
                    "{}: {size} bytes is above the {} kB a profile file may have",
                    path.display(),
                    MAX_PROFILE_BYTES / 1024
                ));
            }
            (
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?,
                path.display().to_string(),
            )
        }
    };
    let mut t: toml::Table = toml::from_str(&text).map_err(|e| format!("{origin}: {}", e.message()))?;
    // A value outside the tables would be ignored: say where it belongs.
    if let Some(k) = t.keys().find(|k| !TOP_LEVEL.contains(&k.as_str())) {
        return Err(format!(
            "{origin}: '{k}' is at the top level; model parameters go in the [encoder] table, rate–quality ones in \
             [quality.<content>] (top-level keys: {})",
            TOP_LEVEL.join(", ")
        ));
    }
    let table = |t: &mut toml::Table, k: &str| match t.remove(k) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(x)) => Ok(x),
        Some(_) => Err(format!("{origin}: '{k}' must be a table")),
    };
    let profile = Profile { encoder: table(&mut t, "encoder")?, quality: table(&mut t, "quality")? };
    if profile.encoder.is_empty() && profile.quality.is_empty() {
        return Err(format!("{origin}: no [encoder] or [quality] values: the profile would change nothing"));
    }
    Ok(profile)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile file with `text` in a folder of its own; the folder.
    fn folder(name: &str, text: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("rtcc-profile-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("p.toml"), text).unwrap();
        dir
    }

    fn refused(name: &str, text: &[u8]) -> String {
        let dir = folder(name, text);
        let e = load("p.toml", &dir).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(e.starts_with(&dir.join("p.toml").display().to_string()), "{e}");
        assert!(!e.contains('\n'), "{e}");
        e
    }

    #[test]
    fn a_calibrated_content_profile_loads() {
        let dir = folder("ok", b"[encoder]\nprofile = \"dynamic\"\nti = 8.0\n");
        let p = load("p.toml", &dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(p.encoder.get("ti").and_then(|v| v.as_float()), Some(8.0));
    }

    #[test]
    fn values_at_the_top_level_are_refused() {
        let e = refused("top", b"profile = \"dynamic\"\nti = 8.0\n");
        assert!(e.contains("'profile' is at the top level") && e.contains("[encoder]"), "{e}");
    }

    #[test]
    fn an_empty_profile_is_refused() {
        assert!(refused("empty", b"").contains("no [encoder] or [quality] values"));
        assert!(refused("empty-table", b"[encoder]\n").contains("no [encoder] or [quality] values"));
    }

    #[test]
    fn a_file_above_the_bound_is_refused_unread() {
        let mut big = b"[encoder]\n".to_vec();
        big.resize(MAX_PROFILE_BYTES as usize + 1, b'#');
        let e = refused("big", &big);
        assert!(e.contains(&format!("{} bytes is above the 1024 kB", MAX_PROFILE_BYTES + 1)), "{e}");
    }

    #[test]
    fn builtin_profiles_still_load() {
        for name in builtin_names() {
            load(name, Path::new(".")).unwrap();
        }
    }
}
