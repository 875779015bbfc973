//! BBR v1's constants, each a field with Linux's value as the default.
//! Some fields exist for the video controllers (`controller::bbr`, QUIC BBR
//! as WebRTC ran it; `controller::rbbr`, cross.txt §IV); their defaults are
//! Linux's, so TCP BBR is unchanged by them.

use crate::units::{DataSize, Duration};

/// What PROBE_RTT does to drain the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProbeRttStyle {
    /// The window falls to `min_cwnd_packets`; the 200 ms start once
    /// in-flight is down to it (`bbr_update_min_rtt`; draft §4.3.5).
    MinWindow,
    /// Pace at this gain × bw; the window follows ProbeRTT's cwnd gain of 1
    /// (one BDP, not the 4-packet floor); the 200 ms start at once,
    /// since without a window in-flight need not fall to a few packets
    /// (RBBR "cuts the rate by half in the ProbeRTT state", cross.txt §IV).
    ScaleRate(f64),
}

/// Every BBR v1 constant (Linux `net/ipv4/tcp_bbr.c`, 4.9–5.x, and
/// draft-cardwell-iccrg-bbr-congestion-control-00 "the draft").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    /// STARTUP pacing and cwnd gain, 2/ln 2 ≈ 2.885: the smallest gain that
    /// doubles the delivery rate each round (`bbr_high_gain`; draft §4.3.2.1
    /// BBRHighGain).
    pub high_gain: f64,
    /// DRAIN pacing gain, the inverse of `high_gain`, draining in one round
    /// the queue STARTUP built (`bbr_drain_gain`; draft §4.3.3).
    pub drain_gain: f64,
    /// PROBE_BW pacing gains, one phase per min_rtt: probe, drain, six
    /// cruising phases (`bbr_pacing_gain[]`; draft §4.3.4.3).
    pub cycle: [f64; 8],
    /// PROBE_BW phases in use: the first `cycle_len` of `cycle`
    /// (`CYCLE_LEN` = 8; RBBR uses 4, cross.txt §IV). 1 to 8.
    pub cycle_len: usize,
    /// The initial phase is drawn from the first `cycle_rand` phases counted
    /// back from the last, so never the 0.75 phase (`bbr_cycle_rand` = 7,
    /// `bbr_reset_probe_bw_mode`; draft §4.3.4.4).
    pub cycle_rand: u32,
    /// PROBE_BW cwnd gain (`bbr_cwnd_gain`; draft §4.2.3.2).
    pub cwnd_gain: f64,
    /// btl_bw is the max over this many rounds, the gain cycle plus two
    /// (`bbr_bw_rtts` = CYCLE_LEN + 2; draft §4.1.1.5 BtlBwFilterLen).
    pub bw_rounds: u64,
    /// min_rtt window; its expiry starts PROBE_RTT (`bbr_min_rtt_win_sec`;
    /// draft §4.1.2.3 RTpropFilterLen).
    pub min_rtt_window: Duration,
    /// How PROBE_RTT drains (Linux: the 4-packet window).
    pub probe_rtt: ProbeRttStyle,
    /// Least time at the PROBE_RTT window (`bbr_probe_rtt_mode_ms`; draft
    /// §4.3.5 ProbeRTTDuration).
    pub probe_rtt_duration: Duration,
    /// Least cwnd and the PROBE_RTT window, in packets
    /// (`bbr_cwnd_min_target`; draft §4.3.5 BBRMinPipeCwnd).
    pub min_cwnd_packets: u32,
    /// Window before the first RTT sample (`TCP_INIT_CWND`, RFC 6928).
    pub initial_cwnd_packets: u32,
    /// btl_bw must grow by this factor per round… (`bbr_full_bw_thresh`;
    /// draft §4.3.2.2)
    pub full_bw_growth: f64,
    /// …or STARTUP ends after this many rounds (`bbr_full_bw_cnt`).
    pub full_bw_rounds: u32,
    /// STARTUP also ends at a round without growth while in loss recovery
    /// (QUIC BBR `exit_startup_on_loss`, WebRTC's default; Linux v1 has no
    /// such exit).
    pub full_bw_on_loss: bool,
    /// Bytes per packet, for the packet-quantised parts (BDP rounded up to
    /// packets, the minimum and initial windows); Linux's `mss_cache`, here
    /// in wire bytes (1448-byte MSS + 52-byte header).
    pub packet: DataSize,
    /// Segments per TSO burst in the quantisation budget `3 × goal`
    /// (`bbr_tso_segs_goal`, at least `bbr_min_tso_segs` = 1 below
    /// 1.2 Mbit/s). A packet simulator sends no TSO bursts; 1 keeps Linux's
    /// low-rate floor and room for a delayed ACK (ALGORITHMS.md §3.4).
    pub tso_segs_goal: u32,
    /// Round the BDP up to whole packets and add the quantisation budget
    /// (`bbr_bdp`, `bbr_quantization_budget`). QUIC BBR's target window is
    /// gain × BDP in bytes (`GetTargetCongestionWindow`).
    pub quantize: bool,
    /// Pacing runs this fraction below btl_bw × gain
    /// (`bbr_pacing_margin_percent` = 1, `bbr_rate_bytes_per_sec`, 4.20+).
    pub pacing_margin: f64,
    /// Long-term ("policer") bandwidth sampling (`bbr_lt_bw_sampling`,
    /// Linux v1 only; not in the draft).
    pub lt_sampling: bool,
    /// A long-term interval spans at least this many rounds, at most four
    /// times it (`bbr_lt_intvl_min_rtts`).
    pub lt_min_rounds: u32,
    /// A long-term interval is lossy at `lost/delivered ≥` this
    /// (`bbr_lt_loss_thresh` = 50/256).
    pub lt_loss_thresh: f64,
    /// Two intervals agree within this fraction… (`bbr_lt_bw_ratio` = 1/8)
    pub lt_bw_ratio: f64,
    /// …or within this many bit/s (`bbr_lt_bw_diff` = 4000/8 bytes/s).
    pub lt_bw_diff_bps: u64,
    /// Rounds lt_bw is used before probing again (`bbr_lt_bw_max_rtts`).
    pub lt_max_rounds: u32,
    /// Seed of the random initial PROBE_BW phase (Linux `prandom_u32_max`).
    pub seed: u64,
}

