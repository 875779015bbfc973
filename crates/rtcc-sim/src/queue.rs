//! The bottleneck queue: the buffer and the server that transmits its head
//! at the link capacity. The buffer is a [`Queue`] under one of three
//! disciplines: drop-tail (a FIFO with a limit in bytes, packets or
//! milliseconds of link time), CoDel, or FQ-CoDel (both in [`crate::aqm`]).
//! It holds every packet at the bottleneck, including the one being
//! transmitted, so limits count it.

use std::collections::VecDeque;
use std::fmt;

use rtcc_core::packet::Packet;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use crate::aqm::{Codel, CodelParams, FqCodel, FqCodelConfig, Queued, CODEL_LIMIT};
use crate::trace::{bits_per_us, us, Capacity, OpportunityCursor, OPPORTUNITY_BYTES};

/// How much the bottleneck buffer holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueLimit {
    #[default]
    Unlimited,
    /// Total bytes buffered, the arriving packet included.
    Bytes(DataSize),
    /// Packets buffered, the arriving packet included.
    Packets(usize),
    /// Time to drain the buffer (arriving packet included) at the capacity in
    /// force when the packet arrives.
    Time(Duration),
}

impl QueueLimit {
    /// Parses `"unlimited"`, `"100ms"`, `"64kB"`, `"150000B"`, `"100pkt"`,
    /// `"100 packets"`. A bare number is refused: it could mean any of them.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if matches!(s.to_ascii_lowercase().as_str(), "unlimited" | "none" | "inf" | "infinite") {
            return Ok(QueueLimit::Unlimited);
        }
        if s.starts_with('-') {
            return Err(format!("queue limit '{s}' must not be negative"));
        }
        let idx = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (num, unit) = (&s[..idx], s[idx..].trim());
        if num.is_empty() {
            return Err(format!(
                "queue limit '{s}' is not a number with a unit (e.g. \"100ms\", \"64kB\", \"100pkt\") or \"unlimited\""
            ));
        }
        let limit = match unit {
            "" => Err(format!("queue limit '{s}' needs a unit: ms (link time), B/kB (bytes) or pkt (packets)")),
            "pkt" | "pkts" | "packet" | "packets" => num
                .parse::<usize>()
                .map(QueueLimit::Packets)
                .map_err(|_| format!("queue limit '{s}': a packet count must be a whole number")),
            "us" | "ms" | "s" | "sec" | "min" => {
                s.parse().map(QueueLimit::Time).map_err(|e| format!("queue limit: {e}"))
            }
            _ => s.parse().map(QueueLimit::Bytes).map_err(|e| format!("queue limit: {e}")),
        }?;
        // A buffer that holds nothing drops every packet: surely a slip.
        match limit {
            QueueLimit::Packets(0) => Err(format!("queue limit '{s}' must hold at least one packet")),
            QueueLimit::Bytes(b) if b == DataSize::ZERO => Err(format!("queue limit '{s}' must be positive")),
            QueueLimit::Time(t) if t == Duration::ZERO => Err(format!("queue limit '{s}' must be positive")),
            l => Ok(l),
        }
    }

    /// Whether the time limit needs the current capacity.
    pub fn needs_rate(&self) -> bool {
        matches!(self, QueueLimit::Time(_))
    }

    /// Whether a packet of `size` fits into a buffer holding `packets`
    /// packets of `bytes` in all. `rate` is the capacity in force (used by
    /// the time limit only). At zero capacity the time limit admits a
    /// packet into an empty buffer and refuses any more: the buffer cannot
    /// drain, but dropping every packet during an outage would hide the
    /// outage from the sender's delay signal.
    pub fn admits(&self, bytes: DataSize, packets: usize, size: DataSize, rate: DataRate) -> bool {
        match *self {
            QueueLimit::Unlimited => true,
            QueueLimit::Bytes(max) => bytes + size <= max,
            QueueLimit::Packets(max) => packets < max,
            QueueLimit::Time(max) => {
                if rate == DataRate::ZERO {
                    packets == 0
                } else {
                    (bytes + size) / rate <= max
                }
            }
        }
    }
}

impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLimit::Unlimited => write!(f, "unlimited"),
            QueueLimit::Bytes(b) => write!(f, "{}B", b.bytes()),
            QueueLimit::Packets(n) => write!(f, "{n}pkt"),
            QueueLimit::Time(d) => write!(f, "{d}"),
        }
    }
}

