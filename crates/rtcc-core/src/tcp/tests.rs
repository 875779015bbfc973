//! Scenario tests: a sender and a receiver over a tiny deterministic path —
//! a drop-tail bottleneck (rate, byte limit), a fixed one-way delay, and
//! ACKs back over a fixed delay — with scripted or Bernoulli losses.

use std::collections::VecDeque;

use super::cc::{AckSample, CongestionControl, Window};
use super::sender::{CaState, TcpConfig, TcpSender};
use super::{congestion_control, Ack, Segment, TcpReceiver, TcpReceiverConfig};
use crate::rng::Rng;
use crate::units::{DataRate, DataSize, Duration, Time};

/// What an observer sees after each ACK or timer at the sender.
struct Obs<'a> {
    now: Time,
    before: (Window, CaState, u64),
    tx: &'a TcpSender,
}

type DropFn = Box<dyn FnMut(Time, &Segment) -> bool>;

struct Net {
    tx: TcpSender,
    rx: TcpReceiver,
    now: Time,
    rate: DataRate,
    limit: DataSize,
    delay: Duration,
    link_free: Time,
    backlog: VecDeque<(Time, DataSize)>,
    backlog_bytes: DataSize,
    fwd: VecDeque<(Time, Segment)>,
    rev: VecDeque<(Time, Ack)>,
    loss: f64,
    rng: Rng,
    drop: DropFn,
    drop_ack: Box<dyn FnMut(Time) -> bool>,
    /// ACKs sent in this span are held until its end (a reverse-path stall).
    ack_hold: (Time, Time),
    queue_drops: u64,
    /// Wire bytes leaving the bottleneck within `measure`.
    measure: (Time, Time),
    measured: DataSize,
    /// A fingerprint of every transmission (time, seq, retransmit).
    fingerprint: u64,
}

impl Net {
    fn new(cc: &str, cfg: TcpConfig, rate: DataRate, one_way: Duration, limit: DataSize) -> Net {
        Net::with(congestion_control(cc, &[]).expect("known congestion control"), cfg, rate, one_way, limit)
    }

    fn with(cc: Box<dyn CongestionControl>, cfg: TcpConfig, rate: DataRate, one_way: Duration, limit: DataSize) -> Net {
        Net {
            tx: TcpSender::new(cfg, cc),
            rx: TcpReceiver::new(TcpReceiverConfig::default()),
            now: Time::ZERO,
            rate,
            limit,
            delay: one_way,
            link_free: Time::ZERO,
            backlog: VecDeque::new(),
            backlog_bytes: DataSize::ZERO,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            loss: 0.0,
            rng: Rng::new(7),
            drop: Box::new(|_, _| false),
            drop_ack: Box::new(|_| false),
            ack_hold: (Time::ZERO, Time::ZERO),
            queue_drops: 0,
            measure: (Time::ZERO, Time::ZERO),
            measured: DataSize::ZERO,
            fingerprint: 0,
        }
    }

    /// Drop these segments' first transmissions.
    fn drop_first(&mut self, seqs: &'static [u32]) {
        self.drop = Box::new(move |_, s| !s.retransmit && seqs.contains(&s.seq));
    }

    fn enqueue(&mut self, seg: Segment) {
        let now = self.now;
        self.fingerprint = self
            .fingerprint
            .wrapping_mul(0x100_0000_01b3)
            .wrapping_add((now.as_micros() as u64) << 20 ^ (seg.seq as u64) << 1 ^ seg.retransmit as u64);
        while self.backlog.front().is_some_and(|&(t, _)| t <= now) {
            let (_, b) = self.backlog.pop_front().unwrap();
            self.backlog_bytes -= b;
        }
        let size = seg.wire_size();
        if self.backlog_bytes + size > self.limit {
            self.queue_drops += 1;
            return;
        }
        let depart = self.link_free.max(now) + size / self.rate;
        self.link_free = depart;
        self.backlog.push_back((depart, size));
        self.backlog_bytes += size;
        if depart > self.measure.0 && depart <= self.measure.1 {
            self.measured += size;
        }
        if (self.drop)(now, &seg) || self.rng.chance(self.loss) {
            return;
        }
        self.fwd.push_back((depart + self.delay, seg));
    }

    fn write(&mut self, bytes: u64) -> u32 {
        self.tx.write(self.now, bytes)
    }

