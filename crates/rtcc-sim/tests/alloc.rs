//! rtcc's own per-packet path must not allocate: count heap allocations
//! while a warmed-up fixed-rate call runs and compare with its packet count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use rtcc_core::units::Time;
use rtcc_sim::{Scenario, Simulation};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(l.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as u64, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(n as u64, Ordering::Relaxed);
        LIVE.fetch_sub(l.size() as u64, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counters are global: tests in this file must not overlap.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn per_packet_path_does_not_allocate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The speed benchmark's fixed-rate call, made longer.
    let text = rtcc_sim::bench::workload_scenario("fixed").unwrap().replace("120s", "600s");
    let mut sim = Simulation::new(Scenario::parse(&text, "alloc.toml").unwrap(), None).unwrap();
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

#[test]
fn memory_stays_flat_as_the_call_gets_longer() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // GCC on a pulse link with nothing recorded but the streamed summary.
    let text = r#"duration = "1200s"
[link]
capacity = { kind = "pulse", high = "3Mbps", low = "1Mbps", every = "20s" }
delay = "25ms"
[[flow]]
controller = "gcc"
[record]
packets = false
frames = false
timeseries = false
"#;
    let mut sim = Simulation::new(Scenario::parse(text, "flat.toml").unwrap(), None).unwrap();
    sim.run_until(Time::from_millis(120_000));
    let at_120 = LIVE.load(Ordering::Relaxed) as f64;
    sim.run_until(Time::from_millis(1_200_000));
    let at_1200 = LIVE.load(Ordering::Relaxed) as f64;
    eprintln!("live heap: {at_120} B at 120 s, {at_1200} B at 1200 s");
    // Ten times longer must not mean more memory (the tolerance is slack for
    // containers that happen to sit at a larger capacity).
    assert!(at_1200 < at_120 * 1.2 + 65_536.0, "{at_120} -> {at_1200}");
    assert!(sim.is_done());
    assert!(sim.output().summary.flows[0].frames_displayed > 30_000);
}
