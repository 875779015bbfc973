//! A real codec in real time: a camera clock that pushes a capture every
//! frame interval, and the flow's encoder (libvpx VP8, OpenH264) on a
//! worker thread of its own, so an encode that takes milliseconds never
//! holds the pacer or the other flows. The sender is fed from outside
//! (`SenderConfig::external_frames`): at each capture it decides whether to
//! encode and at what (`Sender::handle_capture`), the worker encodes, and
//! the finished frame goes back to it (`handle_encoded_frame`) when the
//! loop next turns (woken by a `mio::Waker`).
//!
//! A capture that comes while the encoder still has a frame waiting behind
//! the one it is encoding is not encoded (libwebrtc's VideoStreamEncoder
//! drops frames the same way when its encoder queue falls behind): the
//! sender records it as an encoder drop and the flow's `overruns` count
//! it. Encodes slower than a frame interval are counted as `late`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender as Tx};
use std::sync::Arc;
use std::thread::JoinHandle;

use mio::Waker;
use rtcc_core::encoder::{EncodedFrame, FrameEncoder};
use rtcc_core::resolution::Resolution;
use rtcc_core::sender::{EncodeRequest, Sender};
use rtcc_core::units::{DataRate, Duration, Time};

/// Frames the encoder may hold: one encoding, one waiting.
const DEPTH: usize = 2;

/// Stands in the sender for the encoder on the worker: its kind, and the
/// rate it last reported (for the time series). The sender never asks it
/// to encode (`external_frames`).
struct StandIn {
    kind: String,
    rate: Arc<AtomicU64>,
}

impl FrameEncoder for StandIn {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn encode_frame(&mut self, _: u32, _: Time, _: DataRate, _: Resolution) -> Option<EncodedFrame> {
        None
    }
    fn request_key_frame(&mut self) {}
    fn skip(&mut self, _: Time, _: DataRate) {}
    fn output_rate(&self) -> DataRate {
        DataRate::from_bps(self.rate.load(Ordering::Relaxed))
    }
}

struct Encoded {
    req: EncodeRequest,
    frame: Option<EncodedFrame>,
    took: Duration,
    failure: Option<String>,
}

/// What a live run says about a flow's real encoder.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EncoderInfo {
    pub flow: usize,
    pub codec: String,
    /// Frames encoded (the encoder's own drops included).
    pub encoded: u64,
    /// Captures not encoded because the encoder was behind.
    pub overruns: u64,
    /// Encodes that took longer than a frame interval.
    pub late: u64,
    /// Encode times in ms: median, 99th percentile, maximum.
    pub encode_ms: Option<[f64; 3]>,
}

pub struct Camera {
    next: Time,
    interval: Duration,
    jobs: Option<Tx<EncodeRequest>>,
    done: Receiver<Encoded>,
    in_flight: usize,
    thread: Option<JoinHandle<()>>,
    took_us: Vec<i64>,
    pub info: EncoderInfo,
    pub failure: Option<String>,
}

impl Camera {
    /// Takes `sender`'s encoder to a worker thread (leaving a stand-in) and
    /// starts the clock: the first capture at `start`.
    pub fn start(flow: usize, sender: &mut Sender, start: Time, interval: Duration, waker: Arc<Waker>) -> Camera {
        let rate = Arc::new(AtomicU64::new(0));
        let kind = sender.encoder().kind().to_string();
        let stand_in = Box::new(StandIn { kind: kind.clone(), rate: rate.clone() });
        let encoder = sender.replace_encoder(stand_in);
        let (jobs, rx) = channel::<EncodeRequest>();
        let (tx, done) = channel();
        let thread = std::thread::spawn(move || encode(encoder, rx, tx, waker, rate));
        Camera {
            next: start,
            interval,
            jobs: Some(jobs),
            done,
            in_flight: 0,
            thread: Some(thread),
            took_us: Vec::new(),
            info: EncoderInfo { flow, codec: kind, ..EncoderInfo::default() },
            failure: None,
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.jobs.as_ref().map(|_| self.next)
    }

    /// Every capture due by `now`: to the encoder, or counted as an
    /// overrun.
    pub fn handle_timeout(&mut self, now: Time, sender: &mut Sender) {
        let Some(jobs) = &self.jobs else { return };
        while self.next <= now {
            let capture = self.next;
            self.next += self.interval;
            let Some(req) = sender.handle_capture(now, capture) else { continue };
            if self.in_flight >= DEPTH || jobs.send(req).is_err() {
                self.info.overruns += 1;
                sender.handle_encoded_frame(now, req, None);
                continue;
            }
            self.in_flight += 1;
        }
    }

    /// Every frame the worker finished, to the sender.
    pub fn collect(&mut self, now: Time, sender: &mut Sender) {
        while let Ok(e) = self.done.try_recv() {
            self.in_flight -= 1;
            self.info.encoded += 1;
            self.info.late += u64::from(e.took > self.interval);
            if self.took_us.len() < 1 << 20 {
                self.took_us.push(e.took.as_micros());
            }
            if self.failure.is_none() {
                self.failure = e.failure;
            }
            sender.handle_encoded_frame(now, e.req, e.frame);
        }
    }

    /// Stops the clock and the worker (a frame being encoded is finished
    /// and discarded).
    pub fn finish(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                self.failure.get_or_insert_with(|| "the encoder's thread panicked".into());
            }
        }
        let v = &mut self.took_us;
        v.sort_unstable();
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
        self.info.encode_ms = (!v.is_empty()).then(|| [at(0.5), at(0.99), v[v.len() - 1] as f64 / 1e3]);
    }
}

impl Drop for Camera {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn encode(
    mut encoder: Box<dyn FrameEncoder>,
    jobs: Receiver<EncodeRequest>,
    done: Tx<Encoded>,
    waker: Arc<Waker>,
    rate: Arc<AtomicU64>,
) {
    // Frame ids as the sender numbers them: one per frame the encoder gave.
    let mut id = 0u32;
    let mut failed = false;
    for req in jobs {
        if req.key {
            encoder.request_key_frame();
        }
        let t = std::time::Instant::now();
        let frame = encoder.encode_frame(id, req.capture, req.target, req.resolution);
        let took = Duration::from_micros(t.elapsed().as_micros() as i64);
        id += u32::from(frame.is_some());
        rate.store(encoder.output_rate().bps(), Ordering::Relaxed);
        let failure = match (failed, encoder.failure()) {
            (false, Some(f)) => {
                failed = true;
                Some(f.to_string())
            }
            _ => None,
        };
        if done.send(Encoded { req, frame, took, failure }).is_err() {
            return;
        }
        // The loop may be asleep in epoll: wake it for the frame.
        let _ = waker.wake();
    }
}
