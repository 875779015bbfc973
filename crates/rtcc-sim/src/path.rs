//! The stretch of a path beyond a bottleneck: propagation delay, each
//! flow's access delay, random loss of whole messages and delay jitter that
//! never reorders a flow's packets. Sans-IO: `send` a packet that left the
//! bottleneck, wake at `poll_timeout(flow)`, take arrivals with
//! `poll_arrival(flow, now)`. One `Path` serves every flow in one direction.

use std::collections::VecDeque;

use rtcc_core::rng::Rng;
use rtcc_core::units::{Duration, Time};

use crate::loss::LossModel;

/// The parameters of a link's two paths beyond its bottleneck (the
/// `[link]` fields `delay`, `reverse_delay`, `jitter`, `reverse_loss`).
#[derive(Clone, Debug, PartialEq)]
pub struct PathSpec {
    pub delay: Duration,
    pub reverse_delay: Duration,
    pub jitter: Duration,
    pub reverse_loss: LossModel,
}

impl PathSpec {
    /// The forward path (propagation, jitter) and the reverse one
    /// (propagation, loss of what is sent back), each drawing from a stream
    /// forked from `rng`: turning jitter on does not change which reports
    /// are lost, nor which packets the bottleneck loses.
    pub fn build<F, R>(&self, rng: &mut Rng) -> (Path<F>, Path<R>) {
        self.build_forked(rng, 2, 3)
    }

    /// The paths of flows whose data runs from the receiving side: what
    /// they send back over the forward path (its delay and jitter), their
    /// data over the reverse one (its delay and loss). Streams forked after
    /// `build`'s, so they change none of its draws.
    pub fn build_crossed<F, R>(&self, rng: &mut Rng) -> (Path<F>, Path<R>) {
        self.build_forked(rng, 4, 5)
    }

    fn build_forked<F, R>(&self, rng: &mut Rng, jitter: u64, loss: u64) -> (Path<F>, Path<R>) {
        let jitter_rng = rng.fork(jitter);
        let reverse_rng = rng.fork(loss);
        let fwd = Path::new(self.delay, self.jitter, LossModel::None, jitter_rng, Rng::new(0));
        let rev = Path::new(self.reverse_delay, Duration::ZERO, self.reverse_loss.clone(), Rng::new(0), reverse_rng);
        (fwd, rev)
    }
}

/// One flow's messages in flight, in arrival order: their arrival times
/// and places in the path's store.
#[derive(Clone, Debug)]
struct Line {
    q: VecDeque<(Time, u32)>,
    /// Latest arrival scheduled: jitter never lets a packet overtake it.
    last: Time,
    access: Duration,
}

/// A place in the store, on cache lines of its own: a packet (64 bytes) is
/// read from one line, not two.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Slot<T>(Option<T>);

