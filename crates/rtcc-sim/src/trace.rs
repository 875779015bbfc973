//! Link capacity over time: synthetic schedules (steps, pulse, square wave,
//! ramp) and Mahimahi packet-delivery traces (see `traces/README.md`).
//!
//! A Mahimahi trace is a list of millisecond timestamps; each line is one opportunity
//! to deliver 1500 bytes. The trace loops with period `T` = last timestamp:
//! opportunity `i` of loop `k` happens at `t_i + k*T`, so a final `T` and a
//! leading `0` of the next loop both count. Service is byte-level: several
//! small packets share an opportunity, a large packet spans several, a packet
//! leaves at the opportunity that carries its last byte, and bytes nobody
//! uses are lost ([`OpportunityCursor`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rtcc_core::units::{DataRate, Duration, Time};

/// Bytes one Mahimahi opportunity carries (one MTU).
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// Largest trace file read: 64 MiB, about 20 times the largest Mahimahi
/// trace shipped (TMobile-LTE-driving.down, 3.4 MB). At two bytes a line at
/// least, its timestamps take at most 256 MiB in memory.
pub const MAX_TRACE_BYTES: u64 = 64 << 20;

fn too_big(len: u64) -> String {
    format!(
        "{len} bytes is more than a trace may hold ({} MiB, about 20 times the largest Mahimahi trace)",
        MAX_TRACE_BYTES >> 20
    )
}

/// Longest piece of a bad line echoed in an error: enough to find the line,
/// too little to turn a trace error into a way of reading some other file.
const EXCERPT_CHARS: usize = 20;

/// `s` cut to [`EXCERPT_CHARS`] characters (`…` marks the cut), control
/// characters escaped, so an error never prints much of an arbitrary file.
pub fn excerpt(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == EXCERPT_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || c == '\u{feff}' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Timestamps above this (about 31 years) are refused so that µs arithmetic
/// never overflows.
const MAX_TIMESTAMP_MS: u64 = 1_000_000_000_000;

/// Why a trace file was refused; displays as `PATH:LINE: reason`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {reason}", line_suffix(.line))]
pub struct TraceError {
    pub path: String,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    pub reason: String,
}

fn line_suffix(line: &Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

/// A trace file's text; errors name `path`. Only a regular file of at most
/// [`MAX_TRACE_BYTES`] is read, and the size is checked before reading, so a
/// device (`/dev/zero`), a FIFO or a huge file is refused at once rather than
/// read until memory runs out. A UTF-8 byte-order mark at the start is kept
/// (each parser skips it).
pub fn read_trace_text(path: &Path) -> Result<String, TraceError> {
    use std::io::Read;
    let name = path.display().to_string();
    let err = |reason: String| TraceError { path: name.clone(), line: None, reason };
    let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a directory" } else { "not a regular file (a device, FIFO or socket)" };
        return Err(err(format!("is {what}; a trace must be a text file of timestamps")));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(err(too_big(meta.len())));
    }
    let file = std::fs::File::open(path).map_err(|e| err(format!("cannot read: {e}")))?;
    // The size may change between the check and the read (or be reported
    // as 0, as /proc files are): read one byte past the limit at most.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_TRACE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| err(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(err(too_big(bytes.len() as u64)));
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let line = bytes[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        TraceError {
            path: name.clone(),
            line: Some(line),
            reason: "not text (invalid UTF-8); a trace is a text file".to_string(),
        }
    })
}

/// A parsed Mahimahi trace: opportunity times of one loop, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MahimahiTrace {
    times_ms: Vec<u64>,
    /// How many timestamps equal the period (they coincide with the start of
    /// the next loop).
    at_period: usize,
}

impl MahimahiTrace {
    /// Parses trace text; errors name the source as `<trace>`.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        Self::parse_named(text, "<trace>")
    }

    /// Reads and parses a trace file; errors name `path` ([`read_trace_text`]).
    pub fn load(path: &Path) -> Result<Self, TraceError> {
        let text = read_trace_text(path)?;
        Self::parse_named(&text, &path.display().to_string())
    }

    /// Parses trace text, naming it `name` in errors.
    pub fn parse_named(text: &str, name: &str) -> Result<Self, TraceError> {
        let err = |line: Option<usize>, reason: String| TraceError { path: name.to_string(), line, reason };
        let mut times_ms: Vec<u64> = Vec::new();
        let mut last_line = 0;
        // A UTF-8 byte-order mark (some editors write one) is not content.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.lines().enumerate() {
            let s = raw.trim();
            if s.is_empty() {
                continue;
            }
            let lineno = i + 1;
            let t: u64 = match s.parse() {
                Ok(t) => t,
                Err(_) if s.starts_with('-') && s[1..].parse::<u64>().is_ok() => {
                    return Err(err(Some(lineno), format!("negative timestamp '{}'", excerpt(s))))
                }
                Err(_) => {
                    return Err(err(
                        Some(lineno),
                        format!("'{}' is not a timestamp (expected a non-negative integer number of ms)", excerpt(s)),
                    ))
                }
            };
            if t > MAX_TIMESTAMP_MS {
                return Err(err(Some(lineno), format!("timestamp {t} ms is out of range")));
            }
            if let Some(&prev) = times_ms.last() {
                if t < prev {
                    return Err(err(
                        Some(lineno),
                        format!(
                            "timestamp {t} is smaller than the previous one ({prev}); timestamps must not decrease"
                        ),
                    ));
                }
            }
            times_ms.push(t);
            last_line = lineno;
        }
        let Some(&period) = times_ms.last() else {
            return Err(err(None, "no delivery opportunities (empty trace)".to_string()));
        };
        if period == 0 {
            return Err(err(Some(last_line), "the last timestamp is 0, so the trace has a zero period".to_string()));
        }
        let at_period = times_ms.iter().rev().take_while(|&&t| t == period).count();
        Ok(MahimahiTrace { times_ms, at_period })
    }

    /// Loop period `T` in ms (the last timestamp).
    pub fn period_ms(&self) -> u64 {
        *self.times_ms.last().expect("a parsed trace is never empty")
    }

    /// Opportunities per loop (lines in the file).
    pub fn opportunities(&self) -> usize {
        self.times_ms.len()
    }

    /// Opportunity times of one loop, in ms.
    pub fn times_ms(&self) -> &[u64] {
        &self.times_ms
    }

    /// Long-run capacity: `lines * 1500 B` per `T` ms (12 Mbps per line per ms).
    pub fn mean_rate(&self) -> DataRate {
        let bits = self.times_ms.len() as f64 * (OPPORTUNITY_BYTES * 8) as f64;
        DataRate::from_bps_f64(bits * 1000.0 / self.period_ms() as f64)
    }

    fn period_us(&self) -> i64 {
        self.period_ms() as i64 * 1000
    }

    /// Trace time (µs) of opportunity `g` counted from the start of loop 0:
    /// `g = k*n + i` happens at `t_i + k*T`.
    pub fn opportunity_us(&self, g: u64) -> i64 {
        let n = self.times_ms.len() as u64;
        let (k, i) = (g / n, (g % n) as usize);
        let ms = self.times_ms[i].saturating_add(k.saturating_mul(self.period_ms()));
        ms.min(i64::MAX as u64 / 4000) as i64 * 1000
    }

    /// Opportunities strictly before `x_us` on the bi-infinite periodic train
    /// (loops k ∈ ℤ), up to a constant: only differences are meaningful.
    fn rank(&self, x_us: i64) -> i64 {
        let p = self.period_us();
        let n = self.times_ms.len() as i64;
        let (q, r) = (x_us.div_euclid(p), x_us.rem_euclid(p));
        let below_r = self.times_ms.partition_point(|&t| (t as i64) * 1000 < r) as i64;
        // At r = 0 the previous loop's final timestamps sit exactly at x and are
        // not before it.
        let at_edge = if r == 0 { self.at_period as i64 } else { 0 };
        q * n + below_r - at_edge
    }

    /// Opportunities of loops k ≥ 0 (the trace as replayed from time 0)
    /// strictly before `x_us`; also the index of the first one at or after it.
    pub fn count_before(&self, x_us: i64) -> u64 {
        // For x > 0, rank(x) is exactly this count: counted from rank(0) =
        // −at_period it would add the loop −1 opportunities sitting at 0, which
        // the replayed trace does not have.
        if x_us <= 0 {
            0
        } else {
            self.rank(x_us) as u64
        }
    }

    /// Opportunities in `[a_us, b_us)` of the bi-infinite periodic train, used
    /// for rate estimates that should not see a fake gap before time 0.
    pub fn count_periodic(&self, a_us: i64, b_us: i64) -> u64 {
        if b_us <= a_us {
            return 0;
        }
        (self.rank(b_us) - self.rank(a_us)).max(0) as u64
    }
}

