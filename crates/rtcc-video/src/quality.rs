//! Objective picture quality of a decoded picture against its source: luma
//! PSNR and luma SSIM, computed the way libvpx computes them, so numbers
//! here line up with what libvpx's tools and WebRTC's tests report.
//!
//! Both compare luma only (the codecs' rate control and most published
//! results do), need pictures of equal size, and are called once per frame
//! by the simulator, so they are written to stay well under a millisecond or
//! two at 360p: integer sums, no allocation beyond one small row buffer.

use crate::picture::Picture;

/// PSNR reported when the pictures are identical (MSE 0, true PSNR
/// infinite), and the cap of every PSNR returned here: the same 60 dB as
/// the rate–quality model (`rtcc_core::quality::PSNR_CAP_DB`, libvmaf's
/// 8-bit cap 6·bpc + 12), so measured and modelled averages are comparable
/// and a bit-exact frame cannot dominate a mean.
pub const PSNR_CAP_DB: f64 = rtcc_core::quality::PSNR_CAP_DB;

/// `ssim_db` of a perfect SSIM, and the cap of every value it returns (the
/// model's `SSIM_DB_CAP`, 60 dB = SSIM 0.999999).
pub const SSIM_DB_CAP: f64 = rtcc_core::quality::SSIM_DB_CAP;

/// SSIM stabilising constants for 8-bit samples (Wang et al. 2004):
/// C1 = (0.01·255)², C2 = (0.03·255)². libvpx uses the same values rounded
/// to integers after scaling by 64² (26634, 239708); the exact values
/// differ from those by under 10⁻⁵ relative.
pub const SSIM_C1: f64 = (0.01 * 255.0) * (0.01 * 255.0);
pub const SSIM_C2: f64 = (0.03 * 255.0) * (0.03 * 255.0);

/// Why two pictures could not be compared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QualityError {
    #[error("cannot compare a {}x{} picture with a {}x{} one: sizes must match (resize first)", .a.0, .a.1, .b.0, .b.1)]
    SizeMismatch { a: (u32, u32), b: (u32, u32) },
    #[error("a {width}x{height} picture is too small for SSIM, which needs at least 8x8 luma samples")]
    TooSmall { width: u32, height: u32 },
}

fn check_sizes(a: &Picture, b: &Picture) -> Result<(), QualityError> {
    if (a.width, a.height) != (b.width, b.height) {
        return Err(QualityError::SizeMismatch { a: (a.width, a.height), b: (b.width, b.height) });
    }
    Ok(())
}

/// Sum of squared luma differences.
pub fn sse_y(a: &Picture, b: &Picture) -> Result<u64, QualityError> {
    check_sizes(a, b)?;
    // Row-wise u32 partial sums (a row of up to 66k samples cannot overflow)
    // let the inner loop vectorise.
    let w = a.width as usize;
    let mut total = 0u64;
    for (ra, rb) in a.y.chunks(w.min(65_536)).zip(b.y.chunks(w.min(65_536))) {
        let row: u32 = ra
            .iter()
            .zip(rb)
            .map(|(&p, &q)| {
                let d = p as i32 - q as i32;
                (d * d) as u32
            })
            .sum();
        total += row as u64;
    }
    Ok(total)
}

/// PSNR in dB of `sse` over `samples` 8-bit samples (peak 255), capped at
/// [`PSNR_CAP_DB`].
pub fn psnr_from_sse(sse: u64, samples: u64) -> f64 {
    if sse == 0 || samples == 0 {
        return PSNR_CAP_DB;
    }
    let psnr = 10.0 * (samples as f64 * 255.0 * 255.0 / sse as f64).log10();
    psnr.min(PSNR_CAP_DB)
}

/// Luma PSNR of `a` against `b`, in dB: 10·log10(255² / MSE). Identical
/// pictures give [`PSNR_CAP_DB`] (60 dB) rather than infinity.
pub fn psnr_y(a: &Picture, b: &Picture) -> Result<f64, QualityError> {
    let sse = sse_y(a, b)?;
    Ok(psnr_from_sse(sse, a.y.len() as u64))
}

