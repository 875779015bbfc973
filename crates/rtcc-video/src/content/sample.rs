//! Fixed-point bilinear sampling of 8-bit planes, as the generated scenes move a camera over a photo.

use crate::picture::{chroma_size, Picture};

/// Scratch rows for sampling: (vertical blend, row a, row b).
pub(super) type Bufs<'a> = (&'a mut Vec<u16>, &'a mut Vec<u16>, &'a mut Vec<u16>);

/// `x` rounded to an even number, at least 2: sizes and positions that keep
/// 4:2:0 chroma aligned with luma.
pub(super) fn round_even(x: f64) -> u32 {
    ((x / 2.0).round().max(1.0) as u32) * 2
}

/// One 8-bit plane, tightly packed.
pub(super) struct Plane {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

pub(super) fn planes(p: Picture) -> [Plane; 3] {
    let (w, h) = (p.width as usize, p.height as usize);
    let (cw, ch) = chroma_size(p.width, p.height);
    let (cw, ch) = (cw as usize, ch as usize);
    [Plane { w, h, px: p.y }, Plane { w: cw, h: ch, px: p.u }, Plane { w: cw, h: ch, px: p.v }]
}

/// Fixed-point sub-pixel unit of sampling positions: 1/256 pixel.
pub(super) const FX: f64 = 256.0;

/// Bilinear samples of `src` along one output row: `out[k]` is the sample
/// at source position (`x0` + k, `y`), positions in 1/256 pixel, result in
/// 8.8 fixed point (value·256). Columns wrap around when `wrap` (a
/// horizontally periodic scene), else clamp to the edge; rows clamp.
///
/// A translation has the same fractional offset at every pixel, so the two
/// vertical weights and two horizontal weights are constants: one
/// vectorisable vertical blend into `tmp`, then one horizontal blend.
pub(super) fn sample_row(src: &Plane, x0: i64, y: i64, wrap: bool, tmp: &mut Vec<u16>, out: &mut [u16]) {
    let n = out.len();
    let yc = y.clamp(0, ((src.h - 1) as i64) << 8);
    let (y0, fy) = ((yc >> 8) as usize, (yc & 255) as u16);
    let y1 = (y0 + 1).min(src.h - 1);
    let r0 = &src.px[y0 * src.w..(y0 + 1) * src.w];
    let r1 = &src.px[y1 * src.w..(y1 + 1) * src.w];
    let (w0, w1) = (256 - fy, fy);
    let xi = x0 >> 8;
    let fx = (x0 & 255) as u32;
    tmp.clear();
    tmp.resize(n + 1, 0);
    let mut k = 0usize;
    while k <= n {
        let sx = xi + k as i64;
        let left = n + 1 - k;
        if wrap || (0..src.w as i64).contains(&sx) {
            let c = sx.rem_euclid(src.w as i64) as usize;
            let run = (src.w - c).min(left);
            for (t, (&p, &q)) in tmp[k..k + run].iter_mut().zip(r0[c..c + run].iter().zip(&r1[c..c + run])) {
                *t = p as u16 * w0 + q as u16 * w1;
            }
            k += run;
        } else {
            let (c, run) = if sx < 0 { (0, ((-sx) as usize).min(left)) } else { (src.w - 1, left) };
            tmp[k..k + run].fill(r0[c] as u16 * w0 + r1[c] as u16 * w1);
            k += run;
        }
    }
    let (h0, h1) = (256 - fx, fx);
    for ((o, &a), &b) in out.iter_mut().zip(&tmp[..n]).zip(&tmp[1..]) {
        *o = ((a as u32 * h0 + b as u32 * h1 + 128) >> 8) as u16;
    }
}

pub(super) fn to_fx(v: f64) -> i64 {
    (v * FX).round() as i64
}