/// The formats a trace file may have (`format` in a capacity table; detected
/// from the content when the table gives none). The bundled traces' README
/// describes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// One line per 1500-byte delivery opportunity, in ms (replayed byte by byte).
    Mahimahi,
    /// Pensieve's cooked traces: `time_s throughput` per line, Mbps unless
    /// `unit` says otherwise; row i's value covers `(time[i-1], time[i]]`
    /// and row 0's is never used (Pensieve's simulator reads them so).
    Pensieve,
    /// OpenNetLab gym JSON: `uplink.trace_pattern`, entries of `duration`
    /// (ms) and `capacity` (kbps) played in order and repeated. Only the
    /// capacity is read: an entry's `loss`, `jitter` or `rtt` is not.
    OpenNetLab,
    /// G-NetTrack Pro CSV (the UCC 5G dataset): each row's `DL_bitrate`
    /// (kbps) for one second, as rows come about once a second and their
    /// clock repeats or skips seconds.
    GNetTrack,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 4] =
        [TraceFormat::Mahimahi, TraceFormat::Pensieve, TraceFormat::OpenNetLab, TraceFormat::GNetTrack];

    /// The name a capacity table's `format` takes.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mahimahi => "mahimahi",
            TraceFormat::Pensieve => "pensieve",
            TraceFormat::OpenNetLab => "opennetlab",
            TraceFormat::GNetTrack => "gnettrack",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// "mahimahi, pensieve, opennetlab, gnettrack", for errors.
    pub fn known() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// The unit of the file's rates when the table gives none (a Mahimahi
    /// trace has no rates, only opportunities).
    pub fn default_unit(self) -> Option<&'static str> {
        match self {
            TraceFormat::Mahimahi => None,
            TraceFormat::Pensieve => Some("Mbps"),
            TraceFormat::OpenNetLab | TraceFormat::GNetTrack => Some("kbps"),
        }
    }

    /// The format the first non-blank line shows: `{` starts a JSON object,
    /// a header naming `DL_bitrate` a G-NetTrack CSV, one integer a Mahimahi
    /// line, two numbers a Pensieve row.
    pub fn detect(text: &str) -> Option<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
        if first.starts_with('{') {
            return Some(TraceFormat::OpenNetLab);
        }
        if first.split(',').any(|c| c.trim() == "DL_bitrate") {
            return Some(TraceFormat::GNetTrack);
        }
        if first.parse::<u64>().is_ok() {
            return Some(TraceFormat::Mahimahi);
        }
        let fields: Vec<&str> = first.split_whitespace().collect();
        if fields.len() == 2 && fields.iter().all(|f| f.parse::<f64>().is_ok()) {
            return Some(TraceFormat::Pensieve);
        }
        None
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The units a rate trace's `unit` may name, in bits/s.
pub const RATE_UNITS: [(&str, f64); 4] = [("bps", 1.0), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)];

/// Bits/s per `unit` (one of [`RATE_UNITS`]).
pub fn unit_bps(unit: &str) -> Option<f64> {
    RATE_UNITS.iter().find(|(n, _)| *n == unit).map(|&(_, b)| b)
}

/// Rates above this in a rate trace are refused unless the capacity table
/// says what to do with them (`drop_above`): no access link these traces
/// record comes near it (the UCC 5G set peaks at 533 Mbps), while three of
/// the OpenNetLab gym's traces hold single 8–33 Gbps entries, recording
/// artefacts that would multiply their mean rate by up to ten.
pub const IMPLAUSIBLE_RATE: DataRate = DataRate::from_mbps(1000);

/// A trace of rates: pieces of constant rate played in order, looping.
#[derive(Debug, Clone, PartialEq)]
pub struct RateTrace {
    format: TraceFormat,
    /// (length in µs, rate in bits/s), in the order played; every length
    /// positive.
    pieces: Vec<(f64, f64)>,
    /// Where each piece is in the file, for errors: its 1-based line, or
    /// its index in an OpenNetLab `trace_pattern`.
    rows: Vec<usize>,
}

impl RateTrace {
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// (length µs, rate bits/s) of each piece, in play order.
    pub fn pieces(&self) -> &[(f64, f64)] {
        &self.pieces
    }

    /// One loop's length.
    pub fn duration(&self) -> Duration {
        Duration::from_micros(self.pieces.iter().map(|p| p.0).sum::<f64>().round() as i64)
    }

    /// Time-weighted mean rate over one loop.
    pub fn mean_rate(&self) -> DataRate {
        let len: f64 = self.pieces.iter().map(|p| p.0).sum();
        let bits: f64 = self.pieces.iter().map(|p| p.0 * p.1).sum();
        DataRate::from_bps_f64(bits / len)
    }

    pub fn peak_rate(&self) -> DataRate {
        DataRate::from_bps_f64(self.pieces.iter().map(|p| p.1).fold(0.0, f64::max))
    }

    /// The first piece above `limit`: where it is in the file (`line 12`,
    /// `uplink.trace_pattern[3]`) and its rate.
    pub fn first_above(&self, limit: DataRate) -> Option<(String, DataRate)> {
        let l = limit.bps() as f64;
        let i = self.pieces.iter().position(|p| p.1 > l)?;
        let place = match self.format {
            TraceFormat::OpenNetLab => format!("uplink.trace_pattern[{}]", self.rows[i]),
            _ => format!("line {}", self.rows[i]),
        };
        Some((place, DataRate::from_bps_f64(self.pieces[i].1)))
    }

    /// The trace without its pieces above `limit` (their time goes too) and
    /// how many there were; an error if nothing is left.
    pub fn without_above(&self, limit: DataRate) -> Result<(RateTrace, usize), String> {
        let l = limit.bps() as f64;
        let keep: Vec<usize> = (0..self.pieces.len()).filter(|&i| self.pieces[i].1 <= l).collect();
        if keep.is_empty() {
            return Err(format!("every rate is above drop_above ({limit}), so nothing is left"));
        }
        let dropped = self.pieces.len() - keep.len();
        let trace = RateTrace {
            format: self.format,
            pieces: keep.iter().map(|&i| self.pieces[i]).collect(),
            rows: keep.iter().map(|&i| self.rows[i]).collect(),
        };
        Ok((trace, dropped))
    }

    /// The trace as a looping step schedule with each rate × `scale`; the
    /// run starts at trace time `offset` (wrapped into one loop). Piece
    /// edges are rounded to whole µs, and a piece shorter than that is
    /// left out.
    pub fn capacity(&self, offset: Duration, scale: f64) -> Result<Capacity, String> {
        let mut edges = Vec::with_capacity(self.pieces.len());
        let mut at = 0.0_f64;
        for &(len, bps) in &self.pieces {
            edges.push((at.round() as i64, bps * scale));
            at += len;
        }
        let period = at.round() as i64;
        if period <= 0 {
            return Err("the trace lasts less than 1 µs".into());
        }
        // Of pieces starting at the same µs only the last one plays.
        let mut starts: Vec<(i64, f64)> = Vec::with_capacity(edges.len());
        for (t, r) in edges {
            if t >= period {
                break;
            }
            match starts.last_mut() {
                Some(last) if last.0 == t => last.1 = r,
                _ => starts.push((t, r)),
            }
        }
        // Rotate so that simulation time 0 plays trace time `offset`.
        let off = offset.as_micros().rem_euclid(period);
        let current = starts.partition_point(|s| s.0 <= off) - 1;
        let n = starts.len();
        let mut points: Vec<(i64, f64)> =
            (0..n).map(|k| starts[(current + k) % n]).map(|(t, r)| ((t - off).rem_euclid(period), r)).collect();
        // The piece playing at `offset` starts the run and, begun before
        // it, comes back at the end of the loop.
        points[0].0 = 0;
        if starts[current].0 < off {
            points.push((starts[current].0 - off + period, starts[current].1));
        }
        let points = points.into_iter().map(|(t, r)| (Time::from_micros(t), DataRate::from_bps_f64(r))).collect();
        Capacity::piecewise(points, false, Some(Duration::from_micros(period)))
    }
}

/// A trace file in any of the [`TraceFormat`]s.
#[derive(Debug, Clone, PartialEq)]
pub enum Trace {
    Mahimahi(MahimahiTrace),
    Rates(RateTrace),
}

impl Trace {
    pub fn format(&self) -> TraceFormat {
        match self {
            Trace::Mahimahi(_) => TraceFormat::Mahimahi,
            Trace::Rates(r) => r.format,
        }
    }

    /// Long-run capacity of one loop.
    pub fn mean_rate(&self) -> DataRate {
        match self {
            Trace::Mahimahi(t) => t.mean_rate(),
            Trace::Rates(r) => r.mean_rate(),
        }
    }

    /// One loop's length (a Mahimahi trace: its last timestamp).
    pub fn duration(&self) -> Duration {
        match self {
            Trace::Mahimahi(t) => Duration::from_millis(t.period_ms() as i64),
            Trace::Rates(r) => r.duration(),
        }
    }

