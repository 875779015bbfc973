//! The recorder fed by events alone, as any driver would feed it: no
//! simulator, and on a path whose capacity no one knows, no capacity truth.

use rtcc_core::controller::{ControllerContext, Params};
use rtcc_core::packet::{Packet, PacketKind, FLAG_FIRST, FLAG_FRAME, FLAG_MARKER, NO_FRAME};
use rtcc_core::receiver::{FrameStatus, RecvFrame};
use rtcc_core::resolution::Resolution;
use rtcc_core::sender::{SendCounters, SentFrame};
use rtcc_core::units::{DataRate, DataSize, Duration, Time};
use rtcc_record::frames::FrameLog;
use rtcc_record::metrics::Column;
use rtcc_record::output::RunInfo;
use rtcc_record::recorder::{Event, FlowLabel, ReceiverSample, Recorder, SenderSample};
use rtcc_record::{CapacityTruth, Envelope, Output};

/// A driver that only produces events: 80 frames of one 1000-byte packet,
/// 100 ms apart, each 30 ms on the way, over a bottleneck whose capacity
/// truth is `capacity` (none on a real path) and whose queue is sampled
/// every bin when `link_events`.
fn drive(capacity: Option<Box<dyn CapacityTruth>>, link_events: bool) -> Output {
    const N: u32 = 80;
    let bin = Duration::from_millis(100);
    let mut rec = Recorder::new(capacity, bin, true, true);
    let label = FlowLabel::video("a", "fixed", "ideal");
    let fi = Duration::from_millis(100);
    rec.add_flow(label, FrameLog::new(true, Default::default(), fi, None, None));
    let ctrl = rtcc_core::controller::create("fixed", &Params::new(), &ControllerContext::default()).unwrap();
    let mut counters = SendCounters::default();
    // 80 frames of one 1000-byte packet, each 30 ms on the way, and a
    // skipped capture after frame 3. The receiver's records come after the
    // sender's, pairwise swapped (1, 0, 3, 2, ...), and frame 7's never.
    let mut received = Vec::new();
    for k in 0..N {
        let sent = Time::from_millis(100 * k as i64);
        let packet = Packet {
            kind: PacketKind::Media,
            seq: k as u16,
            size: DataSize::from_bytes(1000),
            frame: k as u16,
            flags: FLAG_FRAME | FLAG_FIRST | FLAG_MARKER,
            ..Packet::default()
        };
        let p = Envelope { flow: 0, seq: k as u64, frame: k, sent, kind: packet.kind, packet };
        rec.record(0, Event::PacketSent(&p));
        rec.record(
            0,
            Event::PacketDeparted {
                packet: &p,
                // A queue delay that differs per bin, so each bin's mean
                // must be its own packet's, not a running one.
                queued: Duration::from_millis(k as i64 % 7),
                sojourn: Duration::ZERO,
                lost: false,
                reverse: false,
            },
        );
        let at = sent + Duration::from_millis(30);
        rec.record(0, Event::PacketArrived { at, packet: &p });
        counters.bytes[0] += 1000;
        counters.packets[0] += 1;
        let s = SentFrame {
            frame: k,
            capture: sent,
            size: DataSize::from_bytes(1000),
            key: k == 0,
            packets: 1,
            target: DataRate::from_kbps(80),
            resolution: Resolution::R360,
            first_sent: Some(sent),
            last_sent: Some(sent),
            skipped: false,
            media_sent: 1,
        };
        let r = RecvFrame {
            complete: Some(at),
            display: Some(at),
            status: FrameStatus::Displayed,
            count: 1,
            received: 1,
            ..RecvFrame::default()
        };
        rec.record(0, Event::FrameSent(&s));
        if k == 3 {
            let skip = SentFrame { frame: NO_FRAME, capture: sent + fi / 2, skipped: true, packets: 0, ..s };
            rec.record(0, Event::FrameSent(&skip));
        }
        if k != 7 {
            received.push((k, r));
        }
        let sample = SenderSample {
            target: DataRate::from_kbps(80),
            pacing: DataRate::from_kbps(80),
            encoder: DataRate::from_kbps(80),
            resolution_p: 360,
            counters,
            cwnd: None,
            in_flight: DataSize::ZERO,
            pacer_queued: DataSize::ZERO,
            controller: ctrl.as_ref(),
        };
        let t1 = Time::from_millis(100 * (k as i64 + 1));
        if link_events {
            rec.record(0, Event::Link { at: t1, queue_bytes: DataSize::ZERO });
        }
        rec.record(0, Event::Sender { at: t1, sample: &sample });
    }
    let mut order: Vec<usize> = (0..received.len()).collect();
    for pair in order.chunks_mut(2) {
        pair.reverse();
    }
    for i in order {
        let (k, r) = &received[i];
        rec.record(0, Event::FrameReceived { frame: *k, record: r, next_display: None, at_end: false });
    }
    let end = Time::from_millis(100 * N as i64);
    rec.record(0, Event::ReceiverEnd(&ReceiverSample::default()));
    rec.record(0, Event::End { at: end, counters: &counters });
    rec.output(&RunInfo { scenario: "events".into(), seed: 1, end, wall: Default::default(), events: 30 })
}

