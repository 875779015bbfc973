//! Cross-traffic sources, sans-IO: a constant-rate or on/off UDP sender and
//! the web-like object generator that drives a TCP connection.
//!
//! On/off UDP follows ns-2's Exponential On/Off source (constant rate while
//! on, exponentially distributed on and off periods). Web-like traffic
//! follows draft-ietf-rmcat-eval-criteria §6.1 / RFC 8868 §6.1 ("short TCP
//! flows"): a sequence of downloads of 30–50 KB interleaved with idle
//! periods drawn from an exponential distribution with mean 10 s.

use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

/// An exponentially distributed duration with mean `mean` (inverse CDF).
pub fn exponential(rng: &mut Rng, mean: Duration) -> Duration {
    let u = rng.uniform();
    Duration::from_secs_f64(-(1.0 - u).ln() * mean.as_secs_f64())
}

/// A UDP source: packets of `packet` wire bytes at `rate`, always or
/// alternating exponentially distributed on and off periods.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpConfig {
    pub rate: DataRate,
    /// Wire size of each datagram (IP and UDP headers included).
    pub packet: DataSize,
    /// Mean on and off periods; `None`, always on.
    pub on_off: Option<(Duration, Duration)>,
}

impl Default for UdpConfig {
    fn default() -> Self {
        // 1500 B: a full Ethernet MTU, as iperf3's default datagram nearly is.
        UdpConfig { rate: DataRate::from_kbps(1000), packet: DataSize::from_bytes(1500), on_off: None }
    }
}

pub struct UdpSender {
    cfg: UdpConfig,
    rng: Rng,
    /// When the next datagram is due.
    next: Time,
    /// Start of the current on period and datagrams sent in it: send times
    /// are counted from there, so microsecond rounding never accumulates.
    period_start: Time,
    period_sent: u64,
    /// End of the current on period (`Time::MAX` without on/off).
    on_until: Time,
    stop: Option<Time>,
    pub packets_sent: u64,
    pub bytes_sent: u64,
}

impl UdpSender {
    /// A source that starts (on) at `start` and sends nothing after `stop`.
    pub fn new(cfg: UdpConfig, start: Time, stop: Option<Time>, mut rng: Rng) -> Self {
        let on_until = match cfg.on_off {
            Some((on, _)) => start + exponential(&mut rng, on),
            None => Time::MAX,
        };
        UdpSender {
            cfg,
            rng,
            next: start,
            period_start: start,
            period_sent: 0,
            on_until,
            stop,
            packets_sent: 0,
            bytes_sent: 0,
        }
    }

    pub fn config(&self) -> &UdpConfig {
        &self.cfg
    }

    /// When the next datagram leaves.
    pub fn poll_timeout(&self) -> Option<Time> {
        (self.stop.is_none_or(|s| self.next < s) && self.cfg.rate > DataRate::ZERO).then_some(self.next)
    }

    /// The datagram due at `now`, if any: its wire size.
    pub fn poll_transmit(&mut self, now: Time) -> Option<DataSize> {
        self.poll_timeout().filter(|&t| t <= now)?;
        if self.next >= self.on_until {
            // The on period ended: idle for an off period, then a new on period.
            let (on, off) = self.cfg.on_off.expect("on_until is finite only with on/off");
            let resume = self.on_until + exponential(&mut self.rng, off);
            self.on_until = resume + exponential(&mut self.rng, on);
            self.next = resume;
            self.period_start = resume;
            self.period_sent = 0;
            return None;
        }
        self.period_sent += 1;
        let sent = DataSize::from_bytes(self.period_sent * self.cfg.packet.bytes());
        self.next = self.period_start + sent / self.cfg.rate;
        self.packets_sent += 1;
        self.bytes_sent += self.cfg.packet.bytes();
        Some(self.cfg.packet)
    }
}

