//! Unit newtypes: time and durations in integer microseconds, sizes in bytes,
//! rates in bits per second. Arithmetic between them is defined where it has a
//! physical meaning (`DataSize / DataRate = Duration`), so no raw f64 seconds
//! cross module boundaries.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// A point in time, microseconds since the start of the run (or of the process
/// clock in the real-time runtime).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(i64);

/// A signed span of time in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(i64);

/// An amount of data in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataSize(u64);

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataRate(u64);

/// The constants, constructors and readers `Time` and `Duration` share: both
/// are integer microseconds.
macro_rules! microseconds {
    ($T:ident) => {
        impl $T {
            pub const ZERO: $T = $T(0);
            pub const MAX: $T = $T(i64::MAX / 4);
            pub const fn from_micros(us: i64) -> Self {
                $T(us)
            }
            pub const fn from_millis(ms: i64) -> Self {
                $T(ms * 1000)
            }
            pub fn from_secs_f64(s: f64) -> Self {
                $T((s * 1e6).round() as i64)
            }
            pub const fn as_micros(self) -> i64 {
                self.0
            }
            pub fn as_millis_f64(self) -> f64 {
                self.0 as f64 / 1e3
            }
            pub fn as_secs_f64(self) -> f64 {
                self.0 as f64 / 1e6
            }
        }
    };
}

microseconds!(Time);
microseconds!(Duration);

impl Time {
    /// Time since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration((self.0 - earlier.0).max(0))
    }
}

impl Duration {
    pub const fn from_secs(s: i64) -> Self {
        Duration(s * 1_000_000)
    }
    pub fn max(self, o: Duration) -> Duration {
        Duration(self.0.max(o.0))
    }
    pub fn min(self, o: Duration) -> Duration {
        Duration(self.0.min(o.0))
    }
    pub fn is_positive(self) -> bool {
        self.0 > 0
    }
    pub fn mul_f64(self, k: f64) -> Duration {
        Duration((self.0 as f64 * k).round() as i64)
    }
}

impl DataSize {
    pub const ZERO: DataSize = DataSize(0);
    pub const MAX: DataSize = DataSize(u64::MAX);
    pub const fn from_bytes(b: u64) -> Self {
        DataSize(b)
    }
    pub const fn bytes(self) -> u64 {
        self.0
    }
    pub fn bits(self) -> u64 {
        self.0 * 8
    }
    pub fn saturating_sub(self, o: DataSize) -> DataSize {
        DataSize(self.0.saturating_sub(o.0))
    }
    pub fn mul_f64(self, k: f64) -> DataSize {
        DataSize((self.0 as f64 * k).max(0.0).round() as u64)
    }
}

