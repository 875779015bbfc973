//! Cross traffic as two ends apart: a TCP connection (bulk, or web-like
//! downloads a client requests from its server) and a UDP source with its
//! sink, each end an rtcc-core state machine the simulator drives like a
//! video call's, over either direction of the link.

use rtcc_core::packet::{Packet, PacketKind, NO_FRAME};
use rtcc_core::rng::Rng;
use std::collections::VecDeque;

use rtcc_core::tcp::{self, Ack, Segment, TcpConfig, TcpReceiver, TcpReceiverConfig, TcpSender};
use rtcc_core::traffic::{Object, SizeDist, UdpConfig, UdpSender, WebConfig, WebSource};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

use crate::endpoint::{Back, Ends, Envelope, RecvEnd, SendEnd};
use crate::recorder::{Event, Recorder, TrafficSample};
use crate::scenario::{duration_of, rate_of, size_of, Direction, Quantity};

/// A `[[flow]]` table of `kind = "tcp" | "web" | "udp"`.
#[derive(serde::Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct TrafficFile {
    pub kind: String,
    pub name: Option<String>,
    pub start: Option<Quantity>,
    pub stop: Option<Quantity>,
    pub direction: Option<String>,
    pub access_delay: Option<Quantity>,
    // TCP and web.
    pub cc: Option<String>,
    pub sack: Option<bool>,
    pub initial_window: Option<u32>,
    pub host_jitter: Option<Quantity>,
    // Web.
    pub object_size: Option<String>,
    pub object_min: Option<Quantity>,
    pub object_max: Option<Quantity>,
    pub object_mean: Option<Quantity>,
    pub object_sigma: Option<f64>,
    pub object_shape: Option<f64>,
    pub think_time: Option<Quantity>,
    pub start_idle: Option<bool>,
    // UDP.
    pub rate: Option<Quantity>,
    pub packet_size: Option<Quantity>,
    pub on_time: Option<Quantity>,
    pub off_time: Option<Quantity>,
}

/// What every kind of flow has.
pub struct Common {
    pub start: Option<Duration>,
    pub stop: Option<Duration>,
    pub direction: Direction,
    pub access_delay: Duration,
}

