//! Controllers written in Python (`rtcc.pycontrollers`): a class with the
//! controller contract's methods, registered under a name as any Rust
//! controller is (`controller::register_named`), its parameters declared
//! as `Param`s so scenarios, `rtcc controllers` and the checks treat them
//! alike. Names not registered in this process (`py:module:Class`, an
//! installed package's `rtcc.controllers` entry point) are resolved on first
//! use by `rtcc.pycontrollers._resolve`, so a spawned worker finds them too.
//!
//! Calls are batched where it pays: one `on_feedback` per report with its
//! packets as numpy columns; `on_packet_sent`, `on_sender_state`,
//! `on_frame_encoded` and the timer only when the class defines them (looked
//! up once). The decision is read back once after each call and checked (no
//! negative or NaN rate). An exception in user code stops the run as a
//! `ControllerError` naming the controller and method, the original as its
//! cause; the simulation raises it when its step returns (`app::take_failure`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3::IntoPyObjectExt;

use rtcc_core::controller::{
    self, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FecPlan, FrameInfo, FrameSchedule,
    Param, ParamInfo, Params, Pushback, SenderState, SentPacket,
};
use rtcc_core::feedback::{Feedback, ReportFormat};
use rtcc_core::packet::NO_FRAME;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

create_exception!(_rtcc, ControllerError, PyValueError);

/// A parameter as declared, typed for reading.
#[derive(Clone, Copy)]
enum Decl {
    Number(Param<f64>),
    Integer(Param<i64>),
    Duration(Param<Duration>),
    Rate(Param<DataRate>),
    Size(Param<DataSize>),
    Bool(Param<bool>),
    Choice(Param<&'static str>),
    Text(Param<String>),
}

impl Decl {
    fn info(&self) -> ParamInfo {
        match self {
            Decl::Number(p) => p.info(),
            Decl::Integer(p) => p.info(),
            Decl::Duration(p) => p.info(),
            Decl::Rate(p) => p.info(),
            Decl::Size(p) => p.info(),
            Decl::Bool(p) => p.info(),
            Decl::Choice(p) => p.info(),
            Decl::Text(p) => p.info(),
        }
    }

    /// The value in Python's units: seconds, bits/s, bytes.
    fn read(&self, py: Python<'_>, p: &Params) -> Result<Py<PyAny>, ConfigError> {
        let conv = |e: PyErr| ConfigError::invalid(self.info().name, e.to_string());
        Ok(match self {
            Decl::Number(d) => p.get(d)?.into_py_any(py).map_err(conv)?,
            Decl::Integer(d) => p.get(d)?.into_py_any(py).map_err(conv)?,
            Decl::Duration(d) => p.get(d)?.as_secs_f64().into_py_any(py).map_err(conv)?,
            Decl::Rate(d) => (p.get(d)?.bps() as f64).into_py_any(py).map_err(conv)?,
            Decl::Size(d) => p.get(d)?.bytes().into_py_any(py).map_err(conv)?,
            Decl::Bool(d) => p.get(d)?.into_py_any(py).map_err(conv)?,
            Decl::Choice(d) => p.get(d)?.into_py_any(py).map_err(conv)?,
            Decl::Text(d) => p.get(d)?.into_py_any(py).map_err(conv)?,
        })
    }
}

struct Entry {
    /// `factory(params: dict, context: tuple)` -> the controller object.
    factory: Py<PyAny>,
    decls: Vec<Decl>,
}

/// Python controllers by name.
static ENTRIES: Mutex<Option<HashMap<String, Entry>>> = Mutex::new(None);
/// The package's helpers: (`_resolve(name)`, `Feedback`, `Frame`, `Packet`, `SenderState`).
static HELPERS: Mutex<Option<[Py<PyAny>; 5]>> = Mutex::new(None);
/// Python controllers alive: while any is, a run checks for failures often.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// State column names, leaked once each (the recorder takes `&'static str`).
static COLUMNS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

fn column(name: &str) -> &'static str {
    let mut set = COLUMNS.lock().unwrap_or_else(|e| e.into_inner());
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(&s) = set.get(name) {
        return s;
    }
    let s = leak(name);
    set.insert(s);
    s
}

