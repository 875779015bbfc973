//! Photos: packed 8-bit RGB images ([`RgbImage`]) and reading them from PNG files ([`load_png`]).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::source::ContentError;
use crate::picture::Picture;

/// A packed 8-bit RGB image (`rgb.len() == width*height*3`), e.g. a photo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl RgbImage {
    pub(super) fn check(&self) -> Result<(), String> {
        if self.width == 0 || self.height == 0 || self.rgb.len() != (self.width * self.height * 3) as usize {
            return Err(format!(
                "RGB image {}x{} has {} bytes, expected {}",
                self.width,
                self.height,
                self.rgb.len(),
                self.width as usize * self.height as usize * 3
            ));
        }
        Ok(())
    }

    /// The centred crop of this image with the aspect ratio of `w`×`h`,
    /// scaled to exactly `w`×`h` ("cover": fills the frame, trims the
    /// excess, never letterboxes). Small photos are simply upscaled.
    pub fn cover(&self, w: u32, h: u32) -> Picture {
        let (pw, ph) = (self.width as u64, self.height as u64);
        let (cw, ch) = if pw * h as u64 > w as u64 * ph {
            (((ph * w as u64 + h as u64 / 2) / h as u64).clamp(1, pw), ph)
        } else {
            (pw, ((pw * h as u64 + w as u64 / 2) / w as u64).clamp(1, ph))
        };
        let (x0, y0) = ((pw - cw) / 2, (ph - ch) / 2);
        let mut rgb = Vec::with_capacity((cw * ch * 3) as usize);
        for y in y0..y0 + ch {
            let o = ((y * pw + x0) * 3) as usize;
            rgb.extend_from_slice(&self.rgb[o..o + (cw * 3) as usize]);
        }
        Picture::from_rgb(cw as u32, ch as u32, &rgb).resize(w, h)
    }

    /// Scaled to height `h`, width following the aspect ratio, rounded to
    /// an even number.
    pub(super) fn fit_height(&self, h: u32) -> Picture {
        let w = ((self.width as f64 * h as f64 / self.height as f64 / 2.0).round() as u32 * 2).max(2);
        Picture::from_rgb(self.width, self.height, &self.rgb).resize(w, h)
    }
}

/// Read a PNG as 8-bit RGB: greyscale, greyscale+alpha, RGB, RGBA and
/// palette images at any bit depth (16-bit samples keep their high byte,
/// low depths and palettes are expanded). Alpha is dropped: photos are
/// taken as opaque. Errors name the file.
pub fn load_png(path: &Path) -> Result<RgbImage, ContentError> {
    let file = File::open(path).map_err(ContentError::io(path))?;
    let mut dec = png::Decoder::new(BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let bad = |e: png::DecodingError| ContentError::format(path, format!("not a readable PNG: {e}"));
    let mut reader = dec.read_info().map_err(bad)?;
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(bad)?;
    if info.bit_depth != png::BitDepth::Eight {
        return Err(ContentError::format(
            path,
            format!("unexpected PNG bit depth {:?} after expansion", info.bit_depth),
        ));
    }
    let channels = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => {
            return Err(ContentError::format(path, "palette PNG was not expanded to RGB"));
        }
    };
    let (w, h) = (info.width as usize, info.height as usize);
    if w == 0 || h == 0 {
        return Err(ContentError::format(path, "PNG has no pixels"));
    }
    let mut rgb = Vec::with_capacity(w * h * 3);
    for row in buf.chunks(info.line_size).take(h) {
        for px in row[..w * channels].chunks_exact(channels) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
    }
    Ok(RgbImage { width: w as u32, height: h as u32, rgb })
}

