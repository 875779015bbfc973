//! The bottleneck buffer: a FIFO with a drop-tail limit in bytes, packets or
//! milliseconds of link time. It holds every packet at the bottleneck,
//! including the one being transmitted, so limits count the whole buffer.

use std::collections::VecDeque;
use std::fmt;

use rtcc_core::packet::Packet;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

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
            return Err(format!("queue limit '{s}' is not a number with a unit (e.g. \"100ms\", \"64kB\", \"100pkt\") or \"unlimited\""));
        }
        match unit {
            "" => Err(format!("queue limit '{s}' needs a unit: ms (link time), B/kB (bytes) or pkt (packets)")),
            "pkt" | "pkts" | "packet" | "packets" => num
                .parse::<usize>()
                .map(QueueLimit::Packets)
                .map_err(|_| format!("queue limit '{s}': a packet count must be a whole number")),
            "us" | "ms" | "s" | "sec" | "min" => s.parse().map(QueueLimit::Time).map_err(|e| format!("queue limit: {e}")),
            _ => s.parse().map(QueueLimit::Bytes).map_err(|e| format!("queue limit: {e}")),
        }
    }

    /// Whether the time limit needs the current capacity.
    pub fn needs_rate(&self) -> bool {
        matches!(self, QueueLimit::Time(_))
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

    /// Whether a packet of `size` would fit now. `rate` is the capacity in
    /// force (used by the time limit only). At zero capacity the time limit
    /// admits a packet into an empty buffer and refuses any more: the buffer
    /// cannot drain, but dropping every packet during an outage would hide
    /// the outage from the sender's delay signal.
    pub fn admits(&self, size: DataSize, rate: DataRate) -> bool {
        match self.limit {
            QueueLimit::Unlimited => true,
            QueueLimit::Bytes(max) => self.bytes + size <= max,
            QueueLimit::Packets(max) => self.packets.len() < max,
            QueueLimit::Time(max) => {
                if rate == DataRate::ZERO {
                    self.packets.is_empty()
                } else {
                    (self.bytes + size) / rate <= max
                }
            }
        }
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
        }
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
}
