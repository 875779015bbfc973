//! Strategies for valid RTCP values, shared by the RTCP tests.
#![allow(dead_code)]

use proptest::collection::vec;
use proptest::prelude::*;
use rtcc_wire::rtcp::*;

/// A fixed seed and no regression files in the source tree, so every run
/// draws the same cases.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7274_6370),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

pub fn report_block() -> impl Strategy<Value = ReportBlock> {
    (any::<u32>(), any::<u8>(), -(1i32 << 23)..(1 << 23), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>())
        .prop_map(|(s, f, c, e, j, l, d)| ReportBlock::new(s, f, c, e, j, l, d).unwrap())
}

fn extension() -> impl Strategy<Value = Vec<u8>> {
    (0usize..3).prop_flat_map(|w| vec(any::<u8>(), 4 * w))
}

pub fn sr() -> impl Strategy<Value = SenderReport> {
    (any::<u32>(), any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>(), vec(report_block(), 0..=31), extension())
        .prop_map(|(ssrc, ntp, rtp_timestamp, packet_count, octet_count, reports, extension)| SenderReport {
            ssrc,
            info: SenderInfo { ntp, rtp_timestamp, packet_count, octet_count },
            reports,
            extension,
        })
}

pub fn rr() -> impl Strategy<Value = ReceiverReport> {
    (any::<u32>(), vec(report_block(), 0..=31), extension()).prop_map(|(ssrc, reports, extension)| ReceiverReport {
        ssrc,
        reports,
        extension,
    })
}

pub fn sdes() -> impl Strategy<Value = Sdes> {
    let item = (1u8..=255, prop_oneof![vec(any::<u8>(), 0..40), vec(any::<u8>(), 255)])
        .prop_map(|(kind, text)| SdesItem { kind, text });
    let chunk = (any::<u32>(), vec(item, 0..4)).prop_map(|(ssrc, items)| SdesChunk { ssrc, items });
    vec(chunk, 0..5).prop_map(|chunks| Sdes::new(chunks).unwrap())
}

pub fn bye() -> impl Strategy<Value = Bye> {
    (vec(any::<u32>(), 0..=31), proptest::option::of(vec(any::<u8>(), 0..=255)))
        .prop_map(|(s, r)| Bye::new(s, r).unwrap())
}

pub fn nack() -> impl Strategy<Value = Nack> {
    (any::<u32>(), any::<u32>(), vec((any::<u16>(), any::<u16>()).prop_map(|(pid, blp)| NackPair { pid, blp }), 1..20))
        .prop_map(|(a, b, p)| Nack::new(a, b, p).unwrap())
}

pub fn pli() -> impl Strategy<Value = Pli> {
    (any::<u32>(), any::<u32>()).prop_map(|(sender_ssrc, media_ssrc)| Pli { sender_ssrc, media_ssrc })
}

pub fn remb() -> impl Strategy<Value = Remb> {
    (any::<u32>(), any::<u32>(), 0u8..=63, 0u32..(1 << 18), vec(any::<u32>(), 0..10)).prop_map(
        |(sender_ssrc, media_ssrc, exponent, mantissa, ssrcs)| Remb {
            sender_ssrc,
            media_ssrc,
            bitrate: RembBitrate { exponent, mantissa },
            ssrcs,
        },
    )
}

pub fn status() -> impl Strategy<Value = PacketStatus> {
    prop_oneof![
        Just(PacketStatus::NotReceived),
        any::<u8>().prop_map(PacketStatus::Small),
        any::<i16>().prop_map(PacketStatus::Large)
    ]
}

/// Statuses in runs, so run-length chunks and both vector kinds all occur.
pub fn twcc() -> impl Strategy<Value = TransportFeedback> {
    (any::<u32>(), any::<u32>(), any::<u16>(), 0u32..(1 << 24), any::<u8>(), vec((status(), 1usize..40), 1..30))
        .prop_map(|(sender_ssrc, media_ssrc, base_seq, reference_time, fb_count, runs)| TransportFeedback {
            sender_ssrc,
            media_ssrc,
            base_seq,
            reference_time,
            fb_count,
            packets: runs.into_iter().flat_map(|(s, n)| std::iter::repeat_n(s, n)).collect(),
        })
}

pub fn ccfb() -> impl Strategy<Value = CongestionControlFeedback> {
    let report = proptest::option::of((0u8..4, 0u16..0x2000).prop_map(|(ecn, ato)| CcfbReport { ecn, ato }));
    let block = (any::<u32>(), any::<u16>(), vec(report, 0..60)).prop_map(|(ssrc, begin_seq, reports)| CcfbBlock {
        ssrc,
        begin_seq,
        reports,
    });
    (any::<u32>(), vec(block, 0..4), any::<u32>())
        .prop_map(|(s, b, t)| CongestionControlFeedback::new(s, b, t).unwrap())
}

pub fn rle_block() -> impl Strategy<Value = RleBlock> {
    let chunk = prop_oneof![
        (any::<bool>(), 1u16..=0x3fff).prop_map(|(ones, length)| RleChunk::Run { ones, length }),
        (0u16..0x8000).prop_map(RleChunk::Vector)
    ];
    (0u8..16, any::<u32>(), any::<u16>(), any::<u16>(), vec(chunk, 0..12)).prop_map(
        |(thinning, ssrc, begin_seq, end_seq, chunks)| RleBlock { thinning, ssrc, begin_seq, end_seq, chunks },
    )
}

pub fn xr() -> impl Strategy<Value = Xr> {
    let block = prop_oneof![
        rle_block().prop_map(XrBlock::LossRle),
        (any::<bool>(), rle_block()).prop_map(|(early, block)| XrBlock::DiscardRle { early, block }),
        (any::<u32>(), any::<i32>(), any::<i32>(), any::<i32>(), any::<i32>())
            .prop_map(|(ssrc, min, mean, max, newest)| XrBlock::Owd(OwdBlock { ssrc, min, mean, max, newest })),
        ((2u8..=24), any::<u8>(), (0usize..4).prop_flat_map(|w| vec(any::<u8>(), 4 * w)))
            .prop_map(|(bt, type_specific, body)| XrBlock::Unknown { bt, type_specific, body }),
    ];
    (any::<u32>(), vec(block, 0..4)).prop_map(|(ssrc, blocks)| Xr { ssrc, blocks })
}

/// Packet types rtcc does not read: APP and types outside RTCP's table.
pub fn unknown() -> impl Strategy<Value = Unknown> {
    (0u8..32, prop_oneof![Just(204u8), 208u8..=223, 192u8..=199], vec(any::<u8>(), 0..40))
        .prop_map(|(count, pt, body)| Unknown { count, pt, body })
}

pub fn packet() -> impl Strategy<Value = RtcpPacket> {
    prop_oneof![
        sr().prop_map(RtcpPacket::SenderReport),
        rr().prop_map(RtcpPacket::ReceiverReport),
        sdes().prop_map(RtcpPacket::Sdes),
        bye().prop_map(RtcpPacket::Bye),
        nack().prop_map(RtcpPacket::Nack),
        pli().prop_map(RtcpPacket::Pli),
        remb().prop_map(RtcpPacket::Remb),
        twcc().prop_map(RtcpPacket::TransportFeedback),
        ccfb().prop_map(RtcpPacket::CongestionControlFeedback),
        xr().prop_map(RtcpPacket::Xr),
        unknown().prop_map(RtcpPacket::Unknown),
    ]
}

pub fn compound() -> impl Strategy<Value = Compound> {
    vec(packet(), 1..5).prop_map(Compound::new)
}