/// Writes `data` as a PNG (tests of the readers and sample-frame dumps).
#[cfg(test)]
pub(super) fn write_png(path: &Path, w: u32, h: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) {
    let f = File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    enc.set_color(color);
    enc.set_depth(depth);
    let mut wr = enc.write_header().unwrap();
    wr.write_image_data(data).unwrap();
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let k = N.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("rtcc-video-content-{}-{k}-{name}", std::process::id()))
    }

    #[test]
    fn load_png_reads_every_common_layout() {
        use png::{BitDepth as D, ColorType as C};
        let (w, h) = (3u32, 2u32);
        type Case = (&'static str, C, D, Vec<u8>, [u8; 3]);
        let cases: Vec<Case> = vec![
            ("rgb8", C::Rgb, D::Eight, [10u8, 20, 30].repeat(6), [10, 20, 30]),
            ("rgba8", C::Rgba, D::Eight, [10u8, 20, 30, 7].repeat(6), [10, 20, 30]),
            ("grey8", C::Grayscale, D::Eight, vec![77; 6], [77, 77, 77]),
            ("greya8", C::GrayscaleAlpha, D::Eight, [77u8, 0].repeat(6), [77, 77, 77]),
            ("rgb16", C::Rgb, D::Sixteen, [0x12u8, 0x34, 0xAB, 0xCD, 0xFF, 0xFF].repeat(6), [0x12, 0xAB, 0xFF]),
            ("rgba16", C::Rgba, D::Sixteen, [1u8, 0, 2, 0, 3, 0, 0, 0].repeat(6), [1, 2, 3]),
            ("grey16", C::Grayscale, D::Sixteen, [0x80u8, 0x01].repeat(6), [0x80, 0x80, 0x80]),
            ("greya16", C::GrayscaleAlpha, D::Sixteen, [0x40u8, 0, 0xFF, 0xFF].repeat(6), [0x40, 0x40, 0x40]),
            // 1-bit grey: rows padded to whole bytes, 0b101 -> 255, 0, 255.
            ("grey1", C::Grayscale, D::One, vec![0b1010_0000, 0b1010_0000], [255, 255, 255]),
        ];
        for (name, color, depth, data, first) in cases {
            let path = temp_path(&format!("{name}.png"));
            write_png(&path, w, h, color, depth, &data);
            let img = load_png(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            std::fs::remove_file(&path).ok();
            assert_eq!((img.width, img.height, img.rgb.len()), (w, h, 18), "{name}");
            assert_eq!(img.rgb[..3], first, "{name}");
            if name == "grey1" {
                assert_eq!(img.rgb[3..9], [0, 0, 0, 255, 255, 255]);
            }
        }
    }

    #[test]
    fn load_png_errors_name_the_file() {
        let missing = temp_path("missing.png");
        let e = load_png(&missing).unwrap_err();
        assert!(e.to_string().contains(&missing.display().to_string()), "{e}");
        let junk = temp_path("junk.png");
        std::fs::write(&junk, b"not a png at all").unwrap();
        let e = load_png(&junk).unwrap_err();
        std::fs::remove_file(&junk).ok();
        let msg = e.to_string();
        assert!(msg.contains(&junk.display().to_string()) && msg.contains("PNG"), "{msg}");
    }

    #[test]
    fn cover_fills_and_crops_centrally() {
        // A 4x2 image whose left and right quarters are red, centre green:
        // covering a square keeps the centre.
        let mut rgb = Vec::new();
        for _ in 0..2 {
            for x in 0..4 {
                rgb.extend_from_slice(if x == 0 || x == 3 { &[255, 0, 0] } else { &[0, 255, 0] });
            }
        }
        let img = RgbImage { width: 4, height: 2, rgb };
        let sq = img.cover(2, 2);
        assert_eq!((sq.width, sq.height), (2, 2));
        let green = Picture::from_rgb(1, 1, &[0, 255, 0]);
        assert!(sq.y.iter().all(|&v| v == green.y[0]), "{:?}", sq.y);
        let wide = img.cover(8, 2);
        assert_eq!((wide.width, wide.height), (8, 2));
    }
}
