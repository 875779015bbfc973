//! Parameter declarations: each parameter is one `Param<T>` constant — name,
//! kind with range, typed default and doc (habit 12, quinn's "config is the
//! factory"). Parsing reads it (`Params::get`), config structs build their
//! `DEFAULT` from its typed default, and `rtcc controllers`, the Python
//! bindings and the docs list its `info()`, the default rendered from the same
//! typed value.

use std::marker::PhantomData;

use crate::units::{DataRate, DataSize, Duration};

/// Inclusive range of a numeric parameter, the lower end exclusive when
/// `open_min`; `max` at the type's maximum (`f64::INFINITY`, `Duration::MAX`,
/// ...) means unbounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds<T> {
    pub min: T,
    pub max: T,
    pub open_min: bool,
}

/// What a parameter holds, with its range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Number(Bounds<f64>),
    /// A whole number; fractions are refused.
    Integer(Bounds<i64>),
    Duration(Bounds<Duration>),
    Rate(Bounds<DataRate>),
    Size(Bounds<DataSize>),
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// Free text the owner parses ("1280x720").
    Text,
}

impl Kind {
    /// "number", "integer", "duration", "rate", "size", "bool", "choice", "text".
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Number(_) => "number",
            Kind::Integer(_) => "integer",
            Kind::Duration(_) => "duration",
            Kind::Rate(_) => "rate",
            Kind::Size(_) => "size",
            Kind::Bool => "bool",
            Kind::Choice(_) => "choice",
            Kind::Text => "text",
        }
    }

    const fn open_min(self) -> Kind {
        match self {
            Kind::Number(b) => Kind::Number(Bounds { open_min: true, ..b }),
            Kind::Integer(b) => Kind::Integer(Bounds { open_min: true, ..b }),
            Kind::Duration(b) => Kind::Duration(Bounds { open_min: true, ..b }),
            Kind::Rate(b) => Kind::Rate(Bounds { open_min: true, ..b }),
            Kind::Size(b) => Kind::Size(Bounds { open_min: true, ..b }),
            k => k,
        }
    }
}

/// A declared default, typed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Number(f64),
    Integer(i64),
    Duration(Duration),
    Rate(DataRate),
    Size(DataSize),
    Bool(bool),
    Text(&'static str),
    /// Not set: an optional parameter's `none` word applies.
    Unset,
}

/// A parameter's declaration without its Rust type: what listings, docs and
/// the unknown-parameter check see. Built only by `Param`'s constructors.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ParamInfo {
    pub name: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    /// Another default that applies in a named case (`("game", 45)`), shown
    /// in listings; the owner's code selects it.
    pub alt: Option<(&'static str, DefaultValue)>,
    /// Optional parameters: the word that leaves them unset ("none", "run");
    /// "none" and "off" are always accepted, and so is 0 for a duration.
    pub none: Option<&'static str>,
    pub doc: &'static str,
}

impl ParamInfo {
    /// The default as a scenario would write it: "1Mbps", "100ms", "0.5",
    /// "48.5 (game: 45)".
    pub fn default_text(&self) -> String {
        let main = self.show(self.default);
        match self.alt {
            Some((case, v)) => format!("{main} ({case}: {})", self.show(v)),
            None => main,
        }
    }

    fn show(&self, v: DefaultValue) -> String {
        match v {
            DefaultValue::Number(x) => number_text(x),
            DefaultValue::Integer(i) => integer_text(i),
            DefaultValue::Duration(d) => d.to_string(),
            DefaultValue::Rate(r) => rate_text(r),
            DefaultValue::Size(s) => s.to_string(),
            DefaultValue::Bool(b) => b.to_string(),
            DefaultValue::Text(s) => s.to_string(),
            DefaultValue::Unset => self.none.unwrap_or("none").to_string(),
        }
    }

    /// The accepted values, for listings and errors: "[0.001, 1]",
    /// "(0s, 10s]", "≥ 0bps", "v2, classic"; `None` for free text.
    pub fn range_text(&self) -> Option<String> {
        let mut s = self.bounds_text()?;
        if let Some(word) = self.none {
            s = format!("{s}, or \"{word}\"");
        }
        Some(s)
    }

    pub(super) fn bounds_text(&self) -> Option<String> {
        Some(match self.kind {
            Kind::Number(b) => bounds_text(b, f64::INFINITY, number_text),
            Kind::Integer(b) => bounds_text(b, i64::MAX, integer_text),
            Kind::Duration(b) => bounds_text(b, Duration::MAX, |d| d.to_string()),
            Kind::Rate(b) => bounds_text(b, DataRate::MAX, rate_text),
            Kind::Size(b) => bounds_text(b, DataSize::MAX, |s| s.to_string()),
            Kind::Bool => "true or false".to_string(),
            Kind::Choice(allowed) => allowed.join(", "),
            Kind::Text => return None,
        })
    }
}

