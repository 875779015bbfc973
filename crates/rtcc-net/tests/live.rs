//! A scenario live on loopback sockets against the same scenario simulated:
//! a fixed-rate call well under its link gets the same bytes through, a few
//! more milliseconds of one-way delay (real header bytes and the kernel),
//! and every datagram accounted for. Scenarios live cannot carry yet are
//! refused, naming the flow.

use rtcc_net::live::{run_live, run_live_with, Bottleneck, LiveOptions};
use rtcc_sim::Scenario;

const CALL: &str = "name = \"live\"\nduration = \"5s\"\nseed = 3\n[link]\ncapacity = \"3Mbps\"\ndelay = \"20ms\"\n\
                    queue = \"100ms\"\n[[flow]]\nname = \"call\"\ncontroller = { name = \"fixed\", rate = \"1500kbps\" }\n\
                    encoder = \"ideal\"\n";

#[test]
fn a_call_live_gets_what_it_gets_simulated_plus_the_wire() {
    let sim = rtcc_sim::run_text(CALL, "live.toml", None).unwrap();
    let sc = Scenario::parse(CALL, "live.toml").unwrap();
    let live = run_live(sc, None, &mut || false).unwrap_or_else(|e| panic!("{e}"));
    let (s, l) = (&sim.summary.flows[0], &live.output.summary.flows[0]);
    eprintln!(
        "sim: goodput {:.0} kbps, owd {:?} ms, frames {}; live: goodput {:.0} kbps, owd {:?} ms, frames {}; {:?}",
        s.goodput_kbps, s.owd_ms_mean, s.frames_displayed, l.goodput_kbps, l.owd_ms_mean, l.frames_displayed, live.live
    );
    let info = &live.live;
    assert_eq!((info.socket_drops, info.undecodable, info.refused), (0, 0, 0), "{info:?}");
    // The same sends, give or take the packet the run's last instant cuts.
    assert!(l.packets_sent.abs_diff(s.packets_sent) <= 2, "{} vs {}", l.packets_sent, s.packets_sent);
    // The sender does the same thing: a fixed rate, the same frames.
    assert!((l.goodput_kbps / s.goodput_kbps - 1.0).abs() < 0.03, "{} vs {}", l.goodput_kbps, s.goodput_kbps);
    assert!(l.frames_displayed + 3 >= s.frames_displayed, "{} vs {}", l.frames_displayed, s.frames_displayed);
    assert_eq!(l.loss_rate, 0.0);
    // One-way delay: the simulator's 20 ms + serialisation, plus the header
    // bytes it does not charge and the kernel's and the loop's lateness:
    // more, but by milliseconds on loopback.
    let (so, lo) = (s.owd_ms_mean.unwrap(), l.owd_ms_mean.unwrap());
    assert!(lo >= so - 0.2 && lo < so + 8.0, "live {lo} ms, sim {so} ms");
    assert!(info.late_us.is_some() && info.wall_s >= 5.0);
    // Receive times are the kernel's (SO_TIMESTAMPNS) on Linux.
    assert_eq!(info.timestamps, "kernel");
    assert!(info.kernel_stamped >= l.packets_sent, "{} < {}", info.kernel_stamped, l.packets_sent);
    // The stamps stand: the loop hands datagrams out after its ends had
    // their time, so an end's clock is never ahead of a stamp.
    assert!(info.kernel_clamped * 10 < info.kernel_stamped, "{info:?}");
    // The loop spins only its last millisecond before each deadline.
    let cpu = info.loop_cpu.expect("Linux");
    assert!(cpu > 0.0 && cpu < 0.9, "{cpu}");
    // The link saw the report bytes too (the reverse path has no bottleneck,
    // so they only count on the flow's report counters).
    assert!(l.reports_sent > 0 && l.reports_lost == 0);
}