/// Validate a cross-traffic flow's table: (field, reason) on error.
pub fn parse(f: &TrafficFile) -> Result<(TrafficSpec, Common), (String, String)> {
    let e = |field: &str, r: String| (field.to_string(), r);
    let dur = |q: &Option<Quantity>, name: &str| q.as_ref().map(duration_of).transpose().map_err(|r| e(name, r));
    let kind = f.kind.as_str();
    // A field of another kind is a mistake, not something to ignore.
    let only = |name: &str, given: bool, kinds: &[&str]| -> Result<(), (String, String)> {
        match given && !kinds.contains(&kind) {
            true => Err(e(name, format!("applies to {} flows, not {kind}", kinds.join(" and ")))),
            false => Ok(()),
        }
    };
    let tcp_kinds = &["tcp", "web"][..];
    only("cc", f.cc.is_some(), tcp_kinds)?;
    only("sack", f.sack.is_some(), tcp_kinds)?;
    only("initial_window", f.initial_window.is_some(), tcp_kinds)?;
    only("host_jitter", f.host_jitter.is_some(), tcp_kinds)?;
    for (name, given) in [
        ("object_size", f.object_size.is_some()),
        ("object_min", f.object_min.is_some()),
        ("object_max", f.object_max.is_some()),
        ("object_mean", f.object_mean.is_some()),
        ("object_sigma", f.object_sigma.is_some()),
        ("object_shape", f.object_shape.is_some()),
        ("think_time", f.think_time.is_some()),
        ("start_idle", f.start_idle.is_some()),
    ] {
        only(name, given, &["web"])?;
    }
    for (name, given) in [
        ("rate", f.rate.is_some()),
        ("packet_size", f.packet_size.is_some()),
        ("on_time", f.on_time.is_some()),
        ("off_time", f.off_time.is_some()),
    ] {
        only(name, given, &["udp"])?;
    }
    let direction = match f.direction.as_deref() {
        None | Some("forward") => Direction::Forward,
        Some("reverse") => Direction::Reverse,
        Some(d) => return Err(e("direction", format!("'{d}' is not one of forward, reverse"))),
    };
    let access_delay = dur(&f.access_delay, "access_delay")?.unwrap_or(Duration::ZERO);
    if access_delay < Duration::ZERO || access_delay > Duration::from_secs(10) {
        return Err(e("access_delay", format!("{access_delay} is outside 0s..10s")));
    }
    let common = Common { start: dur(&f.start, "start")?, stop: dur(&f.stop, "stop")?, direction, access_delay };
    let tcp_cfg = || -> Result<(String, TcpConfig), (String, String)> {
        // Linux's default since 2.6.19.
        let cc = f.cc.clone().unwrap_or_else(|| "cubic".into());
        tcp::congestion_control(&cc, &[]).map_err(|r| e("cc", r))?;
        let mut cfg = TcpConfig::default();
        if let Some(s) = f.sack {
            cfg.sack = s;
        }
        if let Some(w) = f.initial_window {
            if !(1..=1000).contains(&w) {
                return Err(e("initial_window", format!("{w} is outside 1..1000 segments")));
            }
            cfg.initial_window = w;
        }
        if let Some(j) = dur(&f.host_jitter, "host_jitter")? {
            let max = crate::timing::HOST_JITTER_MAX;
            if j < Duration::ZERO || j > max {
                return Err(e("host_jitter", format!("{j} is outside 0s..{max}")));
            }
            cfg.host_jitter = j;
        }
        Ok((cc, cfg))
    };
    let spec = match kind {
        "tcp" => {
            let (cc, tcp) = tcp_cfg()?;
            TrafficSpec::Tcp { cc, tcp }
        }
        "web" => {
            let (cc, tcp) = tcp_cfg()?;
            let size = |q: &Option<Quantity>, name: &str, default: u64| -> Result<DataSize, (String, String)> {
                let s = q.as_ref().map(size_of).transpose().map_err(|r| e(name, r))?;
                let s = s.unwrap_or(DataSize::from_bytes(default));
                match (1..=1_000_000_000).contains(&s.bytes()) {
                    true => Ok(s),
                    false => Err(e(name, format!("{s} is outside 1B..1GB"))),
                }
            };
            let dist = f.object_size.as_deref().unwrap_or("uniform");
            let unused = |name: &str, given: bool| -> Result<(), (String, String)> {
                match given {
                    true => Err(e(name, format!("does not apply to object_size = \"{dist}\""))),
                    false => Ok(()),
                }
            };
            let size_dist = match dist {
                "uniform" => {
                    unused("object_mean", f.object_mean.is_some())?;
                    let (lo, hi) =
                        (size(&f.object_min, "object_min", 30_000)?, size(&f.object_max, "object_max", 50_000)?);
                    if hi < lo {
                        return Err(e("object_max", format!("{hi} is below object_min {lo}")));
                    }
                    SizeDist::Uniform { lo, hi }
                }
                "lognormal" | "pareto" | "fixed" => {
                    unused("object_min", f.object_min.is_some())?;
                    unused("object_max", f.object_max.is_some())?;
                    let mean = size(&f.object_mean, "object_mean", 40_000)?;
                    match dist {
                        "lognormal" => {
                            let sigma = f.object_sigma.unwrap_or(1.0);
                            if !(sigma > 0.0 && sigma <= 4.0) {
                                return Err(e("object_sigma", format!("{sigma} is outside (0, 4]")));
                            }
                            SizeDist::Lognormal { mean, sigma }
                        }
                        "pareto" => {
                            let shape = f.object_shape.unwrap_or(1.2);
                            if !(shape > 1.0 && shape <= 10.0) {
                                return Err(e(
                                    "object_shape",
                                    format!("{shape} is outside (1, 10]: the mean must exist"),
                                ));
                            }
                            SizeDist::Pareto { mean, shape }
                        }
                        _ => SizeDist::Fixed(mean),
                    }
                }
                d => return Err(e("object_size", format!("'{d}' is not one of uniform, lognormal, pareto, fixed"))),
            };
            if dist != "lognormal" {
                unused("object_sigma", f.object_sigma.is_some())?;
            }
            if dist != "pareto" {
                unused("object_shape", f.object_shape.is_some())?;
            }
            let think = dur(&f.think_time, "think_time")?.unwrap_or(WebConfig::default().think);
            if think < Duration::ZERO || think > Duration::from_secs(3600) {
                return Err(e("think_time", format!("{think} is outside 0s..1h")));
            }
            let web = WebConfig { size: size_dist, think, start_idle: f.start_idle.unwrap_or(false) };
            TrafficSpec::Web { cc, tcp, web }
        }
        "udp" => {
            let mut cfg = UdpConfig::default();
            if let Some(q) = &f.rate {
                cfg.rate = rate_of(q).map_err(|r| e("rate", r))?;
            }
            if cfg.rate == DataRate::ZERO || cfg.rate > DataRate::from_kbps(100_000_000) {
                return Err(e("rate", format!("{} is outside (0, 100 Gbps]", cfg.rate)));
            }
            if let Some(q) = &f.packet_size {
                cfg.packet = size_of(q).map_err(|r| e("packet_size", r))?;
            }
            if !(29..=65_535).contains(&cfg.packet.bytes()) {
                return Err(e(
                    "packet_size",
                    format!("{} is outside 29B..65535B (IP and UDP headers are 28 B)", cfg.packet),
                ));
            }
            cfg.on_off = match (dur(&f.on_time, "on_time")?, dur(&f.off_time, "off_time")?) {
                (None, None) => None,
                (Some(on), Some(off)) => {
                    for (name, d) in [("on_time", on), ("off_time", off)] {
                        if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
                            return Err(e(name, format!("{d} is outside 1ms..1h")));
                        }
                    }
                    Some((on, off))
                }
                (Some(_), None) => return Err(e("off_time", "on/off UDP needs both on_time and off_time".into())),
                (None, Some(_)) => return Err(e("on_time", "on/off UDP needs both on_time and off_time".into())),
            };
            TrafficSpec::Udp(cfg)
        }
        k => return Err(e("kind", format!("'{k}' is not one of video, tcp, web, udp"))),
    };
    Ok((spec, common))
}

