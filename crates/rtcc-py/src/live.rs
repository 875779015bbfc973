//! `rtcc live` and `rtcc relay`: real sockets in real time (rtcc-net), with
//! the GIL released while they run. Python's signal handlers run every
//! 100 ms, so Ctrl-C (or a SIGTERM handler that raises) stops a run where it
//! is and a live run still returns its results up to there.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use rtcc_core::units::Duration;
use rtcc_net::emulator::Emulator;
use rtcc_net::live::{Bottleneck, LiveOptions};
use rtcc_net::relay::{Relay, RelayConfig};
use rtcc_sim::Scenario;

use crate::{finished, serde_json_string, to_py_err};

/// How often Python's signal handlers run during a live run.
const SIGNALS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A stop check for rtcc-net's loops: true once a signal handler raised
/// (the exception is kept in `raised`).
fn signal_check(raised: &mut Option<PyErr>) -> impl FnMut() -> bool + '_ {
    let mut last = Instant::now();
    move || {
        if raised.is_some() {
            return true;
        }
        if last.elapsed() < SIGNALS_EVERY {
            return false;
        }
        last = Instant::now();
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            *raised = Some(e);
            return true;
        }
        false
    }
}

/// A signal handler's exception other than KeyboardInterrupt is raised
/// (after the run stopped); a KeyboardInterrupt stays in `raised`, and the
/// run's results say it was interrupted.
fn reraise(py: Python<'_>, raised: &mut Option<PyErr>) -> PyResult<()> {
    match raised.take() {
        Some(e) if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Err(e),
        other => {
            *raised = other;
            Ok(())
        }
    }
}

/// Runs a scenario live; returns what `Simulation.finish()` returns, the
/// summary with a `live` object, and `interrupted` (a signal stopped it).
#[pyfunction]
#[pyo3(signature = (scenario_text, source = "<scenario>", seed = None, media_map = None, bottleneck = "auto", fallback = false, peer = None))]
#[allow(clippy::too_many_arguments)]
pub fn live<'py>(
    py: Python<'py>,
    scenario_text: &str,
    source: &str,
    seed: Option<u64>,
    media_map: Option<HashMap<PathBuf, PathBuf>>,
    bottleneck: &str,
    fallback: bool,
    peer: Option<(String, Vec<String>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let Some(bottleneck) = Bottleneck::parse(bottleneck) else {
        return Err(PyValueError::new_err(format!("bottleneck: '{bottleneck}' is not one of auto, udp, tun")));
    };
    let sc = Scenario::parse_with(scenario_text, source, &media_map.unwrap_or_default()).map_err(to_py_err)?;
    let mut raised = None;
    let peer = peer.map(|(kind, command)| rtcc_net::peer::PeerSpec { kind, command });
    let options = LiveOptions { bottleneck, fallback, peer };
    let run = py.detach(|| {
        let mut stop = signal_check(&mut raised);
        rtcc_net::live::run_live_with(sc, seed, options, &mut stop)
    });
    reraise(py, &mut raised)?;
    let run = run.map_err(to_py_err)?;
    let mut summary = serde_json::to_value(&run.output.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let live = serde_json::to_value(&run.live).map_err(|e| PyValueError::new_err(e.to_string()))?;
    summary["live"] = live;
    summary["live"]["interrupted"] = raised.is_some().into();
    let d = finished(py, serde_json_string(&summary)?, &run.output)?;
    Ok(d)
}

/// Relays UDP from `listen` to `to` through the scenario's `[link]` for
/// `duration_s` (or until Ctrl-C), serving up to `peers` pairs of ends;
/// returns its counts as JSON (`interrupted`: Ctrl-C stopped it; `error`: a
/// socket error ended it early).
#[pyfunction]
#[pyo3(signature = (scenario_text, listen, to, duration_s, source = "<scenario>", seed = None, peers = 16))]
#[allow(clippy::too_many_arguments)]
pub fn relay(
    py: Python<'_>,
    scenario_text: &str,
    listen: &str,
    to: &str,
    duration_s: f64,
    source: &str,
    seed: Option<u64>,
    peers: usize,
) -> PyResult<String> {
    let sc = Scenario::parse(scenario_text, source).map_err(to_py_err)?;
    let addr = |field: &str, v: &str| {
        v.parse::<std::net::SocketAddr>()
            .map_err(|e| PyValueError::new_err(format!("{field}: '{v}' is not an address with a port ({e})")))
    };
    let (listen, to) = (addr("listen", listen)?, addr("to", to)?);
    if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= 86_400.0) {
        return Err(PyValueError::new_err(format!("duration: {duration_s} s is not in (0, 86400]")));
    }
    if peers == 0 || peers > 1024 {
        return Err(PyValueError::new_err(format!("peers: {peers} is not in 1..=1024")));
    }
    let emulator = Emulator::from_scenario(&sc, seed, peers).map_err(to_py_err)?;
    let cfg = RelayConfig { listen, to, duration: Duration::from_secs_f64(duration_s) };
    let relay = Relay::bind(emulator, cfg).map_err(|e| PyOSError::new_err(format!("listen {listen}: {e}")))?;
    let mut raised = None;
    let report = py.detach(|| {
        let mut stop = signal_check(&mut raised);
        relay.run(&mut stop)
    });
    reraise(py, &mut raised)?;
    let report = report.map_err(|e| PyOSError::new_err(e.to_string()))?;
    let mut json = serde_json::to_value(&report).map_err(|e| PyValueError::new_err(e.to_string()))?;
    json["interrupted"] = raised.is_some().into();
    serde_json_string(&json)
}
