//! RTP packets, header extensions and RTX: round trips, vectors from real
//! stacks, hostile input.

mod common;
mod rtp_support;

use common::*;
use proptest::prelude::*;
use rtcc_wire::rtp::rtx::{self, RtxPayload};
use rtcc_wire::rtp::{
    AbsCaptureTime, AbsSendTime, ExtensionElement, ExtensionKind, ExtensionMap, HeaderExtension, RtpPacket,
    TransportSequenceNumber, TypedExtension, ABS_SEND_TIME_URI, TRANSPORT_CC_URI,
};
use rtcc_wire::{Wire, WireError};
use rtp_support::*;

proptest! {
    #[test]
    fn rtp_packet_round_trips(p in rtp_packet()) {
        assert_round_trip(&p);
    }

    #[test]
    fn header_extension_round_trips(e in header_extension()) {
        assert_round_trip(&e);
    }

    #[test]
    fn typed_extensions_round_trip(seq in any::<u16>(), ast in 0u32..1 << 24, act in abs_capture_time()) {
        assert_round_trip(&TransportSequenceNumber(seq));
        assert_round_trip(&AbsSendTime(ast));
        assert_round_trip(&act);
    }

    #[test]
    fn rtx_payload_round_trips(osn in any::<u16>(), payload in bytes(300)) {
        assert_round_trip(&RtxPayload { original_sequence_number: osn, original_payload: payload });
    }

    #[test]
    fn rtx_wraps_and_unwraps_to_the_original(mut p in rtp_packet()) {
        p.padding = 0;
        let r = rtx::wrap(&p, 97, 0xfeed, 7).unwrap();
        let r = RtpPacket::decode(&r.to_bytes()).unwrap();
        prop_assert_eq!((r.payload_type, r.ssrc, r.sequence_number), (97, 0xfeed, 7));
        prop_assert_eq!(rtx::unwrap(&r, p.payload_type, p.ssrc).unwrap(), p);
    }

    #[test]
    fn extension_map_writes_what_it_reads(seq in any::<u16>(), ast in 0u32..1 << 24, act in abs_capture_time(), unknown in prop::collection::vec(any::<u8>(), 1..=16), two_byte in any::<bool>()) {
        let mut map = ExtensionMap::new();
        // Ids above 14 force the two-byte form (RFC 8285 §4.2).
        let base = if two_byte { 100 } else { 1 };
        map.insert(base, ExtensionKind::TransportSequenceNumber).unwrap();
        map.insert(base + 1, ExtensionKind::AbsSendTime).unwrap();
        map.insert(base + 2, ExtensionKind::AbsCaptureTime).unwrap();
        let exts = vec![
            TypedExtension::TransportSequenceNumber(TransportSequenceNumber(seq)),
            TypedExtension::AbsSendTime(AbsSendTime(ast)),
            TypedExtension::AbsCaptureTime(act),
            TypedExtension::Unknown(ExtensionElement { id: 12, data: unknown }),
        ];
        let block = map.write(&exts).unwrap();
        prop_assert_eq!(matches!(block, HeaderExtension::TwoByte { .. }), two_byte);
        let mut p = RtpPacket::new(96, 1, 2, 3, vec![1, 2, 3]).unwrap();
        p.extension = Some(block);
        let back = RtpPacket::decode(&p.to_bytes()).unwrap();
        prop_assert_eq!(map.read(back.extension.as_ref().unwrap()).unwrap(), exts);
    }
}

/// pion/rtp `packet_test.go` (TestBasic): a packet with a one-word extension
/// of profile 1, marker set, PT 96.
const PION_BASIC: &str = "90 e0 69 8f d9 c2 93 da 1c 64 27 82 00 01 00 01 ff ff ff ff 98 36 be 88 9e";

#[test]
fn pion_basic_packet_decodes_and_re_encodes_byte_exact() {
    let b = hex(PION_BASIC);
    let p = RtpPacket::decode(&b).unwrap();
    assert!(p.marker);
    assert_eq!((p.payload_type, p.sequence_number, p.timestamp, p.ssrc), (96, 27023, 3653407706, 476325762));
    assert_eq!(p.extension, Some(HeaderExtension::Other { profile: 1, data: vec![0xff; 4] }));
    assert_eq!(p.payload, [0x98, 0x36, 0xbe, 0x88, 0x9e]);
    assert_eq!(p.to_bytes(), b);
}