/// A validated non-video flow.
#[derive(Clone, Debug)]
pub enum TrafficSpec {
    /// A bulk TCP transfer: always has data from start to stop.
    Tcp {
        cc: String,
        tcp: TcpConfig,
    },
    /// Web-like downloads over one persistent TCP connection.
    Web {
        cc: String,
        tcp: TcpConfig,
        web: WebConfig,
    },
    Udp(UdpConfig),
}

impl TrafficSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            TrafficSpec::Tcp { .. } => "tcp",
            TrafficSpec::Web { .. } => "web",
            TrafficSpec::Udp(_) => "udp",
        }
    }
    /// The congestion control, for TCP and web flows.
    pub fn cc(&self) -> Option<&str> {
        match self {
            TrafficSpec::Tcp { cc, .. } | TrafficSpec::Web { cc, .. } => Some(cc),
            TrafficSpec::Udp(_) => None,
        }
    }
}

/// Build flow `flow`'s two ends, active from `start` to `stop`.
/// A cross-traffic flow's own random stream, from its seed, so cross
/// traffic leaves the video flows' draws alone.
pub fn stream(seed: u64) -> Rng {
    Rng::new(seed).fork(0x007A_FF1C)
}

/// A web-like flow's application as `build` makes it from the flow's
/// stream (a live run drives the same one over the kernel's TCP).
pub fn web_source(web: &WebConfig, start: Time, stop: Option<Time>, mut rng: Rng) -> WebSource {
    // The first draw seeds the TCP sender.
    rng.next_u64();
    WebSource::new(web.clone(), start, stop, rng)
}

