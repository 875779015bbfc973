//! The application API (FBRA paper §6, "AMuSys", Table 6): a controller
//! named `python` whose decisions come from a Python policy object. The
//! policy is told of reports, frames, sent packets and timers, and acts
//! through an `AppSession`: the codec interface (bitrate, parameters) and
//! the network interface (FEC on/off and scheme, a timer). `rtcc.app.run`
//! registers the policy under an id, names it in the flow's controller
//! (`{ name = "python", policy = "<id>" }`) and removes it afterwards.
//!
//! Callbacks run with the GIL, which the simulation holds throughout. An
//! exception in a callback stops the policy; the simulation raises it when
//! its step returns (`take_failure`). Simulated time must advance: a timer
//! set before now (or, from `on_timer`, not after now) is refused, since the
//! driver would call the policy again at the same instant without end. Python
//! runs its signal handlers only between bytecodes, so the controller also
//! asks for them every `SIGNAL_EVERY` inputs: Ctrl-C stops the run as a
//! KeyboardInterrupt whatever the policy does.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use rtcc_core::controller::{
    self, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FecPlan, FrameInfo, FrameSchedule,
    Param, Params, SentPacket,
};
use rtcc_core::feedback::{Feedback, ReportFormat};
use rtcc_core::packet::{PacketKind, NO_FRAME};
use rtcc_core::units::{DataRate, Duration, Time};

/// Policies by id, while `rtcc.app.run` runs them.
static POLICIES: Mutex<Option<HashMap<String, Py<PyAny>>>> = Mutex::new(None);
/// The first exception a policy raised, for the simulation to raise.
static FAILURE: Mutex<Option<PyErr>> = Mutex::new(None);

const POLICY: Param<String> = Param::text("policy", "", "id of a policy registered by rtcc.app.run");

/// WebRTC's pacing factor (goog_cc kPacingFactor 2.5): the pacer runs at
/// this multiple of the bitrate unless the policy sets `pacing_factor`.
const PACING_FACTOR: f64 = 2.5;
/// `get_bitrate` reports the encoder's output over this window.
const RATE_WINDOW: Duration = Duration::from_secs(1);
/// Inputs between two checks for a pending signal (a check is one atomic
/// read when none is pending; thousands of inputs take well under 50 ms).
const SIGNAL_EVERY: u32 = 1024;

pub const INFO: ControllerInfo = ControllerInfo {
    name: "python",
    summary: "a Python policy through rtcc.app (the FBRA paper's application API, §6): set the bitrate, FEC and \
              timers from callbacks on reports, frames and sent packets",
    params: &[POLICY.info()],
    create,
    receiver: None,
    pushback: rtcc_core::controller::Pushback::Off,
    needs_arrivals: true,
    report_format: rtcc_core::feedback::ReportFormat::Twcc,
};

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    let id = p.get(&POLICY)?;
    let policy = Python::attach(|py| {
        POLICIES.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&id)).map(|o| o.clone_ref(py))
    })
    .ok_or_else(|| {
        ConfigError::invalid("policy", format!("no policy \"{id}\" is registered: run it with rtcc.app.run"))
    })?;
    Python::attach(|py| PyController::new(py, policy, ctx))
        .map(|c| Box::new(c) as Box<dyn Controller>)
        .map_err(|e| ConfigError::invalid("policy", e.to_string()))
}

/// Registers the `python` controller (once per process).
pub fn register() {
    // A second import of the module finds it registered already.
    let _ = controller::register(INFO);
}

#[pyfunction]
pub fn app_register(id: String, policy: Py<PyAny>) {
    POLICIES.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(id, policy);
}

#[pyfunction]
pub fn app_unregister(id: &str) {
    if let Some(m) = POLICIES.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        m.remove(id);
    }
}

