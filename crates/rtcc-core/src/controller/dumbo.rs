//! (in progress)
use super::{ConfigError, Controller, ControllerContext, ControllerInfo, Params};
pub const INFO_COPA: ControllerInfo = ControllerInfo { name: "copa+dumbo", summary: "", params: &[], create };
pub const INFO_ROCC: ControllerInfo = ControllerInfo { name: "rocc+dumbo", summary: "", params: &[], create };

fn create(_p: &Params, _c: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Err(ConfigError::invalid("controller", "not built yet"))
}