pub fn build(flow: u16, spec: &TrafficSpec, start: Time, stop: Option<Time>, mut rng: Rng) -> Result<Ends, String> {
    Ok(match spec {
        TrafficSpec::Tcp { cc, tcp } => {
            let seed = rng.next_u64();
            Ends {
                send: Box::new(TcpSendEnd::new(flow, cc, tcp, true, start, stop, seed)?),
                recv: Box::new(TcpRecvEnd::new(None)),
            }
        }
        TrafficSpec::Web { cc, tcp, web } => {
            let seed = rng.clone().next_u64();
            let web = web_source(web, start, stop, rng);
            Ends {
                send: Box::new(TcpSendEnd::new(flow, cc, tcp, false, start, stop, seed)?),
                recv: Box::new(TcpRecvEnd::new(Some(web))),
            }
        }
        TrafficSpec::Udp(cfg) => Ends {
            send: Box::new(UdpSendEnd { flow, tx: UdpSender::new(cfg.clone(), start, stop, rng), sent: 0 }),
            recv: Box::new(UdpRecvEnd { delivered: 0 }),
        },
    })
}

/// Segment numbers a connection may use before they would wrap (about
/// 6 TB of payload), less a receive window's margin.
const SEQ_LIMIT: u32 = u32::MAX - (1 << 20);

/// A web-like client's request for its next object, sent over the path
/// back to the server; the object starts when it arrives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// The client's count of objects: a request sent again carries the
    /// same id, and the server serves each id once.
    pub id: u64,
    /// Bytes of the object asked for.
    pub size: DataSize,
}

/// An HTTP GET's bytes (request line, host and a few headers); chosen, as
/// no web-traffic model rtcc follows (RFC 8868 §6.1) sizes it.
const REQUEST_BYTES: u64 = 300;
/// A request no data has answered is sent again after this, doubling each
/// time: RFC 6298's initial RTO (§2.1, 1 s) and back-off (§5.5), as the
/// client has no RTT sample of its own.
const REQUEST_RTO: Duration = Duration::from_secs(1);
const REQUEST_RTO_MAX: Duration = Duration::from_secs(60);

impl Request {
    /// One segment: TCP/IP header and the request.
    pub fn wire_size(&self) -> DataSize {
        tcp::HEADER + DataSize::from_bytes(REQUEST_BYTES)
    }
}

/// A TCP connection's sending end (the server of a web-like flow): bulk
/// data from `start`, or each object a request asks for. `stop` ends it
/// abruptly (as a reset would): nothing is sent after it.
pub struct TcpSendEnd {
    flow: u16,
    tx: TcpSender,
    bulk: bool,
    start: Time,
    stop: Option<Time>,
    started: bool,
    stopped: bool,
    /// Transmissions so far: each one is a packet of its own to the link
    /// and the recorder, whatever segment it carries.
    sent: u64,
    sent_bytes: u64,
    /// The newest request served (ids start at 1).
    served: u64,
    rtts: Vec<Duration>,
    /// The connection ran out of segment numbers (`SEQ_LIMIT`).
    exhausted: bool,
    /// With `TcpConfig::host_jitter`: its draws, and the ACKs that arrived
    /// and wait for the host, with when it processes each.
    jitter: Option<Rng>,
    acks: VecDeque<(Time, Ack)>,
}