/// The exception a policy raised, if any (taken: raised once).
pub fn take_failure() -> Option<PyErr> {
    FAILURE.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Whether a policy is registered or a Python controller alive (a run may
/// call Python, which may fail).
pub fn active() -> bool {
    crate::pyctl::in_use() || POLICIES.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|m| !m.is_empty())
}

/// Whether a policy has raised and the run should stop.
pub fn failed() -> bool {
    FAILURE.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Stops the run with `e` (the first failure wins).
pub(crate) fn fail(e: PyErr) {
    FAILURE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
}

/// What the policy may change, shared between it and the controller.
#[pyclass(module = "rtcc._rtcc")]
pub struct AppSession {
    #[pyo3(get)]
    now_s: f64,
    /// `now_s` exactly, and the policy's class and callback, for refusing a
    /// timer that does not advance.
    now: Time,
    policy_name: String,
    method: &'static str,
    bitrate: f64,
    pacing_factor: f64,
    fec_group: Option<u16>,
    burst: bool,
    skip_threshold: Option<f64>,
    timer_s: Option<f64>,
    encoder_bps: f64,
    min_bps: f64,
    max_bps: f64,
}

#[pymethods]
impl AppSession {
    /// Codec interface, setBitrate(): the encoder's target in bits per
    /// second, clamped to the flow's [min_rate, max_rate].
    fn set_bitrate(&mut self, bps: f64) -> PyResult<()> {
        if !bps.is_finite() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("bitrate {bps} is not a number")));
        }
        self.bitrate = bps.clamp(self.min_bps, self.max_bps);
        Ok(())
    }

    /// Codec interface, getBitrate(): what the encoder produced over the
    /// last second (bits per second), to see whether a new rate took.
    fn get_bitrate(&self) -> f64 {
        self.encoder_bps
    }

    /// The bitrate last set (bits per second).
    #[getter]
    fn target_bps(&self) -> f64 {
        self.bitrate
    }

    /// Codec interface, getParam(): `pacing_factor`, `frame_schedule`
    /// ("paced" or "burst"), `skip_threshold` (seconds or None); None for
    /// any other name.
    fn get_param(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        match name {
            "pacing_factor" => self.pacing_factor.into_py_any(py),
            "frame_schedule" => (if self.burst { "burst" } else { "paced" }).into_py_any(py),
            "skip_threshold" => self.skip_threshold.into_py_any(py),
            _ => Ok(py.None()),
        }
    }

    /// Codec interface, setParam(): True if set; an unknown name or a bad
    /// value changes nothing and returns False (the paper's "non-fatal
    /// error").
    fn set_param(&mut self, name: &str, value: &Bound<'_, PyAny>) -> bool {
        match name {
            "pacing_factor" => match value.extract::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => self.pacing_factor = v,
                _ => return false,
            },
            "frame_schedule" => match value.extract::<String>().as_deref() {
                Ok("paced") => self.burst = false,
                Ok("burst") => self.burst = true,
                _ => return false,
            },
            "skip_threshold" => {
                if value.is_none() {
                    self.skip_threshold = None;
                } else {
                    match value.extract::<f64>() {
                        Ok(v) if v.is_finite() && v > 0.0 => self.skip_threshold = Some(v),
                        _ => return false,
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// Network interface, enableFEC(): parity FEC on (with the current
    /// scheme, one parity per 10 media packets unless set) or off.
    fn enable_fec(&mut self, on: bool) {
        self.fec_group = if on { Some(self.fec_group.filter(|&g| g > 0).unwrap_or(10)) } else { Some(0) };
    }

    /// Network interface, setFECScheme(): one XOR parity packet per `group`
    /// media packets (RFC 5109); turns FEC on.
    fn set_fec_scheme(&mut self, group: u16) -> PyResult<()> {
        if group == 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "group must be at least 1 (enable_fec(False) turns FEC off)",
            ));
        }
        self.fec_group = Some(group);
        Ok(())
    }

    /// Whether FEC is on.
    #[getter]
    fn fec_enabled(&self) -> bool {
        self.fec_group.is_some_and(|g| g > 0)
    }

    /// Calls the policy's `on_timer` at `at_s` (simulated seconds); None
    /// cancels it. A time before now is refused, and from `on_timer` a time
    /// not after now: the run would never get past that instant.
    #[pyo3(signature = (at_s))]
    fn set_timer(&mut self, at_s: Option<f64>) -> PyResult<()> {
        let (who, now) = (format!("policy {}.{}", self.policy_name, self.method), self.now.as_secs_f64());
        if let Some(t) = at_s.filter(|t| !t.is_finite()) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{who}: timer set at {t}, not a number of seconds"
            )));
        }
        if let Some(t) = at_s {
            // Compared at the simulator's resolution (1 µs), where it fires.
            let at = Time::from_secs_f64(t);
            if self.method == "on_timer" && at <= self.now {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{who}: re-armed at {t:.3} s, not after now ({now:.3} s)"
                )));
            }
            if at < self.now {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{who}: timer set at {t:.3} s, before now ({now:.3} s)"
                )));
            }
        }
        self.timer_s = at_s;
        Ok(())
    }
}

