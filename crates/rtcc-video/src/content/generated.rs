//! [`Generated`]: photos animated as a talking head or a game, frame `i` a pure function of the settings and `i`.
//!
//! Generated geometry (sway amplitude, head size, pan speed, sprite size
//! and speed) is defined in fractions of the output size, so the same
//! settings at 360p and 720p show the same scene and motion, only sharper;
//! sensor noise is per pixel (σ 1.5 levels) at every size.

use super::game::Game;
use super::motion::Motion;
use super::photo::RgbImage;
use super::source::{ensure_size, ContentError, ContentSource};
use super::synthetic::{synthetic_photo, synthetic_portrait};
use super::talking::Talking;
use crate::picture::Picture;

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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::content::photo::write_png;
    use crate::content::{load_png, si_ti};
    use crate::picture::chroma_size;
    use crate::quality::ssim_y;

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
