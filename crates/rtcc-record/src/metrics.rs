//! Streaming metrics: per-flow counters and delay histograms (constant
//! memory however long the call), optional per-packet records, per-frame
//! records (a few per second), and 100 ms time-series bins. Definitions
//! follow DESIGN §4.

use std::collections::VecDeque;

use crate::Envelope;
use rtcc_core::packet::PacketKind;
use rtcc_core::units::{Duration, Time};

/// Fixed-bin latency histogram: 0.1 ms bins below 2 s, 10 ms bins to 120 s,
/// one overflow bin. Percentiles are exact to the bin width. Bins are
/// allocated up to the largest delay seen, so a flow whose delays stay under
/// 100 ms holds 4 kB rather than the full 127 kB.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    bins: Vec<u32>,
    n: u64,
    head: HistHead,
    /// The largest sample (µs), exact: this histogram is fed per frame or
    /// per RTT sample, not from a packet's full cache lines.
    max_us: i64,
}

/// What every sample of a histogram touches: its sum, and the samples in
/// one bin not yet added to the bins (consecutive delays mostly share a
/// bin, and with many flows the bin array is out of cache). The bins and
/// the count may live elsewhere.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HistHead {
    run: Run,
    sum: f64,
}

/// `n` equal keys in a row, counted in a hot place and added to a cold
/// per-key table when the key changes (a histogram's bin, a frame's packets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub key: u32,
    pub n: u32,
}

impl Run {
    /// Count one more `key` if it continues the run (and the count has room).
    #[inline]
    pub fn extend(&mut self, key: u32) -> bool {
        let more = self.key == key && (1..u32::MAX).contains(&self.n);
        self.n += u32::from(more);
        more
    }

    /// Count one more `key`; returns the run this ends, if any.
    pub fn push(&mut self, key: u32) -> Option<Run> {
        if self.extend(key) {
            return None;
        }
        let done = self.take();
        *self = Run { key, n: 1 };
        done
    }

    /// End the run: what it counted, if anything.
    pub fn take(&mut self) -> Option<Run> {
        let r = std::mem::take(self);
        (r.n > 0).then_some(r)
    }
}

const FINE_US: i64 = 100;
const FINE_BINS: usize = 20_000;
const COARSE_US: i64 = 10_000;
const COARSE_BINS: usize = 11_800;

impl HistHead {
    /// Add a sample; `bins` are this histogram's.
    #[inline]
    pub fn add(&mut self, d: Duration, bins: &mut Vec<u32>) {
        let us = d.as_micros().max(0);
        let i = if us < FINE_US * FINE_BINS as i64 {
            (us / FINE_US) as usize
        } else {
            (FINE_BINS + ((us - FINE_US * FINE_BINS as i64) / COARSE_US) as usize).min(FINE_BINS + COARSE_BINS)
        };
        self.sum += us as f64;
        // The current run's bin was allocated when the run began.
        if !self.run.extend(i as u32) {
            self.new_run(i, bins);
        }
    }

    fn new_run(&mut self, i: usize, bins: &mut Vec<u32>) {
        if let Some(done) = self.run.push(i as u32) {
            bins[done.key as usize] += done.n;
        }
        if i >= bins.len() {
            bins.resize(i + 1, 0);
        }
    }
}

/// A histogram's parts, to read it.
#[derive(Clone, Copy, Debug)]
pub struct HistView<'a> {
    head: &'a HistHead,
    bins: &'a [u32],
    n: u64,
    /// The exact largest sample (µs), when the histogram keeps it.
    max_us: Option<i64>,
}

impl HistView<'_> {
    /// Mean in milliseconds, `None` when empty.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.head.sum / self.n as f64 / 1e3)
    }

    /// Quantile in milliseconds (bin midpoint, but never above the exact
    /// largest sample when that is kept), `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let mid = self.bin_quantile_ms(q)?;
        Some(self.max_us.map_or(mid, |m| mid.min(m as f64 / 1e3)))
    }

    /// The largest sample in milliseconds: exact when the histogram keeps it,
    /// else the midpoint of the highest bin reached (as `quantile_ms(1.0)`,
    /// so never below a quantile); `None` when empty.
    pub fn max_ms(&self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        match self.max_us {
            Some(m) => Some(m as f64 / 1e3),
            None => self.bin_quantile_ms(1.0),
        }
    }

    fn bin_quantile_ms(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let run = self.head.run;
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0u64;
        for (i, &c) in self.bins.iter().enumerate() {
            acc += c as u64 + if i == run.key as usize { run.n as u64 } else { 0 };
            if acc >= rank {
                let (lo, w) = if i < FINE_BINS {
                    (i as i64 * FINE_US, FINE_US)
                } else {
                    (FINE_US * FINE_BINS as i64 + (i - FINE_BINS) as i64 * COARSE_US, COARSE_US)
                };
                return Some((lo as f64 + w as f64 / 2.0) / 1e3);
            }
        }
        None
    }
}

