//! libFuzzer target: RED payload decoding, through the entry point the bounded
//! test in tests/rtp_fec.rs uses (no panic; what decodes re-encodes to the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rtcc_wire::fuzzing::round_trip::<rtcc_wire::payload::red::RedPayload>(data);
});