/// No simulator: a driver that only produces events gets a summary, with
/// the sender's and the receiver's frame records joined whatever their order.
#[test]
fn outputs_come_from_events_alone() {
    let out = drive(Some(Box::new(DataRate::from_kbps(1000))), true);
    let f = &out.summary.flows[0];
    assert_eq!((f.frames_sent, f.frames_displayed, f.frames_lost, f.frames_skipped), (80, 79, 1, 1));
    assert_eq!(f.packets_sent, 80);
    assert!((f.video_kbps - 80.0).abs() < 1e-9, "{}", f.video_kbps);
    assert!((f.goodput_kbps - 80.0).abs() < 1e-9, "{}", f.goodput_kbps);
    assert!((f.owd_ms_mean.unwrap() - 30.0).abs() < 0.1);
    // 79 frames shown 30 ms after capture; the capture skipped at 350 ms
    // takes frame 4's display at 430 ms (Dumbo §6.1).
    let latency = (79.0 * 30.0 + 80.0) / 80.0;
    assert!((f.frame_latency_ms_mean.unwrap() - latency).abs() < 0.1, "{:?}", f.frame_latency_ms_mean);
    assert!((out.summary.link.utilization - 0.08).abs() < 1e-9);
    assert_eq!(out.timeseries.f64("target_kbps").unwrap().len(), 80);
    // Per bin: the one packet's delays (bin k holds packet k).
    let (owd, queue) = (out.timeseries.f64("owd_ms").unwrap(), out.timeseries.f64("queue_ms").unwrap());
    for k in 0..80 {
        assert!((owd[k] - 30.0).abs() < 1e-9, "bin {k}: owd {}", owd[k]);
        assert!((queue[k] - (k % 7) as f64).abs() < 1e-9, "bin {k}: queue {}", queue[k]);
    }
    let frames = out.frames.get("frame").unwrap();
    assert_eq!(frames.len(), 81);
    let (status, lat) = (out.frames.get("status").unwrap(), out.frames.f64("latency_ms").unwrap());
    let Column::U8(status) = status else { panic!("status is u8") };
    let skipped: Vec<f64> = (0..status.len()).filter(|&i| status[i] == 3).map(|i| lat[i]).collect();
    assert_eq!(skipped.len(), 1);
    assert!((skipped[0] - 80.0).abs() < 1e-6, "{skipped:?}");
}

/// Without capacity truth, everything measured against capacity is unknown
/// (null in `summary.json`), never 0; everything else is as with it.
#[test]
fn without_capacity_truth_what_needs_it_is_unknown() {
    let known = drive(Some(Box::new(DataRate::from_kbps(1000))), true);
    let out = drive(None, true);
    let (l, f) = (&out.summary.link, &out.summary.flows[0]);
    assert!(l.utilization.is_nan() && l.utilization_received.is_nan() && l.capacity_kbps_mean.is_nan());
    assert!(l.utilization_by_kind.values().all(|x| x.is_nan()));
    assert!(f.utilization.is_nan() && f.media_utilization.is_nan());
    let json: serde_json::Value = serde_json::to_value(&out.summary).unwrap();
    assert!(json["link"]["utilization"].is_null() && json["flows"][0]["utilization"].is_null());
    // An empty queue is 0 ms at any rate.
    assert_eq!(l.queue_ms_mean, Some(0.0));
    assert!(out.link.f64("capacity_kbps").unwrap().iter().all(|c| c.is_nan()));
    let k = &known.summary.flows[0];
    assert_eq!((f.frames_displayed, f.packets_sent), (k.frames_displayed, k.packets_sent));
    assert_eq!(
        (f.goodput_kbps, f.owd_ms_mean, f.frame_latency_ms_mean),
        (k.goodput_kbps, k.owd_ms_mean, k.frame_latency_ms_mean)
    );
    assert!((known.summary.link.utilization - 0.08).abs() < 1e-9);
}

/// A driver that cannot see the bottleneck's queue sends no link samples:
/// the link table is empty and the queue fields null; the flows' results
/// do not change.
#[test]
fn link_samples_are_optional() {
    let with = drive(Some(Box::new(DataRate::from_kbps(1000))), true);
    let out = drive(Some(Box::new(DataRate::from_kbps(1000))), false);
    assert_eq!(out.summary.link.queue_ms_mean, None);
    assert_eq!(out.summary.link.queue_ms_max, None);
    assert!(out.link.f64("t_s").map_or(true, |t| t.is_empty()));
    assert_eq!(out.summary.flows, with.summary.flows);
    assert_eq!(out.summary.link.utilization, with.summary.link.utilization);
}
