//! Per-frame accounting. Each frame, once its fate is settled, is folded
//! into streamed histograms from the sender's and the receiver's records of
//! it, so memory stays flat however long the call; the frame table keeps a
//! row per frame only when asked (`record.frames`).

use rtcc_core::packet::NO_FRAME;
use rtcc_core::quality::{ssim_db, QualityModel};
use rtcc_core::receiver::{FrameStatus, RecvFrame};
use rtcc_core::sender::SentFrame;
use rtcc_core::units::{Duration, Time};
use rtcc_video::real::RealQuality;

use crate::metrics::{Column, Histogram, Table};

/// Frame status codes beyond `FrameStatus` (0 displayed, 1 lost, 2 late).
pub const STATUS_SKIPPED: u8 = 3;
/// Not displayed and no later frame displayed when the run ended.
pub const STATUS_IN_FLIGHT: u8 = 4;

/// How long after capture a frame that is neither displayed nor overtaken by
/// a displayed frame is waited for before it is settled as lost.
pub const SETTLE: Duration = Duration::from_secs(30);
/// How long a frame overtaken by a displayed one may still complete (and
/// count as a late discard rather than lost).
const LATE_WAIT: Duration = Duration::from_secs(10);

/// Quality as a viewer sees it: at every frame instant, the frame on screen
/// against the moving source (DESIGN §4), frozen frames decaying.
#[derive(Default)]
struct ViewAcc {
    psnr_sum: f64,
    ssim_db_sum: f64,
    /// SSIM on its 0–1 scale.
    ssim_sum: f64,
    n: u64,
    /// Last displayed frame: display time, PSNR, SSIM.
    shown: Option<(Time, f64, f64)>,
    /// Next screen sample: a fixed grid of frame instants from the first
    /// display, so bunched displays after a freeze add no samples and the
    /// saved video has one picture per frame instant.
    next: Option<Time>,
}

#[derive(Default)]
pub struct FrameLog {
    /// capture → display (Dumbo §6.1; a frame never shown, a skipped
    /// capture included, gets the next shown frame's display time).
    pub latency: Histogram,
    /// encode done → complete at the receiver (BurstRTC, SQP).
    pub delay: Histogram,
    /// first packet sent → complete (PIBES).
    pub transport: Histogram,
    /// capture → last packet sent: how long the frame waited at the sender
    /// (encoder and pacer queue) before its last packet left; the part of
    /// `delay` the network's one-way delay does not show.
    pub sender_wait: Histogram,
    /// complete → shown, for displayed frames: the receiver's playout delay
    /// (jitter buffer, decode and render).
    pub playout: Histogram,
    /// The jitter buffer's delay each displayed frame was given (WebRTC
    /// timing's current delay).
    pub jitter_buffer: Histogram,
    /// Frames per status code.
    pub counts: [u64; 5],
    /// Sums over displayed frames, each against its own source (as the Dumbo
    /// thesis measures): PSNR dB, SSIM dB and SSIM (0–1).
    pub psnr_sum: f64,
    pub ssim_db_sum: f64,
    pub ssim_sum: f64,
    /// Frames in the sums (displayed, and decoded when real).
    quality_n: u64,
    /// PSNR dB over the displayed frames one of whose packets was rebuilt
    /// from FEC parity, and how many.
    fec_psnr_sum: f64,
    fec_n: u64,
    view: ViewAcc,
    model: QualityModel,
    frame_interval: Duration,
    rows: Option<FrameCols>,
    /// Decoded-picture quality (real codecs) instead of the model.
    real: Option<RealQuality>,
    /// The flow's stop time, if it stops before the run ends.
    stop: Option<Time>,
    /// Skipped captures waiting for the next encoded frame to settle: they
    /// take the display time it or a later frame is shown at.
    pending: Vec<(usize, SentFrame)>,
    /// With `defer`: frames settled but not yet folded (a real codec's
    /// decode and scoring wait for `finish`), and their payload bytes.
    deferred: Option<std::collections::VecDeque<Deferred>>,
    deferred_bytes: u64,
    defer_limit: u64,
}

