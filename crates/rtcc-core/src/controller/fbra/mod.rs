//! `fbra`: FEC-based rate adaptation (Nagy, Singh, Ott and Eggert, "Congestion
//! Control using FEC for Conversational Multimedia Communication", MMSys
//! 2014; fbra.txt §3–4). Parity FEC is the bandwidth probe: in PROBE the
//! sender adds one XOR parity packet per N media packets at an unchanged
//! media rate; if the next report shows no congestion, UP turns that FEC
//! rate into media rate. The public copies of the paper keep its prose but
//! lose its numbers and pseudo-code bodies, and the authors' draft
//! (draft-singh-rmcat-adaptive-fec-00..03) and IETF 90/91 slides carry
//! almost none; where the prose says nothing else, the values come from a
//! third-party port ([3P]: zxxia/net-rl `fbra.{h,cc}`). Where sources
//! disagree the paper's prose wins. Each constant's source is beside its
//! `Param`, and in this table ("chosen" marks what no source gives; every
//! one is a parameter):
//!
//! | constant | value | source |
//! |---|---|---|
//! | c thresholds' range | [1, 2] | paper §4.1 |
//! | `low_percentile` / `high_percentile` | 40 / 80 | [3P]; §4.1: low one "better than the median", high "at the higher end" |
//! | `history` (rates) | 2 s | paper §4.2 |
//! | `history` (OWD) | 2 s | [3P]; §4.1 gives no length |
//! | `stay` | 1.1 | [3P] |
//! | `probe_down` | 1.6 | [3P] (its comment: 1.4–1.6) |
//! | `up_down` | 1.3 | chosen: §4.3 wants it below PROBE's |
//! | `down_edge` | 2.0 | [3P]; §4.3: the least sensitive |
//! | `probe_fec` | 1.2 | [3P] |
//! | `probe_after` | 2 reports | draft §3.1 |
//! | `probe_share` | 0.9 | chosen: §4.3's share was lost |
//! | `undershoot` | 0.9 × (2G − R) | 2G − R: paper §4.4, IETF 91 slide 11; 0.9: [3P]'s "paper default" (§4.4's factor was lost; the slides have none) |
//! | `deactivation` | 1.05 intervals | [3P]; §4.4: "a bit more than the RTCP interval" |
//! | `bounce` | 0.9 × goodput | [3P]; §4.4's share was lost |
//! | bounce cap | ≤ the rate before the cut | chosen: §4.4 "gradually" |
//! | `early` | 0.5 interval | chosen: §4.3's value was lost |
//! | `timeout` | 5 intervals, rate / 2 | halving: §4.3; 5: chosen |
//! | `fec_min` / `fec_max` | 2 / 14 | 14: paper §5.5; 2: [3P], §4.2 "the lowest possible" |
//! | N from the rate | linear in rate / max(2 s highest, first G) | inputs: §4.2; the map: chosen |
//! | `recent` | newer half of a report | chosen: §4.1 gives no split |
//! | `rate_window` | 500 ms | chosen |
//! | `report_interval` | the flow's | §4.1 gives none (lost) |
//!
//! Per receiver report (fbra.txt §4.1; one per `Feedback`):
//! - the one-way delay of the newest packet received ([3P]), its
//!   history over 2 s from reports without loss or discard only (§4.1), and the low/high watermarks as its 40th/80th percentiles (Fig. 4);
//!   c_lo = OWD/low, c_hi = OWD/high ("correlated OWD", §4.1);
//! - losses and discards (late packets, RFC 7097), "recent" when in the
//!   newer half of the report's packets (§4.1: events early in the interval
//!   are taken as transient; the split is a choice, `recent`);
//! - the sending rate R (media + FEC) by send time over the last
//!   `rate_window`, and goodput G (media the RLE blocks say arrived and were
//!   not discarded, booked at the report's arrival) over the reports of the
//!   last `rate_window`, divided by the span of arrivals they cover; both
//!   from the sender's history (§4.1 fn. 4).
//!
//! It reads only what RTCP RR + XR carry (`needs_arrivals: false`): per
//! sequence received, lost or discarded, and the OWD block's newest value.
//!
//! States (§4.3, Sub-algorithms 1a–1d, with §9.0's prose):
//! - DOWN: a recent loss or discard undershoots again (no deactivation,
//!   §4.4); any loss, discard or c_hi above `down_edge` keeps DOWN (§9.0);
//!   a clean report goes to STAY.
//! - STAY: a recent loss or discard, or c_hi above `stay`, undershoots,
//!   deactivates and goes DOWN; an older loss stays. Otherwise, after
//!   `probe_after` clean reports in a row (draft §3.1), PROBE with FEC on —
//!   unless R is above `probe_share` of the highest rate of the last 2 s,
//!   which waits one more report first (§4.3).
//! - PROBE: recent loss/discard or c_hi > `probe_down` undershoots to DOWN;
//!   an older one, or c_hi > `stay`,
//!   returns to STAY; c_lo > `probe_fec` (1.2) takes one FEC packet away
//!   (N + 1) and stays; else UP.
//! - UP: media rate × (1 + 1/N), the FEC's share (§4.3: "replacing the FEC
//!   rate with additional RTP media rate"); the next report's recent loss or
//!   c_hi > `up_down` (more sensitive than PROBE's, §4.3) undershoots to
//!   DOWN, else STAY.
//! - Undershoot (§4.4): R ← `undershoot` × (2G − R), i.e. R less twice its
//!   excess over the goodput, times a factor (§4.4); then the
//!   controller ignores reports for `deactivation` × the report interval
//!   (§4.4: "a bit more than the RTCP interval"), and bounce-back (§4.4):
//!   undershoot again if the first report after shows loss, else R ← 0.9 ×
//!   the goodput reported meanwhile, but not above the rate the undershoot
//!   cut from (chosen: §4.4 brings the rate back "gradually"); STAY.
//! - A report sooner than `early` × the report interval is an early report:
//!   DOWN at once (§4.3); none for `timeout` halves the rate, DOWN (§4.3,
//!   after the RTP circuit breakers, RFC 8083).
//! - FEC interval N ∈ [`fec_min`, `fec_max`] = [2, 14] (§4.2: max 14), on
//!   entering PROBE from the rate against the highest rate (R, media rate or
//!   G) of the last 2 s and the initial goodput (§4.2: low N when the rate is low against them):
//!   N = round(fec_min + (fec_max − fec_min)·ratio); ±1 steps as above.
//!
//! Frames leave as the packetizer makes them (no pacer in 2014's stacks,
//! as `rrtcc`); FEC parity packets ride with them.

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use super::{
    rate_bounds, ConfigError, Controller, ControllerContext, ControllerInfo, Decision, FecPlan, FrameSchedule, Param,
    Params, MAX_RATE, MIN_RATE, START_RATE,
};
use crate::feedback::Feedback;
use crate::packet::PacketKind;
use crate::units::{DataRate, Duration, Time};

