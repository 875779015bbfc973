//! Seeded hashing and draws: the deterministic randomness of generated pictures.

use std::f64::consts::TAU;

/// splitmix64's finaliser: a good 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(super) fn hash3(a: u64, b: u64, c: u64) -> u64 {
    mix(a ^ mix(b ^ mix(c)))
}

/// Uniform in [0, 1) from a hash.
pub(super) fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A tiny sequential generator for one-off scene layout.
pub(super) struct Draw(u64);

impl Draw {
    pub(super) fn new(seed: u64, salt: u64) -> Draw {
        Draw(mix(seed ^ mix(salt)))
    }
    pub(super) fn u(&mut self) -> f64 {
        self.0 = mix(self.0);
        unit(self.0)
    }
    pub(super) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.u()
    }
    pub(super) fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.u().max(1e-300), self.u());
        (-2.0 * u1.ln()).sqrt() * (TAU * u2).cos()
    }
}
