//! rtcc-sim: a deterministic discrete-event simulator that drives rtcc-core's
//! senders, receivers and controllers over modelled links.

pub mod link;
pub mod loss;
pub mod queue;
pub mod trace;
