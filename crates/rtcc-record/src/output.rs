//! What a finished run hands back: `summary.json` (names are an interface:
//! add, never rename) and the packet, frame, time-series and link tables.

use serde::Serialize;

use rtcc_core::packet::PacketKind;
use rtcc_core::units::{Duration, Time};

use crate::frames::{FrameCols, STATUS_SKIPPED};
use crate::metrics::{jain, Column, PacketRec, Series, Table};
use crate::recorder::{FlowRec, LinkRec, Recorder, KIND_NAMES};

/// A link's bytes by kind of traffic as shares of its capacity.
fn by_kind(l: &LinkRec, cap_bytes: f64) -> std::collections::BTreeMap<String, f64> {
    KIND_NAMES.iter().zip(l.by_kind).map(|(k, b)| (k.to_string(), over(b, cap_bytes))).collect()
}

/// `bytes` as a share of a bottleneck's `cap` bytes: 0 with no capacity,
/// NaN (null in `summary.json`) when the capacity is not known.
fn over(bytes: u64, cap: f64) -> f64 {
    if cap > 0.0 {
        bytes as f64 / cap
    } else if cap.is_nan() {
        f64::NAN
    } else {
        0.0
    }
}

/// A flow active for less than this has no rates in the summary (they are
/// null, and `rate_null_reason` says why) and is left out of the Jain index:
/// over less than a second a flow's average is its start-up — TCP's initial
/// window and slow start (RFC 6928, RFC 5681 §3.1), a video controller's
/// first estimate before reports have corrected it — rather than a rate it
/// held, and it would weigh as much as a whole call in the fairness index.
pub const MIN_RATE_WINDOW: Duration = Duration::from_secs(1);

