//! RTP payload formats for video: how a codec's frame is cut into payloads
//! and put back together.

pub mod h264;
pub mod red;
pub mod vp8;

/// Kept under its first name; the entry point is [`crate::fuzzing::depacketizers`].
#[doc(hidden)]
pub use crate::fuzzing::depacketizers as fuzz_depacketizers;
