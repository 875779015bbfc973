//! The sender sees a report as its bytes carry it (`rtcc_core::adapter`).

use rtcc_core::adapter::{adapt, Outcome};
use rtcc_core::feedback::{ReceiverReport, ReportFormat, ReportStats, RrValues};
use rtcc_core::units::{Duration, Time};

fn report(format: ReportFormat, seqs: std::ops::Range<u64>, report_ms: i64) -> ReceiverReport {
    // Arrivals 1,337 µs apart (off every tick); every 7th packet lost.
    let arrivals =
        seqs.map(|s| (s, (s % 7 != 3).then(|| Time::from_micros(5_000_000 + 1_337 * (s % 100_000) as i64)))).collect();
    ReceiverReport { arrivals, format, report_time: Time::from_millis(report_ms), ..Default::default() }
}

#[test]
fn twcc_arrivals_are_250us_ticks_from_a_64ms_reference() {
    let r = report(ReportFormat::Twcc, 0..200, 6_000);
    let got = adapt(&r, 199, 0, 0);
    assert_eq!(got.arrivals().len(), 200);
    for ((s, a), (s0, a0)) in got.arrivals().iter().zip(&r.arrivals) {
        assert_eq!(s, s0);
        assert_eq!(a.is_some(), a0.is_some(), "seq {s}");
        if let (Some(a), Some(a0)) = (a, a0) {
            assert_eq!(a.as_micros() % 250, 0, "seq {s}: {a:?}");
            // Rounded to the nearest tick, never accumulating.
            assert!((a.as_micros() - a0.as_micros()).abs() <= 125, "seq {s}: {a:?} vs {a0:?}");
        }
    }
}

#[test]
fn rfc8888_arrivals_are_1024ths_of_a_second_before_the_report() {
    let r = report(ReportFormat::Rfc8888, 0..200, 6_000);
    let got = adapt(&r, 199, 0, 0);
    assert_eq!(got.arrivals().len(), 200);
    let mut off_grid = 0;
    for ((_, a), (_, a0)) in got.arrivals().iter().zip(&r.arrivals) {
        if let (Some(a), Some(a0)) = (a, a0) {
            let off = (r.report_time - *a).as_micros();
            // A whole number of 1/1024 s, to the µs the offset is rounded to.
            let units = (off * 1024 + 500_000) / 1_000_000;
            assert!((units * 1_000_000 / 1024 - off).abs() <= 1, "{off}");
            assert!((a.as_micros() - a0.as_micros()).abs() <= 489);
            off_grid += usize::from(a != a0);
        }
    }
    assert!(off_grid > 100, "arrivals passed unquantised");
}

#[test]
fn sequences_unwrap_across_65536_and_lost_reports() {
    let mut next = 65_000;
    // The third report is lost, and so are the 70,000 packets' worth of
    // reports before the last: sequences unwrap against what was sent.
    for (i, len) in [300u64, 300, 300, 300, 70_000, 300].into_iter().enumerate() {
        let r = report(ReportFormat::Twcc, next..next + len, 6_000);
        if i != 2 && i != 4 {
            let got = adapt(&r, next + len - 1, 0, 0);
            let seqs: Vec<u64> = got.arrivals().iter().map(|a| a.0).collect();
            assert_eq!(seqs, (next..next + len).collect::<Vec<_>>(), "report {i}");
        }
        next += len;
    }
    assert!(next > 2 * 65_536);
}

