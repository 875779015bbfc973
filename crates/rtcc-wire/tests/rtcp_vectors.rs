//! Fixed RTCP vectors: packets captured from real stacks (via pion/rtcp's
//! test suite, which records them from packet dumps and Chrome) and worked
//! examples of the drafts' chunk layouts.

mod common;

use common::hex;
use rtcc_wire::rtcp::*;
use rtcc_wire::{Wire, WireError};

/// A compound packet from a packet dump (pion/rtcp packet_test.go
/// `realPacket`): RR, SDES CNAME, BYE, PLI, RTPFB FMT 5 and APP.
const REAL_COMPOUND: &str = "81c90007 902f9e2e bc5e9a40 00000000 000046e1 00000111 09f36432 00024a79
    81ca000c 902f9e2e 0126 7b396330 30656239 322d3161 66622d39 6434392d 61343764 2d393166 36346565 65363966 357d 00000000
    81cb0001 902f9e2e
    81ce0002 902f9e2e 902f9e2e
    85cd0002 902f9e2e 902f9e2e
    80cc0003 4baae1ab 4e414d45 41424344";

#[test]
fn real_compound_decodes_and_re_encodes_byte_for_byte() {
    let bytes = hex(REAL_COMPOUND);
    let c = Compound::decode(&bytes).unwrap();
    assert_eq!(c.packets.len(), 6);
    let RtcpPacket::ReceiverReport(rr) = &c.packets[0] else { panic!("{:?}", c.packets[0]) };
    assert_eq!(rr.ssrc, 0x902f9e2e);
    assert_eq!(rr.reports, vec![ReportBlock::new(0xbc5e9a40, 0, 0, 0x46e1, 273, 0x9f36432, 150137).unwrap()]);
    let RtcpPacket::Sdes(sdes) = &c.packets[1] else { panic!() };
    assert_eq!(sdes.chunks[0].cname(), Some(&b"{9c00eb92-1afb-9d49-a47d-91f64eee69f5}"[..]));
    assert_eq!(c.packets[2], RtcpPacket::Bye(Bye::new(vec![0x902f9e2e], None).unwrap()));
    assert_eq!(c.packets[3], RtcpPacket::Pli(Pli { sender_ssrc: 0x902f9e2e, media_ssrc: 0x902f9e2e }));
    // RTPFB FMT 5 (rapid resynchronisation, RFC 6051) and APP stay bytes.
    assert_eq!(c.packets[4], RtcpPacket::Unknown(Unknown { count: 5, pt: 205, body: hex("902f9e2e 902f9e2e") }));
    assert_eq!(
        c.packets[5],
        RtcpPacket::Unknown(Unknown { count: 0, pt: 204, body: hex("4baae1ab 4e414d45 41424344") })
    );
    assert_eq!(c.to_bytes(), bytes);
}

#[test]
fn compound_refuses_trailing_and_short_data_naming_the_field() {
    let bytes = hex(REAL_COMPOUND);
    // pion's "trailing data" case: the first 34 bytes end inside the SDES.
    let err = Compound::decode(&bytes[..34]).unwrap_err();
    // The RR parses; the two bytes after it are no header.
    assert!(matches!(err, WireError::Truncated { what: "RTCP compound packet", need: 4, have: 2 }), "{err}");
    // Length 100 words with 4 bytes present.
    assert!(matches!(Compound::decode(&hex("81c90064")), Err(WireError::Truncated { .. })));
    let err = Compound::decode(&hex("41c90000")).unwrap_err();
    assert_eq!(err.to_string(), "RTCP compound packet: field version: 1 where RTCP has 2");
    assert!(Compound::decode(&[]).is_err());
}

