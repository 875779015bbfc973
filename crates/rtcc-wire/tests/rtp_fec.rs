//! ULPFEC (RFC 5109): the payload's round trip, recovery of any one lost
//! packet of a group byte for byte, and hostile input.

mod common;
mod rtp_support;

use common::*;
use proptest::prelude::*;
use rtcc_wire::fec::{protect, recover, UlpLevel, UlpfecPacket};
use rtcc_wire::payload::red::{RedBlock, RedPayload};
use rtcc_wire::rtp::RtpPacket;
use rtcc_wire::{Wire, WireError};
use rtp_support::*;

const SSRC: u32 = 0x1234_5678;

/// A group of `n` packets of one stream from `base`, of different lengths,
/// some with CSRCs, extensions, padding and the marker.
fn group() -> impl Strategy<Value = Vec<RtpPacket>> {
    (any::<u16>(), prop::collection::vec(rtp_packet(), 1..=48)).prop_map(|(base, ps)| {
        ps.into_iter()
            .enumerate()
            .map(|(i, mut p)| {
                p.ssrc = SSRC;
                p.sequence_number = base.wrapping_add(i as u16);
                p
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ulpfec_payload_round_trips(f in ulpfec()) {
        assert_round_trip(&f);
    }

    #[test]
    fn red_payload_round_trips(r in red_payload()) {
        assert_round_trip(&r);
    }

    #[test]
    fn any_one_lost_packet_is_rebuilt_exactly(ps in group(), lost in any::<prop::sample::Index>()) {
        let fec = protect(&ps).unwrap();
        // Through the wire, as a receiver gets it.
        let fec = UlpfecPacket::decode(&fec.to_bytes()).unwrap();
        prop_assert_eq!(fec.long_mask, ps.len() > 16);
        let i = lost.index(ps.len());
        let received: Vec<RtpPacket> = ps.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, p)| p.clone()).collect();
        let back = recover(&fec, SSRC, &received).unwrap();
        prop_assert_eq!(back.to_bytes().len(), ps[i].to_bytes().len());
        prop_assert_eq!(&back, &ps[i]);
    }
}

fn packet(seq: u16, payload_len: usize) -> RtpPacket {
    let mut p = RtpPacket::new(96, seq, 3000, SSRC, (0..payload_len).map(|b| b as u8 ^ seq as u8).collect()).unwrap();
    p.marker = seq.is_multiple_of(3);
    p
}

#[test]
fn every_position_of_a_group_across_the_sequence_wrap() {
    // 65530..=65535, 0..=3: the base is the packet before the wrap.
    let ps: Vec<RtpPacket> = (0..10u16).map(|i| packet(65530u16.wrapping_add(i), 10 + 37 * i as usize)).collect();
    let fec = protect(&ps).unwrap();
    assert_eq!(fec.sn_base, 65530);
    assert_eq!(fec.protected(0), (0..10u16).map(|i| 65530u16.wrapping_add(i)).collect::<Vec<_>>());
    for i in 0..ps.len() {
        let received: Vec<RtpPacket> = ps.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, p)| p.clone()).collect();
        let back = recover(&fec, SSRC, &received).unwrap();
        assert_eq!(back.payload.len(), ps[i].payload.len(), "length of packet {i}");
        assert_eq!(back, ps[i]);
    }
}