/// Whether a declaration's default lies in its range: checked as each
/// declaration is built, so an inconsistent one does not compile.
const fn default_in_range(info: &ParamInfo) -> bool {
    const fn within(v: f64, min: f64, max: f64, open_min: bool) -> bool {
        (if open_min { v > min } else { v >= min }) && v <= max
    }
    const fn within_u(v: u64, min: u64, max: u64, open_min: bool) -> bool {
        (if open_min { v > min } else { v >= min }) && v <= max
    }
    match (info.kind, info.default) {
        (Kind::Number(b), DefaultValue::Number(v)) => within(v, b.min, b.max, b.open_min),
        (Kind::Integer(b), DefaultValue::Integer(v)) => (if b.open_min { v > b.min } else { v >= b.min }) && v <= b.max,
        (Kind::Duration(b), DefaultValue::Duration(v)) => {
            let (v, min, max) = (v.as_micros(), b.min.as_micros(), b.max.as_micros());
            (if b.open_min { v > min } else { v >= min }) && v <= max
        }
        (Kind::Rate(b), DefaultValue::Rate(v)) => within_u(v.bps(), b.min.bps(), b.max.bps(), b.open_min),
        (Kind::Size(b), DefaultValue::Size(v)) => within_u(v.bytes(), b.min.bytes(), b.max.bytes(), b.open_min),
        (Kind::Bool, DefaultValue::Bool(_)) | (Kind::Text, DefaultValue::Text(_)) | (_, DefaultValue::Unset) => true,
        (Kind::Choice(allowed), DefaultValue::Text(d)) => {
            let mut i = 0;
            while i < allowed.len() {
                if same(allowed[i], d) {
                    return true;
                }
                i += 1;
            }
            false
        }
        _ => false,
    }
}

/// A number as a scenario would write it: 0.5, 10, 1e12.
fn number_text(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e7 || x.abs() < 1e-4) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A whole number, large ones short: 20, 9e15.
fn integer_text(i: i64) -> String {
    match i.unsigned_abs() >= 10_000_000 && (i as f64) as i64 == i {
        true => number_text(i as f64),
        false => i.to_string(),
    }
}

/// A rate as a scenario would write it: "3Mbps", "0bps".
fn rate_text(r: DataRate) -> String {
    r.to_string().replace(' ', "")
}

fn bounds_text<T: Copy + PartialEq>(b: Bounds<T>, unbounded: T, show: impl Fn(T) -> String) -> String {
    match (b.max == unbounded, b.open_min) {
        (true, false) => format!("≥ {}", show(b.min)),
        (true, true) => format!("> {}", show(b.min)),
        (false, open) => format!("{}{}, {}]", if open { "(" } else { "[" }, show(b.min), show(b.max)),
    }
}

/// A parameter, declared once: `T` is what parsing returns. Build one with
/// `Param::number`, `integer`, `duration`, `rate`, `size`, `flag`, `choice`,
/// `text`, `optional_duration` or `optional_integer`. A default outside its
/// own range does not compile:
///
/// ```compile_fail
/// use rtcc_core::controller::{Param, ParamInfo};
/// const GAIN: Param<f64> = Param::number("gain", 2.0, 0.0, 1.0, "EWMA gain");
/// const LIST: [ParamInfo; 1] = [GAIN.info()];
/// ```
#[derive(Debug)]
pub struct Param<T> {
    pub(super) info: ParamInfo,
    ty: PhantomData<fn() -> T>,
}

impl<T> Clone for Param<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Param<T> {}

impl<T> Param<T> {
    const fn new(name: &'static str, kind: Kind, default: DefaultValue, doc: &'static str) -> Self {
        let info = ParamInfo { name, kind, default, alt: None, none: None, doc };
        assert!(default_in_range(&info), "a declared default is outside its declared range");
        Param { info, ty: PhantomData }
    }

    /// The declaration for listings and `check_known`.
    pub const fn info(&self) -> ParamInfo {
        self.info
    }

    pub const fn name(&self) -> &'static str {
        self.info.name
    }

    /// The lower end of the range is excluded: `(0, 1]`.
    pub const fn above_min(mut self) -> Self {
        self.info.kind = self.info.kind.open_min();
        assert!(default_in_range(&self.info), "a declared default is outside its declared range");
        self
    }
}

impl Param<f64> {
    pub const fn number(name: &'static str, default: f64, min: f64, max: f64, doc: &'static str) -> Self {
        Param::new(name, Kind::Number(Bounds { min, max, open_min: false }), DefaultValue::Number(default), doc)
    }

    /// Lists `value` as the default in `case` where it differs (the owner
    /// selects it, with `Params::get_or`).
    pub const fn or_in(mut self, case: &'static str, value: f64) -> Self {
        if value != self.default() {
            self.info.alt = Some((case, DefaultValue::Number(value)));
        }
        self
    }
}