#[test]
fn what_live_cannot_carry_yet_is_refused_by_flow() {
    // The kernel's TCP needs the TUN form; on the UDP form it is refused.
    let tcp = format!("{CALL}[[flow]]\nkind = \"tcp\"\ncc = \"cubic\"\n");
    let udp = LiveOptions { bottleneck: Bottleneck::Udp, ..LiveOptions::default() };
    let e = run_live_with(Scenario::parse(&tcp, "t.toml").unwrap(), None, udp.clone(), &mut || false)
        .err()
        .expect("refused");
    assert_eq!(e.field, "flow[1].kind");
    assert!(e.reason.contains("TUN"), "{e}");
    // TCP settings the kernel keeps for itself would be silently ignored.
    let iw = format!("{tcp}initial_window = 4\n");
    let e = run_live(Scenario::parse(&iw, "t.toml").unwrap(), None, &mut || false).err().expect("refused");
    assert_eq!(e.field, "flow[1].initial_window");
    // A web-like flow is the kernel's TCP too.
    let web = format!("{CALL}[[flow]]\nkind = \"web\"\ncc = \"cubic\"\n");
    let e = run_live_with(Scenario::parse(&web, "w.toml").unwrap(), None, udp, &mut || false).err().expect("refused");
    assert_eq!(e.field, "flow[1].kind");
    assert!(e.reason.contains("TUN"), "{e}");
    // A UDP packet too small for its headers and number.
    let tiny = format!("{CALL}[[flow]]\nkind = \"udp\"\nrate = \"100kbps\"\npacket_size = \"30B\"\n");
    let e = run_live(Scenario::parse(&tiny, "u.toml").unwrap(), None, &mut || false).err().expect("refused");
    assert_eq!(e.field, "flow[1].packet_size");
}

/// A reverse flow live: its data crosses the reverse bottleneck (the
/// emulator's reverse counts), its reports the forward one, beside a
/// forward flow; each gets about its own link, as simulated.
#[test]
fn a_reverse_flow_crosses_the_reverse_bottleneck() {
    let text = CALL.replace("duration = \"3s\"", "duration = \"4s\"").replace(
        "queue = \"100ms\"\n",
        "queue = \"100ms\"\nreverse_capacity = \"1Mbps\"\nreverse_queue = \"100ms\"\n",
    ) + "[[flow]]\nname = \"down\"\ncontroller = { name = \"fixed\", rate = \"600kbps\" }\nencoder = \"ideal\"\ndirection = \"reverse\"\n";
    let sc = Scenario::parse(&text, "r.toml").unwrap();
    let sim = rtcc_sim::run_text(&text, "r.toml", None).unwrap();
    let live = run_live(sc, None, &mut || false).unwrap_or_else(|e| panic!("{e}"));
    let (f, s) = (&live.output.summary.flows, &sim.summary.flows);
    assert_eq!(f[1].direction, "reverse");
    for i in 0..2 {
        assert!(
            (f[i].goodput_kbps / s[i].goodput_kbps - 1.0).abs() < 0.05,
            "flow {i}: live {} sim {}",
            f[i].goodput_kbps,
            s[i].goodput_kbps
        );
        let (lo, so) = (f[i].owd_ms_mean.unwrap(), s[i].owd_ms_mean.unwrap());
        assert!(lo < so + 10.0, "flow {i}: owd live {lo} sim {so}");
    }
    // The reverse flow's media (~600 kbps, ~55 packets a second) went the
    // reverse way, as did the forward flow's reports; the forward way
    // carried the forward flow's media and the reverse flow's reports.
    let (fwd, rev) = (&live.live.forward, &live.live.reverse);
    assert!(rev.delivered_bytes as f64 > 0.9 * 600e3 / 8.0 * 4.0, "{rev:?}");
    assert!(fwd.delivered > rev.delivered, "{fwd:?} {rev:?}");
    assert_eq!((live.live.refused, live.live.unmatched, live.live.socket_drops), (0, 0, 0));
}