/// RR + XR: outcomes per sequence (Loss RLE), discards (RFC 7097), the RR
/// block and the OWD block come through; no arrival time does.
#[test]
fn rtcp_xr_gives_outcomes_and_report_values_but_no_arrival_time() {
    let ms = |m| Some(Duration::from_millis(m));
    let stats =
        ReportStats { owd_min: ms(20), owd_mean: ms(25), owd_max: ms(40), owd_newest: ms(30), ..Default::default() };
    let rr = RrValues {
        fraction_lost: 36,
        cumulative_lost: 7,
        highest_seq: 65_585,
        jitter: Duration::from_micros(2_000),
        last_sr: 0x0001_8000,
        delay_since_last_sr: 0x0000_4000,
    };
    let mut r =
        ReceiverReport { late: vec![65_540, 65_541], stats, rr, ..report(ReportFormat::RtcpXr, 65_536..65_586, 6_000) };
    r.seal();
    let got = adapt(&r, 65_590, 0, 0);
    assert_eq!(got.packets.len(), 50);
    for (&(s, o), &(s0, a0)) in got.packets.iter().zip(&r.arrivals) {
        assert_eq!(s, s0);
        let expect = match a0 {
            None => Outcome::Lost,
            Some(_) => Outcome::Received { discarded: s == 65_540 || s == 65_541 },
        };
        assert_eq!(o, expect, "{s}");
    }
    assert!(got.arrivals().iter().all(|a| a.1.is_none()));
    assert_eq!(got.rr, Some(rr));
    assert_eq!(got.sr_echo, Some((0x0001_8000, 0x0000_4000)));
    // 16.16 seconds on the wire: within half a 15.3 µs unit.
    let near = |d: Option<Duration>, m: i64| (d.unwrap().as_micros() - m * 1000).abs() <= 8;
    assert!(near(got.stats.owd_min, 20) && near(got.stats.owd_newest, 30), "{:?}", got.stats);
    let lost = r.arrivals.iter().filter(|a| a.1.is_none()).count() as u32;
    assert_eq!((got.stats.received, got.stats.lost, got.stats.late_discards), (50 - lost, lost, 2));
    assert_eq!(got.stats.jitter, Duration::from_micros(2_000));
    // FEC recoveries are on no wire.
    assert_eq!(got.stats.fec_recovered, 0);
}

#[test]
fn a_datagram_that_does_not_parse_is_an_empty_report() {
    for format in [ReportFormat::Twcc, ReportFormat::Rfc8888, ReportFormat::RtcpXr] {
        let mut r = report(format, 0..20, 6_000);
        r.seal();
        let full = adapt(&r, 19, 0, 0);
        assert_eq!(full.packets.len(), 20);
        for cut in 1..r.datagram.len() {
            let mut bad = r.clone();
            bad.datagram.truncate(cut);
            // A cut inside a packet leaves nothing; one at a packet boundary
            // (after the RR, say) leaves what the packets before it carry,
            // never an outcome the whole report does not give.
            let got = adapt(&bad, 19, 0, 0);
            assert!(got.packets.iter().all(|p| full.packets.contains(p)), "{format:?} {cut}: {got:?}");
            assert!(got.rr.is_none() || got.rr == full.rr, "{format:?} {cut}");
        }
        let mut bad = r.clone();
        bad.datagram = vec![0xff; 3];
        assert!(adapt(&bad, 19, 0, 0).packets.is_empty());
    }
}

#[test]
fn reordered_packet_reported_lost_then_arrived_is_reported_arrived() {
    let mut r = report(ReportFormat::Twcc, 0..10, 6_000);
    r.arrivals.push((3, Some(Time::from_millis(5_100))));
    let got = adapt(&r, 9, 0, 0);
    assert_eq!(got.arrivals().len(), 10);
    assert_eq!(got.arrivals()[3], (3, Some(Time::from_millis(5_100))));
}

#[test]
fn a_reordered_packet_does_not_turn_reported_arrivals_into_losses() {
    // 6-9 arrived and were reported before; 5, reordered, comes with 10-19.
    let mut r = report(ReportFormat::Twcc, 10..20, 6_000);
    r.arrivals.insert(0, (5, Some(Time::from_millis(5_050))));
    for format in [ReportFormat::Twcc, ReportFormat::Rfc8888] {
        r.format = format;
        let got = adapt(&r, 19, 0, 0);
        let seqs: Vec<u64> = got.arrivals().iter().map(|a| a.0).collect();
        assert_eq!(seqs, [5].into_iter().chain(10..20).collect::<Vec<_>>(), "{format:?}");
    }
}

#[test]
fn rfc8888_over_range_reads_as_held_8_seconds() {
    // RFC 8888 §3.1: an arrival over 8 s before the report is "over range".
    let r = ReceiverReport {
        arrivals: vec![(0, Some(Time::from_millis(1_000))), (1, Some(Time::from_millis(9_500)))],
        format: ReportFormat::Rfc8888,
        report_time: Time::from_millis(10_000),
        ..Default::default()
    };
    let got = adapt(&r, 1, 0, 0);
    assert_eq!(got.arrivals()[0].1, Some(Time::from_micros(10_000_000 - (0x1ffd * 1_000_000 + 512) / 1024)));
    assert_eq!(got.arrivals()[1].1, Some(Time::from_millis(9_500)));
}