    fn pump(&mut self) {
        while let Some(seg) = self.tx.poll_transmit(self.now) {
            self.enqueue(seg);
        }
    }

    fn acks(&mut self) {
        while let Some(a) = self.rx.poll_ack(self.now) {
            if !(self.drop_ack)(self.now) {
                let (a0, a1) = self.ack_hold;
                let sent = if self.now >= a0 && self.now < a1 { a1 } else { self.now };
                self.rev.push_back((sent + self.delay, a));
            }
        }
    }

    /// Lose each ACK with probability `p` (its own stream).
    fn ack_loss(&mut self, p: f64, seed: u64) {
        let mut rng = Rng::new(seed);
        self.drop_ack = Box::new(move |_| rng.chance(p));
    }

    fn run(&mut self, end: Time, obs: &mut dyn FnMut(&Obs)) {
        loop {
            self.pump();
            let next = [
                self.tx.poll_timeout(),
                self.rx.poll_timeout(),
                self.fwd.front().map(|f| f.0),
                self.rev.front().map(|r| r.0),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|&t| t <= end) else {
                self.now = end;
                return;
            };
            self.now = next.max(self.now);
            let now = self.now;
            while self.fwd.front().is_some_and(|f| f.0 <= now) {
                let (_, seg) = self.fwd.pop_front().unwrap();
                self.rx.handle_segment(now, &seg);
                self.acks();
            }
            self.acks();
            let before = |tx: &TcpSender| (tx.window(), tx.state(), tx.stats().rtos);
            while self.rev.front().is_some_and(|r| r.0 <= now) {
                let (_, ack) = self.rev.pop_front().unwrap();
                let b = before(&self.tx);
                self.tx.handle_ack(now, &ack);
                self.tx.check_scoreboard();
                obs(&Obs { now, before: b, tx: &self.tx });
            }
            // Drain what the ACKs let out before sleeping (an unpaced
            // sender is due now after one).
            self.pump();
            if self.tx.poll_timeout().is_some_and(|t| t <= now) {
                let b = before(&self.tx);
                self.tx.handle_timeout(now);
                self.tx.check_scoreboard();
                obs(&Obs { now, before: b, tx: &self.tx });
            }
        }
    }
}

fn ms(v: i64) -> Duration {
    Duration::from_millis(v)
}
fn at(s: f64) -> Time {
    Time::from_secs_f64(s)
}
fn bdp(rate: DataRate, rtt: Duration) -> DataSize {
    rate * rtt
}

#[test]
fn tcp_slow_start_doubles_per_rtt() {
    let rate = DataRate::from_mbps(100);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(50), DataSize::from_bytes(50_000_000));
    net.tx.set_unlimited(Time::ZERO);
    let mut cwnds = Vec::new();
    for k in 0..6 {
        net.run(at(0.1 * k as f64 + 0.05), &mut |_| {});
        cwnds.push(net.tx.window().cwnd);
    }
    assert_eq!(cwnds, [10, 20, 40, 80, 160, 320]);
    assert_eq!(net.tx.stats().fast_recoveries, 0);
}

/// Utilisation of 10 Mbps, 20 ms one-way, one-BDP drop-tail buffer, 30 s
/// after slow start.
fn utilisation(cc: &str) -> (f64, u64, u64) {
    let rate = DataRate::from_mbps(10);
    let limit = bdp(rate, ms(40));
    let mut net = Net::new(cc, TcpConfig::default(), rate, ms(20), limit);
    net.tx.set_unlimited(Time::ZERO);
    net.measure = (at(5.0), at(35.0));
    net.run(at(35.0), &mut |_| {});
    let u = net.measured.bits() as f64 / (rate.bps() as f64 * 30.0);
    (u, net.tx.stats().fast_recoveries, net.tx.stats().rtos)
}

#[test]
fn tcp_reno_fills_one_bdp_buffer() {
    let (u, fr, rtos) = utilisation("reno");
    eprintln!("reno utilisation {u:.4}, {fr} recoveries, {rtos} RTOs");
    assert!(u >= 0.95, "reno utilisation {u}");
    assert!(fr >= 10, "a sawtooth, not a lucky window: {fr}");
}

#[test]
fn tcp_cubic_fills_one_bdp_buffer() {
    let (u, fr, rtos) = utilisation("cubic");
    eprintln!("cubic utilisation {u:.4}, {fr} recoveries, {rtos} RTOs");
    assert!(u >= 0.95, "cubic utilisation {u}");
    assert!(fr >= 10, "{fr}");
}

