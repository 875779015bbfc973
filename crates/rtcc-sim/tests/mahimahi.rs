//! Property tests of the Mahimahi trace parser (`trace::MahimahiTrace`):
//! random valid traces — blank lines, CRLF and stray whitespace included —
//! parse to one opportunity per timestamp line; one bad line in an otherwise
//! valid trace is reported at its line number; and no text at all makes the
//! parser panic.

use proptest::prelude::*;
use rtcc_sim::trace::MahimahiTrace;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(256)
}

/// Non-decreasing timestamps (ms) whose last one is positive.
fn timestamps() -> impl Strategy<Value = Vec<u64>> {
    (0u64..2000, prop::collection::vec(0u64..40, 1..300)).prop_map(|(start, steps)| {
        let mut t = start;
        let mut v: Vec<u64> = steps
            .into_iter()
            .map(|s| {
                t += s;
                t
            })
            .collect();
        if let Some(last) = v.last_mut() {
            *last = (*last).max(1);
        }
        v
    })
}

/// How a valid trace is written: (blank line before each timestamp, padding
/// around it), the line ending, and whether the text ends with one.
#[derive(Clone, Debug)]
struct Layout {
    lines: Vec<(bool, &'static str, &'static str)>,
    crlf: bool,
    final_newline: bool,
}

fn layout(n: usize) -> impl Strategy<Value = Layout> {
    let pad = prop::sample::select(vec!["", "", "", " ", "\t", "  "]);
    (prop::collection::vec((prop::bool::weighted(0.1), pad.clone(), pad), n), any::<bool>(), any::<bool>())
        .prop_map(|(lines, crlf, final_newline)| Layout { lines, crlf, final_newline })
}

/// The text's lines, and the 1-based line number of each timestamp.
fn write(times: &[String], layout: &Layout) -> (String, Vec<usize>) {
    let mut lines: Vec<String> = vec![];
    let mut at = vec![];
    for (t, &(blank, before, after)) in times.iter().zip(&layout.lines) {
        if blank {
            lines.push(before.to_string());
        }
        lines.push(format!("{before}{t}{after}"));
        at.push(lines.len());
    }
    let eol = if layout.crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(eol);
    if layout.final_newline {
        text.push_str(eol);
    }
    (text, at)
}

fn trace_and_layout() -> impl Strategy<Value = (Vec<u64>, Layout)> {
    timestamps().prop_flat_map(|t| {
        let n = t.len();
        (Just(t), layout(n))
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn valid_traces_parse_to_one_opportunity_per_line((times, layout) in trace_and_layout()) {
        let (text, _) = write(&times.iter().map(u64::to_string).collect::<Vec<_>>(), &layout);
        let t = MahimahiTrace::parse(&text).map_err(|e| TestCaseError::fail(format!("{e} in {text:?}")))?;
        let n = times.len();
        let period = *times.last().unwrap();
        prop_assert_eq!(t.opportunities(), n);
        prop_assert_eq!(t.times_ms(), &times[..]);
        prop_assert_eq!(t.period_ms(), period);
        // 1500 B per line per period.
        let rate = n as f64 * 12_000.0 * 1000.0 / period as f64;
        prop_assert!((t.mean_rate().bps() as f64 - rate).abs() <= 0.5, "{} vs {}", t.mean_rate().bps(), rate);
        // Any whole number of periods holds n opportunities per period.
        let p = period as i64 * 1000;
        for (from, k) in [(0, 1), (-p / 2, 2), (12_345, 3)] {
            prop_assert_eq!(t.count_periodic(from, from + k * p), n as u64 * k as u64);
        }
        // Opportunity g of the replayed trace lies at or after x exactly when
        // fewer than g + 1 lie before x.
        let x = t.opportunity_us(n as u64 / 2);
        prop_assert!(t.count_before(x) <= n as u64 / 2);
        prop_assert!(t.count_before(x + 1) > n as u64 / 2);
    }

    #[test]
    fn a_bad_line_is_reported_at_its_line_number(
        (times, layout) in trace_and_layout(),
        pick in any::<prop::sample::Index>(),
        bad in prop_oneof![
            "[0-9]{0,3}[a-zA-Z_,;#%][0-9a-z.]{0,4}".prop_map(|s| (s, "not a timestamp")),
            (0u64..1_000_000).prop_map(|n| (format!("-{n}"), "negative")),
            (1_000_000_000_001u64..u64::MAX).prop_map(|n| (n.to_string(), "out of range")),
        ],
    ) {
        let (token, why) = bad;
        let i = pick.index(times.len());
        let mut lines: Vec<String> = times.iter().map(u64::to_string).collect();
        lines[i] = token.clone();
        let (text, at) = write(&lines, &layout);
        let e = MahimahiTrace::parse(&text).expect_err("a bad line is refused");
        prop_assert_eq!(e.line, Some(at[i]), "{} in {:?}", e, text);
        prop_assert!(e.reason.contains(why), "{}", e);
        let prefix = format!("<trace>:{}: ", at[i]);
        prop_assert!(e.to_string().starts_with(&prefix), "{}", e);
    }

    #[test]
    fn a_decreasing_timestamp_is_reported_at_its_line_number(
        (times, layout) in trace_and_layout(),
        pick in any::<prop::sample::Index>(),
    ) {
        // The first line whose timestamp can go below its predecessor's.
        let Some(i) = (1..times.len()).map(|k| (pick.index(times.len()) + k) % times.len()).find(|&k| k > 0 && times[k - 1] > 0) else {
            return Ok(());
        };
        let mut lines: Vec<String> = times.iter().map(u64::to_string).collect();
        lines[i] = (times[i - 1] - 1).to_string();
        let (text, at) = write(&lines, &layout);
        let e = MahimahiTrace::parse(&text).expect_err("a decreasing timestamp is refused");
        prop_assert_eq!(e.line, Some(at[i]), "{}", e);
        prop_assert!(e.reason.contains("smaller than the previous"), "{}", e);
    }

    /// Any text: a trace or an error, never a panic. An error on a line names
    /// a line that exists and is not blank; a trace has one opportunity per
    /// non-blank line.
    #[test]
    fn any_text_gives_a_trace_or_an_error(text in prop_oneof![
        any::<String>(),
        "([0-9 \t-]{0,6}(\r?\n)?){0,12}",
        "(-?[0-9]{1,22}\r?\n){0,8}[0-9a-z+. ]{0,6}",
    ]) {
        let lines: Vec<&str> = text.lines().collect();
        match MahimahiTrace::parse(&text) {
            Ok(t) => {
                prop_assert_eq!(t.opportunities(), lines.iter().filter(|l| !l.trim().is_empty()).count());
                prop_assert!(t.period_ms() > 0);
            }
            Err(e) => {
                prop_assert!(!e.reason.is_empty());
                if let Some(l) = e.line {
                    prop_assert!(l >= 1 && l <= lines.len(), "line {} of {}", l, lines.len());
                    prop_assert!(!lines[l - 1].trim().is_empty(), "blank line {} blamed: {}", l, e);
                    let prefix = format!("<trace>:{l}: ");
                    prop_assert!(e.to_string().starts_with(&prefix), "{}", e);
                }
            }
        }
    }
}