    /// Lines of a Mahimahi trace, pieces of a rate trace.
    pub fn samples(&self) -> usize {
        match self {
            Trace::Mahimahi(t) => t.opportunities(),
            Trace::Rates(r) => r.pieces.len(),
        }
    }
}

/// How to read a trace file: its format (detected when `None`) and, for a
/// rate format, bits/s per unit of its numbers (the format's own unit when
/// `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceOptions {
    pub format: Option<TraceFormat>,
    pub unit_bps: Option<f64>,
}

/// Reads a trace file of any known format; errors name `path`.
pub fn load_trace(path: &Path, opts: &TraceOptions) -> Result<Trace, TraceError> {
    let text = read_trace_text(path)?;
    parse_trace(&text, &path.display().to_string(), opts)
}

/// Parses trace text of any known format, naming it `name` in errors. A
/// file that is in no known format, or in another one than `opts.format`,
/// gets one error naming the formats known.
pub fn parse_trace(text: &str, name: &str, opts: &TraceOptions) -> Result<Trace, TraceError> {
    let known = TraceFormat::known();
    let detected = TraceFormat::detect(text);
    let Some(format) = opts.format.or(detected) else {
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let reason = match body.lines().map(str::trim).find(|l| !l.is_empty()) {
            Some(first) => format!("not a trace in a known format ({known}): it starts '{}'", excerpt(first)),
            None => format!("empty trace (nothing in any known format: {known})"),
        };
        return Err(TraceError { path: name.to_string(), line: None, reason });
    };
    let unit = opts.unit_bps.or_else(|| format.default_unit().and_then(unit_bps)).unwrap_or(1.0);
    let parsed = match format {
        TraceFormat::Mahimahi => MahimahiTrace::parse_named(text, name).map(Trace::Mahimahi),
        TraceFormat::Pensieve => parse_pensieve(text, name, unit).map(Trace::Rates),
        TraceFormat::OpenNetLab => parse_opennetlab(text, name, unit).map(Trace::Rates),
        TraceFormat::GNetTrack => parse_gnettrack(text, name, unit).map(Trace::Rates),
    };
    match (parsed, opts.format, detected) {
        (Err(_), Some(given), Some(seen)) if given != seen => Err(TraceError {
            path: name.to_string(),
            line: None,
            reason: format!(
                "is a {seen} trace, not {given} (formats known: {known}); set format = \"{seen}\" or leave it out"
            ),
        }),
        (Err(mut e), Some(given), None) => {
            e.reason = format!("{} (read as format = \"{given}\"; formats known: {known})", e.reason);
            Err(e)
        }
        (parsed, _, _) => parsed,
    }
}

/// A rate that must be a finite, non-negative number.
fn rate_number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// Pensieve's `time_s throughput` rows ([`TraceFormat::Pensieve`]).
fn parse_pensieve(text: &str, name: &str, unit: f64) -> Result<RateTrace, TraceError> {
    let err = |line: usize, reason: String| TraceError { path: name.to_string(), line: Some(line), reason };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows: Vec<(f64, f64, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let fields: Vec<&str> = raw.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let (t, v) = match fields[..] {
            [t, v] => (t, v),
            _ => {
                return Err(err(
                    i + 1,
                    format!("'{}' is not a row 'time_s throughput' (two numbers)", excerpt(raw.trim())),
                ))
            }
        };
        let Some(t) = t.parse::<f64>().ok().filter(|t| t.is_finite() && *t >= 0.0) else {
            return Err(err(i + 1, format!("time '{}' is not a non-negative number of seconds", excerpt(t))));
        };
        let Some(v) = rate_number(v) else {
            return Err(err(i + 1, format!("throughput '{}' is not a non-negative number", excerpt(v))));
        };
        if t > MAX_TIMESTAMP_MS as f64 / 1000.0 {
            return Err(err(i + 1, format!("time {t} s is out of range")));
        }
        if let Some(&(prev, _, _)) = rows.last() {
            if t <= prev {
                return Err(err(
                    i + 1,
                    format!("time {t} is not after the previous one ({prev}); times must increase"),
                ));
            }
        }
        rows.push((t, v, i + 1));
    }
    if rows.len() < 2 {
        return Err(TraceError {
            path: name.to_string(),
            line: None,
            reason: "fewer than two rows; row i's throughput covers (time[i-1], time[i]]".to_string(),
        });
    }
    let pieces = rows.windows(2).map(|w| ((w[1].0 - w[0].0) * 1e6, w[1].1 * unit)).collect();
    Ok(RateTrace { format: TraceFormat::Pensieve, pieces, rows: rows[1..].iter().map(|r| r.2).collect() })
}

/// An OpenNetLab gym schedule ([`TraceFormat::OpenNetLab`]); errors give
/// the JSON path of the entry at fault and its line.
fn parse_opennetlab(text: &str, name: &str, unit: f64) -> Result<RateTrace, TraceError> {
    let err = |line: Option<usize>, reason: String| TraceError { path: name.to_string(), line, reason };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| err(Some(e.line()), format!("not JSON: {}", excerpt_long(&e.to_string()))))?;
    let pattern = doc
        .get("uplink")
        .and_then(|u| u.get("trace_pattern"))
        .and_then(|p| p.as_array())
        .ok_or_else(|| err(None, "no uplink.trace_pattern list (an OpenNetLab gym trace has one)".into()))?;
    let mut pieces = Vec::new();
    let mut rows = Vec::new();
    for (i, entry) in pattern.iter().enumerate() {
        let field = |k: &str| {
            entry.get(k).and_then(|v| v.as_f64()).filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                err(None, format!("uplink.trace_pattern[{i}].{k}: missing or not a non-negative number"))
            })
        };
        let (duration_ms, capacity) = (field("duration")?, field("capacity")?);
        // An entry of no time plays nothing.
        if duration_ms > 0.0 {
            pieces.push((duration_ms * 1000.0, capacity * unit));
            rows.push(i);
        }
    }
    if pieces.is_empty() {
        return Err(err(None, "uplink.trace_pattern has no entry with a positive duration".into()));
    }
    if pieces.iter().map(|p| p.0).sum::<f64>() > MAX_TIMESTAMP_MS as f64 * 1000.0 {
        return Err(err(None, "the entries' durations add up to more than the longest trace".into()));
    }
    Ok(RateTrace { format: TraceFormat::OpenNetLab, pieces, rows })
}

/// A G-NetTrack CSV's `DL_bitrate` column, one second a row ([`TraceFormat::GNetTrack`]).
fn parse_gnettrack(text: &str, name: &str, unit: f64) -> Result<RateTrace, TraceError> {
    let err = |line: Option<usize>, reason: String| TraceError { path: name.to_string(), line, reason };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((h, header)) = lines.next() else { return Err(err(None, "empty (no header row)".into())) };
    let Some(col) = header.split(',').position(|c| c.trim() == "DL_bitrate") else {
        return Err(err(Some(h + 1), "the header row has no DL_bitrate column".into()));
    };
    let (mut pieces, mut rows) = (Vec::new(), Vec::new());
    for (i, line) in lines {
        let cell = line.split(',').nth(col).map(str::trim).unwrap_or("");
        let Some(v) = rate_number(cell) else {
            return Err(err(Some(i + 1), format!("DL_bitrate '{}' is not a non-negative number", excerpt(cell))));
        };
        pieces.push((1e6, v * unit));
        rows.push(i + 1);
    }
    if pieces.is_empty() {
        return Err(err(None, "no rows after the header".into()));
    }
    Ok(RateTrace { format: TraceFormat::GNetTrack, pieces, rows })
}

