//! The fuzz entry points and a bounded, deterministic mutation fuzzer for
//! them, so the tests can run every decoder on many hostile inputs within
//! seconds and on stable Rust. The `fuzz/` targets call the same entry points
//! ([`round_trip`], [`ulpfec_recover`], [`depacketizers`]) under libFuzzer.

use crate::fec::{self, UlpfecPacket};
use crate::payload::{h264, vp8};
use crate::rtp::RtpPacket;
use crate::Wire;

/// Decodes `data` as `T`; whatever decodes must re-encode to `wire_size()`
/// bytes that decode to the same value. Panics (for the fuzzer) when that
/// fails; returns whether `data` decoded.
pub fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(data: &[u8]) -> bool {
    let Ok(value) = T::decode(data) else { return false };
    let bytes = value.to_bytes();
    assert_eq!(bytes.len(), value.wire_size(), "wire_size disagrees with encode for {value:?}");
    match T::decode(&bytes) {
        Ok(again) => assert_eq!(again, value, "re-encoding changed the value"),
        Err(e) => panic!("re-encoded {value:?} does not decode: {e}"),
    }
    true
}

/// `data` as a ULPFEC payload, recovered against a fixed group of 20 packets
/// of which the first is missing; any outcome but a panic is fine. Returns
/// whether a packet was recovered.
pub fn ulpfec_recover(data: &[u8]) -> bool {
    let Ok(fec) = UlpfecPacket::decode(data) else { return false };
    let received: Vec<RtpPacket> =
        (1..20u16).filter_map(|i| RtpPacket::new(96, i, 3000, 1, vec![i as u8; 3 * i as usize]).ok()).collect();
    fec::recover(&fec, 1, &received).is_ok()
}

/// `data` read as a stream of packets (each a flags octet — marker, timestamp
/// step, sequence skip — a length octet and that many payload octets) fed to
/// both depacketizers, which must take any of it without panicking. Returns
/// the frames completed.
pub fn depacketizers(mut data: &[u8]) -> usize {
    let (mut v, mut h) = (vp8::Vp8Depacketizer::new(), h264::H264Depacketizer::new());
    let (mut seq, mut ts, mut frames) = (0u16, 0u32, 0);
    while let [flags, len, rest @ ..] = data {
        let n = (*len as usize).min(rest.len());
        let (payload, tail) = rest.split_at(n);
        seq = seq.wrapping_add(1 + u16::from(flags & 0x0c == 0x0c));
        ts = ts.wrapping_add(u32::from(flags & 0x02 != 0) * 3000);
        let marker = flags & 0x01 != 0;
        frames += usize::from(matches!(v.push(seq, ts, marker, payload), Ok(vp8::Depacketized::Frame(_))));
        frames += usize::from(matches!(h.push(seq, ts, marker, payload), Ok(h264::Depacketized::AccessUnit(_))));
        data = tail;
    }
    frames
}

/// `data` as a Dependency Descriptor, read alone and against the
/// single-layer structure; what decodes and is well formed must re-encode
/// to the same value (with the same known structure). Returns whether it
/// decoded either way.
pub fn dependency_descriptor(data: &[u8]) -> bool {
    use crate::rtp::dd::{DependencyDescriptor, FrameDependencyStructure};
    let known = FrameDependencyStructure::single_layer();
    let mut any = false;
    for k in [None, Some(&known)] {
        let Ok(d) = DependencyDescriptor::decode_with(data, k) else { continue };
        any = true;
        if d.check_with(k).is_ok() {
            let bytes = d.to_bytes_with(k);
            assert_eq!(bytes.len(), d.wire_size_with(k), "wire size of {d:?}");
            assert_eq!(DependencyDescriptor::decode_with(&bytes, k).as_ref(), Ok(&d), "re-encoding changed {d:?}");
        }
    }
    any
}

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
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
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
