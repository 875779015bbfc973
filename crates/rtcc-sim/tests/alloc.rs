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

/// Heap allocations over 300 s of the speed benchmark's fixed-rate call
/// at `rate`, after 10 s of warm-up.
fn allocations_at(rate: &str) -> u64 {
    let text = rtcc_sim::bench::workload_scenario("fixed").unwrap().replace("120s", "600s").replace("3Mbps", rate);
    let mut sim = Simulation::new(Scenario::parse(&text, "alloc.toml").unwrap(), None).unwrap();
    sim.run_until(Time::from_millis(10_000));
    let before = ALLOCS.load(Ordering::Relaxed);
    sim.run_until(Time::from_millis(310_000));
    ALLOCS.load(Ordering::Relaxed) - before
}

#[test]
fn per_packet_path_does_not_allocate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Twice the packets at the same report rate (20/s). What may allocate is
    // per report: the report, its RTCP datagram built and parsed as a real
    // stack does (packets, chunk and delta lists, bytes), the joined
    // feedback; and amortised growth of per-frame and per-bin records.
    let (low, high) = (allocations_at("1500kbps"), allocations_at("3Mbps"));
    eprintln!("{low} allocations over 300 s at 1.5 Mbps, {high} at 3 Mbps");
    // 300 s at 1.5 Mbps in <=1200 B packets: about 47k packets more at 3 Mbps.
    let extra_packets = 300.0 * 1.5e6 / 8.0 / 1200.0;
    let reports = 300.0 * 20.0;
    assert!((high as f64) < 40.0 * reports, "{high} allocations for {reports} reports");
    let per_packet = (high as f64 - low as f64) / extra_packets;
    assert!(per_packet < 0.15, "{per_packet:.3} allocations per packet ({low} at 1.5 Mbps, {high} at 3 Mbps)");
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
