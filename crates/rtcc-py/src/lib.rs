//! Python bindings: the only place Python touches rtcc. Errors at the edge
//! become `ScenarioError` (a `ValueError`) carrying one line
//! `source: field: reason`.

/// mimalloc for every Rust allocation of the extension: with many flows its
/// per-size-class pages keep each kind of small object together (see the
/// workspace Cargo.toml); counted, for `rtcc bench`'s heap per flow.
#[global_allocator]
static GLOBAL: rtcc_sim::heap::Counting<mimalloc::MiMalloc> = rtcc_sim::heap::Counting(mimalloc::MiMalloc);

use pyo3::create_exception;
use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use rtcc_core::controller::{is_reconstruction, listed_names, params_of, summary_of, ParamInfo, ParamValue};
use rtcc_core::encoder::{Encoder, EncoderConfig, RateControl, KINDS};
use rtcc_core::resolution::{Resolution, ResolutionPolicy};
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataRate, Duration, QuantityKind, Time};
use rtcc_sim::metrics::{Column, Table};
use rtcc_sim::video::{real_params, REAL_KINDS};
use rtcc_sim::{Scenario, ScenarioError as SimError, Simulation as Sim};
use rtcc_video::calibrate;
use rtcc_video::codec::Codec;
use rtcc_video::real::ContentSpec;

mod app;
mod benchaimd;
mod live;
mod pyctl;

create_exception!(_rtcc, ScenarioError, PyValueError);