/// Luma SSIM of `a` against `b` (symmetric), in libvpx's "fast" form
/// (`vpx_dsp/ssim.c`, `vpx_ssim2`, the one `vpxenc --psnr`-style tools and
/// libvpx's internal stats use): unweighted 8×8 windows whose top-left
/// corners lie on a 4-pixel grid, fully inside the picture; each window's
/// SSIM is
///
/// ```text
/// (2·μa·μb + C1)(2·σab + C2) / ((μa² + μb² + C1)(σa² + σb² + C2))
/// ```
///
/// with population (1/64) variances and covariance, C1 = (0.01·255)²,
/// C2 = (0.03·255)², and the result is the plain mean over windows. (x264's
/// variant instead uses 4×4 block sums over 2×2 groups with a 64/63
/// covariance correction; both share the window layout.)
///
/// Because windows sit on a 4-pixel grid, each is the union of 2×2 4×4
/// blocks: the per-block sums (Σa, Σb, Σa², Σb², Σab) are computed once per
/// block row in integers and each window adds four of them, so every pixel
/// is read once (a fraction of a millisecond at 640×360).
///
/// Errors if the sizes differ or the picture is smaller than 8×8.
pub fn ssim_y(a: &Picture, b: &Picture) -> Result<f64, QualityError> {
    check_sizes(a, b)?;
    if a.width < 8 || a.height < 8 {
        return Err(QualityError::TooSmall { width: a.width, height: a.height });
    }
    Ok(ssim_plane(&a.y, &b.y, a.width as usize, a.height as usize))
}

/// SSIM expressed in dB, −10·log10(1 − SSIM), as libvpx and x264 print it:
/// it spreads the values near 1 that matter for video. Capped at
/// [`SSIM_DB_CAP`] (60 dB, reached at 1 − SSIM = 10⁻⁶), so SSIM 1 gives
/// 60 dB like an identical frame's PSNR.
pub fn ssim_db(ssim: f64) -> f64 {
    let loss = 1.0 - ssim;
    if loss <= 1e-6 {
        return SSIM_DB_CAP;
    }
    (-10.0 * loss.log10()).min(SSIM_DB_CAP)
}

/// Per-block sums for one 4×4 block.
#[derive(Clone, Copy, Default)]
struct BlockSums {
    a: u32,
    b: u32,
    aa: u32,
    bb: u32,
    ab: u32,
}

impl std::ops::Add for BlockSums {
    type Output = BlockSums;
    fn add(self, o: BlockSums) -> BlockSums {
        BlockSums { a: self.a + o.a, b: self.b + o.b, aa: self.aa + o.aa, bb: self.bb + o.bb, ab: self.ab + o.ab }
    }
}

