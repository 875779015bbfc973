//! The game scene: a fast camera pan over a wide scene, bouncing sprites and a static HUD.

use std::f64::consts::TAU;

use super::hash::{hash3, unit, Draw};
use super::photo::RgbImage;
use super::sample::{planes, round_even, sample_row, to_fx, Bufs, Plane};
use crate::picture::{chroma_size, Picture};

/// Game: a fast, direction-changing camera pan over a wide, horizontally
/// wrapping scene built from photos; hard-edged sprites bouncing across the
/// frame; a static HUD bar and crosshair. No sensor noise (rendered).
pub(super) struct Game {
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
    pub(super) fn new(w: u32, h: u32, seed: u64, scene_photos: &[RgbImage], sprite_photo: &RgbImage) -> Game {
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

    pub(super) fn render(&self, t: f64, out: &mut Picture, (tmp, row_a, _): Bufs) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{synthetic_photo, ContentSource, Generated, Motion};
    use crate::quality::psnr_y;

    #[test]
    fn game_hud_is_static_and_scene_moves_fast() {
        let mut g = Generated::new(Motion::Game, 320, 180, 30.0, 7, vec![]);
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
        // As `Generated` builds it with no photos (the pan does not depend on them).
        let game = Game::new(640, 360, 8, &[synthetic_photo(2048, 768, 8)], &synthetic_photo(512, 512, 9));
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
}
