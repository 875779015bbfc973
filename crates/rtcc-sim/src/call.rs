//! A video call as two ends apart: rtcc-core's `Sender` (encoder,
//! packetizer, FEC, pacer, controller) and `Receiver` (assembly, decode
//! order, display, reports), built from a flow of the scenario. Each end
//! tells the recorder its own record of a frame when that record is final;
//! the recorder joins them by frame id.

use rtcc_core::controller::{self, ControllerContext};
use rtcc_core::datagram::{Egress, Ingress, Session};
use rtcc_core::encoder::{Encoder, FrameEncoder};
use rtcc_core::packet::{Packet, PacketKind, NO_FRAME};
use rtcc_core::receiver::Receiver;
use rtcc_core::resolution::Resolution;
use rtcc_core::rng::Rng;
use rtcc_core::sender::{Sender, SenderConfig, SenderTiming};
use rtcc_core::units::Time;
use rtcc_video::real::{ContentSpec, RealEncoder, RealQuality};

use crate::endpoint::{Back, Ends, Envelope, RecvEnd, SendEnd};
use crate::frames::{self, FrameLog};
use crate::recorder::{Event, ReceiverSample, Recorder, SenderSample};
use crate::scenario::{FlowSpec, Scenario, ScenarioError};
use crate::video;

/// Builds a video flow's two ends.
pub struct VideoCall;

/// A video flow's sending end.
pub struct VideoSendEnd {
    flow: u16,
    sender: Sender,
    /// `[wire] datagrams`: each packet as its datagram and back.
    wire: Option<Wire>,
}

/// The datagram path of `[wire] datagrams`: the sending side's encoder, the
/// receiving side's parser, and the first packet either refused.
struct Wire {
    egress: Egress,
    ingress: Ingress,
    error: Option<String>,
}

/// A video flow's receiving end.
pub struct VideoRecvEnd {
    receiver: Receiver,
}

impl VideoCall {
    /// Flow `i` of `scenario`, with its controller context (the run's seed
    /// forked for it) and the run's random stream (a model encoder forks
    /// its own). Returns the call and its frame accounting; saved-video
    /// streams are added to `saved_videos`.
    pub fn build(
        i: usize,
        spec: &FlowSpec,
        scenario: &Scenario,
        ctx: ControllerContext,
        rng: &mut Rng,
        saved_videos: &mut Vec<(std::path::PathBuf, f64)>,
    ) -> Result<(Ends, FrameLog), ScenarioError> {
        let cerr = |e: controller::ConfigError| ScenarioError {
            source_name: scenario.source.clone(),
            field: format!("flow[{i}].controller"),
            reason: e.to_string(),
        };
        let ctrl = controller::create(&spec.controller, &spec.params, &ctx).map_err(cerr)?;
        let estimator = match controller::receiver_of(&spec.controller) {
            Some(make) => Some(make(&spec.params, &ctx).map_err(cerr)?),
            None => None,
        };
        let fps = 1.0 / spec.ctx.frame_interval.as_secs_f64();
        let vfail = |reason: String| ScenarioError {
            source_name: scenario.source.clone(),
            field: format!("flow[{i}].encoder"),
            reason,
        };
        let mut real = None;
        let mut max_resolution = Resolution::R1080;
        let encoder: Box<dyn FrameEncoder> = match &spec.video {
            None => Box::new(Encoder::new(spec.encoder.clone(), spec.ctx.frame_interval, rng.fork(i as u64 + 1))),
            Some(v) => {
                let mut v = v.clone();
                if let (ContentSpec::Generated { motion, photos, .. }, Some(dir)) =
                    (&mut v.content, &scenario.photo_dir)
                {
                    if photos.is_empty() {
                        *photos = video::default_photos(*motion, dir);
                    }
                }
                let field = match &v.content {
                    ContentSpec::Generated { photos, .. } if !photos.is_empty() => "content.photos",
                    ContentSpec::Generated { .. } => "content",
                    _ => "content.file",
                };
                let src = v.content.open(fps).map_err(|reason| ScenarioError {
                    source_name: scenario.source.clone(),
                    field: format!("flow[{i}].{field}"),
                    reason,
                })?;
                // Dumbo's policy cannot send more lines than the source has.
                let h = src.size().1;
                max_resolution =
                    Resolution::ALL.into_iter().rev().find(|r| r.size().1 <= h).unwrap_or(Resolution::R180);
                let enc = RealEncoder::new(&v, fps, spec.sender.start).map_err(vfail)?;
                let mut q = RealQuality::new(&v, fps, spec.sender.start).map_err(vfail)?;
                if let Some(dir) = &scenario.video_dir {
                    let size = q.source_size();
                    let label = format!("{} ({})", spec.controller, v.codec.name());
                    let sink = video::SaveVideo::create(dir, &spec.name, size, fps, &label).map_err(vfail)?;
                    saved_videos.extend(sink.paths().into_iter().map(|p| (p, fps)));
                    q.sink = Some(Box::new(sink));
                }
                real = Some(q);
                Box::new(enc)
            }
        };
        // The timing's draws: a stream of the flow's own seed, so they leave
        // every other draw of the run as it was.
        let timing = SenderTiming { seed: Rng::new(ctx.seed).fork(0x0071_C10C).next_u64(), ..spec.sender.timing };
        // Where the wire's sequence numbers start (RFC 3550 §5.1: random),
        // from another stream of the flow's seed.
        let bases = Rng::new(ctx.seed).fork(0x5E0_BA5E).next_u64();
        let (transport_base, media_base) = (bases as u16, (bases >> 16) as u16);
        let cfg = SenderConfig { max_resolution, timing, transport_base, media_base, ..spec.sender };
        let flow = cfg.flow;
        let rcfg = spec.receiver;
        let receiver = match estimator {
            Some(e) => Receiver::new(rcfg).with_estimator(e),
            None => Receiver::new(rcfg),
        };
        let wire = scenario.datagrams.then(|| {
            let (egress, ingress) = wire_codec(spec, ctx.seed);
            Wire { egress, ingress, error: None }
        });
        let call = Ends {
            send: Box::new(VideoSendEnd { flow, sender: Sender::new(cfg, ctrl, encoder), wire }),
            recv: Box::new(VideoRecvEnd { receiver }),
        };
        let frames =
            FrameLog::new(scenario.record_frames, spec.quality, spec.ctx.frame_interval, real, spec.sender.stop);
        Ok((call, frames))
    }
}