fn to_py_err(e: SimError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Simulated time between checks for a report in `run_until_report`.
const REPORT_SLICE: Duration = Duration::from_millis(1);

/// Simulated time between checks for a failed policy while one is registered.
const POLICY_SLICE: Duration = Duration::from_millis(100);

#[pyclass(module = "rtcc._rtcc", unsendable)]
struct Simulation {
    sim: Sim,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (
        scenario_text, source = "<scenario>", seed = None, record_packets = true,
        photo_dir = None, video_dir = None, media_map = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        scenario_text: &str,
        source: &str,
        seed: Option<u64>,
        record_packets: bool,
        photo_dir: Option<PathBuf>,
        video_dir: Option<PathBuf>,
        media_map: Option<HashMap<PathBuf, PathBuf>>,
    ) -> PyResult<Self> {
        let mut sc = Scenario::parse_with(scenario_text, source, &media_map.unwrap_or_default()).map_err(to_py_err)?;
        sc.photo_dir = photo_dir;
        sc.video_dir = video_dir;
        let mut sim = Sim::new(sc, seed).map_err(to_py_err)?;
        if !record_packets {
            sim.set_record_packets(false);
        }
        Ok(Simulation { sim })
    }

    #[getter]
    fn duration_s(&self) -> f64 {
        self.sim.duration().as_secs_f64()
    }

    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.now().as_secs_f64()
    }

    /// Advance to `t_s` seconds of simulated time; False once the run is complete.
    fn run_until(&mut self, t_s: f64) -> PyResult<bool> {
        let t = if t_s.is_finite() { Time::from_secs_f64(t_s.max(0.0)) } else { Time::MAX };
        let more = if app::active() {
            // A policy that raised (or was interrupted) stops the run within
            // a slice, not at `t`.
            let mut reached = self.sim.now();
            loop {
                reached = t.min(reached + POLICY_SLICE);
                let more = self.sim.run_until(reached);
                if !more || reached >= t || app::failed() || self.sim.paused() {
                    break more;
                }
            }
        } else {
            self.sim.run_until(t)
        };
        if let Some(e) = self.sim.budget_error() {
            return Err(to_py_err(e));
        }
        // A policy of rtcc.app that raised stops the run with its exception.
        match app::take_failure() {
            Some(e) => Err(e),
            None => Ok(more),
        }
    }

    /// Advance until a controller written in Python has handled a report, or
    /// to `t_s`: the run stops right after the event that delivered the
    /// report, so what Python changes before the next call (the decision a
    /// Gymnasium agent sets) applies from the report's instant. False once
    /// the run is complete.
    fn run_until_report(&mut self, t_s: f64) -> PyResult<bool> {
        let t = if t_s.is_finite() { Time::from_secs_f64(t_s.max(0.0)) } else { Time::MAX };
        // What an agent decided since the last report applies from now, not
        // from the controller's next call.
        self.sim.refresh_decisions();
        pyctl::take_reported();
        self.sim.set_pause_flag(Some(&pyctl::REPORTED));
        let mut reached = self.sim.now();
        let more = loop {
            // Slices, so a failed controller stops the run within one.
            reached = t.min(reached + REPORT_SLICE);
            let more = self.sim.run_until(reached);
            if !more || reached >= t || pyctl::take_reported() || app::failed() {
                break more;
            }
        };
        self.sim.set_pause_flag(None);
        if let Some(e) = self.sim.budget_error() {
            return Err(to_py_err(e));
        }
        match app::take_failure() {
            Some(e) => Err(e),
            None => Ok(more),
        }
    }

    /// Saved-video streams (`video_dir`): [(path, fps)], to turn into MP4.
    fn video_files(&self) -> Vec<(String, f64)> {
        self.sim.saved_videos.iter().map(|(p, f)| (p.display().to_string(), *f)).collect()
    }

    /// Table rows kept and not yet taken.
    #[getter]
    fn pending_rows(&self) -> usize {
        self.sim.pending_rows()
    }

    /// Make `run_until` return early (with `paused` true) once `rows` more
    /// packet rows are held, so taking them as the run goes keeps memory
    /// flat whatever the load; None never pauses.
    #[pyo3(signature = (rows))]
    fn set_pause_rows(&mut self, rows: Option<usize>) {
        self.sim.set_pause_rows(rows);
    }

    /// Whether the last `run_until` returned early for `set_pause_rows`.
    #[getter]
    fn paused(&self) -> bool {
        self.sim.paused()
    }

    /// Takes the table rows that are final so far, as `finish()["tables"]`;
    /// `finish` then returns only the rest. Each table's rows are flow by flow.
    fn take_tables<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.sim.take_tables();
        let tables = PyDict::new(py);
        tables.set_item("packets", table(py, &t.packets)?)?;
        tables.set_item("frames", table(py, &t.frames)?)?;
        tables.set_item("timeseries", table(py, &t.timeseries)?)?;
        tables.set_item("link", table(py, &t.link)?)?;
        Ok(tables)
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if !self.sim.is_done() {
            self.sim.run();
        }
        if let Some(e) = self.sim.budget_error() {
            return Err(to_py_err(e));
        }
        if let Some(e) = app::take_failure() {
            return Err(e);
        }
        if let Some(e) = self.sim.failure() {
            return Err(PyRuntimeError::new_err(format!("real video failed: {e}")));
        }
        let out = self.sim.output();
        finished(py, serde_json_string(&out.summary)?, &out)
    }
}

/// What `finish()` returns: the summary's JSON, the timing's (wall time apart
/// from the summary, whose bytes depend on the seed only) and the tables.
pub(crate) fn finished<'py>(py: Python<'py>, summary: String, out: &rtcc_sim::Output) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary", summary)?;
    d.set_item("timing", serde_json_string(&out.timing)?)?;
    let tables = PyDict::new(py);
    tables.set_item("packets", table(py, &out.packets)?)?;
    tables.set_item("frames", table(py, &out.frames)?)?;
    tables.set_item("timeseries", table(py, &out.timeseries)?)?;
    tables.set_item("link", table(py, &out.link)?)?;
    d.set_item("tables", tables)?;
    Ok(d)
}

fn serde_json_string<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let (dtype, bytes): (&str, Vec<u8>) = match col {
            Column::F64(v) => ("f64", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::I64(v) => ("i64", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::U8(v) => ("u8", v.clone()),
        };
        d.set_item(name, (dtype, PyBytes::new(py, &bytes)))?;
    }
    Ok(d)
}