/// libwebrtc `modules/rtp_rtcp/source/rtp_packet_unittest.cc`: kPacketWithTOAndAL
/// (one-byte form: transmission offset id 1, audio level id 9, two padding octets).
const WEBRTC_TO_AND_AL: &str = "90 64 00 58 65 43 12 78 12 34 56 78 be de 00 02 12 00 56 ce 90 da 00 00";
/// kPacketWithTwoByteExtensionIdLast (two-byte form, an id of 0xf0).
const WEBRTC_TWO_BYTE: &str =
    "90 64 00 58 65 43 12 78 12 34 56 78 10 00 00 04 01 03 00 56 ce 09 01 da f0 03 00 30 22 00 00 00";
/// kPacket: two CSRCs, an extension, payload "payload" and 8 octets of padding.
const WEBRTC_FULL: &str = "b2 64 00 58 65 43 12 78 12 34 56 78 34 56 78 90 32 43 54 65 be de 00 01 12 00 56 ce
                           70 61 79 6c 6f 61 64 70 61 64 64 69 6e 67 08";

#[test]
fn libwebrtc_vectors_decode() {
    let el = |id, data: &[u8]| ExtensionElement { id, data: data.to_vec() };
    let p = RtpPacket::decode(&hex(WEBRTC_TO_AND_AL)).unwrap();
    assert_eq!((p.payload_type, p.sequence_number, p.timestamp, p.ssrc), (100, 88, 0x6543_1278, 0x1234_5678));
    assert_eq!(p.extension, Some(HeaderExtension::OneByte(vec![el(1, &[0x00, 0x56, 0xce]), el(9, &[0xda])])));
    assert!(p.payload.is_empty());
    assert_eq!(p.to_bytes(), hex(WEBRTC_TO_AND_AL), "the padding to 32 bits is the same zeros");

    let p = RtpPacket::decode(&hex(WEBRTC_TWO_BYTE)).unwrap();
    let two = HeaderExtension::TwoByte {
        appbits: 0,
        elements: vec![el(1, &[0x00, 0x56, 0xce]), el(9, &[0xda]), el(0xf0, &[0x00, 0x30, 0x22])],
    };
    assert_eq!(p.extension, Some(two));
    assert_eq!(p.to_bytes(), hex(WEBRTC_TWO_BYTE));

    let b = hex(WEBRTC_FULL);
    let p = RtpPacket::decode(&b).unwrap();
    assert_eq!(p.csrcs, [0x3456_7890, 0x3243_5465]);
    assert_eq!(p.payload, b"payload");
    assert_eq!(p.padding, 8);
    assert_eq!(p.extension.as_ref().unwrap().get(1), Some(&[0x00, 0x56, 0xce][..]));
    // Padding octets are written as zeros; everything before them is as sent.
    let again = p.to_bytes();
    assert_eq!(again.len(), b.len());
    assert_eq!(again[..b.len() - 8], b[..b.len() - 8]);
    assert_eq!(again[b.len() - 8..], [0, 0, 0, 0, 0, 0, 0, 8]);
}

#[test]
fn one_byte_id_15_ends_the_block_and_padding_is_skipped() {
    // RFC 8285 §4.2: padding octets between elements, ID 15 stops processing.
    let block = hex("be de 00 03 10 aa 00 00 21 bb cc f0 dd ee 00 00");
    let e = HeaderExtension::decode(&block).unwrap();
    let el = |id, data: &[u8]| ExtensionElement { id, data: data.to_vec() };
    assert_eq!(e, HeaderExtension::OneByte(vec![el(1, &[0xaa]), el(2, &[0xbb, 0xcc])]));
}

