//! The bandwidth sampler (burstrtc.txt §III-B, eqs. 3–6, Fig. 7): each
//! frame's burst part gives the capacity, its paced part (sent at the last
//! capacity estimate) the share the bottleneck gave it, and from the two the
//! background traffic's rate; every rate is averaged over the last frames.

use std::collections::VecDeque;

use super::frames::{Seen, Settled};

/// One part of a frame measured as a packet train (eqs. 3 and 4): the bytes
/// of all but its first packet over the time from its first to its last
/// packet, at the sender and at the receiver, in bytes per second. `None`
/// unless every packet arrived, there are at least two, and both spans are
/// positive.
pub fn train(part: &[Option<Seen>]) -> Option<Train> {
    if part.len() < 2 {
        return None;
    }
    let mut seen = Vec::with_capacity(part.len());
    for p in part {
        let p = (*p)?;
        seen.push((p.bytes, p.send, p.arrival?));
    }
    let (first, last) = (seen[0], seen[seen.len() - 1]);
    // Σ_{i=2..n} P_i (eqs. 1, 3, 4).
    let bytes: u64 = seen[1..].iter().map(|s| s.0).sum();
    let send = (last.1 - first.1).as_secs_f64();
    let recv = (last.2 - first.2).as_secs_f64();
    if recv <= 0.0 {
        return None;
    }
    Some(Train { bytes: bytes as f64, send: (send > 0.0).then_some(send), recv })
}

/// A packet train: Σ_{i=2..n} P_i (bytes) and the spans (s) it took at the
/// sender (`None` when the part left at once, a burst) and the receiver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Train {
    pub bytes: f64,
    pub send: Option<f64>,
    pub recv: f64,
}

impl Train {
    /// Rates in bytes per second: at the receiver, and at the sender.
    pub fn recv_rate(&self) -> f64 {
        self.bytes / self.recv
    }

    pub fn send_rate(&self) -> Option<f64> {
        Some(self.bytes / self.send?)
    }
}

/// How "the average values over the past 10 frames" (§III-B) are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Average {
    /// The mean of each frame's rate.
    Rate,
    /// The bytes of the frames over their summed spans: each frame weighted
    /// by its span, so a span squeezed by jitter cannot dominate.
    Time,
}

/// Eq. 6: B̂ = S·(Ĉ/R − 1), from eq. 5's R = S/(S + B)·C at a FIFO
/// bottleneck; clamped to [0, Ĉ] (a paced part received faster than the
/// capacity, or a capacity below what the paced part got, is noise).
pub fn background(s: f64, c: f64, r: f64) -> f64 {
    if r <= 0.0 {
        return c;
    }
    (s * (c / r - 1.0)).clamp(0.0, c)
}

/// Averages of the per-frame samples over the `window` newest frames that
/// gave each (§III-B: "the average values over the past 10 frames").
#[derive(Clone, Debug)]
pub struct Sampler {
    window: usize,
    average: Average,
    /// The burst parts (eq. 3).
    capacity: VecDeque<Train>,
    /// The paced parts (eq. 4), each sent over a positive span.
    paced: VecDeque<Train>,
}

impl Sampler {
    pub fn new(window: usize, average: Average) -> Self {
        Sampler { window: window.max(1), average, capacity: VecDeque::new(), paced: VecDeque::new() }
    }

    /// A settled frame: its burst part (≥ 2 packets, all arrived) samples
    /// Ĉ, its paced part (the same, and sent at a measurable rate) S and R.
    pub fn on_frame(&mut self, f: &Settled) {
        if let Some(t) = train(&f.burst) {
            push(&mut self.capacity, t, self.window);
        }
        if let Some(t) = train(&f.paced).filter(|t| t.send.is_some()) {
            push(&mut self.paced, t, self.window);
        }
    }

    fn average(&self, q: &VecDeque<Train>, span: impl Fn(&Train) -> f64) -> Option<f64> {
        match self.average {
            Average::Rate => mean(q.iter().map(|t| t.bytes / span(t))),
            Average::Time => {
                let (bytes, time) = q.iter().fold((0.0, 0.0), |a, t| (a.0 + t.bytes, a.1 + span(t)));
                (time > 0.0).then(|| bytes / time)
            }
        }
    }

    /// Ĉ (eq. 3), averaged; `None` before the first burst sample.
    pub fn capacity(&self) -> Option<f64> {
        self.average(&self.capacity, |t| t.recv)
    }

    /// The averaged S and R of the paced parts (eq. 4).
    pub fn paced(&self) -> Option<(f64, f64)> {
        let s = self.average(&self.paced, |t| t.send.unwrap_or(f64::INFINITY))?;
        Some((s, self.average(&self.paced, |t| t.recv)?))
    }

    /// B̂ (eq. 6) from the averaged S, Ĉ and R; 0 before a paced sample.
    pub fn background(&self) -> Option<f64> {
        let c = self.capacity()?;
        Some(self.paced().map_or(0.0, |(s, r)| background(s, c, r)))
    }
}

fn push<T>(q: &mut VecDeque<T>, v: T, window: usize) {
    if q.len() >= window {
        q.pop_front();
    }
    q.push_back(v);
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = it.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}
