//! `cargo run --release --example bench [workload] [repeat]`: the speed
//! workloads of `rtcc bench` without Python, for profiling.
fn main() {
    let mut args = std::env::args().skip(1);
    let w = args.next().unwrap_or_else(|| "fixed".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    for _ in 0..n {
        match rtcc_sim::bench::run_workload(&w) {
            Ok(r) => println!("{} {:.0}x real time, {:.0} packets/s", r.workload, r.speedup, r.packets_per_s),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
}