impl<T: Integer> Param<T> {
    /// A whole number in `[min, max]`, which must fit `T`.
    pub const fn integer(name: &'static str, default: i64, min: i64, max: i64, doc: &'static str) -> Self {
        Param::new(name, Kind::Integer(Bounds { min, max, open_min: false }), DefaultValue::Integer(default), doc)
    }
}

impl Param<Duration> {
    pub const fn duration(
        name: &'static str,
        default: Duration,
        min: Duration,
        max: Duration,
        doc: &'static str,
    ) -> Self {
        Param::new(name, Kind::Duration(Bounds { min, max, open_min: false }), DefaultValue::Duration(default), doc)
    }

    /// Lists `value` as the default in `case` where it differs (the owner
    /// selects it, with `Params::get_or`).
    pub const fn or_in(mut self, case: &'static str, value: Duration) -> Self {
        if value.as_micros() != self.default().as_micros() {
            self.info.alt = Some((case, DefaultValue::Duration(value)));
        }
        self
    }
}

impl Param<DataRate> {
    pub const fn rate(name: &'static str, default: DataRate, min: DataRate, max: DataRate, doc: &'static str) -> Self {
        Param::new(name, Kind::Rate(Bounds { min, max, open_min: false }), DefaultValue::Rate(default), doc)
    }
}

impl Param<DataSize> {
    pub const fn size(name: &'static str, default: DataSize, min: DataSize, max: DataSize, doc: &'static str) -> Self {
        Param::new(name, Kind::Size(Bounds { min, max, open_min: false }), DefaultValue::Size(default), doc)
    }
}

impl Param<bool> {
    pub const fn flag(name: &'static str, default: bool, doc: &'static str) -> Self {
        Param::new(name, Kind::Bool, DefaultValue::Bool(default), doc)
    }
}

impl Param<&'static str> {
    /// One of `allowed`; reads as the matching `allowed` entry.
    pub const fn choice(
        name: &'static str,
        default: &'static str,
        allowed: &'static [&'static str],
        doc: &'static str,
    ) -> Self {
        Param::new(name, Kind::Choice(allowed), DefaultValue::Text(default), doc)
    }
}

impl Param<String> {
    /// Free text its owner parses further.
    pub const fn text(name: &'static str, default: &'static str, doc: &'static str) -> Self {
        Param::new(name, Kind::Text, DefaultValue::Text(default), doc)
    }
}

impl Param<Option<Duration>> {
    /// A duration in `[min, max]`, or unset: `none` (the word listed for
    /// it), "none", "off" or 0.
    pub const fn optional_duration(
        name: &'static str,
        default: Option<Duration>,
        min: Duration,
        max: Duration,
        none: &'static str,
        doc: &'static str,
    ) -> Self {
        let d = match default {
            Some(d) => DefaultValue::Duration(d),
            None => DefaultValue::Unset,
        };
        let mut p = Param::new(name, Kind::Duration(Bounds { min, max, open_min: false }), d, doc);
        p.info.none = Some(none);
        p
    }
}

impl Param<Option<u64>> {
    /// A whole number in `[min, max]`, or unset (`none`) by default.
    pub const fn optional_integer(
        name: &'static str,
        min: i64,
        max: i64,
        none: &'static str,
        doc: &'static str,
    ) -> Self {
        let mut p = Param::new(name, Kind::Integer(Bounds { min, max, open_min: false }), DefaultValue::Unset, doc);
        p.info.none = Some(none);
        p
    }
}

/// `a == b` in a constant (a choice's default selecting an enum variant).
pub(crate) const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The declared default as a constant, for config structs' `DEFAULT`s.
macro_rules! typed_default {
    ($t:ty, $variant:ident) => {
        impl Param<$t> {
            pub const fn default(&self) -> $t {
                match self.info.default {
                    DefaultValue::$variant(x) => x,
                    _ => panic!("declared default of another kind"),
                }
            }
        }
    };
}
macro_rules! integer_default {
    ($($t:ty),*) => {$(
        impl Param<$t> {
            /// Within `$t` by the declaration's range.
            pub const fn default(&self) -> $t {
                match self.info.default {
                    DefaultValue::Integer(x) => x as $t,
                    _ => panic!("declared default of another kind"),
                }
            }
        }
    )*};
}
integer_default!(u16, u32, u64, i32);
typed_default!(f64, Number);
typed_default!(i64, Integer);
typed_default!(Duration, Duration);
typed_default!(DataRate, Rate);
typed_default!(DataSize, Size);
typed_default!(bool, Bool);
typed_default!(&'static str, Text);

impl Param<Option<Duration>> {
    pub const fn default(&self) -> Option<Duration> {
        match self.info.default {
            DefaultValue::Duration(d) => Some(d),
            _ => None,
        }
    }
}

/// Integer types a parameter can be read as.
pub trait Integer: Sized + TryFrom<i64> {}
impl Integer for u16 {}
impl Integer for u32 {}
impl Integer for u64 {}
impl Integer for i32 {}
impl Integer for i64 {}