/// `part` of `whole`, or None when `whole` is zero.
fn share(part: Duration, whole: Duration) -> Option<f64> {
    (whole > Duration::ZERO).then(|| part.as_secs_f64() / whole.as_secs_f64())
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    /// "video", "tcp", "web" or "udp".
    pub kind: String,
    /// "forward", or "reverse" for data from the receiving side.
    pub direction: String,
    /// TCP congestion control of a tcp or web flow.
    pub cc: Option<String>,
    pub controller: String,
    pub encoder: String,
    pub start_s: f64,
    /// Its stop, or the run's end if it ran on.
    pub stop_s: f64,
    /// The end of the window received rates are over: `stop_s`, or the
    /// flow's last arrival when packets sent before its stop arrived after
    /// it (never past the run's end), so that what it received fits in the
    /// capacity of the window.
    pub received_until_s: f64,
    /// Why the rate fields are null: the flow was active (`stop_s` −
    /// `start_s`) for less than `MIN_RATE_WINDOW`; null when they are set.
    pub rate_null_reason: Option<String>,
    /// Rates sent: bytes over [`start_s`, `stop_s`), the time the flow
    /// sends; NaN (null in summary.json) when `rate_null_reason` is set,
    /// as every rate and utilisation below.
    pub video_kbps: f64,
    pub padding_kbps: f64,
    pub probe_kbps: f64,
    pub fec_kbps: f64,
    pub rtx_kbps: f64,
    pub audio_kbps: f64,
    /// Rates received, over [`start_s`, `received_until_s`): goodput, and
    /// the bytes its receiver got (media only for `media_utilization`) over
    /// its bottleneck's capacity in that window, so at most 1.
    pub goodput_kbps: f64,
    pub utilization: f64,
    pub media_utilization: f64,
    /// Mean over the time-series bins of received bytes / the bin's
    /// capacity (bins with capacity while the flow runs): utilisation per
    /// sample, as the Dumbo thesis averages it; `utilization` is Σ/Σ.
    pub utilization_mean: Option<f64>,
    /// Delays: mean, 95th and 99th percentile (to the histogram's bin
    /// width, 0.1 ms below 2 s) and maximum (exact for frames, RTT and
    /// FCT; to the bin width for packets).
    pub owd_ms_mean: Option<f64>,
    pub owd_ms_p95: Option<f64>,
    pub owd_ms_p99: Option<f64>,
    pub owd_ms_max: Option<f64>,
    pub queue_delay_ms_mean: Option<f64>,
    pub queue_delay_ms_p95: Option<f64>,
    pub queue_delay_ms_p99: Option<f64>,
    pub queue_delay_ms_max: Option<f64>,
    /// Arrival at the bottleneck to departure (the wait for a delivery
    /// opportunity and the serialisation included), as Mahimahi logs it.
    pub sojourn_ms_mean: Option<f64>,
    pub sojourn_ms_p95: Option<f64>,
    pub sojourn_ms_p99: Option<f64>,
    pub sojourn_ms_max: Option<f64>,
    pub frame_latency_ms_mean: Option<f64>,
    pub frame_latency_ms_p95: Option<f64>,
    pub frame_latency_ms_p99: Option<f64>,
    pub frame_latency_ms_max: Option<f64>,
    pub frame_delay_ms_mean: Option<f64>,
    pub frame_delay_ms_p95: Option<f64>,
    pub frame_delay_ms_p99: Option<f64>,
    pub frame_delay_ms_max: Option<f64>,
    /// Capture → last packet sent, frames that completed: the wait at the
    /// sender (encoder, pacer queue) inside `frame_delay_ms`.
    pub sender_wait_ms_mean: Option<f64>,
    pub sender_wait_ms_p95: Option<f64>,
    /// Complete → shown, displayed frames: the receiver's playout delay.
    pub playout_delay_ms_mean: Option<f64>,
    pub playout_delay_ms_p95: Option<f64>,
    pub playout_delay_ms_p99: Option<f64>,
    pub playout_delay_ms_max: Option<f64>,
    /// The jitter buffer's delay displayed frames were given (WebRTC
    /// timing's current delay: jitter estimate + decode + render); null
    /// with `playout = "immediate"`.
    pub jitter_buffer_ms_mean: Option<f64>,
    pub transport_delay_ms_mean: Option<f64>,
    /// Video only (null for cross traffic).
    pub freeze_ratio: Option<f64>,
    pub freeze_count: u32,
    pub freeze_ratio_webrtc: Option<f64>,
    pub loss_rate: f64,
    pub late_discard_rate: f64,
    pub frames_sent: u64,
    pub frames_skipped: u64,
    pub frames_displayed: u64,
    pub frames_lost: u64,
    pub frames_late: u64,
    pub packets_sent: u64,
    pub packets_dropped: u64,
    pub packets_lost: u64,
    pub target_kbps_mean: Option<f64>,
    pub key_frames: u64,
    pub resolution_switches: u64,
    pub nacks_sent: u64,
    pub plis_sent: u64,
    pub rtx_packets: u64,
    pub fec_packets: u64,
    pub fec_recovered: u64,
    pub fec_recovered_late: u64,
    /// Packets received too late to use (past the flow's `max_delay`, or
    /// behind the decoder) over packets received; with `loss_rate`, what an
    /// RTCP XR sender sees lost or discarded (RFC 3611, RFC 7097).
    pub discard_rate: f64,
    pub fec_unrecoverable: u64,
    /// Media packets a received parity covered but could not rebuild.
    pub fec_unrepaired: u64,
    /// FFRE (FBRA §5): frames a sent parity protected that had a packet
    /// rebuilt from it and completed, over those plus the protected frames
    /// that never completed; null when no protected frame lost a packet.
    pub ffre: Option<f64>,
    pub psnr_db_mean: Option<f64>,
    /// Mean PSNR of the displayed frames one of whose packets was rebuilt
    /// from FEC parity (with a real codec, decoded from the rebuilt bytes);
    /// null when none was.
    pub psnr_db_fec_mean: Option<f64>,
    pub ssim_db_mean: Option<f64>,
    /// Mean SSIM on its own 0–1 scale (of the same frames as `ssim_db_mean`,
    /// averaged before any dB conversion).
    pub ssim_mean: Option<f64>,
    pub psnr_db_displayed: Option<f64>,
    pub ssim_db_displayed: Option<f64>,
    /// As `ssim_db_displayed`, on the 0–1 scale.
    pub ssim_displayed: Option<f64>,
    /// "decoded": PSNR/SSIM measured on decoded pictures (real codecs);
    /// "model": from the rate–quality model.
    pub quality_source: String,
    /// Frames the real encoder's rate control dropped.
    pub encoder_drops: u64,
    /// Real frames their payload format's packetizer refused (sent as sizes
    /// only; the receiver cannot decode them).
    pub packetize_errors: u64,
    /// Real frames whose packets all arrived but whose bytes the receiver
    /// could not put together (never decodable).
    pub frames_unassembled: u64,
    /// Captures dropped because the controller's congestion window was full
    /// (GCC's cwnd_reduce_ratio, as libwebrtc's encoder drops them).
    pub cwnd_drops: u64,
    /// Gaps of at least `rtcc_core::sender::STALL` (1 s) in which the live
    /// call sent no media, retransmission, FEC or audio (a window held by
    /// lost packets; `pacer_keepalive` ends them).
    pub sender_stalls: u64,
    /// Share of the sending time with the send buffer holding more than
    /// 150 ms at the pacing rate, and empty (BurstRTC §II-C overshooting
    /// and undershooting); null for cross traffic.
    pub send_buffer_overshoot: Option<f64>,
    pub send_buffer_undershoot: Option<f64>,
    /// Displayed frames the real decoder rejected (should stay 0).
    pub decode_errors: u64,
    /// Receiver reports sent, and lost on the reverse path (`reverse_loss`)
    /// or dropped at the reverse bottleneck (`reverse_capacity`).
    pub reports_sent: u64,
    pub reports_lost: u64,
    /// Wire rate of those reports (or ACKs), IP/UDP headers included, over
    /// [`start_s`, `received_until_s`): they answer what arrives.
    pub report_kbps: f64,
    /// Everything the flow put on the wire (headers, retransmissions), over
    /// [`start_s`, `stop_s`).
    pub send_kbps: f64,
    /// TCP: segments sent again, retransmission timeouts that fired (RFC
    /// 6298), and RTT samples (RFC 7323 timestamps).
    pub retransmits: u64,
    pub rtos: u64,
    pub rtt_ms_mean: Option<f64>,
    pub rtt_ms_p95: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    pub rtt_ms_max: Option<f64>,
    /// Web-like flows: downloads started and completed, and the
    /// completion time of those completed (request to last byte acked).
    pub objects_started: u64,
    pub objects_completed: u64,
    pub fct_ms_mean: Option<f64>,
    pub fct_ms_p50: Option<f64>,
    pub fct_ms_p95: Option<f64>,
    pub fct_ms_p99: Option<f64>,
    pub fct_ms_max: Option<f64>,
    /// Accuracy of the controller's estimates, over the bins of the flow's
    /// active time; null unless its controller reports the state column
    /// (`capacity_estimate_kbps`, `competition`). Mean |estimate / true
    /// capacity − 1| of its bottleneck over the bins with a capacity, and
    /// the share of those bins within 10 %.
    pub capacity_estimate_error: Option<f64>,
    pub capacity_estimate_within_10: Option<f64>,
    /// Share of bins where `competition` ≥ 0.5 matched the truth: another
    /// flow's data left this flow's bottleneck in the bin.
    pub competition_accuracy: Option<f64>,
    /// This flow's data bytes that left its bottleneck over all flows'
    /// data bytes that left it (what flows send back excluded), over the
    /// whole run; null if no data crossed it.
    pub link_share: Option<f64>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct LinkSummary {
    pub capacity_kbps_mean: f64,
    pub utilization: f64,
    pub delivered_kbps: f64,
    pub queue_ms_mean: Option<f64>,
    pub queue_ms_max: Option<f64>,
    pub drops: u64,
    /// Share of capacity used by each kind of traffic (`video`, `tcp`,
    /// `web`, `udp`, and `feedback`: reports and ACKs sent back).
    pub utilization_by_kind: std::collections::BTreeMap<String, f64>,
    /// Bytes every flow through this bottleneck got at its receiver, over
    /// the capacity of the whole run (Cross eq. 6: Σ sum_length_i / C·T);
    /// unlike `utilization`, what random loss after the queue took is not
    /// counted.
    pub utilization_received: f64,
}

/// The reverse bottleneck (`[link] reverse_capacity`).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ReverseLinkSummary {
    pub capacity_kbps_mean: f64,
    pub utilization: f64,
    pub delivered_kbps: f64,
    pub drops: u64,
    pub utilization_by_kind: std::collections::BTreeMap<String, f64>,
    /// As [`LinkSummary::utilization_received`], for the reverse flows.
    pub utilization_received: f64,
}