impl std::str::FromStr for QueueLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        QueueLimit::parse(s)
    }
}

/// FIFO buffer with tail drop. Packets are stored with their enqueue time.
#[derive(Clone, Debug)]
pub struct DropTail {
    limit: QueueLimit,
    packets: VecDeque<(Packet, Time)>,
    bytes: DataSize,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Self {
        // Sized up front so that steady state never reallocates; an unlimited
        // queue grows only when it really holds more.
        let cap = match limit {
            QueueLimit::Packets(n) => n.saturating_add(1).min(65_536),
            _ => 1024,
        };
        DropTail { limit, packets: VecDeque::with_capacity(cap), bytes: DataSize::ZERO }
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    /// Whether a packet of `size` would fit now ([`QueueLimit::admits`]).
    pub fn admits(&self, size: DataSize, rate: DataRate) -> bool {
        self.limit.admits(self.bytes, self.packets.len(), size, rate)
    }

    /// Appends `packet` unless the limit refuses it (tail drop); `rate` is
    /// asked for only by the time limit.
    pub fn enqueue(&mut self, now: Time, packet: Packet, rate: impl FnOnce() -> DataRate) -> bool {
        let rate = if self.limit.needs_rate() { rate() } else { DataRate::ZERO };
        if !self.admits(packet.size, rate) {
            return false;
        }
        self.bytes += packet.size;
        self.packets.push_back((packet, now));
        true
    }

    pub fn front(&self) -> Option<&(Packet, Time)> {
        self.packets.front()
    }

    pub fn pop_front(&mut self) -> Option<(Packet, Time)> {
        let out = self.packets.pop_front()?;
        self.bytes -= out.0.size;
        Some(out)
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn bytes(&self) -> DataSize {
        self.bytes
    }
}

/// Which discipline the bottleneck buffer runs, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDiscipline {
    /// FIFO, arrivals over the limit dropped.
    DropTail(QueueLimit),
    /// CoDel (RFC 8289) on one FIFO; `limit` tail-drops as a backstop.
    Codel { params: CodelParams, limit: QueueLimit },
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodelConfig),
}

impl Default for QueueDiscipline {
    fn default() -> Self {
        QueueDiscipline::DropTail(QueueLimit::Unlimited)
    }
}

impl From<QueueLimit> for QueueDiscipline {
    fn from(limit: QueueLimit) -> Self {
        QueueDiscipline::DropTail(limit)
    }
}

impl From<FqCodelConfig> for QueueDiscipline {
    fn from(c: FqCodelConfig) -> Self {
        QueueDiscipline::FqCodel(c)
    }
}

impl QueueDiscipline {
    /// CoDel with the RFC 8289 constants and the Linux limit (1000 packets).
    pub fn codel() -> Self {
        QueueDiscipline::Codel { params: CodelParams::default(), limit: QueueLimit::Packets(CODEL_LIMIT) }
    }

    /// FQ-CoDel with the RFC 8290 / Linux defaults.
    pub fn fq_codel() -> Self {
        QueueDiscipline::FqCodel(FqCodelConfig::default())
    }

    /// The limit on what the buffer holds (FQ-CoDel: its packet limit).
    pub fn limit(&self) -> QueueLimit {
        match *self {
            QueueDiscipline::DropTail(l) | QueueDiscipline::Codel { limit: l, .. } => l,
            QueueDiscipline::FqCodel(c) => QueueLimit::Packets(c.limit),
        }
    }
}

impl fmt::Display for QueueDiscipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueDiscipline::DropTail(l) => write!(f, "{l}"),
            QueueDiscipline::Codel { params: p, limit } => {
                write!(f, "codel(target={}, interval={}, mtu={}, limit={limit})", p.target, p.interval, p.mtu)
            }
            QueueDiscipline::FqCodel(c) => write!(
                f,
                "fq_codel(target={}, interval={}, mtu={}, quantum={}, limit={}pkt, memory_limit={}, drop_batch={})",
                c.codel.target, c.codel.interval, c.codel.mtu, c.quantum, c.limit, c.memory_limit, c.drop_batch
            ),
        }
    }
}

