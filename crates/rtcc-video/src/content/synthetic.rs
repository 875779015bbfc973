//! Procedural stand-ins for photographs: [`synthetic_photo`] and [`synthetic_portrait`].

use std::f64::consts::TAU;

use super::hash::{hash3, unit, Draw};
use super::photo::RgbImage;

/// A procedural stand-in for a photograph, `width`×`height`, a pure
/// function of its arguments. Codecs and quality metrics behave on it much
/// as on a real photo because it has what they react to: a natural-image-
/// like spectrum from multi-octave value noise (smooth shading everywhere,
/// fine texture in patches, down to ~2 pixels), shaded shapes with soft and
/// hard anti-aliased edges, thin lines, stripes and text-like blocks, in
/// muted colours. Used when no photos are given, and by tests. Layout is
/// defined relative to the height, so two sizes of one seed show the same
/// picture.
pub fn synthetic_photo(width: u32, height: u32, seed: u64) -> RgbImage {
    let mut c = Canvas::new(width, height, seed);
    c.scene(seed);
    c.finish()
}

/// [`synthetic_photo`] with a head-and-shoulders figure in the middle (hair,
/// face with eyes, brows, nose and mouth, neck, textured clothing): the
/// default background for talking-head content, so the region that nods has
/// a face's edges and texture rather than whatever the scene put there.
pub fn synthetic_portrait(width: u32, height: u32, seed: u64) -> RgbImage {
    let mut c = Canvas::new(width, height, seed);
    c.scene(seed);
    c.figure(seed);
    c.finish()
}

/// Float RGB canvas with the shared texture fields.
struct Canvas {
    w: usize,
    h: usize,
    img: Vec<[f32; 3]>,
    /// Smooth shading texture, most energy in the lowest octaves.
    tex_lo: Vec<f32>,
    /// Fine texture (flat spectrum from 16 cycles/height down to 2 px),
    /// already weighted by where the scene is detailed.
    tex_hi: Vec<f32>,
}

impl Canvas {
    fn new(width: u32, height: u32, seed: u64) -> Canvas {
        assert!(width > 0 && height > 0, "empty synthetic photo {width}x{height}");
        let (w, h) = (width as usize, height as usize);
        let hf = h as f64;
        let tex_lo = fbm(w, h, 3.0, 0.6, hf / 2.0, seed);
        let mut tex_hi = fbm(w, h, 16.0, 0.85, hf / 2.0, seed ^ 0x44);
        // Detail comes in patches, as in photos (foliage beside sky).
        let patches = fbm(w, h, 2.0, 0.5, 4.0, seed ^ 0x55);
        for (t, &m) in tex_hi.iter_mut().zip(&patches) {
            *t *= 0.35 + 0.65 * smoothstep(m as f64 * 1.5 + 0.5) as f32;
        }
        Canvas { w, h, img: vec![[0f32; 3]; w * h], tex_lo, tex_hi }
    }

