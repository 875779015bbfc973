//! Criterion bench of the standard workloads (see `rtcc bench`).
use criterion::{criterion_group, criterion_main, Criterion};
use rtcc_sim::bench::{workload_scenario, WORKLOADS};
use rtcc_sim::{Scenario, Simulation};

fn workloads(c: &mut Criterion) {
    let mut g = c.benchmark_group("call_120s");
    g.sample_size(10);
    for w in WORKLOADS {
        let text = workload_scenario(w).expect("workload");
        // `vp8` needs libvpx; a build without it has nothing to time there.
        if let Err(e) = Scenario::parse(text, w).and_then(|sc| Simulation::new(sc, None)) {
            eprintln!("skipped {w}: {e}");
            continue;
        }
        g.bench_function(*w, |b| {
            b.iter(|| {
                let mut sim = Simulation::new(Scenario::parse(text, w).expect("scenario"), None).expect("sim");
                sim.run();
                sim.events()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
