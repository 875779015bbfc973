//! Per-frame bookkeeping of the reports: which of a frame's packets were
//! paced and which burst (the split the sender used, §IV-A1), each packet's
//! send and arrival time as the reports give them, the frame's first-packet
//! delay (the model's D, eq. 10: encode → first packet received) and, once
//! every packet is accounted for, the parts the sampler measures (eqs. 3–4)
//! and the bytes sent and received for the loss estimate (§IV-A1).

use std::collections::VecDeque;

use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{Duration, Time};

/// Frames waiting for reports, at most: beyond this the oldest is settled
/// with what is known (about 8.5 s at 30 fps; the sender forgets packets
/// after 5 s, so nothing more would come).
const MAX_PENDING: usize = 256;

/// One packet of a frame as reported.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seen {
    pub bytes: u64,
    pub send: Time,
    /// `None`: reported lost.
    pub arrival: Option<Time>,
}

#[derive(Clone, Debug)]
struct Pending {
    frame: u32,
    encoded: Time,
    /// Packets in the paced part, which comes first (§III-B, Fig. 7).
    paced: u16,
    /// By index; `None` until reported.
    packets: Vec<Option<Seen>>,
    reported: u16,
    first_seen: bool,
}

/// A frame whose packets have all been reported, or whose reports are lost
/// (a later frame was reported).
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    pub frame: u32,
    /// The paced part, then the burst, in sending order; `None` for a packet
    /// never reported.
    pub paced: Vec<Option<Seen>>,
    pub burst: Vec<Option<Seen>>,
}

impl Settled {
    /// Bytes reported (arrived or lost) and bytes arrived (§IV-A1 loss).
    pub fn bytes(&self) -> (u64, u64) {
        let all = self.paced.iter().chain(&self.burst).flatten();
        let sent = all.clone().map(|s| s.bytes).sum();
        let received = all.filter(|s| s.arrival.is_some()).map(|s| s.bytes).sum();
        (sent, received)
    }
}

/// What one report told: first-packet delays (frame, D) and settled frames.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reported {
    pub first: Vec<(u32, Time, Duration)>,
    pub settled: Vec<Settled>,
}

#[derive(Clone, Debug, Default)]
pub struct FrameLog {
    frames: VecDeque<Pending>,
}

impl FrameLog {
    /// Frame `frame` of `count` packets encoded at `at`, its first `paced`
    /// packets paced. Ids only grow; an id not above the last is ignored.
    pub fn on_encoded(&mut self, frame: u32, at: Time, count: u16, paced: u16) -> Vec<Settled> {
        if self.frames.back().is_some_and(|f| f.frame >= frame) {
            return vec![];
        }
        let mut out = vec![];
        while self.frames.len() >= MAX_PENDING {
            if let Some(f) = self.frames.pop_front() {
                out.push(settle(f));
            }
        }
        self.frames.push_back(Pending {
            frame,
            encoded: at,
            paced: paced.min(count),
            packets: vec![None; count as usize],
            reported: 0,
            first_seen: false,
        });
        out
    }

    fn find(&mut self, frame: u32) -> Option<&mut Pending> {
        let i = self.frames.binary_search_by_key(&frame, |f| f.frame).ok()?;
        self.frames.get_mut(i)
    }

    /// One report: media packets of logged frames are filed by frame and
    /// index. A frame is settled when all its packets are reported, or when
    /// the report carries a later frame (its missing reports were lost: the
    /// pacer sends frames in order).
    pub fn on_feedback(&mut self, fb: &Feedback) -> Reported {
        let mut out = Reported::default();
        let mut newest: Option<u32> = None;
        for p in &fb.packets {
            if p.kind != PacketKind::Media || !p.pos.is_frame() {
                continue;
            }
            newest = Some(newest.map_or(p.pos.frame, |n| n.max(p.pos.frame)));
            let Some(f) = self.find(p.pos.frame) else { continue };
            let Some(slot) = f.packets.get_mut(p.pos.index as usize) else { continue };
            if slot.is_some() {
                continue;
            }
            *slot = Some(Seen { bytes: p.size.bytes(), send: p.send_time, arrival: p.arrival });
            f.reported += 1;
            // Eq. 10's D: from the encoder handing the frame over to its
            // first packet's arrival (receiver clock; in the simulator the
            // clocks agree, elsewhere only differences with D_min count).
            if p.pos.index == 0 && !f.first_seen {
                if let Some(a) = p.arrival {
                    f.first_seen = true;
                    out.first.push((f.frame, f.encoded, a.saturating_since(f.encoded)));
                }
            }
        }
        while let Some(f) = self.frames.front() {
            let whole = f.reported as usize == f.packets.len();
            if !(whole || newest.is_some_and(|n| n > f.frame)) {
                break;
            }
            if let Some(f) = self.frames.pop_front() {
                out.settled.push(settle(f));
            }
        }
        // A frame behind one still waiting is settled in its turn; one
        // complete in the middle waits for those before it (rare: a report
        // lost between them).
        out
    }

    pub fn pending(&self) -> usize {
        self.frames.len()
    }
}

fn settle(f: Pending) -> Settled {
    let mut packets = f.packets;
    let burst = packets.split_off(f.paced as usize);
    Settled { frame: f.frame, paced: packets, burst }
}