/// Transport-wide feedback sent by Chrome (pion/rtcp transport_layer_cc_test.go
/// example1): one received packet, padded with the P bit.
#[test]
fn chrome_twcc_one_packet() {
    let bytes = hex("afcd0005 fa17fa17 43032fa0 00990001 3de80217 20019401");
    let fb = TransportFeedback::decode(&bytes).unwrap();
    assert_eq!((fb.sender_ssrc, fb.media_ssrc, fb.base_seq), (4195875351, 1124282272, 153));
    assert_eq!((fb.reference_time, fb.fb_count), (4057090, 23));
    assert_eq!(fb.packets, vec![PacketStatus::Small(0x94)]);
    assert_eq!(fb.arrivals().collect::<Vec<_>>(), vec![(153, Some(4057090 * 64_000 + 37_000))]);
    // rtcc pads with zeros inside the length instead of the P bit.
    assert_eq!(fb.to_bytes(), hex("8fcd0005 fa17fa17 43032fa0 00990001 3de80217 20019400"));
}

/// pion example4: seven received packets as one run-length chunk.
#[test]
fn chrome_twcc_run_length() {
    let bytes = hex("afcd0007 fa17fa17 193dd8bb 00040007 10636e01 20074c24 24100c0c 10000003");
    let fb = TransportFeedback::decode(&bytes).unwrap();
    assert_eq!((fb.base_seq, fb.reference_time, fb.fb_count), (4, 1074030, 1));
    let deltas: Vec<_> = [0x4c, 0x24, 0x24, 0x10, 0x0c, 0x0c, 0x10].into_iter().map(PacketStatus::Small).collect();
    assert_eq!(fb.packets, deltas);
    assert_eq!(fb.chunks(), vec![0x2007]);
    assert_eq!(TransportFeedback::decode(&fb.to_bytes()).unwrap(), fb);
}

/// Inputs libwebrtc's parser refuses too (pion examples 2 and 3): the
/// reserved status symbol 11, and the P bit with a padding count of 0.
#[test]
fn twcc_refusals_match_libwebrtc() {
    let reserved = hex("afcd0006 fa17fa17 193dd8bb 0174000e 45b15a40 d800f0ff d0000003");
    let err = TransportFeedback::decode(&reserved).unwrap_err();
    assert_eq!(err.to_string(), "transport-wide feedback: field packet status symbol: 11 is reserved (§3.1.1)");
    let zero_pad = hex("afcd0007 fa17fa17 193dd8bb 01740006 45b15a40 40022004 1ffe1f9a d000d000");
    let err = TransportFeedback::decode(&zero_pad).unwrap_err();
    assert!(matches!(err, WireError::Invalid { field: "padding", .. }), "{err}");
    // The same packet without the P bit reads: two large deltas, four small.
    let mut ok = zero_pad.clone();
    ok[0] = 0x8f;
    let fb = TransportFeedback::decode(&ok).unwrap();
    assert_eq!(fb.packets[..3], [PacketStatus::Large(0x1ffe), PacketStatus::Large(0x1f9a), PacketStatus::Small(0xd0)]);
    // pion sent two run-length chunks; libwebrtc's choice, and rtcc's, is one
    // two-bit vector for up to 7 mixed statuses: 10 10 01 01 01 01 00.
    assert_eq!(fb.chunks(), vec![0xe954]);
}

/// The draft's chunk examples (§3.1.3, §3.1.4) read as documented.
#[test]
fn draft_chunk_examples() {
    let with_chunk = |chunk: u16, count: u16, deltas: &str| {
        let mut b = hex("8fcd0000 00000001 00000002");
        b.extend_from_slice(&7u16.to_be_bytes());
        b.extend_from_slice(&count.to_be_bytes());
        b.extend_from_slice(&hex("00000100"));
        b.extend_from_slice(&chunk.to_be_bytes());
        b.extend_from_slice(&hex(deltas));
        b.resize(b.len().next_multiple_of(4), 0);
        let words = (b.len() / 4 - 1) as u16;
        b[2..4].copy_from_slice(&words.to_be_bytes());
        TransportFeedback::decode(&b).unwrap()
    };
    // §3.1.3 example 1: a run of 221 packets not received.
    let fb = with_chunk(0x00dd, 221, "");
    assert!(fb.packets.iter().all(|p| *p == PacketStatus::NotReceived) && fb.packets.len() == 221);
    // §3.1.4 example 1: one-bit vector 0 1 1 1 1 1 0 0 0 1 1 1 0 0.
    let fb = with_chunk(0x9f1c, 14, "0102030405 060708");
    let got: Vec<bool> = fb.packets.iter().map(|p| *p != PacketStatus::NotReceived).collect();
    let want = [0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0].map(|b| b == 1);
    assert_eq!(got, want);
    assert_eq!(fb.chunks(), vec![0x9f1c]);
}