/// A frame's `settle` arguments, kept until the frames are folded.
type Deferred = (usize, SentFrame, RecvFrame, Option<Time>, bool);

/// Payload bytes deferred frames may hold (a run hours long would
/// otherwise keep every frame it received): past it, each frame that
/// settles folds the oldest ones, so the work per frame stays what it is
/// without deferral.
const DEFER_BYTES: u64 = 256 << 20;

fn payload_bytes(d: &Deferred) -> u64 {
    d.2.payload.as_ref().map_or(0, |p| p.len() as u64)
}

fn ms(a: Option<Time>, b: Option<Time>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => (b - a).as_millis_f64(),
        _ => f64::NAN,
    }
}

impl FrameLog {
    pub fn new(
        keep_rows: bool,
        model: QualityModel,
        frame_interval: Duration,
        real: Option<RealQuality>,
        stop: Option<Time>,
    ) -> Self {
        FrameLog { rows: keep_rows.then(FrameCols::default), model, frame_interval, real, stop, ..Default::default() }
    }

    /// Fold frames when the run ends (or every `DEFER_BYTES` of payload)
    /// instead of as they settle: a real-time driver keeps a real codec's
    /// decoding and scoring (milliseconds a frame) out of its loop. The
    /// results are the same; only when the work is done moves.
    pub fn defer(&mut self) {
        self.defer_up_to(DEFER_BYTES);
    }

    /// `defer`, holding at most `bytes` of payload.
    pub fn defer_up_to(&mut self, bytes: u64) {
        self.deferred = Some(std::collections::VecDeque::new());
        self.defer_limit = bytes;
    }

    /// Whether quality comes from decoded pictures.
    pub fn measured(&self) -> bool {
        self.real.is_some()
    }

    /// Displayed frames the real decoder could not decode.
    pub fn decode_errors(&self) -> u64 {
        self.real.as_ref().map_or(0, RealQuality::decode_errors)
    }

    /// The quality meter's first failure (saving the video), if any.
    pub fn failure(&self) -> Option<&str> {
        self.real.as_ref().and_then(RealQuality::failure)
    }

    /// Mean PSNR dB, SSIM dB and SSIM (0–1) of displayed frames against
    /// their own sources.
    pub fn quality_mean(&self) -> Option<(f64, f64, f64)> {
        let n = self.quality_n as f64;
        (n > 0.0).then(|| (self.psnr_sum / n, self.ssim_db_sum / n, self.ssim_sum / n))
    }

    /// Mean PSNR dB of the displayed frames that had a packet rebuilt from
    /// FEC parity (with a real codec: decoded from the rebuilt bytes).
    pub fn fec_psnr_mean(&self) -> Option<f64> {
        (self.fec_n > 0).then(|| self.fec_psnr_sum / self.fec_n as f64)
    }

    /// Mean PSNR dB, SSIM dB and SSIM (0–1) of what was on screen at each
    /// frame instant.
    pub fn viewer_mean(&self) -> Option<(f64, f64, f64)> {
        let v = &self.view;
        let n = v.n as f64;
        (v.n > 0).then(|| (v.psnr_sum / n, v.ssim_db_sum / n, v.ssim_sum / n))
    }

