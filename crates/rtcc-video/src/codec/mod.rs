//! VP8 (libvpx) and H.264 (OpenH264) encoders and decoders, configured the way
//! libwebrtc configures them, behind one small trait pair.
//!
//! * [`new_encoder`] / [`new_decoder`] build a codec from [`EncoderSettings`];
//!   [`EncoderSettings::webrtc`] gives WebRTC's defaults for a camera stream.
//! * [`VideoEncoder::set_rates`] is WebRTC's `SetRates` (in-place
//!   reconfiguration of the running rate controller), [`VideoEncoder::set_size`]
//!   a resolution change (next frame is a key frame).
//! * Everything is deterministic for the same input with `threads == 1` and
//!   (VP8) a negative `speed`: the capture clock the libraries see is derived
//!   from the frame count and the configured frame rate, never from wall time.
//!
//! The libraries are found by build.rs with pkg-config. A build without one of
//! them still compiles; [`Codec::available`], [`new_encoder`] and
//! [`new_decoder`] then return [`CodecError::Unavailable`] for that codec.
//!
//! The C side lives in `csrc/codec_shim.c`; [`ffi`] declares it.

use std::fmt;

use crate::picture::{chroma_size, Picture};

#[cfg(any(rtcc_vpx, rtcc_h264))]
mod ffi;
#[cfg(rtcc_h264)]
mod h264;
mod h264_qp;
#[cfg(rtcc_vpx)]
mod vp8;

#[cfg(test)]
mod tests;

/// A video codec rtcc can encode and decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    Vp8,
    H264,
}

