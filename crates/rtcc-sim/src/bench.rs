//! Standard speed workloads for `rtcc bench` and the criterion bench: a
//! 120 s fixed-rate 3 Mbps call, a 120 s GCC call on a 3 Mbps / 25 ms link,
//! and (`vp8`) a 120 s GCC call with real VP8 at 640x360 on the Dumbo pulse
//! link: content generated, encoded, decoded and scored both ways.
//! Packet recording is off, as in sweeps: only streamed metrics are kept.
//!
//! The fixed-rate flows pace at their rate (`pacing_factor = 1`), as ns-3's
//! constant-rate sources send and as these workloads always measured.
//!
//! `flows-N`: N fixed-rate 2.5 Mbps calls (1200 B packets) sharing a 3N Mbps
//! / 25 ms link for 30 s — the packet volume of bare ns-3's
//! `scripts/ns3_multiflow_udp.py N`, so the two compare in one
//! run; per-packet cost should not grow with N.
//!
//! `tcp`: one Cubic TCP bulk flow for 120 s over a 10 Mbps / 20 ms link
//! (RTT 40 ms, BDP 50 kB) with a drop-tail queue of 33 packets (49.5 kB of
//! 1500 B packets, 1 BDP) — the path of bare ns-3's `scripts/ns3_tcp.py`,
//! so the two compare in one run (`rtcc bench --workload tcp --ns3 PYTHON`).

use crate::scenario::{Scenario, ScenarioError, MAX_FLOWS};
use crate::sim::Simulation;

pub const WORKLOADS: &[&str] = &["fixed", "gcc", "vp8", "tcp"];

/// Every workload records streamed metrics only, as sweeps do.
macro_rules! record_off {
    () => {
        "[record]\npackets = false\nframes = false\ntimeseries = false\n"
    };
}

/// Flow counts of the multi-flow workloads `rtcc bench --workload flows` runs.
pub const FLOW_COUNTS: &[usize] = &[1, 10, 100, 200, 1000];

/// The scenario text of workload `name`.
pub fn workload_text(name: &str) -> Option<String> {
    if let Some(n) = name.strip_prefix("flows-") {
        let n: usize = n.parse().ok().filter(|n| (1..=MAX_FLOWS).contains(n))?;
        return Some(multiflow(n));
    }
    workload_scenario(name).map(str::to_string)
}

fn multiflow(n: usize) -> String {
    let mut t = format!(
        r#"name = "bench-flows-{n}"
duration = "30s"
[link]
capacity = "{}Mbps"
delay = "25ms"
{}"#,
        3 * n,
        record_off!()
    );
    for i in 0..n {
        t.push_str(&format!(
            "[[flow]]\nname = \"f{i}\"\ncontroller = {{ name = \"fixed\", rate = \"2.5Mbps\", pacing_factor = 1 }}\n\
             encoder = \"ideal\"\n\
             nack = false\nqueue_time_limit = \"off\"\n"
        ));
    }
    t
}

/// A standard workload: `name`, 120 s, one flow over a 25 ms link of
/// `capacity` (a TOML value).
macro_rules! workload {
    ($name:literal, $capacity:literal, $flow:literal) => {
        concat!(
            "name = \"bench-",
            $name,
            "\"\nduration = \"120s\"\n[link]\ncapacity = ",
            $capacity,
            "\ndelay = \"25ms\"\n[[flow]]\n",
            $flow,
            record_off!()
        )
    };
}

