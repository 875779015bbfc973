//! `bench-aimd`: the Rust side of `rtcc bench --workload pyctl`, registered by
//! that bench only. Its rule is the Python port's in `rtcc.benchpy` to the bit
//! (f64 rate, one step per report), so the two runs must give the same rates
//! and the bench measures the cost of crossing into Python, nothing else.

use pyo3::prelude::*;

use rtcc_core::controller::{
    self, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo, Params, Pushback,
};
use rtcc_core::feedback::Feedback;
use rtcc_core::units::{DataRate, Time};

const INCREASE: Param<DataRate> =
    Param::rate("increase", DataRate::from_kbps(20), DataRate::ZERO, DataRate::MAX, "added per report without loss");
const DECREASE: Param<f64> = Param::number("decrease", 0.85, 0.1, 1.0, "factor on a report with loss");
const PARAMS: &[ParamInfo] = &[INCREASE.info(), DECREASE.info()];
/// As a Python controller's number decision is paced (goog_cc kPacingFactor).
const PACING_FACTOR: f64 = 2.5;

const INFO: ControllerInfo = ControllerInfo {
    name: "bench-aimd",
    summary: "AIMD on loss per report (rtcc bench --workload pyctl's Rust side)",
    params: PARAMS,
    create,
    receiver: None,
    pushback: Pushback::InFlight,
    needs_arrivals: true,
    report_format: rtcc_core::feedback::ReportFormat::Twcc,
};

struct Aimd {
    rate: f64,
    low: f64,
    high: f64,
    increase: f64,
    decrease: f64,
}

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Aimd {
        rate: ctx.start_rate.bps() as f64,
        low: ctx.min_rate.bps() as f64,
        high: ctx.max_rate.bps() as f64,
        increase: p.get(&INCREASE)?.bps() as f64,
        decrease: p.get(&DECREASE)?,
    }))
}

impl Controller for Aimd {
    fn name(&self) -> &str {
        "bench-aimd"
    }
    fn on_feedback(&mut self, _now: Time, fb: &Feedback) {
        if fb.packets.iter().any(|p| p.arrival.is_none()) {
            self.rate *= self.decrease;
        } else {
            self.rate += self.increase;
        }
        self.rate = self.rate.max(self.low).min(self.high);
    }
    fn decision(&self) -> Decision {
        Decision::rates(DataRate::from_bps_f64(self.rate), DataRate::from_bps_f64(self.rate * PACING_FACTOR))
    }
}

/// Registers `bench-aimd` (again: a no-op beyond the first).
#[pyfunction]
pub fn bench_aimd_register() -> PyResult<()> {
    controller::register(INFO).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}