/// Set when a Python controller has handled a report, for
/// `Simulation.run_until_report` (one simulation runs at a time: the GIL).
pub(crate) static REPORTED: AtomicBool = AtomicBool::new(false);

/// Whether a Python controller handled a report since the last call.
pub fn take_reported() -> bool {
    REPORTED.swap(false, Ordering::Relaxed)
}

/// Whether a Python controller is alive (its run may have to stop early).
pub fn in_use() -> bool {
    LIVE.load(Ordering::Relaxed) > 0
}

/// Asks the package about names not registered (`py:module:Class`, entry
/// points) from now on.
pub fn install() {
    controller::set_resolver(resolve_name);
}

/// Sets the package's helpers; `rtcc.pycontrollers` calls it on import.
#[pyfunction]
pub fn pyctl_helpers(resolve: Py<PyAny>, feedback: Py<PyAny>, frame: Py<PyAny>, packet: Py<PyAny>, state: Py<PyAny>) {
    *HELPERS.lock().unwrap_or_else(|e| e.into_inner()) = Some([resolve, feedback, frame, packet, state]);
}

fn helper(py: Python<'_>, i: usize) -> Option<Py<PyAny>> {
    HELPERS.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|h| h[i].clone_ref(py))
}

/// One declared parameter: (name, kind, default, min, max, doc, choices),
/// the default and bounds already in Python's units, checked by the caller.
type ParamSpec = (String, String, Py<PyAny>, Option<f64>, Option<f64>, String, Vec<String>);

fn decl(py: Python<'_>, spec: &ParamSpec) -> PyResult<Decl> {
    let (name, kind, default, min, max, doc, choices) = spec;
    let (n, d) = (leak(name), leak(doc));
    let default = default.bind(py);
    let lo = min.unwrap_or(0.0);
    let rate = |x: f64| DataRate::from_bps_f64(x);
    let size = |x: f64| DataSize::from_bytes(x as u64);
    let decl = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> PyResult<Decl> {
        Ok(match kind.as_str() {
            "number" => Decl::Number(Param::number(
                n,
                default.extract()?,
                min.unwrap_or(f64::NEG_INFINITY),
                max.unwrap_or(f64::INFINITY),
                d,
            )),
            "integer" => Decl::Integer(Param::integer(
                n,
                default.extract()?,
                min.map_or(i64::MIN, |x| x as i64),
                max.map_or(i64::MAX, |x| x as i64),
                d,
            )),
            "duration" => Decl::Duration(Param::duration(
                n,
                Duration::from_secs_f64(default.extract()?),
                Duration::from_secs_f64(lo),
                max.map_or(Duration::MAX, Duration::from_secs_f64),
                d,
            )),
            "rate" => {
                Decl::Rate(Param::rate(n, rate(default.extract()?), rate(lo), max.map_or(DataRate::MAX, rate), d))
            }
            "size" => {
                Decl::Size(Param::size(n, size(default.extract()?), size(lo), max.map_or(DataSize::MAX, size), d))
            }
            "bool" => Decl::Bool(Param::flag(n, default.extract()?, d)),
            "choice" => {
                let allowed: Vec<&'static str> = choices.iter().map(|c| leak(c)).collect();
                let dflt: String = default.extract()?;
                let dflt = allowed.iter().copied().find(|c| *c == dflt).unwrap_or_else(|| leak(&dflt));
                Decl::Choice(Param::choice(n, dflt, Box::leak(allowed.into_boxed_slice()), d))
            }
            "text" => Decl::Text(Param::text(n, leak(&default.extract::<String>()?), d)),
            other => return Err(PyValueError::new_err(format!("parameter {name}: unknown kind {other:?}"))),
        })
    }));
    match decl {
        Ok(d) => d,
        Err(_) => Err(PyValueError::new_err(format!("parameter {name}: the default is outside its range"))),
    }
}

