//! Finds libvpx and OpenH264 with pkg-config and compiles the C shim
//! (csrc/codec_shim.c) over whichever of them is present.
//!
//! * library found   -> `cfg(rtcc_vpx)` / `cfg(rtcc_h264)` and
//!   `-DRTCC_HAVE_VPX` / `-DRTCC_HAVE_OPENH264` for the shim;
//! * library missing -> a `cargo:warning`, no cfg: the crate still builds and
//!   constructing that codec returns `CodecError::Unavailable`.
//!
//! `RTCC_NO_VPX=1` / `RTCC_NO_OPENH264=1` pretend a library is missing (to
//! test the fallback on a machine that has it).

use std::env;

struct Found {
    include_paths: Vec<std::path::PathBuf>,
    link_paths: Vec<std::path::PathBuf>,
    libs: Vec<String>,
}

/// Probes `pkg`; on failure prints one warning naming the codec that will be
/// unavailable and the package that provides it.
fn probe(pkg: &str, min_version: &str, disable_var: &str, codec: &str, deb: &str) -> Option<Found> {
    println!("cargo:rerun-if-env-changed={disable_var}");
    if env::var(disable_var).map(|v| !v.is_empty() && v != "0").unwrap_or(false) {
        println!("cargo:warning=rtcc-video: {disable_var} is set: building without {pkg}; {codec} will be unavailable");
        return None;
    }
    // Metadata is printed by hand below, after the shim, so the shim's static
    // library precedes the shared libraries it needs on the link line.
    match pkg_config::Config::new().atleast_version(min_version).cargo_metadata(false).probe(pkg) {
        Ok(lib) => Some(Found { include_paths: lib.include_paths, link_paths: lib.link_paths, libs: lib.libs }),
        Err(e) => {
            // The error text starts with the command line; keep pkg-config's own lines.
            let text = e.to_string();
            let lines: Vec<&str> =
                text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("Could not run")).collect();
            let first = lines.first().copied().unwrap_or("no details");
            println!(
                "cargo:warning=rtcc-video: {pkg} >= {min_version} not found with pkg-config ({first}); building \
                 without it, {codec} will be unavailable (Debian/Ubuntu: apt-get install {deb})"
            );
            None
        }
    }
}

/// A codec found missing is probed again once a `.pc` file appears (the
/// library installed later): cargo reruns this script when a watched
/// directory changes, so the next `pip install .` picks the codec up.
fn watch_pkg_config_dirs() {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let default = std::process::Command::new(pkg_config)
        .args(["--variable", "pc_path", "pkg-config"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let extra = env::var("PKG_CONFIG_PATH").unwrap_or_default();
    for dir in extra.split(':').chain(default.split(':')) {
        if !dir.is_empty() && std::path::Path::new(dir).is_dir() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rtcc_vpx)");
    println!("cargo::rustc-check-cfg=cfg(rtcc_h264)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/codec_shim.c");
    for var in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR", "PKG_CONFIG"] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let vpx = probe("vpx", "1.6", "RTCC_NO_VPX", "VP8", "libvpx-dev");
    let h264 = probe("openh264", "2.0", "RTCC_NO_OPENH264", "H.264", "libopenh264-dev");
    if vpx.is_none() || h264.is_none() {
        watch_pkg_config_dirs();
    }
    let found: Vec<&Found> = vpx.iter().chain(h264.iter()).collect();
    if found.is_empty() {
        return; // nothing to wrap: no shim, no C compiler needed
    }

    let mut build = cc::Build::new();
    build.file("csrc/codec_shim.c").warnings(true).extra_warnings(true);
    if vpx.is_some() {
        build.define("RTCC_HAVE_VPX", None);
        println!("cargo:rustc-cfg=rtcc_vpx");
    }
    if h264.is_some() {
        build.define("RTCC_HAVE_OPENH264", None);
        println!("cargo:rustc-cfg=rtcc_h264");
    }
    for f in &found {
        build.includes(&f.include_paths);
    }
    build.compile("rtcc_codec_shim");

    for f in &found {
        for p in &f.link_paths {
            println!("cargo:rustc-link-search=native={}", p.display());
        }
        for l in &f.libs {
            println!("cargo:rustc-link-lib={l}");
        }
    }
}