    /// Sample the screen at every frame instant of the grid before `until`.
    /// A sample `k` whole frame intervals (plus half an interval's grace)
    /// after the shown frame's display counts it `k` intervals stale: the
    /// source has moved on that much (a frozen frame decays in the model;
    /// with real video the picture is scored against the source of then).
    fn view_until(&mut self, until: Time) {
        let Some((shown_at, p, q)) = self.view.shown else { return };
        let fi = self.frame_interval.as_micros().max(1);
        // The grid sits half an interval after the first display, so display
        // jitter under half an interval never shows a frame as stale.
        let mut g = self.view.next.unwrap_or(shown_at + self.frame_interval / 2);
        while g < until {
            // Up to half an interval of lateness is display jitter, not a
            // stale picture (frame sizes vary, so completion times do).
            let late = ((g - shown_at).as_micros() - fi / 2).max(0);
            let stale = Duration::from_micros(late / fi * fi);
            let (p, q) = match &mut self.real {
                Some(real) => real.view(stale).unwrap_or((p, q)),
                None => (self.model.frozen_psnr(p, stale), self.model.frozen_ssim(q, stale)),
            };
            self.view.psnr_sum += p;
            self.view.ssim_db_sum += ssim_db(q);
            self.view.ssim_sum += q;
            self.view.n += 1;
            g += self.frame_interval;
        }
        self.view.next = Some(g);
    }

    /// Fold in one settled frame: the sender's record, the receiver's, and
    /// the next displayed frame's display time. `at_end`: the run ended
    /// before its fate was known.
    ///
    /// A skipped capture (controller skip, cwnd frame drop, encoder drop,
    /// queue-limit pause) is never shown; as Dumbo §6.1 scores a frame not
    /// received, its latency runs to the display of the next frame shown,
    /// so it waits for the next encoded frame's fate.
    pub fn settle(&mut self, flow: usize, s: &SentFrame, r: &RecvFrame, next: Option<Time>, at_end: bool) {
        if let Some(q) = &mut self.deferred {
            let d = (flow, *s, r.clone(), next, at_end);
            self.deferred_bytes += payload_bytes(&d);
            q.push_back(d);
            while self.deferred_bytes > self.defer_limit {
                self.fold_oldest();
            }
            return;
        }
        self.settle_now(flow, s, r, next, at_end);
    }

    /// The oldest deferred frame, folded.
    fn fold_oldest(&mut self) {
        let Some((flow, s, r, next, at_end)) = self.deferred.as_mut().and_then(|q| q.pop_front()) else {
            self.deferred_bytes = 0;
            return;
        };
        self.deferred_bytes -= r.payload.as_ref().map_or(0, |p| p.len() as u64);
        self.settle_now(flow, &s, &r, next, at_end);
    }

    /// Every deferred frame, folded in the order it settled.
    fn fold_deferred(&mut self) {
        while self.deferred.as_ref().is_some_and(|q| !q.is_empty()) {
            self.fold_oldest();
        }
    }

    fn settle_now(&mut self, flow: usize, s: &SentFrame, r: &RecvFrame, next: Option<Time>, at_end: bool) {
        if s.skipped {
            self.pending.push((flow, *s));
            return;
        }
        let shown = r.display.or(next);
        for (f, k) in std::mem::take(&mut self.pending) {
            self.fold(f, &k, &RecvFrame::default(), shown, false);
        }
        self.fold(flow, s, r, next, at_end);
    }