/// A video flow's datagrams: the sending side's encoder and the receiving
/// side's parser, from the flow's spec and its controller seed (the RTX and
/// FEC streams' first numbers come from a stream of that seed of their own).
/// The simulator's `[wire] datagrams` and a runtime on sockets build the
/// same pair.
pub fn wire_codec(spec: &FlowSpec, seed: u64) -> (Egress, Ingress) {
    let session = Session {
        fec_overhead: spec.sender.fec.map_or(rtcc_core::fec::DEFAULT_OVERHEAD, |f| f.overhead),
        ..Session::for_flow(spec.sender.flow)
    };
    let b = Rng::new(seed).fork(0x5E0_BA5F).next_u64();
    (Egress::new(session, b as u16, (b >> 16) as u16), Ingress::new(session))
}

impl VideoSendEnd {
    /// Under `[wire] datagrams`, `packet` as its datagram's bytes read it
    /// back; a packet that reads back otherwise, or has no datagram, fails
    /// the flow.
    fn through_wire(&mut self, packet: Packet) -> Packet {
        let Some(w) = &mut self.wire else { return packet };
        // What the receiving end gets is what the bytes say, and that must
        // be what was sent (a probe reads back as padding).
        let expect = Packet { kind: packet.kind.on_wire(), ..packet.clone() };
        match w.egress.encode(&packet).and_then(|b| w.ingress.decode(&b)) {
            Ok(p) if p == expect => return p,
            Ok(p) => {
                w.error.get_or_insert_with(|| format!("a packet reads back otherwise: {packet:?} as {p:?}"));
            }
            Err(e) => {
                w.error.get_or_insert_with(|| format!("a {} packet has no datagram: {e}", packet.kind.name()));
            }
        }
        packet
    }
}