/// A parser's message, cut at 80 characters (it may quote the file).
fn excerpt_long(s: &str) -> String {
    let mut out: String = s.chars().take(80).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// Environment variable naming the folder of trace sets (`set = ...` in a
/// capacity table), before any other place.
pub const TRACES_ENV: &str = "RTCC_TRACES";

static TRACES_ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Registers the folder of trace sets a program ships (the Python package
/// registers its `data/traces` when it loads); the first call counts.
pub fn register_traces_root(path: PathBuf) {
    let _ = TRACES_ROOT.set(path);
}

/// The folder holding the trace sets: [`TRACES_ENV`] if set, else the one
/// registered, else the source tree's `python/rtcc/data/traces` (tests and
/// examples run from a checkout).
pub fn traces_root() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(TRACES_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = TRACES_ROOT.get() {
        return Some(p.clone());
    }
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rtcc/data/traces");
    tree.is_dir().then_some(tree)
}

/// The sets (sub-folders) under `root`, sorted.
pub fn set_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Where file `file` of trace set `set` is. `Err((field, reason))`, the field
/// being `set` or `file`: a name that is no set, a file outside its set, or
/// no folder of sets at all.
pub fn set_file(set: &str, file: &str) -> Result<PathBuf, (&'static str, String)> {
    let plain = !set.is_empty()
        && !set.starts_with('.')
        && set.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(("set", format!("'{}' is not a set name (letters, digits, '-', '_', '.')", excerpt(set))));
    }
    let inside = Path::new(file).components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if file.is_empty() || !inside {
        return Err(("file", format!("'{}' must be a file inside the set (no '..', not absolute)", excerpt(file))));
    }
    let Some(root) = traces_root() else {
        return Err(("set", format!("no folder of trace sets found; set {TRACES_ENV} to the folder holding them")));
    };
    let folder = root.join(set);
    if !folder.is_dir() {
        let sets = set_names(&root);
        let known = if sets.is_empty() { "none".to_string() } else { sets.join(", ") };
        return Err(("set", format!("no trace set '{set}' in {} (sets: {known})", root.display())));
    }
    Ok(folder.join(file))
}

/// Byte-level server state for a trace-driven link: which opportunity is next
/// and how many of its bytes are still unused. O(1) amortised per packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpportunityCursor {
    /// Global index (`k*n + i`) of the earliest opportunity with unused bytes.
    next: u64,
    /// Unused bytes in opportunity `next`.
    left: u64,
    /// Bytes per opportunity (1500 × scale).
    bytes: u64,
}

impl OpportunityCursor {
    pub fn new(bytes_per_opportunity: u64) -> Self {
        let bytes = bytes_per_opportunity.max(1);
        OpportunityCursor { next: 0, left: bytes, bytes }
    }

    /// Serves `size` bytes whose service starts at trace time `start_us`
    /// (the link being idle then) and returns the trace time at which the last
    /// byte leaves. Leftover bytes of a partly used opportunity serve this
    /// packet only if it starts no later than that opportunity; otherwise they
    /// are lost, as in Mahimahi.
    pub fn serve(&mut self, trace: &MahimahiTrace, start_us: i64, size: u64) -> i64 {
        if trace.opportunity_us(self.next) < start_us {
            // Skip forward: a few steps cover a busy link, a jump covers idle gaps.
            let mut steps = 0;
            while trace.opportunity_us(self.next) < start_us && steps < 16 {
                self.next += 1;
                steps += 1;
            }
            if trace.opportunity_us(self.next) < start_us {
                self.next = self.next.max(trace.count_before(start_us));
            }
            self.left = self.bytes;
        }
        if size > self.left {
            let rest = size - self.left;
            let k = rest.div_ceil(self.bytes);
            self.next += k;
            self.left = k * self.bytes - rest;
        } else {
            self.left -= size;
        }
        let depart = trace.opportunity_us(self.next);
        if self.left == 0 {
            self.next += 1;
            self.left = self.bytes;
        }
        depart
    }
}

/// Link capacity over time. Times are simulation times (µs since start).
#[derive(Clone, Debug)]
pub enum Capacity {
    Constant(DataRate),
    /// Synthetic schedules: steps, pulse, square wave, ramp.
    Piecewise(Schedule),
    /// Mahimahi trace replay.
    Trace(TraceCapacity),
}

/// A Mahimahi trace as a capacity: simulation time `t` plays trace time
/// `t + offset`; each opportunity carries `bytes_per_opportunity`
/// (1500 × scale).
#[derive(Clone, Debug)]
pub struct TraceCapacity {
    pub trace: Arc<MahimahiTrace>,
    pub offset: Duration,
    pub bytes_per_opportunity: u64,
}

/// Window over which [`Capacity::rate_at`] averages a trace.
pub const TRACE_RATE_WINDOW: Duration = Duration::from_millis(100);

pub(crate) fn us(t: Time) -> f64 {
    t.as_micros() as f64
}

/// Rates inside schedules are in bits per µs so that integrals over µs are bits.
pub(crate) fn bits_per_us(r: DataRate) -> f64 {
    r.bps() as f64 / 1e6
}

impl Capacity {
    pub fn constant(rate: DataRate) -> Self {
        Capacity::Constant(rate)
    }

    /// Rate `r_i` from `t_i` until the next step; the first rate also applies
    /// before the first step. Times must strictly increase.
    pub fn steps(points: Vec<(Time, DataRate)>) -> Result<Self, String> {
        Schedule::new(points, false, None).map(Capacity::Piecewise)
    }

    /// General schedule: step or linear between points, optionally looping
    /// with `period` (then all times must lie in `[0, period)`).
    pub fn piecewise(points: Vec<(Time, DataRate)>, linear: bool, period: Option<Duration>) -> Result<Self, String> {
        Schedule::new(points, linear, period).map(Capacity::Piecewise)
    }

    /// `high` and `low` alternating every `every`, starting high (Dumbo
    /// thesis §3.1: 3 Mbps ↔ 500 kbps every 40 s). `every` is at least 1 µs.
    pub fn pulse(high: DataRate, low: DataRate, every: Duration) -> Self {
        let every = every.max(Duration::from_micros(1));
        Self::periodic(vec![(Time::ZERO, high), (Time::ZERO + every, low)], every * 2)
    }

    /// `high` for `duty × period`, then `low`, repeating. `duty` is clamped so
    /// that both phases last at least 1 µs.
    pub fn square(high: DataRate, low: DataRate, period: Duration, duty: f64) -> Self {
        let period = period.max(Duration::from_micros(2));
        let p = period.as_micros();
        let on = ((p as f64 * duty).round() as i64).clamp(1, p - 1);
        Self::periodic(vec![(Time::ZERO, high), (Time::from_micros(on), low)], period)
    }

    /// `from` until `start`, linear to `to` over `duration`, then `to`.
    /// A zero duration is an instant step.
    pub fn ramp(from: DataRate, to: DataRate, start: Time, duration: Duration) -> Self {
        let points = if duration.is_positive() {
            vec![(start, from), (start + duration, to)]
        } else {
            vec![(start - Duration::from_micros(1), from), (start, to)]
        };
        Capacity::Piecewise(Schedule::new(points, duration.is_positive(), None).expect("ramp points are ordered"))
    }

    /// Replays `trace` from trace time `offset`, with `scale` × 1500 bytes per
    /// opportunity (at least 1 byte).
    pub fn trace(trace: Arc<MahimahiTrace>, offset: Duration, scale: f64) -> Self {
        let bytes = (OPPORTUNITY_BYTES as f64 * scale).round().max(1.0) as u64;
        Capacity::Trace(TraceCapacity { trace, offset: offset.max(Duration::ZERO), bytes_per_opportunity: bytes })
    }

    fn periodic(points: Vec<(Time, DataRate)>, period: Duration) -> Self {
        Capacity::Piecewise(Schedule::new(points, false, Some(period)).expect("periodic points lie in one period"))
    }

    /// Capacity at `t`. For a trace: the mean over the 100 ms window centred
    /// on `t` (the trace taken as looping in both directions, so there is no
    /// artificial dip near time 0); a single opportunity is an impulse, so an
    /// instantaneous rate would be meaningless.
    pub fn rate_at(&self, t: Time) -> DataRate {
        match self {
            Capacity::Constant(r) => *r,
            Capacity::Piecewise(s) => DataRate::from_bps_f64(s.rate(us(t)) * 1e6),
            Capacity::Trace(tc) => {
                let half = TRACE_RATE_WINDOW.as_micros() / 2;
                let x = t.as_micros() + tc.offset.as_micros();
                let n = tc.trace.count_periodic(x - half, x + half);
                let bits = (n * tc.bytes_per_opportunity * 8) as f64;
                DataRate::from_bps_f64(bits / TRACE_RATE_WINDOW.as_secs_f64())
            }
        }
    }

    /// Highest rate the link ever has as [`rate_at`](Self::rate_at) sees
    /// it (a trace: the busiest 100 ms window of one loop).
    pub fn peak_rate(&self) -> DataRate {
        match self {
            Capacity::Constant(r) => *r,
            Capacity::Piecewise(s) => s.points().iter().map(|p| p.1).max().unwrap_or(DataRate::ZERO),
            Capacity::Trace(tc) => {
                let t = tc.trace.times_ms();
                let w = (TRACE_RATE_WINDOW.as_micros() / 1000) as u64;
                let (mut lo, mut most) = (0, 0);
                for (hi, &x) in t.iter().enumerate() {
                    while t[lo] + w <= x {
                        lo += 1;
                    }
                    most = most.max(hi + 1 - lo);
                }
                let bits = (most as u64 * tc.bytes_per_opportunity * 8) as f64;
                DataRate::from_bps_f64(bits / TRACE_RATE_WINDOW.as_secs_f64())
            }
        }
    }