fn info_list<'py>(
    py: Python<'py>,
    items: impl Iterator<Item = (String, String, Vec<ParamInfo>)>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (name, summary, params) in items {
        let d = PyDict::new(py);
        d.set_item("name", name)?;
        d.set_item("summary", summary)?;
        let ps = PyList::empty(py);
        for p in &params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("default", p.default_text())?;
            pd.set_item("doc", p.doc)?;
            pd.set_item("kind", p.kind.name())?;
            pd.set_item("range", p.range_text())?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Registered controllers with their parameters, and whether each is a
/// reconstruction (`reconstruction`).
#[pyfunction]
fn controllers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let names = listed_names();
    let list = info_list(
        py,
        names.iter().map(|n| {
            let summary = summary_of(n).unwrap_or_default();
            let params = params_of(n).unwrap_or_default();
            (n.clone(), summary, params)
        }),
    )?;
    for (item, n) in list.iter().zip(&names) {
        let item = item.downcast::<PyDict>()?;
        item.set_item("reconstruction", is_reconstruction(n))?;
        item.set_item("python", pyctl::is_python(n))?;
    }
    Ok(list)
}

/// Encoder model kinds with their parameters.
#[pyfunction]
fn encoders(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    info_list(
        py,
        KINDS
            .iter()
            .map(|k| {
                let summary = match *k {
                    "ideal" => "every frame exactly target / fps",
                    "noise" => "gaussian frame-size noise around target / fps",
                    "content" => {
                        "frame sizes from a content track (SI/TI, scene cuts; static or dynamic) through x264-like \
                         rate control; SI/TI reported per frame"
                    }
                    _ => "follows target changes with a lag (seconds up, faster down), periodic key frames",
                };
                (k.to_string(), summary.to_string(), EncoderConfig::param_info(k).to_vec())
            })
            .chain(REAL_KINDS.iter().map(|k| {
                let summary = match *k {
                    "vp8" => "real VP8 (libvpx) driven as WebRTC does; decoded PSNR/SSIM",
                    _ => "real H.264 (OpenH264) driven as WebRTC does; decoded PSNR/SSIM",
                };
                (k.to_string(), summary.to_string(), real_params(k).to_vec())
            })),
    )
}

/// TOML text of the built-in demo scenario.
#[pyfunction]
fn default_scenario() -> &'static str {
    rtcc_sim::DEFAULT_SCENARIO
}

/// Run one standard speed workload ("fixed", "gcc", "vp8", "tcp", "flows-N").
#[pyfunction(name = "bench")]
fn run_bench<'py>(py: Python<'py>, workload: &str) -> PyResult<Bound<'py, PyDict>> {
    let r = rtcc_sim::bench::run_workload(workload).map_err(to_py_err)?;
    let d = PyDict::new(py);
    d.set_item("workload", r.workload)?;
    d.set_item("sim_s", r.sim_s)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("speedup", r.speedup)?;
    d.set_item("packets", r.packets)?;
    d.set_item("packets_per_s", r.packets_per_s)?;
    d.set_item("events", r.events)?;
    d.set_item("flows", r.flows)?;
    d.set_item("ns_per_packet", r.ns_per_packet)?;
    d.set_item("goodput_mbps", r.goodput_mbps)?;
    d.set_item("rss_per_flow_bytes", r.rss_per_flow_bytes)?;
    d.set_item("heap_per_flow_bytes", r.heap_per_flow_bytes)?;
    Ok(d)
}

/// A content description in scenario syntax (`"game"` or an inline table
/// such as `{ kind = "game", resolution = "360p" }`), resolved as a flow's.
fn content_of(content: &str, photo_dir: Option<PathBuf>) -> PyResult<ContentSpec> {
    let bad = |r: String| ScenarioError::new_err(format!("content: {r}"));
    let v: toml::Value = toml::from_str::<toml::Table>(&format!("c = {content}"))
        .map_err(|e| bad(e.message().to_string()))?
        .remove("c")
        .ok_or_else(|| bad("missing".into()))?;
    let res = ResolutionPolicy::Fixed(Resolution::R360);
    let (mut spec, _) = rtcc_sim::video::parse_content(Some(&v), res, std::path::Path::new(""), &HashMap::new())
        .map_err(|(f, r)| ScenarioError::new_err(format!("{f}: {r}")))?;
    if let (ContentSpec::Generated { motion, photos, .. }, Some(dir)) = (&mut spec, photo_dir) {
        if photos.is_empty() {
            *photos = rtcc_sim::video::default_photos(*motion, &dir);
        }
    }
    Ok(spec)
}

