//! What the bottleneck buffer holds: the queued-packet record ([`Queued`]) and the limit ([`QueueLimit`]).

use std::fmt;

use crate::endpoint::Envelope;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

/// What a bottleneck buffer holds: a datagram of some wire size from some
/// flow (FQ-CoDel queues by it). A packet's `Envelope` is one; the
/// simulator's datagrams carry what a receiving end sends back too.
pub trait Item: Clone + fmt::Debug {
    fn size(&self) -> DataSize;
    fn flow(&self) -> u16;
}

/// A buffered item and the time it was enqueued.
pub type Queued<T = Envelope> = (T, Time);

/// Smallest byte (or time) limit a buffer may have: one MTU-sized packet,
/// 1500 B (Ethernet's MTU). A drop-tail buffer admits a packet only if it
/// fits whole, so a smaller one drops every full-sized packet; "0pkt" is
/// refused for the same reason.
pub const MIN_QUEUE_BYTES: DataSize = DataSize::from_bytes(1500);

/// What "unlimited" holds at most: one million packets, over 50 minutes of
/// queue at 3 Mbps with 1200-byte packets and far beyond any real buffer,
/// so no experiment notices; it keeps a run's memory bounded (about 100 MB
/// of queued packets) when a sender far outruns its link.
pub const UNLIMITED_PACKETS: usize = 1_000_000;

/// How much the bottleneck buffer holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueLimit {
    /// No limit a scenario sets; [`UNLIMITED_PACKETS`] at most, to bound memory.
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
            QueueLimit::Bytes(b) if b < MIN_QUEUE_BYTES => Err(format!(
                "queue limit '{s}' holds less than one {}-byte packet (one MTU), so every packet would be dropped; \
                 use at least \"{}B\" or a packet count such as \"1pkt\"",
                MIN_QUEUE_BYTES.bytes(),
                MIN_QUEUE_BYTES.bytes()
            )),
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
    /// Every limit also holds at most [`UNLIMITED_PACKETS`]: a byte or time
    /// limit far beyond the link would otherwise let memory grow with the
    /// offered load.
    pub fn admits(&self, bytes: DataSize, packets: usize, size: DataSize, rate: DataRate) -> bool {
        if packets >= UNLIMITED_PACKETS {
            return false;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Less than one MTU-sized packet is refused, as "0pkt" is.
        let e = QueueLimit::parse("1B").unwrap_err();
        assert!(e.starts_with("queue limit '1B' holds less than one 1500-byte packet (one MTU)"), "{e}");
        assert!(QueueLimit::parse("1.4kB").is_err());
        assert_eq!(QueueLimit::parse("1500B"), Ok(QueueLimit::Bytes(DataSize::from_bytes(1500))));
        for s in ["unlimited", "100ms", "64000B", "7pkt"] {
            assert_eq!(QueueLimit::parse(s).unwrap().to_string(), s);
        }
    }
}
