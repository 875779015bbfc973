//! `cargo run --release --example bench [workload] [repeat]`: the speed
//! workloads of `rtcc bench` without Python, for profiling.

/// The same allocator as the Python extension's, so timings match `rtcc bench`.
#[global_allocator]
static GLOBAL: rtcc_sim::heap::Counting<mimalloc::MiMalloc> = rtcc_sim::heap::Counting(mimalloc::MiMalloc);

fn main() {
    let mut args = std::env::args().skip(1);
    let w = args.next().unwrap_or_else(|| "fixed".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    for _ in 0..n {
        match rtcc_sim::bench::run_workload(&w) {
            Ok(r) => println!(
                "{} {:.0}x real time, {:.0} packets/s, {:.0} ns/packet, {:.0} kB/flow (heap peak)",
                r.workload,
                r.speedup,
                r.packets_per_s,
                r.ns_per_packet,
                r.heap_per_flow_bytes.unwrap_or(f64::NAN) / 1e3
            ),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
}
