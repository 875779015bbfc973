//! Measurements behind `rtcc calibrate-encoder`: run a real encoder over a
//! content source on a schedule of targets, decode every frame and measure
//! it, with the source's spatial/temporal information; and how fast a frozen
//! picture falls behind the moving source. The Python side fits the model
//! encoder's and the quality model's constants to these.

use crate::codec::{new_decoder, new_encoder, Codec, EncoderSettings};
use crate::content::si_ti;
use crate::picture::Picture;
use crate::quality::{psnr_y, ssim_y};
use crate::real::ContentSpec;

/// One frame of a calibration run.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqFrame {
    /// Capture time, s.
    pub t: f64,
    pub target_bps: u32,
    /// Encoded bytes; 0 when the encoder dropped the frame.
    pub size: usize,
    pub key: bool,
    pub qp: i32,
    /// Decoded luma PSNR (dB) and SSIM against the source at its own size;
    /// NaN for dropped frames or when not measured.
    pub psnr: f64,
    pub ssim: f64,
    /// ITU-T P.910 spatial and temporal information of the source frame.
    pub si: f64,
    pub ti: f64,
    /// Wall time of the `encode` call, ms: not deterministic, measured for
    /// the sender timing model's encode time.
    pub encode_ms: f64,
}

/// Encode `duration_s` of `content` at `fps`. `schedule` lists (time s,
/// target bps) steps, the first at 0. `encode_size` scales the source
/// before encoding (quality is still measured at the source's size, after
/// upscaling, as a receiver displays it). `measure` decodes and scores.
/// Frames whose index is in `force_keys` are coded as key frames (as on a
/// PLI).
#[allow(clippy::too_many_arguments)]
pub fn encode_sequence(
    codec: Codec,
    content: &ContentSpec,
    fps: f64,
    duration_s: f64,
    schedule: &[(f64, u32)],
    encode_size: Option<(u32, u32)>,
    speed: Option<i32>,
    measure: bool,
    force_keys: &[u64],
) -> Result<Vec<SeqFrame>, String> {
    if schedule.is_empty() || schedule[0].0 > 0.0 {
        return Err("schedule must start at time 0".into());
    }
    if !(fps.is_finite() && fps > 0.0 && duration_s.is_finite() && duration_s > 0.0) {
        return Err(format!("fps {fps} and duration {duration_s} must be positive"));
    }
    let mut source = content.open(fps)?;
    let (sw, sh) = source.size();
    let (w, h) = encode_size.unwrap_or((sw, sh));
    let mut s = EncoderSettings::webrtc(codec, w, h, fps, schedule[0].1);
    if let Some(sp) = speed {
        s.speed = sp;
    }
    let mut enc = new_encoder(&s).map_err(|e| e.to_string())?;
    let mut dec = new_decoder(codec).map_err(|e| e.to_string())?;
    let n = (duration_s * fps).round() as u64;
    let mut out = Vec::with_capacity(n as usize);
    let mut prev: Option<Picture> = None;
    let mut rate = schedule[0].1;
    let src_fps = source.fps();
    for i in 0..n {
        let t = i as f64 / fps;
        let target = schedule.iter().rev().find(|(at, _)| *at <= t + 1e-9).map_or(rate, |s| s.1);
        if target != rate {
            enc.set_rates(target, fps).map_err(|e| e.to_string())?;
            rate = target;
        }
        let src = source.frame((t * src_fps + 1e-6).floor() as u64);
        let (si, ti) = match &prev {
            Some(p) => si_ti(p, &src),
            None => si_ti(&src, &src),
        };
        let pic = if (w, h) == (sw, sh) { src.clone() } else { src.resize(w, h) };
        let clock = std::time::Instant::now();
        let coded = enc.encode(&pic, force_keys.contains(&i)).map_err(|e| e.to_string())?;
        let encode_ms = clock.elapsed().as_secs_f64() * 1e3;
        let mut f = SeqFrame {
            t,
            target_bps: target,
            size: 0,
            key: false,
            qp: -1,
            psnr: f64::NAN,
            ssim: f64::NAN,
            si,
            ti: if prev.is_some() { ti } else { f64::NAN },
            encode_ms,
        };
        if let Some(c) = coded {
            f.size = c.data.len();
            f.key = c.key;
            f.qp = c.qp;
            if measure {
                if let Some(d) = dec.decode(&c.data).map_err(|e| e.to_string())? {
                    let d = if (d.width, d.height) == (sw, sh) { d } else { d.resize(sw, sh) };
                    f.psnr = psnr_y(&d, &src).map_err(|e| e.to_string())?;
                    f.ssim = ssim_y(&d, &src).map_err(|e| e.to_string())?;
                }
            }
        }
        out.push(f);
        prev = Some(src);
    }
    Ok(out)
}

/// A frozen picture against the source `k` frames later, for k in 0..=max_k,
/// averaged over `starts` start frames spread over `span_s` seconds: (k,
/// mean PSNR dB, mean SSIM). The source itself stands in for the frozen
/// decoded picture, so this is the staleness alone, not coding loss.
pub fn frozen_curve(
    content: &ContentSpec,
    fps: f64,
    starts: u32,
    span_s: f64,
    max_k: u32,
) -> Result<Vec<(u32, f64, f64)>, String> {
    let mut source = content.open(fps)?;
    let starts = starts.max(1);
    let mut sums = vec![(0.0, 0.0); max_k as usize + 1];
    for s in 0..starts {
        let j = (s as f64 * span_s * fps / starts as f64).round() as u64;
        let held = source.frame(j);
        for k in 0..=max_k {
            let cur = source.frame(j + u64::from(k));
            let p = psnr_y(&held, &cur).map_err(|e| e.to_string())?;
            let q = ssim_y(&held, &cur).map_err(|e| e.to_string())?;
            sums[k as usize].0 += p;
            sums[k as usize].1 += q;
        }
    }
    Ok(sums.iter().enumerate().map(|(k, (p, q))| (k as u32, p / starts as f64, q / starts as f64)).collect())
}