#[test]
fn the_receiver_seals_each_report_into_the_datagram_the_sender_parses() {
    use rtcc_core::pair::Pair;
    use rtcc_core::receiver::ReceiverConfig;
    use rtcc_wire::rtcp::{Compound, RtcpPacket};
    use rtcc_wire::Wire;
    // 5 % loss, and of sequences 300-340 only 310 arrives: for a while the
    // receiver asks for 300-309 in reports that carry no arrival.
    let mut pair = Pair::builder()
        .receiver(ReceiverConfig { nack: true, ..Default::default() })
        .loss(0.05, 3)
        .drop(|p| (300..=340).contains(&p.seq) && p.seq != 310)
        .build();
    pair.run_until(Time::from_millis(3_000));
    let reports = pair.reports();
    assert!(reports.len() > 50, "{} reports", reports.len());
    let mut next_count = 0u8;
    for rec in reports {
        let r = &rec.report;
        assert!(!r.datagram.is_empty());
        assert_eq!(r.datagram, r.to_compound().to_bytes());
        assert_eq!(r.wire_size().bytes(), 28 + r.datagram.len() as u64);
        let c = Compound::decode(&r.datagram).expect("parses");
        let twcc: Vec<_> = c
            .packets
            .iter()
            .filter_map(|p| if let RtcpPacket::TransportFeedback(f) = p { Some(f) } else { None })
            .collect();
        // draft-holmer-01 §3.1: one count per feedback packet, none skipped.
        for f in &twcc {
            assert_eq!(f.fb_count, next_count);
            next_count = next_count.wrapping_add(1);
        }
        assert_eq!(twcc.is_empty(), r.arrivals.is_empty());
        assert_eq!(c.packets.iter().any(|p| matches!(p, RtcpPacket::Nack(_))), !r.nacks.is_empty());
    }
    assert!(reports.iter().any(|r| !r.report.nacks.is_empty() && !r.report.arrivals.is_empty()));
    assert!(reports.iter().any(|r| !r.report.nacks.is_empty() && r.report.arrivals.is_empty()));
}

/// An RR + XR datagram the receiver did not write: `blocks` as given.
fn xr_report(blocks: Vec<rtcc_wire::rtcp::XrBlock>) -> ReceiverReport {
    use rtcc_wire::Wire;
    let xr = rtcc_wire::rtcp::Xr { ssrc: 1, blocks };
    ReceiverReport { format: ReportFormat::RtcpXr, datagram: xr.to_bytes(), ..Default::default() }
}

fn rle(
    begin_seq: u16,
    end_seq: u16,
    thinning: u8,
    chunks: Vec<rtcc_wire::rtcp::RleChunk>,
) -> rtcc_wire::rtcp::RleBlock {
    rtcc_wire::rtcp::RleBlock { thinning, ssrc: 2, begin_seq, end_seq, chunks }
}

#[test]
fn hostile_rle_blocks_give_each_sent_sequence_once() {
    use rtcc_wire::rtcp::{RleChunk, XrBlock};
    let run = |ones| RleChunk::Run { ones, length: 16_383 };
    // Eight 20-byte blocks each claiming 65,535 sequences from 0 (a
    // 65,535 x 8 expansion were it taken as given): lost in four, received
    // in four; the sender has sent 0..=100.
    let mut blocks = Vec::new();
    for i in 0..8 {
        blocks.push(XrBlock::LossRle(rle(0, 65_535, 0, vec![run(i % 2 == 1); 4])));
    }
    let got = adapt(&xr_report(blocks), 100, 0, 0);
    assert_eq!(got.packets.len(), 101);
    for (i, &(s, o)) in got.packets.iter().enumerate() {
        assert_eq!((s, o), (i as u64, Outcome::Received { discarded: false }));
    }
    assert_eq!((got.stats.received, got.stats.lost), (101, 0));
}

#[test]
fn rle_thinning_reports_multiples_of_two_to_the_t_and_early_discards_are_not_late() {
    use rtcc_wire::rtcp::{RleChunk, XrBlock};
    // T = 1 from 5: sequences 6, 8, 10, 12 (RFC 3611 §4.1: those 0 mod 2^T).
    let loss = XrBlock::LossRle(rle(5, 13, 1, vec![RleChunk::Run { ones: true, length: 4 }]));
    let early =
        XrBlock::DiscardRle { early: true, block: rle(5, 13, 1, vec![RleChunk::Run { ones: true, length: 4 }]) };
    let late = XrBlock::DiscardRle { early: false, block: rle(8, 9, 0, vec![RleChunk::Run { ones: true, length: 1 }]) };
    let got = adapt(&xr_report(vec![loss, early, late]), 1_000, 0, 0);
    let seqs: Vec<u64> = got.packets.iter().map(|p| p.0).collect();
    assert_eq!(seqs, [6, 8, 10, 12]);
    let discarded: Vec<u64> =
        got.packets.iter().filter(|p| p.1 == Outcome::Received { discarded: true }).map(|p| p.0).collect();
    assert_eq!(discarded, [8]);
    assert_eq!(got.stats.late_discards, 1);
}