/// What the simulator did, in `summary.json`: deterministic per seed, so
/// one scenario and seed give the same summary bytes every run.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SimStats {
    pub events: u64,
}

/// How long the run took on this machine (`timing.json`): kept out of the
/// summary because it differs from run to run.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Timing {
    pub wall_s: f64,
    pub events: u64,
    /// Simulated over wall seconds (0 when no wall time was measured).
    pub speedup: f64,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub flows: Vec<FlowSummary>,
    pub link: LinkSummary,
    /// Null without a reverse bottleneck.
    pub reverse_link: Option<ReverseLinkSummary>,
    /// Jain's index (Σx)²/(n·Σx²) of the flows' `goodput_kbps`, each over
    /// its own active time (start to `received_until_s`), flows active under
    /// `MIN_RATE_WINDOW` left out; 1 with no flow or all at zero. A flow that
    /// ran alone for part of the run is judged on its rate, not on the time it
    /// shared; Python's `Result.jain` / `rtcc fairness` is the other index, over
    /// one window shared by all flows.
    pub jain_goodput_active: f64,
    /// The same value as `jain_goodput_active`, under its first name.
    pub jain_index: f64,
    /// Wall time and speed-up are in [`Output::timing`], not here.
    pub sim: SimStats,
}

/// Everything a finished run returns.
pub struct Output {
    pub summary: Summary,
    pub timing: Timing,
    pub packets: Table,
    pub frames: Table,
    pub timeseries: Table,
    pub link: Table,
}

