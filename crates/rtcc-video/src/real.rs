//! Real codecs in the simulated call. `RealEncoder` plugs into the sender:
//! at each frame instant (simulated time) it takes the source picture,
//! scales it to the sending resolution and encodes it with VP8/H.264 at the
//! controller's target; the bitstream travels in the frame's packets
//! (`Packet::payload`). `RealQuality` sits at the receiver's end of the frame
//! log: each displayed frame's bitstream, as the receiver reassembled it, is
//! decoded in display order (the receiver's decode chain already refuses
//! frames whose reference is missing, so the decoder sees a valid stream) and
//! compared with its own source frame, and the screen at every frame instant
//! is compared with the source the viewer should be seeing then (DESIGN §4).

use std::path::PathBuf;

use rtcc_core::encoder::{EncodedFrame, FrameEncoder};
use rtcc_core::packet::{Payload, PayloadFormat};
use rtcc_core::resolution::Resolution;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use crate::codec::{new_decoder, new_encoder, Codec, EncoderSettings, VideoDecoder, VideoEncoder};
use crate::content::{load_png, si, ti, ContentSource, Generated, Motion};
use crate::picture::Picture;
use crate::quality::{psnr_y, ssim_y};
use crate::y4m::{RawYuvReader, Y4mReader};

/// Where the source pictures come from.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentSpec {
    /// Built-in sequence made from photographs (or a procedural picture when
    /// none is given) with camera and object motion.
    Generated { motion: Motion, width: u32, height: u32, photos: Vec<PathBuf>, seed: u64 },
    /// A YUV4MPEG2 file, looped.
    Y4m { path: PathBuf },
    /// Raw I420 frames, looped.
    Yuv { path: PathBuf, width: u32, height: u32, fps: f64 },
}

impl ContentSpec {
    /// Open the source; `fps` is the call's frame rate (generated content is
    /// made at it).
    pub fn open(&self, fps: f64) -> Result<Box<dyn ContentSource>, String> {
        Ok(match self {
            ContentSpec::Generated { motion, width, height, photos, seed } => {
                // No photos: `Generated` makes procedural ones.
                let pics = photos.iter().map(|p| load_png(p).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
                Box::new(Generated::new(*motion, *width, *height, fps, *seed, pics))
            }
            ContentSpec::Y4m { path } => Box::new(Y4mReader::open(path).map_err(|e| e.to_string())?),
            ContentSpec::Yuv { path, width, height, fps } => {
                Box::new(RawYuvReader::open(path, *width, *height, *fps).map_err(|e| e.to_string())?)
            }
        })
    }
}

/// A flow's real-video settings.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoSpec {
    pub codec: Codec,
    /// libvpx cpu_used / OpenH264 complexity (see `EncoderSettings::speed`).
    pub speed: Option<i32>,
    /// Periodic key frames; `None` = only the first and requested ones.
    pub key_interval: Option<Duration>,
    pub frame_dropping: bool,
    pub threads: u32,
    pub content: ContentSpec,
}

/// Source frame shown at `t` (time since the flow started).
fn source_index(t: Duration, fps: f64) -> u64 {
    // A microsecond of slack: frame instants are whole microseconds.
    ((t.as_micros() as f64 + 1.0) * fps / 1e6).floor().max(0.0) as u64
}

/// Encode size for a sending resolution: its height (never above the
/// source's), the source's aspect ratio, even dimensions of at least 16 (as
/// I420 and H.264 want; an odd source loses its last row or column).
fn encode_size(src: (u32, u32), res: Resolution) -> (u32, u32) {
    let even = |v: f64| ((v / 2.0).floor() as u32 * 2).max(16);
    if res.size().1 >= src.1 {
        // The whole source, cropped to even (never resampled by a pixel).
        return (even(src.0 as f64), even(src.1 as f64));
    }
    let h = res.size().1 as f64;
    (even(src.0 as f64 * h / src.1 as f64), even(h))
}

/// The sender's encoder when the flow's encoder is a real codec.
pub struct RealEncoder {
    codec: Codec,
    enc: Box<dyn VideoEncoder>,
    source: Box<dyn ContentSource>,
    start: Time,
    fps: f64,
    src: Picture,
    key_pending: bool,
    /// The first codec error; the sender's driver reports it.
    failure: Option<String>,
    rate_kbps: u32,
    /// Output rate, bits/s, smoothed over about a second.
    out_rate: f64,
    /// Luma of the previous source picture the encoder was given, for TI.
    prev_y: Vec<u8>,
}

/// Time constant of the output-rate average in the time series.
const OUT_RATE_TAU_S: f64 = 1.0;