/// The bottleneck buffer under its discipline. The link asks for the next
/// packet with [`start`](Queue::start) when it can transmit (this is where
/// an AQM drops) and removes it with [`finish`](Queue::finish) when it has
/// left; until then the packet counts in `len`, `bytes` and the limit.
#[derive(Clone, Debug)]
pub enum Queue {
    DropTail(DropTail),
    Codel(Codel),
    FqCodel(FqCodel),
}

impl Queue {
    pub fn new(discipline: QueueDiscipline) -> Self {
        match discipline {
            QueueDiscipline::DropTail(l) => Queue::DropTail(DropTail::new(l)),
            QueueDiscipline::Codel { params, limit } => Queue::Codel(Codel::new(params, limit)),
            QueueDiscipline::FqCodel(c) => Queue::FqCodel(FqCodel::new(c)),
        }
    }

    pub fn discipline(&self) -> QueueDiscipline {
        match self {
            Queue::DropTail(q) => QueueDiscipline::DropTail(q.limit()),
            Queue::Codel(q) => QueueDiscipline::Codel { params: q.params(), limit: q.limit() },
            Queue::FqCodel(q) => QueueDiscipline::FqCodel(q.config()),
        }
    }

    /// Offers a packet; `false` if the arriving packet is dropped. FQ-CoDel
    /// may instead drop queued packets of the fattest flow; those go to
    /// `drops`. `rate` is asked for only by a time limit.
    pub fn enqueue(
        &mut self,
        now: Time,
        packet: Packet,
        rate: impl FnOnce() -> DataRate,
        drops: &mut VecDeque<Queued>,
    ) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, packet, rate),
            Queue::Codel(q) => q.enqueue(now, packet, rate),
            Queue::FqCodel(q) => q.enqueue(now, packet, drops),
        }
    }

    /// The packet whose service starts at `now`, with its enqueue time;
    /// packets an AQM drops on the way go to `drops`.
    pub fn start(&mut self, now: Time, drops: &mut VecDeque<Queued>) -> Option<Queued> {
        match self {
            Queue::DropTail(q) => q.front().copied(),
            Queue::Codel(q) => q.start(now, drops),
            Queue::FqCodel(q) => q.start(now, drops),
        }
    }

    /// Removes the packet in service.
    pub fn finish(&mut self) -> Option<Queued> {
        match self {
            Queue::DropTail(q) => q.pop_front(),
            Queue::Codel(q) => q.finish(),
            Queue::FqCodel(q) => q.finish(),
        }
    }

    /// Packets buffered, the one in service included.
    pub fn len(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len(),
            Queue::Codel(q) => q.len(),
            Queue::FqCodel(q) => q.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes buffered, the packet in service included.
    pub fn bytes(&self) -> DataSize {
        match self {
            Queue::DropTail(q) => q.bytes(),
            Queue::Codel(q) => q.bytes(),
            Queue::FqCodel(q) => q.bytes(),
        }
    }
}

/// The bottleneck transmitter: when does the last byte of a packet leave?
#[derive(Clone, Debug)]
pub struct Server {
    capacity: Capacity,
    /// Departure time and exact cumulative service (bits) of the previous
    /// packet, so back-to-back packets do not lose the sub-µs remainder of
    /// each rounded departure time.
    carry: Option<(Time, f64)>,
    cursor: OpportunityCursor,
}

impl Server {
    pub fn new(capacity: Capacity) -> Self {
        let bytes = match &capacity {
            Capacity::Trace(tc) => tc.bytes_per_opportunity,
            _ => OPPORTUNITY_BYTES,
        };
        Server { capacity, carry: None, cursor: OpportunityCursor::new(bytes) }
    }

    pub fn capacity(&self) -> &Capacity {
        &self.capacity
    }

    /// When the last byte of a `size` packet leaves if its service starts at
    /// `start` with the link idle. Rate capacities are integrated from
    /// `start` (zero-rate stretches are waited out); `Time::MAX` if the
    /// capacity stays zero forever. Traces use Mahimahi's byte-level
    /// opportunities. Calls must come in order of `start`.
    pub fn finish_time(&mut self, start: Time, size: DataSize) -> Time {
        let bits = size.bits() as f64;
        let (f0, target) = match &self.capacity {
            Capacity::Trace(tc) => {
                let off = tc.offset.as_micros();
                let d = self.cursor.serve(&tc.trace, start.as_micros() + off, size.bytes());
                return Time::from_micros(d - off).max(start);
            }
            Capacity::Constant(r) if r.bps() == 0 => return Time::MAX,
            Capacity::Constant(r) => {
                let f0 = self.carried(start).unwrap_or_else(|| us(start) * bits_per_us(*r));
                (f0, (f0 + bits) / bits_per_us(*r))
            }
            Capacity::Piecewise(s) => {
                let f0 = self.carried(start).unwrap_or_else(|| s.cumulative(us(start)));
                match s.inverse(f0 + bits) {
                    Some(t) => (f0, t),
                    None => {
                        self.carry = None;
                        return Time::MAX;
                    }
                }
            }
        };
        let done = round_up(target).max(start);
        self.carry = Some((done, f0 + bits));
        done
    }

