//! libFuzzer target: RTCP Nack decoding, through the entry point the bounded
//! test in tests/rtcp_fuzz.rs uses (no panic; what decodes re-encodes to the
//! same value).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rtcc_wire::fuzzing::round_trip::<rtcc_wire::rtcp::Nack>(data);
});