impl SendEnd for VideoSendEnd {
    fn video_sender(&mut self) -> Option<&mut Sender> {
        Some(&mut self.sender)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.sender.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time) {
        self.sender.handle_timeout(now);
    }
    fn refresh_decision(&mut self, now: Time) {
        self.sender.refresh_decision(now);
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Envelope> {
        // An RTCP sender report, due beside the pacer's packets: no row of
        // the sender's record (`seq` and `frame` none of its packets').
        if let Some(sr) = self.sender.poll_rtcp(now) {
            let packet = self.through_wire(sr);
            return Some(Envelope {
                flow: self.flow,
                seq: u64::MAX,
                frame: NO_FRAME,
                sent: now,
                kind: PacketKind::Feedback,
                packet,
            });
        }
        let packet = self.sender.poll_transmit(now)?;
        let packet = self.through_wire(packet);
        let sent = self.sender.newest_sent();
        let frame = if sent.kind == PacketKind::Fec { NO_FRAME } else { sent.pos.frame };
        Some(Envelope { flow: self.flow, seq: sent.seq, frame, sent: now, kind: sent.kind, packet })
    }

    fn handle_back(&mut self, now: Time, back: &Back) {
        if let Back::Report(r) = back {
            self.sender.handle_report(now, r);
        }
    }
    fn prefetch(&self) {
        self.sender.prefetch();
    }

    /// Captures whose sending is over: skipped, every media packet sent,
    /// the sender stopped, or `frames::SETTLE` after capture (a frame still
    /// queued then is cut off).
    fn record_settled(&mut self, flow: usize, now: Time, at_end: bool, rec: &mut Recorder) {
        let settle = if at_end { rtcc_core::units::Duration::ZERO } else { frames::SETTLE };
        while let Some(s) = self.sender.pop_final_frame(now, settle) {
            rec.record(flow, Event::FrameSent(&s));
        }
    }

    fn record_sample(&self, flow: usize, at: Time, rec: &mut Recorder) {
        let sd = &self.sender;
        let dec = sd.decision();
        let sample = SenderSample {
            target: sd.target_rate(),
            pacing: dec.pacing_rate,
            encoder: sd.encoder().output_rate(),
            resolution_p: sd.resolution().size().1,
            counters: *sd.counters(),
            cwnd: dec.cwnd,
            in_flight: sd.in_flight(),
            pacer_queued: sd.pacer().queued_bytes(),
            controller: sd.controller(),
        };
        rec.record(flow, Event::Sender { at, sample: &sample });
    }

    fn record_end(&self, flow: usize, at: Time, rec: &mut Recorder) {
        rec.record(flow, Event::End { at, counters: self.sender.counters() });
    }

    fn failure(&self) -> Option<String> {
        let wire = self.wire.as_ref().and_then(|w| w.error.clone());
        self.sender.encoder().failure().map(str::to_string).or(wire)
    }
}

impl RecvEnd for VideoRecvEnd {
    fn poll_timeout(&self) -> Option<Time> {
        self.receiver.poll_timeout()
    }
    fn handle_packet(&mut self, now: Time, packet: &Packet) {
        self.receiver.handle_packet(now, packet);
    }
    fn poll_back(&mut self, now: Time) -> Option<Back> {
        self.receiver.poll_report(now).map(Back::Report)
    }
    fn prefetch(&self) {
        self.receiver.prefetch();
    }

    /// Frames whose fate the receiver knows (`frames::received_ready`), with
    /// the next displayed frame's display time for one not displayed.
    fn record_settled(&mut self, flow: usize, now: Time, at_end: bool, rec: &mut Recorder) {
        while let Some((id, r, capture)) = self.receiver.oldest_frame() {
            let next = if r.display.is_none() { self.receiver.next_display_after(id) } else { None };
            if !at_end && !frames::received_ready(r, capture, next, now) {
                break;
            }
            let r = self.receiver.pop_frame();
            rec.record(flow, Event::FrameReceived { frame: id, record: &r, next_display: next, at_end });
        }
    }

    fn record_end(&self, flow: usize, _at: Time, rec: &mut Recorder) {
        let r = &self.receiver;
        let receiver = ReceiverSample {
            freeze: r.freeze(),
            freeze_gap: r.freeze_gap(),
            display_span: r.display_span(),
            repair: r.repair(),
        };
        rec.record(flow, Event::ReceiverEnd(&receiver));
    }
}