impl RealEncoder {
    /// `fps` is the call's frame rate; `start` the flow's first capture.
    pub fn new(spec: &VideoSpec, fps: f64, start: Time) -> Result<Self, String> {
        spec.codec.available().map_err(|e| e.to_string())?;
        let source = spec.content.open(fps)?;
        let (w, h) = encode_size(source.size(), Resolution::R1080);
        let mut s = EncoderSettings::webrtc(spec.codec, w, h, fps, 300_000);
        if let Some(sp) = spec.speed {
            s.speed = sp;
        }
        s.key_interval = spec.key_interval.map_or(0, |k| (k.as_secs_f64() * fps).round().max(1.0) as u32);
        s.frame_dropping = spec.frame_dropping;
        s.threads = spec.threads;
        let enc = new_encoder(&s).map_err(|e| e.to_string())?;
        Ok(RealEncoder {
            codec: spec.codec,
            enc,
            src: Picture::new(source.size().0, source.size().1),
            source,
            start,
            fps,
            key_pending: true,
            failure: None,
            rate_kbps: 300,
            out_rate: 0.0,
            prev_y: Vec::new(),
        })
    }

    fn fail(&mut self, what: String) {
        self.failure.get_or_insert(what);
    }
}

impl FrameEncoder for RealEncoder {
    fn kind(&self) -> &str {
        self.codec.name()
    }

    fn encode_frame(&mut self, _id: u32, now: Time, target: DataRate, res: Resolution) -> Option<EncodedFrame> {
        let dt = 1.0 / self.fps;
        self.out_rate *= (-dt / OUT_RATE_TAU_S).exp();
        let t = now.saturating_since(self.start);
        let index = source_index(t, self.source.fps());
        self.source.frame_into(index, &mut self.src);
        // ITU-T P.910 SI/TI of the source picture, as BurstRTC computes them
        // after capture (burstrtc.txt §IV-A1), for the controller's
        // `FrameInfo`: a few ms at 1080p, against tens for the encode. TI is
        // against the previous picture given to the encoder (0 for the first).
        let (si, ti) = {
            let y = &self.src.y;
            let si = si(self.src.width, self.src.height, y);
            let ti = if self.prev_y.len() == y.len() { ti(&self.prev_y, y) } else { 0.0 };
            self.prev_y.clear();
            self.prev_y.extend_from_slice(y);
            (si as f32, ti as f32)
        };
        let (w, h) = encode_size((self.src.width, self.src.height), res);
        let s = self.enc.settings();
        if (s.width, s.height) != (w, h) {
            if let Err(e) = self.enc.set_size(w, h) {
                self.fail(e.to_string());
                return None;
            }
            self.key_pending = true;
        }
        // libvpx/OpenH264 take kbps; WebRTC calls SetRates on every change.
        let kbps = (target.bps() / 1000).clamp(10, 100_000) as u32;
        if kbps != self.rate_kbps {
            if let Err(e) = self.enc.set_rates(kbps * 1000, self.fps) {
                self.fail(e.to_string());
                return None;
            }
            self.rate_kbps = kbps;
        }
        let scaled;
        let (sw, sh) = (self.src.width, self.src.height);
        let pic = if (w, h) == (sw, sh) {
            &self.src
        } else if (w, h) == (sw & !1, sh & !1) {
            // An odd source loses its last row/column, as RealQuality's.
            scaled = self.src.crop(0, 0, w, h);
            &scaled
        } else {
            scaled = self.src.resize(w, h);
            &scaled
        };
        match self.enc.encode(pic, self.key_pending) {
            Ok(Some(out)) => {
                self.key_pending = false;
                let size = out.data.len() as u64;
                self.out_rate += size as f64 * 8.0 / OUT_RATE_TAU_S;
                Some(EncodedFrame {
                    size: DataSize::from_bytes(size.max(1)),
                    key: out.key,
                    payload: Some(Payload::with_format(
                        match self.codec {
                            Codec::Vp8 => PayloadFormat::Vp8,
                            Codec::H264 => PayloadFormat::H264,
                        },
                        out.data,
                    )),
                    si,
                    ti,
                })
            }
            Ok(None) => None,
            Err(e) => {
                self.fail(e.to_string());
                None
            }
        }
    }

    fn request_key_frame(&mut self) {
        self.key_pending = true;
    }

    fn skip(&mut self, _now: Time, _target: DataRate) {
        self.out_rate *= (-1.0 / self.fps / OUT_RATE_TAU_S).exp();
    }

    fn output_rate(&self) -> DataRate {
        DataRate::from_bps_f64(self.out_rate)
    }

    fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// The picture on screen.
struct Held {
    pic: Picture,
    /// Its capture time since the flow started.
    t: Duration,
    psnr: f64,
    ssim: f64,
    target: DataRate,
}

/// Decodes displayed frames and measures them (see the module doc).
pub struct RealQuality {
    dec: Box<dyn VideoDecoder>,
    source: Box<dyn ContentSource>,
    /// The flow's first capture: source frames are indexed from it.
    start: Time,
    held: Option<Held>,
    src: Picture,
    raw: Picture,
    /// Receives every screen sample (saved video), if asked.
    pub sink: Option<Box<dyn ScreenSink>>,
    decode_errors: u64,
    failure: Option<String>,
}

/// Something that wants every screen sample: the picture shown, the source
/// the viewer should see, and the displayed frame's encoder target. `Send`
/// so a whole call can move to another thread.
pub trait ScreenSink: Send {
    fn screen(&mut self, shown: &Picture, source: &Picture, target: DataRate) -> Result<(), String>;
    fn finish(&mut self) -> Result<(), String>;
}

impl RealQuality {
    /// `fps` is the call's frame rate; `start` the flow's first capture (as
    /// given to its `RealEncoder`).
    pub fn new(spec: &VideoSpec, fps: f64, start: Time) -> Result<Self, String> {
        let source = spec.content.open(fps)?;
        let (w, h) = source.size();
        Ok(RealQuality {
            dec: new_decoder(spec.codec).map_err(|e| e.to_string())?,
            source,
            start,
            held: None,
            src: Picture::new(w, h),
            raw: Picture::new(w, h),
            sink: None,
            decode_errors: 0,
            failure: None,
        })
    }

    /// Displayed frames the decoder could not decode (rejected, or whose
    /// bytes did not reach the receiver).
    pub fn decode_errors(&self) -> u64 {
        self.decode_errors
    }

    /// The first error writing the saved video.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Size of what is measured and saved: the source's, cut to even
    /// dimensions (the encoders' and the saved video's I420 needs them).
    pub fn source_size(&self) -> (u32, u32) {
        let (w, h) = self.source.size();
        ((w & !1).max(2), (h & !1).max(2))
    }

    /// Source frame `index` into `self.src`, cut to `source_size`.
    fn fetch(&mut self, index: u64) {
        self.source.frame_into(index, &mut self.raw);
        let (w, h) = self.source_size();
        if (w, h) == (self.raw.width, self.raw.height) {
            std::mem::swap(&mut self.src, &mut self.raw);
        } else {
            self.src = self.raw.crop(0, 0, w, h);
        }
    }

    /// A frame's fate is settled. A displayed frame (`payload` as the
    /// receiver reassembled it, `capture` and `target` as the sender encoded
    /// it) is decoded and measured against its own source: (PSNR dB, SSIM).
    /// Others are not decoded: the decode chain never reaches them.
    pub fn settle(
        &mut self,
        payload: Option<&Payload>,
        capture: Time,
        target: DataRate,
        displayed: bool,
    ) -> Option<(f64, f64)> {
        if !displayed {
            return None;
        }
        let decoded = match payload {
            Some(p) => self.dec.decode(p.bytes()),
            None => Ok(None),
        };
        let pic = match decoded {
            Ok(Some(p)) => p,
            Ok(None) | Err(_) => {
                self.decode_errors += 1;
                return None;
            }
        };
        let t = capture.saturating_since(self.start);
        self.fetch(source_index(t, self.source.fps()));
        let (w, h) = (self.src.width, self.src.height);
        // Measured at the source's size: a lower sending resolution is
        // upscaled for display, as a receiver's renderer does.
        let pic = if (pic.width, pic.height) == (w, h) { pic } else { pic.resize(w, h) };
        let psnr = psnr_y(&pic, &self.src).ok()?;
        let ssim = ssim_y(&pic, &self.src).ok()?;
        self.held = Some(Held { pic, t, psnr, ssim, target });
        Some((psnr, ssim))
    }

    /// The screen `stale` after the held frame was due: the held picture
    /// against the source captured that much later (a frozen picture falls
    /// behind the moving scene). Zero is the frame itself.
    pub fn view(&mut self, stale: Duration) -> Option<(f64, f64)> {
        let held = self.held.take()?;
        let fresh = stale.as_micros() == 0;
        if !fresh || self.sink.is_some() {
            self.fetch(source_index(held.t + stale, self.source.fps()));
        }
        let q = if fresh {
            Some((held.psnr, held.ssim))
        } else {
            psnr_y(&held.pic, &self.src).ok().zip(ssim_y(&held.pic, &self.src).ok())
        };
        if let Some(sink) = &mut self.sink {
            if let Err(e) = sink.screen(&held.pic, &self.src, held.target) {
                self.failure.get_or_insert(e);
                self.sink = None;
            }
        }
        self.held = Some(held);
        q
    }

    /// End of the call: flush the sink.
    pub fn finish(&mut self) {
        if let Some(sink) = &mut self.sink {
            if let Err(e) = sink.finish() {
                self.failure.get_or_insert(e);
            }
        }
        self.sink = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_sizes_are_even_and_keep_the_aspect() {
        assert_eq!(encode_size((1280, 720), Resolution::R360), (640, 360));
        assert_eq!(encode_size((1280, 720), Resolution::R1080), (1280, 720));
        // An odd source is cropped by one line, not resampled.
        assert_eq!(encode_size((321, 239), Resolution::R1080), (320, 238));
        assert_eq!(encode_size((352, 288), Resolution::R180), (220, 180));
        assert_eq!(encode_size((20, 10), Resolution::R180), (20, 16));
    }
}