/// 700 kB over `mbps` / 20 ms with a deep buffer and scripted losses.
fn scripted(sack: bool, mbps: u64, drops: &'static [u32]) -> (Net, Vec<(Time, CaState)>) {
    let cfg = TcpConfig { sack, ..TcpConfig::default() };
    let mut net = Net::new("reno", cfg, DataRate::from_mbps(mbps), ms(20), DataSize::from_bytes(4_000_000));
    net.drop_first(drops);
    let end = net.tx.write(Time::ZERO, 700_000);
    let mut states = Vec::new();
    net.run(at(5.0), &mut |o| {
        if o.tx.state() != o.before.1 {
            states.push((o.now, o.tx.state()));
        }
    });
    assert_eq!(net.tx.cum_acked(), end);
    assert_eq!(net.rx.delivered_bytes(), 700_000);
    assert_eq!(net.queue_drops, 0);
    (net, states)
}

#[test]
fn tcp_single_loss_one_fast_recovery() {
    for sack in [true, false] {
        let (net, states) = scripted(sack, 10, &[200]);
        let s = net.tx.stats();
        assert_eq!((s.fast_recoveries, s.rtos, s.retransmits), (1, 0, 1), "sack {sack}: {s:?}");
        assert_eq!(states.iter().map(|s| s.1).collect::<Vec<_>>(), [CaState::Recovery, CaState::Open]);
        assert_eq!(net.rx.duplicate_segments(), 0);
    }
}

#[test]
fn tcp_three_losses_sack_one_rtt_newreno_three() {
    // 100 Mbps: the window at the losses (~200 segments) barely queues,
    // so a round trip is close to the 40 ms base.
    let (net, states) = scripted(true, 100, &[200, 203, 206]);
    let s = net.tx.stats();
    assert_eq!((s.fast_recoveries, s.rtos, s.retransmits), (1, 0, 3), "{s:?}");
    let sack_took = states[1].0 - states[0].0;
    let srtt = net.tx.srtt().unwrap();
    eprintln!("SACK recovery of 3 losses: {sack_took} (srtt at end {srtt})");
    let (reno, rstates) = scripted(false, 100, &[200, 203, 206]);
    let r = reno.tx.stats();
    assert_eq!((r.fast_recoveries, r.rtos, r.retransmits), (1, 0, 3), "{r:?}");
    let reno_took = rstates[1].0 - rstates[0].0;
    eprintln!("NewReno recovery of 3 losses: {reno_took}");
    // NewReno repairs one hole per round trip (RFC 6582 partial ACKs).
    assert!(reno_took.as_secs_f64() > 2.5 * sack_took.as_secs_f64(), "{reno_took} vs {sack_took}");
    // SACK retransmits all three holes on entry: one round trip.
    assert!(sack_took < ms(60), "{sack_took}");
}

#[test]
fn tcp_rto_backs_off_when_acks_vanish() {
    let rate = DataRate::from_mbps(10);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(20), bdp(rate, ms(40)));
    net.tx.set_unlimited(Time::ZERO);
    net.drop_ack = Box::new(|t| t >= at(2.0) && t < at(5.0));
    let mut rtos = Vec::new();
    let mut last_ack = Time::ZERO;
    net.run(at(8.0), &mut |o| {
        if o.tx.stats().rtos > o.before.2 {
            rtos.push((o.now, o.tx.rto()));
        } else if o.now < at(5.0) {
            last_ack = o.now;
        }
    });
    eprintln!("RTOs (time, rto after): {rtos:?}, last ACK {last_ack}");
    assert!(rtos.len() >= 3, "{rtos:?}");
    let first = rtos[0].0 - last_ack;
    assert!(first >= ms(200), "first RTO after {first}");
    for w in rtos.windows(3).take_while(|w| w[2].0 < at(5.0)) {
        let (g1, g2) = ((w[1].0 - w[0].0).as_secs_f64(), (w[2].0 - w[1].0).as_secs_f64());
        assert!((g2 / g1 - 2.0).abs() < 0.01, "gaps {g1} {g2}");
    }
    // Go-back-N after the blackout, then back to normal.
    assert_eq!(net.tx.state(), CaState::Open);
    assert!(net.tx.rto() >= ms(200));
    assert!(net.tx.cum_acked() > 3000, "{}", net.tx.cum_acked());
}

