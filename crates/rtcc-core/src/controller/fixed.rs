//! `fixed`: a constant target rate — the reference against which every
//! adaptive controller is judged, and the workload of the speed benchmark.

use super::{ConfigError, Controller, ControllerContext, ControllerInfo, Decision, Param, ParamInfo, Params};
use crate::units::DataRate;

const RATE: Param<DataRate> =
    Param::rate("rate", DataRate::from_mbps(1), DataRate::ZERO, DataRate::MAX, "encoder target bitrate").above_min();
/// libwebrtc paces at 2.5 × the target (DEFAULT_PACE_MULTIPLIER), so
/// retransmissions and key frames do not wait behind the video; 1 sends
/// exactly as smoothly as the encoder produces.
const PACING_FACTOR: Param<f64> = Param::number(
    "pacing_factor",
    2.5,
    0.05,
    100.0,
    "pacing rate / target rate (libwebrtc's 2.5; 1 sends as smoothly as the encoder produces)",
);
const PADDING: Param<DataRate> = Param::rate(
    "padding",
    DataRate::ZERO,
    DataRate::ZERO,
    DataRate::MAX,
    "padding rate sent when the pacer has no media",
);

pub const PARAMS: &[ParamInfo] = &[RATE.info(), PACING_FACTOR.info(), PADDING.info()];

pub const INFO: ControllerInfo = ControllerInfo {
    name: "fixed",
    summary: "constant target bitrate, paced at rate x pacing_factor",
    params: PARAMS,
    create,
    receiver: None,
    pushback: super::Pushback::InFlight,
    needs_arrivals: false,
    report_format: crate::feedback::ReportFormat::Twcc,
};

pub struct Fixed {
    decision: Decision,
}

fn create(p: &Params, _ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Fixed::new(p.get(&RATE)?, p.get(&PACING_FACTOR)?, p.get(&PADDING)?)))
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
    fn fixed_decision(&self) -> bool {
        true
    }
}
