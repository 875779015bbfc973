//! Another implementation as a flow's receiving end: a program of its own
//! (GStreamer's RTP stack, `python/rtcc/peers/gst_receiver.py`) that takes
//! the flow's RTP from the emulator and answers with its own RTCP, which
//! crosses the emulator's reverse path back to rtcc's sending end.
//!
//! The program is started before the run's clock starts and speaks a
//! line protocol on its standard streams:
//! - it gets `--rtcp-to HOST:PORT` (the emulator's receiving side, where
//!   its RTCP goes) and `--max-seconds S` (it ends by itself after that);
//! - it prints one JSON line when ready: `{"ready": true, "rtp": ADDR,
//!   "rtcp": ADDR}` (its RTCP leaves from `rtcp`), or `{"error": ...}`;
//! - when its standard input closes it prints one JSON line of what it
//!   counted and exits.
//!
//! [`MediaStats`] is RFC 3550's receive statistics (A.1, A.3, A.8) on what
//! the emulator handed the peer, so the peer's receiver reports can be set
//! beside what rtcc itself saw on the same datagrams ([`PeerInfo::rr`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use rtcc_core::units::Time;
use rtcc_wire::rtcp::{Compound, RtcpPacket};
use rtcc_wire::Wire;

/// How long a peer may take to say it is ready, and to report when asked.
const READY_WAIT: StdDuration = StdDuration::from_secs(20);
const REPORT_WAIT: StdDuration = StdDuration::from_secs(15);
/// Bytes of its standard error kept for an error message.
const STDERR_TAIL: usize = 2048;
/// RR samples kept (one every few seconds in practice).
const MAX_RR_SAMPLES: usize = 10_000;

/// A peer as the live run is asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerSpec {
    /// "gstreamer".
    pub kind: String,
    /// The program and its first arguments; the run adds `--rtcp-to` and
    /// `--max-seconds`.
    pub command: Vec<String>,
}

/// One receiver-report block the peer sent about the media stream, beside
/// rtcc's own statistics of the same stream when the report entered the
/// bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RrSample {
    /// Seconds since the run started.
    pub t_s: f64,
    /// The peer's: fraction lost (of 256), cumulative lost, extended
    /// highest sequence, jitter in ms (its 90 kHz units).
    pub fraction_lost: u8,
    pub cumulative_lost: i32,
    pub extended_highest_seq: u32,
    pub jitter_ms: f64,
    /// rtcc's, from the datagrams it handed the peer: the same fields over
    /// the same stream (fraction since the previous sample).
    pub own_fraction_lost: u8,
    pub own_cumulative_lost: i64,
    pub own_highest_seq: u32,
    pub own_jitter_ms: f64,
}

/// What a peer did in a live run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PeerInfo {
    pub flow: usize,
    pub kind: String,
    /// Where it listened for RTP and RTCP.
    pub rtp: String,
    pub rtcp: String,
    /// Its RTCP datagrams that entered the bottleneck, and those rtcc-wire
    /// could not parse.
    pub rtcp_datagrams: u64,
    pub rtcp_undecodable: u64,
    /// RTCP packets by type, as rtcc-wire parsed them.
    pub receiver_reports: u64,
    pub transport_feedback: u64,
    pub nacks: u64,
    pub nacked_sequences: u64,
    pub plis: u64,
    pub rembs: u64,
    pub other_rtcp: u64,
    /// Media packets handed to it (RTP on the media SSRC), and RTCP from
    /// rtcc's sending end (its sender reports).
    pub media_packets: u64,
    pub sender_reports: u64,
    /// Each receiver-report block on the media stream, with rtcc's view.
    pub rr: Vec<RrSample>,
    /// Its transport-wide feedback against the times rtcc handed it each
    /// packet: packets it reported, reported lost though handed to it, and
    /// (`twcc_handed`: datagrams with a transport-wide sequence rtcc handed
    /// it), the error of its arrival times (µs: each reported time less the
    /// hand-over time, less the least such difference in the run; p50,
    /// p99, max), which is what its own timestamping adds.
    pub twcc_handed: u64,
    pub twcc_reported: u64,
    pub twcc_lost_but_handed: u64,
    pub twcc_arrival_error_us: Option<[i64; 3]>,
    /// What the peer itself counted (its final JSON line), as it gave it.
    pub report: Option<serde_json::Value>,
    /// Why there is no report (it ended early, or gave none in time).
    pub report_error: Option<String>,
}