fn ssim_plane(a: &[u8], b: &[u8], w: usize, h: usize) -> f64 {
    let (bw, bh) = (w / 4, h / 4);
    let mut prev = vec![BlockSums::default(); bw];
    let mut cur = vec![BlockSums::default(); bw];
    block_row(a, b, w, 0, &mut prev);
    let mut total = 0.0;
    for by in 1..bh {
        block_row(a, b, w, by, &mut cur);
        for bx in 0..bw - 1 {
            let s = prev[bx] + prev[bx + 1] + cur[bx] + cur[bx + 1];
            total += window_ssim(s);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    total / ((bw - 1) * (bh - 1)) as f64
}

/// Sums of every 4×4 block in block row `by` (columns past the last whole
/// block are not part of any window and are skipped).
fn block_row(a: &[u8], b: &[u8], w: usize, by: usize, out: &mut [BlockSums]) {
    out.fill(BlockSums::default());
    for r in 0..4 {
        let o = (4 * by + r) * w;
        let (ra, rb) = (&a[o..o + 4 * out.len()], &b[o..o + 4 * out.len()]);
        for ((s, ca), cb) in out.iter_mut().zip(ra.chunks_exact(4)).zip(rb.chunks_exact(4)) {
            let (mut sa, mut sb, mut saa, mut sbb, mut sab) = (0u32, 0u32, 0u32, 0u32, 0u32);
            for k in 0..4 {
                let (p, q) = (ca[k] as u32, cb[k] as u32);
                sa += p;
                sb += q;
                saa += p * p;
                sbb += q * q;
                sab += p * q;
            }
            s.a += sa;
            s.b += sb;
            s.aa += saa;
            s.bb += sbb;
            s.ab += sab;
        }
    }
}

/// libvpx's `similarity()` for a 64-sample window: the SSIM formula with
/// numerator and denominator multiplied by 64⁴, so only sums appear.
fn window_ssim(s: BlockSums) -> f64 {
    const N: f64 = 64.0;
    let c1 = SSIM_C1 * N * N;
    let c2 = SSIM_C2 * N * N;
    let (sa, sb) = (s.a as f64, s.b as f64);
    let num = (2.0 * sa * sb + c1) * (2.0 * N * s.ab as f64 - 2.0 * sa * sb + c2);
    let den = (sa * sa + sb * sb + c1) * (N * s.aa as f64 - sa * sa + N * s.bb as f64 - sb * sb + c2);
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        /// Roughly normal (sum of 4 uniforms), unit variance.
        fn normalish(&mut self) -> f64 {
            let s: f64 = (0..4).map(|_| (self.next() % 10_000) as f64 / 10_000.0).sum();
            (s - 2.0) * (3.0f64).sqrt()
        }
    }

    fn textured(w: u32, h: u32, seed: u64) -> Picture {
        // Smooth gradients plus mid-frequency texture: SSIM behaves on it as on
        // natural content (pure noise would make every window high-variance).
        let mut r = Lcg(seed);
        let mut p = Picture::new(w, h);
        for y in 0..h {
            for x in 0..w {
                let v = 128.0
                    + 60.0 * ((x as f64) / 23.0).sin() * ((y as f64) / 17.0).cos()
                    + 20.0 * ((x + 2 * y) as f64 / 5.0).sin()
                    + 4.0 * r.normalish();
                p.y[(y * w + x) as usize] = v.round().clamp(0.0, 255.0) as u8;
            }
        }
        p
    }

    fn add_noise(p: &Picture, sigma: f64, seed: u64) -> Picture {
        let mut r = Lcg(seed);
        let mut q = p.clone();
        for v in q.y.iter_mut() {
            *v = (*v as f64 + sigma * r.normalish()).round().clamp(0.0, 255.0) as u8;
        }
        q
    }

    /// Textbook SSIM over the same windows, in floating point, one window at
    /// a time: the reference the fast block-sum version must reproduce.
    fn ssim_slow(a: &Picture, b: &Picture) -> f64 {
        let (w, h) = (a.width as usize, a.height as usize);
        let (mut total, mut n) = (0.0, 0);
        let mut i = 0;
        while i + 8 <= h {
            let mut j = 0;
            while j + 8 <= w {
                let px = |p: &Picture, y: usize, x: usize| p.y[(i + y) * w + j + x] as f64;
                let (mut ma, mut mb) = (0.0, 0.0);
                for y in 0..8 {
                    for x in 0..8 {
                        ma += px(a, y, x);
                        mb += px(b, y, x);
                    }
                }
                ma /= 64.0;
                mb /= 64.0;
                let (mut va, mut vb, mut cov) = (0.0, 0.0, 0.0);
                for y in 0..8 {
                    for x in 0..8 {
                        let (da, db) = (px(a, y, x) - ma, px(b, y, x) - mb);
                        va += da * da;
                        vb += db * db;
                        cov += da * db;
                    }
                }
                va /= 64.0;
                vb /= 64.0;
                cov /= 64.0;
                total += ((2.0 * ma * mb + SSIM_C1) * (2.0 * cov + SSIM_C2))
                    / ((ma * ma + mb * mb + SSIM_C1) * (va + vb + SSIM_C2));
                n += 1;
                j += 4;
            }
            i += 4;
        }
        total / n as f64
    }

    #[test]
    fn identical_pictures_hit_the_caps() {
        let p = textured(64, 48, 1);
        assert_eq!(psnr_y(&p, &p).unwrap(), PSNR_CAP_DB);
        assert_eq!(PSNR_CAP_DB, 60.0);
        assert!((ssim_y(&p, &p).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(ssim_db(1.0), 60.0);
        assert_eq!(ssim_db(ssim_y(&p, &p).unwrap()), 60.0);
        assert_eq!(ssim_db(1.0 + 1e-15), 60.0);
    }

    #[test]
    fn known_mse_gives_known_psnr() {
        let a = Picture::new(40, 30);
        let mut b = a.clone();
        // Every sample off by 5: MSE 25 -> 10·log10(65025/25) = 34.151 dB.
        b.y.iter_mut().for_each(|v| *v += 5);
        let expect = 10.0 * (255.0f64 * 255.0 / 25.0).log10();
        assert!((psnr_y(&a, &b).unwrap() - expect).abs() < 1e-12);
        assert!((expect - 34.1514).abs() < 1e-3);
        // Half the samples off by 10: MSE 50 -> 31.14 dB.
        let mut c = a.clone();
        c.y.iter_mut().step_by(2).for_each(|v| *v -= 10);
        assert!((psnr_y(&a, &c).unwrap() - 10.0 * (65025.0f64 / 50.0).log10()).abs() < 1e-12);
        assert_eq!(sse_y(&a, &c).unwrap(), 600 * 100);
        // Worst case: 0 vs 255 everywhere = 0 dB.
        let (mut z, mut f) = (a.clone(), a.clone());
        z.y.fill(0);
        f.y.fill(255);
        assert!(psnr_y(&z, &f).unwrap().abs() < 1e-12);
        // A tiny error on a huge picture is capped; MSE 1 (48 dB) is not.
        assert!(psnr_from_sse(1, 1 << 40) == PSNR_CAP_DB);
        assert!(psnr_from_sse(1000, 1000) < PSNR_CAP_DB);
    }

    #[test]
    fn size_mismatch_and_tiny_pictures_are_errors() {
        let a = Picture::new(16, 16);
        let b = Picture::new(16, 18);
        let e = psnr_y(&a, &b).unwrap_err();
        assert_eq!(e, QualityError::SizeMismatch { a: (16, 16), b: (16, 18) });
        assert!(e.to_string().contains("16x16") && e.to_string().contains("16x18"), "{e}");
        assert!(ssim_y(&a, &b).is_err());
        let t = Picture::new(7, 20);
        assert_eq!(ssim_y(&t, &t).unwrap_err(), QualityError::TooSmall { width: 7, height: 20 });
        assert!(ssim_y(&Picture::new(8, 8), &Picture::new(8, 8)).is_ok());
    }

    #[test]
    fn fast_ssim_matches_slow_reference_on_random_data() {
        // Sizes that are and are not multiples of 4 (leftover rows/columns
        // must be ignored exactly as the window grid ignores them).
        for (k, (w, h)) in [(8, 8), (64, 48), (67, 41), (13, 30), (120, 9)].into_iter().enumerate() {
            let a = textured(w, h, k as u64);
            for sigma in [0.0, 3.0, 20.0, 80.0] {
                let b = add_noise(&a, sigma, 99 + k as u64);
                let fast = ssim_y(&a, &b).unwrap();
                let slow = ssim_slow(&a, &b);
                assert!((fast - slow).abs() < 1e-9, "{w}x{h} sigma {sigma}: {fast} vs {slow}");
            }
            // Pure random bytes, independent pictures (SSIM near 0).
            let mut r = Lcg(k as u64 + 5);
            let mut x = Picture::new(w, h);
            let mut y = Picture::new(w, h);
            x.y.iter_mut().for_each(|v| *v = r.next() as u8);
            y.y.iter_mut().for_each(|v| *v = r.next() as u8);
            let (fast, slow) = (ssim_y(&x, &y).unwrap(), ssim_slow(&x, &y));
            assert!((fast - slow).abs() < 1e-9, "random {w}x{h}: {fast} vs {slow}");
            assert!(fast.abs() < 0.2, "independent noise SSIM {fast}");
        }
    }

    #[test]
    fn ssim_falls_monotonically_with_noise() {
        let a = textured(160, 96, 3);
        let mut last = ssim_y(&a, &a).unwrap();
        let mut last_db = ssim_db(last);
        for sigma in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
            let s = ssim_y(&a, &add_noise(&a, sigma, 7)).unwrap();
            assert!(s < last, "sigma {sigma}: {s} !< {last}");
            assert!(ssim_db(s) < last_db);
            last = s;
            last_db = ssim_db(s);
        }
        assert!(last < 0.5, "heavy noise still {last}");
    }

    #[test]
    fn ssim_tolerates_a_brightness_shift_that_psnr_punishes() {
        // A uniform +8 shift is a large MSE (PSNR ~30 dB) but keeps structure:
        // SSIM stays near 1, while noise of the same MSE drops it clearly.
        let a = textured(160, 96, 4);
        let mut shifted = a.clone();
        shifted.y.iter_mut().for_each(|v| *v = v.saturating_add(8));
        let noisy = add_noise(&a, 8.0, 11);
        let (ps, pn) = (psnr_y(&a, &shifted).unwrap(), psnr_y(&a, &noisy).unwrap());
        assert!((ps - pn).abs() < 2.0, "comparable MSE: {ps} vs {pn}");
        let (ss, sn) = (ssim_y(&a, &shifted).unwrap(), ssim_y(&a, &noisy).unwrap());
        assert!(ss > 0.99, "shift SSIM {ss}");
        assert!(sn < 0.9, "noise SSIM {sn}");
    }

    #[test]
    fn ssim_db_is_the_log_of_the_loss() {
        assert!((ssim_db(0.9) - 10.0).abs() < 1e-12);
        assert!((ssim_db(0.99) - 20.0).abs() < 1e-9);
        assert!((ssim_db(0.0)).abs() < 1e-12);
        assert_eq!(ssim_db(1.0 - 1e-12), 60.0);
        assert!(ssim_db(1.0 - 1e-5) < 60.0);
    }

    #[test]
    fn ssim_is_symmetric_and_only_reads_luma() {
        let a = textured(48, 40, 8);
        let mut b = add_noise(&a, 10.0, 2);
        assert_eq!(ssim_y(&a, &b).unwrap(), ssim_y(&b, &a).unwrap());
        let before = ssim_y(&a, &b).unwrap();
        b.u.fill(0);
        assert_eq!(ssim_y(&a, &b).unwrap(), before);
    }

    /// `cargo test --release -p rtcc-video -- --ignored --nocapture quality_timing`
    #[test]
    #[ignore]
    fn quality_timing() {
        for (w, h) in [(640, 360), (1280, 720)] {
            let a = textured(w, h, 1);
            let b = add_noise(&a, 5.0, 2);
            let n = 200;
            let t = std::time::Instant::now();
            let mut s = 0.0;
            for _ in 0..n {
                s += ssim_y(&a, &b).unwrap();
            }
            let ssim_ms = t.elapsed().as_secs_f64() * 1e3 / n as f64;
            let t = std::time::Instant::now();
            for _ in 0..n {
                s += psnr_y(&a, &b).unwrap();
            }
            let psnr_ms = t.elapsed().as_secs_f64() * 1e3 / n as f64;
            println!("{w}x{h}: ssim_y {ssim_ms:.3} ms, psnr_y {psnr_ms:.3} ms ({s:.1})");
        }
    }
}