    /// Bytes the link can carry in `(t0, t1]`: the exact integral of the
    /// schedule, or for a trace the bytes of the opportunities in the window.
    /// An opportunity at exactly `t1` counts, as a packet leaving at `t1` has
    /// been delivered by `t1` (a trace "1" gives 12 Mbit in (0, 1 s]).
    pub fn bytes_between(&self, t0: Time, t1: Time) -> f64 {
        if t1 <= t0 {
            return 0.0;
        }
        match self {
            Capacity::Constant(r) => r.bps() as f64 * (t1 - t0).as_secs_f64() / 8.0,
            Capacity::Piecewise(s) => (s.cumulative(us(t1)) - s.cumulative(us(t0))).max(0.0) / 8.0,
            Capacity::Trace(tc) => {
                // Times are whole µs, so "at or before x" = "before x + 1 µs".
                let off = tc.offset.as_micros() + 1;
                let n = tc.trace.count_before(t1.as_micros() + off) - tc.trace.count_before(t0.as_micros() + off);
                (n * tc.bytes_per_opportunity) as f64
            }
        }
    }

    /// Mean capacity over `(t0, t1]`; the rate at `t0` for an empty window.
    pub fn mean_rate(&self, t0: Time, t1: Time) -> DataRate {
        if t1 <= t0 {
            return self.rate_at(t0);
        }
        DataRate::from_bps_f64(self.bytes_between(t0, t1) * 8.0 / (t1 - t0).as_secs_f64())
    }
}

/// The recorder measures utilisation and queue delay against the model.
impl rtcc_record::CapacityTruth for Capacity {
    fn bytes_between(&self, t0: Time, t1: Time) -> f64 {
        Capacity::bytes_between(self, t0, t1)
    }
}

/// One piece of a schedule: rate `r0 + slope·(t − t0)` on `[t0, t1)`, with
/// `cum0` bits served from the schedule origin to `t0`.
#[derive(Clone, Copy, Debug)]
struct Seg {
    t0: f64,
    t1: f64,
    r0: f64,
    slope: f64,
    cum0: f64,
    cum1: f64,
}

impl Seg {
    fn bits(&self, d: f64) -> f64 {
        self.r0 * d + 0.5 * self.slope * d * d
    }

    /// Offset `d` from `t0` by which `b` bits are served: solves
    /// `r0·d + slope/2·d² = b` (the root stable for either sign of slope).
    fn solve(&self, b: f64) -> f64 {
        let a = 0.5 * self.slope;
        let d = if a.abs() < 1e-18 {
            if self.r0 > 0.0 {
                b / self.r0
            } else {
                0.0
            }
        } else {
            let root = (self.r0 * self.r0 + 4.0 * a * b).max(0.0).sqrt();
            if self.r0 + root > 0.0 {
                2.0 * b / (self.r0 + root)
            } else {
                0.0
            }
        };
        d.clamp(0.0, self.t1 - self.t0)
    }
}

/// A piecewise-constant or piecewise-linear rate schedule, one-shot or
/// looping. Keeps the cumulative service curve so that integrals and their
/// inverse (when is the n-th bit served) are O(log segments).
#[derive(Clone, Debug)]
pub struct Schedule {
    points: Vec<(Time, DataRate)>,
    linear: bool,
    period: Option<Duration>,
    segs: Vec<Seg>,
    /// Span covered by `segs`: first..last point, or 0..period.
    origin: f64,
    end: f64,
    /// Bits over `origin..end`.
    total: f64,
    /// One-shot schedules: rate (bits/µs) before the first / after the last point.
    head: f64,
    tail: f64,
}

impl Schedule {
    pub fn new(points: Vec<(Time, DataRate)>, linear: bool, period: Option<Duration>) -> Result<Self, String> {
        let (Some(&(first_t, first_r)), Some(&(last_t, last_r))) = (points.first(), points.last()) else {
            return Err("a schedule needs at least one point".into());
        };
        if let Some(i) = points.windows(2).position(|w| w[1].0 <= w[0].0) {
            return Err(format!(
                "point {} at {} is not after the previous one ({})",
                i + 1,
                points[i + 1].0,
                points[i].0
            ));
        }
        let mut ext: Vec<(f64, f64)> = points.iter().map(|&(t, r)| (us(t), bits_per_us(r))).collect();
        let (origin, end) = match period {
            None => (us(first_t), us(last_t)),
            Some(p) => {
                if !p.is_positive() {
                    return Err("the period must be positive".into());
                }
                if first_t < Time::ZERO || last_t >= Time::ZERO + p {
                    return Err(format!("looping points must lie in [0, {p})"));
                }
                // Neighbours from the previous and next loop close the period.
                let p = p.as_micros() as f64;
                ext.insert(0, (us(last_t) - p, bits_per_us(last_r)));
                ext.push((us(first_t) + p, bits_per_us(first_r)));
                (0.0, p)
            }
        };
        let mut segs = Vec::with_capacity(ext.len());
        let mut cum = 0.0;
        for w in ext.windows(2) {
            let ((ta, ra), (tb, rb)) = (w[0], w[1]);
            let (lo, hi) = (ta.max(origin), tb.min(end));
            if hi <= lo {
                continue;
            }
            let slope = if linear { (rb - ra) / (tb - ta) } else { 0.0 };
            let mut s = Seg { t0: lo, t1: hi, r0: ra + slope * (lo - ta), slope, cum0: cum, cum1: 0.0 };
            cum += s.bits(hi - lo);
            s.cum1 = cum;
            segs.push(s);
        }
        let (head, tail) = (bits_per_us(first_r), bits_per_us(last_r));
        Ok(Schedule { points, linear, period, segs, origin, end, total: cum, head, tail })
    }

    pub fn points(&self) -> &[(Time, DataRate)] {
        &self.points
    }
    pub fn linear(&self) -> bool {
        self.linear
    }
    pub fn period(&self) -> Option<Duration> {
        self.period
    }

    fn seg_at(&self, x: f64) -> &Seg {
        &self.segs[self.segs.partition_point(|s| s.t0 <= x).saturating_sub(1)]
    }

    /// Rate in bits/µs at `t` µs.
    fn rate(&self, t: f64) -> f64 {
        let x = match self.period {
            Some(_) => t.rem_euclid(self.end),
            None if t < self.origin || self.segs.is_empty() => return self.head,
            None if t >= self.end => return self.tail,
            None => t,
        };
        let s = self.seg_at(x);
        (s.r0 + s.slope * (x - s.t0)).max(0.0)
    }

    /// Bits served from the origin to `t` (negative before a one-shot origin).
    pub(crate) fn cumulative(&self, t: f64) -> f64 {
        let within = |x: f64| {
            let s = self.seg_at(x);
            s.cum0 + s.bits(x - s.t0)
        };
        match self.period {
            Some(_) => {
                let q = (t / self.end).floor();
                q * self.total + within(t - q * self.end)
            }
            None if t < self.origin => self.head * (t - self.origin),
            None if t >= self.end => self.total + self.tail * (t - self.end),
            None => within(t),
        }
    }

    /// Earliest time at which `cumulative` reaches `target` bits; `None` if
    /// never (zero capacity from some point on).
    pub(crate) fn inverse(&self, target: f64) -> Option<f64> {
        // Within the covered span: first piece whose end reaches the target,
        // so a zero-rate tail after the last served bit is not waited out.
        let within = |b: f64| {
            let i = self.segs.partition_point(|s| s.cum1 < b).min(self.segs.len() - 1);
            let s = &self.segs[i];
            s.t0 + s.solve(b - s.cum0)
        };
        match self.period {
            Some(_) => {
                if self.total <= 0.0 {
                    return None;
                }
                let mut q = (target / self.total).floor();
                let mut rem = target - q * self.total;
                if rem <= 0.0 {
                    q -= 1.0;
                    rem += self.total;
                }
                Some(q * self.end + within(rem))
            }
            None if target <= 0.0 => Some(if self.head > 0.0 { self.origin + target / self.head } else { f64::MIN }),
            None if target <= self.total => Some(within(target)),
            None if self.tail > 0.0 => Some(self.end + (target - self.total) / self.tail),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve_all(trace: &str, sizes: &[u64], starts: &[i64]) -> Vec<i64> {
        let t = MahimahiTrace::parse(trace).unwrap();
        let mut c = OpportunityCursor::new(OPPORTUNITY_BYTES);
        let mut prev = i64::MIN;
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let start = starts.get(i).copied().unwrap_or(0).max(prev);
                prev = c.serve(&t, start, s);
                prev
            })
            .collect()
    }

    #[test]
    fn one_line_is_12_mbps() {
        let t = MahimahiTrace::parse("1\n").unwrap();
        assert_eq!(t.period_ms(), 1);
        assert_eq!(t.mean_rate(), DataRate::from_mbps(12));
        // Back-to-back 1500 B packets leave every ms, from the first opportunity at 1 ms.
        let d = serve_all("1", &[1500; 4], &[]);
        assert_eq!(d, vec![1000, 2000, 3000, 4000]);
        // 300 B packets: five per opportunity.
        let d = serve_all("1", &[300; 11], &[]);
        assert_eq!(d, vec![1000, 1000, 1000, 1000, 1000, 2000, 2000, 2000, 2000, 2000, 3000]);
    }