impl DataRate {
    pub const ZERO: DataRate = DataRate(0);
    pub const MAX: DataRate = DataRate(u64::MAX);
    pub const fn from_bps(bps: u64) -> Self {
        DataRate(bps)
    }
    pub const fn from_kbps(kbps: u64) -> Self {
        DataRate(kbps * 1000)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        DataRate(mbps * 1_000_000)
    }
    pub fn from_bps_f64(bps: f64) -> Self {
        DataRate(if bps.is_finite() { bps.max(0.0).round() as u64 } else { 0 })
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn kbps_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn mul_f64(self, k: f64) -> DataRate {
        DataRate::from_bps_f64(self.0 as f64 * k)
    }
    /// Rate that moves `size` in `d`; zero for a non-positive duration.
    pub fn from_size_per(size: DataSize, d: Duration) -> DataRate {
        if d.0 <= 0 {
            return DataRate::ZERO;
        }
        DataRate((size.0 as u128 * 8 * 1_000_000 / d.0 as u128) as u64)
    }
    pub fn clamp(self, lo: DataRate, hi: DataRate) -> DataRate {
        DataRate(self.0.clamp(lo.0, hi.0.max(lo.0)))
    }
}

/// `impl $Op<$Rhs> for $T` as the saturating operation on the inner
/// integers: unit arithmetic clamps at the type's bounds instead of wrapping.
macro_rules! saturating_op {
    ($Op:ident::$op:ident, $T:ident, $Rhs:ident -> $Out:ident, $f:ident) => {
        impl $Op<$Rhs> for $T {
            type Output = $Out;
            fn $op(self, o: $Rhs) -> $Out {
                $Out(self.0.$f(o.0))
            }
        }
    };
    ($Op:ident::$op:ident, $T:ident, $Rhs:ident, $f:ident) => {
        impl $Op<$Rhs> for $T {
            fn $op(&mut self, o: $Rhs) {
                self.0 = self.0.$f(o.0)
            }
        }
    };
}

saturating_op!(Add::add, Time, Duration -> Time, saturating_add);
saturating_op!(AddAssign::add_assign, Time, Duration, saturating_add);
saturating_op!(Sub::sub, Time, Duration -> Time, saturating_sub);
saturating_op!(Sub::sub, Time, Time -> Duration, saturating_sub);
saturating_op!(Add::add, Duration, Duration -> Duration, saturating_add);
saturating_op!(AddAssign::add_assign, Duration, Duration, saturating_add);
saturating_op!(Sub::sub, Duration, Duration -> Duration, saturating_sub);
saturating_op!(SubAssign::sub_assign, Duration, Duration, saturating_sub);
impl Mul<i64> for Duration {
    type Output = Duration;
    fn mul(self, k: i64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}
impl Div<i64> for Duration {
    type Output = Duration;
    fn div(self, k: i64) -> Duration {
        Duration(if k == 0 { i64::MAX / 4 } else { self.0 / k })
    }
}
saturating_op!(Add::add, DataSize, DataSize -> DataSize, saturating_add);
saturating_op!(AddAssign::add_assign, DataSize, DataSize, saturating_add);
// Sizes saturate at zero: they are never negative.
saturating_op!(Sub::sub, DataSize, DataSize -> DataSize, saturating_sub);
saturating_op!(SubAssign::sub_assign, DataSize, DataSize, saturating_sub);
saturating_op!(Add::add, DataRate, DataRate -> DataRate, saturating_add);
saturating_op!(Sub::sub, DataRate, DataRate -> DataRate, saturating_sub);

/// Time to move `size` at `rate`; `Duration::MAX` at zero rate.
impl Div<DataRate> for DataSize {
    type Output = Duration;
    fn div(self, r: DataRate) -> Duration {
        if r.0 == 0 {
            return Duration::MAX;
        }
        // Round up so that a paced sender never runs ahead of its rate.
        let num = self.0 as u128 * 8 * 1_000_000;
        Duration(num.div_ceil(r.0 as u128).min(i64::MAX as u128 / 4) as i64)
    }
}

/// Data moved at `rate` during `d` (rounded down).
impl Mul<Duration> for DataRate {
    type Output = DataSize;
    fn mul(self, d: Duration) -> DataSize {
        if d.0 <= 0 {
            return DataSize::ZERO;
        }
        DataSize((self.0 as u128 * d.0 as u128 / 8_000_000) as u64)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.0;
        if us.rem_euclid(1_000_000) == 0 {
            write!(f, "{}s", us / 1_000_000)
        } else if us.rem_euclid(1000) == 0 {
            write!(f, "{}ms", us / 1000)
        } else {
            write!(f, "{}us", us)
        }
    }
}
impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1_000_000 && b.is_multiple_of(1000) {
            write!(f, "{}kB", b / 1000)
        } else {
            write!(f, "{}B", b)
        }
    }
}
impl fmt::Display for DataRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        if b >= 1e6 {
            write!(f, "{} Mbps", trim(b / 1e6))
        } else if b >= 1e3 {
            write!(f, "{} kbps", trim(b / 1e3))
        } else {
            write!(f, "{} bps", self.0)
        }
    }
}

