//! The relay on loopback sockets in real time: a sender at twice the
//! link's capacity gets the capacity, the delay, the drops; what goes back
//! reaches the end it belongs to; a stranger's datagrams are refused.
//! Every send loop here is bounded in count and time, and every address is
//! loopback.

use std::net::UdpSocket;
use std::time::{Duration as StdDuration, Instant};

use rtcc_core::units::Duration;
use rtcc_net::emulator::Emulator;
use rtcc_net::relay::{Relay, RelayConfig};
use rtcc_sim::Scenario;

const PAYLOAD: usize = 1172; // 1,200 bytes with IPv4 and UDP headers

#[test]
fn a_sender_twice_the_capacity_gets_the_capacity_and_the_delay() {
    let text =
        "name = \"relay\"\nduration = \"10s\"\n[link]\ncapacity = \"2Mbps\"\ndelay = \"20ms\"\nqueue = \"30pkt\"\n\
                [[flow]]\ncontroller = \"fixed\"\n";
    let sc = Scenario::parse(text, "relay.toml").unwrap_or_else(|e| panic!("{e}"));
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: b.local_addr().unwrap(),
        duration: Duration::from_millis(4_000),
    };
    let relay = Relay::bind(Emulator::from_scenario(&sc, Some(1), 4).unwrap(), cfg).unwrap();
    let front = relay.local_addr().unwrap();
    let relay = std::thread::spawn(move || relay.run(&mut || false).unwrap());
    let t0 = Instant::now();

    // A: 4 Mbps of 1,200-byte packets for 2.5 s (1,041 datagrams), each
    // carrying its number and send time.
    let sender = std::thread::spawn(move || {
        let gap = StdDuration::from_micros(2_400);
        let mut buf = vec![0u8; PAYLOAD];
        for k in 0u64..1_041 {
            let due = gap * k as u32;
            while t0.elapsed() < due {
                std::thread::sleep(StdDuration::from_micros(200));
            }
            buf[..8].copy_from_slice(&k.to_be_bytes());
            buf[8..16].copy_from_slice(&(t0.elapsed().as_micros() as u64).to_be_bytes());
            a.send_to(&buf, front).unwrap();
        }
        // The replies come back to A through the relay.
        a.set_read_timeout(Some(StdDuration::from_millis(200))).unwrap();
        let mut got = 0;
        let mut r = [0u8; 64];
        while t0.elapsed() < StdDuration::from_millis(3_800) {
            if let Ok((n, from)) = a.recv_from(&mut r) {
                assert_eq!((n, from), (3, front));
                got += 1;
            }
        }
        got
    });

    // B: what arrives until 3.5 s; answers the first 20 to their sender.
    b.set_read_timeout(Some(StdDuration::from_millis(100))).unwrap();
    let mut arrivals = Vec::new();
    let mut buf = vec![0u8; 2048];
    let mut upstream = None;
    while t0.elapsed() < StdDuration::from_millis(3_500) {
        let Ok((n, from)) = b.recv_from(&mut buf) else { continue };
        let at = t0.elapsed().as_micros() as u64;
        assert_eq!(n, PAYLOAD);
        let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap());
        arrivals.push((at, sent));
        upstream = Some(from);
        if arrivals.len() <= 20 {
            b.send_to(b"ack", from).unwrap();
        }
    }
    // A stranger writing to the relay's socket for this pair is refused.
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..5 {
        stranger.send_to(b"hello", upstream.unwrap()).unwrap();
    }
    let replies = sender.join().unwrap();
    let report = relay.join().unwrap();

    // Throughput between 0.5 and 2.5 s: the link's 2 Mbps of IP packets.
    let (from, to) = (500_000, 2_500_000);
    let n = arrivals.iter().filter(|(at, _)| (from..to).contains(at)).count();
    let mbps = (n * (PAYLOAD + 28) * 8) as f64 / ((to - from) as f64 / 1e6) / 1e6;
    assert!((1.7..=2.3).contains(&mbps), "{mbps:.2} Mbps");
    // The first packet: 20 ms + 4.8 ms to serialise, and little more.
    let owd_min = arrivals.iter().map(|(at, sent)| at - sent).min().unwrap();
    assert!((24_000..40_000).contains(&owd_min), "{owd_min} µs");
    // 30 packets of queue at 2 Mbps: 144 ms more at most (and some slack).
    let owd_max = arrivals.iter().map(|(at, sent)| at - sent).max().unwrap();
    assert!(owd_max < 24_800 + 144_000 + 30_000, "{owd_max} µs");
    assert!(owd_max > 100_000, "the queue filled: {owd_max} µs");
    assert!(report.forward.queue_drops > 300, "{:?}", report.forward);
    assert_eq!(report.forward.received, 1_041);
    assert_eq!(report.forward.delivered as usize, arrivals.len());
    assert_eq!(replies, 20);
    assert_eq!(report.reverse.delivered, 20);
    assert_eq!((report.peers, report.refused, report.send_errors), (1, 5, 0));
    let late = report.late_us.unwrap();
    eprintln!(
        "{mbps:.3} Mbps, one-way {owd_min}..{owd_max} µs, {} queue drops, late µs (median, p99, max) {late:?}",
        report.forward.queue_drops
    );
}
