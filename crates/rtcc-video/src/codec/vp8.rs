//! VP8 through libvpx, configured as libwebrtc's
//! modules/video_coding/codecs/vp8/libvpx_vp8_encoder.cc configures it (see
//! csrc/codec_shim.c for the individual settings).

use std::ffi::{c_int, c_uint};

use super::ffi::{self, Library, Vp8};
use super::EncodedPicture;

pub type Vp8Encoder = ffi::Encoder<Vp8>;
pub type Vp8Decoder = ffi::Decoder<Vp8>;

/// libvpx takes the target in kbps; WebRTC divides bps by 1000. 0 kbps
/// would mean "stream off" in WebRTC, so the floor is 1 kbps.
fn kbps(bps: u32) -> u32 {
    (bps / 1000).max(1)
}

impl Library for Vp8 {
    type State = ();

    fn new_state() {}

    fn rate(target_bps: u32) -> c_uint {
        kbps(target_bps)
    }

    /// libvpx `VP8E_SET_CPUUSED` is the speed as given.
    fn speed(speed: i32) -> c_int {
        speed
    }

    /// libvpx reports the frame QP (`VP8E_GET_LAST_QUANTIZER`) itself.
    fn finish(_: &mut (), _: &mut EncodedPicture) {}
}