fn trim(x: f64) -> String {
    let s = format!("{:.3}", x);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Why a unit string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is not a number followed by a unit")]
    NotANumber(String),
    #[error("unknown unit '{unit}' (expected one of {expected})")]
    UnknownUnit { unit: String, expected: &'static str },
    #[error("'{0}' must not be negative")]
    Negative(String),
    #[error("'{0}' is out of range")]
    OutOfRange(String),
    /// Text that is only a number ("3"): it could mean any unit of its kind,
    /// and a dropped unit is a likelier cause than a wish for the base unit.
    #[error("\"{text}\" has no unit; write {} ({}s: {})", kind.suggest(text), kind.name(), kind.units())]
    NoUnit { text: String, kind: QuantityKind },
}

fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .unwrap_or(s.len());
    // "1e3ms": the 'e' belongs to the number only if followed by a digit or sign.
    let (mut num, mut unit) = (&s[..idx], s[idx..].trim());
    if let Some(p) = num.find(['e', 'E']) {
        let tail = &num[p + 1..];
        if tail.is_empty() || !tail.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            unit = s[p..].trim();
            num = &num[..p];
        }
    }
    let v: f64 = num.parse().map_err(|_| UnitError::NotANumber(s.to_string()))?;
    Ok((v, unit))
}

/// What a configuration quantity measures, which fixes the unit of a bare number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantityKind {
    Duration,
    Rate,
    Size,
}

impl QuantityKind {
    pub const ALL: [QuantityKind; 3] = [QuantityKind::Duration, QuantityKind::Rate, QuantityKind::Size];

    /// "duration", "rate", "size".
    pub fn name(self) -> &'static str {
        match self {
            QuantityKind::Duration => "duration",
            QuantityKind::Rate => "rate",
            QuantityKind::Size => "size",
        }
    }

    pub fn parse(name: &str) -> Option<QuantityKind> {
        QuantityKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The unit of a bare number: "s", "bps", "B".
    pub fn base_unit(self) -> &'static str {
        match self {
            QuantityKind::Duration => "s",
            QuantityKind::Rate => "bps",
            QuantityKind::Size => "B",
        }
    }

    /// The units a value of this kind takes, for messages.
    pub fn units(self) -> &'static str {
        match self {
            QuantityKind::Duration => Duration::UNITS,
            QuantityKind::Rate => DataRate::UNITS,
            QuantityKind::Size => DataSize::UNITS,
        }
    }

    /// `number` with the two units it most likely meant: `"3kbps", "3Mbps", ...`.
    fn suggest(self, number: &str) -> String {
        let units: [&str; 2] = match self {
            QuantityKind::Duration => ["ms", "s"],
            QuantityKind::Rate => ["kbps", "Mbps"],
            QuantityKind::Size => ["B", "kB"],
        };
        format!("\"{number}{}\", \"{number}{}\", ...", units[0], units[1])
    }

    /// A value with its unit, for messages.
    pub fn example(self) -> &'static str {
        match self {
            QuantityKind::Duration => "25ms",
            QuantityKind::Rate => "3Mbps",
            QuantityKind::Size => "1500B",
        }
    }

    /// `text` (with its unit) as a number in the base unit — seconds, bits
    /// per second or bytes — by the one rule (`Quantity`).
    pub fn parse_base(self, text: &str) -> Result<f64, UnitError> {
        match self {
            QuantityKind::Duration => Duration::from_text(text).map(Duration::as_secs_f64),
            QuantityKind::Rate => DataRate::from_text(text).map(|r| r.bps() as f64),
            QuantityKind::Size => DataSize::from_text(text).map(|s| s.bytes() as f64),
        }
    }

    /// A bare number (in the base unit), checked and rounded as configuration
    /// reads it, back in the base unit.
    pub fn number_base(self, v: f64) -> Result<f64, UnitError> {
        match self {
            QuantityKind::Duration => Duration::from_number(v).map(Duration::as_secs_f64),
            QuantityKind::Rate => DataRate::from_number(v).map(|r| r.bps() as f64),
            QuantityKind::Size => DataSize::from_number(v).map(|s| s.bytes() as f64),
        }
    }
}

