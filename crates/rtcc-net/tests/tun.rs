//! The TUN form of the bottleneck: a video flow's datagrams and the
//! kernel's own TCP as IP packets through one emulated queue, in two
//! network namespaces the test makes (nothing is sent anywhere else). On a
//! machine without TUN or the privilege for namespaces each test says so
//! and passes without running.

use rtcc_net::live::{run_live_with, Bottleneck, LiveOptions, LiveRun};
use rtcc_net::tun::TunPair;
use rtcc_sim::Scenario;

/// Skips only where the machine does not allow TUN (no privilege, no
/// device) and `RTCC_REQUIRE_TUN` is not set; any other failure fails.
fn tun_or_skip(test: &str) -> bool {
    match TunPair::new() {
        Ok(_) => true,
        Err(e) if e.unavailable && std::env::var("RTCC_REQUIRE_TUN").as_deref() != Ok("1") => {
            eprintln!("{test}: skipped: {e}");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

fn run(text: &str, bottleneck: Bottleneck) -> LiveRun {
    let sc = Scenario::parse(text, "tun.toml").unwrap();
    run_live_with(sc, None, LiveOptions { bottleneck, ..LiveOptions::default() }, &mut || false)
        .unwrap_or_else(|e| panic!("{e}"))
}

const CALL: &str = "name = \"tun\"\nduration = \"4s\"\nseed = 5\n[link]\ncapacity = \"3Mbps\"\ndelay = \"20ms\"\n\
                    queue = \"100ms\"\n[[flow]]\nname = \"call\"\ncontroller = { name = \"fixed\", rate = \"1500kbps\" }\n\
                    encoder = \"ideal\"\n";

/// A fixed-rate call gets the same bytes through either form, with the
/// same delay give or take the kernel; the TUN form's emulator sees the IP
/// packet (28 bytes more per datagram than the UDP form's payload).
#[test]
fn a_call_through_tun_is_the_call_through_udp() {
    if !tun_or_skip("a_call_through_tun_is_the_call_through_udp") {
        return;
    }
    let (u, t) = (run(CALL, Bottleneck::Udp), run(CALL, Bottleneck::Tun));
    assert_eq!((u.live.bottleneck, t.live.bottleneck), ("udp-emulator", "tun-emulator"));
    let (uf, tf) = (&u.output.summary.flows[0], &t.output.summary.flows[0]);
    eprintln!(
        "udp {:.0} kbps {:?} ms; tun {:.0} kbps {:?} ms",
        uf.goodput_kbps, uf.owd_ms_mean, tf.goodput_kbps, tf.owd_ms_mean
    );
    assert!((tf.goodput_kbps / uf.goodput_kbps - 1.0).abs() < 0.03, "{} vs {}", tf.goodput_kbps, uf.goodput_kbps);
    let (uo, to) = (uf.owd_ms_mean.unwrap(), tf.owd_ms_mean.unwrap());
    assert!((uo - to).abs() < 3.0, "owd udp {uo} tun {to}");
    assert_eq!(tf.loss_rate, 0.0);
    let (fu, ft) = (&u.live.forward, &t.live.forward);
    assert_eq!(t.live.header_overhead_bytes, 0);
    let per = |d: &rtcc_net::emulator::DirStats| d.received_bytes as f64 / d.received as f64;
    assert!((per(ft) - per(fu) - 28.0).abs() < 1.0, "{} vs {}", per(ft), per(fu));
    assert_eq!((t.live.refused, t.live.unmatched, t.live.socket_drops), (0, 0, 0), "{:?}", t.live);
}

/// The kernel's Cubic beside a gcc call on 4 Mbps: it gets the congestion
/// control asked for, fills the queue (drops at the bottleneck, its own
/// retransmissions), and the two share the link without exceeding it.
#[test]
fn the_kernels_tcp_crosses_the_same_bottleneck() {
    if !tun_or_skip("the_kernels_tcp_crosses_the_same_bottleneck") {
        return;
    }
    let text = "name = \"gcc-cubic\"\nduration = \"8s\"\nseed = 1\n[link]\ncapacity = \"4Mbps\"\ndelay = \"25ms\"\n\
                queue = \"100ms\"\n[[flow]]\nname = \"call\"\ncontroller = \"gcc\"\n\
                [[flow]]\nname = \"cubic\"\nkind = \"tcp\"\ncc = \"cubic\"\nstart = \"2s\"\n";
    let r = run(text, Bottleneck::Auto);
    assert_eq!(r.live.bottleneck, "tun-emulator");
    let tcp = &r.live.tcp;
    assert_eq!(tcp.len(), 1);
    assert_eq!((tcp[0].flow, tcp[0].cc_asked.as_str(), tcp[0].cc.as_str()), (1, "cubic", "cubic"));
    let info = tcp[0].info.expect("TCP_INFO");
    // The path's RTT is 50 ms and more: the kernel measured it through the emulator.
    let min_rtt = info.min_rtt_us.expect("an RTT sample");
    assert!((50_000..80_000).contains(&min_rtt), "{info:?}");
    let f = &r.output.summary.flows;
    let (video, cubic) = (f[0].goodput_kbps, f[1].goodput_kbps);
    eprintln!("video {video:.0} kbps, cubic {cubic:.0} kbps, {:?}", r.live);
    // Cubic ran for 6 of 8 s; the bins' goodput over the run.
    assert!(cubic > 1_000.0 && video > 200.0, "video {video}, cubic {cubic}");
    assert!(video + cubic < 4_000.0 * 1.02, "video {video} + cubic {cubic}");
    assert!(r.live.forward.queue_drops > 0, "{:?}", r.live.forward);
    assert!(info.total_retrans > 0, "{info:?}");
    // Every data packet the emulator dropped is one the kernel sent again
    // (but those dropped in the last round trip, which it may not have).
    let dropped = (f[1].loss_rate * f[1].packets_sent as f64).round() as u64;
    assert!(dropped > 0 && dropped <= info.total_retrans + 10, "dropped {dropped}, {info:?}");
    // Its packets are the kernel's segments: 1448 B of data and 52 of
    // headers (TCP_MAXSEG whatever the devices' MTU), the handshake and
    // ACKs not counted.
    // Its send rate is over its own 6 s (from its start at 2 s).
    let sent_bytes = f[1].send_kbps * 1e3 / 8.0 * (r.output.summary.duration_s - 2.0);
    let per = sent_bytes / f[1].packets_sent as f64;
    assert!((1400.0..=1500.0).contains(&per), "{per} B a packet");
}

/// A reverse kernel TCP flow (an upload: B to A) crosses the reverse
/// bottleneck and fills it, beside a forward call whose reports share it.
#[test]
fn a_reverse_tcp_flow_fills_the_reverse_bottleneck() {
    if !tun_or_skip("a_reverse_tcp_flow_fills_the_reverse_bottleneck") {
        return;
    }
    let text =
        "name = \"up\"\nduration = \"6s\"\nseed = 2\n[link]\ncapacity = \"3Mbps\"\nreverse_capacity = \"2Mbps\"\n\
                delay = \"20ms\"\nqueue = \"100ms\"\nreverse_queue = \"100ms\"\n[[flow]]\nname = \"call\"\n\
                controller = { name = \"fixed\", rate = \"1Mbps\" }\nencoder = \"ideal\"\n\
                [[flow]]\nname = \"upload\"\nkind = \"tcp\"\ncc = \"cubic\"\ndirection = \"reverse\"\nstart = \"1s\"\n";
    let r = run(text, Bottleneck::Auto);
    let f = &r.output.summary.flows;
    assert_eq!(f[1].direction, "reverse");
    // 5 s of upload on a 2 Mbps reverse link (goodput over the run's 6 s).
    let up = f[1].goodput_kbps;
    assert!(up > 2_000.0 * 5.0 / 6.0 * 0.8 && up < 2_000.0 * 1.02, "upload {up} kbps");
    assert!(r.live.reverse.delivered_bytes as f64 > 0.8 * 2e6 / 8.0 * 5.0, "{:?}", r.live.reverse);
    // The call is untouched on the forward link.
    assert!((f[0].goodput_kbps - 1_000.0).abs() < 50.0, "call {}", f[0].goodput_kbps);
    let min_rtt = r.live.tcp[0].info.and_then(|i| i.min_rtt_us).expect("an RTT sample");
    assert!((40_000..70_000).contains(&min_rtt), "{min_rtt}");
}

/// A flow whose datagrams are larger than Ethernet's MTU crosses the TUN
/// form whole, as it crosses the UDP form and the simulator: nothing is
/// fragmented, and the bytes get through.
#[test]
fn a_datagram_larger_than_ethernets_crosses_whole() {
    if !tun_or_skip("a_datagram_larger_than_ethernets_crosses_whole") {
        return;
    }
    let text = CALL.replace("encoder = \"ideal\"\n", "encoder = \"ideal\"\nmtu = \"4000B\"\n");
    let t = run(&text, Bottleneck::Tun);
    let f = &t.output.summary.flows[0];
    // No fragment (they would be dropped as `other_packets`, beside the
    // namespaces' few IPv6 packets, and their datagrams counted lost).
    assert!(t.live.other_packets < 10, "{:?}", t.live);
    assert_eq!((t.live.socket_drops, t.live.unmatched), (0, 0), "{:?}", t.live);
    assert!(f.goodput_kbps > 1_400.0 && f.loss_rate == 0.0, "{} kbps, loss {}", f.goodput_kbps, f.loss_rate);
    let per = t.live.forward.received_bytes as f64 / t.live.forward.received as f64;
    assert!(per > 1_500.0, "{per} B a packet");
}

/// A TCP flow that stops mid-run sends nothing after its stop.
#[test]
fn a_tcp_flow_stops_at_its_stop() {
    if !tun_or_skip("a_tcp_flow_stops_at_its_stop") {
        return;
    }
    let text = "name = \"stop\"\nduration = \"5s\"\nseed = 1\n[link]\ncapacity = \"4Mbps\"\n\
                delay = \"10ms\"\nqueue = \"100ms\"\n[[flow]]\nname = \"bulk\"\nkind = \"tcp\"\ncc = \"cubic\"\n\
                stop = \"2s\"\n";
    let r = run(text, Bottleneck::Tun);
    let rows = &r.output.timeseries;
    eprintln!("{:?}", r.live);
    let (t, g) = (rows.f64("t_s").expect("t_s"), rows.f64("goodput_kbps").expect("goodput_kbps"));
    let before: f64 = t.iter().zip(g).filter(|(t, _)| **t <= 2.0).map(|(_, g)| *g).sum();
    let after: f64 = t.iter().zip(g).filter(|(t, _)| **t > 2.5).map(|(_, g)| *g).sum();
    assert!(before > 1_000.0 && after == 0.0, "before {before}, after {after}");
    assert!(r.live.tcp[0].info.is_some());
}

/// A web-like flow live: the kernel's TCP carries the objects the
/// simulator's application asks for (the same sizes and think times from
/// the same stream), one at a time, each timed from its request to its
/// last byte; as many as simulated, give or take the ones the wall clock
/// moved across the run's end.
#[test]
fn a_web_like_flow_downloads_the_simulators_objects() {
    if !tun_or_skip("a_web_like_flow_downloads_the_simulators_objects") {
        return;
    }
    let text = "name = \"web\"\nduration = \"10s\"\nseed = 2\n[link]\ncapacity = \"4Mbps\"\ndelay = \"25ms\"\n\
                queue = \"100ms\"\n[[flow]]\nname = \"web\"\nkind = \"web\"\ncc = \"cubic\"\n\
                think_time = \"300ms\"\n";
    let sim = rtcc_sim::run_text(text, "web.toml", None).unwrap();
    let r = run(text, Bottleneck::Auto);
    let (s, l) = (&sim.summary.flows[0], &r.output.summary.flows[0]);
    eprintln!(
        "sim {} objects, fct p50 {:?} ms; live {} objects, fct p50 {:?} ms; {:?}",
        s.objects_completed, s.fct_ms_p50, l.objects_completed, l.fct_ms_p50, r.live
    );
    assert!(l.objects_completed >= 5, "{l:?}");
    assert!(l.objects_started >= l.objects_completed && l.objects_started <= l.objects_completed + 1);
    assert!(
        l.objects_completed.abs_diff(s.objects_completed) <= 3,
        "{} vs {}",
        l.objects_completed,
        s.objects_completed
    );
    // Each download takes at least the round trip of its request and data.
    let (sp, lp) = (s.fct_ms_p50.unwrap(), l.fct_ms_p50.unwrap());
    assert!(lp > 50.0 && (lp / sp - 1.0).abs() < 0.5, "fct p50 live {lp} ms, sim {sp} ms");
    assert_eq!(r.live.tcp[0].cc, "cubic");
}