impl TcpSendEnd {
    fn new(
        flow: u16,
        cc: &str,
        cfg: &TcpConfig,
        bulk: bool,
        start: Time,
        stop: Option<Time>,
        seed: u64,
    ) -> Result<TcpSendEnd, String> {
        let cc = tcp::congestion_control_seeded(cc, &[], seed)?;
        Ok(TcpSendEnd {
            flow,
            tx: TcpSender::new(cfg.clone(), cc),
            bulk,
            start,
            stop,
            started: false,
            stopped: false,
            sent: 0,
            sent_bytes: 0,
            served: 0,
            rtts: Vec::new(),
            exhausted: false,
            // A stream of its own, so the congestion control's draws stay as they were.
            jitter: cfg.host_jitter.is_positive().then(|| Rng::new(seed).fork(0x4057_0A1C)),
            acks: VecDeque::new(),
        })
    }

    /// The sender processes an ACK: window, RTT sample.
    fn process_ack(&mut self, now: Time, ack: &Ack) {
        self.tx.handle_ack(now, ack);
        // The sender's own sample: ACKs of new data only (RFC 7323 §4.3).
        if let Some(rtt) = self.tx.last_rtt_sample() {
            self.rtts.push(rtt);
        }
    }

    fn sample(&self, with_state: bool) -> TrafficSample<'_> {
        let seg = self.tx.config().mss + tcp::HEADER;
        let w = self.tx.window();
        let mut sample = TrafficSample {
            sent_bytes: self.sent_bytes,
            retransmits: self.tx.stats().retransmits,
            rtos: self.tx.stats().rtos,
            cwnd: Some(DataSize::from_bytes(w.cwnd as u64 * seg.bytes())),
            ..TrafficSample::default()
        };
        if with_state {
            sample.in_flight = Some(DataSize::from_bytes(self.tx.in_flight() as u64 * seg.bytes()));
            sample.srtt = self.tx.srtt();
            sample.pacing = self.tx.pacing_rate();
            sample.cc = Some(self.tx.cc());
        }
        sample
    }
}

impl SendEnd for TcpSendEnd {
    fn poll_timeout(&self) -> Option<Time> {
        if self.stopped {
            return None;
        }
        if !self.started {
            return Some(self.start);
        }
        let ack = self.acks.front().map(|a| a.0);
        [self.tx.poll_timeout(), self.stop, ack].into_iter().flatten().min()
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        if self.stop.is_some_and(|s| now >= s) {
            self.stopped = true;
            return;
        }
        if !self.started {
            if now < self.start {
                return;
            }
            self.started = true;
            if self.bulk {
                self.tx.set_unlimited(now);
            }
        }
        while let Some(&(_, ack)) = self.acks.front().filter(|a| a.0 <= now) {
            self.acks.pop_front();
            self.process_ack(now, &ack);
        }
        if self.tx.poll_timeout().is_some_and(|t| t <= now) {
            self.tx.handle_timeout(now);
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Envelope> {
        if !self.started || self.stopped {
            return None;
        }
        let s = self.tx.poll_transmit(now)?;
        if s.seq >= SEQ_LIMIT {
            // Segment numbers are 32-bit: end the connection, and say so,
            // rather than let them wrap.
            self.stopped = true;
            self.exhausted = true;
            return None;
        }
        let packet = Packet {
            kind: PacketKind::Data,
            size: s.wire_size(),
            segment: s.seq,
            tsval: s.ts.as_micros() as u32,
            ..Packet::default()
        };
        let e = Envelope { flow: self.flow, seq: self.sent, frame: NO_FRAME, sent: now, kind: packet.kind, packet };
        self.sent += 1;
        self.sent_bytes += e.packet.size.bytes();
        Some(e)
    }

    fn handle_back(&mut self, now: Time, back: &Back) {
        if self.stopped {
            return;
        }
        match back {
            // A request can arrive at the very instant the server starts,
            // before its own wake-up.
            Back::Request(r) if !self.bulk && now >= self.start && r.id > self.served => {
                self.started = true;
                self.served = r.id;
                self.tx.write(now, r.size.bytes());
            }
            Back::Ack(ack) => {
                if let Some(rng) = &mut self.jitter {
                    // Host scheduling (interrupt moderation, softirq, the
                    // socket's lock) delays each ACK; the host keeps their order.
                    let max = self.tx.config().host_jitter.as_micros() as f64;
                    let ready = now + Duration::from_micros((rng.uniform() * max) as i64);
                    let ready = self.acks.back().map_or(ready, |a| a.0.max(ready));
                    self.acks.push_back((ready, *ack));
                    return;
                }
                self.process_ack(now, ack);
            }
            _ => {}
        }
    }

    fn record_settled(&mut self, flow: usize, _now: Time, _at_end: bool, rec: &mut Recorder) {
        for rtt in self.rtts.drain(..) {
            rec.record(flow, Event::Rtt(rtt));
        }
    }

    fn record_sample(&self, flow: usize, at: Time, rec: &mut Recorder) {
        rec.record(flow, Event::Traffic { at, sample: &self.sample(true) });
    }

    fn failure(&self) -> Option<String> {
        self.exhausted.then(|| format!("TCP ran out of 32-bit segment numbers after {SEQ_LIMIT} segments and stopped"))
    }

    fn record_end(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, Event::TrafficEnd(&self.sample(false)));
    }
}

/// A TCP connection's receiving end (the client of a web-like flow, which
/// requests one object at a time, the next a think time after the last
/// one's last byte arrived).
pub struct TcpRecvEnd {
    rx: TcpReceiver,
    web: Option<WebSource>,
    /// The download under way: the in-order payload bytes at which it is
    /// complete, and the object.
    object: Option<(u64, Object)>,
    /// Payload bytes asked for so far.
    requested: u64,
    /// The request waiting for its first byte: sent again at `.0`, with the
    /// back-off that follows, and the in-order bytes when it was sent.
    unanswered: Option<(Time, Duration, u64)>,
    /// Downloads completed since the recorder last heard, with when.
    done: Vec<(Object, Time)>,
}

impl TcpRecvEnd {
    fn new(web: Option<WebSource>) -> TcpRecvEnd {
        TcpRecvEnd {
            rx: TcpReceiver::new(TcpReceiverConfig::default()),
            web,
            object: None,
            requested: 0,
            unanswered: None,
            done: Vec::new(),
        }
    }

