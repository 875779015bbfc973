//! The receiver-side estimator hook: algorithms that estimate the path at
//! the receiver (RRTCC/REMB, NADA's receiver part) see every arriving packet
//! there and put their estimate into each report. Sans-IO like the rest:
//! time comes in as `now`.

use super::{ConfigError, ControllerContext, Params};
use crate::packet::Packet;
use crate::units::{DataRate, Time};

pub trait ReceiverEstimator: Send {
    /// A packet arrived at `now` (receiver clock).
    fn on_packet(&mut self, now: Time, packet: &Packet);
    /// The estimate to carry in a report sent at `now`; `None` = no estimate yet.
    fn estimate(&mut self, now: Time) -> Option<DataRate>;
    /// Internal state for the time-series table: (column, value).
    fn state(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
}

/// Builds a controller's receiver-side estimator from the same parameters
/// the controller gets.
pub type EstimatorFactory = fn(&Params, &ControllerContext) -> Result<Box<dyn ReceiverEstimator>, ConfigError>;