/// The peer's transport-wide feedback set beside what rtcc handed it.
pub struct TwccCheck {
    /// Hand-over time by transport-wide sequence (16 bits on the wire).
    handed: Vec<Option<Time>>,
    /// Reported arrival less hand-over, µs.
    offsets: Vec<i64>,
}

impl Default for TwccCheck {
    fn default() -> Self {
        TwccCheck { handed: vec![None; 1 << 16], offsets: Vec::new() }
    }
}

/// Offsets kept for the percentiles (about 10 minutes at 2.5 Mbps).
const MAX_OFFSETS: usize = 1 << 20;

impl TwccCheck {
    /// An RTP packet handed to the peer at `at`: its transport-wide
    /// sequence (header extension `ext_id`) is noted.
    /// Returns whether it carried one.
    pub fn on_handed(&mut self, at: Time, rtp: &rtcc_wire::rtp::RtpPacket, ext_id: u8) -> bool {
        let Some(s) = rtp.extension.as_ref().and_then(|e| e.get(ext_id)).filter(|d| d.len() == 2) else {
            return false;
        };
        let seq = u16::from_be_bytes([s[0], s[1]]);
        self.handed[usize::from(seq)] = Some(at);
        // Half the sequence space behind is a past cycle's: forgotten, so a
        // packet dropped in this cycle never finds an old time.
        self.handed[usize::from(seq.wrapping_add(1 << 15))] = None;
        true
    }

    fn on_feedback(&mut self, f: &rtcc_wire::rtcp::TransportFeedback, info: &mut PeerInfo) {
        for (seq, at) in f.arrivals() {
            let Some(handed) = self.handed[usize::from(seq)] else { continue };
            info.twcc_reported += 1;
            match at {
                None => info.twcc_lost_but_handed += 1,
                Some(us) if self.offsets.len() < MAX_OFFSETS => self.offsets.push(us - handed.as_micros()),
                Some(_) => {}
            }
        }
    }

    /// p50, p99 and max of the offsets above their least.
    pub fn error_percentiles(&self) -> Option<[i64; 3]> {
        let min = *self.offsets.iter().min()?;
        let mut e: Vec<i64> = self.offsets.iter().map(|o| o - min).collect();
        e.sort_unstable();
        let at = |q: f64| e[((e.len() - 1) as f64 * q).round() as usize];
        Some([at(0.5), at(0.99), at(1.0)])
    }
}

/// RFC 3550 receive statistics of one RTP stream: A.1's extended sequence
/// (cycles counted at wrap, no probation), A.3's expected and lost, A.8's
/// interarrival jitter in timestamp units.
#[derive(Clone, Copy, Debug, Default)]
pub struct MediaStats {
    base: Option<u64>,
    max: u64,
    received: u64,
    jitter: f64,
    last_transit: Option<u32>,
    prior: (u64, u64),
}

