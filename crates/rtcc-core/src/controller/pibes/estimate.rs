//! The receiver-side half of PIBES (§III-A, §III-B), run at the sender from
//! per-packet feedback: the smoothed inter-arrival times of burst packets
//! (eq. 2) and of paced packets (eq. 4), the competition flag, and each
//! frame's mean RTT for the share FSM.

use crate::feedback::{Feedback, PacketResult};
use crate::packet::PacketKind;
use crate::units::{DataSize, Duration, Time};

/// Eqs. 2 and 4: d_0 = t_0, d_i = α·t_i + (1 − α)·d_{i−1}. (The paper's
/// "i > 1" for the second case leaves i = 1 undefined; it reads as i ≥ 1.)
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ewma {
    value: Option<f64>,
}

impl Ewma {
    pub fn add(&mut self, alpha: f64, sample: f64) {
        self.value = Some(match self.value {
            None => sample,
            Some(d) => alpha * sample + (1.0 - alpha) * d,
        });
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

/// Which part of its frame a media packet left in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Burst,
    Paced,
}

/// The previous packet the estimator saw, to pair with the next sequence.
#[derive(Clone, Copy, Debug)]
struct Last {
    seq: u64,
    frame: u32,
    part: Option<Part>,
    arrival: Option<Time>,
}

/// Inter-arrival estimator over the packets of every report, in sequence
/// order. A sample is the arrival gap between two consecutive sequence
/// numbers, both received, both media of the same frame and the same part
/// (burst with burst, paced with paced); FEC parity and the burst → paced
/// boundary break pairs. Each gap is scaled to the nominal packet size P by
/// the later packet's size (its own service time at the bottleneck), since
/// the sender splits a frame evenly into packets of at most P (the paper's
/// frames are whole packets of P, eq. 6).
#[derive(Clone, Debug)]
pub struct InterArrival {
    alpha: f64,
    beta: f64,
    nominal: DataSize,
    burst: Ewma,
    paced: Ewma,
    last: Option<Last>,
    burst_samples: u64,
    paced_samples: u64,
}

impl InterArrival {
    pub fn new(alpha: f64, beta: f64, nominal: DataSize) -> Self {
        InterArrival {
            alpha,
            beta,
            nominal,
            burst: Ewma::default(),
            paced: Ewma::default(),
            last: None,
            burst_samples: 0,
            paced_samples: 0,
        }
    }

    /// Feed one packet of a report; `part` is where the sender put it
    /// (`None`: not a media packet of a frame).
    pub fn on_packet(&mut self, p: &PacketResult, part: Option<Part>) {
        let frame = if p.kind == PacketKind::Media { p.pos.frame } else { crate::packet::NO_FRAME };
        let now = Last { seq: p.seq, frame, part, arrival: p.arrival };
        if let (Some(prev), Some(t1), Some(kind)) = (self.last, p.arrival, part) {
            let paired = prev.seq + 1 == p.seq && prev.frame == frame && prev.part == Some(kind);
            if let (true, Some(t0)) = (paired, prev.arrival) {
                if t1 >= t0 && p.size.bytes() > 0 {
                    let gap = (t1 - t0).as_secs_f64() * self.nominal.bytes() as f64 / p.size.bytes() as f64;
                    match kind {
                        Part::Burst => {
                            self.burst.add(self.alpha, gap);
                            self.burst_samples += 1;
                        }
                        Part::Paced => {
                            self.paced.add(self.alpha, gap);
                            self.paced_samples += 1;
                        }
                    }
                }
            }
        }
        self.last = Some(now);
    }

    /// d of eq. 2: the smoothed inter-arrival time of burst packets.
    pub fn burst(&self) -> Option<Duration> {
        self.burst.get().map(Duration::from_secs_f64)
    }

    /// d̃ of eq. 4: the smoothed inter-arrival time of paced packets.
    pub fn paced(&self) -> Option<Duration> {
        self.paced.get().map(Duration::from_secs_f64)
    }

    /// §III-B: a competing flow is present when d̃ exceeds d by more than β.
    pub fn competing(&self) -> bool {
        match (self.burst.get(), self.paced.get()) {
            (Some(d), Some(dp)) => dp > d * (1.0 + self.beta),
            _ => false,
        }
    }

    pub fn samples(&self) -> (u64, u64) {
        (self.burst_samples, self.paced_samples)
    }
}

/// rtt_k of §III-B: the mean RTT of frame k's packets, each without the
/// receiver's hold time before its report (the RTT a per-packet ACK would
/// give, free of clock offset). A frame's value is final once a packet of a
/// later frame is reported.
#[derive(Clone, Debug, Default)]
pub struct FrameRtt {
    open: Option<(u32, f64, u32)>,
    /// The last two finished frames' mean RTTs, newest last, and how many
    /// frames have finished.
    last: [Option<f64>; 2],
    finished: u64,
}

impl FrameRtt {
    pub fn on_feedback(&mut self, fb: &Feedback) {
        for p in &fb.packets {
            if !p.pos.is_frame() {
                continue;
            }
            let Some(rtt) = fb.rtt(p) else { continue };
            let rtt = rtt.as_secs_f64();
            match &mut self.open {
                Some((f, sum, n)) if *f == p.pos.frame => {
                    *sum += rtt;
                    *n += 1;
                }
                // A retransmission of an older frame: its frame is final.
                Some((f, _, _)) if p.pos.frame < *f => {}
                _ => {
                    self.finish();
                    self.open = Some((p.pos.frame, rtt, 1));
                }
            }
        }
    }

    fn finish(&mut self) {
        if let Some((_, sum, n)) = self.open.take() {
            self.last = [self.last[1], Some(sum / f64::from(n))];
            self.finished += 1;
        }
    }

    /// Frames finished so far (a new trend exists when this grows).
    pub fn finished(&self) -> u64 {
        self.finished
    }

    /// rtt_k − rtt_{k−1} of the two newest finished frames.
    pub fn trend(&self) -> Option<f64> {
        Some(self.last[1]? - self.last[0]?)
    }

    /// rtt_k of the newest finished frame.
    pub fn latest(&self) -> Option<Duration> {
        self.last[1].map(Duration::from_secs_f64)
    }
}