impl Histogram {
    pub fn add(&mut self, d: Duration) {
        self.head.add(d, &mut self.bins);
        self.max_us = self.max_us.max(d.as_micros());
        self.n += 1;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    fn view(&self) -> HistView<'_> {
        HistView { head: &self.head, bins: &self.bins, n: self.n, max_us: Some(self.max_us) }
    }

    /// Mean in milliseconds, `None` when empty.
    pub fn mean_ms(&self) -> Option<f64> {
        self.view().mean_ms()
    }

    /// Quantile in milliseconds (bin midpoint, at most the largest sample),
    /// `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        self.view().quantile_ms(q)
    }

    /// The largest sample in milliseconds (exact), `None` when empty.
    pub fn max_ms(&self) -> Option<f64> {
        self.view().max_ms()
    }
}

/// One packet's fate, kept only when packet recording is on.
#[derive(Clone, Copy, Debug)]
pub struct PacketRec {
    pub kind: PacketKind,
    pub size: u32,
    pub frame: u32,
    pub send_us: i64,
    pub arrival_us: i64,
    pub queue_us: i64,
    pub dropped: bool,
    pub lost: bool,
}

/// Counters of one flow, streamed. A packet's send and its departure from
/// the bottleneck (moments apart) share `send`, the departure also reads
/// one more line, and its arrival reads `arrive`: with many flows, each
/// line a packet touches is a cache miss. The bins, byte totals by kind and
/// packet rows follow, touched rarely. `send` and `arrive` also hold the
/// recorder's per-packet frame tallies, to share those lines.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub struct FlowStats {
    pub(crate) send: SendLine,
    sojourn: HistHead,
    pub lost: u64,
    pub dropped: u64,
    pub(crate) arrive: ArriveLine,
    queue_bins: Vec<u32>,
    sojourn_bins: Vec<u32>,
    owd_bins: Vec<u32>,
    /// Received bytes by kind, but for the pending run of one kind.
    recv_bytes: [u64; PacketKind::COUNT],
    /// Counts, delay sums and byte totals when the current time-series bin
    /// began: a bin's are differences of totals (the sums add whole
    /// microseconds, exact in an f64 below 2^53).
    bin_departed: u64,
    bin_arrived: u64,
    bin_queue_sum_us: f64,
    bin_owd_sum_us: f64,
    bin_recv: u64,
    bin_media_recv: u64,
    pub packets_base: u64,
    /// Packet rows not yet taken, from sequence `packets_base` on.
    pub packets: VecDeque<PacketRec>,
}

/// What a packet's send and departure touch (one cache line).
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub(crate) struct SendLine {
    /// Packets sent.
    pub sent: u64,
    /// The recorder's run of sent packets of one frame.
    pub frame_run: Run,
    /// The recorder's first unsettled frame (`ArriveLine` holds a copy).
    pub frame_base: u32,
    /// The flow's index in `KIND_NAMES`.
    pub class: u8,
    /// Whether packet rows were ever kept (as in `ArriveLine`): without,
    /// the rows need not be looked at.
    recorded: bool,
    /// Data bytes that left the bottleneck, random loss after it included.
    pub data_bytes: u64,
    /// Packets that left the bottleneck.
    departed: u64,
    queue: HistHead,
}

/// What a packet's arrival touches (one cache line).
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "sim-layout", repr(C, align(64)))]
pub(crate) struct ArriveLine {
    owd: HistHead,
    arrived: u64,
    /// Received bytes of kind `recv_kind` not yet in `recv_bytes`: a flow's
    /// packets are mostly of one kind.
    recv_pending: u64,
    /// The latest arrival (µs; meaningless until `arrived` > 0): received
    /// rates are over a window that reaches it (`output.rs`).
    last_us: i64,
    /// The recorder's run of packets of one frame that left the network.
    pub frame_run: Run,
    /// The recorder's first unsettled frame (as in `SendLine`).
    pub frame_base: u32,
    recv_kind: u8,
    recorded: bool,
}