    fn fold(&mut self, flow: usize, s: &SentFrame, r: &RecvFrame, next: Option<Time>, at_end: bool) {
        let status = if s.skipped {
            STATUS_SKIPPED
        } else if r.display.is_none() && next.is_none() {
            if at_end {
                STATUS_IN_FLIGHT
            } else {
                FrameStatus::Lost as u8
            }
        } else {
            r.status as u8
        };
        self.counts[status as usize] += 1;
        let (w, h) = s.resolution.size();
        let displayed = if status == 0 { r.display } else { None };
        if let Some(d) = displayed {
            // The screen up to this frame still shows the previous one.
            self.view_until(d);
        }
        let (psnr, ssim) = if s.skipped {
            (f64::NAN, f64::NAN)
        } else if let Some(real) = &mut self.real {
            real.settle(r.payload.as_ref(), s.capture, s.target, displayed.is_some()).unwrap_or((f64::NAN, f64::NAN))
        } else {
            let fi = self.frame_interval;
            (self.model.frame_psnr(s.size, w, h, s.key, fi), self.model.frame_ssim(s.size, w, h, s.key, fi))
        };
        if let Some(d) = displayed.filter(|_| !psnr.is_nan()) {
            self.psnr_sum += psnr;
            self.ssim_db_sum += ssim_db(ssim);
            self.ssim_sum += ssim;
            self.quality_n += 1;
            if r.fec {
                self.fec_psnr_sum += psnr;
                self.fec_n += 1;
            }
            self.view.shown = Some((d, psnr, ssim));
        }
        let shown = r.display.or(next);
        let latency = ms(Some(s.capture), shown);
        let delay = ms(Some(s.capture), r.complete);
        let transport = ms(s.first_sent, r.complete);
        if status <= STATUS_SKIPPED {
            if let Some(d) = shown {
                self.latency.add(d - s.capture);
            }
        }
        if let (Some(d), Some(c)) = (displayed, r.complete) {
            self.playout.add(d - c);
        }
        if let Some(j) = r.jitter_buffer.filter(|_| displayed.is_some()) {
            self.jitter_buffer.add(j);
        }
        if status < STATUS_SKIPPED {
            if let Some(c) = r.complete {
                self.delay.add(c - s.capture);
                if let Some(f) = s.first_sent {
                    self.transport.add(c - f);
                }
                if let Some(l) = s.last_sent {
                    self.sender_wait.add(l - s.capture);
                }
            }
        }
        if let Some(rows) = &mut self.rows {
            let secs = |t: Option<Time>| t.map_or(f64::NAN, |t| t.as_secs_f64());
            rows.flow.push(flow as i64);
            // -1 for a skipped capture (no frame id), as the packets
            // table's `frame` column: no sentinel u32::MAX in the output.
            rows.frame.push(if s.frame == NO_FRAME { -1 } else { s.frame as i64 });
            rows.capture.push(s.capture.as_secs_f64());
            rows.size.push(s.size.bytes() as i64);
            rows.key.push(s.key as u8);
            rows.packets.push(s.packets as i64);
            rows.target.push(s.target.kbps_f64());
            rows.height.push(s.resolution.size().1 as i64);
            rows.first_sent.push(secs(s.first_sent));
            rows.last_sent.push(secs(s.last_sent));
            rows.complete.push(secs(r.complete));
            rows.display.push(secs(r.display));
            rows.status.push(status);
            let keep = status < STATUS_SKIPPED;
            rows.latency.push(if status <= STATUS_SKIPPED { latency } else { f64::NAN });
            rows.delay.push(if keep { delay } else { f64::NAN });
            rows.transport.push(if keep { transport } else { f64::NAN });
            let jb = r.jitter_buffer.filter(|_| displayed.is_some());
            rows.jitter_buffer.push(jb.map_or(f64::NAN, |j| j.as_millis_f64()));
            rows.fec.push(r.fec as u8);
            rows.psnr.push(psnr);
            rows.ssim_db.push(if ssim.is_nan() { f64::NAN } else { ssim_db(ssim) });
            rows.ssim.push(ssim);
        }
    }

    /// The call ended at `now`: the screen of a flow that stopped early is
    /// not watched after its stop.
    pub fn finish(&mut self, now: Time) {
        self.fold_deferred();
        self.deferred = None;
        // Skipped at the end with nothing shown after them: no latency.
        for (f, k) in std::mem::take(&mut self.pending) {
            self.fold(f, &k, &RecvFrame::default(), None, true);
        }
        self.view_until(self.stop.map_or(now, |s| s.min(now)));
        if let Some(real) = &mut self.real {
            real.finish();
        }
    }

    /// Frames that count in frame metrics: encoded and settled.
    pub fn settled(&self) -> u64 {
        self.counts[0] + self.counts[1] + self.counts[2]
    }

    pub fn append_rows(&self, out: &mut FrameCols) {
        if let Some(r) = &self.rows {
            out.extend(r);
        }
    }

