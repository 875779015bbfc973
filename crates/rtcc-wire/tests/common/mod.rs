//! Helpers every test file of rtcc-wire may use: hex vectors, the bounded
//! fuzz run, and the tshark runner of the dissector checks (their pcaps come
//! from `rtcc_wire::pcap`).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use rtcc_wire::Wire;

/// Parses hex, ignoring spaces and newlines.
pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    digits.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap()).collect()
}

/// The round-trip laws every `Wire` type keeps: `encode` writes `wire_size`
/// octets and `decode` gives the value back.
pub fn assert_round_trip<T: Wire + std::fmt::Debug + PartialEq>(x: &T) {
    let bytes = x.to_bytes();
    assert_eq!(bytes.len(), x.wire_size(), "wire_size of {x:?}");
    assert_eq!(&T::decode(&bytes).expect("decodes its own encoding"), x);
}

/// Runs `T::decode` through the entry point the `fuzz/` targets call on
/// `iterations` mutations of `seeds`: no panic, and what decodes re-encodes
/// (to `wire_size` octets) to bytes decoding to the same value. Returns how
/// many inputs decoded.
pub fn fuzz_decoder<T: Wire + std::fmt::Debug + PartialEq>(seeds: &[Vec<u8>], iterations: usize, seed: u64) -> usize {
    let mut decoded = 0;
    let runs = rtcc_wire::fuzzing::bounded_fuzz(seeds, iterations, seed, |input| {
        decoded += usize::from(rtcc_wire::fuzzing::round_trip::<T>(input));
    });
    assert_eq!(runs, iterations.max(seeds.len()));
    decoded
}

/// `tshark -n -r file` with `args`; `None`, saying so, when tshark cannot
/// run, unless RTCC_REQUIRE_TSHARK is set (scripts/test.sh installs tshark
/// and sets it: there, a missing dissector is a failure).
pub fn tshark(file: &Path, args: &[&str], what: &str) -> Option<String> {
    match Command::new("tshark").args(["-n", "-r"]).arg(file).args(args).output() {
        Ok(o) => {
            assert!(o.status.success(), "tshark failed: {}", String::from_utf8_lossy(&o.stderr));
            Some(String::from_utf8(o.stdout).unwrap())
        }
        Err(e) => {
            assert!(
                std::env::var_os("RTCC_REQUIRE_TSHARK").is_none(),
                "tshark not runnable ({e}) and RTCC_REQUIRE_TSHARK is set"
            );
            eprintln!("SKIPPED: tshark not runnable ({e}); install it (apt-get install tshark) to check {what} against Wireshark");
            None
        }
    }
}