#[test]
fn malformed_packets_name_the_field() {
    let field = |b: &str| match RtpPacket::decode(&hex(b)) {
        Err(WireError::Invalid { field, .. }) => field.to_string(),
        Err(WireError::Truncated { what, .. }) => format!("truncated {what}"),
        Ok(p) => panic!("decoded {p:?}"),
    };
    assert_eq!(field("40 60 00 01 00 00 00 00 00 00 00 01"), "version");
    assert_eq!(field("a0 60 00 01 00 00 00 00 00 00 00 01 00"), "padding");
    assert_eq!(field("a0 60 00 01 00 00 00 00 00 00 00 01 aa 05"), "padding");
    assert_eq!(field("82 60 00 01 00 00 00 00 00 00 00 01 00 00 00 01"), "truncated RTP packet");
    assert_eq!(field("90 60 00 01 00 00 00 00 00 00 00 01 be de 00 02 10 aa"), "truncated RTP header extension");
    assert_eq!(
        field("90 60 00 01 00 00 00 00 00 00 00 01 be de 00 01 13 aa bb cc"),
        "truncated RTP one-byte extension element"
    );
    assert_eq!(field("80 60 00"), "truncated RTP packet");
}

#[test]
fn constructors_refuse_what_the_wire_cannot_carry() {
    assert!(RtpPacket::new(128, 0, 0, 0, vec![]).is_err());
    let mut p = RtpPacket::new(127, 0, 0, 0, vec![]).unwrap();
    p.csrcs = vec![0; 16];
    assert!(p.check().is_err());
    // Encode cuts at 15 CSRCs rather than corrupting CC.
    assert_eq!(RtpPacket::decode(&p.to_bytes()).unwrap().csrcs.len(), 15);
    let mut one = HeaderExtension::one_byte();
    assert!(one.push(15, vec![1]).is_err(), "id 15 is reserved in the one-byte form");
    assert!(one.push(1, vec![]).is_err(), "the one-byte form carries 1..=16 octets");
    assert!(one.push(1, vec![0; 17]).is_err());
    one.push(14, vec![0; 16]).unwrap();
    let mut two = HeaderExtension::two_byte();
    assert!(two.push(0, vec![1]).is_err());
    two.push(255, vec![]).unwrap();
    assert_round_trip(&two);
    // Elements placed directly that do not fit are left out, never corrupt the block.
    let bad = HeaderExtension::OneByte(vec![
        ExtensionElement { id: 0, data: vec![1] },
        ExtensionElement { id: 3, data: vec![9] },
    ]);
    assert!(bad.check().is_err());
    let mut with_bad = RtpPacket::new(96, 0, 0, 0, vec![]).unwrap();
    with_bad.extension = Some(bad.clone());
    assert!(with_bad.check().is_err(), "the packet's check covers its extension");
    assert_eq!(
        HeaderExtension::decode(&bad.to_bytes()).unwrap(),
        HeaderExtension::OneByte(vec![ExtensionElement { id: 3, data: vec![9] }])
    );
    assert!(RtpPacket::padding_only(96, 0, 0, 0, 0).is_err());
}

#[test]
fn padding_only_packets_as_libwebrtc_probes() {
    // libwebrtc pads probes with up to 224 octets and no payload (kMaxPaddingSize).
    let p = RtpPacket::padding_only(97, 1000, 90_000, 0xabc, 224).unwrap();
    let b = p.to_bytes();
    assert_eq!(b.len(), 12 + 224);
    assert_eq!(b[0] & 0x20, 0x20, "P bit");
    assert_eq!(*b.last().unwrap(), 224);
    let back = RtpPacket::decode(&b).unwrap();
    assert!(back.is_padding_only());
    assert_eq!(back, p);
    assert!(matches!(rtx::unwrap(&back, 96, 1), Err(WireError::Truncated { .. })), "no OSN in a padding-only packet");
}