fn codec_of(name: &str) -> PyResult<Codec> {
    Codec::parse(name).ok_or_else(|| ScenarioError::new_err(format!("codec: '{name}' is not one of vp8, h264")))
}

/// Encode a content source with a real codec on a schedule of targets and
/// measure every frame (calibration). Returns columns as lists.
#[pyfunction]
#[pyo3(signature = (
    codec, content, fps, duration_s, schedule, encode_size = None, speed = None, measure = true,
    force_keys = Vec::new(), photo_dir = None
))]
#[allow(clippy::too_many_arguments)]
fn encode_sequence<'py>(
    py: Python<'py>,
    codec: &str,
    content: &str,
    fps: f64,
    duration_s: f64,
    schedule: Vec<(f64, u32)>,
    encode_size: Option<(u32, u32)>,
    speed: Option<i32>,
    measure: bool,
    force_keys: Vec<u64>,
    photo_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = content_of(content, photo_dir)?;
    let codec = codec_of(codec)?;
    let frames = py
        .detach(|| {
            calibrate::encode_sequence(
                codec,
                &spec,
                fps,
                duration_s,
                &schedule,
                encode_size,
                speed,
                measure,
                &force_keys,
            )
        })
        .map_err(PyRuntimeError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("t", frames.iter().map(|f| f.t).collect::<Vec<_>>())?;
    d.set_item("target_bps", frames.iter().map(|f| f.target_bps).collect::<Vec<_>>())?;
    d.set_item("size", frames.iter().map(|f| f.size).collect::<Vec<_>>())?;
    d.set_item("key", frames.iter().map(|f| f.key).collect::<Vec<_>>())?;
    d.set_item("qp", frames.iter().map(|f| f.qp).collect::<Vec<_>>())?;
    d.set_item("psnr", frames.iter().map(|f| f.psnr).collect::<Vec<_>>())?;
    d.set_item("ssim", frames.iter().map(|f| f.ssim).collect::<Vec<_>>())?;
    d.set_item("si", frames.iter().map(|f| f.si).collect::<Vec<_>>())?;
    d.set_item("ti", frames.iter().map(|f| f.ti).collect::<Vec<_>>())?;
    d.set_item("encode_ms", frames.iter().map(|f| f.encode_ms).collect::<Vec<_>>())?;
    Ok(d)
}

/// A frozen picture against the moving source: [(k, PSNR dB, SSIM)].
#[pyfunction]
#[pyo3(signature = (content, fps, starts = 8, span_s = 20.0, max_k = 60, photo_dir = None))]
fn frozen_curve(
    py: Python<'_>,
    content: &str,
    fps: f64,
    starts: u32,
    span_s: f64,
    max_k: u32,
    photo_dir: Option<PathBuf>,
) -> PyResult<Vec<(u32, f64, f64)>> {
    let spec = content_of(content, photo_dir)?;
    py.detach(|| calibrate::frozen_curve(&spec, fps, starts, span_s, max_k)).map_err(PyRuntimeError::new_err)
}

/// `count` source pictures from frame `start` as I420 bytes (for encoding
/// them with other tools): (width, height, [frame bytes]).
#[pyfunction]
#[pyo3(signature = (content, fps, start, count, photo_dir = None))]
fn content_frames<'py>(
    py: Python<'py>,
    content: &str,
    fps: f64,
    start: u64,
    count: u64,
    photo_dir: Option<PathBuf>,
) -> PyResult<(u32, u32, Vec<Bound<'py, PyBytes>>)> {
    let spec = content_of(content, photo_dir)?;
    let mut src = spec.open(fps).map_err(PyRuntimeError::new_err)?;
    let (w, h) = src.size();
    let mut out = Vec::with_capacity(count as usize);
    for i in start..start + count {
        let p = src.frame(i);
        let mut b = Vec::with_capacity(p.y.len() + 2 * p.u.len());
        b.extend_from_slice(&p.y);
        b.extend_from_slice(&p.u);
        b.extend_from_slice(&p.v);
        out.push(PyBytes::new(py, &b));
    }
    Ok((w, h, out))
}

