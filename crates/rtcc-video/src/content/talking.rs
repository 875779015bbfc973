//! The talking-head scene: a portrait under a slowly swaying camera, a nodding head, sensor noise.

use std::f64::consts::TAU;

use super::hash::{hash3, Draw};
use super::photo::RgbImage;
use super::sample::{planes, round_even, sample_row, to_fx, Bufs, Plane, FX};
use super::synthetic::smoothstep;
use crate::picture::{chroma_size, Picture};

/// A soft mask over a rectangle of a plane: alpha 0..=256.
struct Mask {
    x0: usize,
    y0: usize,
    w: usize,
    h: usize,
    alpha: Vec<u16>,
}

/// Talking head: the background photo (with a margin for the sway) seen
/// through a slowly swaying camera; inside a soft ellipse (the head) the
/// picture is displaced further by its own slow nod and sway; per-frame
/// sensor noise on top.
pub(super) struct Talking {
    bg: [Plane; 3],
    /// Border around the visible frame in `bg`, luma pixels (even).
    margin: f64,
    cam_amp: f64,
    head_amp: (f64, f64),
    phase: [f64; 6],
    masks: [Mask; 2],
    /// Gaussian noise, 1/256 levels, σ = 1.5 levels; rows read it at hashed
    /// offsets.
    noise: Vec<i16>,
    seed: u64,
}

/// Sensor noise σ on luma, levels; chroma gets 2/3 of it.
const SENSOR_NOISE_SIGMA: f64 = 1.5;

impl Talking {
    pub(super) fn new(w: u32, h: u32, seed: u64, photo: &RgbImage) -> Talking {
        let (wf, hf) = (w as f64, h as f64);
        let cam_amp = 0.006 * wf;
        let head_amp = (0.01 * wf, 0.016 * hf);
        let margin = round_even(cam_amp + head_amp.0.max(head_amp.1) + 3.0) as f64;
        let m = margin as u32;
        let bg = planes(photo.cover(w + 2 * m, h + 2 * m));
        let mut d = Draw::new(seed, 0x7A1C);
        let phase = [0; 6].map(|_| d.range(0.0, TAU));
        let ellipse = |pw: usize, ph: usize, s: f64| {
            let (cx, cy, rx, ry) = (0.5 * wf * s, 0.43 * hf * s, 0.16 * wf * s, 0.31 * hf * s);
            let x0 = ((cx - rx).floor().max(0.0) as usize).min(pw - 1);
            let y0 = ((cy - ry).floor().max(0.0) as usize).min(ph - 1);
            let x1 = ((cx + rx).ceil() as usize + 1).min(pw);
            let y1 = ((cy + ry).ceil() as usize + 1).min(ph);
            let mut alpha = Vec::with_capacity((x1 - x0) * (y1 - y0));
            for y in y0..y1 {
                for x in x0..x1 {
                    let (u, v) = ((x as f64 + 0.5 - cx) / rx, (y as f64 + 0.5 - cy) / ry);
                    let r = (u * u + v * v).sqrt();
                    alpha.push(((1.0 - smoothstep((r - 0.8) / 0.2)) * 256.0).round() as u16);
                }
            }
            Mask { x0, y0, w: x1 - x0, h: y1 - y0, alpha }
        };
        let (cw, ch) = chroma_size(w, h);
        let masks = [ellipse(w as usize, h as usize, 1.0), ellipse(cw as usize, ch as usize, 0.5)];
        let mut nd = Draw::new(seed, 0x0153);
        let len = (1usize << 16).max(4 * w as usize);
        let lim = 4.0 * SENSOR_NOISE_SIGMA * FX;
        let noise = (0..len).map(|_| (nd.normal() * SENSOR_NOISE_SIGMA * FX).clamp(-lim, lim).round() as i16).collect();
        Talking { bg, margin, cam_amp, head_amp, phase, masks, noise, seed }
    }

