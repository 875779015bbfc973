//! Transport-wide feedback: the builder's chunk choice (libwebrtc's), its
//! packet splitting, and the quantisation the wire imposes on arrival times.

mod rtcp_common;

use proptest::prelude::*;
use rtcc_wire::rtcp::*;
use rtcc_wire::Wire;
use PacketStatus::{Large, NotReceived as N, Small};

fn fb(packets: Vec<PacketStatus>) -> TransportFeedback {
    TransportFeedback { sender_ssrc: 1, media_ssrc: 2, base_seq: 0, reference_time: 0, fb_count: 0, packets }
}

/// Chunk choices worked through libwebrtc's LastChunk rules (CanAdd, Emit,
/// EncodeLast in transport_feedback.cc).
#[test]
fn chunks_as_libwebrtc_chooses_them() {
    // All equal: one run-length chunk, T=0, S=01, length 20.
    assert_eq!(fb(vec![Small(1); 20]).chunks(), vec![0x2014]);
    // 14 alternating small/lost: one one-bit vector.
    assert_eq!(fb([Small(1), N].repeat(7)).chunks(), vec![0xaaaa]);
    // A large delta among 8: a two-bit vector of the first 7, then a run of 1.
    let mixed = vec![Small(1), Large(-1), Small(1), Small(1), Small(1), Small(1), Small(1), N];
    assert_eq!(fb(mixed).chunks(), vec![0xd955, 0x0001]);
    // 10 received then 20 lost: a full one-bit vector, then a run of 16 lost.
    let mut tail = vec![Small(1); 10];
    tail.extend(vec![N; 20]);
    assert_eq!(fb(tail).chunks(), vec![0xbff0, 0x0010]);
    // A run longer than 13 bits splits at 8191.
    assert_eq!(fb(vec![N; 9000]).chunks(), vec![0x1fff, 9000 - 8191]);
}

/// Arrivals come back rounded to 250 µs ticks on a 64 ms reference.
#[test]
fn quantisation_worked_example() {
    let mut b = TransportFeedbackBuilder::new(1, 2, 9);
    let out =
        b.build(100, 1_000_000, &[(100, Some(1_000_130)), (101, Some(1_000_380)), (102, None), (104, Some(999_000))]);
    assert_eq!(out.len(), 1);
    let f = &out[0];
    // 1,000,000 µs floors to 15 × 64 ms = 960,000 µs.
    assert_eq!((f.base_seq, f.reference_time, f.fb_count), (100, 15, 9));
    // 40,130 µs → 161 ticks (40,250); +130 µs → 1 tick from the quantised
    // arrival; 103 was never listed; −1,500 µs → −6 ticks, a large delta.
    assert_eq!(f.packets, vec![Small(161), Small(1), N, N, Large(-6)]);
    let arrivals: Vec<_> = f.arrivals().collect();
    assert_eq!(
        arrivals,
        vec![(100, Some(1_000_250)), (101, Some(1_000_500)), (102, None), (103, None), (104, Some(999_000))]
    );
    assert_eq!(b.fb_count, 10);
    assert_eq!(&TransportFeedback::decode(&f.to_bytes()).unwrap(), f);
}

/// A delta past 16 signed bits of ticks (±8.19 s) starts a new packet based
/// at the packet that did not fit, with the next feedback count.
#[test]
fn new_packet_when_a_delta_does_not_fit() {
    let mut b = TransportFeedbackBuilder::new(1, 2, 255);
    let out = b.build(0, 0, &[(0, Some(0)), (1, Some(9_000_000)), (2, Some(9_001_000))]);
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].base_seq, out[0].fb_count, out[0].packets.clone()), (0, 255, vec![Small(0)]));
    // 9,000,000 floors to 140 × 64 ms = 8,960,000: 160 ticks, then 4.
    assert_eq!((out[1].base_seq, out[1].reference_time, out[1].fb_count), (1, 140, 0));
    assert_eq!(out[1].packets, vec![Small(160), Small(4)]);
    // Just inside the range stays in one packet: 32,767 ticks.
    let out = b.build(0, 0, &[(0, Some(0)), (1, Some(32_767 * 250))]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].packets, vec![Small(0), Large(32_767)]);
}

/// The reference time is 24 bits of 64 ms and wraps (§3.1).
#[test]
fn reference_time_wraps() {
    let wrap = (1i64 << 24) * 64_000;
    let out = TransportFeedbackBuilder::new(1, 2, 0).build(7, wrap + 64_000 + 500, &[(7, Some(wrap + 64_500))]);
    assert_eq!(out[0].reference_time, 1);
    assert_eq!(out[0].arrivals().next(), Some((7, Some(64_500))));
    assert!(TransportFeedbackBuilder::new(1, 2, 0).build(0, 0, &[]).is_empty());
}

/// Sequences wrap at 2¹⁶ inside one feedback; unordered input is sorted.
#[test]
fn sequences_wrap_and_sort() {
    let out = TransportFeedbackBuilder::new(1, 2, 0).build(
        65535,
        0,
        &[(1, Some(2_000)), (65535, Some(1_000)), (65535, Some(5))],
    );
    let seqs: Vec<_> = out[0].arrivals().collect();
    assert_eq!(seqs, vec![(65535, Some(1_000)), (0, None), (1, Some(2_000))]);
}

proptest! {
    #![proptest_config(rtcp_common::config(256))]
    /// Every arrival comes back on the 250 µs grid within half a tick, and
    /// lost packets as lost, however the builder splits the feedback.
    #[test]
    fn arrivals_within_half_a_tick(
        base in any::<u16>(),
        start in 0i64..1_000_000_000_000,
        steps in proptest::collection::vec((1u16..4, proptest::option::of(-20_000i64..20_000_000)), 1..200),
    ) {
        let mut seq = base;
        let mut t = start;
        let mut input = Vec::new();
        for (gap, d) in steps {
            seq = seq.wrapping_add(gap);
            let arrival = d.map(|d| { t = (t + d).max(0); t });
            input.push((seq, arrival));
        }
        let out = TransportFeedbackBuilder::new(1, 2, 0).build(base, start, &input);
        let got: std::collections::HashMap<u16, Option<i64>> = out.iter().flat_map(|f| f.arrivals()).collect();
        let wrap = (1i64 << 24) * 64_000;
        for (s, a) in input {
            let back = got[&s];
            match a {
                None => prop_assert_eq!(back, None),
                Some(a) => {
                    let back = back.unwrap();
                    prop_assert_eq!(back % 250, 0);
                    let err = (back - a.rem_euclid(wrap)).rem_euclid(wrap);
                    prop_assert!(err <= 125 || wrap - err <= 125, "seq {} at {} came back {}", s, a, back);
                }
            }
        }
        for f in &out {
            prop_assert_eq!(&TransportFeedback::decode(&f.to_bytes()).unwrap(), f);
        }
    }
}
