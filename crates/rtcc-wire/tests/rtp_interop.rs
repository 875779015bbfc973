//! RTP against an outside implementation, the `rtp-types` crate (used by
//! GStreamer's Rust RTP elements): what either writes, the other reads the same.

mod rtp_support;

use proptest::prelude::*;
use rtcc_wire::rtp::RtpPacket;
use rtcc_wire::Wire;
use rtp_support::*;

/// The extension block as `rtp-types` sees it: profile and data words.
fn raw_extension(p: &RtpPacket) -> Option<(u16, Vec<u8>)> {
    p.extension.as_ref().map(|e| {
        let b = e.to_bytes();
        (u16::from_be_bytes([b[0], b[1]]), b[4..].to_vec())
    })
}

proptest! {
    #[test]
    fn rtp_types_reads_what_rtcc_writes(p in rtp_packet()) {
        let bytes = p.to_bytes();
        let q = rtp_types::RtpPacket::parse(&bytes).unwrap();
        prop_assert_eq!(q.version(), 2);
        prop_assert_eq!(q.marker_bit(), p.marker);
        prop_assert_eq!(q.payload_type(), p.payload_type);
        prop_assert_eq!(q.sequence_number(), p.sequence_number);
        prop_assert_eq!(q.timestamp(), p.timestamp);
        prop_assert_eq!(q.ssrc(), p.ssrc);
        prop_assert_eq!(q.csrc().collect::<Vec<_>>(), p.csrcs.clone());
        prop_assert_eq!(q.extension().map(|(id, d)| (id, d.to_vec())), raw_extension(&p));
        prop_assert_eq!(q.payload(), &p.payload[..]);
        prop_assert_eq!(q.padding(), (p.padding > 0).then_some(p.padding));
    }

    #[test]
    fn rtcc_reads_what_rtp_types_writes(p in rtp_packet()) {
        let ext = raw_extension(&p);
        let mut b = rtp_types::RtpPacketBuilder::<&[u8], &[u8]>::new()
            .marker_bit(p.marker)
            .payload_type(p.payload_type)
            .sequence_number(p.sequence_number)
            .timestamp(p.timestamp)
            .ssrc(p.ssrc)
            .payload(&p.payload)
            .maybe_padding((p.padding > 0).then_some(p.padding));
        for c in &p.csrcs {
            b = b.add_csrc(*c);
        }
        if let Some((profile, data)) = &ext {
            b = b.extension(*profile, data);
        }
        let bytes = b.write_vec().unwrap();
        prop_assert_eq!(RtpPacket::decode(&bytes).unwrap(), p.clone());
        prop_assert_eq!(bytes, p.to_bytes(), "the same octets, padding included");
    }
}
