//! H.264 through OpenH264, configured as libwebrtc's
//! modules/video_coding/codecs/h264/h264_encoder_impl.cc configures it (see
//! csrc/codec_shim.c for the individual settings). Decoding uses OpenH264's
//! `DecodeFrameNoDelay` (libwebrtc itself decodes H.264 with FFmpeg).

use std::ptr::NonNull;

use super::ffi::{self, EncodeOut, ErrBuf};
use super::h264_qp::SliceQpParser;
use super::{check_picture, validate_rates, validate_size, Codec, CodecError, EncodedPicture, EncoderSettings};
use super::{VideoDecoder, VideoEncoder};
use crate::picture::Picture;

/// OpenH264 `ECOMPLEXITY_MODE` for [`EncoderSettings::speed`]: 0..=2 are the
/// modes themselves; negative values (such as [`EncoderSettings::webrtc`]'s
/// -6) select `LOW_COMPLEXITY`, OpenH264's default, which WebRTC uses (it
/// never sets `iComplexityMode`).
fn complexity(speed: i32) -> i32 {
    speed.clamp(0, 2) // LOW_COMPLEXITY 0, MEDIUM_COMPLEXITY 1, HIGH_COMPLEXITY 2
}

pub struct H264Encoder {
    raw: NonNull<ffi::H264Enc>,
    settings: EncoderSettings,
    /// OpenH264 does not report the frame QP; read it from the slice header.
    qp: SliceQpParser,
}

// The OpenH264 context is owned exclusively by this value and only used
// through &mut self, so moving it to another thread is fine.
unsafe impl Send for H264Encoder {}

impl H264Encoder {
    pub fn new(settings: EncoderSettings) -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: scalars and an error buffer of the given length.
        let raw = unsafe {
            ffi::rtcc_h264_enc_new(
                settings.width as i32,
                settings.height as i32,
                settings.fps,
                settings.target_bps as i32,
                complexity(settings.speed),
                settings.key_interval,
                settings.frame_dropping as i32,
                settings.threads as i32,
                err.ptr(),
                err.len(),
            )
        };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(Codec::H264))?;
        Ok(H264Encoder { raw, settings, qp: SliceQpParser::new() })
    }
}

impl Drop for H264Encoder {
    fn drop(&mut self) {
        // SAFETY: created by rtcc_h264_enc_new, freed once.
        unsafe { ffi::rtcc_h264_enc_free(self.raw.as_ptr()) }
    }
}

impl VideoEncoder for H264Encoder {
    fn set_rates(&mut self, target_bps: u32, fps: f64) -> Result<(), CodecError> {
        validate_rates(Codec::H264, target_bps, fps)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc =
            unsafe { ffi::rtcc_h264_enc_set_rates(self.raw.as_ptr(), target_bps as i32, fps, err.ptr(), err.len()) };
        if rc != 0 {
            return Err(err.error(Codec::H264));
        }
        self.settings.target_bps = target_bps;
        self.settings.fps = fps;
        Ok(())
    }

    fn set_size(&mut self, width: u32, height: u32) -> Result<(), CodecError> {
        validate_size(Codec::H264, width, height)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc = unsafe {
            ffi::rtcc_h264_enc_set_size(self.raw.as_ptr(), width as i32, height as i32, err.ptr(), err.len())
        };
        if rc != 0 {
            return Err(err.error(Codec::H264));
        }
        self.settings.width = width;
        self.settings.height = height;
        Ok(())
    }

    fn encode(&mut self, pic: &Picture, force_key: bool) -> Result<Option<EncodedPicture>, CodecError> {
        check_picture(Codec::H264, pic, self.settings.width, self.settings.height)?;
        let mut err = ErrBuf::new();
        let mut out = EncodeOut::new();
        // SAFETY: the planes were checked to hold width*height and
        // chroma-sized bytes; the shim reads exactly that much.
        let rc = unsafe {
            ffi::rtcc_h264_enc_encode(
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
            return Err(err.error(Codec::H264));
        }
        // SAFETY: the shim returned its buffer and length.
        let mut frame = unsafe { out.take() };
        if let Some(f) = frame.as_mut() {
            f.qp = self.qp.parse(&f.data).unwrap_or(-1);
        }
        Ok(frame)
    }

    fn settings(&self) -> &EncoderSettings {
        &self.settings
    }
}

pub struct H264Decoder {
    raw: NonNull<ffi::H264Dec>,
}

// Exclusively owned OpenH264 context, used through &mut self only.
unsafe impl Send for H264Decoder {}

impl H264Decoder {
    pub fn new() -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: error buffer of the given length.
        let raw = unsafe { ffi::rtcc_h264_dec_new(err.ptr(), err.len()) };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(Codec::H264))?;
        Ok(H264Decoder { raw })
    }
}

impl Drop for H264Decoder {
    fn drop(&mut self) {
        // SAFETY: created by rtcc_h264_dec_new, freed once.
        unsafe { ffi::rtcc_h264_dec_free(self.raw.as_ptr()) }
    }
}

impl VideoDecoder for H264Decoder {
    fn decode(&mut self, data: &[u8]) -> Result<Option<Picture>, CodecError> {
        let raw = self.raw.as_ptr();
        ffi::decode_with(
            Codec::H264,
            data,
            // SAFETY: valid handle; `data` is readable for its length.
            |w, h, err| unsafe {
                ffi::rtcc_h264_dec_decode(raw, data.as_ptr(), data.len(), w, h, err.ptr(), err.len())
            },
            // SAFETY: the planes were sized for the dimensions decode reported.
            |y, u, v| unsafe { ffi::rtcc_h264_dec_copy(raw, y, u, v) },
        )
    }
}
