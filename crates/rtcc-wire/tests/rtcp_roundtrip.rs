//! Every RTCP type: decode(encode(x)) == x and encode(x).len() == wire_size().

mod rtcp_common;

use proptest::prelude::*;
use rtcc_wire::rtcp::*;
use rtcc_wire::Wire;
use rtcp_common::*;

fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(x: &T) -> Result<(), TestCaseError> {
    let bytes = x.to_bytes();
    prop_assert_eq!(bytes.len(), x.wire_size());
    prop_assert_eq!(bytes.len() % 4, 0, "RTCP packets are 32-bit aligned");
    prop_assert_eq!(&T::decode(&bytes).unwrap(), x);
    Ok(())
}

proptest! {
    #![proptest_config(rtcp_common::config(256))]
    #[test] fn sender_report(x in sr()) { round_trip(&x)?; }
    #[test] fn receiver_report(x in rr()) { round_trip(&x)?; }
    #[test] fn source_description(x in sdes()) { round_trip(&x)?; }
    #[test] fn goodbye(x in bye()) { round_trip(&x)?; }
    #[test] fn generic_nack(x in nack()) { round_trip(&x)?; }
    #[test] fn picture_loss(x in pli()) { round_trip(&x)?; }
    #[test] fn receiver_estimated_bitrate(x in remb()) { round_trip(&x)?; }
    #[test] fn transport_wide_feedback(x in twcc()) { round_trip(&x)?; }
    #[test] fn congestion_control_feedback(x in ccfb()) { round_trip(&x)?; }
    #[test] fn extended_report(x in xr()) { round_trip(&x)?; }
    #[test] fn unknown_packet(x in unknown()) { round_trip(&x)?; }
    #[test] fn any_packet(x in packet()) { round_trip(&x)?; }
    #[test] fn compound_packet(x in compound()) { round_trip(&x)?; }

    /// The NACK helpers: every lost sequence comes back, in order, across the wrap.
    #[test]
    fn nack_pairs_hold_every_sequence(start in any::<u16>(), steps in proptest::collection::vec(1u16..40, 1..60)) {
        let mut seqs = vec![start];
        for s in steps {
            let next = seqs.last().unwrap().wrapping_add(s);
            seqs.push(next);
        }
        let nack = Nack::from_seqs(1, 2, seqs.iter().copied()).unwrap();
        prop_assert_eq!(nack.seqs().collect::<Vec<_>>(), seqs);
    }

    /// REMB rounding: never above the request, less than one step below it.
    #[test]
    fn remb_rounds_down_by_less_than_a_step(bps in any::<u64>()) {
        let b = RembBitrate::from_bps(bps);
        prop_assert!(b.mantissa <= RembBitrate::MAX_MANTISSA);
        prop_assert!(b.bps() <= bps);
        prop_assert!(bps - b.bps() < 1u64 << b.exponent);
        prop_assert_eq!(RembBitrate::rounding(bps), bps - b.bps());
    }

    /// RLE blocks built from outcomes give the outcomes back.
    #[test]
    fn rle_outcomes_round_trip(begin in any::<u16>(), runs in proptest::collection::vec((any::<bool>(), 1usize..40), 0..40)) {
        let outcomes: Vec<bool> = runs.into_iter().flat_map(|(o, n)| std::iter::repeat_n(o, n)).take(0xffff).collect();
        let block = RleBlock::from_outcomes(7, begin, &outcomes);
        prop_assert_eq!(block.outcomes(), outcomes);
        let xr = Xr { ssrc: 1, blocks: vec![XrBlock::LossRle(block)] };
        prop_assert_eq!(Xr::decode(&xr.to_bytes()).unwrap(), xr);
    }
}
