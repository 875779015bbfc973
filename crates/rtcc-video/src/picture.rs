//! 8-bit I420 pictures: full-resolution luma, chroma halved in both
//! directions (rounded up), the layout every codec here reads and writes.
//!
//! Besides the container this module holds the few pixel operations the rest
//! of the crate needs and that are cheap to get subtly wrong: resampling
//! ([`Picture::resize`]), RGB conversion ([`Picture::from_rgb`],
//! [`Picture::to_rgb`]), composition ([`Picture::side_by_side`],
//! [`Picture::crop`]) and text labels ([`Picture::draw_text`]).

/// One I420 picture. Planes are tightly packed (stride = plane width).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub y: Vec<u8>,
    pub u: Vec<u8>,
    pub v: Vec<u8>,
}

impl Picture {
    /// A mid-grey picture (Y 128, neutral chroma).
    pub fn new(width: u32, height: u32) -> Self {
        assert!(width > 0 && height > 0, "empty picture {width}x{height}");
        let (cw, ch) = chroma_size(width, height);
        Picture {
            width,
            height,
            y: vec![128; (width * height) as usize],
            u: vec![128; (cw * ch) as usize],
            v: vec![128; (cw * ch) as usize],
        }
    }

    /// Chroma plane size.
    pub fn chroma_size(&self) -> (u32, u32) {
        chroma_size(self.width, self.height)
    }

    /// The picture resampled to `width`×`height`, each plane on its own.
    ///
    /// Each axis is resampled separately: where it shrinks, every output
    /// sample is the area-weighted mean of the source samples it covers (box
    /// filter), so detail finer than the new grid averages out instead of
    /// aliasing, as a camera sensor or libyuv's box scaler would; where it
    /// grows (or keeps its size), samples are interpolated linearly between
    /// the two nearest source samples, centre-aligned. Weights are computed
    /// once per output column and per output row in 14-bit fixed point and
    /// the intermediate keeps 6 fractional bits, so the result is within one
    /// level of the exact filter and costs two multiply-adds per tap.
    /// The same size returns a copy.
    pub fn resize(&self, width: u32, height: u32) -> Picture {
        assert!(width > 0 && height > 0, "resize to an empty picture {width}x{height}");
        if (width, height) == (self.width, self.height) {
            return self.clone();
        }
        let (sw, sh) = (self.width as usize, self.height as usize);
        let (scw, sch) = self.chroma_size();
        let (dcw, dch) = chroma_size(width, height);
        let (dw, dh) = (width as usize, height as usize);
        let (scw, sch, dcw, dch) = (scw as usize, sch as usize, dcw as usize, dch as usize);
        let mut scratch = ResizeScratch::default();
        let mut pic = Picture { width, height, y: vec![0; dw * dh], u: vec![0; dcw * dch], v: vec![0; dcw * dch] };
        resize_plane(&self.y, sw, sh, &mut pic.y, dw, dh, &mut scratch);
        resize_plane(&self.u, scw, sch, &mut pic.u, dcw, dch, &mut scratch);
        resize_plane(&self.v, scw, sch, &mut pic.v, dcw, dch, &mut scratch);
        pic
    }