/// Reno throughput under Bernoulli loss against Mathis et al.:
/// MSS/RTT·sqrt(3/2)/sqrt(p). Linux counts acknowledged segments in
/// congestion avoidance (tcp_cong_avoid_ai), so delayed ACKs do not slow
/// growth: the b = 1 form, not sqrt(3/(2b)) with b = 2.
fn mathis_ratio(p: f64, seconds: f64) -> f64 {
    let rate = DataRate::from_mbps(1000);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(20), DataSize::from_bytes(100_000_000));
    net.tx.set_unlimited(Time::ZERO);
    net.loss = p;
    net.rng = Rng::new(0x5eed ^ (p * 1e4) as u64);
    net.run(at(seconds), &mut |_| {});
    let got = net.rx.delivered_bytes() as f64 * 8.0 / seconds;
    let mss = net.tx.config().mss.bits() as f64;
    let rtt = 0.040;
    let model = mss / rtt * (1.5f64).sqrt() / p.sqrt();
    let s = net.tx.stats();
    eprintln!(
        "p {p}: {got:.0} bit/s vs Mathis {model:.0}: ratio {:.3}, {} recoveries, {} RTOs",
        got / model,
        s.fast_recoveries,
        s.rtos
    );
    got / model
}

#[test]
fn tcp_reno_follows_mathis() {
    for p in [0.005, 0.01, 0.02] {
        let r = mathis_ratio(p, 200.0);
        assert!((0.7..=1.3).contains(&r), "p {p}: ratio {r}");
    }
}

#[test]
fn tcp_cubic_window_follows_cubic_curve() {
    let rate = DataRate::from_mbps(1000);
    let cubic = congestion_control("cubic", &[("hystart", 0.0)]).unwrap();
    let mut net = Net::with(cubic, TcpConfig::default(), rate, ms(50), DataSize::from_bytes(100_000_000));
    net.tx.set_unlimited(Time::ZERO);
    net.drop_first(&[300]);
    let mut w_max = 0.0;
    let mut exit = None;
    let mut trace = Vec::new();
    net.run(at(20.0), &mut |o| {
        if o.before.1 == CaState::Open && o.tx.state() == CaState::Recovery {
            w_max = o.before.0.cwnd as f64;
        }
        if o.before.1 == CaState::Recovery && o.tx.state() == CaState::Open {
            exit = Some(o.now);
        }
        trace.push((o.now, o.tx.window().cwnd));
    });
    let s = net.tx.stats();
    assert_eq!((s.fast_recoveries, s.rtos), (1, 0));
    let exit = exit.expect("recovery ended");
    // RFC 9438 eq. 2 from the window the epoch starts with (ssthresh).
    let start = (w_max * 0.7).floor();
    let k = ((w_max - start) / 0.4).cbrt();
    let mut worst: f64 = 0.0;
    let mut t = 0.5;
    while t < 2.0 * k && exit + Duration::from_secs_f64(t) < at(20.0) {
        let when = exit + Duration::from_secs_f64(t);
        let cwnd = trace.iter().take_while(|e| e.0 <= when).last().unwrap().1 as f64;
        let w = 0.4 * (t - k).powi(3) + w_max;
        worst = worst.max((cwnd - w).abs() / w);
        t += 0.5;
    }
    eprintln!("cubic: W_max {w_max}, K {k:.2} s, worst deviation {:.2} %", worst * 100.0);
    assert!(t >= 2.0 * k, "curve followed to 2K");
    assert!(worst < 0.04, "worst deviation {worst}");
}

#[test]
fn tcp_runs_are_deterministic() {
    let run = || {
        let rate = DataRate::from_mbps(20);
        let mut net = Net::new("cubic", TcpConfig::default(), rate, ms(15), bdp(rate, ms(30)));
        net.tx.set_unlimited(Time::ZERO);
        net.loss = 0.01;
        net.run(at(10.0), &mut |_| {});
        (net.fingerprint, *net.tx.stats(), net.rx.delivered_bytes(), net.tx.window())
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.1.retransmits > 10);
}

/// A congestion control that records what it is told; optionally owns a
/// fixed window and paces.
struct Probe {
    owns: Option<u32>,
    pace: Option<DataRate>,
    log: std::sync::Arc<std::sync::Mutex<Vec<AckSample>>>,
}

