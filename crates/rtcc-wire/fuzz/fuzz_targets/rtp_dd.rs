//! libFuzzer target: the Dependency Descriptor, through the entry point the
//! bounded test in tests/rtp_packet.rs uses (no panic; what decodes and is
//! well formed re-encodes to the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rtcc_wire::fuzzing::dependency_descriptor(data);
});
