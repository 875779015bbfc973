//! `cargo run --release --example run SCENARIO.toml [photo_dir]`: one run
//! without Python, printing the summary JSON and the wall time (for
//! profiling the simulator and the real-codec path).

/// The same allocator as the Python extension's, so timings match `rtcc bench`.
#[global_allocator]
static GLOBAL: rtcc_sim::heap::Counting<mimalloc::MiMalloc> = rtcc_sim::heap::Counting(mimalloc::MiMalloc);

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run SCENARIO.toml [photo_dir]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let started = std::time::Instant::now();
    let result = rtcc_sim::Scenario::parse(&text, &path).and_then(|mut sc| {
        sc.photo_dir = args.next().map(Into::into);
        rtcc_sim::Simulation::new(sc, None)
    });
    let mut sim = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    sim.run();
    if let Some(e) = sim.failure() {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let out = sim.output();
    println!("{}", serde_json::to_string_pretty(&out.summary).unwrap_or_default());
    eprintln!("wall {:.2} s", started.elapsed().as_secs_f64());
}