/// ITU-T P.910 spatial and temporal information of `cur` against `prev`,
/// both `width`×`height` pictures whose first `width`·`height` bytes are the
/// luma plane (I420 as `content_frames` gives them): (SI, TI). Pass the same
/// picture twice for SI alone (TI 0).
#[pyfunction]
fn si_ti(py: Python<'_>, width: u32, height: u32, prev: &[u8], cur: &[u8]) -> PyResult<(f64, f64)> {
    let n = width as usize * height as usize;
    if width < 3 || height < 3 || prev.len() < n || cur.len() < n {
        return Err(PyValueError::new_err(format!(
            "si_ti: pictures of {} and {} bytes do not hold a {width}x{height} luma plane (3x3 at least)",
            prev.len(),
            cur.len()
        )));
    }
    let (prev, cur) = (&prev[..n], &cur[..n]);
    Ok(py.detach(|| (rtcc_video::content::si(width, height, cur), rtcc_video::content::ti(prev, cur))))
}

/// A quantity by the scenario rule (`rtcc_core::units::Quantity`): text
/// with a unit ("25ms", "3Mbps", "1500B"; text without one is refused), or a
/// bare number (int or float) in the base unit of `kind` — seconds for
/// "duration", bits per second for "rate", bytes for "size". Returns the value
/// in that base unit; a refused value raises ValueError with the reason.
#[pyfunction]
fn parse_quantity(value: &Bound<'_, PyAny>, kind: &str) -> PyResult<f64> {
    let k = QuantityKind::parse(kind)
        .ok_or_else(|| PyValueError::new_err(format!("kind '{kind}' is not one of duration, rate, size")))?;
    let parsed = if let Ok(text) = value.extract::<String>() {
        k.parse_base(&text)
    } else if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyValueError::new_err(format!("expected a {kind} such as \"{}\", got {value}", k.example())));
    } else if let Ok(v) = value.extract::<f64>() {
        k.number_base(v)
    } else {
        return Err(PyValueError::new_err(format!("expected a {kind} such as \"{}\", got {value}", k.example())));
    };
    parsed.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The `lagging` encoder model's output rate (bits/s) at each frame for the
/// given per-frame targets, without noise or key frames: what calibration
/// fits `tau_up`/`tau_down` against.
#[pyfunction]
fn lagging_rates(targets_bps: Vec<f64>, fps: f64, tau_up_s: f64, tau_down_s: f64) -> PyResult<Vec<f64>> {
    let bad = |r: &str| ScenarioError::new_err(r.to_string());
    if !(fps.is_finite() && fps > 0.0 && tau_up_s > 0.0 && tau_down_s > 0.0) {
        return Err(bad("fps and time constants must be positive"));
    }
    let cfg = EncoderConfig::Lagging {
        tau_up: Duration::from_secs_f64(tau_up_s),
        tau_down: Duration::from_secs_f64(tau_down_s),
        sigma: 0.0,
        key_interval: None,
        key_ratio: 1.0,
    };
    let interval = Duration::from_secs_f64(1.0 / fps);
    let mut enc = Encoder::new(cfg, interval, Rng::new(0));
    Ok(targets_bps
        .iter()
        .enumerate()
        .map(|(i, t)| {
            enc.skip(Time::ZERO + interval.mul_f64(i as f64), DataRate::from_bps_f64(t.max(0.0)));
            enc.output_rate().bps() as f64
        })
        .collect())
}