    pub(super) fn render(&self, t: f64, index: u64, out: &mut Picture, (tmp, row_a, row_b): Bufs) {
        let ph = &self.phase;
        let s = |f: f64, p: f64| (TAU * f * t + p).sin();
        // Camera: ~0.2 Hz sway with a slower drift; head: its own nod and sway.
        let cx = self.cam_amp * (0.75 * s(0.2, ph[0]) + 0.25 * s(0.07, ph[1]));
        let cy = 0.6 * self.cam_amp * (0.7 * s(0.16, ph[2]) + 0.3 * s(0.05, ph[3]));
        let hx = self.head_amp.0 * s(0.27, ph[4]);
        let hy = self.head_amp.1 * (0.8 * s(0.42, ph[5]) + 0.2 * s(1.1, ph[5] * 1.7));
        let (w, h) = (out.width, out.height);
        let (cw, ch) = chroma_size(w, h);
        let planes: [(&mut [u8], usize, usize); 3] = [
            (&mut out.y, w as usize, h as usize),
            (&mut out.u, cw as usize, ch as usize),
            (&mut out.v, cw as usize, ch as usize),
        ];
        for (p, (dst, pw, ph)) in planes.into_iter().enumerate() {
            let sc = if p == 0 { 1.0 } else { 0.5 };
            let src = &self.bg[p];
            let mask = &self.masks[p.min(1)];
            let (bx, by) = (to_fx((self.margin + cx) * sc), to_fx((self.margin + cy) * sc));
            let (hx, hy) = (to_fx((self.margin + cx + hx) * sc), to_fx((self.margin + cy + hy) * sc));
            let a = &mut row_a[..pw];
            for y in 0..ph {
                sample_row(src, bx, by + ((y as i64) << 8), false, tmp, a);
                if (mask.y0..mask.y0 + mask.h).contains(&y) {
                    let b = &mut row_b[..mask.w];
                    sample_row(src, hx + ((mask.x0 as i64) << 8), hy + ((y as i64) << 8), false, tmp, b);
                    let al = &mask.alpha[(y - mask.y0) * mask.w..(y - mask.y0 + 1) * mask.w];
                    for ((o, &v), &m) in a[mask.x0..mask.x0 + mask.w].iter_mut().zip(b.iter()).zip(al) {
                        let m = m as u32;
                        *o = ((*o as u32 * (256 - m) + v as u32 * m + 128) >> 8) as u16;
                    }
                }
                let r = hash3(self.seed ^ 0x9015E, index, ((p as u64) << 32) | y as u64);
                let off = (r % (self.noise.len() - pw + 1) as u64) as usize;
                let nz = &self.noise[off..off + pw];
                let drow = &mut dst[y * pw..(y + 1) * pw];
                if p == 0 {
                    for ((o, &v), &n) in drow.iter_mut().zip(a.iter()).zip(nz) {
                        *o = ((v as i32 + n as i32 + 128) >> 8).clamp(0, 255) as u8;
                    }
                } else {
                    for ((o, &v), &n) in drow.iter_mut().zip(a.iter()).zip(nz) {
                        *o = ((v as i32 + ((n as i32 * 171) >> 8) + 128) >> 8).clamp(0, 255) as u8;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::content::{si_ti, ContentSource, Generated, Motion};
    use crate::quality::{psnr_y, ssim_y};

    #[test]
    fn talking_head_noise_is_mild_and_fresh_each_frame() {
        // With no motion (same time), two frames would differ only by noise;
        // frames 1/30 s apart differ by noise plus a sub-pixel of sway.
        let mut g = Generated::new(Motion::TalkingHead, 320, 180, 30.0, 3, vec![]);
        let (a, b) = (g.frame(100), g.frame(101));
        let psnr = psnr_y(&a, &b).unwrap();
        assert!(psnr > 28.0 && psnr < 48.0, "neighbouring frames PSNR {psnr}");
        let ssim = ssim_y(&a, &b).unwrap();
        assert!(ssim > 0.8, "neighbouring frames SSIM {ssim}");
        // The noise is not static: the difference has noise-like spread.
        let (_, ti) = si_ti(&a, &b);
        assert!(ti > 1.5, "TI {ti}");
    }

    #[test]
    fn talking_head_moves_only_a_few_pixels() {
        // Frames far apart stay close: the camera sways around one place
        // rather than drifting, so frame 0 vs frame 300 is like frame 0 vs 15.
        let mut g = Generated::new(Motion::TalkingHead, 320, 180, 30.0, 4, vec![]);
        let f0 = g.frame(0);
        let worst = (0..300).step_by(10).map(|i| psnr_y(&f0, &g.frame(i)).unwrap()).fold(f64::MAX, f64::min);
        assert!(worst > 15.0, "talking head wandered off: worst PSNR {worst}");
    }
}
