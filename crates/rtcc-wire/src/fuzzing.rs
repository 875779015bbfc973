//! A bounded, deterministic mutation fuzzer for the decoders, so the tests can
//! run every decoder on many hostile inputs within seconds and on stable Rust.
//! The `fuzz/` targets run the same entry points under libFuzzer for longer.

/// xorshift64*: a fixed sequence per seed, so a failing input can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Calls `target` on `iterations` inputs: each seed as is, then each derived
/// from a seed by byte flips, overwrites with boundary values, truncation,
/// extension and splices of two seeds. Returns how many inputs ran.
pub fn bounded_fuzz(seeds: &[Vec<u8>], iterations: usize, seed: u64, mut target: impl FnMut(&[u8])) -> usize {
    let mut rng = Rng(seed | 1);
    let mut runs = 0;
    let empty = vec![Vec::new()];
    let seeds = if seeds.is_empty() { &empty[..] } else { seeds };
    for s in seeds {
        target(s);
        runs += 1;
    }
    const EDGES: [u8; 6] = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe];
    while runs < iterations {
        let mut input = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            match rng.below(6) {
                0 if !input.is_empty() => {
                    let i = rng.below(input.len());
                    input[i] ^= 1 << rng.below(8);
                }
                1 if !input.is_empty() => {
                    let i = rng.below(input.len());
                    input[i] = EDGES[rng.below(EDGES.len())];
                }
                2 => input.truncate(rng.below(input.len() + 1)),
                3 => {
                    for _ in 0..rng.below(16) {
                        input.push(rng.next() as u8);
                    }
                }
                4 => {
                    let other = &seeds[rng.below(seeds.len())];
                    let cut = rng.below(input.len() + 1);
                    let from = rng.below(other.len() + 1);
                    input.truncate(cut);
                    input.extend_from_slice(&other[from..]);
                }
                _ if !input.is_empty() => {
                    let i = rng.below(input.len());
                    input[i] = rng.next() as u8;
                }
                _ => input.push(rng.next() as u8),
            }
        }
        target(&input);
        runs += 1;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_the_count_asked_and_repeats_per_seed() {
        let mut a = Vec::new();
        let n = bounded_fuzz(&[vec![1, 2, 3]], 50, 7, |b| a.push(b.to_vec()));
        let mut b = Vec::new();
        bounded_fuzz(&[vec![1, 2, 3]], 50, 7, |x| b.push(x.to_vec()));
        assert_eq!(n, 50);
        assert_eq!(a, b);
        assert!(a.iter().any(|x| x != &vec![1, 2, 3]), "mutations must change inputs");
    }
}