/// How web object sizes are drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Uniform in `[lo, hi]` (RFC 8868 §6.1: 30–50 KB).
    Uniform { lo: DataSize, hi: DataSize },
    /// Lognormal with the given mean and σ of the underlying normal.
    Lognormal { mean: DataSize, sigma: f64 },
    /// Pareto with the given mean and shape α > 1 (heavy-tailed web objects,
    /// Crovella & Bestavros 1997 found α ≈ 1.1–1.5).
    Pareto { mean: DataSize, shape: f64 },
    /// Always this size.
    Fixed(DataSize),
}

impl SizeDist {
    pub fn sample(&self, rng: &mut Rng) -> DataSize {
        let bytes = match *self {
            SizeDist::Uniform { lo, hi } => lo.bytes() as f64 + rng.uniform() * (hi.bytes() - lo.bytes()) as f64,
            SizeDist::Lognormal { mean, sigma } => {
                // E[X] = exp(μ + σ²/2).
                let mu = (mean.bytes() as f64).ln() - sigma * sigma / 2.0;
                (mu + sigma * rng.normal()).exp()
            }
            SizeDist::Pareto { mean, shape } => {
                // E[X] = α·x_m/(α−1).
                let xm = mean.bytes() as f64 * (shape - 1.0) / shape;
                xm / (1.0 - rng.uniform()).powf(1.0 / shape)
            }
            SizeDist::Fixed(s) => s.bytes() as f64,
        };
        // Objects of at least one byte; a heavy tail is cut at 1 GB.
        DataSize::from_bytes(bytes.round().clamp(1.0, 1e9) as u64)
    }

