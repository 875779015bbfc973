//! The seam between a TCP sender and its congestion control, shaped like
//! Linux's `struct tcp_congestion_ops`: the sender owns the window
//! (`snd_cwnd`, `snd_ssthresh`, in segments as Linux counts them) and the
//! loss machinery; the congestion control moves the window on ACKs
//! (`cong_avoid`), picks `ssthresh` on a loss (`ssthresh`), and may take
//! the whole window and pacing over (`cong_control`, BBR).

use crate::units::{DataRate, DataSize, Duration, Time};

/// The sender's window, as Linux's `tcp_sock` holds it (segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub ssthresh: u32,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3),
/// in segments, taken from the most recently sent packet this ACK
/// delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Segments delivered over `interval` (`rs.delivered`).
    pub delivered: u64,
    /// max(send elapsed, ACK elapsed); zero when there is no valid sample.
    pub interval: Duration,
    /// The connection's `delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// The connection's `delivered` now (`C.delivered`).
    pub delivered_total: u64,
    /// The sampled packet was sent while the application had nothing to send.
    pub is_app_limited: bool,
}

impl RateSample {
    pub fn is_valid(&self) -> bool {
        self.interval.is_positive()
    }
    /// The sample as a rate of `seg` bytes per segment.
    pub fn rate(&self, seg: DataSize) -> Option<DataRate> {
        self.is_valid()
            .then(|| DataRate::from_size_per(DataSize::from_bytes(seg.bytes() * self.delivered), self.interval))
    }
}

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub now: Time,
    /// Segments newly delivered by this ACK, cumulatively or selectively.
    pub acked: u32,
    /// Segments newly marked lost while processing it.
    pub lost: u32,
    /// Segments in flight (RFC 6675 pipe) before and after it.
    pub prior_in_flight: u32,
    pub in_flight: u32,
    /// This ACK's RTT sample (RFC 7323 timestamp echo), if any.
    pub rtt: Option<Duration>,
    /// Smoothed RTT (RFC 6298) and the lowest RTT seen, once measured.
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub rate: RateSample,
    /// In fast recovery or recovering from an RTO.
    pub in_recovery: bool,
    /// The window limited sending before this ACK (`tcp_is_cwnd_limited`):
    /// Linux grows the window only then.
    pub cwnd_limited: bool,
    /// Wire bytes per full segment, for rates and byte-based models.
    pub segment: DataSize,
}

/// A TCP congestion control.
pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Every ACK that delivers data, outside loss recovery unless
    /// `owns_window` (Linux: `cong_avoid`, or `cong_control` for BBR).
    ///
    /// `TcpSender` calls it, unless `owns_window`, for ACKs that advance
    /// the cumulative ACK outside fast recovery: in the open state and in
    /// the go-back-N after an RTO, where slow start regrows the window
    /// (Linux `tcp_may_raise_cwnd`). With `owns_window` it calls it on
    /// every ACK, in every state.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);
    /// The slow-start threshold on entering loss recovery (Linux: `ssthresh`).
    fn ssthresh(&mut self, w: &Window, now: Time) -> u32;
    /// Recovery ended; the sender has set `cwnd = ssthresh` unless `owns_window`.
    /// Also called when the go-back-N after an RTO completes (Linux
    /// `TCP_CA_Loss` → `TCP_CA_Open`); the window is then left as slow
    /// start grew it.
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {}
    /// A retransmission timeout (RFC 6298 §5.5); the sender has set
    /// `ssthresh` from `ssthresh()` and `cwnd = 1` unless `owns_window`.
    /// (`ssthresh()` is asked on the first RTO of a loss episode from the
    /// open state, also when `owns_window`, as Linux `tcp_enter_loss`.)
    fn on_rto(&mut self, _w: &mut Window, _now: Time) {}
    /// Restart after idle (RFC 5681 §4.1, Linux `tcp_slow_start_after_idle`).
    /// `TcpSender` calls it when it sends again with nothing in flight after
    /// more than an RTO of silence and `slow_start_after_idle` is set;
    /// it has cut the window first unless `owns_window`.
    fn on_idle_restart(&mut self, _w: &mut Window, _now: Time) {}
    /// Sending resumes with nothing in flight (Linux `tcp_event_data_sent`
    /// → `tcp_ca_event(CA_EVENT_TX_START)`), after any idle restart.
    /// `idle` is the time since the last transmission (`now − lsndtime`).
    /// `TcpSender` calls it for any segment sent with an empty pipe once
    /// something was sent before, however short the pause. `app_limited`:
    /// the application, not loss, emptied the pipe (Linux `tp->app_limited`;
    /// after an RTO everything is marked lost and the pipe is empty too).
    fn on_tx_start(&mut self, _w: &mut Window, _now: Time, _idle: Duration, _app_limited: bool) {}
    /// The congestion control sets the window itself on every ACK, also in
    /// recovery (BBR), so the sender applies no PRR and no cwnd reset.
    fn owns_window(&self) -> bool {
        false
    }
    /// Pacing rate in wire bytes; `None` sends as the window allows (Linux
    /// Reno and Cubic without the fq qdisc).
    fn pacing_rate(&self) -> Option<DataRate> {
        None
    }
    /// State columns for the time series (mode, estimates).
    fn state(&self, _put: &mut dyn FnMut(&str, f64)) {}
}