const fn num(name: &'static str, default: f64, min: f64, max: f64, doc: &'static str) -> Param<f64> {
    Param::number(name, default, min, max, doc)
}

// §4.1: every c threshold lies in [1, 2] ("derived empirically"), hence the
// ranges below; the values themselves did not survive in any public copy.
const C_MAX: f64 = 2.0;
const LOW_PCT: Param<f64> = num(
    "low_percentile",
    40.0,
    0.0,
    100.0,
    "low watermark percentile of the OWD history ([3P]; §4.1 says only that it beats the median)",
);
const HIGH_PCT: Param<f64> = num(
    "high_percentile",
    80.0,
    0.0,
    100.0,
    "high watermark percentile of the OWD history ([3P]; §4.1: 'the higher end')",
);
const HISTORY: Param<Duration> = Param::duration(
    "history",
    Duration::from_secs(2),
    Duration::from_millis(1),
    Duration::from_secs(3600),
    "rate history (§4.2: the last two seconds); the OWD history uses it too ([3P] 2 s; §4.1 gives no length)",
);
const DOWN_EDGE: Param<f64> =
    num("down_edge", 2.0, 1.0, C_MAX, "c_hi that keeps DOWN, the least sensitive threshold (§4.3; [3P] 2.0)");
const STAY: Param<f64> = num("stay", 1.1, 1.0, C_MAX, "c_hi that ends STAY and PROBE ([3P] 1.1)");
const PROBE_DOWN: Param<f64> =
    num("probe_down", 1.6, 1.0, C_MAX, "c_hi that turns PROBE into DOWN ([3P] 1.6, its comment: 1.4-1.6)");