#[test]
fn extension_values_and_map_errors() {
    // abs-send-time: 6.18 fixed point; 1.5 s is 0x060000.
    assert_eq!(AbsSendTime::from_micros(1_500_000), AbsSendTime(0x06_0000));
    assert_eq!(AbsSendTime(0x06_0000).micros(), 1_500_000);
    // NTP 1.5 s (UQ32.32) gives the same 24 bits.
    assert_eq!(AbsSendTime::from_ntp(3 << 31), AbsSendTime(0x06_0000));
    assert_eq!(AbsSendTime::from_micros(64_000_000), AbsSendTime(0), "wraps every 64 s");
    // Nearest tick (3.8147 µs), not the next one up.
    assert_eq!(AbsSendTime::from_micros(1), AbsSendTime(0));
    assert_eq!(AbsSendTime::from_micros(2), AbsSendTime(1));
    assert_eq!(AbsSendTime::from_micros(5), AbsSendTime(1));
    assert_eq!(AbsSendTime::from_micros(6), AbsSendTime(2));
    assert_eq!(AbsSendTime(0x12_3456).to_bytes(), [0x12, 0x34, 0x56]);
    assert_eq!(AbsCaptureTime { capture_ntp: 1, clock_offset: None }.to_bytes().len(), 8);
    assert!(AbsCaptureTime::decode(&[0; 12]).is_err());
    assert!(TransportSequenceNumber::decode(&[1, 2, 3]).is_err());

    let mut map = ExtensionMap::new();
    assert!(map.insert_uri(3, TRANSPORT_CC_URI).unwrap());
    assert!(!map.insert_uri(4, "urn:ietf:params:rtp-hdrext:sdes:mid").unwrap());
    assert!(map.insert_uri(3, ABS_SEND_TIME_URI).is_err(), "id taken");
    assert!(map.insert(0, ExtensionKind::AbsSendTime).is_err());
    assert!(map.write(&[TypedExtension::AbsSendTime(AbsSendTime(1))]).is_err(), "not negotiated");
    let wrong = HeaderExtension::OneByte(vec![ExtensionElement { id: 3, data: vec![1, 2, 3] }]);
    match map.read(&wrong) {
        Err(WireError::Invalid { what, .. }) => assert_eq!(what, "transport-wide sequence number"),
        other => panic!("{other:?}"),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut p = RtpPacket::new(96, 65535, 1, 2, vec![0xde, 0xad]).unwrap();
    p.csrcs = vec![7, 8];
    let mut e = HeaderExtension::two_byte();
    e.push(200, vec![1, 2, 3]).unwrap();
    e.push(3, vec![]).unwrap();
    p.extension = Some(e);
    p.padding = 3;
    vec![
        hex(PION_BASIC),
        hex(WEBRTC_TO_AND_AL),
        hex(WEBRTC_TWO_BYTE),
        hex(WEBRTC_FULL),
        p.to_bytes(),
        RtpPacket::padding_only(97, 1, 2, 3, 200).unwrap().to_bytes(),
    ]
}

#[test]
fn fuzz_rtp_packet_decoder() {
    let decoded = fuzz_decoder::<RtpPacket>(&seeds(), 40_000, 1);
    assert!(decoded > 1_000, "mutations should often still parse ({decoded})");
}

#[test]
fn fuzz_extension_decoders() {
    let blocks: Vec<Vec<u8>> =
        seeds().iter().filter_map(|b| RtpPacket::decode(b).ok()?.extension.map(|e| e.to_bytes())).collect();
    assert!(fuzz_decoder::<HeaderExtension>(&blocks, 30_000, 2) > 500);
    fuzz_decoder::<TransportSequenceNumber>(&[vec![1, 2]], 5_000, 3);
    fuzz_decoder::<AbsSendTime>(&[vec![1, 2, 3]], 5_000, 4);
    fuzz_decoder::<AbsCaptureTime>(&[vec![1; 8], vec![2; 16]], 5_000, 5);
    fuzz_decoder::<RtxPayload>(&[vec![0, 1, 2, 3]], 5_000, 6);
}

mod dependency_descriptor {
    use super::*;
    use rtcc_wire::rtp::dd::{DependencyDescriptor, ExtendedFields, FrameDependencyStructure, FrameTemplate};

    /// A well-formed structure: layers in template order, every range held.
    fn structure() -> impl Strategy<Value = FrameDependencyStructure> {
        (1u8..=4, 0u8..64, prop::collection::vec((0u8..3, prop::collection::vec(1u8..=16, 0..3)), 1..10), any::<bool>())
            .prop_flat_map(|(dt, offset, steps, res)| {
                let chains = 0..=dt;
                (Just((dt, offset, steps, res)), chains, prop::collection::vec(0u8..4, (dt as usize) * 10))
            })
            .prop_map(|((dt, offset, steps, res), chains, dtis)| {
                let (mut s, mut t) = (0u8, 0u8);
                let templates: Vec<FrameTemplate> = steps
                    .iter()
                    .enumerate()
                    .map(|(i, (step, fdiffs))| {
                        if i > 0 {
                            match step {
                                1 => t += 1,
                                2 => (s, t) = (s + 1, 0),
                                _ => {}
                            }
                        }
                        FrameTemplate {
                            spatial_id: s,
                            temporal_id: t,
                            dtis: dtis[i * dt as usize..(i + 1) * dt as usize].to_vec(),
                            fdiffs: fdiffs.clone(),
                            chain_fdiffs: (0..chains).map(|c| (c * 5 + i as u8) % 16).collect(),
                        }
                    })
                    .collect();
                FrameDependencyStructure {
                    template_id_offset: offset,
                    decode_targets: dt,
                    protected_by: if chains == 0 { vec![] } else { (0..dt).map(|d| d % chains).collect() },
                    chains,
                    resolutions: res
                        .then(|| (0..=s).map(|l| (320 + 16 * u32::from(l), 180 + 9 * u32::from(l))).collect()),
                    templates,
                }
            })
    }

    proptest! {
        #[test]
        fn descriptors_round_trip(
            s in structure(),
            attach in any::<bool>(),
            start in any::<bool>(),
            end in any::<bool>(),
            index in any::<prop::sample::Index>(),
            frame_number in any::<u16>(),
            active in any::<bool>(),
            custom in any::<bool>(),
            fdiffs in prop::option::of(prop::collection::vec(1u16..=4096, 0..4)),
        ) {
            let t = index.index(s.templates.len());
            let dt = s.decode_targets;
            let d = DependencyDescriptor {
                start_of_frame: start,
                end_of_frame: end,
                template_id: ((t + usize::from(s.template_id_offset)) % 64) as u8,
                frame_number,
                extended: Some(ExtendedFields {
                    structure: attach.then(|| s.clone()),
                    active_decode_targets: active.then_some((1u32 << dt) - 1),
                    custom_dtis: custom.then(|| vec![1; usize::from(dt)]),
                    custom_fdiffs: fdiffs,
                    custom_chains: custom.then(|| vec![7; usize::from(s.chains)]),
                }),
            };
            prop_assert!(d.check_with(Some(&s)).is_ok(), "{:?}", d.check_with(Some(&s)));
            let bytes = d.to_bytes_with(Some(&s));
            prop_assert_eq!(bytes.len(), d.wire_size_with(Some(&s)));
            prop_assert_eq!(DependencyDescriptor::decode_with(&bytes, Some(&s)).unwrap(), d.clone());
            // The attached structure alone is enough to read it.
            if attach {
                prop_assert_eq!(DependencyDescriptor::decode(&bytes).unwrap(), d);
            }
        }
    }

    #[test]
    fn fuzz_dependency_descriptor_decoder() {
        let key = DependencyDescriptor {
            start_of_frame: true,
            end_of_frame: true,
            template_id: 0,
            frame_number: 1,
            extended: Some(ExtendedFields {
                structure: Some(FrameDependencyStructure::single_layer()),
                ..ExtendedFields::default()
            }),
        };
        let delta = DependencyDescriptor { template_id: 1, frame_number: 2, extended: None, ..key.clone() };
        let seeds = vec![key.to_bytes(), delta.to_bytes()];
        let mut decoded = 0;
        let runs = rtcc_wire::fuzzing::bounded_fuzz(&seeds, 50_000, 31, |input| {
            decoded += usize::from(rtcc_wire::fuzzing::dependency_descriptor(input));
        });
        assert_eq!(runs, 50_000);
        assert!(decoded > 5_000, "only {decoded} inputs decoded: the mutations do not reach the parser");
    }
}