/// Which callbacks the policy defines (looked up once).
struct Hooks {
    report: bool,
    frame: bool,
    sent: bool,
    fec_sent: bool,
    timer: bool,
}

struct PyController {
    policy: Py<PyAny>,
    session: Py<AppSession>,
    hooks: Hooks,
    /// Encoded frames (encode time, bytes) over the last `RATE_WINDOW`.
    frames: VecDeque<(Time, u64)>,
    decision: Decision,
    timer: Option<Time>,
    failed: bool,
    /// Inputs seen, for checking signals every `SIGNAL_EVERY`.
    inputs: u32,
}

impl PyController {
    fn new(py: Python<'_>, policy: Py<PyAny>, ctx: &ControllerContext) -> PyResult<PyController> {
        let has = |name: &str| policy.bind(py).hasattr(name).unwrap_or(false);
        let hooks = Hooks {
            report: has("on_report"),
            frame: has("on_frame"),
            sent: has("on_packet_sent"),
            fec_sent: has("on_fec_sent"),
            timer: has("on_timer"),
        };
        let hooks_start = has("on_start");
        let policy_name = policy.bind(py).get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        let session = Py::new(
            py,
            AppSession {
                now_s: 0.0,
                now: Time::ZERO,
                policy_name,
                method: "on_start",
                bitrate: ctx.start_rate.bps() as f64,
                pacing_factor: PACING_FACTOR,
                fec_group: None,
                burst: false,
                skip_threshold: None,
                timer_s: None,
                encoder_bps: 0.0,
                min_bps: ctx.min_rate.bps() as f64,
                max_bps: ctx.max_rate.bps() as f64,
            },
        )?;
        let mut c = PyController {
            policy,
            session,
            hooks,
            frames: VecDeque::new(),
            decision: Decision::default(),
            timer: None,
            failed: false,
            inputs: 0,
        };
        if hooks_start {
            c.call(py, Time::ZERO, "on_start", vec![]);
        } else {
            c.sync(py);
        }
        Ok(c)
    }

    /// Calls `method(session, *args)` at `now`, then reads back what the
    /// policy set.
    fn call(&mut self, py: Python<'_>, now: Time, method: &'static str, args: Vec<Py<PyAny>>) {
        if self.failed {
            return;
        }
        {
            let mut s = self.session.borrow_mut(py);
            s.now_s = now.as_secs_f64();
            s.now = now;
            s.method = method;
        }
        let mut all = vec![self.session.clone_ref(py).into_any()];
        all.extend(args);
        let done = PyTuple::new(py, all).and_then(|a| self.policy.bind(py).call_method1(method, a));
        if let Err(e) = done {
            self.failed = true;
            fail(e);
            return;
        }
        self.sync(py);
    }

    /// The decision from the session's state.
    fn sync(&mut self, py: Python<'_>) {
        let s = self.session.borrow(py);
        let target = DataRate::from_bps_f64(s.bitrate);
        let mut d = Decision::rates(target, DataRate::from_bps_f64(s.bitrate * s.pacing_factor));
        d.fec = s.fec_group.map(|group| FecPlan { group });
        d.schedule = if s.burst { FrameSchedule::Burst } else { FrameSchedule::Paced };
        d.skip_threshold = s.skip_threshold.map(Duration::from_secs_f64);
        self.decision = d;
        self.timer = s.timer_s.map(|t| Time::from_secs_f64(t.max(0.0)));
    }

    /// Counts an input; every `SIGNAL_EVERY` runs Python's signal handlers,
    /// which a KeyboardInterrupt (or any exception they raise) stops the
    /// policy with, and the run with it.
    fn tick(&mut self) {
        self.inputs = self.inputs.wrapping_add(1);
        if self.failed || !self.inputs.is_multiple_of(SIGNAL_EVERY) {
            return;
        }
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            self.failed = true;
            fail(e);
        }
    }

    fn kind(k: PacketKind) -> &'static str {
        match k {
            PacketKind::Media => "media",
            PacketKind::Padding => "padding",
            PacketKind::Probe => "probe",
            PacketKind::Fec => "fec",
            PacketKind::Rtx => "rtx",
            _ => "audio",
        }
    }
}

impl Controller for PyController {
    fn name(&self) -> &str {
        "python"
    }

