//! VP8 through libvpx, configured as libwebrtc's
//! modules/video_coding/codecs/vp8/libvpx_vp8_encoder.cc configures it (see
//! csrc/codec_shim.c for the individual settings).

use std::ptr::NonNull;

use super::ffi::{self, EncodeOut, ErrBuf};
use super::{check_picture, validate_rates, validate_size, Codec, CodecError, EncodedPicture, EncoderSettings};
use super::{VideoDecoder, VideoEncoder};
use crate::picture::Picture;

/// libvpx takes the target in kbps; WebRTC divides bps by 1000. 0 kbps
/// would mean "stream off" in WebRTC, so the floor is 1 kbps.
fn kbps(bps: u32) -> u32 {
    (bps / 1000).max(1)
}

pub struct Vp8Encoder {
    raw: NonNull<ffi::Vp8Enc>,
    settings: EncoderSettings,
}

// The libvpx context is owned exclusively by this value and only used
// through &mut self, so moving it to another thread is fine.
unsafe impl Send for Vp8Encoder {}

impl Vp8Encoder {
    pub fn new(settings: EncoderSettings) -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: scalars and an error buffer of the given length.
        let raw = unsafe {
            ffi::rtcc_vp8_enc_new(
                settings.width as i32,
                settings.height as i32,
                settings.fps,
                kbps(settings.target_bps),
                settings.speed,
                settings.key_interval,
                settings.frame_dropping as i32,
                settings.threads as i32,
                err.ptr(),
                err.len(),
            )
        };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(Codec::Vp8))?;
        Ok(Vp8Encoder { raw, settings })
    }
}

impl Drop for Vp8Encoder {
    fn drop(&mut self) {
        // SAFETY: created by rtcc_vp8_enc_new, freed once.
        unsafe { ffi::rtcc_vp8_enc_free(self.raw.as_ptr()) }
    }
}

impl VideoEncoder for Vp8Encoder {
    fn set_rates(&mut self, target_bps: u32, fps: f64) -> Result<(), CodecError> {
        validate_rates(Codec::Vp8, target_bps, fps)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc = unsafe { ffi::rtcc_vp8_enc_set_rates(self.raw.as_ptr(), kbps(target_bps), fps, err.ptr(), err.len()) };
        if rc != 0 {
            return Err(err.error(Codec::Vp8));
        }
        self.settings.target_bps = target_bps;
        self.settings.fps = fps;
        Ok(())
    }

    fn set_size(&mut self, width: u32, height: u32) -> Result<(), CodecError> {
        validate_size(Codec::Vp8, width, height)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc =
            unsafe { ffi::rtcc_vp8_enc_set_size(self.raw.as_ptr(), width as i32, height as i32, err.ptr(), err.len()) };
        if rc != 0 {
            return Err(err.error(Codec::Vp8));
        }
        self.settings.width = width;
        self.settings.height = height;
        Ok(())
    }

    fn encode(&mut self, pic: &Picture, force_key: bool) -> Result<Option<EncodedPicture>, CodecError> {
        check_picture(Codec::Vp8, pic, self.settings.width, self.settings.height)?;
        let mut err = ErrBuf::new();
        let mut out = EncodeOut::new();
        // SAFETY: the planes were checked to hold width*height and
        // chroma-sized bytes; the shim reads exactly that much.
        let rc = unsafe {
            ffi::rtcc_vp8_enc_encode(
                self.raw.as_ptr(),
                pic.y.as_ptr(),
                pic.u.as_ptr(),
                pic.v.as_ptr(),
                pic.width as i32,
                pic.height as i32,
                force_key as i32,
                &mut out.data,
                &mut out.len,
                &mut out.key,
                &mut out.qp,
                err.ptr(),
                err.len(),
            )
        };
        if rc != 0 {
            return Err(err.error(Codec::Vp8));
        }
        // SAFETY: the shim returned its buffer and length.
        Ok(unsafe { out.take() })
    }

    fn settings(&self) -> &EncoderSettings {
        &self.settings
    }
}

pub struct Vp8Decoder {
    raw: NonNull<ffi::Vp8Dec>,
}

// Exclusively owned libvpx context, used through &mut self only.
unsafe impl Send for Vp8Decoder {}

impl Vp8Decoder {
    pub fn new() -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: error buffer of the given length.
        let raw = unsafe { ffi::rtcc_vp8_dec_new(err.ptr(), err.len()) };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(Codec::Vp8))?;
        Ok(Vp8Decoder { raw })
    }
}

impl Drop for Vp8Decoder {
    fn drop(&mut self) {
        // SAFETY: created by rtcc_vp8_dec_new, freed once.
        unsafe { ffi::rtcc_vp8_dec_free(self.raw.as_ptr()) }
    }
}

impl VideoDecoder for Vp8Decoder {
    fn decode(&mut self, data: &[u8]) -> Result<Option<Picture>, CodecError> {
        let raw = self.raw.as_ptr();
        ffi::decode_with(
            Codec::Vp8,
            data,
            // SAFETY: valid handle; `data` is readable for its length.
            |w, h, err| unsafe { ffi::rtcc_vp8_dec_decode(raw, data.as_ptr(), data.len(), w, h, err.ptr(), err.len()) },
            // SAFETY: the planes were sized for the dimensions decode reported.
            |y, u, v| unsafe { ffi::rtcc_vp8_dec_copy(raw, y, u, v) },
        )
    }
}
