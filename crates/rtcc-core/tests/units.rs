//! Property tests of the unit parsers (`"25ms"`, `"3Mbps"`, `"1500B"`):
//! what `Display` writes parses back to the same value (to the precision a
//! rate is written with), numbers with a known unit scale exactly, and no
//! string makes a parser panic — it gives a value or an error that says why.

use proptest::prelude::*;
use rtcc_core::units::{DataRate, DataSize, Duration};

/// Largest values the parsers accept: 10^15 µs (~31 years), 10^15 B, 10^13 bit/s.
const MAX_US: i64 = 1_000_000_000_000_000;
const MAX_BYTES: u64 = 1_000_000_000_000_000;
const MAX_BPS: u64 = 10_000_000_000_000;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(256)
}

/// Values spread over every magnitude, and round ones (which display with a
/// larger unit) as often as not.
fn magnitude(max: u64) -> impl Strategy<Value = u64> {
    let digits = (max as f64).log10() as u32;
    (0..=digits, 0..=max, any::<bool>()).prop_map(move |(d, x, round)| {
        let v = x % 10u64.pow(d).max(1);
        let v = if round { v - v % 1000 } else { v };
        v.min(max)
    })
}

/// A parse result as a plain value for comparisons, or the error's message.
fn parsed<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>().map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn duration_display_parses_back(us in magnitude(MAX_US as u64)) {
        let d = Duration::from_micros(us as i64);
        prop_assert_eq!(parsed::<Duration>(&d.to_string()), Ok(d), "written as {}", d);
    }

    #[test]
    fn size_display_parses_back(b in magnitude(MAX_BYTES)) {
        let s = DataSize::from_bytes(b);
        prop_assert_eq!(parsed::<DataSize>(&s.to_string()), Ok(s), "written as {}", s);
    }

    /// A rate is written with three decimals of its unit: exact below
    /// 1 Mbps and for whole kbps, otherwise within half a kbps.
    #[test]
    fn rate_display_parses_back_to_its_precision(bps in magnitude(MAX_BPS)) {
        let r = DataRate::from_bps(bps);
        let text = r.to_string();
        let back = parsed::<DataRate>(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        if bps < 1_000_000 || bps % 1000 == 0 {
            prop_assert_eq!(back, r, "written as {}", text);
        } else {
            prop_assert!(back.bps().abs_diff(bps) <= 500, "{} written as {} read as {}", bps, text, back.bps());
        }
    }

    /// Numbers with three decimals and a unit, with or without a space.
    #[test]
    fn numbers_with_units_scale_exactly(n in 0u64..10_000_000, unit in 0usize..3, space in any::<bool>()) {
        let num = format!("{}.{:03}", n / 1000, n % 1000);
        let sp = if space { " " } else { "" };
        let (du, dk) = (["s", "ms", "min"][unit], [1000, 1, 60_000][unit]);
        prop_assert_eq!(parsed::<Duration>(&format!("{num}{sp}{du}")), Ok(Duration::from_micros((n * dk) as i64)));
        let (ru, rk) = (["kbps", "Mbps", "bps"][unit], [1, 1000, 0][unit]);
        if rk > 0 {
            prop_assert_eq!(parsed::<DataRate>(&format!("{num}{sp}{ru}")), Ok(DataRate::from_bps(n * rk)));
        }
        let (su, sk) = (["kB", "MB", "B"][unit], [1, 1000, 0][unit]);
        if sk > 0 {
            prop_assert_eq!(parsed::<DataSize>(&format!("{num}{sp}{su}")), Ok(DataSize::from_bytes(n * sk)));
        }
    }

    /// A known number with a unit none of the parsers knows is refused.
    #[test]
    fn unknown_units_are_refused(n in 0u32..100_000, unit in "(parsec|qq|furlong|lightyear)s?") {
        for text in [format!("{n}{unit}"), format!("{n} {unit}")] {
            prop_assert!(text.parse::<Duration>().is_err(), "{}", text);
            prop_assert!(text.parse::<DataRate>().is_err(), "{}", text);
            prop_assert!(text.parse::<DataSize>().is_err(), "{}", text);
        }
    }

    /// Any text: a value or an error with a message, never a panic; and a
    /// value writes as text that parses again.
    #[test]
    fn any_text_gives_a_value_or_an_error(text in prop_oneof![
        any::<String>(),
        "[0-9eE+. -]{0,8}[a-zA-Zµ/ ]{0,6}",
        "[0-9]{1,25}(\\.[0-9]{0,20})?(e[+-]?[0-9]{1,4})?(s|ms|us|bps|kbps|Mbps|Gbps|B|kB|MB|KiB)",
    ]) {
        check::<Duration>(&text)?;
        check::<DataRate>(&text)?;
        check::<DataSize>(&text)?;
    }
}

fn check<T>(text: &str) -> Result<(), TestCaseError>
where
    T: std::str::FromStr + std::fmt::Display,
    T::Err: std::fmt::Display,
{
    match text.parse::<T>() {
        Ok(v) => {
            let again = v.to_string();
            prop_assert!(again.parse::<T>().is_ok(), "{:?} parsed as {}, which does not parse", text, again);
        }
        Err(e) => prop_assert!(!e.to_string().is_empty(), "{:?}: empty error", text),
    }
    Ok(())
}

#[test]
fn bounds_are_what_the_properties_assume() {
    assert_eq!(format!("{MAX_US}us").parse::<Duration>(), Ok(Duration::from_micros(MAX_US)));
    assert_eq!(format!("{MAX_BYTES}B").parse::<DataSize>(), Ok(DataSize::from_bytes(MAX_BYTES)));
    assert_eq!(format!("{MAX_BPS}bps").parse::<DataRate>(), Ok(DataRate::from_bps(MAX_BPS)));
}
