//! libFuzzer target: VP8 and H.264 depacketizers on a stream of packets, through the entry point the bounded test in
//! tests/rtp_payload.rs uses (no panic).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rtcc_wire::fuzzing::depacketizers(data);
});
