//! H.264 through OpenH264, configured as libwebrtc's
//! modules/video_coding/codecs/h264/h264_encoder_impl.cc configures it (see
//! csrc/codec_shim.c for the individual settings). Decoding uses OpenH264's
//! `DecodeFrameNoDelay` (libwebrtc itself decodes H.264 with FFmpeg).

use std::ffi::c_int;

use super::ffi::{self, Library, H264};
use super::h264_qp::SliceQpParser;
use super::EncodedPicture;

pub type H264Encoder = ffi::Encoder<H264>;
pub type H264Decoder = ffi::Decoder<H264>;

/// OpenH264 `ECOMPLEXITY_MODE` for [`super::EncoderSettings::speed`]: 0..=2
/// are the modes themselves; negative values (such as
/// [`super::EncoderSettings::webrtc`]'s -6) select `LOW_COMPLEXITY`,
/// OpenH264's default, which WebRTC uses (it never sets `iComplexityMode`).
fn complexity(speed: i32) -> i32 {
    speed.clamp(0, 2) // LOW_COMPLEXITY 0, MEDIUM_COMPLEXITY 1, HIGH_COMPLEXITY 2
}

impl Library for H264 {
    /// OpenH264 does not report the frame QP; read it from the slice header.
    type State = SliceQpParser;

    fn new_state() -> SliceQpParser {
        SliceQpParser::new()
    }

    /// OpenH264 takes the target in bps.
    fn rate(target_bps: u32) -> c_int {
        target_bps as i32
    }

    fn speed(speed: i32) -> c_int {
        complexity(speed)
    }

    fn finish(qp: &mut SliceQpParser, frame: &mut EncodedPicture) {
        frame.qp = qp.parse(&frame.data).unwrap_or(-1);
    }
}
