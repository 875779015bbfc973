//! The bottleneck transmitter ([`Server`]): when the last byte of a packet leaves at the link capacity.

use rtcc_core::units::{DataSize, Time};

use crate::trace::{bits_per_us, us, Capacity, OpportunityCursor, OPPORTUNITY_BYTES};

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
    use rtcc_core::units::{DataRate, Duration};

    use super::*;

    use crate::queue::fixtures::{b, ms};

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

    #[test]
    fn all_zero_capacity_is_never_served() {
        // All-zero is allowed here (the config refuses it): nothing is ever served.
        let mut server = Server::new(Capacity::pulse(DataRate::ZERO, DataRate::ZERO, Duration::from_secs(1)));
        assert_eq!(server.finish_time(Time::ZERO, DataSize::from_bytes(1)), Time::MAX);
    }
}