/// Time-series accumulators of the current bin.
#[derive(Clone, Copy, Debug, Default)]
pub struct BinAcc {
    pub queue_sum_us: f64,
    pub queue_n: u64,
    pub owd_sum_us: f64,
    pub owd_n: u64,
    pub recv_bytes: u64,
    pub media_recv_bytes: u64,
}

/// The kinds whose bytes count as goodput: what the viewer can use.
fn is_media(k: usize) -> bool {
    k == PacketKind::Media as usize || k == PacketKind::Rtx as usize || k == PacketKind::Audio as usize
}

impl FlowStats {
    /// A flow whose class (its index in the recorder's `KIND_NAMES`) is `class`.
    pub(crate) fn with_class(class: u8) -> FlowStats {
        let mut s = FlowStats::default();
        s.send.class = class;
        s
    }

    pub fn on_sent(&mut self, e: &Envelope, record: bool) {
        self.send.sent += 1;
        if record {
            (self.send.recorded, self.arrive.recorded) = (true, true);
            debug_assert_eq!(self.packets_base + self.packets.len() as u64, e.seq);
            let p = &e.packet;
            self.packets.push_back(PacketRec {
                kind: e.kind,
                size: p.size.bytes() as u32,
                frame: e.frame,
                send_us: e.sent.as_micros(),
                arrival_us: -1,
                queue_us: -1,
                dropped: false,
                lost: false,
            });
        }
    }

    /// Packets sent.
    pub fn sent(&self) -> u64 {
        self.send.sent
    }

    /// Packet `seq` was dropped at the bottleneck.
    pub fn on_dropped(&mut self, seq: u64) {
        self.dropped += 1;
        if let Some(r) = self.rec(seq) {
            r.dropped = true;
        }
    }

    /// Left the bottleneck after `queued` in its queue; `lost` = random loss.
    pub fn on_departed(&mut self, seq: u64, queued: Duration, sojourn: Duration, lost: bool) {
        let s = &mut self.send;
        s.queue.add(queued, &mut self.queue_bins);
        self.sojourn.add(sojourn, &mut self.sojourn_bins);
        s.departed += 1;
        if lost {
            self.lost += 1;
        }
        if !self.send.recorded {
            return;
        }
        if let Some(r) = self.rec(seq) {
            r.queue_us = queued.as_micros();
            r.lost = lost;
        }
    }

    /// Start loading what a packet's send and departure (`arrival`: its
    /// arrival) touch (`rtcc_core::cache`).
    #[cfg(feature = "sim-layout")]
    #[inline]
    pub(crate) fn prefetch(&self, arrival: bool) {
        match arrival {
            false => rtcc_core::cache::prefetch(
                &self.send as *const SendLine as *const u8,
                std::mem::offset_of!(FlowStats, lost) - std::mem::offset_of!(FlowStats, send),
            ),
            true => rtcc_core::cache::prefetch_val(&self.arrive),
        }
    }

    pub fn on_arrived(&mut self, now: Time, e: &Envelope) {
        let p = &e.packet;
        let owd = now - e.sent;
        let a = &mut self.arrive;
        let k = p.kind as u8;
        if k != a.recv_kind {
            self.recv_bytes[a.recv_kind as usize] += a.recv_pending;
            (a.recv_kind, a.recv_pending) = (k, 0);
        }
        a.recv_pending += p.size.bytes();
        a.owd.add(owd, &mut self.owd_bins);
        a.arrived += 1;
        a.last_us = now.as_micros();
        if !a.recorded {
            return;
        }
        if let Some(r) = self.rec(e.seq) {
            r.arrival_us = now.as_micros();
        }
    }

    fn rec(&mut self, seq: u64) -> Option<&mut PacketRec> {
        let i = seq.checked_sub(self.packets_base)?;
        self.packets.get_mut(i as usize)
    }

    /// When the latest packet arrived, if any did.
    pub fn last_arrival(&self) -> Option<Time> {
        (self.arrive.arrived > 0).then(|| Time::from_micros(self.arrive.last_us))
    }

    /// Received bytes by kind.
    pub fn recv_bytes(&self) -> [u64; PacketKind::COUNT] {
        let mut b = self.recv_bytes;
        b[self.arrive.recv_kind as usize] += self.arrive.recv_pending;
        b
    }