/// Registers a Python controller: `factory(params, context)` builds one.
#[pyfunction]
pub fn pyctl_register(
    py: Python<'_>,
    name: String,
    summary: String,
    params: Vec<ParamSpec>,
    factory: Py<PyAny>,
) -> PyResult<()> {
    let decls = params.iter().map(|s| decl(py, s)).collect::<PyResult<Vec<_>>>()?;
    let infos: Vec<ParamInfo> = decls.iter().map(Decl::info).collect();
    let info = ControllerInfo {
        name: leak(&name),
        summary: leak(&summary),
        params: Box::leak(infos.into_boxed_slice()),
        create: unnamed,
        receiver: None,
        pushback: Pushback::Off,
        needs_arrivals: true,
        report_format: rtcc_core::feedback::ReportFormat::Twcc,
    };
    ENTRIES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(name.clone(), Entry { factory, decls });
    controller::register_named(info, create)
        .map_err(|e| PyValueError::new_err(format!("controller '{name}': {}", e.reason)))
}

/// Whether `name` is a Python controller.
pub fn is_python(name: &str) -> bool {
    ENTRIES.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|m| m.contains_key(name))
}

fn unnamed(_: &Params, _: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Err(ConfigError::invalid("", "a Python controller is built by name"))
}

/// The resolver: asks `rtcc.pycontrollers._resolve(name)`, which imports a
/// `py:module:Class` or an entry point and registers it.
fn resolve_name(name: &str) -> Result<bool, ConfigError> {
    Python::attach(|py| {
        if helper(py, 0).is_none() {
            // The package's module sets the helpers; asked again in case it was
            // first imported against a stand-in native module.
            py.import("rtcc.pycontrollers")
                .and_then(|m| m.call_method0("_install_helpers"))
                .map_err(|e| ConfigError::invalid("", one_line(py, &e)))?;
        }
        let Some(resolve) = helper(py, 0) else { return Ok(false) };
        match resolve.bind(py).call1((name,)) {
            Ok(found) => Ok(found.is_truthy().unwrap_or(false)),
            Err(e) => Err(ConfigError::invalid("", one_line(py, &e))),
        }
    })
}

/// `Type: message` of an exception, on one line.
fn one_line(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        kind
    } else {
        format!("{kind}: {text}")
    }
}

fn create(name: &str, p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Python::attach(|py| {
        let (factory, decls) = {
            let entries = ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
            let entry = entries
                .as_ref()
                .and_then(|m| m.get(name))
                .ok_or_else(|| ConfigError::invalid("", format!("no Python controller '{name}'")))?;
            (entry.factory.clone_ref(py), entry.decls.clone())
        };
        let values = PyDict::new(py);
        for d in &decls {
            let v = d.read(py, p)?;
            values.set_item(d.info().name, v).map_err(|e| ConfigError::invalid("", e.to_string()))?;
        }
        let context = (
            ctx.start_rate.bps() as f64,
            ctx.min_rate.bps() as f64,
            ctx.max_rate.bps() as f64,
            ctx.mtu.bytes(),
            ctx.frame_interval.as_secs_f64(),
            ctx.feedback_interval.as_secs_f64(),
            ctx.seed,
        );
        let object = factory
            .bind(py)
            .call1((values, context))
            .map_err(|e| {
                ConfigError::invalid("", format!("controller '{name}' raised in __init__: {}", one_line(py, &e)))
            })?
            .unbind();
        let mut c = PyCtl::new(py, name, object);
        c.read_back(py, Time::ZERO, "__init__").map_err(|m| ConfigError::invalid("", m))?;
        Ok(Box::new(c) as Box<dyn Controller>)
    })
}

/// Which optional methods the class defines (looked up once).
struct Hooks {
    sent: bool,
    sender_state: bool,
    frame: bool,
    feedback: bool,
    timeout: bool,
    poll_timeout: bool,
    state: bool,
}

struct PyCtl {
    name: String,
    object: Py<PyAny>,
    hooks: Hooks,
    decision: Decision,
    timer: Option<Time>,
    failed: bool,
    state_failed: std::cell::Cell<bool>,
}

impl Drop for PyCtl {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A `state` that is not {column: number}.
fn invalid(reason: String) -> PyErr {
    PyValueError::new_err(reason)
}

impl PyCtl {
    fn new(py: Python<'_>, name: &str, object: Py<PyAny>) -> PyCtl {
        let has = |m: &str| object.bind(py).hasattr(m).unwrap_or(false);
        let hooks = Hooks {
            sent: has("on_packet_sent"),
            sender_state: has("on_sender_state"),
            frame: has("on_frame_encoded"),
            feedback: has("on_feedback"),
            timeout: has("on_timeout"),
            poll_timeout: has("poll_timeout"),
            state: has("state"),
        };
        LIVE.fetch_add(1, Ordering::Relaxed);
        PyCtl {
            name: name.to_string(),
            object,
            hooks,
            decision: Decision::default(),
            timer: None,
            failed: false,
            state_failed: std::cell::Cell::new(false),
        }
    }

