//! TCP, sans-IO: a sender (RFC 5681 slow start and congestion avoidance,
//! RFC 6675 SACK loss recovery with RFC 6937 PRR as Linux, RFC 6582
//! NewReno without SACK, RFC 6298 RTO with Linux's 200 ms floor, RFC 6928
//! initial window 10, RFC 7323 timestamps for RTT) and a receiver (delayed
//! ACKs, SACK blocks, receive window), with pluggable congestion controls
//! (`reno`, `cubic`, `bbr`). Sequence numbers count segments, as Linux
//! counts its window: a segment is up to one MSS of payload.

pub mod bbr;
pub mod cc;
pub mod cubic;
mod prr;
mod rate;
pub mod receiver;
pub mod reno;
mod rtt;
pub mod sender;
#[cfg(test)]
mod tests;

pub use cc::{AckSample, CongestionControl, RateSample, Window};
pub use cubic::{Cubic, CubicConfig};
pub use receiver::{TcpReceiver, TcpReceiverConfig};
pub use reno::Reno;
pub use sender::{CaState, TcpConfig, TcpSender, TcpStats};

use crate::units::{DataSize, Time};

/// Names `congestion_control` accepts.
pub const CC_NAMES: &[&str] = &["reno", "cubic", "bbr"];

/// Build a congestion control by name. `params` are (name, value) pairs;
/// flags take 0 or 1. Unknown names and parameters are refused.
pub fn congestion_control(name: &str, params: &[(&str, f64)]) -> Result<Box<dyn CongestionControl>, String> {
    congestion_control_seeded(name, params, 0)
}

/// `congestion_control`, with the seed of a congestion control that draws
/// random numbers (BBR's first PROBE_BW phase).
pub fn congestion_control_seeded(
    name: &str,
    params: &[(&str, f64)],
    seed: u64,
) -> Result<Box<dyn CongestionControl>, String> {
    let flag = |v: f64| v != 0.0;
    match name {
        "reno" => {
            if let Some((p, _)) = params.first() {
                return Err(format!("reno takes no parameter `{p}`"));
            }
            Ok(Box::new(Reno::new()))
        }
        "cubic" => {
            let mut cfg = CubicConfig::default();
            for &(p, v) in params {
                match p {
                    "c" if v > 0.0 => cfg.c = v,
                    "beta" if v > 0.0 && v < 1.0 => cfg.beta = v,
                    "fast_convergence" => cfg.fast_convergence = flag(v),
                    "tcp_friendliness" => cfg.tcp_friendliness = flag(v),
                    "hystart" => cfg.hystart = flag(v),
                    "whole_segments" => cfg.whole_segments = flag(v),
                    "c" | "beta" => return Err(format!("cubic `{p}` = {v} is out of range")),
                    _ => return Err(format!("cubic has no parameter `{p}`")),
                }
            }
            Ok(Box::new(Cubic::new(cfg)))
        }
        "bbr" => {
            let mut cfg = crate::bbr::BbrConfig { seed, ..crate::bbr::BbrConfig::default() };
            for &(p, v) in params {
                match p {
                    "lt_sampling" => cfg.lt_sampling = flag(v),
                    _ => return Err(format!("bbr has no parameter `{p}`")),
                }
            }
            Ok(Box::new(bbr::TcpBbr::new(cfg)))
        }
        _ => Err(format!("unknown congestion control `{name}` (known: {})", CC_NAMES.join(", "))),
    }
}

/// IPv4 (20) + TCP (20) + timestamp option (12, Linux's default): the
/// header on every segment and ACK.
pub const HEADER: DataSize = DataSize::from_bytes(52);

/// Payload per full segment: a 1500-byte MTU less `HEADER` (Linux's MSS
/// with timestamps on Ethernet).
pub const DEFAULT_MSS: DataSize = DataSize::from_bytes(1448);

/// One data segment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Segment number (0, 1, 2, … per connection).
    pub seq: u32,
    /// Payload bytes (≤ MSS).
    pub len: DataSize,
    /// A retransmission.
    pub retransmit: bool,
    /// Timestamp value (RFC 7323 TSval): the sender's clock when sent.
    pub ts: Time,
}

impl Segment {
    pub fn wire_size(&self) -> DataSize {
        self.len + HEADER
    }
}

/// A SACK block: segments `start..end` received (RFC 2018).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

/// Most SACK blocks that fit beside the timestamp option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// One ACK on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Next segment expected: everything below it arrived.
    pub cum: u32,
    /// SACK blocks, most recent first (RFC 2018 §4); `sack_n` in use.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_n: u8,
    /// Timestamp echo (RFC 7323 TSecr).
    pub ts_echo: Time,
    /// Receive window in segments.
    pub rwnd: u32,
}

impl Ack {
    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_n as usize]
    }
    /// Header, plus the SACK option (2 + 8 per block, padded with two NOPs).
    pub fn wire_size(&self) -> DataSize {
        let sack = if self.sack_n > 0 { 4 + 8 * self.sack_n as u64 } else { 0 };
        HEADER + DataSize::from_bytes(sack)
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    fn err(name: &str, params: &[(&str, f64)]) -> String {
        congestion_control(name, params).err().expect("refused")
    }

    #[test]
    fn tcp_registry_builds_and_refuses() {
        for name in CC_NAMES {
            assert_eq!(congestion_control(name, &[]).unwrap().name(), *name);
        }
        assert!(congestion_control("cubic", &[("beta", 0.5), ("hystart", 0.0)]).is_ok());
        assert!(err("cubic", &[("beta", 1.5)]).contains("out of range"));
        assert!(err("cubic", &[("gamma", 1.0)]).contains("no parameter"));
        assert!(congestion_control("reno", &[("c", 1.0)]).is_err());
        assert!(err("vegas", &[]).contains("reno, cubic"));
    }
}