    /// One-way delay (send to arrival). The packet delay histograms keep no
    /// exact maximum (the lines a packet touches have no room for one): their
    /// `max_ms` is exact to the bin width.
    pub fn owd(&self) -> HistView<'_> {
        HistView { head: &self.arrive.owd, bins: &self.owd_bins, n: self.arrive.arrived, max_us: None }
    }

    /// Time in the bottleneck's queue before service.
    pub fn queue(&self) -> HistView<'_> {
        HistView { head: &self.send.queue, bins: &self.queue_bins, n: self.send.departed, max_us: None }
    }

    /// Departure − arrival at the bottleneck, as a Mahimahi log gives it.
    pub fn sojourn(&self) -> HistView<'_> {
        HistView { head: &self.sojourn, bins: &self.sojourn_bins, n: self.send.departed, max_us: None }
    }

    /// Takes the leading rows whose fate is known (arrived, dropped or
    /// lost), so their table can be written while the run goes on; a row
    /// still in flight holds back those after it, keeping sequence order.
    /// Returns the first taken row's sequence number and the rows.
    pub fn take_settled(&mut self) -> (u64, Vec<PacketRec>) {
        let first = self.packets_base;
        let n = self.packets.iter().take_while(|r| r.arrival_us >= 0 || r.dropped || r.lost).count();
        self.packets_base += n as u64;
        (first, self.packets.drain(..n).collect())
    }

    /// Received bytes of the kinds that count as goodput (`is_media`).
    pub fn media_recv_bytes(&self) -> u64 {
        self.recv_totals().1
    }

    /// Received bytes in all and of media kinds, so far.
    fn recv_totals(&self) -> (u64, u64) {
        let b = self.recv_bytes();
        let media = (0..b.len()).filter(|&k| is_media(k)).map(|k| b[k]).sum();
        (b.iter().sum(), media)
    }

    /// The current time-series bin's accumulators.
    pub fn bin(&self) -> BinAcc {
        let (recv, media) = self.recv_totals();
        BinAcc {
            queue_sum_us: self.send.queue.sum - self.bin_queue_sum_us,
            queue_n: self.send.departed - self.bin_departed,
            owd_sum_us: self.arrive.owd.sum - self.bin_owd_sum_us,
            owd_n: self.arrive.arrived - self.bin_arrived,
            recv_bytes: recv - self.bin_recv,
            media_recv_bytes: media - self.bin_media_recv,
        }
    }

    /// Start the next time-series bin.
    pub fn reset_bin(&mut self) {
        (self.bin_queue_sum_us, self.bin_owd_sum_us) = (self.send.queue.sum, self.arrive.owd.sum);
        (self.bin_departed, self.bin_arrived) = (self.send.departed, self.arrive.arrived);
        (self.bin_recv, self.bin_media_recv) = self.recv_totals();
    }

    pub fn total_recv_bytes(&self) -> u64 {
        self.recv_bytes().iter().sum()
    }
}

/// Columnar time-series builder; controller state columns may appear late,
/// earlier rows are back-filled with NaN.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub(crate) cols: Vec<(String, Vec<f64>)>,
    pub(crate) rows: usize,
}

impl Series {
    pub fn push(&mut self, name: &str, v: f64) {
        match self.cols.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => c.push(v),
            None => {
                let mut c = vec![f64::NAN; self.rows];
                c.push(v);
                self.cols.push((name.to_string(), c));
            }
        }
    }
    pub fn push_state(&mut self, name: &str, v: f64) {
        self.push(name, if v.is_finite() { v } else { f64::NAN });
    }
    pub fn end_row(&mut self) {
        self.rows += 1;
        for (_, c) in &mut self.cols {
            c.resize(self.rows, f64::NAN);
        }
    }
    pub fn col(&self, name: &str) -> Option<&[f64]> {
        self.cols.iter().find(|(n, _)| n == name).map(|(_, c)| c.as_slice())
    }
    /// Takes the rows so far; the column names stay, in their order, so a
    /// later take (or the end) lists every column seen.
    pub fn take(&mut self) -> Series {
        let cols = self.cols.iter_mut().map(|(n, c)| (n.clone(), std::mem::take(c))).collect();
        Series { cols, rows: std::mem::take(&mut self.rows) }
    }
}

/// A column of an output table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U8(Vec<u8>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U8(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named set of equal-length columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, c: Column) {
        self.columns.push((name.to_string(), c));
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64(&self, name: &str) -> Option<&[f64]> {
        match self.get(name)? {
            Column::F64(v) => Some(v),
            _ => None,
        }
    }
}