/// A real VP8 encoder in real time, on a thread of its own: every capture
/// encoded, the pictures decoded and scored (after the run), and the
/// quality the simulator measures for the same call.
#[test]
fn a_real_codec_encodes_live_on_its_own_thread() {
    if let Err(e) = rtcc_video::codec::Codec::Vp8.available() {
        if std::env::var("RTCC_REQUIRE_CODECS").as_deref() == Ok("1") {
            panic!("{e}");
        }
        eprintln!("skipped: {e}");
        return;
    }
    let text =
        CALL.replace("encoder = \"ideal\"", "encoder = \"vp8\"\nresolution = \"360p\"\ncontent = \"talking-head\"");
    let sim = rtcc_sim::run_text(&text, "vp8.toml", None).unwrap();
    let live =
        run_live(Scenario::parse(&text, "vp8.toml").unwrap(), None, &mut || false).unwrap_or_else(|e| panic!("{e}"));
    let (s, l) = (&sim.summary.flows[0], &live.output.summary.flows[0]);
    let enc = &live.live.encoders;
    eprintln!("sim {s:?}\nlive {l:?}\n{enc:?}");
    assert_eq!(enc.len(), 1);
    assert_eq!((enc[0].flow, enc[0].codec.as_str()), (0, "vp8"));
    // 5 s at 30 fps: every capture reached the encoder or was counted.
    assert!(enc[0].encoded + enc[0].overruns >= 145, "{enc:?}");
    assert!(enc[0].encode_ms.is_some_and(|m| m[0] > 0.0));
    assert_eq!((l.quality_source.as_str(), l.decode_errors), ("decoded", 0));
    assert!(
        l.frames_displayed as f64 >= 0.9 * s.frames_displayed as f64,
        "{} vs {}",
        l.frames_displayed,
        s.frames_displayed
    );
    let (sp, lp) = (s.psnr_db_mean.unwrap(), l.psnr_db_mean.unwrap());
    assert!((sp - lp).abs() < 1.5, "PSNR sim {sp} dB, live {lp} dB");
}

/// A UDP flow's packets cross live as datagrams of their size (the IP
/// packet the simulator counts), beside a call, as simulated.
#[test]
fn a_udp_flow_is_datagrams_of_its_size() {
    let call = CALL.split("[[flow]]").next().unwrap();
    let text = format!("{call}[[flow]]\nname = \"cbr\"\nkind = \"udp\"\nrate = \"600kbps\"\npacket_size = \"1000B\"\n");
    let sim = rtcc_sim::run_text(&text, "udp.toml", None).unwrap();
    let live =
        run_live(Scenario::parse(&text, "udp.toml").unwrap(), None, &mut || false).unwrap_or_else(|e| panic!("{e}"));
    let (s, l) = (&sim.summary.flows[0], &live.output.summary.flows[0]);
    eprintln!(
        "sim {:.0} kbps {} packets, live {:.0} kbps {} packets",
        s.goodput_kbps, s.packets_sent, l.goodput_kbps, l.packets_sent
    );
    assert!(l.packets_sent.abs_diff(s.packets_sent) <= 2, "{} vs {}", l.packets_sent, s.packets_sent);
    assert!((l.goodput_kbps / s.goodput_kbps - 1.0).abs() < 0.03, "{} vs {}", l.goodput_kbps, s.goodput_kbps);
    // The emulator saw each as 972 B of UDP payload (+28 it charges).
    let fwd = &live.live.forward;
    assert!(fwd.received + 2 >= l.packets_sent, "{fwd:?}");
    assert_eq!(fwd.received_bytes, 972 * fwd.received, "{fwd:?}");
    assert_eq!((live.live.undecodable, live.live.unmatched), (0, 0));
}

/// A stop request ends the run where it is, with results up to there.
#[test]
fn a_stopped_run_keeps_what_ran() {
    let sc = Scenario::parse(CALL, "live.toml").unwrap();
    let t0 = std::time::Instant::now();
    let mut stop = || t0.elapsed() > std::time::Duration::from_millis(1_500);
    let live = run_live(sc, None, &mut stop).unwrap();
    let s = &live.output.summary;
    assert!(s.duration_s > 1.4 && s.duration_s < 2.0, "{}", s.duration_s);
    assert!(s.flows[0].frames_displayed > 20, "{}", s.flows[0].frames_displayed);
}

/// A flow's `access_delay` is its own, live as simulated: 30 ms more one way.
#[test]
fn access_delay_is_per_flow() {
    let text = "name = \"access\"\nduration = \"3s\"\n[link]\ncapacity = \"4Mbps\"\ndelay = \"10ms\"\n\
                [[flow]]\ncontroller = { name = \"fixed\", rate = \"500kbps\" }\nencoder = \"ideal\"\n\
                [[flow]]\ncontroller = { name = \"fixed\", rate = \"500kbps\" }\nencoder = \"ideal\"\n\
                access_delay = \"30ms\"\n";
    let live = run_live(Scenario::parse(text, "a.toml").unwrap(), None, &mut || false).unwrap();
    let f = &live.output.summary.flows;
    let gap = f[1].owd_ms_mean.unwrap() - f[0].owd_ms_mean.unwrap();
    assert!((gap - 30.0).abs() < 3.0, "{gap} ms");
}
