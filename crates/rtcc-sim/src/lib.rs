//! rtcc-sim: a deterministic discrete-event simulator that drives rtcc-core's
//! senders, receivers and controllers over modelled links.

pub mod bench;
pub mod call;
pub mod endpoint;
pub mod heap;
pub mod link;
pub mod loss;
pub mod path;
pub mod profile;
pub mod queue;
pub mod scenario;
mod schedule;
pub mod sim;
pub mod timing;
pub mod trace;
pub mod traffic;
pub mod video;

// The recorder and its tables live in rtcc-record; their old paths stay.
pub use output::{Output, Summary};
pub use rtcc_record::{frames, metrics, output, recorder};
pub use scenario::{Scenario, ScenarioError};
pub use sim::Simulation;

/// The built-in demo: GCC on the Dumbo thesis's pulse link (§3.1: capacity
/// alternating 3 Mbps ↔ 500 kbps every 40 s, 25 ms one-way delay), 160 s.
pub const DEFAULT_SCENARIO: &str = r#"# Built-in demo: GCC on the Dumbo thesis pulse link (section 3.1).
name = "demo"
duration = "160s"
seed = 1

[link]
capacity = { kind = "pulse", high = "3Mbps", low = "500kbps", every = "40s" }
delay = "25ms"
queue = "unlimited"

[[flow]]
name = "call"
controller = "gcc"
encoder = "lagging"
"#;

/// Parse, build and run a scenario to completion.
pub fn run_text(text: &str, source: &str, seed: Option<u64>) -> Result<Output, ScenarioError> {
    let sc = Scenario::parse(text, source)?;
    let mut sim = Simulation::new(sc, seed)?;
    sim.run();
    if let Some(e) = sim.budget_error() {
        return Err(e);
    }
    if let Some(reason) = sim.failure() {
        return Err(ScenarioError { source_name: source.to_string(), field: "run".into(), reason });
    }
    Ok(sim.output())
}