impl BbrConfig {
    /// Linux v1's values.
    pub const DEFAULT: BbrConfig = BbrConfig {
        high_gain: 2.0 / std::f64::consts::LN_2,
        drain_gain: std::f64::consts::LN_2 / 2.0,
        cycle: [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        cycle_len: 8,
        cycle_rand: 7,
        cwnd_gain: 2.0,
        bw_rounds: 10,
        min_rtt_window: Duration::from_secs(10),
        probe_rtt: ProbeRttStyle::MinWindow,
        probe_rtt_duration: Duration::from_millis(200),
        min_cwnd_packets: 4,
        initial_cwnd_packets: 10,
        full_bw_growth: 1.25,
        full_bw_rounds: 3,
        full_bw_on_loss: false,
        packet: DataSize::from_bytes(1500),
        tso_segs_goal: 1,
        quantize: true,
        pacing_margin: 0.01,
        lt_sampling: true,
        lt_min_rounds: 4,
        lt_loss_thresh: 50.0 / 256.0,
        lt_bw_ratio: 1.0 / 8.0,
        lt_bw_diff_bps: 4000,
        lt_max_rounds: 48,
        seed: 0,
    };

    pub fn min_cwnd(&self) -> DataSize {
        self.packets(self.min_cwnd_packets)
    }

    pub fn initial_cwnd(&self) -> DataSize {
        self.packets(self.initial_cwnd_packets)
    }

    /// `n` packets in bytes.
    pub fn packets(&self, n: u32) -> DataSize {
        DataSize::from_bytes(self.packet.bytes() * u64::from(n))
    }

    /// `size` rounded up to whole packets (Linux counts the window in packets).
    pub fn ceil_packets(&self, size: DataSize) -> u64 {
        size.bytes().div_ceil(self.packet.bytes().max(1))
    }
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig::DEFAULT
    }
}