    fn message(&self, py: Python<'_>, method: &str, e: &PyErr) -> String {
        format!("controller '{}' raised in {method}: {}", self.name, one_line(py, e))
    }

    /// Calls `method(now_s, *args)`, then reads the decision and timer back;
    /// a failure stops the controller and, with it, the run.
    fn call(&mut self, py: Python<'_>, now: Time, method: &'static str, arg: Option<Py<PyAny>>) {
        if self.failed {
            return;
        }
        let now_s = now.as_secs_f64();
        let done = match arg {
            Some(a) => self.object.bind(py).call_method1(method, (now_s, a)),
            None => self.object.bind(py).call_method1(method, (now_s,)),
        };
        if let Err(e) = done {
            let message = self.message(py, method, &e);
            self.stop(py, message, Some(e));
        } else if let Err(message) = self.read_back(py, now, method) {
            self.stop(py, message, None);
        }
    }

    /// Stops the controller, and the run, with `message`; a KeyboardInterrupt
    /// stays one.
    fn stop(&mut self, py: Python<'_>, message: String, cause: Option<PyErr>) {
        self.failed = true;
        if let Some(e) = cause.as_ref().filter(|e| e.is_instance_of::<PyKeyboardInterrupt>(py)) {
            crate::app::fail(e.clone_ref(py));
            return;
        }
        let err = ControllerError::new_err(message);
        err.set_cause(py, cause);
        crate::app::fail(err);
    }

    /// The decision (and timer) after `method`, checked; the error is the
    /// whole line, naming the controller.
    fn read_back(&mut self, py: Python<'_>, now: Time, method: &str) -> Result<(), String> {
        let obj = self.object.clone_ref(py).into_bound(py);
        let name = self.name.clone();
        let raised = |m: &str, e: PyErr| format!("controller '{name}' raised in {m}: {}", one_line(py, &e));
        let bad =
            |what: &str, reason: String| format!("controller '{name}' gave an invalid {what} after {method}: {reason}");
        let d = obj.call_method0("decision").map_err(|e| raised("decision", e))?;
        self.decision = decision(&d).map_err(|r| bad("decision", r))?;
        if self.hooks.poll_timeout {
            let t = obj.call_method0("poll_timeout").map_err(|e| raised("poll_timeout", e))?;
            self.timer = if t.is_none() {
                None
            } else {
                let s: f64 = t.extract().map_err(|_| bad("poll_timeout", "not a number of seconds or None".into()))?;
                if !s.is_finite() {
                    return Err(bad("poll_timeout", format!("{s} is not a time")));
                }
                let at = Time::from_secs_f64(s.max(0.0));
                // Re-armed at the instant it fired: the run would not advance.
                if method == "on_timeout" && at <= now {
                    return Err(bad("poll_timeout", format!("{s:.6} s is not after now ({:.6} s)", now.as_secs_f64())));
                }
                Some(at)
            };
        }
        Ok(())
    }
}

/// A rate in bits/s from a decision: finite and not negative.
fn rate_of(field: &str, v: &Bound<'_, PyAny>) -> Result<f64, String> {
    let x: f64 = v.extract().map_err(|_| format!("{field} is not a number"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!("{field} {x} is not a rate (finite, not negative, in bits/s)"));
    }
    Ok(x)
}

/// WebRTC's pacing factor (goog_cc kPacingFactor 2.5), when a decision gives
/// only the target.
const PACING_FACTOR: f64 = 2.5;

/// A decision from Python: a number (the target in bits/s, paced at 2.5×) or
/// a mapping with `target_bps` and any of `pacing_bps`, `cwnd_bytes`,
/// `padding_bps`, `schedule` ("paced", "burst"), `fec_group`,
/// `skip_threshold_s`.
fn decision(d: &Bound<'_, PyAny>) -> Result<Decision, String> {
    if let Ok(map) = d.downcast::<PyDict>() {
        let target = rate_of("target_bps", &map.get_item("target_bps").ok().flatten().ok_or("no target_bps")?)?;
        let mut out = Decision::rates(DataRate::from_bps_f64(target), DataRate::from_bps_f64(target * PACING_FACTOR));
        for (k, v) in map.iter() {
            let key: String = k.extract().map_err(|_| "a key is not a string".to_string())?;
            if v.is_none() {
                continue;
            }
            match key.as_str() {
                "target_bps" => {}
                "pacing_bps" => out.pacing_rate = DataRate::from_bps_f64(rate_of(&key, &v)?),
                "padding_bps" => out.padding_rate = DataRate::from_bps_f64(rate_of(&key, &v)?),
                "cwnd_bytes" => out.cwnd = Some(DataSize::from_bytes(rate_of(&key, &v)? as u64)),
                "fec_group" => {
                    let g: u16 =
                        v.extract().map_err(|_| "fec_group is not a whole number in [0, 65535]".to_string())?;
                    out.fec = Some(FecPlan { group: g });
                }
                "skip_threshold_s" => {
                    out.skip_threshold = Some(Duration::from_secs_f64(rate_of(&key, &v)?));
                }
                "schedule" => {
                    out.schedule = match v.extract::<String>().as_deref() {
                        Ok("paced") => FrameSchedule::Paced,
                        Ok("burst") => FrameSchedule::Burst,
                        _ => return Err("schedule is neither \"paced\" nor \"burst\"".into()),
                    }
                }
                other => {
                    return Err(format!(
                        "unknown field {other:?} (known: target_bps, pacing_bps, cwnd_bytes, padding_bps, schedule, \
                         fec_group, skip_threshold_s)"
                    ))
                }
            }
        }
        return Ok(out);
    }
    let target = rate_of("target_bps", d)?;
    Ok(Decision::rates(DataRate::from_bps_f64(target), DataRate::from_bps_f64(target * PACING_FACTOR)))
}

fn le_bytes<'py, T: Copy>(py: Python<'py>, v: &[T], to: impl Fn(T) -> [u8; 8]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = v.iter().flat_map(|&x| to(x)).collect();
    PyBytes::new(py, &bytes)
}

