//! One property test for every registered controller: random event
//! sequences (sends, reports with losses and reordering, timeouts, frames)
//! must never panic and must keep decisions finite and within bounds.

use rtcc_core::controller::{self, ControllerContext, FrameInfo, Params, SenderState, SentPacket};
use rtcc_core::feedback::{Feedback, PacketResult, ReportStats};
use rtcc_core::packet::PacketKind;
use rtcc_core::rng::Rng;
use rtcc_core::units::{DataRate, DataSize, Duration, Time};

#[test]
fn every_controller_survives_random_events() {
    let ctx = ControllerContext::default();
    let names = controller::listed_names();
    assert!(names.len() >= 8);
    for name in &names {
        for seed in 0..4u64 {
            let mut c = controller::create(name, &Params::new(), &ctx)
                .unwrap_or_else(|e| panic!("{name}: default parameters refused: {e}"));
            let mut rng = Rng::new(seed * 7919 + name.len() as u64);
            let mut now = Time::from_millis(1);
            let mut seq = 0u64;
            let mut sent: Vec<(u64, Time, DataSize)> = Vec::new();
            let mut in_flight = DataSize::ZERO;
            for step in 0..4000 {
                now += Duration::from_micros((rng.uniform() * 8000.0) as i64);
                match (rng.uniform() * 10.0) as u32 {
                    0..=5 => {
                        let size = DataSize::from_bytes(50 + (rng.uniform() * 1150.0) as u64);
                        in_flight += size;
                        let p = SentPacket {
                            seq,
                            kind: if rng.chance(0.1) { PacketKind::Padding } else { PacketKind::Media },
                            size,
                            send_time: now,
                            probe_cluster: -1,
                            in_flight,
                            ..SentPacket::default()
                        };
                        c.on_packet_sent(now, &p);
                        sent.push((seq, now, size));
                        seq += 1;
                    }
                    6 | 7 if !sent.is_empty() => {
                        // A report on a random prefix: losses, jitter, some reordering.
                        let n = 1 + (rng.uniform() * sent.len() as f64) as usize;
                        let mut packets: Vec<PacketResult> = sent
                            .drain(..n.min(sent.len()))
                            .map(|(s, t, size)| PacketResult {
                                seq: s,
                                kind: PacketKind::Media,
                                size,
                                send_time: t,
                                arrival: (!rng.chance(0.1))
                                    .then(|| t + Duration::from_micros(10_000 + (rng.uniform() * 90_000.0) as i64)),
                                probe_cluster: -1,
                                ..PacketResult::default()
                            })
                            .collect();
                        if rng.chance(0.2) && packets.len() > 1 {
                            packets.swap(0, 1);
                        }
                        let acked = packets.iter().fold(DataSize::ZERO, |a, p| a + p.size);
                        in_flight -= acked;
                        let latest = packets.iter().filter_map(|p| p.arrival).max().unwrap_or(now);
                        let report_time = latest + Duration::from_millis(5);
                        now = now.max(report_time + Duration::from_millis(10));
                        let fb = Feedback {
                            report_time,
                            received_at: now,
                            packets,
                            stats: ReportStats::default(),
                            ..Feedback::default()
                        };
                        c.on_feedback(now, &fb);
                    }
                    8 => c.on_frame_encoded(
                        now,
                        &FrameInfo {
                            frame: step,
                            capture_time: now,
                            size: DataSize::from_bytes(8000),
                            packets: 7,
                            key: false,
                            si: 0.0,
                            ti: 0.0,
                        },
                    ),
                    _ => {
                        if let Some(t) = c.poll_timeout() {
                            now = now.max(t);
                            c.on_timeout(now);
                        }
                    }
                }
                let queued = DataSize::from_bytes((rng.uniform() * 50_000.0) as u64);
                c.on_sender_state(now, &SenderState { queued, queued_packets: 1, in_flight });
                while c.poll_probe().is_some() {}
                let d = c.decision();
                assert!(d.target_rate >= ctx.min_rate.min(DataRate::from_kbps(4)), "{name}: target {}", d.target_rate);
                assert!(d.target_rate <= ctx.max_rate, "{name}: target {}", d.target_rate);
                assert!(d.pacing_rate > DataRate::ZERO, "{name}: zero pacing rate");
                assert!(
                    d.pacing_rate <= DataRate::from_bps(ctx.max_rate.bps() * 20),
                    "{name}: pacing {}",
                    d.pacing_rate
                );
                if let Some(w) = d.cwnd {
                    assert!(w > DataSize::ZERO && w.bytes() < 1 << 40, "{name}: cwnd {w}");
                }
                let mut nan = None;
                c.state(&mut |k, v| {
                    if v.is_nan() {
                        nan = Some(k);
                    }
                });
                assert!(nan.is_none(), "{name}: state {nan:?} is NaN");
                if let Some(t) = c.poll_timeout() {
                    assert!(t >= now - Duration::from_secs(10), "{name}: timeout far in the past");
                }
            }
        }
    }
}