    fn on_packet_sent(&mut self, now: Time, p: &SentPacket) {
        self.tick();
        let hook = if p.kind == PacketKind::Fec { self.hooks.fec_sent } else { self.hooks.sent };
        if !hook {
            return;
        }
        let method = if p.kind == PacketKind::Fec { "on_fec_sent" } else { "on_packet_sent" };
        Python::attach(|py| {
            let packet = PyDict::new(py);
            let _ = packet.set_item("seq", p.seq);
            let _ = packet.set_item("kind", Self::kind(p.kind));
            let _ = packet.set_item("size", p.size.bytes());
            let _ = packet.set_item("send_s", p.send_time.as_secs_f64());
            let _ = packet.set_item("frame", (p.pos.frame != NO_FRAME).then_some(p.pos.frame));
            self.call(py, now, method, vec![packet.into_any().unbind()]);
        });
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        self.tick();
        if !self.hooks.report {
            return;
        }
        Python::attach(|py| {
            let r = PyDict::new(py);
            let st = &fb.stats;
            let expected = st.received + st.lost;
            let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
            let _ = r.set_item("report_time_s", fb.report_time.as_secs_f64());
            let _ = r.set_item("rtcp_rtt_s", secs(fb.rtcp_rtt));
            let _ = r.set_item("received", st.received);
            let _ = r.set_item("lost", st.lost);
            let _ =
                r.set_item("fraction_lost", if expected > 0 { f64::from(st.lost) / f64::from(expected) } else { 0.0 });
            // Only RR + XR carry jitter (RR block) and discards (RFC 7097);
            // no format carries FEC recoveries: None where absent.
            let xr = fb.format == ReportFormat::RtcpXr;
            let _ = r.set_item("jitter_s", xr.then(|| st.jitter.as_secs_f64()));
            let _ = r.set_item("late_discards", xr.then_some(st.late_discards));
            let _ = r.set_item("fec_recovered", None::<u32>);
            let _ = r.set_item("owd_min_s", secs(st.owd_min));
            let _ = r.set_item("owd_mean_s", secs(st.owd_mean));
            let _ = r.set_item("owd_max_s", secs(st.owd_max));
            let _ = r.set_item("rtt_s", secs(fb.rtt_sample()));
            let _ = r.set_item("estimate_bps", fb.estimate.map(|e| e.bps()));
            let packets = PyList::empty(py);
            for p in &fb.packets {
                let frame = (p.pos.frame != NO_FRAME).then_some(p.pos.frame);
                let arrival = p.arrival.map(|a| a.as_secs_f64());
                let row =
                    (p.seq, Self::kind(p.kind), p.size.bytes(), p.send_time.as_secs_f64(), arrival, frame, p.late);
                let _ = packets.append(row);
            }
            let _ = r.set_item("packets", packets);
            self.call(py, now, "on_report", vec![r.into_any().unbind()]);
        });
    }

    fn on_frame_encoded(&mut self, now: Time, f: &FrameInfo) {
        self.tick();
        self.frames.push_back((now, f.size.bytes()));
        while self.frames.front().is_some_and(|&(t, _)| now.saturating_since(t) > RATE_WINDOW) {
            self.frames.pop_front();
        }
        let bits: u64 = self.frames.iter().map(|&(_, b)| b * 8).sum();
        Python::attach(|py| {
            self.session.borrow_mut(py).encoder_bps = bits as f64 / RATE_WINDOW.as_secs_f64();
            if self.hooks.frame {
                let frame = PyDict::new(py);
                let _ = frame.set_item("frame", f.frame);
                let _ = frame.set_item("size", f.size.bytes());
                let _ = frame.set_item("packets", f.packets);
                let _ = frame.set_item("key", f.key);
                let _ = frame.set_item("capture_s", f.capture_time.as_secs_f64());
                self.call(py, now, "on_frame", vec![frame.into_any().unbind()]);
            }
        });
    }

    fn on_timeout(&mut self, now: Time) {
        self.tick();
        if self.timer.is_some_and(|t| t <= now) {
            Python::attach(|py| {
                self.session.borrow_mut(py).timer_s = None;
                self.timer = None;
                if self.hooks.timer {
                    self.call(py, now, "on_timer", vec![]);
                }
            });
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

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("rate_kbps", self.decision.target_rate.kbps_f64());
        out("fec_group", self.decision.fec.map_or(0.0, |f| f64::from(f.group)));
    }
}