    /// Convert packed 8-bit RGB (`width*height*3` bytes, row-major) to I420
    /// with the BT.601 limited-range matrix (Y 16..235, chroma 16..240), the
    /// one WebRTC and libyuv assume for camera frames, in libyuv's 8-bit
    /// integer form. Chroma is computed from the RGB mean of each 2×2 block
    /// (fewer pixels at odd right/bottom edges), i.e. centred (JPEG/MPEG-1)
    /// chroma siting.
    ///
    /// # Panics
    /// If the buffer length is not `width*height*3` or a side is 0.
    pub fn from_rgb(width: u32, height: u32, rgb: &[u8]) -> Picture {
        let (w, h) = (width as usize, height as usize);
        assert_eq!(rgb.len(), w * h * 3, "RGB buffer of {} bytes for a {width}x{height} picture", rgb.len());
        let mut pic = Picture::new(width, height);
        for (yrow, src) in pic.y.chunks_exact_mut(w).zip(rgb.chunks_exact(w * 3)) {
            for (out, px) in yrow.iter_mut().zip(src.chunks_exact(3)) {
                let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
                *out = (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8;
            }
        }
        let (cw, ch) = pic.chroma_size();
        let (cw, ch) = (cw as usize, ch as usize);
        for cy in 0..ch {
            let rows = if 2 * cy + 1 < h { 2 } else { 1 };
            for cx in 0..cw {
                let cols = if 2 * cx + 1 < w { 2 } else { 1 };
                let (mut r, mut g, mut b) = (0i32, 0i32, 0i32);
                for dy in 0..rows {
                    for dx in 0..cols {
                        let i = ((2 * cy + dy) * w + 2 * cx + dx) * 3;
                        r += rgb[i] as i32;
                        g += rgb[i + 1] as i32;
                        b += rgb[i + 2] as i32;
                    }
                }
                // Scale the sums to four samples so one rounding serves every block size.
                let k = 4 / (rows * cols) as i32;
                let (r, g, b) = (r * k, g * k, b * k);
                let u = ((-38 * r - 74 * g + 112 * b + 512) >> 10) + 128;
                let v = ((112 * r - 94 * g - 18 * b + 512) >> 10) + 128;
                pic.u[cy * cw + cx] = u.clamp(0, 255) as u8;
                pic.v[cy * cw + cx] = v.clamp(0, 255) as u8;
            }
        }
        pic
    }

    /// Convert to packed 8-bit RGB (`width*height*3` bytes) with the inverse
    /// of [`Picture::from_rgb`]'s matrix (BT.601 limited range), each chroma
    /// sample applied to the 2×2 luma block it covers. For screenshots and
    /// PNG output; the codecs never need it.
    pub fn to_rgb(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let cw = self.chroma_size().0 as usize;
        let mut rgb = vec![0u8; w * h * 3];
        for y in 0..h {
            let crow = (y / 2) * cw;
            for x in 0..w {
                let c = 298 * (self.y[y * w + x] as i32 - 16);
                let d = self.u[crow + x / 2] as i32 - 128;
                let e = self.v[crow + x / 2] as i32 - 128;
                let o = (y * w + x) * 3;
                rgb[o] = ((c + 409 * e + 128) >> 8).clamp(0, 255) as u8;
                rgb[o + 1] = ((c - 100 * d - 208 * e + 128) >> 8).clamp(0, 255) as u8;
                rgb[o + 2] = ((c + 516 * d + 128) >> 8).clamp(0, 255) as u8;
            }
        }
        rgb
    }

    /// `a` on the left and `b` on the right, for comparison videos (source
    /// beside what the viewer saw). If the heights differ, `b` is first
    /// resized to `a`'s height keeping its aspect ratio.
    ///
    /// When `a`'s width is odd, `b`'s chroma lands half a luma pixel off its
    /// luma (I420 cannot start a chroma column mid-sample); invisible in a
    /// comparison video and never the case for even widths.
    pub fn side_by_side(a: &Picture, b: &Picture) -> Picture {
        let resized;
        let b = if b.height == a.height {
            b
        } else {
            let w = ((b.width as f64 * a.height as f64 / b.height as f64).round() as u32).max(1);
            resized = b.resize(w, a.height);
            &resized
        };
        let (aw, bw, h) = (a.width as usize, b.width as usize, a.height as usize);
        let mut out = Picture::new(a.width + b.width, a.height);
        let ow = aw + bw;
        for y in 0..h {
            out.y[y * ow..y * ow + aw].copy_from_slice(&a.y[y * aw..(y + 1) * aw]);
            out.y[y * ow + aw..(y + 1) * ow].copy_from_slice(&b.y[y * bw..(y + 1) * bw]);
        }
        let (ocw, och) = out.chroma_size();
        let (acw, bcw) = (a.chroma_size().0 as usize, b.chroma_size().0 as usize);
        let ocw = ocw as usize;
        for cy in 0..och as usize {
            for cx in 0..ocw {
                let (u, v) = if 2 * cx < aw {
                    (a.u[cy * acw + cx], a.v[cy * acw + cx])
                } else {
                    let bx = ((2 * cx - aw) / 2).min(bcw - 1);
                    (b.u[cy * bcw + bx], b.v[cy * bcw + bx])
                };
                out.u[cy * ocw + cx] = u;
                out.v[cy * ocw + cx] = v;
            }
        }
        out
    }

    /// The `width`×`height` region whose top-left luma sample is (`x`, `y`).
    /// Chroma is taken from (`x/2`, `y/2`): use even offsets to keep chroma
    /// aligned with luma.
    ///
    /// # Panics
    /// If the region is empty or does not fit inside the picture.
    pub fn crop(&self, x: u32, y: u32, width: u32, height: u32) -> Picture {
        assert!(
            width > 0 && height > 0 && x + width <= self.width && y + height <= self.height,
            "crop {width}x{height} at ({x},{y}) outside a {}x{} picture",
            self.width,
            self.height
        );
        let mut out = Picture::new(width, height);
        copy_region(&self.y, self.width as usize, x as usize, y as usize, &mut out.y, width as usize, height as usize);
        let (scw, sch) = self.chroma_size();
        let (cw, ch) = out.chroma_size();
        let (cx, cy) = ((x / 2).min(scw - cw) as usize, (y / 2).min(sch - ch) as usize);
        copy_region(&self.u, scw as usize, cx, cy, &mut out.u, cw as usize, ch as usize);
        copy_region(&self.v, scw as usize, cx, cy, &mut out.v, cw as usize, ch as usize);
        out
    }

    /// Size in pixels of the box [`Picture::draw_text`] paints for `text`.
    pub fn text_size(text: &str, scale: u32) -> (u32, u32) {
        let s = scale.max(1);
        let n = text.chars().count() as u32;
        let inner = if n == 0 { 0 } else { n * GLYPH_ADVANCE * s - s };
        (inner + 2 * TEXT_PAD * s, GLYPH_H * s + 2 * TEXT_PAD * s)
    }

    /// Draw `text` with its box's top-left corner at (`x`, `y`): a built-in
    /// 5×7 bitmap font, each font pixel `scale`×`scale` pixels, white
    /// (Y 235) on a near-black box (Y 16, neutral chroma) with a one-font-
    /// pixel margin, so labels stay legible on any content and survive
    /// encoding. Covers digits, A–Z, a–z, space and `. , : / + - % ( ) _ = ? ! # < > * [ ] ' "`;
    /// other characters draw as `?`. Whatever falls outside the picture is
    /// clipped. Used to label comparison videos, e.g.
    /// `"copa+dumbo  1234 kbps  t=12.3s"`.
    pub fn draw_text(&mut self, x: u32, y: u32, text: &str, scale: u32) {
        let s = scale.max(1);
        let (bw, bh) = Picture::text_size(text, s);
        let (w, h) = (self.width, self.height);
        if x >= w || y >= h {
            return;
        }
        let (x1, y1) = ((x + bw).min(w), (y + bh).min(h));
        for row in y..y1 {
            let r = (row * w) as usize;
            self.y[r + x as usize..r + x1 as usize].fill(16);
        }
        let (cw, _) = self.chroma_size();
        for cy in y / 2..y1.div_ceil(2) {
            let r = (cy * cw) as usize;
            self.u[r + (x / 2) as usize..r + x1.div_ceil(2) as usize].fill(128);
            self.v[r + (x / 2) as usize..r + x1.div_ceil(2) as usize].fill(128);
        }
        let mut gx = x + TEXT_PAD * s;
        let gy = y + TEXT_PAD * s;
        for c in text.chars() {
            let g = glyph(c);
            for (ry, bits) in g.iter().enumerate() {
                for rx in 0..GLYPH_W {
                    if bits & (1 << (GLYPH_W - 1 - rx)) == 0 {
                        continue;
                    }
                    let px = gx + rx * s;
                    let py = gy + ry as u32 * s;
                    for yy in py..(py + s).min(y1) {
                        for xx in px..(px + s).min(x1) {
                            self.y[(yy * w + xx) as usize] = 235;
                        }
                    }
                }
            }
            gx += GLYPH_ADVANCE * s;
            if gx >= x1 {
                break;
            }
        }
    }
}

/// Chroma plane size of a `width`×`height` I420 picture.
pub fn chroma_size(width: u32, height: u32) -> (u32, u32) {
    (width.div_ceil(2), height.div_ceil(2))
}

fn copy_region(src: &[u8], sstride: usize, x: usize, y: usize, dst: &mut [u8], w: usize, h: usize) {
    for (r, out) in dst.chunks_exact_mut(w).take(h).enumerate() {
        let o = (y + r) * sstride + x;
        out.copy_from_slice(&src[o..o + w]);
    }
}

// ---------------------------------------------------------------- resampling

/// Fixed-point one for resampling weights (14 bits: 255·2^6·2^14 < 2^32, so
/// the vertical pass accumulates in u32).
const W_BITS: u32 = 14;
const W_ONE: u32 = 1 << W_BITS;
/// Fractional bits kept between the horizontal and the vertical pass.
const MID_BITS: u32 = 6;

/// Filter taps along one axis, padded to the same count `n` for every
/// output (zero weights), so the inner loops have a fixed shape: output
/// sample `i` is `Σ_k weights[i·n + k] · src[first[i] + k]`, `k < n`, and
/// each output's weights sum to exactly `W_ONE`.
#[derive(Default)]
struct AxisTaps {
    /// (source, destination) sizes these taps were built for.
    built: (usize, usize),
    n: usize,
    first: Vec<u32>,
    weights: Vec<u32>,
    /// Variable-length taps while building: flat weights, per-output
    /// (first index, offset into `var_w`).
    var_w: Vec<u32>,
    var: Vec<(usize, usize)>,
}

impl AxisTaps {
    fn build(&mut self, src: usize, dst: usize) {
        if self.built == (src, dst) {
            return;
        }
        self.var_w.clear();
        self.var.clear();
        if dst < src {
            // Box: output i covers source [i·src/dst, (i+1)·src/dst); in units
            // of 1/dst source pixels that is [i·src, (i+1)·src), and source
            // pixel j covers [j·dst, (j+1)·dst). Exact integer overlaps.
            for i in 0..dst {
                let (lo, hi) = ((i * src) as u64, ((i + 1) * src) as u64);
                let (j0, j1) = ((lo / dst as u64) as usize, (hi.div_ceil(dst as u64) as usize).min(src));
                let start = self.var_w.len();
                self.var_w.extend((j0..j1).map(|j| {
                    let a = lo.max((j * dst) as u64);
                    let b = hi.min(((j + 1) * dst) as u64);
                    (((b - a) * W_ONE as u64 + src as u64 / 2) / src as u64) as u32
                }));
                fix_sum(&mut self.var_w[start..]);
                self.var.push((j0, start));
            }
        } else {
            // Bilinear, centre-aligned: output i samples source position
            // (i + 0.5)·src/dst − 0.5, clamped to the edge samples.
            for i in 0..dst {
                let num = (2 * i + 1) as i64 * src as i64 - dst as i64;
                let pos = (num * W_ONE as i64).div_euclid(2 * dst as i64).clamp(0, ((src - 1) as i64) * W_ONE as i64);
                let j = (pos >> W_BITS) as usize;
                let frac = (pos & (W_ONE as i64 - 1)) as u32;
                self.var.push((j, self.var_w.len()));
                if frac == 0 || j + 1 >= src {
                    self.var_w.push(W_ONE);
                } else {
                    self.var_w.extend([W_ONE - frac, frac]);
                }
            }
        }
        let len = |i: usize| self.var.get(i + 1).map_or(self.var_w.len(), |v| v.1) - self.var[i].1;
        let n = (0..dst).map(len).max().unwrap_or(1).min(src);
        self.n = n;
        self.first.clear();
        self.weights.clear();
        self.weights.resize(dst * n, 0);
        for i in 0..dst {
            let ((j, off), l) = (self.var[i], len(i));
            // Keep the padded window inside the source.
            let f = j.min(src - n);
            self.first.push(f as u32);
            self.weights[i * n + (j - f)..i * n + (j - f) + l].copy_from_slice(&self.var_w[off..off + l]);
        }
        self.built = (src, dst);
    }
}

/// Make rounded weights sum to exactly `W_ONE` by adjusting the largest.
fn fix_sum(w: &mut [u32]) {
    let total: u32 = w.iter().sum();
    if let Some(big) = (0..w.len()).max_by_key(|&k| w[k]) {
        w[big] = (w[big] as i64 + W_ONE as i64 - total as i64) as u32;
    }
}

#[derive(Default)]
struct ResizeScratch {
    h: AxisTaps,
    v: AxisTaps,
    mid: Vec<u16>,
    acc: Vec<u32>,
}

/// Separable resample of one plane: horizontal pass into `mid` (6
/// fractional bits), then vertical pass accumulating whole rows.
fn resize_plane(src: &[u8], sw: usize, sh: usize, dst: &mut [u8], dw: usize, dh: usize, s: &mut ResizeScratch) {
    s.h.build(sw, dw);
    s.v.build(sh, dh);
    s.mid.clear();
    s.mid.resize(dw * sh, 0);
    const MID_SHIFT: u32 = W_BITS - MID_BITS;
    const MID_ROUND: u32 = 1 << (MID_SHIFT - 1);
    let (first, wts, n) = (&s.h.first, &s.h.weights, s.h.n);
    for (srow, mrow) in src.chunks_exact(sw).zip(s.mid.chunks_exact_mut(dw)) {
        match n {
            1 => {
                for (m, &f) in mrow.iter_mut().zip(first) {
                    *m = (srow[f as usize] as u16) << MID_BITS;
                }
            }
            2 => {
                for ((m, &f), w) in mrow.iter_mut().zip(first).zip(wts.chunks_exact(2)) {
                    let f = f as usize;
                    let acc = w[0] * srow[f] as u32 + w[1] * srow[f + 1] as u32;
                    *m = ((acc + MID_ROUND) >> MID_SHIFT) as u16;
                }
            }
            _ => {
                for ((m, &f), w) in mrow.iter_mut().zip(first).zip(wts.chunks_exact(n)) {
                    let px = &srow[f as usize..f as usize + n];
                    let acc: u32 = w.iter().zip(px).map(|(&w, &p)| w * p as u32).sum();
                    *m = ((acc + MID_ROUND) >> MID_SHIFT) as u16;
                }
            }
        }
    }
    s.acc.clear();
    s.acc.resize(dw, 0);
    const OUT_SHIFT: u32 = W_BITS + MID_BITS;
    let n = s.v.n;
    for (j, drow) in dst.chunks_exact_mut(dw).enumerate() {
        let first = s.v.first[j] as usize;
        let wts = &s.v.weights[j * n..(j + 1) * n];
        s.acc.fill(1 << (OUT_SHIFT - 1));
        for (k, &w) in wts.iter().enumerate() {
            if w == 0 {
                continue;
            }
            let mrow = &s.mid[(first + k) * dw..(first + k + 1) * dw];
            for (a, &m) in s.acc.iter_mut().zip(mrow) {
                *a += w * m as u32;
            }
        }
        for (d, &a) in drow.iter_mut().zip(&s.acc) {
            *d = (a >> OUT_SHIFT).min(255) as u8;
        }
    }
}

// ---------------------------------------------------------------------- font

const GLYPH_W: u32 = 5;
const GLYPH_H: u32 = 7;
/// Glyph width plus one column of spacing.
const GLYPH_ADVANCE: u32 = 6;
/// Box margin around the text, in font pixels.
const TEXT_PAD: u32 = 1;

/// 5×7 glyph rows, top first, most significant of the 5 bits leftmost
/// (the classic HD44780 character-LCD shapes).
fn glyph(c: char) -> [u8; 7] {
    match c {
        ' ' => [0; 7],
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        'a' => [0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F],
        'b' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E],
        'c' => [0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E],
        'd' => [0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F],
        'e' => [0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E],
        'f' => [0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08],
        'g' => [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'h' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11],
        'i' => [0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E],
        'j' => [0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0C],
        'k' => [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12],
        'l' => [0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'm' => [0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11],
        'n' => [0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11],
        'o' => [0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E],
        'p' => [0x00, 0x00, 0x1E, 0x11, 0x1E, 0x10, 0x10],
        'q' => [0x00, 0x00, 0x0D, 0x13, 0x0F, 0x01, 0x01],
        'r' => [0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10],
        's' => [0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E],
        't' => [0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06],
        'u' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D],
        'v' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'w' => [0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A],
        'x' => [0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11],
        'y' => [0x00, 0x00, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'z' => [0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '!' => [0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04],
        '#' => [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A],
        '<' => [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        '*' => [0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00],
        '[' => [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E],
        ']' => [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E],
        '\'' => [0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00],
        '"' => [0x0A, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00],
        _ => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04], // '?'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random bytes (splitmix64), no dependency.
    fn noise_bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }

    fn pic_from_fn(w: u32, h: u32, f: impl Fn(u32, u32) -> u8) -> Picture {
        let mut p = Picture::new(w, h);
        for y in 0..h {
            for x in 0..w {
                p.y[(y * w + x) as usize] = f(x, y);
            }
        }
        p
    }

    fn mean(v: &[u8]) -> f64 {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }

    #[test]
    fn resize_flat_stays_flat_and_sizes_are_right() {
        let mut p = Picture::new(37, 23);
        p.y.fill(77);
        p.u.fill(90);
        p.v.fill(200);
        for (w, h) in [(10, 5), (100, 61), (37, 7), (1, 1), (74, 46)] {
            let r = p.resize(w, h);
            assert_eq!((r.width, r.height), (w, h));
            assert_eq!(r.y.len(), (w * h) as usize);
            assert_eq!(r.u.len(), (chroma_size(w, h).0 * chroma_size(w, h).1) as usize);
            assert!(r.y.iter().all(|&v| v == 77), "{w}x{h} luma not flat");
            assert!(r.u.iter().all(|&v| v == 90) && r.v.iter().all(|&v| v == 200), "{w}x{h} chroma not flat");
        }
    }

    /// The filter of `resize`, written plainly in floating point: per axis,
    /// a box (area average) when shrinking, centre-aligned linear
    /// interpolation otherwise.
    fn axis_weights(src: usize, dst: usize) -> Vec<Vec<(usize, f64)>> {
        (0..dst)
            .map(|i| {
                if dst < src {
                    let (lo, hi) = (i as f64 * src as f64 / dst as f64, (i + 1) as f64 * src as f64 / dst as f64);
                    (0..src)
                        .filter_map(|j| {
                            let o = hi.min(j as f64 + 1.0) - lo.max(j as f64);
                            (o > 0.0).then_some((j, o / (hi - lo)))
                        })
                        .collect()
                } else {
                    let p = ((i as f64 + 0.5) * src as f64 / dst as f64 - 0.5).clamp(0.0, (src - 1) as f64);
                    let j = p.floor() as usize;
                    let f = p - j as f64;
                    if j + 1 < src {
                        vec![(j, 1.0 - f), (j + 1, f)]
                    } else {
                        vec![(j, 1.0)]
                    }
                }
            })
            .collect()
    }

    fn resize_reference(src: &[u8], sw: usize, sh: usize, dw: usize, dh: usize) -> Vec<f64> {
        let (wx, wy) = (axis_weights(sw, dw), axis_weights(sh, dh));
        let mut out = vec![0.0; dw * dh];
        for (y, ty) in wy.iter().enumerate() {
            for (x, tx) in wx.iter().enumerate() {
                out[y * dw + x] =
                    ty.iter().map(|&(j, a)| tx.iter().map(|&(i, b)| a * b * src[j * sw + i] as f64).sum::<f64>()).sum();
            }
        }
        out
    }

    #[test]
    fn resize_matches_a_float_reference_on_every_plane() {
        let src = Picture {
            y: noise_bytes(53 * 31, 11),
            u: noise_bytes(27 * 16, 12),
            v: noise_bytes(27 * 16, 13),
            ..Picture::new(53, 31)
        };
        // Down by integer and odd ratios (padded box taps), up, mixed, 1 pixel.
        for (w, h) in [(26, 15), (17, 9), (7, 30), (106, 62), (80, 20), (1, 1), (53, 100), (5, 31)] {
            let r = src.resize(w, h);
            let (cw, ch) = chroma_size(w, h);
            for (name, s, d, sw, sh, dw, dh) in [
                ("y", &src.y, &r.y, 53, 31, w, h),
                ("u", &src.u, &r.u, 27, 16, cw, ch),
                ("v", &src.v, &r.v, 27, 16, cw, ch),
            ] {
                let want = resize_reference(s, sw, sh, dw as usize, dh as usize);
                for (k, (&got, &want)) in d.iter().zip(&want).enumerate() {
                    assert!((got as f64 - want).abs() <= 1.0, "{w}x{h} {name}[{k}]: {got} vs {want:.2}");
                }
            }
        }
    }

    #[test]
    fn downscale_by_two_is_the_2x2_mean() {
        let src = Picture { y: noise_bytes(64 * 32, 1), ..Picture::new(64, 32) };
        let r = src.resize(32, 16);
        for y in 0..16 {
            for x in 0..32 {
                let s: u32 = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .iter()
                    .map(|(dx, dy)| src.y[((2 * y + dy) * 64 + 2 * x + dx) as usize] as u32)
                    .sum();
                let exact = s as f64 / 4.0;
                let got = r.y[(y * 32 + x) as usize] as f64;
                assert!((got - exact).abs() <= 0.5 + 1e-9, "({x},{y}) {got} vs {exact}");
            }
        }
    }

    #[test]
    fn downscale_averages_fine_detail_instead_of_aliasing() {
        // A one-pixel checkerboard shrunk by 3: point sampling or bilinear
        // would give 0/255 patterns; a box filter gives near-grey.
        let src = pic_from_fn(300, 90, |x, y| if (x + y) % 2 == 0 { 0 } else { 255 });
        let r = src.resize(100, 30);
        assert!(r.y.iter().all(|&v| (100..=155).contains(&v)), "{:?}", &r.y[..10]);
        // Non-integer ratio: same property.
        let r = src.resize(77, 41);
        assert!(r.y.iter().all(|&v| (90..=165).contains(&v)), "{:?}", &r.y[..10]);
        assert!((mean(&r.y) - 127.5).abs() < 3.0);
    }

    #[test]
    fn upscale_is_bilinear_between_neighbours() {
        // A horizontal ramp 0, 10, 20, ... upscaled 2x: interior outputs fall
        // at quarter positions, so values are ramp(x/2 - 0.25).
        let src = pic_from_fn(20, 4, |x, _| (x * 10) as u8);
        let r = src.resize(40, 8);
        for x in 2..38u32 {
            let expect = (x as f64 / 2.0 - 0.25) * 10.0;
            let got = r.y[(3 * 40 + x) as usize] as f64;
            assert!((got - expect).abs() <= 0.51, "x={x} {got} vs {expect}");
        }
        // Edges clamp rather than read outside.
        assert_eq!(r.y[0], 0);
        assert_eq!(r.y[39], 190);
    }

    #[test]
    fn resize_preserves_mean_brightness() {
        let src = Picture { y: noise_bytes(160 * 90, 7), ..Picture::new(160, 90) };
        let m = mean(&src.y);
        for (w, h) in [(64, 36), (320, 180), (97, 55), (1280, 720)] {
            let r = src.resize(w, h);
            assert!((mean(&r.y) - m).abs() < 1.0, "{w}x{h}: {} vs {m}", mean(&r.y));
        }
    }

    #[test]
    fn rgb_conversion_matches_bt601_limited_range() {
        let px = |r: u8, g: u8, b: u8| Picture::from_rgb(2, 2, &[r, g, b].repeat(4));
        let black = px(0, 0, 0);
        let white = px(255, 255, 255);
        assert_eq!((black.y[0], black.u[0], black.v[0]), (16, 128, 128));
        assert_eq!((white.y[0], white.u[0], white.v[0]), (235, 128, 128));
        let red = px(255, 0, 0);
        assert!((red.y[0] as i32 - 82).abs() <= 1 && (red.v[0] as i32 - 240).abs() <= 1, "{:?}", red);
        let blue = px(0, 0, 255);
        assert!((blue.y[0] as i32 - 41).abs() <= 1 && (blue.u[0] as i32 - 240).abs() <= 1, "{:?}", blue);
        // Chroma averages the 2x2 block: red | blue columns -> between.
        let mixed = Picture::from_rgb(2, 1, &[255, 0, 0, 0, 0, 255]);
        assert!(mixed.u[0] > 128 && mixed.v[0] > 128);
    }

    #[test]
    fn rgb_round_trip_is_close() {
        // Smooth colour content survives RGB -> I420 -> RGB within a few levels
        // (chroma subsampling is exact on content constant over 2x2 blocks).
        let (w, h) = (32u32, 16u32);
        let mut rgb = Vec::new();
        for y in 0..h {
            for x in 0..w {
                rgb.extend_from_slice(&[(x / 2 * 16) as u8, (y / 2 * 30) as u8, 200 - (x / 2 * 10) as u8]);
            }
        }
        let back = Picture::from_rgb(w, h, &rgb).to_rgb();
        let worst = rgb.iter().zip(&back).map(|(&a, &b)| (a as i32 - b as i32).abs()).max().unwrap();
        assert!(worst <= 3, "worst channel error {worst}");
        // And I420 -> RGB -> I420 on limited-range content.
        let mut p = Picture::new(8, 8);
        p.y.iter_mut().enumerate().for_each(|(i, v)| *v = 40 + (i * 2) as u8);
        let again = Picture::from_rgb(8, 8, &p.to_rgb());
        assert!(p.y.iter().zip(&again.y).all(|(&a, &b)| (a as i32 - b as i32).abs() <= 1));
    }

    #[test]
    fn side_by_side_places_both_and_resizes_b() {
        let mut a = Picture::new(6, 4);
        a.y.fill(10);
        a.u.fill(20);
        let mut b = Picture::new(4, 4);
        b.y.fill(200);
        b.u.fill(220);
        let s = Picture::side_by_side(&a, &b);
        assert_eq!((s.width, s.height), (10, 4));
        assert_eq!(&s.y[0..10], &[10, 10, 10, 10, 10, 10, 200, 200, 200, 200]);
        assert_eq!(&s.u[0..5], &[20, 20, 20, 220, 220]);
        // b twice as tall: halved to 2x4 first.
        let tall = Picture { y: vec![50; 4 * 8], ..Picture::new(4, 8) };
        let s = Picture::side_by_side(&a, &tall);
        assert_eq!((s.width, s.height), (8, 4));
        assert_eq!(s.y[7], 50);
        // Odd left width still fills every chroma sample from b's side.
        let odd = Picture::side_by_side(&Picture::new(5, 4), &b);
        assert_eq!((odd.width, odd.u.len()), (9, 5 * 2));
        assert_eq!(odd.u[4], 220);
    }

    #[test]
    fn crop_takes_the_region() {
        let p = pic_from_fn(10, 6, |x, y| (y * 10 + x) as u8);
        let c = p.crop(2, 2, 4, 2);
        assert_eq!(c.y, vec![22, 23, 24, 25, 32, 33, 34, 35]);
        assert_eq!(c.u.len(), 2);
    }

    #[test]
    fn every_documented_character_has_its_own_glyph() {
        let fallback = glyph('\u{1}');
        let set = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.,:/+-%()_=!#<>*[]'\"";
        for c in set.chars() {
            assert_ne!(glyph(c), fallback, "{c:?} falls back to '?'");
            assert!(glyph(c).iter().all(|&r| r < 32), "{c:?} uses more than 5 columns");
        }
        assert_eq!(glyph(' '), [0; 7]);
        assert_eq!(glyph('?'), fallback);
        // Distinct shapes (a typo that duplicates a glyph shows up here).
        let all: Vec<[u8; 7]> = set.chars().map(glyph).collect();
        for i in 0..all.len() {
            for j in i + 1..all.len() {
                assert_ne!(all[i], all[j], "{:?} and {:?} share a glyph", set.chars().nth(i), set.chars().nth(j));
            }
        }
    }

    #[test]
    fn draw_text_paints_glyphs_on_a_dark_box() {
        let mut p = Picture::new(64, 32);
        p.y.fill(128);
        p.u.fill(60);
        p.draw_text(2, 4, "1", 2);
        let (bw, bh) = Picture::text_size("1", 2);
        assert_eq!((bw, bh), (5 * 2 + 4, 7 * 2 + 4));
        let at = |x: u32, y: u32| p.y[(y * 64 + x) as usize];
        // Box corners dark, outside untouched.
        assert_eq!(at(2, 4), 16);
        assert_eq!(at(2 + bw - 1, 4 + bh - 1), 16);
        assert_eq!(at(2 + bw, 4), 128);
        assert_eq!(at(1, 4), 128);
        // '1' row 0 is 00100: the middle column (font x 2) lit, font x 0 not.
        let (ox, oy) = (2 + 2, 4 + 2);
        assert_eq!(at(ox + 2 * 2, oy), 235);
        assert_eq!(at(ox + 2 * 2 + 1, oy + 1), 235);
        assert_eq!(at(ox, oy), 16);
        // Row 6 is 01110.
        assert_eq!(at(ox + 2, oy + 12), 235);
        assert_eq!(at(ox, oy + 12), 16);
        // Box chroma neutral, outside chroma untouched.
        assert_eq!(p.u[(3 * 32 + 2) as usize], 128);
        assert_eq!(p.u[(15 * 32 + 30) as usize], 60);
        let lit = p.y.iter().filter(|&&v| v == 235).count();
        let ones: u32 = glyph('1').iter().map(|r| r.count_ones()).sum();
        assert_eq!(lit as u32, ones * 4);
    }

    /// `cargo test --release -p rtcc-video -- --ignored --nocapture resize_timing`
    #[test]
    #[ignore]
    fn resize_timing() {
        let src = Picture { y: noise_bytes(1280 * 720, 3), ..Picture::new(1280, 720) };
        for (w, h) in [(640, 360), (960, 540), (1920, 1080)] {
            let n = 50;
            let t = std::time::Instant::now();
            for _ in 0..n {
                std::hint::black_box(src.resize(w, h));
            }
            println!("resize 1280x720 -> {w}x{h}: {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / n as f64);
        }
    }

    #[test]
    fn draw_text_clips_at_the_edges() {
        let mut p = Picture::new(30, 10);
        p.draw_text(20, 5, "copa+dumbo  1234 kbps  t=12.3s", 3);
        p.draw_text(100, 100, "outside", 1);
        assert!(p.y.contains(&16));
        let mut q = Picture::new(31, 11);
        q.draw_text(0, 0, "%()_=", 1);
        assert!(q.y.contains(&235));
    }
}
