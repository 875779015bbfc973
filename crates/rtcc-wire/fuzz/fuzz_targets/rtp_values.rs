//! libFuzzer target: the small RTP decoders (transport-wide sequence number,
//! abs-send-time, abs-capture-time, RTX payload, VP8 descriptor alone), each on
//! the same input, through the entry point the bounded tests in
//! tests/rtp_packet.rs and tests/rtp_payload.rs use (no panic; what decodes
//! re-encodes to the same value).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtcc_wire::fuzzing::round_trip;

fuzz_target!(|data: &[u8]| {
    round_trip::<rtcc_wire::rtp::TransportSequenceNumber>(data);
    round_trip::<rtcc_wire::rtp::AbsSendTime>(data);
    round_trip::<rtcc_wire::rtp::AbsCaptureTime>(data);
    round_trip::<rtcc_wire::rtp::rtx::RtxPayload>(data);
    round_trip::<rtcc_wire::payload::vp8::Vp8Descriptor>(data);
});
