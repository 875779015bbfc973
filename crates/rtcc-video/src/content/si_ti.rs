//! ITU-T P.910 spatial and temporal information (SI/TI) of a picture.

use crate::picture::Picture;

/// ITU-T P.910 spatial and temporal information of `cur` (luma): SI is the
/// standard deviation of the Sobel gradient magnitude over the picture
/// (one-pixel border excluded), TI the standard deviation of the pixel
/// difference `cur − prev`. P.910 reports the maximum of each over a
/// sequence; callers take that maximum (or a mean) themselves. Talking
/// heads sit around TI 5–15, sports and games 20–60+.
///
/// # Panics
/// If the pictures differ in size.
pub fn si_ti(prev: &Picture, cur: &Picture) -> (f64, f64) {
    assert_eq!((prev.width, prev.height), (cur.width, cur.height), "si_ti of pictures of different sizes");
    (si(cur.width, cur.height, &cur.y), ti(&prev.y, &cur.y))
}

/// P.910 SI of a `w`×`h` luma plane: the standard deviation of the Sobel
/// gradient magnitude, one-pixel border excluded (0 for a plane without an
/// interior).
///
/// # Panics
/// If `y` holds fewer than `w`·`h` samples.
pub fn si(w: u32, h: u32, y: &[u8]) -> f64 {
    let (w, h) = (w as usize, h as usize);
    assert!(y.len() >= w * h, "luma plane of {} samples for {w}x{h}", y.len());
    let p = y;
    let (mut s1, mut s2, mut n) = (0.0f64, 0.0f64, 0usize);
    for y in 1..h.saturating_sub(1) {
        let (r0, r1, r2) = (&p[(y - 1) * w..y * w], &p[y * w..(y + 1) * w], &p[(y + 1) * w..(y + 2) * w]);
        let mut row1 = 0.0f64;
        let mut row2 = 0.0f64;
        for x in 1..w - 1 {
            let v = |r: &[u8], i: usize| r[i] as i32;
            let gx = v(r0, x + 1) + 2 * v(r1, x + 1) + v(r2, x + 1) - v(r0, x - 1) - 2 * v(r1, x - 1) - v(r2, x - 1);
            let gy = v(r2, x - 1) + 2 * v(r2, x) + v(r2, x + 1) - v(r0, x - 1) - 2 * v(r0, x) - v(r0, x + 1);
            let m2 = (gx * gx + gy * gy) as f64;
            row1 += m2.sqrt();
            row2 += m2;
        }
        s1 += row1;
        s2 += row2;
        n += w.saturating_sub(2);
    }
    if n > 0 {
        (s2 / n as f64 - (s1 / n as f64).powi(2)).max(0.0).sqrt()
    } else {
        0.0
    }
}

/// P.910 TI between two luma planes of one size: the standard deviation of
/// `cur − prev`.
///
/// # Panics
/// If the planes differ in length.
pub fn ti(prev: &[u8], cur: &[u8]) -> f64 {
    assert_eq!(prev.len(), cur.len(), "ti of planes of different sizes");
    let (mut d1, mut d2) = (0i64, 0i64);
    for (&a, &b) in cur.iter().zip(prev) {
        let d = a as i64 - b as i64;
        d1 += d;
        d2 += d * d;
    }
    let m = cur.len().max(1) as f64;
    (d2 as f64 / m - (d1 as f64 / m).powi(2)).max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_ti_follow_p910() {
        let flat = Picture::new(32, 32);
        assert_eq!(si_ti(&flat, &flat), (0.0, 0.0));
        // A uniform brightness step between frames has zero TI (std, not mean).
        let mut brighter = flat.clone();
        brighter.y.fill(140);
        assert_eq!(si_ti(&flat, &brighter).1, 0.0);
        // Half the frame changes by 20: difference std = 10.
        let mut half = flat.clone();
        half.y[..32 * 16].fill(148);
        assert!((si_ti(&flat, &half).1 - 10.0).abs() < 1e-12);
        // A vertical edge: Sobel magnitude 4·Δ on the two columns beside it.
        let mut edge = flat.clone();
        for r in edge.y.chunks_exact_mut(32) {
            r[16..].fill(228);
        }
        let (si, _) = si_ti(&edge, &edge);
        // 2 of 30 interior columns have magnitude 400: std = 400·sqrt(p(1-p)).
        let p: f64 = 2.0 / 30.0;
        assert!((si - 400.0 * (p * (1.0 - p)).sqrt()).abs() < 1e-9, "SI {si}");
    }
}