/// The one way configuration turns values into durations, rates and sizes —
/// scenario fields, controller, encoder and FEC parameters, and Python alike.
///
/// **The rule:** text carries its unit (`"25ms"`, `"3Mbps"`, `"1500B"`), and
/// text without one (`"3"`) is refused, naming the units it could mean; a
/// bare number — a TOML number, not text — is in the base unit of the
/// field's kind: **seconds** for durations, **bits per second** for rates,
/// **bytes** for sizes. Negative, non-finite and absurdly large values are
/// refused; the value is rounded to the type's resolution (1 µs, 1 bit/s,
/// 1 byte).
///
/// ```
/// use rtcc_core::units::{DataRate, DataSize, Duration, Quantity};
/// assert_eq!(Duration::from_number(1.0).unwrap(), Duration::from_secs(1));
/// assert_eq!(Duration::from_number(1.0).unwrap(), Duration::from_text("1s").unwrap());
/// assert!(Duration::from_text("1").is_err()); // text names its unit
/// assert_eq!(DataRate::from_text("3Mbps").unwrap(), DataRate::from_number(3e6).unwrap());
/// assert_eq!(DataSize::from_number(1500.0).unwrap(), DataSize::from_bytes(1500));
/// assert!(Duration::from_number(-1.0).is_err());
/// ```
pub trait Quantity: Sized + Copy + fmt::Display {
    const KIND: QuantityKind;
    /// Units accepted, for messages.
    const UNITS: &'static str;
    /// Largest value, in the type's resolution (µs, bit/s, byte).
    const LIMIT: f64;
    /// Each unit's spellings and its size in the type's resolution (`""` =
    /// the base unit).
    const SCALES: &'static [(&'static [&'static str], f64)];
    /// From a value in the type's resolution, rounded.
    fn from_resolution(v: f64) -> Self;

    /// `v` (finite, non-negative) in `unit` in the type's resolution; `None`
    /// for an unknown unit.
    fn scaled(v: f64, unit: &str) -> Option<f64> {
        Self::SCALES.iter().find(|(names, _)| names.contains(&unit)).map(|(_, k)| v * k)
    }

    /// A bare number, in the base unit.
    fn from_number(v: f64) -> Result<Self, UnitError> {
        Self::checked(v, "", &number_text(v))
    }

    /// Text with its unit ("25ms"); a number without one ("3") is refused.
    fn from_text(text: &str) -> Result<Self, UnitError> {
        let (v, unit) = split_number(text)?;
        if unit.is_empty() {
            return Err(UnitError::NoUnit { text: text.trim().to_string(), kind: Self::KIND });
        }
        Self::checked(v, unit, text.trim())
    }

    #[doc(hidden)]
    fn checked(v: f64, unit: &str, text: &str) -> Result<Self, UnitError> {
        if !v.is_finite() {
            return Err(UnitError::OutOfRange(text.to_string()));
        }
        if v < 0.0 {
            return Err(UnitError::Negative(text.to_string()));
        }
        let x = Self::scaled(v, unit)
            .ok_or_else(|| UnitError::UnknownUnit { unit: unit.to_string(), expected: Self::UNITS })?;
        if x > Self::LIMIT {
            return Err(UnitError::OutOfRange(text.to_string()));
        }
        Ok(Self::from_resolution(x))
    }
}

fn number_text(v: f64) -> String {
    format!("{v}")
}

/// `Quantity` for a unit newtype over `$int`, and `FromStr` by its rule.
macro_rules! quantity {
    ($T:ident($int:ty), $kind:ident, $units:literal, $limit:expr, $scales:expr, $(#[$doc:meta])*) => {
        impl Quantity for $T {
            const KIND: QuantityKind = QuantityKind::$kind;
            const UNITS: &'static str = $units;
            const LIMIT: f64 = $limit;
            const SCALES: &'static [(&'static [&'static str], f64)] = $scales;
            fn from_resolution(v: f64) -> Self {
                $T(v.round() as $int)
            }
        }

        impl std::str::FromStr for $T {
            type Err = UnitError;
            $(#[$doc])*
            fn from_str(s: &str) -> Result<Self, UnitError> {
                $T::from_text(s)
            }
        }
    };
}

quantity!(
    Duration(i64),
    Duration,
    "us, ms, s, min",
    1e15, // µs, ~31 years
    &[(&["", "s", "sec"], 1e6), (&["ms"], 1e3), (&["us", "µs"], 1.0), (&["min"], 60e6)],
    /// "25ms", "1.5s", "200us", "2min"; a bare number is seconds (`Quantity`).
);
// Case matters: "MBps" would be megabytes, not megabits.
quantity!(
    DataRate(u64),
    Rate,
    "bps, kbps, Mbps, Gbps",
    1e13,
    &[(&["", "bps", "bit/s"], 1.0), (&["kbps", "Kbps", "kbit/s"], 1e3), (&["Mbps", "Mbit/s"], 1e6), (&["Gbps", "Gbit/s"], 1e9)],
    /// "3Mbps", "500 kbps", "1.2Gbps", "64000bps"; a bare number is bits per
    /// second (`Quantity`).
);
quantity!(
    DataSize(u64),
    Size,
    "B, kB, MB, KiB, MiB",
    1e15,
    &[(&["", "B", "bytes"], 1.0), (&["kB", "KB"], 1e3), (&["MB"], 1e6), (&["KiB"], 1024.0), (&["MiB"], 1048576.0)],
    /// "1500B", "64kB", "1MB" (decimal); a bare number is bytes (`Quantity`).
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        assert_eq!("25ms".parse::<Duration>().unwrap(), Duration::from_millis(25));
        assert_eq!("1.5s".parse::<Duration>().unwrap(), Duration::from_micros(1_500_000));
        assert_eq!("3Mbps".parse::<DataRate>().unwrap(), DataRate::from_mbps(3));
        assert_eq!("500 kbps".parse::<DataRate>().unwrap(), DataRate::from_kbps(500));
        assert_eq!("1500B".parse::<DataSize>().unwrap(), DataSize::from_bytes(1500));
        assert_eq!(DataRate::from_kbps(2500).to_string(), "2.5 Mbps");
        assert_eq!(Duration::from_millis(25).to_string(), "25ms");
        assert!("-1Mbps".parse::<DataRate>().is_err());
        assert!("3 furlongs".parse::<DataRate>().is_err());
        assert!("3MBps".parse::<DataRate>().is_err());
        assert!("".parse::<Duration>().is_err());
        assert!("abc".parse::<Duration>().is_err());
    }

    /// Text without a unit is refused whatever the kind, and the message
    /// names the units it could mean; a number (not text) keeps the base unit.
    #[test]
    fn text_without_a_unit_is_refused() {
        assert_eq!(
            DataRate::from_text("3").unwrap_err().to_string(),
            r#""3" has no unit; write "3kbps", "3Mbps", ... (rates: bps, kbps, Mbps, Gbps)"#
        );
        assert_eq!(
            Duration::from_text(" 0.5 ").unwrap_err().to_string(),
            r#""0.5" has no unit; write "0.5ms", "0.5s", ... (durations: us, ms, s, min)"#
        );
        assert_eq!(
            DataSize::from_text("1500").unwrap_err().to_string(),
            r#""1500" has no unit; write "1500B", "1500kB", ... (sizes: B, kB, MB, KiB, MiB)"#
        );
        assert!(matches!("0".parse::<Duration>(), Err(UnitError::NoUnit { kind: QuantityKind::Duration, .. })));
        assert!(matches!(QuantityKind::Rate.parse_base("1e6"), Err(UnitError::NoUnit { .. })));
        assert_eq!(DataRate::from_number(3.0).unwrap(), DataRate::from_bps(3));
        assert_eq!(QuantityKind::Duration.number_base(0.5).unwrap(), 0.5);
    }

    #[test]
    fn size_over_rate_is_duration() {
        // 1500 B at 12 Mbps = 1 ms.
        assert_eq!(DataSize::from_bytes(1500) / DataRate::from_mbps(12), Duration::from_millis(1));
        assert_eq!(DataRate::from_mbps(12) * Duration::from_millis(1), DataSize::from_bytes(1500));
        assert_eq!(DataSize::from_bytes(1) / DataRate::ZERO, Duration::MAX);
        assert_eq!(
            DataRate::from_size_per(DataSize::from_bytes(375_000), Duration::from_secs(1)),
            DataRate::from_mbps(3)
        );
    }
}
