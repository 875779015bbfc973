//! Strategies and checks the RTP-side tests share.
#![allow(dead_code)]

use proptest::prelude::*;
use rtcc_wire::fec::{UlpLevel, UlpfecPacket};
use rtcc_wire::payload::h264::{FuA, H264Payload};
use rtcc_wire::payload::red::{RedBlock, RedPayload};
use rtcc_wire::payload::vp8::{PictureId, Vp8Descriptor, Vp8Payload};
use rtcc_wire::rtp::{AbsCaptureTime, ExtensionElement, HeaderExtension, RtpPacket};

pub fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..=max)
}

pub fn header_extension() -> impl Strategy<Value = HeaderExtension> {
    let one = prop::collection::vec((1u8..=14, prop::collection::vec(any::<u8>(), 1..=16)), 0..6).prop_map(|es| {
        HeaderExtension::OneByte(es.into_iter().map(|(id, data)| ExtensionElement { id, data }).collect())
    });
    let two = (0u8..16, prop::collection::vec((1u8..=255, bytes(40)), 0..6)).prop_map(|(appbits, es)| {
        HeaderExtension::TwoByte {
            appbits,
            elements: es.into_iter().map(|(id, data)| ExtensionElement { id, data }).collect(),
        }
    });
    // Profiles other than RFC 8285's (0xBEDE, 0x100x) keep their words as is.
    let other = (
        any::<u16>().prop_filter("RFC 8285 profile", |p| *p != 0xBEDE && p & 0xfff0 != 0x1000),
        prop::collection::vec(any::<[u8; 4]>(), 0..5),
    )
        .prop_map(|(profile, words)| HeaderExtension::Other { profile, data: words.concat() });
    prop_oneof![one, two, other]
}

pub fn rtp_packet() -> impl Strategy<Value = RtpPacket> {
    (
        (any::<bool>(), 0u8..128, any::<u16>(), any::<u32>(), any::<u32>()),
        prop::collection::vec(any::<u32>(), 0..=15),
        prop::option::of(header_extension()),
        bytes(300),
        any::<u8>(),
    )
        .prop_map(
            |((marker, payload_type, sequence_number, timestamp, ssrc), csrcs, extension, payload, padding)| {
                RtpPacket { marker, payload_type, sequence_number, timestamp, ssrc, csrcs, extension, payload, padding }
            },
        )
}

pub fn abs_capture_time() -> impl Strategy<Value = AbsCaptureTime> {
    (any::<u64>(), prop::option::of(any::<i64>()))
        .prop_map(|(capture_ntp, clock_offset)| AbsCaptureTime { capture_ntp, clock_offset })
}

pub fn ulpfec() -> impl Strategy<Value = UlpfecPacket> {
    (
        (any::<bool>(), any::<bool>(), any::<bool>(), 0u8..16, any::<bool>(), 0u8..128),
        (any::<u16>(), any::<u32>(), any::<u16>()),
        prop::collection::vec((any::<u64>(), bytes(100)), 1..4),
    )
        .prop_map(|((long_mask, p, x, cc, m, pt), (sn_base, ts_recovery, length_recovery), levels)| {
            let keep = if long_mask { !(u64::MAX >> 48) } else { !(u64::MAX >> 16) };
            UlpfecPacket {
                long_mask,
                p_recovery: p,
                x_recovery: x,
                cc_recovery: cc,
                m_recovery: m,
                pt_recovery: pt,
                sn_base,
                ts_recovery,
                length_recovery,
                levels: levels.into_iter().map(|(mask, payload)| UlpLevel { mask: mask & keep, payload }).collect(),
            }
        })
}

pub fn vp8_descriptor() -> impl Strategy<Value = Vp8Descriptor> {
    let pid = prop_oneof![(0u8..128).prop_map(PictureId::Short), (0u16..0x8000).prop_map(PictureId::Long)];
    (
        any::<bool>(),
        any::<bool>(),
        0u8..8,
        prop::option::of(pid),
        prop::option::of(any::<u8>()),
        prop::option::of((0u8..4, any::<bool>())),
        prop::option::of(0u8..32),
    )
        .prop_map(|(non_reference, start_of_partition, partition_index, picture_id, tl0_pic_idx, tid, key_idx)| {
            Vp8Descriptor { non_reference, start_of_partition, partition_index, picture_id, tl0_pic_idx, tid, key_idx }
        })
}

pub fn vp8_payload() -> impl Strategy<Value = Vp8Payload> {
    (vp8_descriptor(), prop::collection::vec(any::<u8>(), 1..200))
        .prop_map(|(descriptor, data)| Vp8Payload { descriptor, data })
}

/// A NAL unit with a type 1..=23 header.
pub fn nal(max: usize) -> impl Strategy<Value = Vec<u8>> {
    (0u8..4, 1u8..=23, bytes(max)).prop_map(|(nri, t, body)| {
        let mut n = vec![nri << 5 | t];
        n.extend(body);
        n
    })
}

pub fn h264_payload() -> impl Strategy<Value = H264Payload> {
    let fu = (any::<bool>(), 0u8..4, any::<bool>(), any::<bool>(), 0u8..32, prop::collection::vec(any::<u8>(), 1..200))
        .prop_filter("S and E both set", |(_, _, s, e, _, _)| !(*s && *e))
        .prop_map(|(forbidden, nri, start, end, nal_type, data)| {
            H264Payload::FuA(FuA { forbidden, nri, start, end, nal_type, data })
        });
    prop_oneof![
        nal(200).prop_map(H264Payload::Single),
        prop::collection::vec(nal(60), 1..6).prop_map(H264Payload::StapA),
        fu,
    ]
}

pub fn red_payload() -> impl Strategy<Value = RedPayload> {
    let block = (0u8..128, 0u16..0x4000, bytes(60)).prop_map(|(payload_type, timestamp_offset, data)| RedBlock {
        payload_type,
        timestamp_offset,
        data,
    });
    (prop::collection::vec(block, 0..4), 0u8..128, bytes(100))
        .prop_map(|(redundant, primary_payload_type, primary)| RedPayload { redundant, primary_payload_type, primary })
}