impl Controller for PyCtl {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        if !self.hooks.sent || self.failed {
            return;
        }
        Python::attach(|py| {
            let Some(make) = helper(py, 3) else { return };
            let frame = if p.pos.frame == NO_FRAME { -1 } else { i64::from(p.pos.frame) };
            let args = (p.seq, p.kind as u8, p.size.bytes(), p.send_time.as_secs_f64(), p.in_flight.bytes(), frame);
            match make.bind(py).call1(args) {
                Ok(packet) => self.call(py, now, "on_packet_sent", Some(packet.unbind())),
                Err(e) => self.stop(py, self.message(py, "on_packet_sent", &e), Some(e)),
            }
        });
    }

    fn on_sender_state(&mut self, now: Time, s: &SenderState) {
        if !self.hooks.sender_state || self.failed {
            return;
        }
        Python::attach(|py| {
            let Some(make) = helper(py, 4) else { return };
            match make.bind(py).call1((s.queued.bytes(), s.queued_packets, s.in_flight.bytes())) {
                Ok(state) => self.call(py, now, "on_sender_state", Some(state.unbind())),
                Err(e) => self.stop(py, self.message(py, "on_sender_state", &e), Some(e)),
            }
        });
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if !self.hooks.feedback || self.failed {
            return;
        }
        Python::attach(|py| {
            let Some(make) = helper(py, 1) else { return };
            let ps = &fb.packets;
            let seq: Vec<u64> = ps.iter().map(|p| p.seq).collect();
            let send: Vec<f64> = ps.iter().map(|p| p.send_time.as_secs_f64()).collect();
            let arrival: Vec<f64> = ps.iter().map(|p| p.arrival.map_or(f64::NAN, |a| a.as_secs_f64())).collect();
            let size: Vec<u64> = ps.iter().map(|p| p.size.bytes()).collect();
            let frame: Vec<i64> =
                ps.iter().map(|p| if p.pos.frame == NO_FRAME { -1 } else { i64::from(p.pos.frame) }).collect();
            let kind: Vec<u8> = ps.iter().map(|p| p.kind as u8).collect();
            let late: Vec<u8> = ps.iter().map(|p| u8::from(p.late)).collect();
            let st = &fb.stats;
            let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
            let scalars = (
                fb.report_time.as_secs_f64(),
                secs(fb.rtt_sample()),
                st.received,
                st.lost,
                // Only RR + XR carry jitter and discards; no format carries
                // FEC recoveries: NaN / None where absent.
                if fb.format == ReportFormat::RtcpXr { st.jitter.as_secs_f64() } else { f64::NAN },
                secs(st.owd_min),
                secs(st.owd_mean),
                secs(st.owd_max),
                fb.estimate.map_or(f64::NAN, |e| e.bps() as f64),
                (fb.format == ReportFormat::RtcpXr).then_some(st.late_discards),
                None::<u32>,
                // The RR's round trip (RFC 3550 §6.4.1), in one report a second.
                secs(fb.rtcp_rtt),
            );
            let columns = (
                le_bytes(py, &seq, u64::to_le_bytes),
                le_bytes(py, &send, f64::to_le_bytes),
                le_bytes(py, &arrival, f64::to_le_bytes),
                le_bytes(py, &size, u64::to_le_bytes),
                le_bytes(py, &frame, i64::to_le_bytes),
                PyBytes::new(py, &kind),
                PyBytes::new(py, &late),
            );
            REPORTED.store(true, Ordering::Relaxed);
            match make.bind(py).call1((scalars, columns)) {
                Ok(report) => self.call(py, now, "on_feedback", Some(report.unbind())),
                Err(e) => self.stop(py, self.message(py, "on_feedback", &e), Some(e)),
            }
        });
    }

    fn on_frame_encoded(&mut self, now: Time, f: &FrameInfo) {
        if !self.hooks.frame || self.failed {
            return;
        }
        Python::attach(|py| {
            let Some(make) = helper(py, 2) else { return };
            let args = (f.frame, f.capture_time.as_secs_f64(), f.size.bytes(), f.packets, f.key, f.si, f.ti);
            match make.bind(py).call1(args) {
                Ok(frame) => self.call(py, now, "on_frame_encoded", Some(frame.unbind())),
                Err(e) => self.stop(py, self.message(py, "on_frame_encoded", &e), Some(e)),
            }
        });
    }

    fn on_timeout(&mut self, now: Time) {
        if self.failed || self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.timer = None;
        if self.hooks.timeout {
            Python::attach(|py| self.call(py, now, "on_timeout", None));
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.failed {
            None
        } else {
            self.timer
        }
    }

    fn decision(&self) -> Decision {
        self.decision
    }

    /// Re-reads the decision (and timer) the Python object holds now: an
    /// agent sets it between reports (`rtcc.gym`).
    fn refresh(&mut self, now: Time) {
        if self.failed {
            return;
        }
        Python::attach(|py| {
            if let Err(message) = self.read_back(py, now, "refresh") {
                self.stop(py, message, None);
            }
        });
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if !self.hooks.state || self.failed {
            return;
        }
        if self.state_failed.get() {
            return;
        }
        Python::attach(|py| {
            let columns = self.object.bind(py).call_method0("state").and_then(|d| {
                let map = d.downcast::<PyDict>().map_err(|_| invalid("state: not a dict of column: number".into()))?;
                map.iter()
                    .map(|(k, v)| {
                        let k: String =
                            k.extract().map_err(|_| invalid("state: a column name is not a string".into()))?;
                        let v: f64 =
                            v.extract().map_err(|_| invalid(format!("state: column {k:?} is not a number")))?;
                        Ok((k, v))
                    })
                    .collect::<PyResult<Vec<_>>>()
            });
            match columns {
                Ok(columns) => columns.iter().for_each(|(k, v)| out(column(k), *v)),
                Err(e) => {
                    // `state` reads only: the failure stops the run through the shared slot.
                    self.state_failed.set(true);
                    let err = ControllerError::new_err(self.message(py, "state", &e));
                    err.set_cause(py, Some(e));
                    crate::app::fail(err);
                }
            }
        });
    }
}
