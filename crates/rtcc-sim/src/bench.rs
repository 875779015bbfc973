//! Standard speed workloads for `rtcc bench` and the criterion bench: a
//! 120 s fixed-rate 3 Mbps call, a 120 s GCC call on a 3 Mbps / 25 ms link,
//! and (`vp8`) a 120 s GCC call with real VP8 at 640x360 on the Dumbo pulse
//! link: content generated, encoded, decoded and scored both ways.
//! Packet recording is off, as in sweeps: only streamed metrics are kept.

use crate::scenario::{Scenario, ScenarioError};
use crate::sim::Simulation;

pub const WORKLOADS: &[&str] = &["fixed", "gcc", "vp8"];

pub fn workload_scenario(name: &str) -> Option<&'static str> {
    Some(match name {
        "fixed" => {
            r#"name = "bench-fixed"
duration = "120s"
[link]
capacity = "5Mbps"
delay = "25ms"
[[flow]]
controller = { name = "fixed", rate = "3Mbps" }
encoder = "ideal"
[record]
packets = false
frames = false
timeseries = false
"#
        }
        "gcc" => {
            r#"name = "bench-gcc"
duration = "120s"
[link]
capacity = "3Mbps"
delay = "25ms"
[[flow]]
controller = "gcc"
encoder = "lagging"
[record]
packets = false
frames = false
timeseries = false
"#
        }
        "vp8" => {
            r#"name = "bench-vp8"
duration = "120s"
[link]
capacity = { kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }
delay = "25ms"
[[flow]]
controller = "gcc"
encoder = "vp8"
resolution = "360p"
content = "talking-head"
[record]
packets = false
frames = false
timeseries = false
"#
        }
        _ => return None,
    })
}

#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    pub workload: String,
    pub sim_s: f64,
    pub wall_s: f64,
    pub speedup: f64,
    pub packets: u64,
    pub packets_per_s: f64,
    pub events: u64,
}

/// Build and run one workload, timing only the run.
pub fn run_workload(name: &str) -> Result<BenchResult, ScenarioError> {
    let text = workload_scenario(name).ok_or_else(|| ScenarioError {
        source_name: "bench".into(),
        field: "workload".into(),
        reason: format!("unknown workload '{name}' (known: {})", WORKLOADS.join(", ")),
    })?;
    let mut sim = Simulation::new(Scenario::parse(text, name)?, None)?;
    let t0 = std::time::Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let out = sim.output();
    let packets: u64 = out.summary.flows.iter().map(|f| f.packets_sent).sum();
    Ok(BenchResult {
        workload: name.to_string(),
        sim_s: out.summary.duration_s,
        wall_s: wall,
        speedup: out.summary.duration_s / wall.max(1e-12),
        packets,
        packets_per_s: packets as f64 / wall.max(1e-12),
        events: sim.events(),
    })
}