    pub fn mean(&self) -> DataSize {
        match *self {
            SizeDist::Uniform { lo, hi } => DataSize::from_bytes((lo.bytes() + hi.bytes()) / 2),
            SizeDist::Lognormal { mean, .. } | SizeDist::Pareto { mean, .. } => mean,
            SizeDist::Fixed(s) => s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WebConfig {
    pub size: SizeDist,
    /// Mean idle ("think") time between the end of one download and the
    /// start of the next, exponentially distributed.
    pub think: Duration,
    /// Start with an idle period rather than a download (RFC 8868 §6.1:
    /// some flows start in the off state).
    pub start_idle: bool,
}

impl Default for WebConfig {
    fn default() -> Self {
        // RFC 8868 §6.1.
        WebConfig {
            size: SizeDist::Uniform { lo: DataSize::from_bytes(30_000), hi: DataSize::from_bytes(50_000) },
            think: Duration::from_secs(10),
            start_idle: false,
        }
    }
}

/// One download: its size and when it was requested.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Object {
    pub size: DataSize,
    pub start: Time,
}

/// The web-like application: one object at a time, the next after a think
/// time once the previous one is complete.
pub struct WebSource {
    cfg: WebConfig,
    rng: Rng,
    /// When the next object is requested, if one is waiting to start.
    next: Option<Time>,
    stop: Option<Time>,
    pub started: u64,
    pub completed: u64,
}

impl WebSource {
    pub fn new(cfg: WebConfig, start: Time, stop: Option<Time>, mut rng: Rng) -> Self {
        let first = if cfg.start_idle { start + exponential(&mut rng, cfg.think) } else { start };
        WebSource { cfg, rng, next: Some(first), stop, started: 0, completed: 0 }
    }

    pub fn config(&self) -> &WebConfig {
        &self.cfg
    }

    /// When the flow ends: nothing is requested from then on.
    pub fn stop(&self) -> Option<Time> {
        self.stop
    }

    /// When the next download is requested (none while one is running).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next.filter(|&t| self.stop.is_none_or(|s| t < s))
    }

    /// The download requested at `now`, if one is due.
    pub fn poll_object(&mut self, now: Time) -> Option<Object> {
        let t = self.poll_timeout().filter(|&t| t <= now)?;
        self.next = None;
        self.started += 1;
        Some(Object { size: self.cfg.size.sample(&mut self.rng), start: t })
    }

    /// The running download completed at `now`; the next follows a think time.
    pub fn complete(&mut self, now: Time) {
        self.completed += 1;
        self.next = Some(now + exponential(&mut self.rng, self.cfg.think));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_udp_keeps_its_rate_and_stops() {
        let cfg = UdpConfig { rate: DataRate::from_kbps(1200), packet: DataSize::from_bytes(1500), on_off: None };
        let mut u = UdpSender::new(cfg, Time::from_secs_f64(1.0), Some(Time::from_secs_f64(3.0)), Rng::new(1));
        let mut sent = Vec::new();
        while let Some(t) = u.poll_timeout() {
            if u.poll_transmit(t).is_some() {
                sent.push(t);
            }
        }
        // 1.2 Mbps of 1500 B packets is one per 10 ms, for 2 s.
        assert_eq!(sent.len(), 200);
        assert_eq!(sent[1] - sent[0], Duration::from_millis(10));
        assert_eq!(u.bytes_sent, 300_000);
    }

    #[test]
    fn fast_udp_keeps_its_rate_below_a_microsecond_per_packet() {
        // 700 Mbps of 200 B packets is one per 2.29 µs.
        let cfg = UdpConfig { rate: DataRate::from_kbps(700_000), packet: DataSize::from_bytes(200), on_off: None };
        let mut u = UdpSender::new(cfg, Time::ZERO, Some(Time::from_secs_f64(0.1)), Rng::new(1));
        while let Some(t) = u.poll_timeout() {
            u.poll_transmit(t);
        }
        let mbps = u.bytes_sent as f64 * 8.0 / 0.1 / 1e6;
        assert!((mbps / 700.0 - 1.0).abs() < 0.001, "{mbps} Mbps");
    }

    #[test]
    fn on_off_udp_is_on_for_its_share() {
        let ms = Duration::from_millis;
        let cfg = UdpConfig {
            rate: DataRate::from_kbps(1200),
            packet: DataSize::from_bytes(1500),
            on_off: Some((ms(500), ms(1500))),
        };
        let end = Time::from_secs_f64(20_000.0);
        let mut u = UdpSender::new(cfg, Time::ZERO, Some(end), Rng::new(7));
        while let Some(t) = u.poll_timeout() {
            u.poll_transmit(t);
        }
        // On a quarter of the time: about 300 kbps on average.
        let kbps = u.bytes_sent as f64 * 8.0 / 20_000.0 / 1e3;
        assert!((kbps / 300.0 - 1.0).abs() < 0.04, "{kbps} kbps");
    }

    #[test]
    fn size_distributions_have_their_means() {
        let mut rng = Rng::new(3);
        let kb = |k: u64| DataSize::from_bytes(k * 1000);
        for d in [
            SizeDist::Uniform { lo: kb(30), hi: kb(50) },
            SizeDist::Lognormal { mean: kb(40), sigma: 1.0 },
            SizeDist::Pareto { mean: kb(40), shape: 2.5 },
        ] {
            let n = 200_000;
            let m = (0..n).map(|_| d.sample(&mut rng).bytes() as f64).sum::<f64>() / n as f64;
            assert!((m / 40_000.0 - 1.0).abs() < 0.03, "{d:?}: mean {m}");
        }
        let u = SizeDist::Uniform { lo: kb(30), hi: kb(50) };
        assert!((0..1000).all(|_| (30_000..=50_000).contains(&u.sample(&mut rng).bytes())));
    }

    #[test]
    fn web_source_waits_for_completion_and_thinks() {
        let mut w = WebSource::new(WebConfig::default(), Time::ZERO, None, Rng::new(5));
        let o = w.poll_object(Time::ZERO).expect("starts on");
        assert_eq!(o.start, Time::ZERO);
        assert!(w.poll_timeout().is_none(), "one download at a time");
        let mut gaps = 0.0;
        let mut now = Time::from_secs_f64(1.0);
        for _ in 0..5000 {
            w.complete(now);
            let next = w.poll_timeout().expect("next requested");
            gaps += (next - now).as_secs_f64();
            now = next;
            w.poll_object(now).expect("due");
        }
        assert!((gaps / 5000.0 / 10.0 - 1.0).abs() < 0.05, "mean think {}", gaps / 5000.0);
    }
}