impl MediaStats {
    /// A packet with sequence `seq` and timestamp `ts` (90 kHz) arrived at `at`.
    pub fn on_packet(&mut self, at: Time, seq: u16, ts: u32) {
        let ext = match self.base {
            None => {
                self.base = Some(u64::from(seq) + (1 << 16));
                self.max = u64::from(seq) + (1 << 16);
                self.max
            }
            Some(_) => {
                // The extended sequence nearest the highest so far.
                let cand = (self.max & !0xffff) | u64::from(seq);
                [cand.wrapping_sub(1 << 16), cand, cand + (1 << 16)]
                    .into_iter()
                    .min_by_key(|&c| c.abs_diff(self.max))
                    .unwrap_or(cand)
            }
        };
        self.max = self.max.max(ext);
        self.received += 1;
        // A.8: transit in timestamp units, modulo 2^32 as the timestamp
        // wraps; J += (|D| - J) / 16.
        let arrival = (at.as_micros() * 9 / 100) as u32;
        let transit = arrival.wrapping_sub(ts);
        if let Some(prev) = self.last_transit {
            let d = f64::from((transit.wrapping_sub(prev) as i32).unsigned_abs());
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    fn expected(&self) -> u64 {
        self.base.map_or(0, |b| self.max + 1 - b)
    }

    /// (fraction lost since the previous call, cumulative lost, extended
    /// highest sequence as the wire's 32 bits, jitter in ms).
    pub fn snapshot(&mut self) -> (u8, i64, u32, f64) {
        let expected = self.expected();
        let (pe, pr) = self.prior;
        self.prior = (expected, self.received);
        let ei = expected.saturating_sub(pe) as i64;
        let li = ei - self.received.saturating_sub(pr) as i64;
        let fraction = if ei == 0 || li <= 0 { 0 } else { ((li << 8) / ei).min(255) as u8 };
        let highest = self.max.wrapping_sub(1 << 16) as u32;
        (fraction, expected as i64 - self.received as i64, highest, self.jitter / 90.0)
    }
}

/// A running peer program.
pub struct PeerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The last of what it wrote on its standard error.
    stderr: Arc<Mutex<Vec<u8>>>,
    pub rtp: SocketAddr,
    pub rtcp: SocketAddr,
}

fn addr(v: &serde_json::Value, key: &str) -> Result<SocketAddr, String> {
    let s = v.get(key).and_then(|x| x.as_str()).ok_or_else(|| format!("its ready line has no \"{key}\""))?;
    let a: SocketAddr = s.parse().map_err(|_| format!("its \"{key}\" {s:?} is not an address"))?;
    // IPv4 loopback only: a run sends to nothing else, from IPv4 sockets.
    if !a.ip().is_loopback() || !a.is_ipv4() {
        return Err(format!("its \"{key}\" {a} is not an IPv4 loopback address"));
    }
    if a.port() == 0 {
        return Err(format!("its \"{key}\" {a} has no port"));
    }
    Ok(a)
}

impl PeerProcess {
    /// Starts `spec`'s program, its RTCP going to `rtcp_to`, and waits for
    /// its ready line.
    pub fn start(spec: &PeerSpec, rtcp_to: SocketAddr, max_seconds: f64) -> Result<PeerProcess, String> {
        let (prog, args) = spec.command.split_first().ok_or("no command to start")?;
        let mut child = Command::new(prog)
            .args(args)
            .arg("--rtcp-to")
            .arg(rtcp_to.to_string())
            .arg("--max-seconds")
            .arg(format!("{max_seconds:.0}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own: Ctrl-C at the terminal stops the run,
            // which then asks the peer for its report; and the whole group
            // is killed at the end.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("could not start {prog}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let mut err_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let tail = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                t.extend_from_slice(&buf[..n]);
                let over = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..over);
            }
        });
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut p = PeerProcess { child, stdin, lines, stderr, rtp: rtcc_any(), rtcp: rtcc_any() };
        let line = match p.lines.recv_timeout(READY_WAIT) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!("{prog} was not ready in {READY_WAIT:?}{}", p.said()))
            }
            Err(RecvTimeoutError::Disconnected) => return Err(format!("{prog} ended before it was ready{}", p.said())),
        };
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|_| format!("{prog} said {:?}, not a JSON line", cut(&line)))?;
        if let Some(e) = v.get("error") {
            return Err(format!("{prog}: {}", e.as_str().unwrap_or("an error")));
        }
        p.rtp = addr(&v, "rtp").map_err(|e| format!("{prog}: {e}"))?;
        p.rtcp = addr(&v, "rtcp").map_err(|e| format!("{prog}: {e}"))?;
        Ok(p)
    }

    /// What it last wrote on its standard error, as a suffix for an error.
    fn said(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&t);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!(
                "; it said: {}",
                text.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        }
    }

    /// Kills its whole process group and reaps it.
    fn kill(&mut self) {
        // SAFETY: kill(2) on the group the child leads (`process_group(0)`).
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Asks it to stop and returns what it counted.
    pub fn finish(mut self) -> Result<serde_json::Value, String> {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"stop\n");
        }
        let line = self.lines.recv_timeout(REPORT_WAIT);
        // Its last words, once it has had its chance to say them.
        std::thread::sleep(StdDuration::from_millis(20));
        let said = self.said();
        self.kill();
        let line = match line {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => return Err(format!("it gave no report in {REPORT_WAIT:?}{said}")),
            Err(RecvTimeoutError::Disconnected) => return Err(format!("it ended without a report{said}")),
        };
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|_| format!("its report {:?} is not JSON", cut(&line)))?;
        match v.get("error") {
            Some(e) => Err(e.as_str().unwrap_or("an error").to_string()),
            None => Ok(v),
        }
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