pub fn workload_scenario(name: &str) -> Option<&'static str> {
    Some(match name {
        "fixed" => workload!(
            "fixed",
            r#""5Mbps""#,
            r#"controller = { name = "fixed", rate = "3Mbps", pacing_factor = 1 }
encoder = "ideal"
"#
        ),
        "gcc" => workload!(
            "gcc",
            r#""3Mbps""#,
            r#"controller = "gcc"
encoder = "lagging"
"#
        ),
        "vp8" => workload!(
            "vp8",
            r#"{ kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }"#,
            r#"controller = "gcc"
encoder = "vp8"
resolution = "360p"
content = "talking-head"
"#
        ),
        // Not `workload!`: its own link (10 Mbps / 20 ms, 1 BDP drop-tail)
        // and a TCP flow instead of a call.
        "tcp" => concat!(
            r#"name = "bench-tcp"
duration = "120s"
[link]
capacity = "10Mbps"
delay = "20ms"
queue = "33pkt"
[[flow]]
kind = "tcp"
cc = "cubic"
"#,
            record_off!()
        ),
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
    pub flows: usize,
    /// Wall time per packet sent, in nanoseconds.
    pub ns_per_packet: f64,
    /// Goodput summed over the flows, Mbps (the flows' `goodput_kbps`).
    pub goodput_mbps: f64,
    /// Resident memory the built and finished run added, per flow (Linux
    /// `/proc/self/status` VmRSS; `None` elsewhere). Reads low when the
    /// allocator reuses what an earlier run freed.
    pub rss_per_flow_bytes: Option<f64>,
    /// Peak heap of building and running, per flow (`None` without the
    /// counting allocator of [`crate::heap`]).
    pub heap_per_flow_bytes: Option<f64>,
}

/// This process's resident set size in bytes (Linux).
fn rss_bytes() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

/// Build and run one workload, timing only the run.
pub fn run_workload(name: &str) -> Result<BenchResult, ScenarioError> {
    let text = workload_text(name).ok_or_else(|| ScenarioError {
        source_name: "bench".into(),
        field: "workload".into(),
        reason: format!(
            "unknown workload '{name}' (known: {}, flows-N for N in 1..={MAX_FLOWS})",
            WORKLOADS.join(", ")
        ),
    })?;
    let scenario = Scenario::parse(&text, name)?;
    let flows = scenario.flows.len();
    let rss0 = rss_bytes();
    let heap0 = crate::heap::mark();
    let mut sim = Simulation::new(scenario, None)?;
    let t0 = std::time::Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let rss1 = rss_bytes();
    let heap = heap0.map(|h| (crate::heap::peak() - h) as f64 / flows as f64);
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
        flows,
        ns_per_packet: wall * 1e9 / packets.max(1) as f64,
        goodput_mbps: out.summary.flows.iter().map(|f| f.goodput_kbps).sum::<f64>() / 1e3,
        rss_per_flow_bytes: rss0.zip(rss1).map(|(a, b)| (b - a).max(0.0) / flows as f64),
        heap_per_flow_bytes: heap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_workload_is_one_cubic_flow_on_a_1_bdp_link() {
        let t: toml::Table = toml::from_str(workload_scenario("tcp").unwrap()).unwrap();
        assert_eq!(t["name"].as_str(), Some("bench-tcp"));
        assert_eq!(t["duration"].as_str(), Some("120s"));
        let link = t["link"].as_table().unwrap();
        assert_eq!(link["capacity"].as_str(), Some("10Mbps"));
        assert_eq!(link["delay"].as_str(), Some("20ms"));
        // 10 Mbps x 40 ms RTT = 50 kB = 33.3 packets of 1500 B.
        assert_eq!(link["queue"].as_str(), Some("33pkt"));
        let flows = t["flow"].as_array().unwrap();
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0]["kind"].as_str(), Some("tcp"));
        assert_eq!(flows[0]["cc"].as_str(), Some("cubic"));
        assert_eq!(t["record"]["packets"].as_bool(), Some(false));
        assert!(WORKLOADS.contains(&"tcp"));
    }

    #[test]
    fn tcp_workload_runs() {
        let r = run_workload("tcp").unwrap();
        assert_eq!(r.sim_s, 120.0);
        assert_eq!(r.flows, 1);
        assert!(r.packets > 50_000, "{r:?}");
    }
}