/// A NACK carries 16-bit media sequences (RFC 4585 §6.2.1); the sender
/// unwraps them against the newest media sequence it sent, across the wrap.
#[test]
fn nacks_are_read_from_their_pid_and_blp_across_the_wrap() {
    let nacks: Vec<u32> = vec![65_530, 65_534, 65_535, 65_536, 65_537, 65_600];
    for format in [ReportFormat::Twcc, ReportFormat::Rfc8888, ReportFormat::RtcpXr] {
        let r = ReceiverReport { nacks: nacks.clone(), ..report(format, 0..20, 1_000) };
        assert_eq!(adapt(&r, 19, 65_610, 0).nacks, nacks, "{format:?}");
        // Against an older newest sequence, what it cannot have sent yet is
        // read 2^16 back (and the sender has no such packet to send again).
        assert_eq!(adapt(&r, 19, 65_535, 0).nacks[..3], [65_530, 65_534, 65_535]);
        assert_eq!(adapt(&r, 19, 65_535, 0).nacks[3], 0);
    }
}

/// The wire's transport sequences start at a random base (RFC 3550 §5.1);
/// the receiver reports them as they came, the adapter gives the sender's
/// own numbering back, across the wrap.
#[test]
fn a_random_transport_base_is_taken_off() {
    for base in [0u16, 1, 40_000, 65_535] {
        for format in [ReportFormat::Twcc, ReportFormat::Rfc8888, ReportFormat::RtcpXr] {
            // The sender sent 0..=299; the receiver numbers them base + s.
            let wire = u64::from(base);
            let r = report(format, wire + 100..wire + 300, 6_000);
            let got = adapt(&r, 299, 0, base);
            let seqs: Vec<u64> = got.packets.iter().map(|p| p.0).collect();
            assert_eq!(seqs, (100..300).collect::<Vec<u64>>(), "base {base}, {format:?}");
            assert_eq!(got.stats.lost + got.stats.received, 200);
        }
    }
}

/// The RR's extended highest sequence counts cycles from the receiver's own
/// first packet (RFC 3550 A.1); with a transport base near the wrap and the
/// first packets lost, the receiver's cycles are not the sender's.
#[test]
fn the_rr_highest_sequence_is_read_from_its_low_16_bits() {
    use rtcc_core::feedback::RrValues;
    // The sender sent 0..=299 from wire 65,530; 0..=9 were lost, so the
    // receiver's first was wire 4 and its highest, wire 293, is 293 to it.
    let rr = RrValues { highest_seq: 293, ..RrValues::default() };
    let r = ReceiverReport { rr, ..report(ReportFormat::RtcpXr, 65_540..65_830, 1_000) };
    assert_eq!(adapt(&r, 299, 0, 65_530).rr.map(|v| v.highest_seq), Some(299));
}

/// The sender knows when a report left only as far as its bytes say: RFC
/// 8888's report timestamp (16.16 s, so within 1/65,536 s); under TWCC, which
/// carries none, the newest arrival it reports; under RR + XR nothing.
#[test]
fn the_report_time_is_what_its_format_carries() {
    let at = Time::from_micros(6_123_457);
    let r = report(ReportFormat::Rfc8888, 0..50, 0);
    let got = adapt(&ReceiverReport { report_time: at, ..r }, 49, 0, 0);
    let t = got.report_time.expect("RFC 8888 carries a report timestamp");
    assert!(t <= at && (at - t).as_micros() < 16, "{t:?} vs {at:?}");

    let r = ReceiverReport { report_time: at, ..report(ReportFormat::Twcc, 0..50, 0) };
    let newest = r.arrivals.iter().filter_map(|a| a.1).max().unwrap();
    let got = adapt(&r, 49, 0, 0);
    assert_ne!(newest, at);
    assert!((got.report_time.unwrap() - newest).as_micros().abs() <= 125, "{:?} vs {newest:?}", got.report_time);

    let r = report(ReportFormat::RtcpXr, 0..50, 6_000);
    assert_eq!(adapt(&r, 49, 0, 0).report_time, None);
}
