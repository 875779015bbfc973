//! Snapshot tests of short event traces: every listed controller goes
//! through the same scripted 2.5 s of events — a 1.92 Mbps packet stream in
//! 25 fps frames, a report every 50 ms over a 25 ms path whose delay rises
//! by 60 ms from 1.0 s to 1.5 s and falls back over 2.0–2.1 s, one lost packet at
//! 0.75 s and three at 1.8 s, a pacer queue from 1.2 s to 1.6 s, and the
//! controller's own timeouts — and the trace of its decisions and of its
//! state columns is compared with `tests/snapshots/traces__<name>.snap`.
//!
//! The script does not follow the decisions, so a trace changes only when a
//! controller's behaviour does. After an intended change, review the diff
//! and accept it (`cargo insta review`, or run once with
//! `INSTA_UPDATE=always` and read `git diff`). Without that, and always under
//! `CI=true`, a differing or missing snapshot fails the test.

use std::fmt::Write;

use rtcc_core::controller::{
    self, Controller, ControllerContext, Decision, FrameInfo, FramePos, Params, SenderState, SentPacket,
};
use rtcc_core::feedback::{Feedback, PacketResult, ReportStats};
use rtcc_core::packet::PacketKind;
use rtcc_core::units::{DataSize, Duration, Time};

const MS: Duration = Duration::from_millis(1);
const PACKET: DataSize = DataSize::from_bytes(1200);
/// A packet every 5 ms, 8 to a frame, a frame every 40 ms.
const SEND_EVERY: Duration = Duration::from_millis(5);
const PER_FRAME: u16 = 8;
const END: Time = Time::from_millis(2500);
const REPORT_EVERY: Duration = Duration::from_millis(50);
const BASE_DELAY: Duration = Duration::from_millis(25);
/// Instants at which the state columns are written.
const STATE_AT: [i64; 5] = [500, 1000, 1500, 2000, 2500];

/// One-way delay of a packet sent at `t`: 25 ms, plus a queue that builds
/// linearly to 60 ms over 1.0–1.5 s, holds, and drains over 2.0–2.1 s.
fn one_way(t: Time) -> Duration {
    let ms = t.as_micros() as f64 / 1000.0;
    let extra = if (1000.0..1500.0).contains(&ms) {
        (ms - 1000.0) * 60.0 / 500.0
    } else if (1500.0..2000.0).contains(&ms) {
        60.0
    } else if (2000.0..2100.0).contains(&ms) {
        // Falling 3 ms per 5 ms packet: arrivals stay in order.
        60.0 - (ms - 2000.0) * 0.6
    } else {
        0.0
    };
    BASE_DELAY + Duration::from_secs_f64(extra / 1000.0)
}

fn lost(seq: u64) -> bool {
    seq == 150 || (360..363).contains(&seq)
}