/// The `content` encoder model's rate control alone (no frame-size error,
/// no key frames): each frame's size over its budget for the given per-frame
/// complexities at a fixed frame rate, from the model itself
/// (`RateControl`), so calibration fits exactly what runs.
#[pyfunction]
fn content_rates(complexity: Vec<f64>, fps: f64, gamma: f64, rc_buffer_s: f64, rc_memory_s: f64) -> PyResult<Vec<f64>> {
    if !(fps.is_finite() && fps > 0.0 && rc_buffer_s > 0.0 && rc_memory_s > 0.0 && gamma.is_finite()) {
        return Err(ScenarioError::new_err("fps and time constants must be positive".to_string()));
    }
    let mut rc = RateControl::new(gamma, Duration::from_secs_f64(rc_buffer_s), Duration::from_secs_f64(rc_memory_s));
    let interval = Duration::from_secs_f64(1.0 / fps);
    Ok(complexity
        .iter()
        .map(|&c| {
            let r = rc.relative(c.max(1e-9), interval);
            rc.spent(r, interval);
            r
        })
        .collect())
}

/// The `content` encoder model at a fixed target: `params` as a scenario's
/// encoder table would give them (`{"profile": "static", "ti": 5.0}`).
/// Returns columns: size (bytes), key, si, ti, cut (a scene's first frame).
#[pyfunction]
#[pyo3(signature = (params, fps, duration_s, target_bps, seed = 1))]
fn content_model<'py>(
    py: Python<'py>,
    params: &Bound<'py, PyDict>,
    fps: f64,
    duration_s: f64,
    target_bps: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let bad = |r: String| ScenarioError::new_err(r);
    if !(fps.is_finite() && fps > 0.0 && duration_s.is_finite() && duration_s > 0.0 && target_bps >= 0.0) {
        return Err(bad("fps and duration must be positive, the target not negative".into()));
    }
    if duration_s * fps > 1e7 {
        return Err(bad("at most 10 million frames".into()));
    }
    let mut p = rtcc_core::controller::Params::new();
    for (k, v) in params.iter() {
        let k: String = k.extract()?;
        let v = if v.is_instance_of::<pyo3::types::PyBool>() {
            ParamValue::Bool(v.extract()?)
        } else if let Ok(x) = v.extract::<f64>() {
            ParamValue::Num(x)
        } else {
            ParamValue::Str(v.extract()?)
        };
        p.0.insert(k, v);
    }
    let cfg = EncoderConfig::from_params("content", &p).map_err(|e| bad(format!("encoder.{e}")))?;
    let interval = Duration::from_secs_f64(1.0 / fps);
    let mut enc = Encoder::new(cfg, interval, Rng::new(seed));
    let target = DataRate::from_bps_f64(target_bps);
    let mut cuts = Vec::new();
    let frames: Vec<_> = (0..(duration_s * fps).round() as i64)
        .map(|i| {
            let f = enc.encode(Time::ZERO + interval.mul_f64(i as f64), target);
            cuts.push(enc.complexity().is_some_and(|c| c.cut));
            f
        })
        .collect();
    let d = PyDict::new(py);
    d.set_item("size", frames.iter().map(|f| f.size.bytes()).collect::<Vec<_>>())?;
    d.set_item("key", frames.iter().map(|f| f.key).collect::<Vec<_>>())?;
    d.set_item("si", frames.iter().map(|f| f.si).collect::<Vec<_>>())?;
    d.set_item("ti", frames.iter().map(|f| f.ti).collect::<Vec<_>>())?;
    d.set_item("cut", cuts)?;
    Ok(d)
}

/// Which real codecs this build has: {"vp8": None | "why not", ...}.
#[pyfunction]
fn codecs(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for c in [Codec::Vp8, Codec::H264] {
        d.set_item(c.name(), c.available().err().map(|e| e.to_string()))?;
    }
    Ok(d)
}

