//! RTP payload formats for video: how a codec's frame is cut into payloads
//! and put back together.

pub mod h264;
pub mod vp8;