impl Codec {
    /// Short lowercase name: `"vp8"` or `"h264"` (what [`Codec::parse`] accepts).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Vp8 => "vp8",
            Codec::H264 => "h264",
        }
    }

    /// Parses a codec name, case-insensitively: `vp8`, `h264` (also `h.264`, `avc`).
    pub fn parse(s: &str) -> Option<Codec> {
        match s.trim().to_ascii_lowercase().as_str() {
            "vp8" => Some(Codec::Vp8),
            "h264" | "h.264" | "avc" => Some(Codec::H264),
            _ => None,
        }
    }

    /// `Ok(())` when this build of rtcc was compiled with the codec's library.
    pub fn available(self) -> Result<(), CodecError> {
        let compiled_in = match self {
            Codec::Vp8 => cfg!(rtcc_vpx),
            Codec::H264 => cfg!(rtcc_h264),
        };
        if compiled_in {
            Ok(())
        } else {
            Err(CodecError::Unavailable { codec: self, library: self.library(), package: self.package() })
        }
    }

    /// The library that implements the codec.
    pub fn library(self) -> &'static str {
        match self {
            Codec::Vp8 => "libvpx",
            Codec::H264 => "OpenH264",
        }
    }

    fn package(self) -> &'static str {
        match self {
            Codec::Vp8 => "libvpx-dev",
            Codec::H264 => "libopenh264-dev",
        }
    }

    /// Human-readable name, also used by `Display`: `"VP8"` or `"H.264"`.
    pub fn label(self) -> &'static str {
        match self {
            Codec::Vp8 => "VP8",
            Codec::H264 => "H.264",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Encoder configuration. Start from [`EncoderSettings::webrtc`].
#[derive(Clone, Debug, PartialEq)]
pub struct EncoderSettings {
    pub codec: Codec,
    /// Picture size: 1..=16383 for VP8 (odd sizes work); H.264 needs even
    /// sizes of at least 16x16.
    pub width: u32,
    pub height: u32,
    /// Input frame rate; also the rate controllers' frame rate. At least 1
    /// (WebRTC rejects lower rates).
    pub fps: f64,
    /// Target bit rate, bits per second. libvpx takes kbps: VP8 uses
    /// `max(target_bps / 1000, 1)` (WebRTC's integer division).
    pub target_bps: u32,
    /// Speed/complexity knob.
    ///
    /// * VP8: libvpx `VP8E_SET_CPUUSED`, -16..=16. WebRTC's desktop default is
    ///   -6 (higher complexity: -5, -4, -3; WebRTC uses -4 below 352x288 when
    ///   the default is -6 — rtcc does not apply that adjustment, pass it
    ///   yourself). Negative values select the fixed speed `-speed`;
    ///   0 and positive values make libvpx pick the speed from *measured
    ///   encode time*, which is not deterministic.
    /// * H.264: OpenH264's `iComplexityMode`: 0 `LOW_COMPLEXITY` (fastest),
    ///   1 `MEDIUM_COMPLEXITY`, 2 `HIGH_COMPLEXITY`. Negative values (such as
    ///   the -6 of [`EncoderSettings::webrtc`]) mean `LOW_COMPLEXITY`,
    ///   OpenH264's default, which WebRTC keeps. Above 2 is an error.
    pub speed: i32,
    /// Periodic key frame every N frames; 0 = only the first frame and
    /// requested ones. WebRTC's default is 3000 for VP8 (`kf_mode` auto,
    /// `kf_max_dist`) and H.264 (`uiIntraPeriod`).
    pub key_interval: u32,
    /// Encoder frame dropping as WebRTC enables it: VP8 `rc_dropframe_thresh`
    /// 30, OpenH264 `bEnableFrameSkip`.
    pub frame_dropping: bool,
    /// Encoder threads (libvpx `g_threads`, OpenH264 `iMultipleThreadIdc`).
    /// 1 (the default) keeps the output deterministic.
    pub threads: u32,
}

impl EncoderSettings {
    /// WebRTC's defaults for a single-layer camera stream: speed -6, key frame
    /// interval 3000, frame dropping on, one thread.
    pub fn webrtc(codec: Codec, width: u32, height: u32, fps: f64, target_bps: u32) -> Self {
        EncoderSettings {
            codec,
            width,
            height,
            fps,
            target_bps,
            speed: -6,
            key_interval: 3000,
            frame_dropping: true,
            threads: 1,
        }
    }

    /// Checks the settings every codec needs; codec-specific limits are
    /// checked by the codec (and by its library).
    fn validate(&self) -> Result<(), CodecError> {
        let bad = |reason: String| Err(CodecError::InvalidSettings { codec: self.codec, reason });
        validate_size(self.codec, self.width, self.height)?;
        validate_rates(self.codec, self.target_bps, self.fps)?;
        if self.threads == 0 || self.threads > 64 {
            return bad(format!("threads must be 1..=64, got {}", self.threads));
        }
        if self.codec == Codec::Vp8 && !(-16..=16).contains(&self.speed) {
            return bad(format!("VP8 speed (cpu_used) must be -16..=16, got {}", self.speed));
        }
        if self.codec == Codec::H264 && self.speed > 2 {
            return bad(format!("H.264 speed (OpenH264 complexity) must be at most 2, got {}", self.speed));
        }
        Ok(())
    }
}

/// Largest width/height accepted (VP8 codes sizes in 14 bits).
pub const MAX_DIMENSION: u32 = 16383;

fn validate_size(codec: Codec, width: u32, height: u32) -> Result<(), CodecError> {
    if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION {
        return Err(CodecError::InvalidSettings {
            codec,
            reason: format!("size {width}x{height} is outside 1x1..={MAX_DIMENSION}x{MAX_DIMENSION}"),
        });
    }
    // OpenH264 fails below one macroblock and silently drops the last
    // column/row of odd sizes (its output would not match the input).
    if codec == Codec::H264 && (width < 16 || height < 16 || !width.is_multiple_of(2) || !height.is_multiple_of(2)) {
        return Err(CodecError::InvalidSettings {
            codec,
            reason: format!("OpenH264 needs an even width and height of at least 16, got {width}x{height}"),
        });
    }
    Ok(())
}

fn validate_rates(codec: Codec, target_bps: u32, fps: f64) -> Result<(), CodecError> {
    if target_bps == 0 || target_bps > i32::MAX as u32 {
        return Err(CodecError::InvalidSettings {
            codec,
            reason: format!("target bit rate must be 1..={} bps, got {target_bps}", i32::MAX),
        });
    }
    if !fps.is_finite() || !(1.0..=1000.0).contains(&fps) {
        return Err(CodecError::InvalidSettings {
            codec,
            reason: format!("frame rate must be 1..=1000 fps, got {fps}"),
        });
    }
    Ok(())
}

/// Checks that `pic` is `width`x`height` with consistent plane lengths.
#[cfg_attr(not(any(rtcc_vpx, rtcc_h264)), allow(dead_code))]
fn check_picture(codec: Codec, pic: &Picture, width: u32, height: u32) -> Result<(), CodecError> {
    if pic.width != width || pic.height != height {
        return Err(CodecError::WrongSize { codec, expected: (width, height), got: (pic.width, pic.height) });
    }
    let (cw, ch) = chroma_size(pic.width, pic.height);
    let luma = pic.width as usize * pic.height as usize;
    let chroma = cw as usize * ch as usize;
    if pic.y.len() != luma || pic.u.len() != chroma || pic.v.len() != chroma {
        return Err(CodecError::BadPicture {
            codec,
            reason: format!(
                "{}x{} I420 needs planes of {luma}/{chroma}/{chroma} bytes, got {}/{}/{}",
                pic.width,
                pic.height,
                pic.y.len(),
                pic.u.len(),
                pic.v.len()
            ),
        });
    }
    Ok(())
}

/// One encoded frame: the complete bitstream of one picture (VP8 frame, or
/// H.264 access unit in Annex B with start codes; key frames carry SPS/PPS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedPicture {
    pub data: Vec<u8>,
    /// Key frame (VP8 key frame, H.264 IDR).
    pub key: bool,
    /// Quantizer of this frame in the codec's bitstream scale, as WebRTC's
    /// `EncodedImage::qp_`: VP8 0..=127 (`VP8E_GET_LAST_QUANTIZER`), H.264
    /// 0..=51 (slice QP parsed from the bitstream, as libwebrtc's
    /// `H264BitstreamParser` does). -1 when unknown.
    pub qp: i32,
}

