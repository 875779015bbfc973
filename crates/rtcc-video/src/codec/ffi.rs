//! Declarations of the C shim (csrc/codec_shim.c). The shim only exchanges
//! scalars, opaque handles and byte buffers, so no library struct layout is
//! mirrored here.

#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_uint};
use std::marker::{PhantomData, PhantomPinned};

use super::{Codec, CodecError};

macro_rules! opaque {
    ($name:ident) => {
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    };
}

opaque!(Vp8Enc);
opaque!(Vp8Dec);
opaque!(H264Enc);
opaque!(H264Dec);

#[cfg(rtcc_vpx)]
extern "C" {
    #[allow(clippy::too_many_arguments)]
    pub fn rtcc_vp8_enc_new(
        width: c_int,
        height: c_int,
        fps: f64,
        target_kbps: c_uint,
        cpu_used: c_int,
        kf_max_dist: c_uint,
        frame_dropping: c_int,
        threads: c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> *mut Vp8Enc;
    pub fn rtcc_vp8_enc_set_rates(
        e: *mut Vp8Enc,
        target_kbps: c_uint,
        fps: f64,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_vp8_enc_set_size(
        e: *mut Vp8Enc,
        width: c_int,
        height: c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn rtcc_vp8_enc_encode(
        e: *mut Vp8Enc,
        y: *const u8,
        u: *const u8,
        v: *const u8,
        width: c_int,
        height: c_int,
        force_key: c_int,
        out: *mut *const u8,
        out_len: *mut usize,
        is_key: *mut c_int,
        qp: *mut c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_vp8_enc_free(e: *mut Vp8Enc);

    pub fn rtcc_vp8_dec_new(err: *mut c_char, err_len: usize) -> *mut Vp8Dec;
    pub fn rtcc_vp8_dec_decode(
        d: *mut Vp8Dec,
        data: *const u8,
        len: usize,
        width: *mut c_int,
        height: *mut c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_vp8_dec_copy(d: *mut Vp8Dec, y: *mut u8, u: *mut u8, v: *mut u8) -> c_int;
    pub fn rtcc_vp8_dec_free(d: *mut Vp8Dec);
}

#[cfg(rtcc_h264)]
extern "C" {
    #[allow(clippy::too_many_arguments)]
    pub fn rtcc_h264_enc_new(
        width: c_int,
        height: c_int,
        fps: f64,
        target_bps: c_int,
        complexity: c_int,
        intra_period: c_uint,
        frame_skip: c_int,
        threads: c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> *mut H264Enc;
    pub fn rtcc_h264_enc_set_rates(
        e: *mut H264Enc,
        target_bps: c_int,
        fps: f64,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_h264_enc_set_size(
        e: *mut H264Enc,
        width: c_int,
        height: c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn rtcc_h264_enc_encode(
        e: *mut H264Enc,
        y: *const u8,
        u: *const u8,
        v: *const u8,
        width: c_int,
        height: c_int,
        force_key: c_int,
        out: *mut *const u8,
        out_len: *mut usize,
        is_key: *mut c_int,
        qp: *mut c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_h264_enc_free(e: *mut H264Enc);

    pub fn rtcc_h264_dec_new(err: *mut c_char, err_len: usize) -> *mut H264Dec;
    pub fn rtcc_h264_dec_decode(
        d: *mut H264Dec,
        data: *const u8,
        len: usize,
        width: *mut c_int,
        height: *mut c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    pub fn rtcc_h264_dec_copy(d: *mut H264Dec, y: *mut u8, u: *mut u8, v: *mut u8) -> c_int;
    pub fn rtcc_h264_dec_free(d: *mut H264Dec);
}

/// A buffer the shim writes its error message into.
pub struct ErrBuf([u8; 512]);

impl ErrBuf {
    pub fn new() -> Self {
        ErrBuf([0; 512])
    }

    pub fn ptr(&mut self) -> *mut c_char {
        self.0[0] = 0;
        self.0.as_mut_ptr().cast()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The message as a library error of `codec`.
    pub fn error(&self, codec: Codec) -> CodecError {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(self.0.len());
        let mut message = String::from_utf8_lossy(&self.0[..end]).into_owned();
        if message.is_empty() {
            message = "failed without a message".to_string();
        }
        CodecError::Library { codec, message }
    }
}

/// Output of one encode call of the shim.
pub struct EncodeOut {
    pub data: *const u8,
    pub len: usize,
    pub key: c_int,
    pub qp: c_int,
}

impl EncodeOut {
    pub fn new() -> Self {
        EncodeOut { data: std::ptr::null(), len: 0, key: 0, qp: -1 }
    }

    /// Copies the shim's output buffer (valid until the next call on the
    /// same encoder) into an [`super::EncodedPicture`]; `None` when empty
    /// (frame dropped by rate control).
    ///
    /// # Safety
    /// `data` must point to `len` readable bytes (or `len` be 0).
    pub unsafe fn take(&self) -> Option<super::EncodedPicture> {
        if self.len == 0 || self.data.is_null() {
            return None;
        }
        let data = std::slice::from_raw_parts(self.data, self.len).to_vec();
        Some(super::EncodedPicture { data, key: self.key != 0, qp: self.qp })
    }
}

/// Runs a shim decode (`decode` returns 1 = picture of the size it wrote,
/// 0 = no output, <0 = error) and copies the picture with `copy`.
pub fn decode_with(
    codec: Codec,
    data: &[u8],
    decode: impl FnOnce(&mut c_int, &mut c_int, &mut ErrBuf) -> c_int,
    copy: impl FnOnce(*mut u8, *mut u8, *mut u8) -> c_int,
) -> Result<Option<crate::picture::Picture>, CodecError> {
    if data.is_empty() {
        return Err(CodecError::BadBitstream { codec, reason: "empty bitstream".into() });
    }
    if data.len() > i32::MAX as usize {
        return Err(CodecError::BadBitstream { codec, reason: format!("{} bytes is too large", data.len()) });
    }
    let mut err = ErrBuf::new();
    let (mut w, mut h) = (0, 0);
    match decode(&mut w, &mut h, &mut err) {
        0 => return Ok(None),
        1 => {}
        _ => return Err(err.error(codec)),
    }
    if w <= 0 || h <= 0 || w as u32 > super::MAX_DIMENSION || h as u32 > super::MAX_DIMENSION {
        return Err(CodecError::Library { codec, message: format!("decoder returned a {w}x{h} picture") });
    }
    let (width, height) = (w as u32, h as u32);
    let (cw, ch) = crate::picture::chroma_size(width, height);
    let mut pic = crate::picture::Picture {
        width,
        height,
        y: vec![0; width as usize * height as usize],
        u: vec![0; cw as usize * ch as usize],
        v: vec![0; cw as usize * ch as usize],
    };
    if copy(pic.y.as_mut_ptr(), pic.u.as_mut_ptr(), pic.v.as_mut_ptr()) != 0 {
        return Err(CodecError::Library { codec, message: "decoder lost its picture before the copy".into() });
    }
    Ok(Some(pic))
}
