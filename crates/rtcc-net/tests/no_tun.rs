//! A machine without the TUN bottleneck (`RTCC_NO_TUN`, set for this
//! test binary alone: another test could not see it change).

use rtcc_net::live::{run_live_with, Bottleneck, LiveOptions};
use rtcc_sim::Scenario;

const CALL: &str = "name = \"tun\"\nduration = \"4s\"\nseed = 5\n[link]\ncapacity = \"3Mbps\"\ndelay = \"20ms\"\n\
                    queue = \"100ms\"\n[[flow]]\nname = \"call\"\ncontroller = { name = \"fixed\", rate = \"1500kbps\" }\n\
                    encoder = \"ideal\"\n";

/// Without TUN a scenario with TCP is refused, saying why, unless the
/// fallback was asked for: then the video flows run on the UDP form and
/// the TCP flows are named as left out.
#[test]
fn without_tun_tcp_is_refused_or_left_out() {
    let text = format!("{CALL}[[flow]]\nname = \"bulk\"\nkind = \"tcp\"\ncc = \"cubic\"\n");
    // SAFETY: the only test in this binary.
    unsafe { std::env::set_var("RTCC_NO_TUN", "1") };
    let sc = || Scenario::parse(&text, "t.toml").unwrap();
    let refuse = LiveOptions { bottleneck: Bottleneck::Auto, ..LiveOptions::default() };
    let e = run_live_with(sc(), None, refuse, &mut || false).err().expect("refused");
    assert!(e.reason.contains("not available") && e.reason.contains("fallback"), "{e}");
    let fall = LiveOptions { bottleneck: Bottleneck::Auto, fallback: true, ..LiveOptions::default() };
    let t0 = std::time::Instant::now();
    let mut stop = || t0.elapsed() > std::time::Duration::from_millis(1_000);
    let r = run_live_with(sc(), None, fall, &mut stop).unwrap_or_else(|e| panic!("{e}"));
    unsafe { std::env::remove_var("RTCC_NO_TUN") };
    assert_eq!(r.live.bottleneck, "udp-emulator");
    assert_eq!(r.live.left_out, vec!["bulk".to_string()]);
    assert!(r.live.fallback_reason.as_deref().is_some_and(|w| w.contains("RTCC_NO_TUN")));
    assert_eq!(r.output.summary.flows.len(), 1);
}