/// One trace file read as a scenario's capacity table reads it:
/// {"format", "duration_s", "mean_bps", "samples", "implausible"} (the last:
/// rates above 1 Gbps left, for a table to say what to do with them).
#[pyfunction]
#[pyo3(signature = (path, format = None, unit = None, drop_above = None))]
fn trace_info<'py>(
    py: Python<'py>,
    path: PathBuf,
    format: Option<&str>,
    unit: Option<&str>,
    drop_above: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    use rtcc_sim::trace::{self, Trace, TraceFormat, TraceOptions};
    let bad = |field: &str, why: String| PyValueError::new_err(format!("{field}: {why}"));
    let format = match format {
        Some(f) => Some(
            TraceFormat::from_name(f)
                .ok_or_else(|| bad("format", format!("'{f}' is not a trace format ({})", TraceFormat::known())))?,
        ),
        None => None,
    };
    let unit_bps = match unit {
        Some(u) => Some(trace::unit_bps(u).ok_or_else(|| bad("unit", format!("'{u}' is not a rate unit")))?),
        None => None,
    };
    let mut t = trace::load_trace(&path, &TraceOptions { format, unit_bps })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let (Some(limit), Trace::Rates(r)) = (drop_above, &t) {
        let limit = limit.parse::<DataRate>().map_err(|e| bad("drop_above", e.to_string()))?;
        t = Trace::Rates(r.without_above(limit).map_err(|e| bad("drop_above", e))?.0);
    }
    let implausible = match &t {
        Trace::Rates(r) => r.pieces().iter().filter(|p| p.1 > trace::IMPLAUSIBLE_RATE.bps() as f64).count(),
        Trace::Mahimahi(_) => 0,
    };
    let d = PyDict::new(py);
    d.set_item("format", t.format().name())?;
    d.set_item("duration_s", t.duration().as_secs_f64())?;
    d.set_item("mean_bps", t.mean_rate().bps())?;
    d.set_item("samples", t.samples())?;
    d.set_item("implausible", implausible)?;
    Ok(d)
}

/// The trace formats and each one's default unit (None: Mahimahi's opportunities).
#[pyfunction]
fn trace_formats() -> Vec<(&'static str, Option<&'static str>)> {
    rtcc_sim::trace::TraceFormat::ALL.iter().map(|f| (f.name(), f.default_unit())).collect()
}

/// Registers the package's `data/traces` as the folder of trace sets a
/// scenario's `set = ...` names (RTCC_TRACES, when set, comes first).
fn register_bundled_traces(py: Python<'_>) {
    let dir = py
        .import("sys")
        .and_then(|sys| sys.getattr("modules"))
        .and_then(|m| m.get_item("rtcc"))
        .and_then(|rtcc| rtcc.getattr("__file__"))
        .and_then(|f| f.extract::<PathBuf>());
    if let Some(pkg) = dir.ok().as_deref().and_then(|f| f.parent()) {
        rtcc_sim::trace::register_traces_root(pkg.join("data").join("traces"));
    }
}

#[pymodule]
fn _rtcc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<Simulation>()?;
    m.add_class::<app::AppSession>()?;
    m.add_function(wrap_pyfunction!(app::app_register, m)?)?;
    m.add_function(wrap_pyfunction!(app::app_unregister, m)?)?;
    app::register();
    m.add("ControllerError", m.py().get_type::<pyctl::ControllerError>())?;
    m.add_function(wrap_pyfunction!(pyctl::pyctl_register, m)?)?;
    m.add_function(wrap_pyfunction!(pyctl::pyctl_helpers, m)?)?;
    m.add_function(wrap_pyfunction!(benchaimd::bench_aimd_register, m)?)?;
    pyctl::install();
    m.add_function(wrap_pyfunction!(live::live, m)?)?;
    m.add_function(wrap_pyfunction!(live::relay, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(encoders, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(encode_sequence, m)?)?;
    m.add_function(wrap_pyfunction!(frozen_curve, m)?)?;
    m.add_function(wrap_pyfunction!(codecs, m)?)?;
    m.add_function(wrap_pyfunction!(content_frames, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(lagging_rates, m)?)?;
    m.add_function(wrap_pyfunction!(si_ti, m)?)?;
    m.add_function(wrap_pyfunction!(content_rates, m)?)?;
    m.add_function(wrap_pyfunction!(content_model, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    register_bundled_traces(m.py());
    Ok(())
}
