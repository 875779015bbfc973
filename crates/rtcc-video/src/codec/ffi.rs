//! The C shim (csrc/codec_shim.c) and the encoder and decoder built on it.
//!
//! The shim has the same nine functions for each library (`rtcc_vp8_*` over
//! libvpx, `rtcc_h264_*` over OpenH264), so [`shim!`] declares them once per
//! library and [`Encoder`] / [`Decoder`] drive either through the [`Shim`]
//! trait; what differs between the codecs is the [`Library`] trait, which
//! vp8.rs and h264.rs implement. The shim only exchanges scalars, opaque
//! handles and byte buffers, so no library struct layout is mirrored here.

#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_uint};
use std::marker::{PhantomData, PhantomPinned};
use std::ptr::NonNull;

use super::{check_picture, validate_rates, validate_size, Codec, CodecError, EncodedPicture, EncoderSettings};
use super::{VideoDecoder, VideoEncoder};
use crate::picture::Picture;

macro_rules! opaque {
    ($name:ident) => {
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    };
}

/// One library's functions in the shim, as function pointers (each set by
/// [`shim!`] to the matching `extern` declaration, so the compiler checks
/// that the two signatures agree). `Enc`, `Dec`: the opaque encoder and
/// decoder handles; `Rate`: the type of the target-rate argument.
pub trait Shim {
    const CODEC: Codec;
    type Enc;
    type Dec;
    type Rate;
    const ENC_NEW: EncNew<Self::Enc, Self::Rate>;
    const ENC_SET_RATES: EncSetRates<Self::Enc, Self::Rate>;
    const ENC_SET_SIZE: EncSetSize<Self::Enc>;
    const ENC_ENCODE: EncEncode<Self::Enc>;
    const ENC_FREE: unsafe extern "C" fn(*mut Self::Enc);
    const DEC_NEW: unsafe extern "C" fn(*mut c_char, usize) -> *mut Self::Dec;
    const DEC_DECODE: DecDecode<Self::Dec>;
    const DEC_COPY: unsafe extern "C" fn(*mut Self::Dec, *mut u8, *mut u8, *mut u8) -> c_int;
    const DEC_FREE: unsafe extern "C" fn(*mut Self::Dec);
}

/// (width, height, fps, target, speed, key_interval, frame_dropping, threads,
/// err, err_len) -> encoder, or null with the message in `err`.
pub type EncNew<E, R> =
    unsafe extern "C" fn(c_int, c_int, f64, R, c_int, c_uint, c_int, c_int, *mut c_char, usize) -> *mut E;
/// (encoder, target, fps, err, err_len) -> 0 or error.
pub type EncSetRates<E, R> = unsafe extern "C" fn(*mut E, R, f64, *mut c_char, usize) -> c_int;
/// (encoder, width, height, err, err_len) -> 0 or error.
pub type EncSetSize<E> = unsafe extern "C" fn(*mut E, c_int, c_int, *mut c_char, usize) -> c_int;
/// (encoder, y, u, v, width, height, force_key, out, out_len, is_key, qp, err,
/// err_len) -> 0 or error; `out` stays valid until the next call.
pub type EncEncode<E> = unsafe extern "C" fn(
    *mut E,
    *const u8,
    *const u8,
    *const u8,
    c_int,
    c_int,
    c_int,
    *mut *const u8,
    *mut usize,
    *mut c_int,
    *mut c_int,
    *mut c_char,
    usize,
) -> c_int;
/// (decoder, data, len, width, height, err, err_len) -> 1 = a picture of the
/// size it wrote, 0 = no output, <0 = error.
pub type DecDecode<D> =
    unsafe extern "C" fn(*mut D, *const u8, usize, *mut c_int, *mut c_int, *mut c_char, usize) -> c_int;

