//! A video flow's `timing` field: how its camera, encoder thread and pacer
//! move frames and packets off the exact grid (`rtcc_core::sender::SenderTiming`).
//! Absent (the scenario's `model_timing = "realistic"`, its default) or
//! `true`: the realistic values declared here (absent under `model_timing =
//! "exact"`: the exact grid); `false`: the exact
//! grid (every flow captures at `start + k·interval`, so two flows keep one
//! phase for a whole run); a table: the realistic values with its own in
//! their place (`{ drift_ppm = 0 }`).

use rtcc_core::controller::{ConfigError, Param, ParamInfo, Params};
use rtcc_core::sender::SenderTiming;
use rtcc_core::units::Duration;

const PHASE: Param<bool> = Param::flag(
    "phase",
    true,
    "first capture uniformly within one frame interval of the start, and the pacer's wake-up grid within one tick \
     (cameras and threads start at their own moments)",
);
/// Quartz clocks are specified to tens of ppm; RFC 5905 (NTPv4) App. A.1.1
/// bounds the frequency error it disciplines at 500 ppm (MAXFREQ).
const DRIFT_PPM: Param<f64> =
    Param::number("drift_ppm", 100.0, 0.0, 10_000.0, "camera clock rate error bound, drawn per flow in ± this, ppm");
/// libwebrtc VideoStreamEncoder::OnFrame posts each captured frame to the
/// encoder's task queue; a posted task waits for that thread's next wake-up,
/// at the task queue's 1 ms granularity (PacingController::kMinSleepTime
/// sleeps on the same kind of queue).
const HANDOVER: Param<Duration> = Param::duration(
    "handover",
    Duration::from_millis(1),
    Duration::ZERO,
    Duration::from_millis(100),
    "capture-to-encoder hand-over delay, uniform in [0, this]",
);
/// Measured with `rtcc._rtcc.encode_sequence` (its `encode_ms`): libvpx
/// VP8 at WebRTC's settings (speed -6, one thread), generated 720p
/// talking-head at 1.5 Mbps, frames 30–299: mean 14.2 ms, sd 2.4 ms (p5
/// 10.6, p95 18.1) on 2 shared x86-64 cores at load 3; OpenH264 on the
/// same: mean 5.6 ms, sd 1.7 ms.
const ENCODE_TIME: Param<Duration> = Param::duration(
    "encode_time",
    Duration::from_micros(ENCODE_MEAN_US),
    Duration::ZERO,
    Duration::from_secs(1),
    "mean encode time of one frame (normal, at least 0; one frame at a time)",
);
const ENCODE_JITTER: Param<Duration> = Param::duration(
    "encode_jitter",
    Duration::from_micros(ENCODE_SD_US),
    Duration::ZERO,
    Duration::from_secs(1),
    "standard deviation of the encode time",
);
/// PacingController::kMinSleepTime, 1 ms (modules/pacing/pacing_controller.cc);
/// 5 ms is the older process-thread pacer's kMinPacketLimitMs (paced_sender.cc).
const PACER_TICK: Param<Duration> = Param::duration(
    "pacer_tick",
    Duration::from_millis(1),
    Duration::ZERO,
    Duration::from_millis(100),
    "pacer wake-ups on a grid of this period (0: exactly when a packet is due)",
);
const ENCODE_MEAN_US: i64 = 14_200;
const ENCODE_SD_US: i64 = 2_400;

/// Every `timing` parameter, as `rtcc` lists them.
pub const TIMING_PARAMS: &[ParamInfo] =
    &[PHASE.info(), DRIFT_PPM.info(), HANDOVER.info(), ENCODE_TIME.info(), ENCODE_JITTER.info(), PACER_TICK.info()];

/// The realistic timing (`timing = true`).
pub fn realistic() -> SenderTiming {
    from_params(&Params::new()).expect("the declared defaults are in range")
}

/// `timing = { ... }`: the declared values with the table's in their place.
/// The seed is the flow's, set when its sender is built.
pub fn from_params(p: &Params) -> Result<SenderTiming, ConfigError> {
    p.check_known(TIMING_PARAMS)?;
    Ok(SenderTiming {
        phase: p.get(&PHASE)?,
        drift_ppm: p.get(&DRIFT_PPM)?,
        handover: p.get(&HANDOVER)?,
        encode_time: p.get(&ENCODE_TIME)?,
        encode_jitter: p.get(&ENCODE_JITTER)?,
        pacer_tick: p.get(&PACER_TICK)?,
        seed: 0,
    })
}

/// A TCP flow's `host_jitter`: at most this long. Its default is 0 under
/// either `model_timing`: a host's ACK-processing delay depends on its NIC's
/// interrupt coalescing, driver and load, and no one value is defensible, so
/// results that depend on it are reported over a range of it instead.
pub const HOST_JITTER_MAX: Duration = Duration::from_millis(10);