    fn carried(&self, start: Time) -> Option<f64> {
        self.carry.filter(|c| c.0 == start).map(|c| c.1)
    }
}

/// Exact µs → `Time`, rounding up (a packet is not out before its last bit),
/// with 1 ns of slack for floating-point noise.
fn round_up(t_us: f64) -> Time {
    if t_us >= Time::MAX.as_micros() as f64 {
        Time::MAX
    } else {
        Time::from_micros((t_us - 1e-3).ceil() as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcc_core::packet::{PacketKind, NO_FRAME};

    fn pkt(size: u64) -> Packet {
        Packet {
            flow: 0,
            kind: PacketKind::Media,
            seq: 0,
            size: DataSize::from_bytes(size),
            send_time: Time::ZERO,
            frame: NO_FRAME,
            index: 0,
            count: 1,
            probe_cluster: -1,
            ..Packet::default()
        }
    }

    fn ms(x: i64) -> Time {
        Time::from_millis(x)
    }
    fn b(n: u64) -> DataSize {
        DataSize::from_bytes(n)
    }

    #[test]
    fn parse_forms() {
        assert_eq!(QueueLimit::parse("unlimited"), Ok(QueueLimit::Unlimited));
        assert_eq!(QueueLimit::parse("100ms"), Ok(QueueLimit::Time(Duration::from_millis(100))));
        assert_eq!(QueueLimit::parse("0.5s"), Ok(QueueLimit::Time(Duration::from_millis(500))));
        assert_eq!(QueueLimit::parse("64kB"), Ok(QueueLimit::Bytes(DataSize::from_bytes(64_000))));
        assert_eq!(QueueLimit::parse("150000B"), Ok(QueueLimit::Bytes(DataSize::from_bytes(150_000))));
        assert_eq!(QueueLimit::parse("100pkt"), Ok(QueueLimit::Packets(100)));
        assert_eq!(QueueLimit::parse("100 packets"), Ok(QueueLimit::Packets(100)));
        assert!(QueueLimit::parse("100").unwrap_err().contains("needs a unit"));
        assert!(QueueLimit::parse("-5ms").unwrap_err().contains("negative"));
        assert!(QueueLimit::parse("1.5pkt").is_err());
        assert!(QueueLimit::parse("10 furlongs").is_err());
        assert!(QueueLimit::parse("lots").is_err());
        for s in ["unlimited", "100ms", "64000B", "7pkt"] {
            assert_eq!(QueueLimit::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn byte_limit_drops_exactly_past_the_limit() {
        let mut q = DropTail::new(QueueLimit::Bytes(DataSize::from_bytes(3000)));
        let no_rate = || DataRate::ZERO;
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
        assert!(!q.enqueue(Time::ZERO, pkt(1001), no_rate));
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate)); // exactly 3000
        assert!(!q.enqueue(Time::ZERO, pkt(1), no_rate));
        assert_eq!((q.len(), q.bytes()), (3, DataSize::from_bytes(3000)));
        q.pop_front();
        assert!(q.enqueue(Time::ZERO, pkt(1000), no_rate));
    }

    #[test]
    fn packet_limit() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(!q.enqueue(Time::ZERO, pkt(10), || DataRate::ZERO));
        assert_eq!(q.pop_front().map(|p| p.0.size.bytes()), Some(1500));
        assert!(q.enqueue(Time::ZERO, pkt(10), || DataRate::ZERO));
    }

    #[test]
    fn time_limit_uses_current_rate() {
        // 100 ms at 1 Mbps = 12 500 B.
        let mut q = DropTail::new(QueueLimit::Time(Duration::from_millis(100)));
        let r = || DataRate::from_mbps(1);
        for _ in 0..12 {
            assert!(q.enqueue(Time::ZERO, pkt(1000), r));
        }
        assert!(!q.enqueue(Time::ZERO, pkt(501), r));
        assert!(q.enqueue(Time::ZERO, pkt(500), r));
        assert!(!q.enqueue(Time::ZERO, pkt(1), r));
        // Twice the rate: room for 12 500 B more.
        assert!(q.enqueue(Time::ZERO, pkt(12_500), || DataRate::from_mbps(2)));
        assert!(!q.enqueue(Time::ZERO, pkt(1), || DataRate::from_mbps(2)));
        // Zero capacity: one packet into an empty buffer, nothing more.
        let mut q = DropTail::new(QueueLimit::Time(Duration::from_millis(100)));
        assert!(q.enqueue(Time::ZERO, pkt(1500), || DataRate::ZERO));
        assert!(!q.enqueue(Time::ZERO, pkt(1), || DataRate::ZERO));
    }

    #[test]
    fn fifo_keeps_enqueue_times() {
        let mut q = DropTail::new(QueueLimit::Unlimited);
        for i in 0..3 {
            q.enqueue(Time::from_millis(i), pkt(100 + i as u64), || DataRate::ZERO);
        }
        let order: Vec<(u64, Time)> = std::iter::from_fn(|| q.pop_front()).map(|(p, t)| (p.size.bytes(), t)).collect();
        assert_eq!(order, vec![(100, Time::ZERO), (101, Time::from_millis(1)), (102, Time::from_millis(2))]);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), DataSize::ZERO);
    }

    #[test]
    fn constant_rate_service() {
        // 1250 B = 10 000 bit at 1 Mbps = 10 ms.
        let mut s = Server::new(Capacity::constant(DataRate::from_mbps(1)));
        assert_eq!(s.finish_time(Time::ZERO, b(1250)), ms(10));
        assert_eq!(s.finish_time(ms(10), b(1250)), ms(20));
        assert_eq!(s.finish_time(ms(25), b(125)), ms(26));
        // 1200 B at 7 Mbps is 1371.43 µs: 1000 back to back end at 1.371429 s,
        // with no drift from rounding each departure.
        let mut s = Server::new(Capacity::constant(DataRate::from_mbps(7)));
        let mut t = Time::ZERO;
        for _ in 0..1000 {
            t = s.finish_time(t, b(1200));
        }
        assert_eq!(t, Time::from_micros(1_371_429));
        let mut s = Server::new(Capacity::constant(DataRate::ZERO));
        assert_eq!(s.finish_time(Time::ZERO, b(1)), Time::MAX);
    }

    #[test]
    fn service_integrates_changing_rate() {
        // 3 Mbps → 500 kbps at 1 s. 1500 B from 0.998 s: 750 B in the last
        // 2 ms at 3 Mbps, 750 B at 500 kbps = 12 ms → 1.012 s.
        let c = Capacity::steps(vec![(Time::ZERO, DataRate::from_mbps(3)), (ms(1000), DataRate::from_kbps(500))]);
        let mut s = Server::new(c.unwrap());
        assert_eq!(s.finish_time(ms(998), b(1500)), ms(1012));
        // Linear 0 → 8 Mbps over 1 s: 12 000 bit after √(0.003) s = 54.772 ms.
        let mut s =
            Server::new(Capacity::ramp(DataRate::ZERO, DataRate::from_mbps(8), Time::ZERO, Duration::from_secs(1)));
        assert_eq!(s.finish_time(Time::ZERO, b(1500)), Time::from_micros(54_773));
        // Zero-rate stretch: 1 Mbps / 0 every second. 1250 B from 0.995 s:
        // 625 B before the gap, 625 B from 2 s → 2.005 s.
        let mut s = Server::new(Capacity::pulse(DataRate::from_mbps(1), DataRate::ZERO, Duration::from_secs(1)));
        assert_eq!(s.finish_time(ms(995), b(1250)), ms(2005));
        // Capacity zero for ever after 1 s.
        let c = Capacity::steps(vec![(Time::ZERO, DataRate::from_mbps(1)), (ms(1000), DataRate::ZERO)]);
        let mut s = Server::new(c.unwrap());
        assert_eq!(s.finish_time(ms(995), b(1250)), Time::MAX);
    }
}
