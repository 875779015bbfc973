//! Python bindings: the only place Python touches rtcc. Errors at the edge
//! become `ScenarioError` (a `ValueError`) carrying one line
//! `source: field: reason`.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use rtcc_core::controller::registry;
use rtcc_core::encoder::{EncoderConfig, KINDS};
use rtcc_core::units::Time;
use rtcc_sim::metrics::{Column, Table};
use rtcc_sim::{Scenario, ScenarioError as SimError, Simulation as Sim};

create_exception!(_rtcc, ScenarioError, PyValueError);

fn to_py_err(e: SimError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

#[pyclass(module = "rtcc._rtcc", unsendable)]
struct Simulation {
    sim: Sim,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (scenario_text, source = "<scenario>", seed = None, record_packets = true))]
    fn new(scenario_text: &str, source: &str, seed: Option<u64>, record_packets: bool) -> PyResult<Self> {
        let sc = Scenario::parse(scenario_text, source).map_err(to_py_err)?;
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
    fn run_until(&mut self, t_s: f64) -> bool {
        let t = if t_s.is_finite() { Time::from_secs_f64(t_s.max(0.0)) } else { Time::MAX };
        self.sim.run_until(t)
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if !self.sim.is_done() {
            self.sim.run();
        }
        let out = self.sim.output();
        let d = PyDict::new(py);
        let summary = serde_json_string(&out.summary)?;
        d.set_item("summary", summary)?;
        let tables = PyDict::new(py);
        tables.set_item("packets", table(py, &out.packets)?)?;
        tables.set_item("frames", table(py, &out.frames)?)?;
        tables.set_item("timeseries", table(py, &out.timeseries)?)?;
        tables.set_item("link", table(py, &out.link)?)?;
        d.set_item("tables", tables)?;
        Ok(d)
    }
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
    items: impl Iterator<Item = (&'static str, &'static str, &'static [rtcc_core::controller::ParamInfo])>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (name, summary, params) in items {
        let d = PyDict::new(py);
        d.set_item("name", name)?;
        d.set_item("summary", summary)?;
        let ps = PyList::empty(py);
        for p in params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("default", p.default)?;
            pd.set_item("doc", p.doc)?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Registered controllers with their parameters.
#[pyfunction]
fn controllers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    info_list(py, registry().iter().map(|c| (c.name, c.summary, c.params)))
}

/// Encoder model kinds with their parameters.
#[pyfunction]
fn encoders(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    info_list(
        py,
        KINDS.iter().map(|k| {
            let summary = match *k {
                "ideal" => "every frame exactly target / fps",
                "noise" => "gaussian frame-size noise around target / fps",
                _ => "follows target changes with a lag (seconds up, faster down), periodic key frames",
            };
            (*k, summary, EncoderConfig::param_info(k))
        }),
    )
}

/// TOML text of the built-in demo scenario.
#[pyfunction]
fn default_scenario() -> &'static str {
    rtcc_sim::DEFAULT_SCENARIO
}

/// Run one standard speed workload ("fixed" or "gcc").
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
    Ok(d)
}

#[pymodule]
fn _rtcc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(encoders, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    Ok(())
}