/// What the driver knows of the run itself.
#[derive(Clone, Debug)]
pub struct RunInfo {
    pub scenario: String,
    pub seed: u64,
    /// Where the run stopped.
    pub end: Time,
    pub wall: std::time::Duration,
    pub events: u64,
}

impl Recorder {
    /// Summary and tables of the run so far (normally called when done).
    pub fn output(&self, run: &RunInfo) -> Output {
        let end = run.end;
        let mut flows = Vec::new();
        let mut frames_t = FrameCols::default();
        for f in &self.flows {
            flows.push(self.flow_summary(f, end));
            f.frames.append_rows(&mut frames_t);
        }
        let ts = series_table(self.flows.iter().map(|f| &f.series));
        let l = &self.link;
        let cap_bytes = l.capacity_bytes(Time::ZERO, end);
        // Bytes received by the flows crossing each bottleneck (eq. 6 of Cross).
        let received = |reverse: bool| -> u64 {
            self.flows
                .iter()
                .filter(|f| (f.reverse && self.reverse.is_some()) == reverse)
                .map(|f| f.stats.total_recv_bytes())
                .sum()
        };
        let secs = (end - Time::ZERO).as_secs_f64().max(1e-9);
        let link = LinkSummary {
            capacity_kbps_mean: cap_bytes * 8.0 / secs / 1e3,
            utilization: over(l.delivered_bytes, cap_bytes),
            delivered_kbps: l.delivered_bytes as f64 * 8.0 / secs / 1e3,
            queue_ms_mean: (l.queue_ms_n > 0).then(|| l.queue_ms_sum / l.queue_ms_n as f64),
            queue_ms_max: l.queue_ms_max,
            drops: l.drops,
            utilization_by_kind: by_kind(l, cap_bytes),
            utilization_received: over(received(false), cap_bytes),
        };
        let reverse_link = self.reverse.as_ref().map(|r| {
            let cap = r.capacity_bytes(Time::ZERO, end);
            ReverseLinkSummary {
                capacity_kbps_mean: cap * 8.0 / secs / 1e3,
                utilization: over(r.delivered_bytes, cap),
                delivered_kbps: r.delivered_bytes as f64 * 8.0 / secs / 1e3,
                drops: r.drops,
                utilization_by_kind: by_kind(r, cap),
                utilization_received: over(received(true), cap),
            }
        });
        // Flows too short to have a rate are left out of the index.
        let goodputs: Vec<f64> =
            flows.iter().filter(|f: &&FlowSummary| f.rate_null_reason.is_none()).map(|f| f.goodput_kbps).collect();
        let wall = run.wall.as_secs_f64();
        let summary = Summary {
            scenario: run.scenario.clone(),
            seed: run.seed,
            duration_s: secs,
            flows,
            jain_goodput_active: jain(&goodputs),
            jain_index: jain(&goodputs),
            link,
            reverse_link,
            sim: SimStats { events: run.events },
        };
        let timing = Timing { wall_s: wall, events: run.events, speedup: if wall > 0.0 { secs / wall } else { 0.0 } };
        let packets = packet_table(self.flows.iter().map(|f| (f.stats.packets_base, f.stats.packets.iter())));
        Output {
            summary,
            timing,
            packets,
            frames: frames_t.finish(),
            timeseries: ts,
            link: link_table(&self.link.series),
        }
    }