const UP_DOWN: Param<f64> =
    num("up_down", 1.3, 1.0, C_MAX, "c_hi that turns UP into DOWN, below probe_down (§4.3; chosen: 1.3, between)");
const PROBE_FEC: Param<f64> = num("probe_fec", 1.2, 1.0, C_MAX, "c_lo that takes FEC away in PROBE ([3P] 1.2)");
const PROBE_AFTER: Param<u16> = Param::integer(
    "probe_after",
    2,
    1,
    100,
    "clean reports in a row before PROBE (draft-singh-rmcat-adaptive-fec-00..03 §3.1: two reporting intervals)",
);
const PROBE_SHARE: Param<f64> = num(
    "probe_share",
    0.9,
    0.0,
    1.0,
    "PROBE waits a report while R is above this share of the 2 s maximum (§4.3's X, lost; chosen: 0.9)",
);
const UNDERSHOOT: Param<f64> =
    num("undershoot", 0.9, 0.01, 1.0, "factor on 2G − R after congestion (§4.4's X, lost; [3P]'s 'paper default' 0.9)");
const BOUNCE: Param<f64> =
    num("bounce", 0.9, 0.01, 1.0, "bounce-back to this share of the goodput while deactivated ([3P] 0.9)");
const DEACTIVATION: Param<f64> =
    num("deactivation", 1.05, 0.0, 100.0, "deactivation, in report intervals (§4.4 'a bit more'; [3P] 1.05)");
const RECENT: Param<f64> = num(
    "recent",
    0.5,
    0.0,
    1.0,
    "a loss or discard is recent in this newest share of a report's packets (§4.1; chosen: 0.5)",
);
const RATE_WINDOW: Param<Duration> = Param::duration(
    "rate_window",
    Duration::from_millis(500),
    Duration::from_millis(1),
    Duration::from_secs(60),
    "window of R and G (chosen: 500 ms, over ten frames at low rates; §4.1 counts G per report)",
);
const REPORT_INTERVAL: Param<Duration> = Param::duration(
    "report_interval",
    ControllerContext::DEFAULT.feedback_interval,
    Duration::from_millis(1),
    Duration::from_secs(60),
    "nominal report interval (default: the flow's feedback_interval, which it must equal: §4.3 counts early \
     reports and timeouts in it)",
);
const EARLY: Param<f64> =
    num("early", 0.5, 0.0, 1.0, "a report sooner than this share of the interval is early: DOWN (§4.3; chosen: 0.5)");
const TIMEOUT: Param<f64> =
    num("timeout", 5.0, 1.0, 1000.0, "no report for this many intervals halves the rate (§4.3; chosen: 5)");
const FEC_MIN: Param<u16> =
    Param::integer("fec_min", 2, 1, 1000, "smallest FEC interval N (§4.2: 'the lowest possible'; [3P] 2)");
const FEC_MAX: Param<u16> = Param::integer("fec_max", 14, 1, 1000, "largest FEC interval N (§4.2, §5.5: 14)");