    #[test]
    fn packet_spans_opportunities_and_leftover_rules() {
        // 2000 B: 1500 at 1 ms, 500 at 2 ms; leaves at 2 ms with 1000 B left there.
        // The next packet starting at 2 ms (back to back) uses the leftover.
        assert_eq!(serve_all("1", &[2000, 1000, 1], &[]), vec![2000, 2000, 3000]);
        // Starting at 2.5 ms, the 1000 B left at 2 ms are lost: it leaves at 3 ms,
        // and then 1200 B more fill the rest of 3 ms and 700 B spill to 4 ms.
        assert_eq!(serve_all("1", &[2000, 300, 1200, 700], &[0, 2500]), vec![2000, 3000, 3000, 4000]);
        // A packet arriving exactly at an opportunity uses it.
        assert_eq!(serve_all("1", &[100], &[5000]), vec![5000]);
        // A large packet: 64 kB needs 43 opportunities.
        assert_eq!(serve_all("1", &[64_000], &[]), vec![43_000]);
    }

    #[test]
    fn looping_counts_both_ends() {
        let t = MahimahiTrace::parse("0\n10\n").unwrap();
        assert_eq!(t.period_ms(), 10);
        // Two opportunities per 10 ms → 2.4 Mbps.
        assert_eq!(t.mean_rate(), DataRate::from_kbps(2400));
        let times: Vec<i64> = (0..6).map(|g| t.opportunity_us(g) / 1000).collect();
        assert_eq!(times, vec![0, 10, 10, 20, 20, 30]);
        assert_eq!(t.count_before(0), 0);
        assert_eq!(t.count_before(1), 1);
        assert_eq!(t.count_before(10_000), 1);
        assert_eq!(t.count_before(10_001), 3);
        assert_eq!(t.count_before(100_000), 19);
        assert_eq!(t.count_periodic(0, 100_000), 20);
        // Back to back 1500 B: 0, 10, 10, 20, 20.
        assert_eq!(serve_all("0\n10", &[1500; 5], &[]), vec![0, 10_000, 10_000, 20_000, 20_000]);
        // Duplicated lines are several opportunities in the same ms.
        let d = serve_all("5\n5\n5\n20", &[1500; 5], &[]);
        assert_eq!(d, vec![5000, 5000, 5000, 20_000, 25_000]);
    }

    #[test]
    fn count_before_matches_brute_force() {
        let t = MahimahiTrace::parse("0\n0\n3\n3\n7\n9\n9").unwrap();
        let all: Vec<i64> = (0..200).map(|g| t.opportunity_us(g)).collect();
        for x in (-2000..60_000).step_by(500) {
            let brute = all.iter().filter(|&&o| o < x).count() as u64;
            assert_eq!(t.count_before(x), brute, "x={x}");
            assert!(all[t.count_before(x) as usize] >= x);
        }
        // Periodic counts over whole periods are always n per period.
        assert_eq!(t.count_periodic(-9000, 9000), 14);
        assert_eq!(t.count_periodic(1234, 1234 + 90_000), 70);
    }

    #[test]
    fn idle_gap_jumps_without_scanning() {
        let t = MahimahiTrace::parse("1").unwrap();
        let mut c = OpportunityCursor::new(OPPORTUNITY_BYTES);
        assert_eq!(c.serve(&t, 0, 1500), 1000);
        // An hour later: the cursor jumps straight to the opportunity at 3600 s.
        assert_eq!(c.serve(&t, 3_600_000_000, 1500), 3_600_000_000);
        assert_eq!(c.serve(&t, 3_600_000_000, 1500), 3_600_001_000);
    }