    /// Data delivered in order, on the wire basis video goodput uses
    /// (payload and headers of each segment, once).
    fn delivered_wire(&self) -> u64 {
        self.rx.delivered_bytes() + self.rx.delivered_segments() * tcp::HEADER.bytes()
    }

    fn received(&self) -> Event<'static> {
        Event::TrafficReceived {
            delivered_bytes: self.delivered_wire(),
            objects: self.web.as_ref().map(|w| (w.started, w.completed)),
        }
    }

    /// Whether `t` is before the web flow's stop (nothing is asked for after it).
    fn before_stop(&self, t: Time) -> bool {
        self.web.as_ref().and_then(WebSource::stop).is_none_or(|s| t < s)
    }

    fn request(&self) -> Option<Back> {
        let (_, o) = self.object?;
        let id = self.web.as_ref()?.started;
        Some(Back::Request(Request { id, size: o.size }))
    }
}

impl RecvEnd for TcpRecvEnd {
    fn poll_timeout(&self) -> Option<Time> {
        let web = match self.object {
            None => self.web.as_ref().and_then(WebSource::poll_timeout),
            Some(_) => self.unanswered.map(|u| u.0).filter(|&t| self.before_stop(t)),
        };
        [self.rx.poll_timeout(), web].into_iter().flatten().min()
    }

