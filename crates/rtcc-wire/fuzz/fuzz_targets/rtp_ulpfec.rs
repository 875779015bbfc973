//! libFuzzer target: ULPFEC payload decoding and recovery, through the entry point the bounded test in
//! tests/rtp_fec.rs uses (no panic; what decodes re-encodes to the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rtcc_wire::rtcp::fuzz_round_trip::<rtcc_wire::fec::UlpfecPacket>(data);
    rtcc_wire::fec::fuzz_recover(data);
});