    /// Moves the rows so far into `out`, to write them while the run goes on.
    pub fn take_rows(&mut self, out: &mut FrameCols) {
        if let Some(r) = &mut self.rows {
            out.extend(r);
            *r = FrameCols::default();
        }
    }

    /// Rows kept and not yet taken.
    pub fn rows_len(&self) -> usize {
        self.rows.as_ref().map_or(0, |r| r.flow.len())
    }
}

/// The frames table: one row per capture. `frame` is the encoded frame id,
/// -1 for a skipped capture (as the packets table's `frame`).
#[derive(Default, Clone)]
pub struct FrameCols {
    flow: Vec<i64>,
    frame: Vec<i64>,
    capture: Vec<f64>,
    size: Vec<i64>,
    key: Vec<u8>,
    packets: Vec<i64>,
    target: Vec<f64>,
    height: Vec<i64>,
    first_sent: Vec<f64>,
    last_sent: Vec<f64>,
    complete: Vec<f64>,
    display: Vec<f64>,
    status: Vec<u8>,
    latency: Vec<f64>,
    delay: Vec<f64>,
    transport: Vec<f64>,
    jitter_buffer: Vec<f64>,
    fec: Vec<u8>,
    psnr: Vec<f64>,
    ssim_db: Vec<f64>,
    ssim: Vec<f64>,
}

impl FrameCols {
    fn extend(&mut self, o: &FrameCols) {
        self.flow.extend_from_slice(&o.flow);
        self.frame.extend_from_slice(&o.frame);
        self.capture.extend_from_slice(&o.capture);
        self.size.extend_from_slice(&o.size);
        self.key.extend_from_slice(&o.key);
        self.packets.extend_from_slice(&o.packets);
        self.target.extend_from_slice(&o.target);
        self.height.extend_from_slice(&o.height);
        self.first_sent.extend_from_slice(&o.first_sent);
        self.last_sent.extend_from_slice(&o.last_sent);
        self.complete.extend_from_slice(&o.complete);
        self.display.extend_from_slice(&o.display);
        self.status.extend_from_slice(&o.status);
        self.latency.extend_from_slice(&o.latency);
        self.delay.extend_from_slice(&o.delay);
        self.transport.extend_from_slice(&o.transport);
        self.jitter_buffer.extend_from_slice(&o.jitter_buffer);
        self.fec.extend_from_slice(&o.fec);
        self.psnr.extend_from_slice(&o.psnr);
        self.ssim_db.extend_from_slice(&o.ssim_db);
        self.ssim.extend_from_slice(&o.ssim);
    }

    pub fn finish(self) -> Table {
        let mut t = Table::default();
        t.push("flow", Column::I64(self.flow));
        t.push("frame", Column::I64(self.frame));
        t.push("capture_s", Column::F64(self.capture));
        t.push("size", Column::I64(self.size));
        t.push("key", Column::U8(self.key));
        t.push("packets", Column::I64(self.packets));
        t.push("target_kbps", Column::F64(self.target));
        t.push("height", Column::I64(self.height));
        t.push("first_sent_s", Column::F64(self.first_sent));
        t.push("last_sent_s", Column::F64(self.last_sent));
        t.push("complete_s", Column::F64(self.complete));
        t.push("display_s", Column::F64(self.display));
        t.push("status", Column::U8(self.status));
        t.push("latency_ms", Column::F64(self.latency));
        t.push("delay_ms", Column::F64(self.delay));
        t.push("transport_ms", Column::F64(self.transport));
        t.push("jitter_buffer_ms", Column::F64(self.jitter_buffer));
        t.push("fec", Column::U8(self.fec));
        t.push("psnr_db", Column::F64(self.psnr));
        t.push("ssim_db", Column::F64(self.ssim_db));
        t.push("ssim", Column::F64(self.ssim));
        t
    }
}