/// Declares the `rtcc_<name>_*` functions of one library in module `$module`
/// (with its opaque `Enc` and `Dec` handles) and implements [`Shim`] for the
/// marker type `$lib` with them.
macro_rules! shim {
    ($(#[$cfg:meta])* $lib:ident in $module:ident = $codec:expr, $name:literal, rate: $rate:ty) => {
        $(#[$cfg])*
        pub enum $lib {}

        $(#[$cfg])*
        pub mod $module {
            use super::*;

            opaque!(Enc);
            opaque!(Dec);

            extern "C" {
                #[link_name = concat!("rtcc_", $name, "_enc_new")]
                #[allow(clippy::too_many_arguments)]
                pub fn enc_new(
                    width: c_int,
                    height: c_int,
                    fps: f64,
                    target: $rate,
                    speed: c_int,
                    key_interval: c_uint,
                    frame_dropping: c_int,
                    threads: c_int,
                    err: *mut c_char,
                    err_len: usize,
                ) -> *mut Enc;
                #[link_name = concat!("rtcc_", $name, "_enc_set_rates")]
                pub fn enc_set_rates(e: *mut Enc, target: $rate, fps: f64, err: *mut c_char, err_len: usize) -> c_int;
                #[link_name = concat!("rtcc_", $name, "_enc_set_size")]
                pub fn enc_set_size(e: *mut Enc, width: c_int, height: c_int, err: *mut c_char, err_len: usize)
                    -> c_int;
                #[link_name = concat!("rtcc_", $name, "_enc_encode")]
                #[allow(clippy::too_many_arguments)]
                pub fn enc_encode(
                    e: *mut Enc,
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
                #[link_name = concat!("rtcc_", $name, "_enc_free")]
                pub fn enc_free(e: *mut Enc);

                #[link_name = concat!("rtcc_", $name, "_dec_new")]
                pub fn dec_new(err: *mut c_char, err_len: usize) -> *mut Dec;
                #[link_name = concat!("rtcc_", $name, "_dec_decode")]
                pub fn dec_decode(
                    d: *mut Dec,
                    data: *const u8,
                    len: usize,
                    width: *mut c_int,
                    height: *mut c_int,
                    err: *mut c_char,
                    err_len: usize,
                ) -> c_int;
                #[link_name = concat!("rtcc_", $name, "_dec_copy")]
                pub fn dec_copy(d: *mut Dec, y: *mut u8, u: *mut u8, v: *mut u8) -> c_int;
                #[link_name = concat!("rtcc_", $name, "_dec_free")]
                pub fn dec_free(d: *mut Dec);
            }

            impl Shim for super::$lib {
                const CODEC: Codec = $codec;
                type Enc = Enc;
                type Dec = Dec;
                type Rate = $rate;
                const ENC_NEW: EncNew<Enc, $rate> = enc_new;
                const ENC_SET_RATES: EncSetRates<Enc, $rate> = enc_set_rates;
                const ENC_SET_SIZE: EncSetSize<Enc> = enc_set_size;
                const ENC_ENCODE: EncEncode<Enc> = enc_encode;
                const ENC_FREE: unsafe extern "C" fn(*mut Enc) = enc_free;
                const DEC_NEW: unsafe extern "C" fn(*mut c_char, usize) -> *mut Dec = dec_new;
                const DEC_DECODE: DecDecode<Dec> = dec_decode;
                const DEC_COPY: unsafe extern "C" fn(*mut Dec, *mut u8, *mut u8, *mut u8) -> c_int = dec_copy;
                const DEC_FREE: unsafe extern "C" fn(*mut Dec) = dec_free;
            }
        }
    };
}

shim! {
    /// libvpx; the rate is `target_kbps`, speed `cpu_used`, key interval
    /// `kf_max_dist`.
    #[cfg(rtcc_vpx)]
    Vp8 in vp8 = Codec::Vp8, "vp8", rate: c_uint
}
shim! {
    /// OpenH264; the rate is `target_bps`, speed the complexity mode, key
    /// interval `intra_period`, frame dropping `frame_skip`.
    #[cfg(rtcc_h264)]
    H264 in h264 = Codec::H264, "h264", rate: c_int
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
    /// same encoder) into an [`EncodedPicture`]; `None` when empty
    /// (frame dropped by rate control).
    ///
    /// # Safety
    /// `data` must point to `len` readable bytes (or `len` be 0).
    pub unsafe fn take(&self) -> Option<EncodedPicture> {
        if self.len == 0 || self.data.is_null() {
            return None;
        }
        let data = std::slice::from_raw_parts(self.data, self.len).to_vec();
        Some(EncodedPicture { data, key: self.key != 0, qp: self.qp })
    }
}

/// What differs between the codecs beyond their shim functions; implemented
/// in vp8.rs and h264.rs.
pub trait Library: Shim {
    /// Rust-side state of one encoder.
    type State: Send;
    fn new_state() -> Self::State;
    /// The shim's target-rate argument for `target_bps`.
    fn rate(target_bps: u32) -> Self::Rate;
    /// The shim's speed argument for [`EncoderSettings::speed`].
    fn speed(speed: i32) -> c_int;
    /// Completes a frame the shim encoded (e.g. fills in its QP).
    fn finish(state: &mut Self::State, frame: &mut EncodedPicture);
}

/// An encoder of library `L`.
pub struct Encoder<L: Library> {
    raw: NonNull<L::Enc>,
    settings: EncoderSettings,
    state: L::State,
}

// SAFETY: the library context is owned exclusively by this value and only
// used through &mut self, so moving it to another thread is fine (the
// Rust-side state is Send by the bound on `Library::State`).
unsafe impl<L: Library> Send for Encoder<L> {}

impl<L: Library> Encoder<L> {
    pub fn new(settings: EncoderSettings) -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: scalars and an error buffer of the given length.
        let raw = unsafe {
            (L::ENC_NEW)(
                settings.width as i32,
                settings.height as i32,
                settings.fps,
                L::rate(settings.target_bps),
                L::speed(settings.speed),
                settings.key_interval,
                settings.frame_dropping as i32,
                settings.threads as i32,
                err.ptr(),
                err.len(),
            )
        };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(L::CODEC))?;
        Ok(Encoder { raw, settings, state: L::new_state() })
    }
}

impl<L: Library> Drop for Encoder<L> {
    fn drop(&mut self) {
        // SAFETY: created by ENC_NEW, freed once.
        unsafe { (L::ENC_FREE)(self.raw.as_ptr()) }
    }
}

impl<L: Library> VideoEncoder for Encoder<L> {
    fn set_rates(&mut self, target_bps: u32, fps: f64) -> Result<(), CodecError> {
        validate_rates(L::CODEC, target_bps, fps)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc = unsafe { (L::ENC_SET_RATES)(self.raw.as_ptr(), L::rate(target_bps), fps, err.ptr(), err.len()) };
        if rc != 0 {
            return Err(err.error(L::CODEC));
        }
        self.settings.target_bps = target_bps;
        self.settings.fps = fps;
        Ok(())
    }

    fn set_size(&mut self, width: u32, height: u32) -> Result<(), CodecError> {
        validate_size(L::CODEC, width, height)?;
        let mut err = ErrBuf::new();
        // SAFETY: valid handle, error buffer of the given length.
        let rc = unsafe { (L::ENC_SET_SIZE)(self.raw.as_ptr(), width as i32, height as i32, err.ptr(), err.len()) };
        if rc != 0 {
            return Err(err.error(L::CODEC));
        }
        self.settings.width = width;
        self.settings.height = height;
        Ok(())
    }

    fn encode(&mut self, pic: &Picture, force_key: bool) -> Result<Option<EncodedPicture>, CodecError> {
        check_picture(L::CODEC, pic, self.settings.width, self.settings.height)?;
        let mut err = ErrBuf::new();
        let mut out = EncodeOut::new();
        // SAFETY: the planes were checked to hold width*height and
        // chroma-sized bytes; the shim reads exactly that much.
        let rc = unsafe {
            (L::ENC_ENCODE)(
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
            return Err(err.error(L::CODEC));
        }
        // SAFETY: the shim returned its buffer and length.
        let mut frame = unsafe { out.take() };
        if let Some(f) = frame.as_mut() {
            L::finish(&mut self.state, f);
        }
        Ok(frame)
    }

    fn settings(&self) -> &EncoderSettings {
        &self.settings
    }
}

/// A decoder of library `L`.
pub struct Decoder<L: Library> {
    raw: NonNull<L::Dec>,
}

// SAFETY: exclusively owned library context, used through &mut self only.
unsafe impl<L: Library> Send for Decoder<L> {}

impl<L: Library> Decoder<L> {
    pub fn new() -> Result<Self, CodecError> {
        let mut err = ErrBuf::new();
        // SAFETY: error buffer of the given length.
        let raw = unsafe { (L::DEC_NEW)(err.ptr(), err.len()) };
        let raw = NonNull::new(raw).ok_or_else(|| err.error(L::CODEC))?;
        Ok(Decoder { raw })
    }
}

impl<L: Library> Drop for Decoder<L> {
    fn drop(&mut self) {
        // SAFETY: created by DEC_NEW, freed once.
        unsafe { (L::DEC_FREE)(self.raw.as_ptr()) }
    }
}

impl<L: Library> VideoDecoder for Decoder<L> {
    /// Runs the shim's decode and copies the picture it reports out.
    fn decode(&mut self, data: &[u8]) -> Result<Option<Picture>, CodecError> {
        let codec = L::CODEC;
        if data.is_empty() {
            return Err(CodecError::BadBitstream { codec, reason: "empty bitstream".into() });
        }
        if data.len() > i32::MAX as usize {
            return Err(CodecError::BadBitstream { codec, reason: format!("{} bytes is too large", data.len()) });
        }
        let mut err = ErrBuf::new();
        let (mut w, mut h) = (0, 0);
        // SAFETY: valid handle; `data` is readable for its length.
        let rc = unsafe {
            (L::DEC_DECODE)(self.raw.as_ptr(), data.as_ptr(), data.len(), &mut w, &mut h, err.ptr(), err.len())
        };
        match rc {
            0 => return Ok(None),
            1 => {}
            _ => return Err(err.error(codec)),
        }
        if w <= 0 || h <= 0 || w as u32 > super::MAX_DIMENSION || h as u32 > super::MAX_DIMENSION {
            return Err(CodecError::Library { codec, message: format!("decoder returned a {w}x{h} picture") });
        }
        let (width, height) = (w as u32, h as u32);
        let (cw, ch) = crate::picture::chroma_size(width, height);
        let mut pic = Picture {
            width,
            height,
            y: vec![0; width as usize * height as usize],
            u: vec![0; cw as usize * ch as usize],
            v: vec![0; cw as usize * ch as usize],
        };
        // SAFETY: the planes were sized for the dimensions decode reported.
        let rc =
            unsafe { (L::DEC_COPY)(self.raw.as_ptr(), pic.y.as_mut_ptr(), pic.u.as_mut_ptr(), pic.v.as_mut_ptr()) };
        if rc != 0 {
            return Err(CodecError::Library { codec, message: "decoder lost its picture before the copy".into() });
        }
        Ok(Some(pic))
    }
}