#[derive(Clone, Debug)]
pub struct Path<T> {
    delay: Duration,
    jitter: Duration,
    loss: LossModel,
    jitter_rng: Rng,
    loss_rng: Rng,
    lines: Vec<Line>,
    /// Messages in flight, of every flow. A place freed by an arrival is the
    /// next one filled (`free` is a stack), so with many flows a message is
    /// written to a cache line just used, not to a flow's own cold ring.
    store: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Path<T> {
    /// A path with no flows yet (`add_flow`); jitter and loss draw from
    /// their own streams.
    pub fn new(delay: Duration, jitter: Duration, loss: LossModel, jitter_rng: Rng, loss_rng: Rng) -> Self {
        Path {
            delay,
            jitter: jitter.max(Duration::ZERO),
            loss,
            jitter_rng,
            loss_rng,
            lines: Vec::new(),
            store: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Add a flow with its access delay; flows are numbered in order. A
    /// flow that will not use this path (`used` false) reserves no room.
    pub fn add_flow(&mut self, access: Duration, used: bool) {
        let q = if used { VecDeque::with_capacity(16) } else { VecDeque::new() };
        self.lines.push(Line { q, last: Time::ZERO, access });
    }

    pub fn delay(&self) -> Duration {
        self.delay
    }

    pub fn jitter(&self) -> Duration {
        self.jitter
    }

    pub fn loss(&self) -> &LossModel {
        &self.loss
    }

    /// Whether the next message, sent at `now`, is lost on this path (drawn
    /// once per message).
    pub fn lose(&mut self, now: Time) -> bool {
        self.loss.lose(now, &mut self.loss_rng)
    }

    /// Extra one-way delay for one packet: |N(0, jitter²)| (half-normal, mean
    /// jitter·√(2/π)).
    fn jitter_sample(&mut self) -> Duration {
        if !self.jitter.is_positive() {
            return Duration::ZERO;
        }
        let us = (self.jitter.as_micros() as f64 * self.jitter_rng.normal()).abs();
        Duration::from_micros(us.round() as i64)
    }

    /// A message was lost before reaching this path (after the bottleneck):
    /// it still draws its jitter, so the jitter stream does not depend on
    /// which messages are lost.
    pub fn discard(&mut self) {
        self.jitter_sample();
    }

    /// A message left the bottleneck (or the sender, on an uncongested path)
    /// at `at`; it arrives after propagation, access delay and jitter, never
    /// before the flow's previous message. Returns the arrival time.
    pub fn send(&mut self, at: Time, flow: usize, msg: T) -> Time {
        let jitter = self.jitter_sample();
        let line = &mut self.lines[flow];
        let arrival = (at + self.delay + line.access + jitter).max(line.last);
        line.last = arrival;
        let at = match self.free.pop() {
            Some(i) => {
                self.store[i as usize] = Slot(Some(msg));
                i
            }
            None => {
                self.store.push(Slot(Some(msg)));
                (self.store.len() - 1) as u32
            }
        };
        line.q.push_back((arrival, at));
        arrival
    }

    /// When flow `flow`'s next message arrives.
    pub fn poll_timeout(&self, flow: usize) -> Option<Time> {
        self.lines[flow].q.front().map(|m| m.0)
    }

    /// Start loading flow `flow`'s line (its arrival clock and queue's
    /// header), which its next `send` writes (`rtcc_core::cache`).
    #[inline]
    pub fn prefetch_line(&self, flow: usize) {
        rtcc_core::cache::prefetch_val(&self.lines[flow]);
    }

    /// Start loading flow `flow`'s line and its next message
    /// (`rtcc_core::cache`).
    #[inline]
    pub fn prefetch(&self, flow: usize) {
        self.prefetch_line(flow);
        if let Some(m) = self.lines[flow].q.front() {
            rtcc_core::cache::prefetch_val(&self.store[m.1 as usize]);
        }
    }

    /// The next message of `flow` that has arrived by `now`.
    pub fn poll_arrival(&mut self, flow: usize, now: Time) -> Option<(Time, T)> {
        let line = &mut self.lines[flow];
        let (arrival, at) = line.q.front().copied().filter(|m| m.0 <= now)?;
        line.q.pop_front();
        self.free.push(at);
        let msg = self.store[at as usize].0.take().expect("a message in flight has its place");
        Some((arrival, msg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_add_and_jitter_never_reorders() {
        let ms = Duration::from_millis;
        let mut p: Path<u32> = Path::new(ms(20), ms(10), LossModel::None, Rng::new(1), Rng::new(2));
        p.add_flow(ms(5), true);
        p.add_flow(Duration::ZERO, true);
        let mut last = Time::ZERO;
        for i in 0..1000 {
            let at = Time::ZERO + Duration::from_micros(i * 100);
            let arr = p.send(at, 0, i as u32);
            assert!(arr >= at + ms(25) && arr >= last, "packet {i}: {arr}");
            last = arr;
        }
        assert!(p.send(Time::ZERO, 1, 0) - Time::ZERO >= ms(20));
        let mut got = Vec::new();
        while let Some((_, m)) = p.poll_arrival(0, Time::from_secs_f64(10.0)) {
            got.push(m);
        }
        assert_eq!(got, (0..1000).collect::<Vec<u32>>());
        assert!(p.poll_timeout(1).is_some() && p.poll_timeout(0).is_none());
    }

    #[test]
    fn flows_share_the_store_and_keep_their_own_messages() {
        let ms = Duration::from_millis;
        let mut p: Path<(usize, u32)> = Path::new(ms(10), Duration::ZERO, LossModel::None, Rng::new(1), Rng::new(2));
        p.add_flow(Duration::ZERO, true);
        p.add_flow(ms(7), true);
        let mut got = [Vec::new(), Vec::new()];
        for i in 0..200u32 {
            let now = Time::ZERO + ms(i as i64);
            for f in 0..2 {
                p.send(now, f, (f, i));
            }
            for (f, g) in got.iter_mut().enumerate() {
                while let Some((at, m)) = p.poll_arrival(f, now) {
                    assert!(at <= now && m.0 == f, "flow {f} got {m:?}");
                    g.push(m.1);
                }
            }
        }
        assert_eq!(got[0], (0..190).collect::<Vec<u32>>());
        assert_eq!(got[1], (0..183).collect::<Vec<u32>>());
        // Places are reused: the store holds what was in flight at most.
        assert!(p.store.len() <= 30, "{}", p.store.len());
    }

    #[test]
    fn jitter_is_half_normal_and_loss_is_drawn_apart() {
        let ms = Duration::from_millis;
        // Half-normal jitter: mean σ·√(2/π) ≈ 7.98 ms for σ = 10 ms.
        let mut p: Path<()> = Path::new(ms(0), ms(10), LossModel::None, Rng::new(3), Rng::new(4));
        p.add_flow(Duration::ZERO, true);
        let n = 20_000;
        let mean = (0..n).map(|_| (p.jitter_sample().as_micros()) as f64).sum::<f64>() / n as f64 / 1000.0;
        assert!((mean / 7.979 - 1.0).abs() < 0.03, "mean {mean}");
        // Loss has its own stream: discarding (a jitter draw) leaves it alone.
        let fates = |discard: bool| {
            let mut p: Path<()> = Path::new(ms(0), ms(5), LossModel::bernoulli(0.5), Rng::new(3), Rng::new(4));
            (0..50)
                .map(|_| {
                    if discard {
                        p.discard();
                    }
                    p.lose(Time::ZERO)
                })
                .collect::<Vec<bool>>()
        };
        let f = fates(false);
        assert_eq!(f, fates(true));
        assert!(f.iter().any(|&x| x) && f.iter().any(|&x| !x));
        let mut quiet: Path<()> = Path::new(ms(0), Duration::ZERO, LossModel::None, Rng::new(1), Rng::new(2));
        assert_eq!(quiet.jitter_sample(), Duration::ZERO);
        assert!(!quiet.lose(Time::ZERO));
    }
}
