//! `fixed`: a constant target rate — the reference against which every
//! adaptive controller is judged, and the workload of the speed benchmark.

use super::{ConfigError, Controller, ControllerContext, ControllerInfo, Decision, ParamInfo, Params};
use crate::units::DataRate;

pub const INFO: ControllerInfo = ControllerInfo {
    name: "fixed",
    summary: "constant target bitrate, paced at rate x pacing_factor",
    params: &[
        ParamInfo { name: "rate", default: "1Mbps", doc: "encoder target bitrate" },
        ParamInfo {
            name: "pacing_factor",
            default: "1.0",
            doc: "pacing rate / target rate in [0.05, 100]; 1.0 sends as smoothly as the encoder produces",
        },
        ParamInfo { name: "padding", default: "0bps", doc: "padding rate sent when the pacer has no media" },
    ],
    create,
    receiver: None,
};

pub struct Fixed {
    decision: Decision,
}

fn create(p: &Params, _ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    let rate = p.rate("rate", DataRate::from_mbps(1))?;
    if rate == DataRate::ZERO {
        return Err(ConfigError::invalid("rate", "must be positive"));
    }
    let factor = p.f64_in("pacing_factor", 1.0, 0.05, 100.0)?;
    let padding = p.rate("padding", DataRate::ZERO)?;
    Ok(Box::new(Fixed::new(rate, factor, padding)))
}

impl Fixed {
    pub fn new(rate: DataRate, pacing_factor: f64, padding: DataRate) -> Self {
        Fixed {
            decision: Decision {
                target_rate: rate,
                pacing_rate: rate.mul_f64(pacing_factor),
                cwnd: None,
                padding_rate: padding,
                ..Decision::default()
            },
        }
    }
}

impl Controller for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }
    fn decision(&self) -> Decision {
        self.decision
    }
}