/// Bytes waiting in the pacer at `t`.
fn queued(t: Time) -> DataSize {
    if t >= Time::from_millis(1200) && t < Time::from_millis(1600) {
        DataSize::from_bytes(6000)
    } else {
        DataSize::ZERO
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Frame(u32),
    Send(u64),
    /// A report sent by the receiver at this time (it arrives 25 ms later).
    Report(Time),
}

/// The script, in time order (stable: at equal times, in push order).
fn script() -> Vec<(Time, Event)> {
    let mut ev = vec![];
    let mut seq = 0u64;
    let mut t = Time::ZERO + SEND_EVERY;
    while t <= END {
        if seq.is_multiple_of(u64::from(PER_FRAME)) {
            ev.push((t, Event::Frame((seq / u64::from(PER_FRAME)) as u32)));
        }
        ev.push((t, Event::Send(seq)));
        seq += 1;
        t += SEND_EVERY;
    }
    let mut r = Time::ZERO + REPORT_EVERY;
    while r + BASE_DELAY <= END {
        ev.push((r + BASE_DELAY, Event::Report(r)));
        r += REPORT_EVERY;
    }
    ev.sort_by_key(|e| e.0);
    ev
}

struct Run {
    c: Box<dyn Controller>,
    out: String,
    last: Option<Decision>,
    now: Time,
}

impl Run {
    /// Log the decision if it changed, and any probe asked for.
    fn look(&mut self, what: &str) {
        while let Some(p) = self.c.poll_probe() {
            let _ = writeln!(
                self.out,
                "{:>7.1} {what:<8} probe id={} rate={:.1}k bytes={} packets={}",
                self.now.as_millis_f64(),
                p.id,
                p.rate.kbps_f64(),
                p.min_bytes.bytes(),
                p.min_packets
            );
        }
        let d = self.c.decision();
        if self.last == Some(d) {
            return;
        }
        self.last = Some(d);
        let cwnd = d.cwnd.map_or("-".to_string(), |w| w.bytes().to_string());
        let fec = d.fec.map_or("-".to_string(), |f| f.group.to_string());
        let skip = d.skip_threshold.map_or("-".to_string(), |s| format!("{:.1}", s.as_millis_f64()));
        // Only controllers that ask for frame drops show the ratio.
        let drop = if d.cwnd_reduce_ratio > 0.0 { format!(" drop={:.3}", d.cwnd_reduce_ratio) } else { String::new() };
        let _ = writeln!(
            self.out,
            "{:>7.1} {what:<8} target={:.1}k pacing={:.1}k cwnd={cwnd} padding={:.1}k {:?} fec={fec} skip={skip}{drop}",
            self.now.as_millis_f64(),
            d.target_rate.kbps_f64(),
            d.pacing_rate.kbps_f64(),
            d.padding_rate.kbps_f64(),
            d.schedule,
        );
    }

    /// Serve the controller's timeouts due by `t`.
    fn timeouts_until(&mut self, t: Time) {
        while let Some(due) = self.c.poll_timeout().filter(|&d| d <= t) {
            self.now = self.now.max(due);
            self.c.on_timeout(self.now);
            self.look("timeout");
        }
    }

    fn state(&mut self) {
        let mut cols = vec![];
        self.c.state(&mut |k, v| cols.push(format!("{k}={v:.3}")));
        let _ = writeln!(self.out, "{:>7.1} state    {}", self.now.as_millis_f64(), cols.join(" "));
    }
}

/// The trace of `name` over the script.
fn trace(name: &str) -> String {
    let ctx = ControllerContext::default();
    let c = controller::create(name, &Params::new(), &ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut run = Run { c, out: String::new(), last: None, now: Time::ZERO };
    let _ = writeln!(run.out, "{name}: start {}, min {}, max {}", ctx.start_rate, ctx.min_rate, ctx.max_rate);
    run.look("start");
    // (seq, send time) of packets sent and not yet reported.
    let mut unreported: Vec<(u64, Time)> = vec![];
    let mut in_flight = DataSize::ZERO;
    let mut states = STATE_AT.iter().map(|&ms| Time::from_millis(ms)).peekable();
    for (t, ev) in script() {
        while let Some(s) = states.next_if(|&s| s < t) {
            run.timeouts_until(s);
            run.now = run.now.max(s);
            run.state();
        }
        run.timeouts_until(t);
        run.now = run.now.max(t);
        let now = run.now;
        match ev {
            Event::Frame(frame) => {
                let info = FrameInfo {
                    frame,
                    capture_time: now,
                    size: DataSize::from_bytes(PACKET.bytes() * u64::from(PER_FRAME)),
                    packets: PER_FRAME,
                    key: frame == 0,
                    si: 0.0,
                    ti: 0.0,
                };
                run.c.on_frame_encoded(now, &info);
                run.look("frame");
            }
            Event::Send(seq) => {
                in_flight += PACKET;
                let index = (seq % u64::from(PER_FRAME)) as u16;
                let pos = FramePos { frame: (seq / u64::from(PER_FRAME)) as u32, index, count: PER_FRAME };
                let p = SentPacket {
                    seq,
                    kind: PacketKind::Media,
                    size: PACKET,
                    send_time: now,
                    probe_cluster: -1,
                    in_flight,
                    pos,
                };
                run.c.on_packet_sent(now, &p);
                unreported.push((seq, now));
                let q = queued(now);
                let st = SenderState { queued: q, queued_packets: (q.bytes() / PACKET.bytes()) as usize, in_flight };
                run.c.on_sender_state(now, &st);
                run.look("send");
            }
            Event::Report(report_time) => {
                // Everything that arrived by the report, and the losses
                // before the newest arrival.
                let arrived = |&(s, sent): &(u64, Time)| !lost(s) && sent + one_way(sent) <= report_time;
                let Some(newest) = unreported.iter().filter(|p| arrived(p)).map(|p| p.0).max() else { continue };
                let (covered, rest): (Vec<_>, Vec<_>) = unreported.iter().partition(|p| p.0 <= newest);
                unreported = rest;
                let mut stats = ReportStats::default();
                let mut owd_sum = 0;
                let packets: Vec<PacketResult> = covered
                    .iter()
                    .map(|&(seq, sent)| {
                        let arrival = (!lost(seq)).then(|| sent + one_way(sent));
                        if let Some(a) = arrival {
                            let owd = a - sent;
                            stats.received += 1;
                            stats.owd_min = Some(stats.owd_min.map_or(owd, |m| m.min(owd)));
                            stats.owd_max = Some(stats.owd_max.map_or(owd, |m| m.max(owd)));
                            stats.owd_newest = Some(owd);
                            owd_sum += owd.as_micros();
                        } else {
                            stats.lost += 1;
                        }
                        let index = (seq % u64::from(PER_FRAME)) as u16;
                        PacketResult {
                            seq,
                            kind: PacketKind::Media,
                            size: PACKET,
                            send_time: sent,
                            arrival,
                            probe_cluster: -1,
                            pos: FramePos { frame: (seq / u64::from(PER_FRAME)) as u32, index, count: PER_FRAME },
                            late: false,
                            ..Default::default()
                        }
                    })
                    .collect();
                if stats.received > 0 {
                    stats.owd_mean = Some(Duration::from_micros(owd_sum / i64::from(stats.received)));
                }
                in_flight -= DataSize::from_bytes(PACKET.bytes() * packets.len() as u64);
                // The round trip an RR gives: an SR one way, the report back.
                let rtcp_rtt = Some(one_way(report_time) + (now - report_time));
                let fb = Feedback {
                    report_time,
                    received_at: now,
                    packets,
                    stats,
                    estimate: None,
                    rtcp_rtt,
                    ..Default::default()
                };
                run.c.on_feedback(now, &fb);
                run.look("feedback");
            }
        }
    }
    for s in states {
        run.timeouts_until(s);
        run.now = run.now.max(s);
        run.state();
    }
    run.out
}

#[test]
fn controller_traces_match_their_snapshots() {
    let names = controller::listed_names();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let trace = trace(&name);
        insta::assert_snapshot!(name.replace('+', "_"), trace);
    }
}

/// The script itself: what every snapshot rests on.
#[test]
fn the_script_is_what_the_snapshots_say() {
    let ev = script();
    let count = |f: fn(&Event) -> bool| ev.iter().filter(|e| f(&e.1)).count();
    // 2.5 s of a packet every 5 ms, a frame every 8, a report every 50 ms
    // (the last one sent at 2.45 s arrives at 2.475 s).
    assert_eq!(count(|e| matches!(e, Event::Send(_))), 500);
    assert_eq!(count(|e| matches!(e, Event::Frame(_))), 63);
    assert_eq!(count(|e| matches!(e, Event::Report(_))), 49);
    assert!(ev.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(one_way(Time::from_millis(900)), MS * 25);
    assert_eq!(one_way(Time::from_millis(1250)), MS * 55);
    assert_eq!(one_way(Time::from_millis(1999)), MS * 85);
    assert_eq!(one_way(Time::from_millis(2000)), MS * 85);
    assert_eq!(one_way(Time::from_millis(2050)), MS * 55);
    assert_eq!(one_way(Time::from_millis(2100)), MS * 25);
    assert_eq!((0..500).filter(|&s| lost(s)).count(), 4);
}