/// REMB from pion/rtcp receiver_estimated_maximum_bitrate_test.go:
/// exponent 6, mantissa 139487, so 8,927,168 bit/s.
#[test]
fn remb_vector() {
    let bytes = hex("8fce0005 00000001 00000000 52454d42 011a20df 4874ed16");
    let r = Remb::decode(&bytes).unwrap();
    assert_eq!(r.bitrate, RembBitrate { exponent: 6, mantissa: 139487 });
    assert_eq!(r.bitrate.bps(), 8_927_168);
    assert_eq!(r.ssrcs, vec![1215622422]);
    assert_eq!(Remb::new(1, 8_927_168, vec![1215622422]).unwrap().to_bytes(), bytes);
    // 8,927,200 needs the same exponent: 32 bit/s lost to rounding.
    assert_eq!(RembBitrate::rounding(8_927_200), 32);
    assert_eq!(RembBitrate::from_bps(0), RembBitrate { exponent: 0, mantissa: 0 });
    assert_eq!(RembBitrate::from_bps(u64::MAX).bps(), u64::MAX >> 46 << 46);
}

/// RFC 8888 feedback from pion/rtcp rfc8888_test.go ("Report"): two blocks,
/// the second with an odd count and so a padding element.
#[test]
fn rfc8888_vector() {
    let bytes = hex("8bcd000a 00000001
         00000001 00020004 9ffd9ffc 00000000
         00000002 00020003 9ffd9ffc 00000000
         00000001");
    let f = CongestionControlFeedback::decode(&bytes).unwrap();
    let r = |ato| Some(CcfbReport { ecn: 0, ato });
    assert_eq!(f.blocks[0], CcfbBlock { ssrc: 1, begin_seq: 2, reports: vec![r(8189), r(8188), None, None] });
    assert_eq!(f.blocks[1], CcfbBlock { ssrc: 2, begin_seq: 2, reports: vec![r(8189), r(8188), None] });
    assert_eq!(f.report_timestamp, 1);
    assert_eq!(f.to_bytes(), bytes);
    // An element with R = 0 reads as not received whatever its other bits say.
    let mut odd = bytes.clone();
    odd[20] = 0x62;
    assert_eq!(CongestionControlFeedback::decode(&odd).unwrap(), f);
    // num_reports past the block: refused.
    let mut long = bytes.clone();
    long[15] = 6;
    assert!(CongestionControlFeedback::decode(&long).is_err());
}

/// RFC 8888 §3.1 arrival time offsets: 1/1024 s, 0x1FFE over range,
/// 0x1FFF after the report timestamp.
#[test]
fn rfc8888_offsets() {
    assert_eq!(CcfbReport::from_offset_us(0, 0).ato, 0);
    assert_eq!(CcfbReport::from_offset_us(1_000_000, 0).ato, 1024);
    assert_eq!(CcfbReport::from_offset_us(488, 0).ato, 0);
    assert_eq!(CcfbReport::from_offset_us(489, 0).ato, 1);
    assert_eq!(CcfbReport::from_offset_us(8_000_000, 0).ato, CcfbReport::OVER_RANGE); // 8192 units
    assert_eq!(CcfbReport::from_offset_us(7_997_070, 3), CcfbReport { ecn: 3, ato: 0x1ffd });
    assert_eq!(CcfbReport::from_offset_us(-1, 0).ato, CcfbReport::UNAVAILABLE);
    assert_eq!(CcfbReport { ecn: 0, ato: 1024 }.offset_us(), Some(1_000_000));
    assert_eq!(CcfbReport { ecn: 0, ato: CcfbReport::OVER_RANGE }.offset_us(), None);
}

/// Report block fields at their limits (RFC 3550 §6.4.1): the 24-bit signed
/// cumulative loss sign-extends, and a value outside it is refused.
#[test]
fn report_block_cumulative_lost() {
    let rr = ReceiverReport::new(1, vec![ReportBlock::new(2, 0xff, -1, 0x0001_0005, 0, 0, 0).unwrap()]).unwrap();
    let bytes = rr.to_bytes();
    assert_eq!(bytes, hex("81c90007 00000001 00000002 ffffffff 00010005 00000000 00000000 00000000"));
    assert_eq!(ReceiverReport::decode(&bytes).unwrap(), rr);
    let max = ReportBlock::new(2, 0, (1 << 23) - 1, 0, 0, 0, 0).unwrap();
    assert_eq!(
        ReceiverReport::decode(&ReceiverReport::new(1, vec![max.clone()]).unwrap().to_bytes()).unwrap().reports[0],
        max
    );
    let err = ReportBlock::new(2, 0, 1 << 23, 0, 0, 0, 0).unwrap_err();
    assert_eq!(err.to_string(), "report block: field cumulative lost: 8388608 outside the 24-bit signed range");
    assert_eq!(ReportBlock::clamp_cumulative_lost(-(1 << 40)), -(1 << 23));
    let err = ReceiverReport::new(1, vec![max; 32]).unwrap_err();
    assert!(matches!(err, WireError::Invalid { field: "report count", .. }), "{err}");
}

/// SR with the sender info laid out as RFC 3550 §6.4.1 draws it.
#[test]
fn sender_report_layout() {
    let info = SenderInfo { ntp: 0xe900_0000_0000_0001, rtp_timestamp: 1000, packet_count: 42, octet_count: 4096 };
    let sr = SenderReport::new(0x11223344, info, vec![]).unwrap();
    assert_eq!(sr.to_bytes(), hex("80c80006 11223344 e9000000 00000001 000003e8 0000002a 00001000"));
    assert_eq!(sr.info.ntp_middle(), 0x0000_0000);
}

/// NACK pairs across the 16-bit wrap (RFC 4585 §6.2.1).
#[test]
fn nack_wraps() {
    // 65535, 0 and 3 are PID+1, +2 and +5: BLP bits 0, 1 and 4.
    let n = Nack::from_seqs(1, 2, [65534, 65535, 0, 3, 16, 40]).unwrap();
    assert_eq!(
        n.pairs,
        vec![NackPair { pid: 65534, blp: 0b1_0011 }, NackPair { pid: 16, blp: 0 }, NackPair { pid: 40, blp: 0 }]
    );
    assert_eq!(n.seqs().collect::<Vec<_>>(), vec![65534, 65535, 0, 3, 16, 40]);
    assert_eq!(n.to_bytes(), hex("81cd0005 00000001 00000002 fffe0013 00100000 00280000"));
    assert!(Nack::from_seqs(1, 2, []).is_err());
}

/// XR with a Loss RLE block (RFC 3611 §4.1) and a discard RLE block
/// (RFC 7097 §3), chunks as RFC 3611 §4.1.1 encodes them.
#[test]
fn xr_rle_blocks() {
    // 20 received, then 1 lost, 2 received: a run chunk and a bit vector.
    let mut outcomes = vec![true; 20];
    outcomes.extend([false, true, true]);
    let loss = RleBlock::from_outcomes(0xabcd, 100, &outcomes);
    assert_eq!(loss.chunks, vec![RleChunk::Run { ones: true, length: 20 }, RleChunk::Vector(0b011_0000_0000_0000)]);
    let discard = RleBlock::from_outcomes(0xabcd, 100, &[false, true]);
    let xr = Xr { ssrc: 1, blocks: vec![XrBlock::LossRle(loss), XrBlock::DiscardRle { early: true, block: discard }] };
    let bytes = xr.to_bytes();
    assert_eq!(
        bytes,
        hex("80cf0009 00000001
             01000003 0000abcd 0064007b 4014b000
             19100003 0000abcd 00640066 a0000000")
    );
    assert_eq!(Xr::decode(&bytes).unwrap(), xr);
    // Thinning shortens what the chunks cover (RFC 3611 §4.1: 2^T).
    let thin = RleBlock {
        thinning: 1,
        ssrc: 1,
        begin_seq: 0,
        end_seq: 8,
        chunks: vec![RleChunk::Run { ones: true, length: 16 }],
    };
    assert_eq!(thin.outcomes(), vec![true; 4]);
}

/// The one-way delay block (rtcc's layout, `OwdBlock`): BT 250, length 5,
/// SSRC, then min, mean, max, newest as signed 16.16 seconds.
#[test]
fn xr_owd_block() {
    let owd = OwdBlock {
        ssrc: 0xabcd,
        min: OwdBlock::units_from_micros(50_000),
        mean: OwdBlock::units_from_micros(62_500),
        max: OwdBlock::units_from_micros(1_000_000),
        newest: OwdBlock::units_from_micros(-1_000),
    };
    // 50 ms = 3276.8 -> 3277 units; 62.5 ms = 4096; 1 s = 65536; -1 ms = -65.536 -> -66.
    assert_eq!((owd.min, owd.mean, owd.max, owd.newest), (3277, 4096, 65_536, -66));
    let xr = Xr { ssrc: 1, blocks: vec![XrBlock::Owd(owd)] };
    let bytes = xr.to_bytes();
    assert_eq!(
        bytes,
        hex("80cf0007 00000001
             fa000005 0000abcd 00000ccd 00001000 00010000 ffffffbe")
    );
    assert_eq!(Xr::decode(&bytes).unwrap(), xr);
    // Back to microseconds within half a unit (7.6 µs).
    assert_eq!(OwdBlock::micros(owd.min), 50_003);
    assert_eq!(OwdBlock::micros(owd.newest), -1_007);
    // Saturates rather than wrapping past ±32,768 s.
    assert_eq!(OwdBlock::units_from_micros(i64::MAX), i32::MAX);
    assert_eq!(OwdBlock::units_from_micros(i64::MIN), i32::MIN);
    // A BT 250 block of another length (another implementation's use of an
    // unassigned type) is kept as unknown, not read short or long, and the
    // blocks beside it still parse.
    let mut short = bytes.clone();
    short[11] = 4;
    short[3] = 6;
    short.truncate(short.len() - 4);
    match &Xr::decode(&short).unwrap().blocks[..] {
        [XrBlock::Unknown { bt: 250, body, .. }] => assert_eq!(body.len(), 16),
        other => panic!("{other:?}"),
    }
}

/// A 40-byte transport-wide feedback packet names 65,535 packets lost (nine
/// run chunks): one decodes; a datagram of two, naming more than the 16-bit
/// sequence space, is refused instead of expanded.
#[test]
fn compound_refuses_more_transport_wide_statuses_than_one_sequence_space() {
    let one = hex("8fcd0009 00000001 00000002 0000ffff 00000000
         1fff1fff 1fff1fff 1fff1fff 1fff1fff 1fff0000");
    let c = Compound::decode(&one).unwrap();
    let RtcpPacket::TransportFeedback(f) = &c.packets[0] else { panic!("{c:?}") };
    assert_eq!(f.packets.len(), 65_535);
    let two = [one.clone(), one].concat();
    let e = Compound::decode(&two).unwrap_err().to_string();
    assert!(e.contains("packet status count") && e.contains("65536"), "{e}");
}