#[test]
fn protection_fields_are_the_xor_of_the_group() {
    // RFC 5109 §7.3, by hand: two packets of lengths (after the 12-octet header) 3 and 5.
    let a = packet(10, 3);
    let mut b = packet(12, 5);
    b.timestamp = 0x0f0f;
    let fec = protect(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(fec.sn_base, 10);
    assert_eq!(fec.length_recovery, 3 ^ 5);
    assert_eq!(fec.ts_recovery, 3000 ^ 0x0f0f);
    assert_eq!(fec.m_recovery, a.marker ^ b.marker);
    assert_eq!(fec.pt_recovery, 0);
    assert!(!fec.long_mask);
    assert_eq!(fec.levels[0].mask, 0b1010u64 << 60);
    let mut xor = b.payload.clone();
    for (x, y) in xor.iter_mut().zip(&a.payload) {
        *x ^= y;
    }
    assert_eq!(fec.levels[0].payload, xor);
    // FEC header (10) + level header with a 16-bit mask (4) + protection length 5.
    assert_eq!(fec.to_bytes().len(), 10 + 4 + 5);
}

#[test]
fn several_levels_rebuild_in_turn() {
    // Level 0 protects the first 4 octets of both packets, level 1 the rest.
    let (a, b) = (packet(1, 10), packet(2, 7));
    let one = protect(&[a.clone(), b.clone()]).unwrap();
    let mut two = one.clone();
    let whole = one.levels[0].payload.clone();
    two.levels = vec![
        UlpLevel { mask: one.levels[0].mask, payload: whole[..4].to_vec() },
        UlpLevel { mask: one.levels[0].mask, payload: whole[4..].to_vec() },
    ];
    let two = UlpfecPacket::decode(&two.to_bytes()).unwrap();
    assert_eq!(recover(&two, SSRC, std::slice::from_ref(&b)).unwrap(), a);
    assert_eq!(recover(&two, SSRC, std::slice::from_ref(&a)).unwrap(), b);
    // Level 0 alone protects too little of the lost packet.
    let mut short = two.clone();
    short.levels.truncate(1);
    assert!(matches!(recover(&short, SSRC, &[b]), Err(WireError::Invalid { field: "levels", .. })));
}

#[test]
fn what_cannot_be_protected_or_recovered_is_an_error() {
    let ps: Vec<RtpPacket> = (0..4).map(|i| packet(i, 20)).collect();
    let fec = protect(&ps).unwrap();
    let field = |r: Result<RtpPacket, WireError>| match r {
        Err(WireError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(recover(&fec, SSRC, &ps)), "mask", "nothing lost");
    assert_eq!(field(recover(&fec, SSRC, &ps[..2])), "mask", "two lost");
    assert_eq!(field(recover(&fec, 1, &ps[1..])), "mask", "other stream's packets do not count");
    assert!(protect(&[]).is_err());
    assert!(protect(&[packet(0, 1), packet(48, 1)]).is_err(), "span beyond 48");
    assert!(protect(&[packet(5, 1), packet(5, 2)]).is_err(), "same sequence number twice");
    let mut other = packet(1, 1);
    other.ssrc = 9;
    assert!(protect(&[packet(0, 1), other]).is_err(), "two streams");
    // Decoding: E set, a level cut short, no level.
    let good = fec.to_bytes();
    let mut e = good.clone();
    e[0] |= 0x80;
    assert!(matches!(UlpfecPacket::decode(&e), Err(WireError::Invalid { field: "E", .. })));
    assert!(matches!(UlpfecPacket::decode(&good[..good.len() - 1]), Err(WireError::Truncated { .. })));
    assert!(matches!(UlpfecPacket::decode(&good[..10]), Err(WireError::Invalid { field: "levels", .. })));
}

#[test]
fn fuzz_ulpfec_decoder_and_recovery() {
    let ps: Vec<RtpPacket> = (0..20).map(|i| packet(i, 5 + i as usize * 3)).collect();
    let seeds = vec![protect(&ps).unwrap().to_bytes(), protect(&ps[..3]).unwrap().to_bytes()];
    assert!(fuzz_decoder::<UlpfecPacket>(&seeds, 30_000, 11) > 500);
    // Recovery from any FEC payload that parses never panics; the seed, made
    // from the group the entry point receives, recovers.
    let group: Vec<RtpPacket> =
        (0..20u16).map(|i| RtpPacket::new(96, i, 3000, 1, vec![i as u8; 3 * i as usize]).unwrap()).collect();
    let seed = protect(&group).unwrap().to_bytes();
    assert!(rtcc_wire::fec::fuzz_recover(&seed));
    let mut recovered = 0;
    rtcc_wire::fuzzing::bounded_fuzz(&[seed], 10_000, 12, |input| {
        recovered += usize::from(rtcc_wire::fec::fuzz_recover(input))
    });
    assert!(recovered > 10, "{recovered}");
}

#[test]
fn ulpfec_in_red_as_chromium_sends_it() {
    // RED PT 127 wrapping media (VP8, 96) and ULPFEC (125) on the media SSRC,
    // each in a RED payload with a one-octet header (RFC 2198 §3, F=0).
    let (red_pt, ulpfec_pt) = (127, 125);
    let ps: Vec<RtpPacket> = (0..5).map(|i| packet(100 + i, 50 + 100 * i as usize)).collect();
    let fec = protect(&ps).unwrap();
    let red = RedPayload::primary(ulpfec_pt, fec.to_bytes());
    assert_eq!(red.to_bytes()[0], ulpfec_pt);
    let carrier = RtpPacket::new(red_pt, 105, 3000, SSRC, red.to_bytes()).unwrap();
    // The receiver: RTP, then RED, then ULPFEC; packet 102 is lost.
    let got = RtpPacket::decode(&carrier.to_bytes()).unwrap();
    let red = RedPayload::decode(&got.payload).unwrap();
    assert_eq!((red.primary_payload_type, red.redundant.len()), (ulpfec_pt, 0));
    let fec = UlpfecPacket::decode(&red.primary).unwrap();
    let received: Vec<RtpPacket> = ps.iter().filter(|p| p.sequence_number != 102).cloned().collect();
    assert_eq!(recover(&fec, got.ssrc, &received).unwrap(), ps[2]);
}

#[test]
fn red_blocks_by_hand_and_errors() {
    // RFC 2198 §3: F=1 | PT 0 | offset 160 | length 3, then F=0 | PT 8.
    let r = RedPayload {
        redundant: vec![RedBlock { payload_type: 0, timestamp_offset: 160, data: vec![1, 2, 3] }],
        primary_payload_type: 8,
        primary: vec![9],
    };
    assert_eq!(r.to_bytes(), [0x80, 0x02, 0x80, 0x03, 0x08, 1, 2, 3, 9]);
    assert!(matches!(RedPayload::decode(&[]), Err(WireError::Truncated { .. })));
    assert!(matches!(RedPayload::decode(&[0x80, 0x02, 0x80]), Err(WireError::Truncated { .. })));
    assert!(matches!(
        RedPayload::decode(&[0x80, 0x02, 0x80, 0x03, 0x08, 1]),
        Err(WireError::Truncated { what: "RED redundant block", .. })
    ));
    let long =
        RedPayload { redundant: vec![RedBlock { payload_type: 0, timestamp_offset: 0, data: vec![0; 1024] }], ..r };
    assert!(long.check().is_err());
    assert_eq!(
        RedPayload::decode(&long.to_bytes()).unwrap().redundant.len(),
        0,
        "a block too long for 10 bits is left out"
    );
}

#[test]
fn fuzz_red_decoder() {
    let r = RedPayload {
        redundant: vec![RedBlock { payload_type: 0, timestamp_offset: 160, data: vec![1, 2, 3] }],
        primary_payload_type: 8,
        primary: vec![9; 20],
    };
    let seeds = vec![r.to_bytes(), RedPayload::primary(125, vec![7; 30]).to_bytes()];
    assert!(fuzz_decoder::<RedPayload>(&seeds, 20_000, 13) > 1_000);
}