    /// Background gradient, then random shapes.
    fn scene(&mut self, seed: u64) {
        let (w, h) = (self.w, self.h);
        let (wf, hf) = (w as f64, h as f64);
        let mut d = Draw::new(seed, 0x5107);
        let tint_r = fbm(w, h, 1.5, 0.5, 6.0, seed ^ 0x11);
        let tint_b = fbm(w, h, 1.5, 0.5, 6.0, seed ^ 0x22);
        // Two colours meeting at a soft horizon.
        let top = colour(&mut d, 0.5, 0.9);
        let bottom = colour(&mut d, 0.15, 0.6);
        let horizon = d.range(0.3, 0.7) * hf;
        let soft = 0.12 * hf;
        let lo = d.range(25.0, 40.0) as f32;
        let hi = d.range(22.0, 40.0) as f32;
        for y in 0..h {
            let s = smoothstep(((y as f64 - horizon) / soft + 1.0) / 2.0) as f32;
            let c = [0, 1, 2].map(|k| top[k] as f32 * (1.0 - s) + bottom[k] as f32 * s);
            for x in 0..w {
                let i = y * w + x;
                let t = self.tex_lo[i] * lo + self.tex_hi[i] * hi;
                self.img[i] = [c[0] + t + 14.0 * tint_r[i], c[1] + t, c[2] + t + 14.0 * tint_b[i]];
            }
        }
        let mut shapes = Vec::new();
        for _ in 0..7 {
            shapes.push(Shape::Ellipse {
                cx: d.range(-0.1, 1.1) * wf,
                cy: d.range(-0.1, 1.1) * hf,
                rx: d.range(0.06, 0.3) * hf,
                ry: d.range(0.06, 0.3) * hf,
                angle: d.range(0.0, TAU),
                soft: d.range(0.1, 0.5),
            });
        }
        // A rectangle with its centre at fractions `c` of the width and
        // height, half sizes `hw` and `hh` (× height), turned by up to
        // ±`turn`; its fill is drawn last.
        let rect = |d: &mut Draw,
                    c: (f64, f64),
                    hw: (f64, f64),
                    hh: (f64, f64),
                    turn: f64,
                    fill: &dyn Fn(&mut Draw) -> Fill| {
            Shape::Rect {
                cx: d.range(c.0, c.1) * wf,
                cy: d.range(c.0, c.1) * hf,
                hw: d.range(hw.0, hw.1) * hf,
                hh: d.range(hh.0, hh.1) * hf,
                angle: d.range(-turn, turn),
                fill: fill(d),
            }
        };
        for _ in 0..5 {
            shapes.push(rect(&mut d, (0.0, 1.0), (0.04, 0.22), (0.04, 0.22), 0.5, &|_| Fill::Plain));
        }
        for _ in 0..2 {
            let stripes = |d: &mut Draw| Fill::Stripes(d.range(0.012, 0.035) * hf);
            shapes.push(rect(&mut d, (0.1, 0.9), (0.06, 0.15), (0.06, 0.15), 0.3, &stripes));
        }
        for k in 0..3 {
            let text = |d: &mut Draw| Fill::Text { cell: d.range(0.012, 0.025) * hf, seed: seed ^ k };
            shapes.push(rect(&mut d, (0.1, 0.9), (0.05, 0.12), (0.03, 0.08), 0.15, &text));
        }
        for _ in 0..6 {
            let (x0, y0) = (d.range(0.0, 1.0) * wf, d.range(0.0, 1.0) * hf);
            let (len, a) = (d.range(0.15, 0.6) * hf, d.range(0.0, TAU));
            shapes.push(Shape::Line {
                x0,
                y0,
                x1: x0 + len * a.cos(),
                y1: y0 + len * a.sin(),
                half: d.range(0.5, 1.5) * (hf / 768.0).max(1.0),
            });
        }
        for shape in &shapes {
            let look = Look {
                col: colour(&mut d, 0.15, 0.9),
                col2: colour(&mut d, 0.05, 0.9),
                lo: d.range(0.3, 1.3) as f32 * lo,
                hi: d.range(0.0, 1.5) as f32 * hi,
                shade: d.range(-40.0, 40.0) as f32,
            };
            self.paint(shape, &look);
        }
    }

