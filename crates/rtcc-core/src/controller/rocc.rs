//! (in progress)
use super::{ConfigError, Controller, ControllerContext, ControllerInfo, Params};
pub const INFO: ControllerInfo = ControllerInfo { name: "rocc", summary: "", params: &[], create };

fn create(_p: &Params, _c: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Err(ConfigError::invalid("controller", "not built yet"))
}
