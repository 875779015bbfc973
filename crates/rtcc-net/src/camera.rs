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
//! sender records it as an encoder drop, in capture order, and the flow's
//! `overruns` count it. Encodes slower than a frame interval are counted
//! as `late`. A skipped capture is passed on to the codec, whose rate
//! decays over it as it does in a simulated run.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender as Tx};
use std::sync::Arc;
use std::thread::JoinHandle;

use mio::Waker;

use crate::clock::Lateness;
use rtcc_core::encoder::{EncodedFrame, FrameEncoder};
use rtcc_core::resolution::Resolution;
use rtcc_core::sender::{EncodeRequest, Sender};
use rtcc_core::units::{DataRate, Duration, Time};

/// Frames the encoder may hold: one encoding, one waiting.
const DEPTH: usize = 2;

/// What the worker is asked.
enum Job {
    Encode(EncodeRequest),
    /// A capture not encoded (the sender skipped it, or it overran): a
    /// real codec's rate decays over it (`FrameEncoder::skip`).
    Skip(Time, DataRate),
    Quit,
}

/// Stands in the sender for the encoder on the worker: its kind, the rate
/// it last reported (for the time series), and skips passed on. The
/// sender never asks it to encode (`external_frames`).
struct StandIn {
    kind: String,
    rate: Arc<AtomicU64>,
    jobs: Tx<Job>,
}

impl FrameEncoder for StandIn {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn encode_frame(&mut self, _: u32, _: Time, _: DataRate, _: Resolution) -> Option<EncodedFrame> {
        None
    }
    fn request_key_frame(&mut self) {}
    fn skip(&mut self, now: Time, target: DataRate) {
        let _ = self.jobs.send(Job::Skip(now, target));
    }
    fn output_rate(&self) -> DataRate {
        DataRate::from_bps(self.rate.load(Ordering::Relaxed))
    }
}

struct Encoded {
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
    running: bool,
    jobs: Tx<Job>,
    done: Receiver<Encoded>,
    /// Every request handed out, in capture order, and whether the worker
    /// has it (false: an overrun): outcomes go back to the sender in this
    /// order.
    asked: VecDeque<(EncodeRequest, bool)>,
    in_flight: usize,
    thread: Option<JoinHandle<()>>,
    took: Lateness,
    pub info: EncoderInfo,
    pub failure: Option<String>,
}

impl Camera {
    /// Takes `sender`'s encoder to a worker thread (leaving a stand-in) and
    /// starts the clock: the first capture at `start`.
    pub fn start(flow: usize, sender: &mut Sender, start: Time, interval: Duration, waker: Arc<Waker>) -> Camera {
        let rate = Arc::new(AtomicU64::new(0));
        let kind = sender.encoder().kind().to_string();
        let (jobs, rx) = channel::<Job>();
        let stand_in = Box::new(StandIn { kind: kind.clone(), rate: rate.clone(), jobs: jobs.clone() });
        let encoder = sender.replace_encoder(stand_in);
        let (tx, done) = channel();
        let thread = std::thread::spawn(move || encode(encoder, rx, tx, waker, rate));
        Camera {
            next: start,
            interval,
            running: true,
            jobs,
            done,
            asked: VecDeque::new(),
            in_flight: 0,
            thread: Some(thread),
            took: Lateness::default(),
            info: EncoderInfo { flow, codec: kind, ..EncoderInfo::default() },
            failure: None,
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.running.then_some(self.next)
    }

    /// Every capture due by `now`: to the encoder, or counted as an
    /// overrun.
    pub fn handle_timeout(&mut self, now: Time, sender: &mut Sender) {
        if !self.running {
            return;
        }
        while self.next <= now {
            let capture = self.next;
            self.next += self.interval;
            let Some(req) = sender.handle_capture(now, capture) else { continue };
            if self.in_flight >= DEPTH || self.jobs.send(Job::Encode(req)).is_err() {
                self.info.overruns += 1;
                let _ = self.jobs.send(Job::Skip(req.capture, req.target));
                self.asked.push_back((req, false));
                continue;
            }
            self.in_flight += 1;
            self.asked.push_back((req, true));
        }
        self.collect(now, sender);
    }

    /// Every outcome due, to the sender in capture order: an overrun as
    /// soon as the captures before it are back, an encode once the worker
    /// finished it.
    pub fn collect(&mut self, now: Time, sender: &mut Sender) {
        while let Some(&(req, given)) = self.asked.front() {
            let frame = match given {
                false => None,
                true => {
                    let Ok(e) = self.done.try_recv() else { return };
                    self.in_flight -= 1;
                    self.info.encoded += 1;
                    self.info.late += u64::from(e.took > self.interval);
                    self.took.add(e.took.as_micros());
                    if self.failure.is_none() {
                        self.failure = e.failure;
                    }
                    e.frame
                }
            };
            self.asked.pop_front();
            sender.handle_encoded_frame(now, req, frame);
        }
    }

    /// Stops the clock and the worker at `now`: the frames it still had
    /// are finished and handed to the sender (after a stop, the sender
    /// records them as not sent), so every capture is accounted for.
    pub fn finish(&mut self, now: Time, sender: &mut Sender) {
        self.running = false;
        let _ = self.jobs.send(Job::Quit);
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                self.failure.get_or_insert_with(|| "the encoder's thread panicked".into());
            }
        }
        self.collect(now, sender);
        // A worker that died left requests unanswered: not encoded.
        for (req, _) in self.asked.drain(..) {
            sender.handle_encoded_frame(now, req, None);
        }
        self.info.encode_ms = self.took.percentiles().map(|p| p.map(|us| us as f64 / 1e3));
    }
}

impl Drop for Camera {
    fn drop(&mut self) {
        let _ = self.jobs.send(Job::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn encode(
    mut encoder: Box<dyn FrameEncoder>,
    jobs: Receiver<Job>,
    done: Tx<Encoded>,
    waker: Arc<Waker>,
    rate: Arc<AtomicU64>,
) {
    // Frame ids as the sender numbers them: one per frame the encoder gave.
    let mut id = 0u32;
    let mut failed = false;
    for job in jobs {
        let req = match job {
            Job::Quit => return,
            Job::Skip(capture, target) => {
                encoder.skip(capture, target);
                rate.store(encoder.output_rate().bps(), Ordering::Relaxed);
                continue;
            }
            Job::Encode(req) => req,
        };
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
        if done.send(Encoded { frame, took, failure }).is_err() {
            return;
        }
        // The loop may be asleep in epoll: wake it for the frame.
        let _ = waker.wake();
    }
}
