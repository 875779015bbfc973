//! The sender sees a report as its bytes carry it (`rtcc_core::adapter`).

use rtcc_core::adapter::FeedbackAdapter;
use rtcc_core::feedback::{ReceiverReport, ReportFormat};
use rtcc_core::units::Time;

fn report(format: ReportFormat, seqs: std::ops::Range<u64>, report_ms: i64) -> ReceiverReport {
    // Arrivals 1,337 µs apart (off every tick); every 7th packet lost.
    let arrivals = seqs.map(|s| (s, (s % 7 != 3).then(|| Time::from_micros(5_000_000 + 1_337 * (s % 100_000) as i64)))).collect();
    ReceiverReport { arrivals, format, report_time: Time::from_millis(report_ms), ..Default::default() }
}

#[test]
fn twcc_arrivals_are_250us_ticks_from_a_64ms_reference() {
    let r = report(ReportFormat::Twcc, 0..200, 6_000);
    let got = FeedbackAdapter::new().adapt(&r, 199);
    assert_eq!(got.arrivals.len(), 200);
    for ((s, a), (s0, a0)) in got.arrivals.iter().zip(&r.arrivals) {
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
    let got = FeedbackAdapter::new().adapt(&r, 199);
    assert_eq!(got.arrivals.len(), 200);
    let mut off_grid = 0;
    for ((_, a), (_, a0)) in got.arrivals.iter().zip(&r.arrivals) {
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
    let mut adapter = FeedbackAdapter::new();
    let mut next = 65_000;
    // The third report is lost, and so are the 70,000 packets' worth of
    // reports before the last: sequences unwrap against what was sent.
    for (i, len) in [300u64, 300, 300, 300, 70_000, 300].into_iter().enumerate() {
        let r = report(ReportFormat::Twcc, next..next + len, 6_000);
        if i != 2 && i != 4 {
            let got = adapter.adapt(&r, next + len - 1);
            let seqs: Vec<u64> = got.arrivals.iter().map(|a| a.0).collect();
            assert_eq!(seqs, (next..next + len).collect::<Vec<_>>(), "report {i}");
        }
        next += len;
    }
    assert!(next > 2 * 65_536);
}

#[test]
fn rtcp_xr_carries_no_per_packet_arrivals_to_quantise() {
    let r = report(ReportFormat::RtcpXr, 0..50, 6_000);
    assert_eq!(FeedbackAdapter::new().adapt(&r, 49), r);
}

#[test]
fn reordered_packet_reported_lost_then_arrived_is_reported_arrived() {
    let mut r = report(ReportFormat::Twcc, 0..10, 6_000);
    r.arrivals.push((3, Some(Time::from_millis(5_100))));
    let got = FeedbackAdapter::new().adapt(&r, 9);
    assert_eq!(got.arrivals.len(), 10);
    assert_eq!(got.arrivals[3], (3, Some(Time::from_millis(5_100))));
}