    #[test]
    fn parse_errors_name_the_line() {
        let e = MahimahiTrace::parse("").unwrap_err();
        assert_eq!(e.line, None);
        assert_eq!(e.to_string(), "<trace>: no delivery opportunities (empty trace)");
        assert!(MahimahiTrace::parse("\n  \n").is_err());

        let e = MahimahiTrace::parse("1\n2\nabc\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("<trace>:3: 'abc'"), "{e}");

        let e = MahimahiTrace::parse("1\n-5\n").unwrap_err();
        assert_eq!((e.line, e.reason.as_str()), (Some(2), "negative timestamp '-5'"));

        let e = MahimahiTrace::parse("1\n5\n\n3\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.reason.contains("smaller than the previous"), "{e}");

        let e = MahimahiTrace::parse("0\n0\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.reason.contains("zero period"));

        // Blank lines, CRLF and trailing whitespace are fine.
        let t = MahimahiTrace::parse("0 \r\n\n5\t\r\n10\n\n").unwrap();
        assert_eq!((t.opportunities(), t.period_ms()), (3, 10));
    }

    #[test]
    fn load_names_the_path() {
        let e = MahimahiTrace::load(Path::new("/nonexistent/x.down")).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/x.down: cannot read"), "{e}");
        let dir = std::env::temp_dir().join(format!("rtcc-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.up");
        std::fs::write(&f, "1\nx\n").unwrap();
        let e = MahimahiTrace::load(&f).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}:2: 'x' is not a timestamp (expected a non-negative integer number of ms)", f.display())
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn load_refuses_what_is_not_a_small_regular_file_before_reading() {
        // A device would be read forever: refused from its metadata, at once.
        let t0 = std::time::Instant::now();
        let e = MahimahiTrace::load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is not a regular file (a device, FIFO or socket); a trace must be a text file of timestamps"
        );
        assert!(t0.elapsed() < std::time::Duration::from_secs(1));
        let dir = std::env::temp_dir().join(format!("rtcc-trace-kinds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = MahimahiTrace::load(&dir).unwrap_err();
        assert!(e.reason.starts_with("is a directory"), "{e}");
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let ok = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
            if ok {
                // Opening a FIFO with no writer would block: never opened.
                let e = MahimahiTrace::load(&fifo).unwrap_err();
                assert!(e.reason.starts_with("is not a regular file"), "{e}");
            }
        }
        // Above the limit: refused from the size alone (a sparse file).
        let big = dir.join("big.down");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_TRACE_BYTES + 1).unwrap();
        let e = MahimahiTrace::load(&big).unwrap_err();
        assert!(e.reason.contains("64 MiB"), "{e}");
        // Not UTF-8: said so, with no bytes echoed.
        let bin = dir.join("bin.down");
        std::fs::write(&bin, b"1\n2\n\xff\xfe\x00garbage\n").unwrap();
        let e = MahimahiTrace::load(&bin).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.reason.starts_with("not text (invalid UTF-8)"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let t = MahimahiTrace::parse("\u{feff}1\n2\n").unwrap();
        assert_eq!(t.times_ms(), &[1, 2]);
        let dir = std::env::temp_dir().join(format!("rtcc-trace-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bom.down");
        std::fs::write(&f, b"\xef\xbb\xbf1\r\n5\r\n").unwrap();
        assert_eq!(MahimahiTrace::load(&f).unwrap().times_ms(), &[1, 5]);
        std::fs::remove_dir_all(&dir).ok();
        // Only at the start: elsewhere it is an error, shown escaped.
        let e = MahimahiTrace::parse("1\n\u{feff}2\n").unwrap_err();
        assert!(e.reason.starts_with("'\\u{feff}2' is not a timestamp"), "{e}");
    }

    #[test]
    fn errors_echo_only_a_short_escaped_excerpt() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
        let e = MahimahiTrace::parse(passwd).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert_eq!(
            e.reason,
            "'root:x:0:0:root:/roo…' is not a timestamp (expected a non-negative integer number of ms)"
        );
        assert!(!e.to_string().contains("/bin/bash"));
        let e = MahimahiTrace::parse("1\nab\u{1b}[31mcd\u{7}\n").unwrap_err();
        assert!(e.reason.starts_with("'ab\\u{1b}[31mcd\\u{7}' is not"), "{e}");
        assert!(!e.reason.chars().any(|c| c.is_control()));
        let long = format!("-{}", "9".repeat(500));
        let e = MahimahiTrace::parse(&long).unwrap_err();
        assert!(e.reason.chars().count() < 100, "{e}");
    }

    #[test]
    fn real_trace_mean_rate() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rtcc/data/traces/mahimahi/ATT-LTE-driving.up");
        let t = MahimahiTrace::load(&p).unwrap();
        // The file starts at 831 ms, as the README notes.
        assert_eq!(t.times_ms()[0], 831);
        let mbps = t.mean_rate().bps() as f64 / 1e6;
        let expect = 12.0 * t.opportunities() as f64 / t.period_ms() as f64;
        assert!((mbps - expect).abs() < 1e-3);
    }
}

#[cfg(test)]
mod capacity_tests {
    use super::*;

    const MBPS: fn(u64) -> DataRate = DataRate::from_mbps;
    const KBPS: fn(u64) -> DataRate = DataRate::from_kbps;

    fn s(x: f64) -> Time {
        Time::from_secs_f64(x)
    }
    fn ms_t(x: i64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn pulse_rates_and_exact_integral() {
        // Dumbo §3.1: 3 Mbps ↔ 500 kbps every 40 s, starting high.
        let c = Capacity::pulse(MBPS(3), KBPS(500), Duration::from_secs(40));
        let at = |t: f64| c.rate_at(s(t));
        assert_eq!(
            [at(0.0), at(39.999_999), at(40.0), at(79.9), at(80.0), at(120.0), at(1000.0)],
            [MBPS(3), MBPS(3), KBPS(500), KBPS(500), MBPS(3), KBPS(500), KBPS(500)]
        );
        // 80 s at 3 Mbps + 80 s at 0.5 Mbps = 280 Mbit = 35 MB; mean 1.75 Mbps.
        assert!((c.bytes_between(s(0.0), s(160.0)) - 35e6).abs() < 1e-3);
        assert_eq!(c.mean_rate(s(0.0), s(160.0)), KBPS(1750));
        // Unaligned window: 30 s high + 10 s low = 95 Mbit.
        assert!((c.bytes_between(s(10.0), s(50.0)) - 95e6 / 8.0).abs() < 1e-3);
        assert_eq!(c.bytes_between(s(50.0), s(10.0)), 0.0);
    }

    #[test]
    fn square_wave() {
        let c = Capacity::square(MBPS(3), MBPS(1), Duration::from_secs(20), 0.25);
        assert_eq!(c.rate_at(s(4.999)), MBPS(3));
        assert_eq!(c.rate_at(s(5.0)), MBPS(1));
        assert_eq!(c.rate_at(s(20.0)), MBPS(3));
        // 5 s × 3 + 15 s × 1 = 30 Mbit per period.
        assert!((c.bytes_between(s(0.0), s(20.0)) - 30e6 / 8.0).abs() < 1e-3);
        assert!((c.bytes_between(s(100.0), s(200.0)) - 150e6 / 8.0).abs() < 1e-3);
    }

    #[test]
    fn steps_and_errors() {
        let c = Capacity::steps(vec![(Time::ZERO, MBPS(3)), (s(1.0), KBPS(500))]).unwrap();
        assert_eq!(
            [c.rate_at(s(-1.0)), c.rate_at(s(0.5)), c.rate_at(s(1.0)), c.rate_at(s(99.0))],
            [MBPS(3), MBPS(3), KBPS(500), KBPS(500)]
        );
        assert!((c.bytes_between(s(0.0), s(2.0)) - 3.5e6 / 8.0).abs() < 1e-6);
        assert!(Capacity::steps(vec![]).is_err());
        assert!(Capacity::steps(vec![(s(1.0), MBPS(1)), (s(1.0), MBPS(2))]).is_err());
        assert!(Capacity::steps(vec![(s(2.0), MBPS(1)), (s(1.0), MBPS(2))]).unwrap_err().contains("not after"));
        // All-zero is allowed here (the config refuses it); the server then
        // serves nothing (see the `link::server` tests).
        assert!(Capacity::piecewise(vec![(s(30.0), MBPS(1))], false, Some(Duration::from_secs(20))).is_err());
    }

    #[test]
    fn ramp_is_linear() {
        let c = Capacity::ramp(MBPS(1), MBPS(4), s(10.0), Duration::from_secs(30));
        assert_eq!(
            [c.rate_at(s(0.0)), c.rate_at(s(25.0)), c.rate_at(s(40.0)), c.rate_at(s(100.0))],
            [MBPS(1), KBPS(2500), MBPS(4), MBPS(4)]
        );
        assert!((c.bytes_between(s(10.0), s(40.0)) - 75e6 / 8.0).abs() < 1e-3);
        // 10 s × 1 + 75 + 10 s × 4 = 125 Mbit.
        assert!((c.bytes_between(s(0.0), s(50.0)) - 125e6 / 8.0).abs() < 1e-3);
        // A zero-length ramp is a step.
        let c = Capacity::ramp(MBPS(1), MBPS(4), s(10.0), Duration::ZERO);
        assert_eq!((c.rate_at(s(9.999)), c.rate_at(s(10.0))), (MBPS(1), MBPS(4)));
    }

    #[test]
    fn looping_linear_triangle() {
        // 0 → 2 Mbps over 10 s and back over the next 10 s.
        let c = Capacity::piecewise(
            vec![(s(0.0), DataRate::ZERO), (s(10.0), MBPS(2))],
            true,
            Some(Duration::from_secs(20)),
        )
        .unwrap();
        for t in [5.0, 15.0, 25.0, 1005.0] {
            assert_eq!(c.rate_at(s(t)), MBPS(1), "t={t}");
        }
        assert!((c.bytes_between(s(0.0), s(20.0)) - 20e6 / 8.0).abs() < 1e-3);
        assert!((c.bytes_between(s(5.0), s(45.0)) - 40e6 / 8.0).abs() < 1e-3);
    }

    #[test]
    fn inverse_stops_at_last_served_bit() {
        let Capacity::Piecewise(p) = Capacity::pulse(MBPS(1), DataRate::ZERO, Duration::from_secs(1)) else { panic!() };
        // 1 Mbit is served by the end of the first second, not after the gap.
        assert!((p.inverse(1e6).unwrap() - 1e6).abs() < 1e-6);
        assert!((p.inverse(1.5e6).unwrap() - 2.5e6).abs() < 1e-6);
        // Round trip wherever the rate is positive (F is flat in the gaps).
        for t in [0.3e6, 2.2e6, 6.5e6, 998.5e6] {
            assert!((p.inverse(p.cumulative(t)).unwrap() - t).abs() < 1e-6, "t={t}");
        }
        let Capacity::Piecewise(r) = Capacity::ramp(MBPS(4), DataRate::ZERO, s(0.0), Duration::from_secs(1)) else {
            panic!()
        };
        // 4 → 0 Mbps: 2 Mbit in all; 1.5 Mbit by 0.5 s; nothing after.
        assert!((r.inverse(1.5e6).unwrap() - 0.5e6).abs() < 1e-3);
        assert_eq!(r.inverse(2.1e6), None);
    }

    #[test]
    fn trace_capacity() {
        let one = Arc::new(MahimahiTrace::parse("1").unwrap());
        let c = Capacity::trace(one, Duration::ZERO, 1.0);
        assert_eq!(c.rate_at(Time::ZERO), MBPS(12));
        assert_eq!(c.rate_at(s(1.2345)), MBPS(12));
        // Opportunities at 1..1000 ms fall in (0, 1 s].
        assert_eq!(c.bytes_between(s(0.0), s(1.0)), 1000.0 * 1500.0);
        assert_eq!(c.bytes_between(Time::from_micros(999), ms_t(2)), 2.0 * 1500.0);
        assert_eq!(c.mean_rate(Time::ZERO, s(10.0)), MBPS(12));
        // Offset 5 ms, half-size opportunities: "0,10" plays 10,10,20,20 → sim 5,5,15,15 ms.
        let t = Arc::new(MahimahiTrace::parse("0\n10").unwrap());
        let c = Capacity::trace(t, Duration::from_millis(5), 0.5);
        assert_eq!(c.bytes_between(Time::ZERO, Time::from_millis(20)), 4.0 * 750.0);
        assert_eq!(c.rate_at(s(10.0)), KBPS(1200));
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;

    fn opts(format: Option<TraceFormat>, unit: Option<&str>) -> TraceOptions {
        TraceOptions { format, unit_bps: unit.map(|u| unit_bps(u).unwrap()) }
    }

    fn rates(text: &str) -> RateTrace {
        match parse_trace(text, "<t>", &TraceOptions::default()).unwrap() {
            Trace::Rates(r) => r,
            Trace::Mahimahi(_) => panic!("read as Mahimahi"),
        }
    }

    fn mbps(r: DataRate) -> f64 {
        r.bps() as f64 / 1e6
    }

    fn bundled(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rtcc/data/traces").join(rel)
    }

    #[test]
    fn formats_are_told_by_their_first_line() {
        let d = TraceFormat::detect;
        assert_eq!(d("\n831\n900\n"), Some(TraceFormat::Mahimahi));
        assert_eq!(d("0.0\t4.03\n0.55\t4.79\n"), Some(TraceFormat::Pensieve));
        assert_eq!(d("  {\"uplink\": {}}"), Some(TraceFormat::OpenNetLab));
        assert_eq!(d("\u{feff}Timestamp,Speed,DL_bitrate,UL_bitrate\n"), Some(TraceFormat::GNetTrack));
        assert_eq!(d("root:x:0:0"), None);
        assert_eq!(d(""), None);
        let e = parse_trace("\n \n", "e", &TraceOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), format!("e: empty trace (nothing in any known format: {})", TraceFormat::known()));
        for f in TraceFormat::ALL {
            assert_eq!(TraceFormat::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn pensieve_row_i_covers_the_interval_before_it() {
        // Row 0's value is never used; 2 Mbps over (0, 1], 4 Mbps over (1, 3].
        let r = rates("0.0 9\n1.0\t2\n3.0 4\n");
        assert_eq!(r.pieces(), &[(1e6, 2e6), (2e6, 4e6)]);
        assert_eq!(r.duration(), Duration::from_secs(3));
        assert!((mbps(r.mean_rate()) - 10.0 / 3.0).abs() < 1e-6);
        let c = r.capacity(Duration::ZERO, 1.0).unwrap();
        let at = |t: f64| mbps(c.rate_at(Time::from_secs_f64(t)));
        assert_eq!([at(0.5), at(1.5), at(2.9), at(3.5), at(4.5)], [2.0, 4.0, 4.0, 2.0, 4.0]);
        // Starting 1.5 s in: 4 Mbps until trace time 3 s, then the loop's start.
        let c = r.capacity(Duration::from_millis(1500), 0.5).unwrap();
        let at = |t: f64| mbps(c.rate_at(Time::from_secs_f64(t)));
        assert_eq!([at(0.0), at(1.4), at(1.5), at(2.6), at(4.6)], [2.0, 2.0, 1.0, 2.0, 1.0]);
        // The unit is the file's: kbps when told so.
        let r = parse_trace("0 1\n2 500\n", "<t>", &opts(None, Some("kbps"))).unwrap();
        assert_eq!(r.mean_rate(), DataRate::from_kbps(500));
    }

    #[test]
    fn pensieve_errors_name_the_line() {
        let e = |t: &str| parse_trace(t, "<t>", &opts(Some(TraceFormat::Pensieve), None)).unwrap_err().to_string();
        assert_eq!(e("0 1\n1 2\n1 3\n"), "<t>:3: time 1 is not after the previous one (1); times must increase");
        assert_eq!(e("0 1\n1 -2\n"), "<t>:2: throughput '-2' is not a non-negative number");
        assert_eq!(e("0 1\n1 2 3\n"), "<t>:2: '1 2 3' is not a row 'time_s throughput' (two numbers)");
        assert!(e("0 1\n").contains("fewer than two rows"));
        assert!(e("0 1\n1 nan\n").contains("'nan' is not a non-negative number"));
    }

    #[test]
    fn opennetlab_entries_repeat_and_zero_lets_nothing_through() {
        let text = r#"{"uplink": {"trace_pattern": [
            {"duration": 200, "capacity": 1000, "loss": 0.1},
            {"duration": 0, "capacity": 5},
            {"duration": 300, "capacity": 0}]}}"#;
        let r = rates(text);
        assert_eq!(r.format(), TraceFormat::OpenNetLab);
        assert_eq!(r.pieces(), &[(2e5, 1e6), (3e5, 0.0)]);
        assert_eq!(r.mean_rate(), DataRate::from_kbps(400));
        let c = r.capacity(Duration::ZERO, 1.0).unwrap();
        assert_eq!(c.rate_at(Time::from_millis(100)), DataRate::from_mbps(1));
        assert_eq!(c.rate_at(Time::from_millis(300)), DataRate::ZERO);
        assert_eq!(c.rate_at(Time::from_millis(600)), DataRate::from_mbps(1));
        // Nothing is served during the zero entry: 200 kbit in each 500 ms.
        assert!((c.bytes_between(Time::ZERO, Time::from_millis(1000)) - 50_000.0).abs() < 1e-6);
        let e = |t: &str| parse_trace(t, "<t>", &TraceOptions::default()).unwrap_err().to_string();
        assert_eq!(
            e(r#"{"uplink": {"trace_pattern": [{"duration": 200}]}}"#),
            "<t>: uplink.trace_pattern[0].capacity: missing or not a non-negative number"
        );
        assert!(e(r#"{"downlink": {}}"#).contains("no uplink.trace_pattern list"));
        assert!(e("{\"uplink\": \n[").starts_with("<t>:2: not JSON"));
    }

    #[test]
    fn rates_above_a_limit_are_dropped_with_their_time() {
        let r = rates(
            "{\"uplink\": {\"trace_pattern\": [{\"duration\": 100, \"capacity\": 1000}, \
                       {\"duration\": 100, \"capacity\": 9e9}, {\"duration\": 100, \"capacity\": 3000}]}}",
        );
        assert_eq!(
            r.first_above(IMPLAUSIBLE_RATE),
            Some(("uplink.trace_pattern[1]".into(), DataRate::from_bps(9_000_000_000_000)))
        );
        let (kept, dropped) = r.without_above(IMPLAUSIBLE_RATE).unwrap();
        assert_eq!(
            (dropped, kept.duration(), kept.mean_rate()),
            (1, Duration::from_millis(200), DataRate::from_mbps(2))
        );
        assert!(r.without_above(DataRate::from_kbps(1)).is_err());
    }

    #[test]
    fn gnettrack_rows_are_seconds_of_dl_bitrate() {
        let text = "Timestamp,NetworkMode,DL_bitrate,UL_bitrate\n\
                    2020.01.16_07.26.43,5G,1000,20\n2020.01.16_07.26.43,5G,3000,20\n2020.01.16_07.26.47,LTE,0,0\n";
        let r = rates(text);
        assert_eq!(r.duration(), Duration::from_secs(3));
        assert_eq!(r.mean_rate(), DataRate::from_bps(4_000_000 / 3));
        let e = parse_trace("DL_bitrate\n5\n-\n", "<t>", &TraceOptions::default()).unwrap_err();
        assert_eq!(e.to_string(), "<t>:3: DL_bitrate '-' is not a non-negative number");
    }

    #[test]
    fn another_format_is_named_with_the_formats_known() {
        let e = parse_trace("0.0 1.5\n1.0 2.5\n", "x.down", &opts(Some(TraceFormat::Mahimahi), None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.down: is a pensieve trace, not mahimahi (formats known: mahimahi, pensieve, opennetlab, gnettrack); \
             set format = \"pensieve\" or leave it out"
        );
        let e = parse_trace("hello world again\n", "x", &TraceOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x: not a trace in a known format (mahimahi, pensieve, opennetlab, gnettrack): it starts 'hello world again'"
        );
        // A bad line of the detected format is that format's error.
        let e = parse_trace("1\n2\nx\n", "x", &TraceOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn bundled_traces_read_at_their_summary_means() {
        // summary.csv's means (Mbps, 3 decimals) for one file of each format.
        for (rel, mean) in [
            ("mahimahi/ATT-LTE-driving.up", 0.834),
            ("pensieve-norway/norway_bus_1", 2.912),
            ("pensieve-fcc/trace_5642_http---www.youtube.com", 0.187),
            ("opennetlab/4G_500kbps.json", 0.498),
            ("ucc-5g/B_2019.12.16_11.49.59.csv", 7.129),
        ] {
            let t = load_trace(&bundled(rel), &TraceOptions::default()).unwrap();
            assert!((mbps(t.mean_rate()) - mean).abs() < 0.0006, "{rel}: {}", mbps(t.mean_rate()));
        }
        // The README's mean without the entries above 1 Gbps.
        let Trace::Rates(r) = load_trace(&bundled("opennetlab/4G_3mbps.json"), &TraceOptions::default()).unwrap()
        else {
            panic!()
        };
        assert!((mbps(r.mean_rate()) - 30.195).abs() < 0.0006);
        let (kept, dropped) = r.without_above(IMPLAUSIBLE_RATE).unwrap();
        assert_eq!(dropped, 1);
        assert!((mbps(kept.mean_rate()) - 3.80).abs() < 0.005, "{}", mbps(kept.mean_rate()));
    }

    #[test]
    fn set_files_stay_inside_their_set() {
        let p = set_file("mahimahi", "ATT-LTE-driving.up").unwrap();
        assert!(p.is_file(), "{}", p.display());
        assert_eq!(set_file("../x", "a").unwrap_err().0, "set");
        assert_eq!(set_file("mahimahi", "../pensieve-fcc/x").unwrap_err().0, "file");
        assert_eq!(set_file("mahimahi", "/etc/passwd").unwrap_err().0, "file");
        let (field, reason) = set_file("nope", "a").unwrap_err();
        assert_eq!(field, "set");
        assert!(reason.starts_with("no trace set 'nope' in ") && reason.contains("mahimahi, opennetlab"), "{reason}");
        let root = traces_root().unwrap();
        assert_eq!(set_names(&root), ["mahimahi", "opennetlab", "pensieve-fcc", "pensieve-norway", "ucc-5g"]);
    }
}
