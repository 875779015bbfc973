//! The TUN form of the bottleneck: a video flow's datagrams and the
//! kernel's own TCP as IP packets through one emulated queue, in two
//! network namespaces the test makes (nothing is sent anywhere else). On a
//! machine without TUN or the privilege for namespaces each test says so
//! and passes without running.

use rtcc_net::live::{run_live_with, Bottleneck, LiveOptions, LiveRun};
use rtcc_net::tun::TunPair;
use rtcc_sim::Scenario;

fn tun_or_skip(test: &str) -> bool {
    match TunPair::new() {
        Ok(_) => true,
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            false
        }
    }
}

fn run(text: &str, bottleneck: Bottleneck) -> LiveRun {
    let sc = Scenario::parse(text, "tun.toml").unwrap();
    run_live_with(sc, None, LiveOptions { bottleneck, fallback: false }, &mut || false)
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
    assert!(info.min_rtt_us >= 50_000 && info.min_rtt_us < 80_000, "{info:?}");
    let f = &r.output.summary.flows;
    let (video, cubic) = (f[0].goodput_kbps, f[1].goodput_kbps);
    eprintln!("video {video:.0} kbps, cubic {cubic:.0} kbps, {:?}", r.live);
    // Cubic ran for 6 of 8 s; the bins' goodput over the run.
    assert!(cubic > 1_000.0 && video > 200.0, "video {video}, cubic {cubic}");
    assert!(video + cubic < 4_000.0 * 1.02, "video {video} + cubic {cubic}");
    assert!(r.live.forward.queue_drops > 0, "{:?}", r.live.forward);
    assert!(info.total_retrans > 0, "{info:?}");
    assert_eq!(tcp[0].packets, f[1].packets_sent);
    // Reported to the recorder as the simulator's TCP is.
    assert!(f[1].retransmits == info.total_retrans);
}