    /// A head-and-shoulders figure centred horizontally.
    fn figure(&mut self, seed: u64) {
        let (cx, hf) = (self.w as f64 / 2.0, self.h as f64);
        let mut d = Draw::new(seed, 0xF16);
        const SKIN: [[f64; 3]; 6] = [
            [224., 172., 135.],
            [198., 144., 106.],
            [141., 95., 66.],
            [241., 204., 175.],
            [232., 184., 145.],
            [98., 67., 48.],
        ];
        let skin = SKIN[(d.u() * SKIN.len() as f64) as usize % SKIN.len()].map(|v| v + d.range(-8.0, 8.0));
        let hair = colour(&mut d, 0.05, 0.35);
        let cloth = colour(&mut d, 0.15, 0.7);
        let e = |x: f64, y: f64, rx: f64, ry: f64, soft: f64| Shape::Ellipse {
            cx: cx + x * hf,
            cy: y * hf,
            rx: rx * hf,
            ry: ry * hf,
            angle: 0.0,
            soft,
        };
        let flat = |col: [f64; 3], lo: f32, hi: f32, shade: f32| Look { col, col2: col, lo, hi, shade };
        let dark = [40.0, 28.0, 26.0];
        let parts: Vec<(Shape, Look)> = vec![
            (e(0.0, 1.08, 0.42, 0.36, 0.04), flat(cloth, 20.0, 35.0, -30.0)),
            (
                Shape::Rect { cx, cy: 0.69 * hf, hw: 0.055 * hf, hh: 0.09 * hf, angle: 0.0, fill: Fill::Plain },
                flat(skin.map(|v| v * 0.85), 6.0, 3.0, 12.0),
            ),
            (e(0.0, 0.40, 0.168, 0.2, 0.06), flat(hair, 15.0, 40.0, -20.0)),
            (e(0.0, 0.46, 0.145, 0.19, 0.05), flat(skin, 8.0, 3.0, -18.0)),
            (e(-0.145, 0.47, 0.02, 0.035, 0.3), flat(skin.map(|v| v * 0.9), 5.0, 2.0, 0.0)),
            (e(0.145, 0.47, 0.02, 0.035, 0.3), flat(skin.map(|v| v * 0.9), 5.0, 2.0, 0.0)),
            (e(0.0, 0.315, 0.15, 0.06, 0.15), flat(hair, 15.0, 40.0, 0.0)),
            (e(-0.055, 0.43, 0.028, 0.012, 0.25), flat([235.0, 232.0, 228.0], 0.0, 0.0, 0.0)),
            (e(0.055, 0.43, 0.028, 0.012, 0.25), flat([235.0, 232.0, 228.0], 0.0, 0.0, 0.0)),
            (e(-0.055, 0.43, 0.01, 0.01, 0.2), flat(dark, 0.0, 0.0, 0.0)),
            (e(0.055, 0.43, 0.01, 0.01, 0.2), flat(dark, 0.0, 0.0, 0.0)),
            (
                Shape::Rect {
                    cx: cx - 0.058 * hf,
                    cy: 0.404 * hf,
                    hw: 0.032 * hf,
                    hh: 0.005 * hf,
                    angle: 0.08,
                    fill: Fill::Plain,
                },
                flat(hair, 0.0, 0.0, 0.0),
            ),
            (
                Shape::Rect {
                    cx: cx + 0.058 * hf,
                    cy: 0.404 * hf,
                    hw: 0.032 * hf,
                    hh: 0.005 * hf,
                    angle: -0.08,
                    fill: Fill::Plain,
                },
                flat(hair, 0.0, 0.0, 0.0),
            ),
            (e(0.006, 0.485, 0.012, 0.035, 0.6), flat(skin.map(|v| v * 0.78), 0.0, 0.0, 0.0)),
            (e(0.0, 0.55, 0.048, 0.011, 0.3), flat([150.0, 70.0, 70.0], 0.0, 0.0, 0.0)),
        ];
        for (shape, look) in &parts {
            self.paint(shape, look);
        }
    }

    fn paint(&mut self, shape: &Shape, look: &Look) {
        let (bx0, by0, bx1, by1) = shape.bbox(self.w, self.h);
        for y in by0..by1 {
            for x in bx0..bx1 {
                let (alpha, along, second) = shape.coverage(x as f64 + 0.5, y as f64 + 0.5);
                if alpha <= 0.0 {
                    continue;
                }
                let i = y * self.w + x;
                let base = if second { look.col2 } else { look.col };
                let t = self.tex_lo[i] * look.lo + self.tex_hi[i] * look.hi + look.shade * along as f32;
                let a = alpha as f32;
                for (c, &b) in self.img[i].iter_mut().zip(&base) {
                    *c = *c * (1.0 - a) + (b as f32 + t) * a;
                }
            }
        }
    }

    fn finish(self) -> RgbImage {
        let rgb = self.img.iter().flat_map(|p| p.map(|v| v.round().clamp(0.0, 255.0) as u8)).collect();
        RgbImage { width: self.w as u32, height: self.h as u32, rgb }
    }
}