fn rtcc_any() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

impl PeerInfo {
    /// An RTCP datagram from the peer entering the bottleneck at `at`
    /// (`t0`: the run's start); RR blocks on `media_ssrc` are set beside
    /// `own`'s statistics at that moment.
    pub fn on_rtcp(&mut self, at: Time, bytes: &[u8], media_ssrc: u32, own: &mut MediaStats, twcc: &mut TwccCheck) {
        self.rtcp_datagrams += 1;
        let Ok(c) = Compound::decode(bytes) else {
            self.rtcp_undecodable += 1;
            return;
        };
        for p in c.packets {
            match p {
                RtcpPacket::ReceiverReport(rr) => {
                    self.receiver_reports += 1;
                    for b in rr.reports.iter().filter(|b| b.ssrc == media_ssrc) {
                        let (f, lost, highest, jitter) = own.snapshot();
                        if self.rr.len() < MAX_RR_SAMPLES {
                            self.rr.push(RrSample {
                                t_s: at.as_micros() as f64 / 1e6,
                                fraction_lost: b.fraction_lost,
                                cumulative_lost: b.cumulative_lost,
                                extended_highest_seq: b.extended_highest_seq,
                                jitter_ms: f64::from(b.jitter) / 90.0,
                                own_fraction_lost: f,
                                own_cumulative_lost: lost,
                                own_highest_seq: highest,
                                own_jitter_ms: jitter,
                            });
                        }
                    }
                }
                RtcpPacket::TransportFeedback(f) => {
                    self.transport_feedback += 1;
                    twcc.on_feedback(&f, self);
                }
                RtcpPacket::Nack(n) => {
                    self.nacks += 1;
                    self.nacked_sequences += n.pairs.iter().map(|p| p.seqs().count() as u64).sum::<u64>();
                }
                RtcpPacket::Pli(_) => self.plis += 1,
                RtcpPacket::Remb(_) => self.rembs += 1,
                RtcpPacket::Sdes(_) | RtcpPacket::Bye(_) => {}
                _ => self.other_rtcp += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: i64) -> Time {
        Time::from_micros(t * 1000)
    }

    #[test]
    fn media_stats_count_loss_across_a_wrap() {
        let mut s = MediaStats::default();
        // 65530 .. 65535, 0 .. 9 with 65534 and 3 missing.
        let seqs: Vec<u16> = (65530..=65535).chain(0..10).filter(|&q| q != 65534 && q != 3).collect();
        for (i, &q) in seqs.iter().enumerate() {
            s.on_packet(ms(i as i64 * 33), q, (i as u32) * 3000);
        }
        let (fraction, lost, highest, jitter) = s.snapshot();
        assert_eq!(lost, 2);
        assert_eq!(highest, (1 << 16) | 9, "one cycle counted");
        assert_eq!(fraction, (2 * 256 / 16) as u8);
        // Evenly spaced in time and timestamp (3000 / 90 kHz = 33.3 ms
        // against 33 ms): a constant |D| of 30 units, J → 30 from 0.
        assert!(jitter > 0.0 && jitter < 30.0 / 90.0, "{jitter}");
        // Nothing new: no fraction lost in the next interval.
        assert_eq!(s.snapshot().0, 0);
    }

    #[test]
    fn media_stats_jitter_follows_a8() {
        let mut s = MediaStats::default();
        // Transit alternates by 9 units (100 µs): J → 9 as J += (9 - J) / 16.
        let mut j = 0.0;
        for i in 0..200u32 {
            let at = Time::from_micros(i64::from(i) * 10_000 + if i % 2 == 1 { 100 } else { 0 });
            s.on_packet(at, i as u16, i * 900);
            if i > 0 {
                j += (9.0 - j) / 16.0;
            }
        }
        let (_, _, _, jitter) = s.snapshot();
        assert!((jitter - j / 90.0).abs() < 1e-9, "{jitter} against {}", j / 90.0);
    }

    #[test]
    fn media_stats_jitter_crosses_the_timestamp_wrap() {
        let mut s = MediaStats::default();
        // Evenly spaced packets whose timestamps cross 2^32: no jitter.
        let start = u32::MAX - 5 * 900;
        for i in 0..20u32 {
            s.on_packet(Time::from_micros(i64::from(i) * 10_000), i as u16, start.wrapping_add(i * 900));
        }
        let (_, lost, _, jitter) = s.snapshot();
        assert_eq!(lost, 0);
        assert!(jitter < 1e-9, "{jitter}");
    }

    #[test]
    fn peer_rtcp_is_counted_by_type_and_rr_paired() {
        use rtcc_wire::rtcp::{Nack, Pli, ReceiverReport, ReportBlock};
        let mut own = MediaStats::default();
        for i in 0..10u16 {
            if i != 4 {
                own.on_packet(ms(i64::from(i)), i, u32::from(i) * 90);
            }
        }
        let block = ReportBlock {
            ssrc: 7,
            fraction_lost: 25,
            cumulative_lost: 1,
            extended_highest_seq: 9,
            jitter: 90,
            last_sr: 0,
            delay_since_last_sr: 0,
        };
        let c = Compound::new(vec![
            RtcpPacket::ReceiverReport(ReceiverReport { ssrc: 1, reports: vec![block], extension: Vec::new() }),
            RtcpPacket::Nack(Nack::from_seqs(1, 7, [3u16, 5]).unwrap()),
            RtcpPacket::Pli(Pli { sender_ssrc: 1, media_ssrc: 7 }),
        ]);
        let mut info = PeerInfo::default();
        let mut twcc = TwccCheck::default();
        info.on_rtcp(ms(1500), &c.to_bytes(), 7, &mut own, &mut twcc);
        info.on_rtcp(ms(1600), &[0x80, 0xc9, 0, 9], 7, &mut own, &mut twcc);
        assert_eq!((info.rtcp_datagrams, info.rtcp_undecodable), (2, 1));
        assert_eq!((info.receiver_reports, info.nacks, info.nacked_sequences, info.plis), (1, 1, 2, 1));
        let r = info.rr[0];
        assert_eq!((r.cumulative_lost, r.own_cumulative_lost), (1, 1));
        assert_eq!(r.own_fraction_lost, 25, "1 of 10: 25/256");
        assert_eq!(r.own_highest_seq, 9);
        assert!((r.jitter_ms - 1.0).abs() < 1e-9);
        assert!((r.t_s - 1.5).abs() < 1e-9);
    }
}

#[cfg(test)]
mod twcc_tests {
    use super::*;
    use rtcc_wire::rtcp::TransportFeedbackBuilder;
    use rtcc_wire::rtp::{HeaderExtension, RtpPacket};

    #[test]
    fn twcc_arrival_error_is_measured_against_hand_over() {
        let mut check = TwccCheck::default();
        let mut info = PeerInfo::default();
        // Six packets handed 1 ms apart; the peer reports them 40 ms later
        // on its clock, the fourth 2 ms late, the fifth lost, the sixth never handed.
        for i in 0..5u16 {
            let mut r = RtpPacket::new(96, i, 0, 1, vec![0; 10]).unwrap();
            let mut e = HeaderExtension::one_byte();
            e.push(3, (100 + i).to_be_bytes().to_vec()).unwrap();
            r.extension = Some(e);
            check.on_handed(Time::from_micros(i64::from(i) * 1000), &r, 3);
        }
        let arr = |i: i64, late: i64| Some(40_000 + i * 1000 + late);
        let packets = [
            (100u16, arr(0, 0)),
            (101, arr(1, 0)),
            (102, arr(2, 0)),
            (103, arr(3, 2000)),
            (104, None),
            (105, arr(5, 0)),
        ];
        let fb = TransportFeedbackBuilder::new(1, 2, 0).build(100, 0, &packets).remove(0);
        check.on_feedback(&fb, &mut info);
        assert_eq!((info.twcc_reported, info.twcc_lost_but_handed), (5, 1));
        let [p50, _, max] = check.error_percentiles().unwrap();
        assert_eq!(p50, 0);
        assert_eq!(max, 2000, "the late one, to the 250 µs tick");
    }
}