impl CongestionControl for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.log.lock().unwrap().push(*ack);
        if let Some(c) = self.owns {
            w.cwnd = c;
        } else {
            super::reno::slow_start(w, ack.acked);
        }
    }
    fn ssthresh(&mut self, w: &Window, _now: Time) -> u32 {
        (w.cwnd / 2).max(2)
    }
    fn owns_window(&self) -> bool {
        self.owns.is_some()
    }
    fn pacing_rate(&self) -> Option<DataRate> {
        self.pace
    }
}

type Log = std::sync::Arc<std::sync::Mutex<Vec<AckSample>>>;

fn probe(owns: Option<u32>, pace: Option<DataRate>) -> (Box<dyn CongestionControl>, Log) {
    let log = Log::default();
    (Box::new(Probe { owns, pace, log: log.clone() }), log)
}

#[test]
fn tcp_sender_paces_at_the_cc_rate() {
    // 1500 wire bytes at 12 Mbit/s: one segment per millisecond.
    let (cc, _) = probe(Some(100), Some(DataRate::from_mbps(12)));
    let mut tx = TcpSender::new(TcpConfig { initial_window: 100, ..TcpConfig::default() }, cc);
    tx.set_unlimited(Time::ZERO);
    let mut sent = Vec::new();
    let mut now = Time::ZERO;
    while sent.len() < 20 {
        while let Some(s) = tx.poll_transmit(now) {
            sent.push((now, s.seq));
        }
        now = tx.poll_timeout().unwrap().max(now);
    }
    for (i, &(t, seq)) in sent.iter().enumerate() {
        assert_eq!((t, seq), (Time::from_millis(i as i64), i as u32));
    }
}

#[test]
fn tcp_sender_leaves_an_owned_window_alone() {
    let (cc, log) = probe(Some(40), None);
    let rate = DataRate::from_mbps(10);
    let mut net = Net::with(cc, TcpConfig::default(), rate, ms(20), DataSize::from_bytes(4_000_000));
    net.drop_first(&[100]);
    net.write(400_000);
    let mut acks = 0;
    let mut windows = std::collections::BTreeSet::new();
    net.run(at(3.0), &mut |o| {
        if o.before.2 == o.tx.stats().rtos {
            acks += 1;
        }
        windows.insert(o.tx.window().cwnd);
    });
    let s = net.tx.stats();
    assert_eq!((s.fast_recoveries, s.rtos, s.retransmits), (1, 0, 1));
    // on_ack on every ACK, in recovery too; no PRR, no reset to ssthresh.
    let log = log.lock().unwrap();
    assert_eq!(log.len(), acks);
    assert!(log.iter().filter(|a| a.in_recovery).count() >= 10);
    assert_eq!(windows.into_iter().collect::<Vec<_>>(), [40]);
    assert_eq!(net.tx.window().ssthresh, 20, "ssthresh() still asked on entering recovery");
}

#[test]
fn tcp_rate_samples_measure_the_bottleneck() {
    let (cc, log) = probe(Some(60), None);
    let rate = DataRate::from_mbps(10);
    let mut net = Net::with(cc, TcpConfig::default(), rate, ms(20), DataSize::from_bytes(4_000_000));
    net.tx.set_unlimited(Time::ZERO);
    net.run(at(3.0), &mut |_| {});
    let seg = TcpConfig::default().mss + super::HEADER;
    let log = log.lock().unwrap();
    let mut rates: Vec<f64> =
        log.iter().filter(|a| a.now > at(1.0)).filter_map(|a| a.rate.rate(seg)).map(|r| r.bps() as f64 / 1e6).collect();
    rates.sort_by(f64::total_cmp);
    let (median, max) = (rates[rates.len() / 2], rates[rates.len() - 1]);
    eprintln!("delivery rate samples: {} valid, median {median:.3} Mbps, max {max:.3} Mbps", rates.len());
    assert!(rates.len() > 500);
    assert!((median - 10.0).abs() < 0.2, "median {median}");
    assert!(max < 10.6, "max {max}");
    // Only the first flight is app-limited (Linux tcp_init_sock: app_limited = ~0U).
    assert!(log.iter().filter(|a| a.now > at(0.2)).all(|a| !a.rate.is_app_limited));
}

