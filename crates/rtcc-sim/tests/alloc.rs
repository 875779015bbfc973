//! rtcc's own per-packet path must not allocate: count heap allocations
//! while a warmed-up fixed-rate call runs and compare with its packet count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use rtcc_core::units::Time;
use rtcc_sim::{Scenario, Simulation};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn per_packet_path_does_not_allocate() {
    let text = r#"duration = "600s"
[link]
capacity = "5Mbps"
delay = "25ms"
[[flow]]
controller = { name = "fixed", rate = "3Mbps" }
encoder = "ideal"
[record]
packets = false
"#;
    let mut sim = Simulation::new(Scenario::parse(text, "alloc.toml").unwrap(), None).unwrap();
    sim.run_until(Time::from_millis(10_000));
    let before = ALLOCS.load(Ordering::Relaxed);
    sim.run_until(Time::from_millis(310_000));
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    eprintln!("{allocs} allocations over 300 s");
    // 300 s at 3 Mbps in ≤1200 B packets ≈ 94k packets. What may allocate is
    // per report (20/s: the report and its joined feedback) and amortised
    // growth of per-frame and per-bin records.
    let packets = 300.0 * 3e6 / 8.0 / 1200.0;
    let reports = 300.0 * 20.0;
    assert!((allocs as f64) < 2.5 * reports, "{allocs} allocations for {packets} packets");
    assert!((allocs as f64) / packets < 0.15, "{allocs} allocations for {packets} packets");
}
