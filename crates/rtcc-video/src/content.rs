//! Source pictures for real-codec runs: generated sequences made from
//! photographs ([`Generated`]), and the [`ContentSource`] trait that file
//! readers ([`crate::y4m`]) implement too.
//!
//! Every source is random-access: `frame(i)` is a pure function of the
//! source's settings and `i`. The simulator relies on that: it asks for
//! frame `i` when the encoder captures it and again, later and possibly out
//! of order, to score the picture the receiver displayed against it.
//!
//! Generated geometry (sway amplitude, head size, pan speed, sprite size
//! and speed) is defined in fractions of the output size, so the same
//! settings at 360p and 720p show the same scene and motion, only sharper;
//! sensor noise is per pixel (σ 1.5 levels) at every size.

use std::f64::consts::TAU;
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::picture::{chroma_size, Picture};

/// The kind of motion in generated content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    /// A portrait with slow camera sway, a nodding head and sensor noise:
    /// low temporal information, like a video call.
    TalkingHead,
    /// Fast camera pans over a wide scene, fast bouncing sprites and a
    /// static HUD: high temporal information, like game streaming.
    Game,
}

impl Motion {
    /// `"talking-head"` or `"game"` (surrounding spaces and case ignored).
    pub fn parse(s: &str) -> Option<Motion> {
        match s.trim().to_ascii_lowercase().as_str() {
            "talking-head" => Some(Motion::TalkingHead),
            "game" => Some(Motion::Game),
            _ => None,
        }
    }

    /// The name [`Motion::parse`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            Motion::TalkingHead => "talking-head",
            Motion::Game => "game",
        }
    }
}

impl fmt::Display for Motion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Motion {
    type Err = String;
    fn from_str(s: &str) -> Result<Motion, String> {
        Motion::parse(s).ok_or_else(|| format!("'{s}' is not one of talking-head, game"))
    }
}

/// Why content could not be loaded or read. File errors name the file; Y4M
/// and YUV errors also name the frame or header field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {reason}", .path.display())]
    Format { path: PathBuf, reason: String },
    #[error("{0}")]
    Invalid(String),
}

impl ContentError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ContentError + '_ {
        move |source| ContentError::Io { path: path.to_path_buf(), source }
    }

    pub(crate) fn format(path: &Path, reason: impl Into<String>) -> ContentError {
        ContentError::Format { path: path.to_path_buf(), reason: reason.into() }
    }
}

/// A random-access sequence of source pictures.
pub trait ContentSource: Send {
    /// Picture size (every frame has it).
    fn size(&self) -> (u32, u32);
    /// Native frame rate: frame `i` is shown at `i / fps` seconds.
    fn fps(&self) -> f64;
    /// Frames before the sequence repeats (files loop), `None` if endless.
    fn frame_count(&self) -> Option<u64> {
        None
    }
    /// Write frame `index` into `out`, reusing its buffers; an `out` of the
    /// wrong size is replaced. Must be a pure function of `index`.
    fn frame_into(&mut self, index: u64, out: &mut Picture);
    /// Frame `index` as a new picture.
    fn frame(&mut self, index: u64) -> Picture {
        let (w, h) = self.size();
        let mut p = Picture::new(w, h);
        self.frame_into(index, &mut p);
        p
    }
    /// One line for logs and reports.
    fn describe(&self) -> String;
}

/// Make `out` a `w`×`h` picture (keeping its buffers when it already is).
pub(crate) fn ensure_size(out: &mut Picture, w: u32, h: u32) {
    let (cw, ch) = chroma_size(w, h);
    let ok = out.width == w
        && out.height == h
        && out.y.len() == (w * h) as usize
        && out.u.len() == (cw * ch) as usize
        && out.v.len() == (cw * ch) as usize;
    if !ok {
        *out = Picture::new(w, h);
    }
}

// ------------------------------------------------------------------ photos

/// A packed 8-bit RGB image (`rgb.len() == width*height*3`), e.g. a photo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl RgbImage {
    fn check(&self) -> Result<(), String> {
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
    fn fit_height(&self, h: u32) -> Picture {
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

// ------------------------------------------------------------ hashing, rng

/// splitmix64's finaliser: a good 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash3(a: u64, b: u64, c: u64) -> u64 {
    mix(a ^ mix(b ^ mix(c)))
}

/// Uniform in [0, 1) from a hash.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A tiny sequential generator for one-off scene layout.
struct Draw(u64);

impl Draw {
    fn new(seed: u64, salt: u64) -> Draw {
        Draw(mix(seed ^ mix(salt)))
    }
    fn u(&mut self) -> f64 {
        self.0 = mix(self.0);
        unit(self.0)
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.u()
    }
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.u().max(1e-300), self.u());
        (-2.0 * u1.ln()).sqrt() * (TAU * u2).cos()
    }
}