/// A video encoder driven the way WebRTC drives it.
pub trait VideoEncoder: Send {
    /// WebRTC `SetRates`: reconfigures the running encoder in place (libvpx
    /// `vpx_codec_enc_config_set` with the new `rc_target_bitrate`; OpenH264
    /// `SetOption(ENCODER_OPTION_BITRATE / ENCODER_OPTION_FRAME_RATE)`); never
    /// restarts it. `fps` is the frame rate the following frames arrive at.
    fn set_rates(&mut self, target_bps: u32, fps: f64) -> Result<(), CodecError>;
    /// New resolution; the next frame is a key frame. VP8: reconfigured in
    /// place when not larger than the size the encoder was created with
    /// (rate-control state is kept), otherwise re-created. H.264: re-created
    /// (as WebRTC's `InitEncode` does), at the current rates.
    fn set_size(&mut self, width: u32, height: u32) -> Result<(), CodecError>;
    /// Encodes one picture (its size must equal the configured size).
    /// `force_key` = key frame on request (PLI/FIR). Returns `None` when the
    /// encoder's rate control dropped the frame.
    fn encode(&mut self, pic: &Picture, force_key: bool) -> Result<Option<EncodedPicture>, CodecError>;
    /// Current settings (reflecting `set_rates` and `set_size`).
    fn settings(&self) -> &EncoderSettings;
}

/// A video decoder.
pub trait VideoDecoder: Send {
    /// Decodes one complete frame's bitstream; `Ok(None)` when the decoder
    /// output nothing. The first frame must be a key frame.
    fn decode(&mut self, data: &[u8]) -> Result<Option<Picture>, CodecError>;
}

/// Creates an encoder for `s.codec`.
pub fn new_encoder(s: &EncoderSettings) -> Result<Box<dyn VideoEncoder>, CodecError> {
    s.codec.available()?;
    s.validate()?;
    match s.codec {
        #[cfg(rtcc_vpx)]
        Codec::Vp8 => Ok(Box::new(vp8::Vp8Encoder::new(s.clone())?)),
        #[cfg(rtcc_h264)]
        Codec::H264 => Ok(Box::new(h264::H264Encoder::new(s.clone())?)),
        #[allow(unreachable_patterns)]
        c => Err(c.available().expect_err("codec compiled out")),
    }
}

/// Creates a decoder for `codec`.
pub fn new_decoder(codec: Codec) -> Result<Box<dyn VideoDecoder>, CodecError> {
    codec.available()?;
    match codec {
        #[cfg(rtcc_vpx)]
        Codec::Vp8 => Ok(Box::new(vp8::Vp8Decoder::new()?)),
        #[cfg(rtcc_h264)]
        Codec::H264 => Ok(Box::new(h264::H264Decoder::new()?)),
        #[allow(unreachable_patterns)]
        c => Err(c.available().expect_err("codec compiled out")),
    }
}

/// Errors from the codecs. Messages name the codec and, for library
/// failures, carry the library's own error text.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The codec's library was not found when rtcc was built.
    #[error(
        "{codec} needs {library}, which this build of rtcc was compiled without: install {package} \
         (Debian/Ubuntu: apt-get install libvpx-dev libopenh264-dev) and reinstall rtcc"
    )]
    Unavailable { codec: Codec, library: &'static str, package: &'static str },
    /// Settings (or `set_rates`/`set_size` arguments) out of range.
    #[error("invalid {codec} encoder settings: {reason}")]
    InvalidSettings { codec: Codec, reason: String },
    /// The picture's size is not the encoder's configured size.
    #[error("{codec} encoder is configured for {}x{} pictures, got {}x{}", expected.0, expected.1, got.0, got.1)]
    WrongSize { codec: Codec, expected: (u32, u32), got: (u32, u32) },
    /// The picture's planes do not match its size.
    #[error("malformed picture for {codec}: {reason}")]
    BadPicture { codec: Codec, reason: String },
    /// Empty or oversized bitstream given to a decoder.
    #[error("{codec} decoder: {reason}")]
    BadBitstream { codec: Codec, reason: String },
    /// The library reported an error (its message is included).
    #[error("{codec} {message}")]
    Library { codec: Codec, message: String },
}