/// Mean of finite values.
pub fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        if x.is_finite() {
            s += x;
            n += 1;
        }
    }
    (n > 0).then(|| s / n as f64)
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for a single flow.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        return 1.0;
    }
    s * s / (n * s2)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn histogram_quantiles() {
        let mut h = Histogram::default();
        for ms in 1..=100 {
            h.add(Duration::from_millis(ms));
        }
        assert!((h.mean_ms().unwrap() - 50.5).abs() < 1e-9);
        let p95 = h.quantile_ms(0.95).unwrap();
        assert!((p95 - 95.05).abs() < 0.06, "{p95}");
        h.add(Duration::from_secs(10));
        // The top bin's midpoint (10 005 ms) is past the largest sample.
        assert_eq!(h.quantile_ms(1.0), Some(10_000.0));
        assert_eq!(h.max_ms(), Some(10_000.0));
    }

    #[test]
    fn tail_quantiles_and_max_are_ordered() {
        // Exact maximum (a frame's histogram) and the bin-based one (a
        // packet's): p95 <= p99 <= max either way, max within a bin width.
        let mut h = Histogram::default();
        assert_eq!(h.max_ms(), None);
        for us in [120, 130, 140, 5_000, 5_020, 5_030, 5_040, 5_050, 5_060, 73_456] {
            h.add(Duration::from_micros(us));
        }
        let (p95, p99, max) = (h.quantile_ms(0.95).unwrap(), h.quantile_ms(0.99).unwrap(), h.max_ms().unwrap());
        assert_eq!(max, 73.456);
        assert!(p95 <= p99 && p99 <= max, "{p95} {p99} {max}");
        assert_eq!(h.quantile_ms(0.5), Some(5.05));
        let mut s = FlowStats::default();
        for us in [300, 1_000, 2_345] {
            s.on_departed(0, Duration::from_micros(us), Duration::from_micros(us + 50), false);
        }
        let q = s.queue();
        assert_eq!(q.max_ms(), Some(2.35));
        assert!(q.quantile_ms(0.99).unwrap() <= q.max_ms().unwrap());
        assert_eq!(s.sojourn().max_ms(), Some(2.35));
        assert_eq!(s.owd().max_ms(), None);
    }

    #[test]
    fn a_run_ends_when_its_key_changes() {
        let mut r = Run::default();
        assert_eq!([r.push(3), r.push(3), r.push(0), r.push(0)], [None, None, Some(Run { key: 3, n: 2 }), None]);
        assert_eq!(r.take(), Some(Run { key: 0, n: 2 }));
        assert_eq!(r.take(), None);
        assert_eq!(r.push(0), None);
    }

    #[test]
    fn histogram_counts_runs_of_one_bin() {
        // Runs of equal delays are counted beside the bins: quantiles must
        // see them, whether the run is the first, a middle or the last one.
        let mut h = Histogram::default();
        assert_eq!(h.quantile_ms(0.5), None);
        for _ in 0..10 {
            h.add(Duration::ZERO);
        }
        // Capped at the largest sample, 0, not the bin's midpoint.
        assert_eq!(h.quantile_ms(1.0), Some(0.0));
        for _ in 0..30 {
            h.add(Duration::from_millis(20));
        }
        for _ in 0..60 {
            h.add(Duration::from_millis(5));
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.quantile_ms(0.10), Some(0.05));
        assert_eq!(h.quantile_ms(0.11), Some(5.05));
        assert_eq!(h.quantile_ms(0.70), Some(5.05));
        assert_eq!(h.quantile_ms(0.71), Some(20.0));
        assert_eq!(h.quantile_ms(1.0), Some(20.0));
    }

    #[test]
    fn an_arrival_touches_one_line() {
        #[cfg(feature = "sim-layout")]
        assert_eq!(std::mem::size_of::<ArriveLine>(), 64);
        let mut s = FlowStats::default();
        assert_eq!(s.last_arrival(), None);
        let packet =
            rtcc_core::packet::Packet { size: rtcc_core::units::DataSize::from_bytes(100), ..Default::default() };
        let p = Envelope { flow: 0, seq: 0, frame: 0, sent: Time::ZERO, kind: packet.kind, packet };
        s.on_arrived(Time::from_micros(2_500), &p);
        assert_eq!(s.last_arrival(), Some(Time::from_micros(2_500)));
    }

    #[test]
    fn jain_index() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
    }
}