#[test]
fn tcp_rate_samples_flag_app_limited() {
    let (cc, log) = probe(Some(60), None);
    let rate = DataRate::from_mbps(10);
    let mut net = Net::with(
        cc,
        TcpConfig { initial_window: 60, ..TcpConfig::default() },
        rate,
        ms(20),
        DataSize::from_bytes(4_000_000),
    );
    let mut t = 0.0;
    while t < 2.0 {
        net.write(20_000);
        t += 0.1;
        net.run(at(t), &mut |_| {});
    }
    let log = log.lock().unwrap();
    let valid: Vec<_> = log.iter().filter(|a| a.rate.is_valid()).collect();
    assert!(valid.iter().all(|a| a.rate.is_app_limited), "200 kbit/s of writes never fill 10 Mbit/s");
    assert!(valid.len() > 50);
    assert_eq!(net.tx.unsent_bytes(), 0);
    assert_eq!(net.tx.acked_bytes(), 400_000);
}

#[test]
fn tcp_write_reports_its_last_segment() {
    let (cc, _) = probe(None, None);
    let mut tx = TcpSender::new(TcpConfig::default(), cc);
    assert_eq!(tx.write(Time::ZERO, 1448), 1);
    assert_eq!(tx.write(Time::ZERO, 1449), 3);
    assert_eq!(tx.write(Time::ZERO, 0), 3);
    assert_eq!(tx.unsent_bytes(), 2897);
    let lens: Vec<u64> = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO)).map(|s| s.len.bytes()).collect();
    assert_eq!(lens, [1448, 1448, 1]);
    assert_eq!(tx.unsent_bytes(), 0);
    assert!(!tx.is_idle());
}

#[test]
fn tcp_idle_restart_returns_to_initial_window() {
    let rate = DataRate::from_mbps(10);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(20), DataSize::from_bytes(4_000_000));
    net.drop_first(&[40]);
    net.write(600_000);
    net.run(at(3.0), &mut |_| {});
    assert!(net.tx.is_idle());
    let before = net.tx.window();
    assert!(before.cwnd > 20 && before.ssthresh < 100, "{before:?}");
    // Idle for seconds, many RTOs: cwnd halves per idle RTO down to IW;
    // ssthresh keeps 3/4 of the old window (tcp_cwnd_restart).
    net.write(100_000);
    net.run(at(3.000_001), &mut |_| {});
    let w = net.tx.window();
    let three_quarters = (before.cwnd >> 1) + (before.cwnd >> 2);
    assert_eq!(w, Window { cwnd: 10, ssthresh: before.ssthresh.max(three_quarters) });
    assert_eq!(net.tx.in_flight(), 10);
    // With the option off the window survives idle.
    let cfg = TcpConfig { slow_start_after_idle: false, ..TcpConfig::default() };
    let mut net = Net::new("reno", cfg, rate, ms(20), DataSize::from_bytes(4_000_000));
    net.drop_first(&[40]);
    net.write(600_000);
    net.run(at(3.0), &mut |_| {});
    let before = net.tx.window();
    net.write(100_000);
    net.run(at(3.000_001), &mut |_| {});
    assert_eq!(net.tx.window(), before);
}

#[test]
fn tcp_hystart_leaves_slow_start_before_loss() {
    let rate = DataRate::from_mbps(10);
    let run = |hystart: f64| {
        let cubic = congestion_control("cubic", &[("hystart", hystart)]).unwrap();
        let mut net = Net::with(cubic, TcpConfig::default(), rate, ms(20), DataSize::from_bytes(1_000_000));
        net.tx.set_unlimited(Time::ZERO);
        net.run(at(4.0), &mut |_| {});
        (net.tx.window(), net.tx.stats().fast_recoveries, net.queue_drops)
    };
    let (w, recoveries, drops) = run(1.0);
    eprintln!("HyStart++: {w:?}, {recoveries} recoveries, {drops} drops");
    // BDP is 33 segments; the buffer holds 660 more.
    assert_eq!((recoveries, drops), (0, 0));
    // Delay rise near cwnd 40–60, then five CSS rounds at 1.25× each.
    assert!(w.ssthresh < 300, "{w:?}");
    let (w, recoveries, drops) = run(0.0);
    eprintln!("plain slow start: {w:?}, {recoveries} recoveries, {drops} drops");
    assert!(recoveries >= 1 && drops > 100);
}