    fn handle_packet(&mut self, now: Time, p: &Packet) {
        let seg = Segment {
            seq: p.segment,
            len: p.size - tcp::HEADER,
            // Nothing on the wire says a segment is sent again.
            retransmit: false,
            // TSval is the sender's clock in µs, 32 bits: the latest such
            // time at or before now (one clock for both ends).
            ts: now
                - rtcc_core::units::Duration::from_micros(i64::from((now.as_micros() as u32).wrapping_sub(p.tsval))),
        };
        self.rx.handle_segment(now, &seg);
        if self.unanswered.is_some_and(|u| self.rx.delivered_bytes() > u.2) {
            self.unanswered = None;
        }
        if let Some((end, o)) = self.object {
            if self.rx.delivered_bytes() >= end {
                // Complete when the client has every byte, in order; its
                // think time starts now.
                self.object = None;
                self.unanswered = None;
                self.done.push((o, now));
                if let Some(w) = &mut self.web {
                    w.complete(now);
                }
            }
        }
    }

    fn poll_back(&mut self, now: Time) -> Option<Back> {
        if let Some(ack) = self.rx.poll_ack(now) {
            return Some(Back::Ack(ack));
        }
        if self.object.is_none() {
            let o = self.web.as_mut().and_then(|w| w.poll_object(now))?;
            self.requested += o.size.bytes();
            self.object = Some((self.requested, o));
            self.unanswered = Some((now + REQUEST_RTO, REQUEST_RTO, self.rx.delivered_bytes()));
            return self.request();
        }
        // No byte answered it: send it again, backing off.
        let (_, rto, bytes) = self.unanswered.filter(|u| now >= u.0 && self.before_stop(now))?;
        let rto = (rto * 2).min(REQUEST_RTO_MAX);
        self.unanswered = Some((now + rto, rto, bytes));
        self.request()
    }

    fn record_settled(&mut self, flow: usize, _now: Time, _at_end: bool, rec: &mut Recorder) {
        for (o, at) in self.done.drain(..) {
            rec.record(flow, Event::ObjectDone { size: o.size, fct: at - o.start });
        }
    }

    fn record_sample(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, self.received());
    }

    fn record_end(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, self.received());
    }
}

/// A UDP source.
pub struct UdpSendEnd {
    flow: u16,
    tx: UdpSender,
    sent: u64,
}

impl UdpSendEnd {
    fn sample(&self) -> TrafficSample<'static> {
        TrafficSample { sent_bytes: self.tx.bytes_sent, ..TrafficSample::default() }
    }
}

impl SendEnd for UdpSendEnd {
    fn poll_timeout(&self) -> Option<Time> {
        self.tx.poll_timeout()
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, now: Time) -> Option<Envelope> {
        // An off period starting returns nothing but moves the next send on.
        let size = self.tx.poll_transmit(now)?;
        let packet = Packet { kind: PacketKind::Data, size, ..Packet::default() };
        let e = Envelope { flow: self.flow, seq: self.sent, frame: NO_FRAME, sent: now, kind: packet.kind, packet };
        self.sent += 1;
        Some(e)
    }
    fn handle_back(&mut self, _now: Time, _back: &Back) {}
    fn record_settled(&mut self, _flow: usize, _now: Time, _at_end: bool, _rec: &mut Recorder) {}
    fn record_sample(&self, flow: usize, at: Time, rec: &mut Recorder) {
        rec.record(flow, Event::Traffic { at, sample: &self.sample() });
    }
    fn record_end(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, Event::TrafficEnd(&self.sample()));
    }
}

/// The sink that counts what a UDP source's packets bring.
pub struct UdpRecvEnd {
    delivered: u64,
}

impl UdpRecvEnd {
    fn received(&self) -> Event<'static> {
        Event::TrafficReceived { delivered_bytes: self.delivered, objects: None }
    }
}

impl RecvEnd for UdpRecvEnd {
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_packet(&mut self, _now: Time, p: &Packet) {
        // Wire bytes, as video goodput counts them.
        self.delivered += p.size.bytes();
    }
    fn poll_back(&mut self, _now: Time) -> Option<Back> {
        None
    }
    fn record_settled(&mut self, _flow: usize, _now: Time, _at_end: bool, _rec: &mut Recorder) {}
    fn record_sample(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, self.received());
    }
    fn record_end(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        rec.record(flow, self.received());
    }
}