/// How a shape is coloured: base colours (the second for stripes and
/// text), how much of each texture it shows, and a linear shading.
struct Look {
    col: [f64; 3],
    col2: [f64; 3],
    lo: f32,
    hi: f32,
    shade: f32,
}

pub(super) fn smoothstep(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// A muted random colour with value in [lo, hi].
fn colour(d: &mut Draw, lo: f64, hi: f64) -> [f64; 3] {
    let hue = d.range(0.0, 6.0);
    let sat = d.range(0.1, 0.55);
    let val = d.range(lo, hi) * 255.0;
    let f = hue.fract();
    let (p, q, t) = (val * (1.0 - sat), val * (1.0 - sat * f), val * (1.0 - sat * (1.0 - f)));
    match hue as u32 {
        0 => [val, t, p],
        1 => [q, val, p],
        2 => [p, val, t],
        3 => [p, q, val],
        4 => [t, p, val],
        _ => [val, p, q],
    }
}

/// Fractal value noise, zero-mean, roughly unit peak: octaves from `base`
/// cycles per picture height, each twice the frequency and `gain` times the
/// amplitude of the last, up to `max_freq` cycles per height.
fn fbm(w: usize, h: usize, base: f64, gain: f64, max_freq: f64, seed: u64) -> Vec<f32> {
    let mut out = vec![0f32; w * h];
    let (mut freq, mut amp, mut octave) = (base, 1.0f64, 0u64);
    let mut cols: Vec<(usize, f32)> = Vec::with_capacity(w);
    while freq <= max_freq.max(base) {
        let cell = h as f64 / freq;
        let gw = (w as f64 / cell).ceil() as usize + 2;
        let gh = (h as f64 / cell).ceil() as usize + 2;
        let lat: Vec<f32> =
            (0..gw * gh).map(|k| (unit(hash3(seed, octave, k as u64)) * 2.0 - 1.0) as f32 * amp as f32).collect();
        cols.clear();
        cols.extend((0..w).map(|x| {
            let p = x as f64 / cell;
            (p as usize, smoothstep(p.fract()) as f32)
        }));
        for y in 0..h {
            let p = y as f64 / cell;
            let (j, sy) = (p as usize, smoothstep(p.fract()) as f32);
            let (r0, r1) = (&lat[j * gw..(j + 1) * gw], &lat[(j + 1) * gw..(j + 2) * gw]);
            for (o, &(i, sx)) in out[y * w..(y + 1) * w].iter_mut().zip(&cols) {
                let a = r0[i] + (r0[i + 1] - r0[i]) * sx;
                let b = r1[i] + (r1[i + 1] - r1[i]) * sx;
                *o += a + (b - a) * sy;
            }
        }
        freq *= 2.0;
        amp *= gain;
        octave += 1;
    }
    out
}

#[derive(Clone, Copy)]
enum Fill {
    Plain,
    /// Alternating colours, this period in pixels.
    Stripes(f64),
    /// Glyph-like blocks of the second colour on a grid of this cell size.
    Text {
        cell: f64,
        seed: u64,
    },
}

enum Shape {
    Ellipse { cx: f64, cy: f64, rx: f64, ry: f64, angle: f64, soft: f64 },
    Rect { cx: f64, cy: f64, hw: f64, hh: f64, angle: f64, fill: Fill },
    Line { x0: f64, y0: f64, x1: f64, y1: f64, half: f64 },
}

impl Shape {
    fn bbox(&self, w: usize, h: usize) -> (usize, usize, usize, usize) {
        let (x0, y0, x1, y1) = match *self {
            Shape::Ellipse { cx, cy, rx, ry, .. } => {
                let r = rx.max(ry);
                (cx - r, cy - r, cx + r, cy + r)
            }
            Shape::Rect { cx, cy, hw, hh, .. } => {
                let r = (hw * hw + hh * hh).sqrt() + 1.0;
                (cx - r, cy - r, cx + r, cy + r)
            }
            Shape::Line { x0, y0, x1, y1, half } => {
                (x0.min(x1) - half - 1.0, y0.min(y1) - half - 1.0, x0.max(x1) + half + 1.0, y0.max(y1) + half + 1.0)
            }
        };
        let c = |v: f64, m: usize| v.floor().clamp(0.0, m as f64) as usize;
        (c(x0, w), c(y0, h), c(x1 + 1.0, w), c(y1 + 1.0, h))
    }

    /// (coverage 0..1, position along the shape's shading axis −1..1,
    /// whether the second colour applies) at pixel centre (x, y).
    fn coverage(&self, x: f64, y: f64) -> (f64, f64, bool) {
        match *self {
            Shape::Ellipse { cx, cy, rx, ry, angle, soft } => {
                let (s, c) = angle.sin_cos();
                let (dx, dy) = (x - cx, y - cy);
                let (u, v) = ((dx * c + dy * s) / rx, (-dx * s + dy * c) / ry);
                let r = (u * u + v * v).sqrt();
                (1.0 - smoothstep((r - (1.0 - soft)) / soft), v.clamp(-1.0, 1.0), false)
            }
            Shape::Rect { cx, cy, hw, hh, angle, fill } => {
                let (s, c) = angle.sin_cos();
                let (dx, dy) = (x - cx, y - cy);
                let (u, v) = (dx * c + dy * s, -dx * s + dy * c);
                // Signed distance to the edge in pixels; 1-pixel anti-aliasing.
                let dist = (u.abs() - hw).max(v.abs() - hh);
                let a = (0.5 - dist).clamp(0.0, 1.0);
                let second = match fill {
                    Fill::Plain => false,
                    Fill::Stripes(period) => (u / period).rem_euclid(2.0) >= 1.0,
                    Fill::Text { cell, seed } => {
                        // Lines of text: every other row of cells, glyph
                        // blocks inset in their cells, some cells blank.
                        let (cu, cv) = ((u + hw) / cell, (v + hh) / (1.4 * cell));
                        let (i, j) = (cu.floor(), cv.floor());
                        let (fu, fv) = (cu - i, cv - j);
                        let lit = unit(hash3(seed, i as u64, j as u64)) < 0.75;
                        j as i64 % 2 == 0 && lit && (0.15..0.85).contains(&fu) && (0.1..0.9).contains(&fv)
                    }
                };
                (a, (u / hw).clamp(-1.0, 1.0), second)
            }
            Shape::Line { x0, y0, x1, y1, half } => {
                let (vx, vy) = (x1 - x0, y1 - y0);
                let t = (((x - x0) * vx + (y - y0) * vy) / (vx * vx + vy * vy)).clamp(0.0, 1.0);
                let (px, py) = (x0 + t * vx - x, y0 + t * vy - y);
                let dist = (px * px + py * py).sqrt() - half;
                ((0.5 - dist).clamp(0.0, 1.0), 0.0, false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::si_ti;
    use crate::picture::Picture;
    use crate::quality::ssim_y;

    #[test]
    fn synthetic_photo_is_deterministic_and_photo_like() {
        let a = synthetic_photo(256, 192, 42);
        assert_eq!(a, synthetic_photo(256, 192, 42));
        assert_ne!(a, synthetic_photo(256, 192, 43));
        assert_eq!(a.rgb.len(), 256 * 192 * 3);
        let p = Picture::from_rgb(256, 192, &a.rgb);
        let (si, _) = si_ti(&p, &p);
        // Natural photos at this size: SI roughly 20..120.
        assert!((15.0..150.0).contains(&si), "SI {si}");
        // Uses a good part of the range, not saturated.
        let (lo, hi) = (p.y.iter().min().copied().unwrap(), p.y.iter().max().copied().unwrap());
        assert!(hi - lo > 100, "range {lo}..{hi}");
        let clipped = a.rgb.iter().filter(|&&v| v == 0 || v == 255).count() as f64 / a.rgb.len() as f64;
        assert!(clipped < 0.05, "{clipped} clipped");
        // Same seed at another size: the same picture, resampled.
        let b = Picture::from_rgb(512, 384, &synthetic_photo(512, 384, 42).rgb).resize(256, 192);
        assert!(ssim_y(&p, &b).unwrap() > 0.6);
    }
}