    /// Takes the table rows that are final (packets whose fate is known,
    /// settled frames, finished bins) so they can be written while the run
    /// goes on and memory stays flat however long the call; `output` then
    /// holds only the rest. Rows come flow by flow, as in `output`.
    pub fn take_tables(&mut self) -> Tables {
        let mut frames_t = FrameCols::default();
        let mut series = Vec::with_capacity(self.flows.len());
        let mut packets = Vec::with_capacity(self.flows.len());
        for f in &mut self.flows {
            f.frames.take_rows(&mut frames_t);
            series.push(f.series.take());
            let (base, rows) = f.stats.take_settled();
            self.packet_rows -= rows.len();
            packets.push((base, rows));
        }
        Tables {
            packets: packet_table(packets.iter().map(|(base, rows)| (*base, rows.iter()))),
            frames: frames_t.finish(),
            timeseries: series_table(series.iter()),
            link: link_table(&self.link.series.take()),
        }
    }

    /// Table rows kept and not yet taken.
    pub fn pending_rows(&self) -> usize {
        let flows: usize = self.flows.iter().map(|f| f.stats.packets.len() + f.frames.rows_len() + f.series.rows).sum();
        flows + self.link.series.rows
    }

    fn flow_summary(&self, f: &FlowRec, end: Time) -> FlowSummary {
        let start = f.label.start;
        let stop = f.label.stop.unwrap_or(end).min(end);
        let st = &f.stats;
        // Packets sent before the stop may arrive after it: what was received
        // is rated over a window reaching the last arrival.
        let until = st.last_arrival().map_or(stop, |a| a.max(stop)).min(end).max(start);
        let active_span = stop.saturating_since(start);
        let active = active_span.as_secs_f64().max(1e-9);
        let received_span = (until - start).as_secs_f64().max(1e-9);
        let rate_null_reason = (active_span < MIN_RATE_WINDOW).then(|| {
            format!(
                "active {:.6} s, less than the {} s a rate needs (its average would be its start-up)",
                active_span.as_secs_f64(),
                MIN_RATE_WINDOW.as_secs_f64()
            )
        });
        let rated = |x: f64| if rate_null_reason.is_none() { x } else { f64::NAN };
        let c = &f.counters;
        let kbps = |b: u64| rated(b as f64 * 8.0 / active / 1e3);
        let recv_kbps = |b: u64| rated(b as f64 * 8.0 / received_span / 1e3);
        // A reverse flow's share is of the bottleneck it crosses.
        let bottleneck = match (&self.reverse, f.label.direction) {
            (Some(r), "reverse") => r,
            _ => &self.link,
        };
        let cap = bottleneck.capacity_bytes(start, until);
        let acc = &f.accuracy;
        let media_recv = st.media_recv_bytes();
        let video = f.label.kind == "video";
        // Cross traffic has no video sender's counters: its packets are
        // what the recorder saw leave.
        let packets: u64 = if video { c.packets.iter().sum() } else { st.sent() };
        let fl = &f.frames;
        let rx = &f.receiver;
        let fz = rx.freeze;
        // The screen is also frozen before the first frame and after the
        // last one (all of the call if nothing was ever shown).
        let (lead, trail) = match rx.display_span {
            Some((first, last)) => (first.saturating_since(start), stop.saturating_since(last)),
            None => (stop.saturating_since(start), Duration::ZERO),
        };
        let edges = [lead, trail].into_iter().filter(|g| *g > rx.freeze_gap).fold(Duration::ZERO, |a, g| a + g);
        let rp = rx.repair;
        let tr = &f.traffic;
        let sent_bytes = if video { c.bytes.iter().sum::<u64>() } else { tr.sent_bytes };
        FlowSummary {
            name: f.label.name.clone(),
            kind: f.label.kind.to_string(),
            direction: f.label.direction.to_string(),
            cc: f.label.cc.clone(),
            controller: f.label.controller.clone(),
            encoder: f.label.encoder.clone(),
            start_s: start.as_secs_f64(),
            stop_s: stop.as_secs_f64(),
            received_until_s: until.as_secs_f64(),
            video_kbps: kbps(c.bytes[PacketKind::Media as usize]),
            padding_kbps: kbps(c.bytes[PacketKind::Padding as usize] + c.bytes[PacketKind::Probe as usize]),
            probe_kbps: kbps(c.bytes[PacketKind::Probe as usize]),
            fec_kbps: kbps(c.bytes[PacketKind::Fec as usize]),
            rtx_kbps: kbps(c.bytes[PacketKind::Rtx as usize]),
            audio_kbps: kbps(c.bytes[PacketKind::Audio as usize]),
            goodput_kbps: if video { recv_kbps(media_recv) } else { recv_kbps(tr.delivered_bytes) },
            utilization: rated(over(st.total_recv_bytes(), cap)),
            media_utilization: rated(if video { over(media_recv, cap) } else { 0.0 }),
            owd_ms_mean: st.owd().mean_ms(),
            owd_ms_p95: st.owd().quantile_ms(0.95),
            owd_ms_p99: st.owd().quantile_ms(0.99),
            owd_ms_max: st.owd().max_ms(),
            queue_delay_ms_mean: st.queue().mean_ms(),
            queue_delay_ms_p95: st.queue().quantile_ms(0.95),
            queue_delay_ms_p99: st.queue().quantile_ms(0.99),
            queue_delay_ms_max: st.queue().max_ms(),
            sojourn_ms_mean: st.sojourn().mean_ms(),
            sojourn_ms_p95: st.sojourn().quantile_ms(0.95),
            sojourn_ms_p99: st.sojourn().quantile_ms(0.99),
            sojourn_ms_max: st.sojourn().max_ms(),
            frame_latency_ms_mean: fl.latency.mean_ms(),
            frame_latency_ms_p95: fl.latency.quantile_ms(0.95),
            frame_latency_ms_p99: fl.latency.quantile_ms(0.99),
            frame_latency_ms_max: fl.latency.max_ms(),
            frame_delay_ms_mean: fl.delay.mean_ms(),
            frame_delay_ms_p95: fl.delay.quantile_ms(0.95),
            frame_delay_ms_p99: fl.delay.quantile_ms(0.99),
            frame_delay_ms_max: fl.delay.max_ms(),
            sender_wait_ms_mean: fl.sender_wait.mean_ms(),
            sender_wait_ms_p95: fl.sender_wait.quantile_ms(0.95),
            playout_delay_ms_mean: fl.playout.mean_ms(),
            playout_delay_ms_p95: fl.playout.quantile_ms(0.95),
            playout_delay_ms_p99: fl.playout.quantile_ms(0.99),
            playout_delay_ms_max: fl.playout.max_ms(),
            jitter_buffer_ms_mean: fl.jitter_buffer.mean_ms(),
            transport_delay_ms_mean: fl.transport.mean_ms(),
            freeze_ratio: video.then(|| ((fz.total + edges).as_secs_f64() / active).min(1.0)),
            freeze_count: fz.count,
            freeze_ratio_webrtc: video.then(|| (fz.webrtc_total.as_secs_f64() / active).min(1.0)),
            loss_rate: if packets > 0 { (st.dropped + st.lost) as f64 / packets as f64 } else { 0.0 },
            late_discard_rate: if fl.settled() == 0 { 0.0 } else { fl.counts[2] as f64 / fl.settled() as f64 },
            frames_sent: fl.settled(),
            frames_skipped: fl.counts[STATUS_SKIPPED as usize],
            frames_displayed: fl.counts[0],
            frames_lost: fl.counts[1],
            frames_late: fl.counts[2],
            packets_sent: packets,
            packets_dropped: st.dropped,
            packets_lost: st.lost,
            target_kbps_mean: (f.target_n > 0).then(|| f.target_sum / f.target_n as f64),
            utilization_mean: (f.util_n > 0 && rate_null_reason.is_none()).then(|| f.util_sum / f.util_n as f64),
            key_frames: c.key_frames,
            resolution_switches: c.resolution_switches,
            nacks_sent: rp.nacks_sent,
            plis_sent: rp.plis_sent,
            rtx_packets: c.packets[PacketKind::Rtx as usize],
            fec_packets: c.packets[PacketKind::Fec as usize],
            fec_recovered: rp.fec.recovered,
            fec_recovered_late: rp.fec_recovered_late,
            discard_rate: if rp.received == 0 { 0.0 } else { rp.discarded as f64 / rp.received as f64 },
            fec_unrecoverable: rp.fec.unrecoverable,
            fec_unrepaired: rp.fec.unrepaired,
            ffre: {
                let (r, l) = (f.fec_frames_recovered, f.fec_frames_lost);
                (r + l > 0).then(|| r as f64 / (r + l) as f64)
            },
            psnr_db_mean: fl.quality_mean().map(|q| q.0),
            psnr_db_fec_mean: fl.fec_psnr_mean(),
            ssim_db_mean: fl.quality_mean().map(|q| q.1),
            ssim_mean: fl.quality_mean().map(|q| q.2),
            psnr_db_displayed: fl.viewer_mean().map(|q| q.0),
            ssim_db_displayed: fl.viewer_mean().map(|q| q.1),
            ssim_displayed: fl.viewer_mean().map(|q| q.2),
            quality_source: if fl.measured() { "decoded" } else { "model" }.to_string(),
            encoder_drops: c.encoder_drops,
            packetize_errors: c.packetize_errors,
            frames_unassembled: rp.unassembled,
            cwnd_drops: c.cwnd_drops,
            sender_stalls: c.stalls,
            send_buffer_overshoot: share(c.buffer_over, c.buffer_time),
            send_buffer_undershoot: share(c.buffer_empty, c.buffer_time),
            decode_errors: fl.decode_errors(),
            reports_sent: f.reports_sent,
            reports_lost: f.reports_lost,
            report_kbps: recv_kbps(f.report_bytes),
            send_kbps: kbps(sent_bytes),
            retransmits: tr.retransmits,
            rtos: tr.rtos,
            rtt_ms_mean: tr.rtt.mean_ms(),
            rtt_ms_p95: tr.rtt.quantile_ms(0.95),
            rtt_ms_p99: tr.rtt.quantile_ms(0.99),
            rtt_ms_max: tr.rtt.max_ms(),
            objects_started: tr.objects.map_or(0, |o| o.0),
            objects_completed: tr.objects.map_or(0, |o| o.1),
            fct_ms_mean: tr.fct.mean_ms(),
            fct_ms_p50: tr.fct.quantile_ms(0.5),
            fct_ms_p95: tr.fct.quantile_ms(0.95),
            fct_ms_p99: tr.fct.quantile_ms(0.99),
            fct_ms_max: tr.fct.max_ms(),
            capacity_estimate_error: (acc.capacity_n > 0).then(|| acc.capacity_err_sum / acc.capacity_n as f64),
            capacity_estimate_within_10: (acc.capacity_n > 0)
                .then(|| acc.capacity_within as f64 / acc.capacity_n as f64),
            competition_accuracy: (acc.competition_n > 0)
                .then(|| acc.competition_right as f64 / acc.competition_n as f64),
            rate_null_reason,
            link_share: (bottleneck.data_bytes > 0).then(|| f.data_bytes() as f64 / bottleneck.data_bytes as f64),
        }
    }
}