#[test]
fn tcp_delivers_everything_through_heavy_loss() {
    for (i, sack) in [true, false].into_iter().enumerate() {
        for (j, cc) in ["reno", "cubic"].into_iter().enumerate() {
            let rate = DataRate::from_mbps(20);
            let cfg = TcpConfig { sack, ..TcpConfig::default() };
            let mut net = Net::new(cc, cfg, rate, ms(10), bdp(rate, ms(20)));
            net.loss = 0.05;
            net.rng = Rng::new(11 + i as u64 * 2 + j as u64);
            net.ack_loss(0.2, 99 + j as u64);
            let end = net.write(3_000_000);
            net.run(at(60.0), &mut |_| {});
            let s = net.tx.stats();
            eprintln!("{cc} sack {sack}: done at {}, {s:?}", net.tx.cum_acked());
            assert_eq!(net.tx.cum_acked(), end, "{cc} sack {sack}");
            assert_eq!(net.rx.delivered_bytes(), 3_000_000);
            assert!(net.tx.is_idle());
            assert!(s.fast_recoveries > 20 && s.retransmits > 50);
        }
    }
}

#[test]
fn tcp_app_limited_flow_does_not_grow_its_window() {
    for cc in ["reno", "cubic"] {
        let rate = DataRate::from_mbps(10);
        let mut net = Net::new(cc, TcpConfig::default(), rate, ms(20), DataSize::from_bytes(4_000_000));
        let mut t = 0.0;
        while t < 3.0 {
            // 14 segments every 100 ms: 1.1 Mbit/s on a 10 Mbit/s path.
            net.write(20_000);
            t += 0.1;
            net.run(at(t), &mut |_| {});
        }
        // Linux tcp_is_cwnd_limited: slow start only up to twice what was used.
        let w = net.tx.window();
        assert!(w.cwnd <= 28, "{cc}: {w:?}");
        assert_eq!(net.tx.acked_bytes(), 600_000);
    }
}

#[test]
fn tcp_spurious_rto_is_detected_by_timestamps() {
    let rate = DataRate::from_mbps(10);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(20), bdp(rate, ms(40)));
    net.tx.set_unlimited(Time::ZERO);
    // The reverse path stalls for 600 ms, longer than the ~270 ms RTO; the
    // ACKs then arrive, echoing the original transmissions (RFC 3522).
    net.ack_hold = (at(2.0), at(2.6));
    net.run(at(4.0), &mut |_| {});
    let s = net.tx.stats();
    assert_eq!((s.rtos, s.spurious_rtos), (1, 1), "{s:?}");
    assert!(net.rx.duplicate_segments() >= 1);
}

/// Reno that records `on_tx_start` calls (time, idle, app-limited).
struct TxStartLog {
    inner: super::Reno,
    log: std::sync::Arc<std::sync::Mutex<Vec<(Time, Duration, bool)>>>,
}

impl CongestionControl for TxStartLog {
    fn name(&self) -> &'static str {
        "tx-start-log"
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.inner.on_ack(w, ack)
    }
    fn ssthresh(&mut self, w: &Window, now: Time) -> u32 {
        self.inner.ssthresh(w, now)
    }
    fn on_tx_start(&mut self, _w: &mut Window, now: Time, idle: Duration, app_limited: bool) {
        self.log.lock().unwrap().push((now, idle, app_limited));
    }
}

#[test]
fn tcp_sender_reports_tx_start_after_a_pause() {
    // Linux tcp_event_data_sent: CA_EVENT_TX_START when a segment leaves
    // with nothing in flight, idle = now − lsndtime; here a pause shorter
    // than the RTO, so no idle restart.
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let cc = Box::new(TxStartLog { inner: super::Reno::new(), log: log.clone() });
    let rate = DataRate::from_mbps(10);
    let mut net = Net::with(cc, TcpConfig::default(), rate, ms(20), DataSize::from_bytes(4_000_000));
    let sends = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = sends.clone();
    net.drop = Box::new(move |t, _| {
        s2.lock().unwrap().push(t);
        false
    });
    net.write(40_000);
    net.run(at(0.2), &mut |_| {});
    assert!(net.tx.is_idle());
    // The first flight is no restart, nor any send with data in flight.
    assert!(log.lock().unwrap().is_empty());
    let last_send = *sends.lock().unwrap().last().unwrap();
    let window = net.tx.window();
    net.write(40_000);
    net.run(at(0.3), &mut |_| {});
    let got = log.lock().unwrap().clone();
    eprintln!("last send {last_send}, tx_start {got:?}, rto {}", net.tx.rto());
    assert_eq!(got, [(at(0.2), at(0.2) - last_send, true)]);
    assert!(got[0].1 > ms(100) && got[0].1 < net.tx.rto());
    // Shorter than the RTO: the window survives (no idle restart).
    assert!(net.tx.window().cwnd >= window.cwnd, "{:?} vs {window:?}", net.tx.window());
}

