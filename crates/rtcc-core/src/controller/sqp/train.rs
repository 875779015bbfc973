//! Frame packet trains as the receiver saw them, rebuilt at the sender from
//! per-packet feedback, and the one-way-delay baseline they are measured
//! against. Shared by `sqp` and `pudica`: both papers measure at the
//! receiver; the per-packet arrival times in each report carry the same
//! information, so here the sender computes it (the only difference is the
//! report's delay).
//!
//! One-way delay is `arrival − send_time`, a receiver-clock time minus a
//! sender-clock time: it holds the clocks' offset, which cancels in every
//! difference taken here (a delay minus the baseline, an arrival minus a
//! send time minus the baseline).

use std::collections::VecDeque;

use crate::controller::window::Windowed;
use crate::feedback::{Feedback, PacketResult};
use crate::packet::PacketKind;
use crate::units::{DataRate, DataSize, Duration, Time};

/// One frame's media packets as received: the train from the first received
/// packet to the last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Train {
    pub frame: u32,
    /// Media packets the frame has, and how many of them arrived.
    pub count: u16,
    pub received: u16,
    /// Send time, arrival and one-way delay of the first received packet.
    pub first_send: Time,
    pub first_arrival: Time,
    pub first_owd: Duration,
    /// Arrival of the last received packet.
    pub last_arrival: Time,
    /// Bytes of the first received packet, and of everything that arrived
    /// after it up to the last: the frame's other media packets and any
    /// packet of another kind (parity, audio, retransmission) between them,
    /// which took link time inside the train too.
    pub first_bytes: DataSize,
    pub after_first: DataSize,
}

impl Train {
    /// Receive dispersion: last arrival − first arrival.
    pub fn dispersion(&self) -> Duration {
        self.last_arrival - self.first_arrival
    }

    /// The rate the bytes after the first arrived at, (S − P₀)/dispersion:
    /// the bottleneck's rate when the train was paced faster than it, the
    /// train's own rate otherwise; `None` for a train of one packet.
    pub fn receive_rate(&self) -> Option<DataRate> {
        let d = self.dispersion();
        (self.received >= 2 && d.is_positive()).then(|| DataRate::from_size_per(self.after_first, d))
    }
}

/// An open train, and bytes of other kinds seen since its newest media packet.
#[derive(Clone, Copy, Debug)]
struct Open {
    train: Train,
    pending: DataSize,
}

/// Collects trains from the packets of every report, in sequence order. A
/// frame's train closes when all its media packets are accounted for
/// (received or lost) or a media packet of a later frame is reported.
#[derive(Clone, Debug, Default)]
pub struct Trains {
    /// The frame being collected, its train once a packet of it arrived,
    /// and how many of its packets were reported lost.
    current: Option<u32>,
    open: Option<Open>,
    lost: u16,
    /// Newest frame closed, so late packets of it do not open it again.
    closed: Option<u32>,
}

impl Trains {
    /// Feed one report; returns the trains it closed, oldest first.
    pub fn on_feedback(&mut self, fb: &Feedback) -> Vec<Train> {
        let mut done = vec![];
        for p in &fb.packets {
            self.on_packet(p, &mut done);
        }
        done
    }

    fn on_packet(&mut self, p: &PacketResult, done: &mut Vec<Train>) {
        if p.kind != PacketKind::Media || !p.pos.is_frame() {
            if let (Some(o), Some(_)) = (&mut self.open, p.arrival) {
                o.pending += p.size;
            }
            return;
        }
        let frame = p.pos.frame;
        // A straggler of a frame already closed or passed.
        if self.closed.is_some_and(|c| frame <= c) || self.current.is_some_and(|c| frame < c) {
            return;
        }
        if self.current.is_some_and(|c| c != frame) {
            self.close(done);
        }
        self.current = Some(frame);
        match (&mut self.open, p.arrival) {
            (Some(o), Some(a)) => {
                let t = &mut o.train;
                t.after_first += o.pending + p.size;
                o.pending = DataSize::ZERO;
                t.last_arrival = a;
                t.received += 1;
            }
            (None, Some(a)) => {
                let train = Train {
                    frame,
                    count: p.pos.count,
                    received: 1,
                    first_send: p.send_time,
                    first_arrival: a,
                    first_owd: a - p.send_time,
                    last_arrival: a,
                    first_bytes: p.size,
                    after_first: DataSize::ZERO,
                };
                self.open = Some(Open { train, pending: DataSize::ZERO });
            }
            (_, None) => self.lost += 1,
        }
        if self.open.is_some_and(|o| o.train.received + self.lost >= o.train.count) {
            self.close(done);
        }
    }

    fn close(&mut self, done: &mut Vec<Train>) {
        if let Some(o) = self.open.take() {
            done.push(o.train);
        }
        self.closed = self.current.take().or(self.closed);
        self.lost = 0;
    }
}

/// The minimum one-way delay over a sliding window of send times, fed with
/// every received packet.
#[derive(Clone, Debug)]
pub struct MinOwd {
    window: Duration,
    filter: Windowed<Duration>,
    clock: Time,
}

impl MinOwd {
    pub fn new(window: Duration) -> Self {
        MinOwd { window, filter: Windowed::min(), clock: Time::ZERO }
    }

    /// Every received packet of a report, of any kind.
    pub fn on_feedback(&mut self, fb: &Feedback) {
        for p in &fb.packets {
            if let Some(a) = p.arrival {
                self.clock = self.clock.max(p.send_time);
                self.filter.update(self.clock, a - p.send_time, self.window);
            }
        }
    }

    /// The minimum over the window ending at the newest send time; `None`
    /// before any packet arrived.
    pub fn get(&self) -> Option<Duration> {
        self.filter.get()
    }
}

/// What the sender decided when a frame was encoded: the encoder target and
/// the pacing rate its packets left at, kept for the last `FRAMES` frames.
#[derive(Clone, Debug, Default)]
pub struct Sent {
    frames: VecDeque<(u32, DataRate, DataRate)>,
}

impl Sent {
    /// Frames remembered: several seconds at any frame rate, far more than
    /// are ever in flight.
    const FRAMES: usize = 512;

    pub fn on_frame(&mut self, frame: u32, target: DataRate, pacing: DataRate) {
        if self.frames.len() == Self::FRAMES {
            self.frames.pop_front();
        }
        self.frames.push_back((frame, target, pacing));
    }

    /// (target, pacing) of `frame`, if remembered.
    pub fn get(&self, frame: u32) -> Option<(DataRate, DataRate)> {
        self.frames.iter().rev().find(|f| f.0 == frame).map(|f| (f.1, f.2))
    }

    /// The newest frame encoded.
    pub fn newest(&self) -> Option<u32> {
        self.frames.back().map(|f| f.0)
    }
}