pub const INFO: ControllerInfo = ControllerInfo {
    name: "fbra",
    summary: "FBRA (MMSys'14): parity FEC as the probe; STAY/PROBE/UP/DOWN on OWD against the 40th/80th \
              percentiles of loss-free reports, undershoot to 2G − R and bounce-back",
    params: &[
        LOW_PCT.info(),
        HIGH_PCT.info(),
        HISTORY.info(),
        DOWN_EDGE.info(),
        STAY.info(),
        PROBE_DOWN.info(),
        UP_DOWN.info(),
        PROBE_FEC.info(),
        PROBE_SHARE.info(),
        PROBE_AFTER.info(),
        UNDERSHOOT.info(),
        BOUNCE.info(),
        DEACTIVATION.info(),
        RECENT.info(),
        RATE_WINDOW.info(),
        REPORT_INTERVAL.info(),
        EARLY.info(),
        TIMEOUT.info(),
        FEC_MIN.info(),
        FEC_MAX.info(),
        START_RATE.info(),
        MIN_RATE.info(),
        MAX_RATE.info(),
    ],
    create,
    receiver: None,
    pushback: crate::controller::Pushback::Off,
    needs_arrivals: false,
    report_format: crate::feedback::ReportFormat::RtcpXr,
};

fn create(p: &Params, ctx: &ControllerContext) -> Result<Box<dyn Controller>, ConfigError> {
    Ok(Box::new(Fbra::new(FbraConfig::from_params(p, ctx)?)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FbraConfig {
    pub low_pct: f64,
    pub high_pct: f64,
    pub history: Duration,
    pub down_edge: f64,
    pub stay: f64,
    pub probe_down: f64,
    pub up_down: f64,
    pub probe_fec: f64,
    pub probe_share: f64,
    pub probe_after: u16,
    pub undershoot: f64,
    pub bounce: f64,
    pub deactivation: f64,
    pub recent: f64,
    pub rate_window: Duration,
    pub report_interval: Duration,
    pub early: f64,
    pub timeout: f64,
    pub fec_min: u16,
    pub fec_max: u16,
    pub start_rate: DataRate,
    pub min_rate: DataRate,
    pub max_rate: DataRate,
}

impl FbraConfig {
    pub fn from_params(p: &Params, ctx: &ControllerContext) -> Result<Self, ConfigError> {
        let (low_pct, high_pct) = (p.get(&LOW_PCT)?, p.get(&HIGH_PCT)?);
        ConfigError::check_order("low_percentile", low_pct, "high_percentile", high_pct)?;
        let (fec_min, fec_max) = (p.get(&FEC_MIN)?, p.get(&FEC_MAX)?);
        ConfigError::check_order("fec_min", fec_min, "fec_max", fec_max)?;
        let (min_rate, max_rate) = rate_bounds(p, ctx)?;
        // §4.3 reads a report sooner than `early` intervals as congestion and
        // none for `timeout` intervals as a stall: an interval other than the
        // flow's makes every report early (or late), and the rate collapses.
        let report_interval = p.get_or(&REPORT_INTERVAL, ctx.feedback_interval)?;
        if report_interval != ctx.feedback_interval {
            return Err(ConfigError::invalid(
                "report_interval",
                format!(
                    "{report_interval} differs from the flow's feedback_interval {}: set them equal (or leave \
                     report_interval out)",
                    ctx.feedback_interval
                ),
            ));
        }
        // §4.3: DOWN's threshold is the least sensitive, PROBE turns to DOWN
        // before UP does, and STAY ends below both.
        let (down_edge, probe_down, up_down, stay) =
            (p.get(&DOWN_EDGE)?, p.get(&PROBE_DOWN)?, p.get(&UP_DOWN)?, p.get(&STAY)?);
        ConfigError::check_order("probe_down", probe_down, "down_edge", down_edge)?;
        ConfigError::check_order("up_down", up_down, "probe_down", probe_down)?;
        ConfigError::check_order("stay", stay, "up_down", up_down)?;
        // Consistency: R and G are read over `rate_window` from the history.
        let (history, rate_window) = (p.get(&HISTORY)?, p.get(&RATE_WINDOW)?);
        ConfigError::check_order("rate_window", rate_window, "history", history)?;
        Ok(FbraConfig {
            low_pct,
            high_pct,
            history,
            down_edge,
            stay,
            probe_down,
            up_down,
            probe_fec: p.get(&PROBE_FEC)?,
            probe_share: p.get(&PROBE_SHARE)?,
            probe_after: p.get(&PROBE_AFTER)?,
            undershoot: p.get(&UNDERSHOOT)?,
            bounce: p.get(&BOUNCE)?,
            deactivation: p.get(&DEACTIVATION)?,
            recent: p.get(&RECENT)?,
            rate_window,
            report_interval,
            early: p.get(&EARLY)?,
            timeout: p.get(&TIMEOUT)?,
            fec_min,
            fec_max,
            start_rate: p.get_or(&START_RATE, ctx.start_rate)?.clamp(min_rate, max_rate),
            min_rate,
            max_rate,
        })
    }
}

/// The four states of §4.3; their numbers are the `fbra_state` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Stay = 0,
    Probe = 1,
    Up = 2,
    Down = 3,
}

/// What one report says, as the state functions read it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    pub loss: bool,
    pub recent_loss: bool,
    pub discard: bool,
    pub recent_discard: bool,
    /// c_lo and c_hi (1.0 before any history).
    pub c_lo: f64,
    pub c_hi: f64,
    /// Sending rate (media + FEC) and goodput, bits per second.
    pub sent: f64,
    pub goodput: f64,
}

impl Report {
    fn congested_now(&self) -> bool {
        self.recent_loss || self.recent_discard
    }
    fn any(&self) -> bool {
        self.loss || self.discard
    }
}

pub struct Fbra {
    cfg: FbraConfig,
    pub state: State,
    /// Media rate, bits per second.
    rate: f64,
    /// FEC interval N, and whether FEC is on.
    fec_interval: u16,
    fec_on: bool,
    owd: VecDeque<(Time, Duration)>,
    /// (time, highest of R, media rate and G) of each report over the
    /// history, for its maximum (§4.2 keeps all three).
    rates: VecDeque<(Time, f64)>,
    /// (send time, bytes) of packets sent; (report arrival, bytes) of media
    /// received in time.
    sent_log: VecDeque<(Time, u64)>,
    good_log: VecDeque<(Time, u64)>,
    /// Arrival of the newest report dropped from `good_log`: where the
    /// arrivals the kept reports cover begin.
    good_from: Option<Time>,
    initial_goodput: Option<f64>,
    /// Deactivated until this time; the goodput reported meanwhile.
    disabled_until: Option<Time>,
    goodput_while_disabled: Option<f64>,
    /// The rate the last deactivating undershoot cut from.
    before_undershoot: f64,
    waited: bool,
    /// Clean reports in a row (no loss, no discard, c_hi within `stay`).
    clean: u16,
    last_report: Option<Time>,
    watermarks: Option<(Duration, Duration)>,
    goodput: f64,
    pub probes: u64,
    pub probes_up: u64,
    pub probes_down: u64,
}

/// The `q`-th percentile (0–100) of `v`, by nearest rank.
fn percentile(v: &mut [Duration], q: f64) -> Duration {
    v.sort_unstable();
    let i = ((q / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[i.min(v.len() - 1)]
}

impl Fbra {
    pub fn new(cfg: FbraConfig) -> Self {
        Fbra {
            cfg,
            state: State::Stay,
            rate: cfg.start_rate.bps() as f64,
            fec_interval: 8.clamp(cfg.fec_min, cfg.fec_max),
            fec_on: false,
            owd: VecDeque::new(),
            rates: VecDeque::new(),
            sent_log: VecDeque::new(),
            good_log: VecDeque::new(),
            good_from: None,
            initial_goodput: None,
            disabled_until: None,
            goodput_while_disabled: None,
            before_undershoot: cfg.start_rate.bps() as f64,
            waited: false,
            clean: 0,
            last_report: None,
            watermarks: None,
            goodput: 0.0,
            probes: 0,
            probes_up: 0,
            probes_down: 0,
        }
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn fec(&self) -> Option<u16> {
        self.fec_on.then_some(self.fec_interval)
    }

    fn clamp(&self, bps: f64) -> f64 {
        bps.clamp(self.cfg.min_rate.bps() as f64, self.cfg.max_rate.bps() as f64)
    }

    /// The report's cues (§4.1) at `now`, from what RTCP RR + XR carry:
    /// per-sequence received, lost or discarded (RFC 3611 Loss RLE, RFC 7097
    /// discard RLE), joined with the sender's own history (send time, size,
    /// kind), and the interval's one-way delay (the OWD block). No arrival
    /// time is read: under TWCC or RFC 8888 the same outcomes drive it.
    pub fn read(&mut self, now: Time, fb: &Feedback) -> Report {
        // §4.1: the RLE blocks tell "when exactly the loss and discard events
        // took place in the reporting interval": in sequence order.
        let mut video: Vec<_> = fb.packets.iter().filter(|p| p.kind != PacketKind::Audio).collect();
        video.sort_by_key(|p| p.seq);
        let split = ((1.0 - self.cfg.recent) * video.len() as f64).floor() as usize;
        let mut r = Report::default();
        let mut good = 0u64;
        for (i, p) in video.iter().enumerate() {
            let recent = i >= split;
            // §9.2 [SPEC]: R and G from the sender's history; keyed by send
            // time, the one time the sender knows of every packet.
            self.sent_log.push_back((p.send_time, p.size.bytes()));
            if !p.received() {
                r.loss = true;
                r.recent_loss |= recent;
            } else if p.late {
                r.discard = true;
                r.recent_discard |= recent;
            } else if p.kind == PacketKind::Media || p.kind == PacketKind::Rtx {
                // §4.1 fn. 4: goodput from "the history of sent, lost and
                // discarded packets in the last reporting interval": media a
                // report says arrived in time arrived in the interval before
                // it, so it is booked at the report's arrival (the sender's
                // clock), not its send time (which gives the sending rate of
                // what got through, above the goodput while a queue builds).
                good += p.size.bytes();
            }
        }
        // One entry per report, a report of losses only included.
        self.good_log.push_back((fb.received_at, good));
        let w = self.cfg.rate_window;
        // The window is (newest - w, newest]: an entry exactly w old is out,
        // or reports booked every w/5 would count six intervals in five.
        // Returns the bits kept and the time of the newest entry dropped.
        let edge = |log: &mut VecDeque<(Time, u64)>, newest: Time| {
            let mut dropped = None;
            while let Some(&(t, _)) = log.front().filter(|&&(t, _)| newest.saturating_since(t) >= w) {
                dropped = Some(t);
                log.pop_front();
            }
            (log.iter().map(|&(_, b)| b * 8).sum::<u64>() as f64, dropped)
        };
        if let Some(last_send) = video.iter().map(|p| p.send_time).max() {
            r.sent = edge(&mut self.sent_log, last_send).0 / w.as_secs_f64();
        }
        // Over the reports heard in the window ending now, divided by the
        // span of arrivals they cover: from the newest report dropped (each
        // report covers what arrived since the one before) to now. A report
        // off the regular schedule (a PLI, NACK or early one) adds its own
        // short interval; over a fixed w it would read 500 + d ms of
        // arrivals as 500. A report of losses only keeps the window's
        // goodput.
        let (bits, dropped) = edge(&mut self.good_log, fb.received_at);
        self.good_from = dropped.or(self.good_from);
        let span = self.good_from.map_or(w, |f| fb.received_at.saturating_since(f)).max(Duration::from_millis(1));
        r.goodput = bits / span.as_secs_f64();
        // §4.1: "the receiving endpoint reports the observed OWD in the
        // reporting interval" (its ref. [37]); the newest packet's, as [3P].
        let newest = fb.stats.owd_newest;
        // The OWD history keeps loss-free reports only (§4.1, §9.6); seeded
        // with the first sample.
        while self.owd.front().is_some_and(|&(t, _)| now.saturating_since(t) > self.cfg.history) {
            self.owd.pop_front();
        }
        if let Some(d) = newest {
            if !r.any() || self.owd.is_empty() {
                self.owd.push_back((now, d));
            }
            let mut v: Vec<Duration> = self.owd.iter().map(|&(_, d)| d).collect();
            let lo = percentile(&mut v, self.cfg.low_pct);
            let hi = percentile(&mut v, self.cfg.high_pct);
            self.watermarks = Some((lo, hi));
            let ratio = |w: Duration| d.as_secs_f64() / w.as_secs_f64().max(1e-6);
            r.c_lo = ratio(lo);
            r.c_hi = ratio(hi);
        } else {
            r.c_lo = 1.0;
            r.c_hi = 1.0;
        }
        r
    }

    fn max_rate_2s(&self) -> f64 {
        self.rates.iter().map(|&(_, r)| r).fold(0.0, f64::max)
    }

    /// §4.2: the FEC interval from the rate against the highest of the last
    /// 2 s and the initial goodput.
    fn choose_fec(&mut self) {
        let reference = self.max_rate_2s().max(self.initial_goodput.unwrap_or(0.0));
        let ratio = if reference > 0.0 { (self.rate / reference).clamp(0.0, 1.0) } else { 0.0 };
        let (lo, hi) = (f64::from(self.cfg.fec_min), f64::from(self.cfg.fec_max));
        self.fec_interval = (lo + (hi - lo) * ratio).round() as u16;
    }

    fn undershoot(&mut self, r: &Report) {
        // §4.4: the new rate below the goodput by twice the overuse.
        let new = self.cfg.undershoot * (2.0 * r.goodput - r.sent);
        self.rate = self.clamp(new.min(self.rate));
    }

    fn disable(&mut self, now: Time) {
        let d = self.cfg.report_interval.mul_f64(self.cfg.deactivation);
        self.disabled_until = Some(now + d);
        self.goodput_while_disabled = None;
    }

    /// One report through the state functions (Sub-algorithms 1a–1d).
    pub fn on_report(&mut self, now: Time, r: &Report) {
        if r.goodput > 0.0 && self.initial_goodput.is_none() {
            self.initial_goodput = Some(r.goodput);
        }
        while self.rates.front().is_some_and(|&(t, _)| now.saturating_since(t) > self.cfg.history) {
            self.rates.pop_front();
        }
        self.rates.push_back((now, r.sent.max(r.goodput).max(self.rate)));
        self.goodput = r.goodput;
        if let Some(until) = self.disabled_until {
            if now < until {
                self.goodput_while_disabled = Some(r.goodput);
                return;
            }
            // Bounce-back (§4.4): the first report after the period.
            self.disabled_until = None;
            self.clean = u16::from(!r.any() && r.c_hi <= self.cfg.stay);
            if r.any() {
                self.undershoot(r);
            } else if let Some(g) = self.goodput_while_disabled {
                // Back towards the goodput, never above the rate that
                // congested the path (a choice: §4.4 bounces "gradually").
                self.rate = self.clamp((self.cfg.bounce * g).min(self.before_undershoot).max(self.rate));
            }
            self.fec_on = false;
            self.state = State::Stay;
            return;
        }
        let cfg = self.cfg;
        self.clean = if !r.any() && r.c_hi <= cfg.stay { self.clean.saturating_add(1) } else { 0 };
        match self.state {
            State::Down => {
                self.fec_on = false;
                if r.congested_now() {
                    // Still congested: undershoot again, without deactivating (§4.4).
                    self.undershoot(r);
                } else if !r.any() && r.c_hi <= cfg.down_edge {
                    self.state = State::Stay;
                }
            }
            State::Stay => {
                self.fec_on = false;
                if r.congested_now() || (!r.loss && r.c_hi > cfg.stay) {
                    self.down(now, r);
                } else if !r.any() && self.clean >= cfg.probe_after {
                    // The draft's two clean intervals (§3.1), then §4.3's
                    // one more report while R is near the 2 s maximum.
                    if !self.waited && r.sent > cfg.probe_share * self.max_rate_2s() {
                        self.waited = true;
                    } else {
                        self.waited = false;
                        self.choose_fec();
                        self.fec_on = true;
                        self.state = State::Probe;
                        self.probes += 1;
                    }
                }
            }
            State::Probe => {
                if r.congested_now() || r.c_hi > cfg.probe_down {
                    self.probes_down += 1;
                    self.down(now, r);
                } else if r.any() || r.c_hi > cfg.stay {
                    self.fec_on = false;
                    self.state = State::Stay;
                } else if r.c_lo > cfg.probe_fec {
                    self.fec_interval = (self.fec_interval + 1).min(cfg.fec_max);
                } else {
                    // §4.3: the FEC's share becomes media: one parity per N media packets.
                    self.rate = self.clamp(self.rate * (1.0 + 1.0 / f64::from(self.fec_interval)));
                    self.fec_on = false;
                    self.state = State::Up;
                    self.probes_up += 1;
                }
            }
            State::Up => {
                self.fec_on = false;
                if r.congested_now() || r.c_hi > cfg.up_down {
                    self.down(now, r);
                } else {
                    self.state = State::Stay;
                }
            }
        }
    }

    fn down(&mut self, now: Time, r: &Report) {
        self.clean = 0;
        self.before_undershoot = self.rate;
        self.undershoot(r);
        self.disable(now);
        self.fec_on = false;
        self.state = State::Down;
    }
}

impl Controller for Fbra {
    fn name(&self) -> &str {
        "fbra"
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        let r = self.read(now, fb);
        let interval = self.cfg.report_interval;
        let early = self.last_report.is_some_and(|t| now.saturating_since(t) < interval.mul_f64(self.cfg.early));
        self.last_report = Some(now);
        if early && self.disabled_until.is_none() && (r.any() || self.state != State::Down) {
            // §4.3: an early report means the receiver saw trouble.
            self.down(now, &r);
            return;
        }
        self.on_report(now, &r);
    }

    fn on_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            // §4.3: no report for too long halves the rate (RFC 8083).
            self.rate = self.clamp(self.rate / 2.0);
            self.fec_on = false;
            self.state = State::Down;
            self.last_report = Some(now);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.last_report? + self.cfg.report_interval.mul_f64(self.cfg.timeout))
    }

    fn decision(&self) -> Decision {
        let target = DataRate::from_bps_f64(self.rate);
        Decision {
            schedule: FrameSchedule::Burst,
            fec: Some(FecPlan { group: self.fec().unwrap_or(0) }),
            ..Decision::rates(target, self.cfg.max_rate)
        }
    }

    fn state(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("fbra_state", self.state as u8 as f64);
        out("rate_kbps", self.rate / 1000.0);
        out("fec_interval", f64::from(self.fec_interval));
        out("fec_on", if self.fec_on { 1.0 } else { 0.0 });
        out("goodput_kbps", self.goodput / 1000.0);
        if let Some((lo, hi)) = self.watermarks {
            out("owd_low_ms", lo.as_millis_f64());
            out("owd_high_ms", hi.as_millis_f64());
        }
        out("probe_episodes", self.probes as f64);
        out("probe_up", self.probes_up as f64);
        out("probe_down", self.probes_down as f64);
    }
}