/// The four tables of `Output`, as `Recorder::take_tables` gives them.
pub struct Tables {
    pub packets: Table,
    pub frames: Table,
    pub timeseries: Table,
    pub link: Table,
}

/// The time series: every flow's rows, flow by flow; a column a flow never
/// had is NaN in its rows.
fn series_table<'a>(flows: impl Iterator<Item = &'a Series> + Clone) -> Table {
    let mut names: Vec<&str> = Vec::new();
    for s in flows.clone() {
        for (n, _) in &s.cols {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    let mut t = Table::default();
    for name in names {
        let mut v = Vec::new();
        for s in flows.clone() {
            match s.col(name) {
                Some(c) => v.extend_from_slice(c),
                None => v.extend(std::iter::repeat_n(f64::NAN, s.rows)),
            }
        }
        t.push(name, if name == "flow" { Column::I64(v.iter().map(|x| *x as i64).collect()) } else { Column::F64(v) });
    }
    t
}

fn link_table(series: &Series) -> Table {
    let mut t = Table::default();
    for (n, c) in &series.cols {
        t.push(n, Column::F64(c.clone()));
    }
    t
}

/// The packets table from each flow's (first sequence number, rows).
fn packet_table<'a, R: Iterator<Item = &'a PacketRec>>(flows: impl Iterator<Item = (u64, R)>) -> Table {
    let (mut flow, mut seq, mut kind, mut size, mut frame) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut send, mut arr, mut owd, mut q, mut dropped, mut lost) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (i, (base, rows)) in flows.enumerate() {
        for (s, r) in rows.enumerate() {
            flow.push(i as i64);
            seq.push((base + s as u64) as i64);
            kind.push(r.kind as u8);
            size.push(r.size as i64);
            frame.push(if r.frame == u32::MAX { -1 } else { r.frame as i64 });
            send.push(r.send_us as f64 / 1e6);
            let a = if r.arrival_us >= 0 { r.arrival_us as f64 / 1e6 } else { f64::NAN };
            arr.push(a);
            owd.push(if r.arrival_us >= 0 { (r.arrival_us - r.send_us) as f64 / 1e3 } else { f64::NAN });
            q.push(if r.queue_us >= 0 { r.queue_us as f64 / 1e3 } else { f64::NAN });
            dropped.push(r.dropped as u8);
            lost.push(r.lost as u8);
        }
    }
    let mut t = Table::default();
    t.push("flow", Column::I64(flow));
    t.push("seq", Column::I64(seq));
    t.push("kind", Column::U8(kind));
    t.push("size", Column::I64(size));
    t.push("frame", Column::I64(frame));
    t.push("send_s", Column::F64(send));
    t.push("arrival_s", Column::F64(arr));
    t.push("owd_ms", Column::F64(owd));
    t.push("queue_ms", Column::F64(q));
    t.push("dropped", Column::U8(dropped));
    t.push("lost", Column::U8(lost));
    t
}