/// Whether the receiving end knows a frame's fate at `now`, by its own
/// record only: a displayed frame is final; one overtaken by a displayed
/// frame may still complete late, so it waits `LATE_WAIT` after its
/// capture (`capture`, as the receiver knows it); any other waits `SETTLE`.
pub fn received_ready(received: &RecvFrame, capture: Option<Time>, next_display: Option<Time>, now: Time) -> bool {
    received.display.is_some()
        || capture.is_some_and(|c| (next_display.is_some() && now >= c + LATE_WAIT) || now >= c + SETTLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receiving_end_settles_a_frame_by_its_own_record() {
        let t = Time::from_secs_f64;
        let shown = RecvFrame { display: Some(t(1.0)), ..RecvFrame::default() };
        let waiting = RecvFrame { capture: Some(t(1.0)), ..RecvFrame::default() };
        // Displayed: final at once, whatever its capture is known as.
        assert!(received_ready(&shown, None, None, t(1.0)));
        // Overtaken by a displayed frame: 10 s after its capture.
        assert!(!received_ready(&waiting, Some(t(1.0)), Some(t(1.2)), t(10.9)));
        assert!(received_ready(&waiting, Some(t(1.0)), Some(t(1.2)), t(11.0)));
        // Not overtaken: 30 s.
        assert!(!received_ready(&waiting, Some(t(1.0)), None, t(30.9)));
        assert!(received_ready(&waiting, Some(t(1.0)), None, t(31.0)));
        // No capture known (nothing of it came, nothing after it): it waits.
        assert!(!received_ready(&RecvFrame::default(), None, Some(t(1.2)), t(1e6)));
    }

    /// Folding deferred to `finish` gives what folding as frames settle
    /// gives: the same rows, sums and histograms.
    #[test]
    fn deferred_folding_is_the_same_folding() {
        let t = Time::from_millis;
        let fi = Duration::from_millis(33);
        // Not deferred; deferred whole; deferred up to 250 B of payload
        // (100 B a frame), so older frames fold as newer ones settle.
        let run = |defer: Option<u64>| {
            let mut log = FrameLog::new(true, QualityModel::default(), fi, None, None);
            if let Some(bytes) = defer {
                log.defer_up_to(bytes);
            }
            for k in 0..30i64 {
                let capture = t(33 * k);
                let skipped = k % 7 == 3;
                let s = SentFrame {
                    frame: if skipped { NO_FRAME } else { k as u32 },
                    capture,
                    size: rtcc_core::units::DataSize::from_bytes(3_000 + 100 * k as u64),
                    key: k == 0,
                    packets: 3,
                    target: rtcc_core::units::DataRate::from_kbps(800),
                    resolution: rtcc_core::resolution::Resolution::R360,
                    first_sent: Some(capture + Duration::from_millis(2)),
                    last_sent: Some(capture + Duration::from_millis(9)),
                    skipped,
                    media_sent: 3,
                };
                // Every fifth frame lost; the others shown 60 ms on.
                let r = match k % 5 == 4 {
                    true => RecvFrame::default(),
                    false => RecvFrame {
                        payload: Some(rtcc_core::packet::Payload::new(vec![0; 100])),
                        complete: Some(capture + Duration::from_millis(50)),
                        display: Some(capture + Duration::from_millis(60)),
                        jitter_buffer: Some(Duration::from_millis(10)),
                        ..RecvFrame::default()
                    },
                };
                let next = Some(capture + Duration::from_millis(93));
                log.settle(0, &s, &r, next, false);
            }
            log.finish(t(1_100));
            let mut rows = FrameCols::default();
            log.take_rows(&mut rows);
            (
                format!("{:?}", (log.counts, log.quality_mean(), log.viewer_mean(), log.settled())),
                rows.psnr,
                rows.latency,
            )
        };
        let a = run(None);
        assert_eq!(a.1.len(), 30);
        // Bit for bit (NaN where a frame has none).
        let bits = |v: &Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for b in [run(Some(u64::MAX)), run(Some(250))] {
            assert_eq!(a.0, b.0);
            assert_eq!((bits(&a.1), bits(&a.2)), (bits(&b.1), bits(&b.2)));
        }
    }
}