#[test]
fn tcp_tx_start_after_an_rto_is_not_app_limited() {
    // Everything outstanding is marked lost on an RTO, so the pipe is empty
    // when the first retransmission leaves: a TX start, but not a pause the
    // application made (BBR must not treat it as one).
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let cc = Box::new(TxStartLog { inner: super::Reno::new(), log: log.clone() });
    let rate = DataRate::from_mbps(10);
    let mut net = Net::with(cc, TcpConfig::default(), rate, ms(20), bdp(rate, ms(40)));
    net.tx.set_unlimited(Time::ZERO);
    net.drop_ack = Box::new(|t| t >= at(1.0) && t < at(2.0));
    net.run(at(3.0), &mut |_| {});
    assert!(net.tx.stats().rtos >= 1, "{:?}", net.tx.stats());
    let got = log.lock().unwrap().clone();
    assert!(!got.is_empty(), "the retransmission after the RTO is a TX start");
    assert!(got.iter().all(|e| !e.2), "{got:?}");
}

#[test]
fn tcp_lost_retransmission_is_recovered_without_rto() {
    // Segment 300 and its first retransmission are both lost. RACK (RFC
    // 8985 §6.2, Linux tcp_rack_detect_loss) sees segments sent after the
    // retransmission delivered and sends it again within the recovery.
    let rate = DataRate::from_mbps(100);
    let mut net = Net::new("reno", TcpConfig::default(), rate, ms(20), DataSize::from_bytes(8_000_000));
    let mut n = 0;
    net.drop = Box::new(move |_, s| {
        if s.seq == 300 && n < 2 {
            n += 1;
            return true;
        }
        false
    });
    let end = net.write(2_000_000);
    let mut states = Vec::new();
    net.run(at(5.0), &mut |o| {
        if o.tx.state() != o.before.1 {
            states.push((o.now, o.tx.state()));
        }
    });
    let s = net.tx.stats();
    assert_eq!(net.tx.cum_acked(), end);
    assert_eq!(net.rx.delivered_bytes(), 2_000_000);
    let took = states[1].0 - states[0].0;
    let srtt = net.tx.srtt().unwrap();
    eprintln!("lost retransmission: {s:?}, states {states:?}, recovery took {took} (srtt {srtt})");
    assert_eq!((s.fast_recoveries, s.rtos, s.retransmits), (1, 0, 2), "{s:?}");
    assert_eq!(states.iter().map(|s| s.1).collect::<Vec<_>>(), [CaState::Recovery, CaState::Open]);
    // About two round trips (40 ms base): the retransmission, then the
    // second one a reordering window later; an RTO would take ≥ 200 ms.
    assert!(took < ms(120), "{took}");
    assert_eq!(net.rx.duplicate_segments(), 0);
}

#[test]
fn an_unpaced_sender_is_due_when_an_ack_or_a_write_opens_the_window() {
    let cc = congestion_control("cubic", &[]).expect("cubic");
    let mut tx = TcpSender::new(TcpConfig { initial_window: 4, ..TcpConfig::default() }, cc);
    assert_eq!(tx.poll_timeout(), None, "nothing written");
    // A write is due at once.
    let t0 = Time::from_millis(5);
    tx.write(t0, 20 * 1448);
    assert_eq!(tx.poll_timeout(), Some(t0));
    let mut sent = 0;
    while tx.poll_transmit(t0).is_some() {
        sent += 1;
    }
    assert_eq!(sent, 4, "the initial window");
    // Window full: only the RTO is due.
    let rto = tx.poll_timeout().expect("an RTO armed");
    assert!(rto > t0 + Duration::from_millis(100), "{rto:?}");
    // An ACK opens it: due at the ACK's time, not at the RTO.
    let t1 = Time::from_millis(60);
    tx.handle_ack(t1, &Ack { cum: 2, ts_echo: t0, rwnd: 1000, ..Ack::default() });
    assert_eq!(tx.poll_timeout(), Some(t1));
    while tx.poll_transmit(t1).is_some() {}
    assert!(tx.poll_timeout().is_some_and(|t| t > t1), "drained: nothing due now");
}