fn round_even(x: f64) -> u32 {
    ((x / 2.0).round().max(1.0) as u32) * 2
}

// ------------------------------------------------------- synthetic photos

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

fn smoothstep(t: f64) -> f64 {
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

// --------------------------------------------------------- plane sampling

/// One 8-bit plane, tightly packed.
struct Plane {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

fn planes(p: Picture) -> [Plane; 3] {
    let (w, h) = (p.width as usize, p.height as usize);
    let (cw, ch) = chroma_size(p.width, p.height);
    let (cw, ch) = (cw as usize, ch as usize);
    [Plane { w, h, px: p.y }, Plane { w: cw, h: ch, px: p.u }, Plane { w: cw, h: ch, px: p.v }]
}

/// Fixed-point sub-pixel unit of sampling positions: 1/256 pixel.
const FX: f64 = 256.0;

/// Bilinear samples of `src` along one output row: `out[k]` is the sample
/// at source position (`x0` + k, `y`), positions in 1/256 pixel, result in
/// 8.8 fixed point (value·256). Columns wrap around when `wrap` (a
/// horizontally periodic scene), else clamp to the edge; rows clamp.
///
/// A translation has the same fractional offset at every pixel, so the two
/// vertical weights and two horizontal weights are constants: one
/// vectorisable vertical blend into `tmp`, then one horizontal blend.
fn sample_row(src: &Plane, x0: i64, y: i64, wrap: bool, tmp: &mut Vec<u16>, out: &mut [u16]) {
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

fn to_fx(v: f64) -> i64 {
    (v * FX).round() as i64
}

// ------------------------------------------------------- generated content

/// A generated sequence: photos (or [`synthetic_photo`]s) animated as a
/// talking head or a game, frame `i` a pure function of the settings and `i`.
pub struct Generated {
    motion: Motion,
    width: u32,
    height: u32,
    fps: f64,
    seed: u64,
    photos: usize,
    scene: Scene,
    tmp: Vec<u16>,
    row_a: Vec<u16>,
    row_b: Vec<u16>,
}

enum Scene {
    Talking(Talking),
    Game(Game),
}

impl Generated {
    /// `width`×`height` `motion` content at `fps` frames per second.
    ///
    /// Photos: the talking head uses the first as its background; the game
    /// builds its panned scene from all but the last (all if there is only
    /// one) and cuts its sprites from the last. No photos: from `seed`, a
    /// [`synthetic_portrait`] (1024×768) for the talking head, two
    /// [`synthetic_photo`]s (a wide 2048×768 scene, so the pan does not
    /// revisit it every screen width, and 512×512 sprites) for the game. Everything is prepared here (photos converted and
    /// resampled once), so `frame` only samples.
    ///
    /// # Panics
    /// On a zero size, a non-finite or non-positive `fps`, or an `RgbImage`
    /// whose buffer does not match its size; [`Generated::try_new`] returns
    /// these as errors.
    pub fn new(motion: Motion, width: u32, height: u32, fps: f64, seed: u64, photos: Vec<RgbImage>) -> Generated {
        match Generated::try_new(motion, width, height, fps, seed, photos) {
            Ok(g) => g,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Generated::new`], with invalid arguments as errors.
    pub fn try_new(
        motion: Motion,
        width: u32,
        height: u32,
        fps: f64,
        seed: u64,
        photos: Vec<RgbImage>,
    ) -> Result<Generated, ContentError> {
        if width < 2 || height < 2 || width > 16384 || height > 16384 {
            return Err(ContentError::Invalid(format!("generated content size {width}x{height} is not in 2..16384")));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(ContentError::Invalid(format!("generated content frame rate {fps} is not positive")));
        }
        for p in &photos {
            p.check().map_err(ContentError::Invalid)?;
        }
        let n = photos.len();
        let photos = match (photos.is_empty(), motion) {
            (false, _) => photos,
            (true, Motion::TalkingHead) => vec![synthetic_portrait(1024, 768, seed)],
            (true, Motion::Game) => {
                vec![synthetic_photo(2048, 768, seed), synthetic_photo(512, 512, seed.wrapping_add(1))]
            }
        };
        let scene = match motion {
            Motion::TalkingHead => Scene::Talking(Talking::new(width, height, seed, &photos[0])),
            Motion::Game => {
                let (scene, sprite) = if photos.len() >= 2 {
                    (&photos[..photos.len() - 1], &photos[photos.len() - 1])
                } else {
                    (&photos[..], &photos[0])
                };
                Scene::Game(Game::new(width, height, seed, scene, sprite))
            }
        };
        Ok(Generated {
            motion,
            width,
            height,
            fps,
            seed,
            photos: n,
            scene,
            tmp: Vec::new(),
            row_a: vec![0; width as usize],
            row_b: vec![0; width as usize],
        })
    }

    pub fn motion(&self) -> Motion {
        self.motion
    }
}

impl ContentSource for Generated {
    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn fps(&self) -> f64 {
        self.fps
    }

    fn frame_into(&mut self, index: u64, out: &mut Picture) {
        ensure_size(out, self.width, self.height);
        let t = index as f64 / self.fps;
        let bufs = (&mut self.tmp, &mut self.row_a, &mut self.row_b);
        match &self.scene {
            Scene::Talking(s) => s.render(t, index, out, bufs),
            Scene::Game(s) => s.render(t, out, bufs),
        }
    }

    fn describe(&self) -> String {
        let photos = match self.photos {
            0 => "synthetic photos".to_string(),
            1 => "1 photo".to_string(),
            n => format!("{n} photos"),
        };
        format!(
            "generated {} {}x{} at {} fps, seed {}, {photos}",
            self.motion, self.width, self.height, self.fps, self.seed
        )
    }
}

type Bufs<'a> = (&'a mut Vec<u16>, &'a mut Vec<u16>, &'a mut Vec<u16>);

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
struct Talking {
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
    fn new(w: u32, h: u32, seed: u64, photo: &RgbImage) -> Talking {
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

    fn render(&self, t: f64, index: u64, out: &mut Picture, (tmp, row_a, row_b): Bufs) {
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

/// Game: a fast, direction-changing camera pan over a wide, horizontally
/// wrapping scene built from photos; hard-edged sprites bouncing across the
/// frame; a static HUD bar and crosshair. No sensor noise (rendered).
struct Game {
    scene: [Plane; 3],
    /// Output size relative to 640 pixels wide: speeds scale with it.
    scale: f64,
    /// Vertical pan range, luma pixels (scene height − frame height).
    vrange: f64,
    sprites: Vec<Sprite>,
    hud_top: usize,
    hud: Picture,
    /// Static crosshair: luma sample indices painted white.
    cross: Vec<usize>,
    seed: u64,
}

struct Sprite {
    pic: Picture,
    mask_y: Vec<bool>,
    mask_c: Vec<bool>,
    start: (f64, f64),
    vel: (f64, f64),
    range: (f64, f64),
}

/// Pan speed range at 640 pixels wide, px/s (scaled with the width).
const PAN_SPEED: (f64, f64) = (300.0, 600.0);
/// Sprite speed range at 640 pixels wide, px/s.
const SPRITE_SPEED: (f64, f64) = (200.0, 500.0);

impl Game {
    fn new(w: u32, h: u32, seed: u64, scene_photos: &[RgbImage], sprite_photo: &RgbImage) -> Game {
        let (wf, hf) = (w as f64, h as f64);
        let sh = round_even(1.35 * hf);
        // Each photo at scene height, followed by its mirror image so the
        // join is seamless; hard joins only between different photos.
        let mut parts = Vec::new();
        for p in scene_photos {
            let pic = p.fit_height(sh);
            let flipped = flip_horizontal(&pic);
            parts.push(pic);
            parts.push(flipped);
        }
        let sw: u32 = parts.iter().map(|p| p.width).sum();
        let mut scene = Picture::new(sw, sh);
        let mut x = 0;
        for p in &parts {
            paste(&mut scene, p, x, 0);
            x += p.width;
        }
        let mut d = Draw::new(seed, 0x6A3E);
        // HUD bar: height of the same parity as the frame so its chroma rows
        // line up with the frame's.
        let mut hb = round_even(0.08 * hf).min(h);
        if h % 2 == 1 {
            hb = (hb - 1).max(1);
        }
        let hud = hud_bar(w, hb);
        let hud_top = (h - hb) as usize;
        let play_h = (h - hb).max(2);
        let mut sprites = Vec::new();
        let min_side = w.min(play_h);
        if min_side >= 8 {
            let src = sprite_photo.cover(w, h);
            for k in 0..5 {
                let side = round_even(d.range(0.10, 0.18) * hf).min(min_side & !1);
                let x = round_even(d.range(0.0, (w - side) as f64)).min(w - side) & !1;
                let y = round_even(d.range(0.0, (h - side) as f64)).min(h - side) & !1;
                let pic = src.crop(x, y, side, side);
                let inside = |u: f64, v: f64| match k % 3 {
                    0 => u * u + v * v <= 1.0,
                    1 => {
                        u.abs().max(v.abs()) <= 0.92 || (u.abs() - 0.6).max(0.0).hypot((v.abs() - 0.6).max(0.0)) <= 0.32
                    }
                    _ => u.abs() + v.abs() <= 1.0,
                };
                let s = side as usize;
                let at = |i: usize, n: usize| (i as f64 + 0.5) / n as f64 * 2.0 - 1.0;
                let mask_y = (0..s * s).map(|i| inside(at(i % s, s), at(i / s, s))).collect();
                let c = s / 2;
                let mask_c = (0..c * c).map(|i| inside(at(i % c, c), at(i / c, c))).collect();
                let speed = d.range(SPRITE_SPEED.0, SPRITE_SPEED.1) * wf / 640.0;
                let dir = d.range(0.0, TAU);
                let range = ((w - side) as f64, (play_h.saturating_sub(side)) as f64);
                sprites.push(Sprite {
                    pic,
                    mask_y,
                    mask_c,
                    start: (d.range(0.0, range.0), d.range(0.0, range.1)),
                    vel: (speed * dir.cos(), speed * dir.sin()),
                    range,
                });
            }
        }
        // Crosshair at the centre of the play area.
        let (cxp, cyp) = (w as usize / 2, play_h as usize / 2);
        let arm = (0.03 * hf).round().max(2.0) as usize;
        let thick = ((hf / 360.0).round() as usize).max(1);
        let mut cross = Vec::new();
        for dy in 0..thick {
            for x in cxp.saturating_sub(arm)..(cxp + arm).min(w as usize) {
                if x.abs_diff(cxp) > arm / 3 {
                    cross.push((cyp + dy).min(h as usize - 1) * w as usize + x);
                }
            }
        }
        for dx in 0..thick {
            for y in cyp.saturating_sub(arm)..(cyp + arm).min(play_h as usize) {
                if y.abs_diff(cyp) > arm / 3 {
                    cross.push(y * w as usize + (cxp + dx).min(w as usize - 1));
                }
            }
        }
        Game {
            scene: planes(scene),
            scale: wf / 640.0,
            vrange: (sh - h.min(sh)) as f64,
            sprites,
            hud_top,
            hud,
            cross,
            seed,
        }
    }

    /// Pan segment `k`: duration (s) and velocity (px/s).
    fn segment(&self, k: u64) -> (f64, f64, f64) {
        let u = |i: u64| unit(hash3(self.seed ^ 0xFA2, k, i));
        let dur = 0.8 + 1.7 * u(0);
        let speed = (PAN_SPEED.0 + (PAN_SPEED.1 - PAN_SPEED.0) * u(1)) * self.scale;
        let sign = if u(2) < 0.5 { -1.0 } else { 1.0 };
        let angle = (u(3) - 0.5) * 0.9;
        (dur, sign * speed * angle.cos(), speed * angle.sin())
    }

    /// Camera position at `t`: the pan segments integrated from 0 (a few
    /// thousand at most in an hour), so it is a pure function of `t`.
    fn pan(&self, t: f64) -> (f64, f64) {
        let (mut x, mut y, mut t0) = (0.0, 0.0, 0.0);
        let mut k = 0;
        loop {
            let (dur, vx, vy) = self.segment(k);
            if t < t0 + dur {
                let dt = t - t0;
                return (x + vx * dt, triangle(y + vy * dt + self.vrange / 2.0, self.vrange));
            }
            x += vx * dur;
            y += vy * dur;
            t0 += dur;
            k += 1;
        }
    }

    fn render(&self, t: f64, out: &mut Picture, (tmp, row_a, _): Bufs) {
        let (px, py) = self.pan(t);
        let (w, h) = (out.width as usize, out.height as usize);
        let (cw, ch) = chroma_size(out.width, out.height);
        let (cw, ch) = (cw as usize, ch as usize);
        let planes: [(&mut [u8], usize, usize); 3] = [(&mut out.y, w, h), (&mut out.u, cw, ch), (&mut out.v, cw, ch)];
        for (p, (dst, pw, ph)) in planes.into_iter().enumerate() {
            let sc = if p == 0 { 1.0 } else { 0.5 };
            let (bx, by) = (to_fx(px * sc), to_fx(py * sc));
            let a = &mut row_a[..pw];
            for y in 0..ph {
                sample_row(&self.scene[p], bx, by + ((y as i64) << 8), true, tmp, a);
                for (o, &v) in dst[y * pw..(y + 1) * pw].iter_mut().zip(a.iter()) {
                    *o = ((v as u32 + 128) >> 8) as u8;
                }
            }
        }
        for s in &self.sprites {
            let x = round_even(triangle(s.start.0 + s.vel.0 * t, s.range.0)) as usize & !1;
            let y = round_even(triangle(s.start.1 + s.vel.1 * t, s.range.1)) as usize & !1;
            let x = x.min(s.range.0 as usize & !1);
            let y = y.min(s.range.1 as usize & !1);
            blit_masked(&mut out.y, w, h, &s.pic.y, &s.mask_y, s.pic.width as usize, x, y);
            let c = (s.pic.width / 2) as usize;
            let csz = s.pic.chroma_size().0 as usize;
            for (dst, src) in [(&mut out.u, &s.pic.u), (&mut out.v, &s.pic.v)] {
                // Sprite sides are even, so the chroma is exactly side/2 square.
                debug_assert_eq!(csz, c);
                blit_masked(dst, cw, ch, src, &s.mask_c, c, x / 2, y / 2);
            }
        }
        for &i in &self.cross {
            out.y[i] = 235;
        }
        let top = self.hud_top;
        out.y[top * w..].copy_from_slice(&self.hud.y);
        let ctop = top / 2;
        out.u[ctop * cw..].copy_from_slice(&self.hud.u);
        out.v[ctop * cw..].copy_from_slice(&self.hud.v);
    }
}

/// Reflect `v` into [0, `len`] (a triangle wave): bouncing motion.
fn triangle(v: f64, len: f64) -> f64 {
    if len <= 0.0 {
        return 0.0;
    }
    let m = v.rem_euclid(2.0 * len);
    if m > len {
        2.0 * len - m
    } else {
        m
    }
}

#[allow(clippy::too_many_arguments)]
fn blit_masked(dst: &mut [u8], dw: usize, dh: usize, src: &[u8], mask: &[bool], s: usize, x: usize, y: usize) {
    for r in 0..s.min(dh.saturating_sub(y)) {
        let n = s.min(dw.saturating_sub(x));
        let drow = &mut dst[(y + r) * dw + x..(y + r) * dw + x + n];
        for ((o, &v), &m) in drow.iter_mut().zip(&src[r * s..r * s + n]).zip(&mask[r * s..r * s + n]) {
            if m {
                *o = v;
            }
        }
    }
}

fn flip_horizontal(p: &Picture) -> Picture {
    let mut q = p.clone();
    let (cw, _) = p.chroma_size();
    q.y.chunks_exact_mut(p.width as usize).for_each(|r| r.reverse());
    q.u.chunks_exact_mut(cw as usize).for_each(|r| r.reverse());
    q.v.chunks_exact_mut(cw as usize).for_each(|r| r.reverse());
    q
}

/// Copy `src` into `dst` at an even luma position.
fn paste(dst: &mut Picture, src: &Picture, x: u32, y: u32) {
    let copy = |d: &mut [u8], dw: usize, s: &[u8], sw: usize, x: usize, y: usize| {
        for (r, row) in s.chunks_exact(sw).enumerate() {
            d[(y + r) * dw + x..(y + r) * dw + x + sw].copy_from_slice(row);
        }
    };
    copy(&mut dst.y, dst.width as usize, &src.y, src.width as usize, x as usize, y as usize);
    let (dcw, _) = dst.chroma_size();
    let (scw, _) = src.chroma_size();
    copy(&mut dst.u, dcw as usize, &src.u, scw as usize, x as usize / 2, y as usize / 2);
    copy(&mut dst.v, dcw as usize, &src.v, scw as usize, x as usize / 2, y as usize / 2);
}

/// The static HUD: a dark bar with health and ammo gauges and a score.
fn hud_bar(w: u32, hb: u32) -> Picture {
    let mut bar = Picture::new(w, hb);
    bar.y.fill(35);
    bar.u.fill(136);
    bar.v.fill(124);
    let rect = |bar: &mut Picture, x0: f64, x1: f64, yuv: (u8, u8, u8)| {
        let (w, h) = (bar.width as f64, bar.height as f64);
        let (x0, x1) = ((x0 * w) as u32 & !1, ((x1 * w) as u32 & !1).max((x0 * w) as u32 & !1));
        let (y0, y1) = ((0.3 * h) as u32 & !1, ((0.7 * h).ceil() as u32).min(bar.height));
        let (cw, _) = bar.chroma_size();
        for y in y0..y1 {
            for x in x0..x1 {
                bar.y[(y * bar.width + x) as usize] = yuv.0;
                bar.u[((y / 2) * cw + x / 2) as usize] = yuv.1;
                bar.v[((y / 2) * cw + x / 2) as usize] = yuv.2;
            }
        }
    };
    rect(&mut bar, 0.02, 0.17, (81, 90, 240)); // health, red
    rect(&mut bar, 0.17, 0.22, (45, 112, 170)); // health lost, dark red
    rect(&mut bar, 0.25, 0.36, (41, 240, 110)); // ammo, blue
    let scale = ((hb as f64 * 0.6 / 9.0).floor() as u32).max(1);
    let (_, th) = Picture::text_size("0", scale);
    if th <= hb {
        bar.draw_text((0.40 * w as f64) as u32, (hb - th) / 2, "HP 87  AMMO 24/90  SCORE 012345", scale);
    }
    bar
}

// ----------------------------------------------------------------- SI / TI

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
    let (w, h) = (cur.width as usize, cur.height as usize);
    let p = &cur.y;
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
    let si = if n > 0 { (s2 / n as f64 - (s1 / n as f64).powi(2)).max(0.0).sqrt() } else { 0.0 };
    let (mut d1, mut d2) = (0i64, 0i64);
    for (&a, &b) in cur.y.iter().zip(&prev.y) {
        let d = a as i64 - b as i64;
        d1 += d;
        d2 += d * d;
    }
    let m = cur.y.len() as f64;
    let ti = (d2 as f64 / m - (d1 as f64 / m).powi(2)).max(0.0).sqrt();
    (si, ti)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::{psnr_y, ssim_y};

    fn temp_path(name: &str) -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let k = N.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("rtcc-video-content-{}-{k}-{name}", std::process::id()))
    }

    /// The default content (synthetic portrait / synthetic scene).
    fn gen(motion: Motion, w: u32, h: u32, seed: u64) -> Generated {
        Generated::new(motion, w, h, 30.0, seed, vec![])
    }

    /// Mean SI and TI over `n` frames from `start`.
    fn mean_si_ti(g: &mut Generated, start: u64, n: u64) -> (f64, f64) {
        let mut prev = g.frame(start);
        let (mut si, mut ti) = (0.0, 0.0);
        for i in start + 1..=start + n {
            let cur = g.frame(i);
            let (s, t) = si_ti(&prev, &cur);
            si += s;
            ti += t;
            prev = cur;
        }
        (si / n as f64, ti / n as f64)
    }

    #[test]
    fn motion_parses_and_prints() {
        assert_eq!(Motion::parse("talking-head"), Some(Motion::TalkingHead));
        assert_eq!(Motion::parse(" Game "), Some(Motion::Game));
        assert_eq!(Motion::parse("gaming"), None);
        assert_eq!("game".parse::<Motion>(), Ok(Motion::Game));
        assert!("x".parse::<Motion>().unwrap_err().contains("talking-head"));
        for m in [Motion::TalkingHead, Motion::Game] {
            assert_eq!(Motion::parse(&m.to_string()), Some(m));
        }
    }

    #[test]
    fn frames_have_the_requested_size() {
        for motion in [Motion::TalkingHead, Motion::Game] {
            for (w, h) in [(640, 360), (320, 180), (97, 55), (16, 16)] {
                let mut g = gen(motion, w, h, 1);
                assert_eq!(g.size(), (w, h));
                let f = g.frame(3);
                let (cw, ch) = chroma_size(w, h);
                assert_eq!((f.width, f.height, f.y.len(), f.u.len()), (w, h, (w * h) as usize, (cw * ch) as usize));
                // Wrong-sized output buffers are replaced.
                let mut out = Picture::new(8, 8);
                g.frame_into(3, &mut out);
                assert_eq!(out, f, "{motion} {w}x{h}");
            }
        }
    }

    #[test]
    fn frames_are_deterministic_and_order_independent() {
        for motion in [Motion::TalkingHead, Motion::Game] {
            let mut a = gen(motion, 320, 180, 5);
            let in_order: Vec<Picture> = (0..8).map(|i| a.frame(i)).collect();
            let mut b = gen(motion, 320, 180, 5);
            // Out of order, with repeats and a far jump in between.
            for &i in &[5u64, 3, 7, 0, 5, 1, 6, 2, 4] {
                let _ = b.frame(10_000 + i);
                assert_eq!(b.frame(i), in_order[i as usize], "{motion} frame {i}");
            }
            // Consecutive frames differ (there is motion / noise)...
            assert_ne!(in_order[0], in_order[1]);
            // ...and the seed matters.
            let mut c = gen(motion, 320, 180, 6);
            assert_ne!(c.frame(0), in_order[0]);
        }
    }

    #[test]
    fn talking_head_has_much_lower_ti_than_game() {
        let mut th = gen(Motion::TalkingHead, 640, 360, 2);
        let mut gm = gen(Motion::Game, 640, 360, 2);
        let (si_t, ti_t) = mean_si_ti(&mut th, 30, 30);
        let (si_g, ti_g) = mean_si_ti(&mut gm, 30, 30);
        println!("640x360 default (synthetic) content: talking-head SI {si_t:.1} TI {ti_t:.1}; game SI {si_g:.1} TI {ti_g:.1}");
        assert!(ti_g > 3.0 * ti_t, "game TI {ti_g} vs talking head {ti_t}");
        assert!(ti_t > 1.5, "talking head should still move (noise, sway): TI {ti_t}");
        assert!(ti_t < 15.0, "talking head TI {ti_t}");
        assert!(ti_g > 15.0, "game TI {ti_g}");
        assert!(si_t > 10.0 && si_g > 10.0, "content should have texture: SI {si_t} {si_g}");
    }

    #[test]
    fn talking_head_noise_is_mild_and_fresh_each_frame() {
        // With no motion (same time), two frames would differ only by noise;
        // frames 1/30 s apart differ by noise plus a sub-pixel of sway.
        let mut g = gen(Motion::TalkingHead, 320, 180, 3);
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
        let mut g = gen(Motion::TalkingHead, 320, 180, 4);
        let f0 = g.frame(0);
        let worst = (0..300).step_by(10).map(|i| psnr_y(&f0, &g.frame(i)).unwrap()).fold(f64::MAX, f64::min);
        assert!(worst > 15.0, "talking head wandered off: worst PSNR {worst}");
    }

    #[test]
    fn game_hud_is_static_and_scene_moves_fast() {
        let mut g = gen(Motion::Game, 320, 180, 7);
        let (a, b) = (g.frame(40), g.frame(41));
        let hb = round_even(0.08 * 180.0) as usize;
        let top = (180 - hb) * 320;
        assert_eq!(a.y[top..], b.y[top..], "HUD luma changed");
        assert_eq!(a.u[top / 4..], b.u[top / 4..], "HUD chroma changed");
        assert!(a.y[top..].contains(&235), "HUD text missing");
        // The panned area changes a lot between frames.
        assert!(psnr_y(&a, &b).unwrap() < 25.0);
    }

    #[test]
    fn game_pan_is_continuous_and_fast() {
        let g = gen(Motion::Game, 640, 360, 8);
        let Scene::Game(game) = &g.scene else { panic!() };
        let mut prev = game.pan(0.0);
        let (mut max_step, mut total) = (0.0f64, 0.0);
        let mut turns = 0;
        let mut last_dx = 0.0f64;
        for i in 1..=900 {
            let p = game.pan(i as f64 / 30.0);
            let dx = p.0 - prev.0;
            let step = (dx * dx + (p.1 - prev.1).powi(2)).sqrt();
            max_step = max_step.max(step);
            total += dx.abs();
            if dx * last_dx < 0.0 {
                turns += 1;
            }
            last_dx = dx;
            prev = p;
        }
        let speed = total / 30.0;
        println!("pan over 30 s: mean horizontal speed {speed:.0} px/s, {turns} reversals, max step {max_step:.1} px");
        assert!(max_step <= 600.0 / 30.0 + 1e-6, "jump of {max_step} px in one frame");
        assert!((250.0..=600.0).contains(&speed), "pan speed {speed}");
        assert!(turns >= 3, "pan never changes direction ({turns})");
        assert!(prev.1 >= 0.0 && prev.1 <= game.vrange);
    }

    #[test]
    fn resolutions_show_the_same_scene() {
        // 640x360 downscaled vs 320x180 directly: same layout and motion.
        for motion in [Motion::TalkingHead, Motion::Game] {
            let mut big = gen(motion, 640, 360, 9);
            let mut small = gen(motion, 320, 180, 9);
            let a = big.frame(45).resize(320, 180);
            let b = small.frame(45);
            let s = ssim_y(&a, &b).unwrap();
            assert!(s > 0.5, "{motion}: 360p downscaled vs 180p SSIM {s}");
        }
    }

    #[test]
    fn no_photos_uses_synthetic_ones() {
        let mut g = Generated::new(Motion::Game, 160, 90, 25.0, 3, vec![]);
        assert!(g.describe().contains("synthetic"), "{}", g.describe());
        assert_eq!(g.fps(), 25.0);
        let f = g.frame(0);
        assert_eq!((f.width, f.height), (160, 90));
        let mut t = Generated::new(Motion::TalkingHead, 160, 90, 25.0, 3, vec![]);
        assert!(t.describe().starts_with("generated talking-head 160x90"), "{}", t.describe());
        let _ = t.frame(1);
    }

    #[test]
    fn invalid_settings_are_errors() {
        assert!(Generated::try_new(Motion::Game, 0, 90, 30.0, 1, vec![]).is_err());
        assert!(Generated::try_new(Motion::Game, 160, 90, 0.0, 1, vec![]).is_err());
        assert!(Generated::try_new(Motion::Game, 160, 90, f64::NAN, 1, vec![]).is_err());
        let bad = RgbImage { width: 4, height: 4, rgb: vec![0; 10] };
        let e = Generated::try_new(Motion::TalkingHead, 160, 90, 30.0, 1, vec![bad]).err().unwrap();
        assert!(e.to_string().contains("4x4"), "{e}");
    }

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

    fn write_png(path: &Path, w: u32, h: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) {
        let f = File::create(path).unwrap();
        let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
        enc.set_color(color);
        enc.set_depth(depth);
        let mut wr = enc.write_header().unwrap();
        wr.write_image_data(data).unwrap();
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

    /// Writes sample frames as PNGs to the temp dir for a visual check:
    /// `cargo test -p rtcc-video -- --ignored --nocapture dump_sample_frames`
    #[test]
    #[ignore]
    fn dump_sample_frames() {
        let dir = std::env::temp_dir();
        let save = |name: &str, p: &Picture| {
            let path = dir.join(format!("rtcc-{name}.png"));
            write_png(&path, p.width, p.height, png::ColorType::Rgb, png::BitDepth::Eight, &p.to_rgb());
            println!("{}", path.display());
        };
        let photo = synthetic_photo(1024, 768, 1);
        save("synthetic", &Picture::from_rgb(1024, 768, &photo.rgb));
        let portrait = synthetic_portrait(1024, 768, 1);
        save("portrait", &Picture::from_rgb(1024, 768, &portrait.rgb));
        for motion in [Motion::TalkingHead, Motion::Game] {
            let mut g = Generated::new(motion, 640, 360, 30.0, 1, vec![]);
            for i in [0, 15, 30] {
                save(&format!("{motion}-{i}"), &g.frame(i));
            }
        }
    }

    /// Timings and SI/TI with real photos when scikit-image's data folder is
    /// named in RTCC_PHOTOS (e.g. .../site-packages/skimage/data):
    /// `cargo test --release -p rtcc-video -- --ignored --nocapture content_timing`
    #[test]
    #[ignore]
    fn content_timing() {
        let dir = std::env::var("RTCC_PHOTOS").ok().map(PathBuf::from);
        let load = |names: &[&str]| -> Vec<RgbImage> {
            match &dir {
                Some(d) => names.iter().map(|n| load_png(&d.join(n)).unwrap()).collect(),
                None => vec![],
            }
        };
        for motion in [Motion::TalkingHead, Motion::Game] {
            let photos = match motion {
                Motion::TalkingHead => load(&["astronaut.png"]),
                Motion::Game => load(&["coffee.png", "chelsea.png", "motorcycle_left.png"]),
            };
            for (w, h) in [(640, 360), (1280, 720), (1920, 1080)] {
                let t0 = std::time::Instant::now();
                let mut g = Generated::new(motion, w, h, 30.0, 1, photos.clone());
                let setup = t0.elapsed().as_secs_f64() * 1e3;
                let mut out = Picture::new(w, h);
                let n = 120;
                let t1 = std::time::Instant::now();
                for i in 0..n {
                    g.frame_into(i, &mut out);
                }
                let per = t1.elapsed().as_secs_f64() * 1e3 / n as f64;
                let (si, ti) = if w == 640 { mean_si_ti(&mut g, 30, 60) } else { (f64::NAN, f64::NAN) };
                println!("{}: setup {setup:.0} ms, frame_into {per:.2} ms, SI {si:.1} TI {ti:.1}", g.describe());
            }
        }
    }
}
