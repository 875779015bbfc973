//! Hostile and absurd inputs: each is refused with one line
//! `file: field: reason` in plain words, or gives a result whose counts add
//! up. Every test here failed before its fix.

mod common;

use common::{i64s, u8s, Call};
use rtcc_sim::{Scenario, ScenarioError};

fn parse(flow: &str, link: &str) -> Result<Scenario, ScenarioError> {
    let text = format!("duration = 5\n[link]\ncapacity = \"3Mbps\"\n{link}\n[[flow]]\n{flow}\n");
    Scenario::parse(&text, "call.toml")
}

fn refusal(flow: &str, link: &str) -> String {
    match parse(flow, link) {
        Ok(_) => panic!("accepted: {flow} / {link}"),
        Err(e) => e.to_string(),
    }
}

fn plain(msg: &str) {
    assert_eq!(msg.lines().count(), 1, "{msg}");
    for serde_word in ["untagged", "variant", "invalid type", "f64", "u64", "sequence", "map,"] {
        assert!(!msg.contains(serde_word), "serde wording '{serde_word}' in: {msg}");
    }
}

#[test]
fn wrong_types_are_told_in_plain_words_naming_the_field() {
    let cases = [
        ("controller = \"fixed\"\nstart = { a = 1 }", "call.toml: flow[0].start: expected a number or a string with a unit such as \"25ms\", \"3Mbps\" or \"1500B\", got a table"),
        ("controller = \"fixed\"\nmax_rate = true", "call.toml: flow[0].max_rate: expected a number or a string with a unit such as \"25ms\", \"3Mbps\" or \"1500B\", got a boolean (true)"),
        ("controller = \"fixed\"\nmtu = [1, 2]", "call.toml: flow[0].mtu: expected a number or a string with a unit such as \"25ms\", \"3Mbps\" or \"1500B\", got an array"),
        ("controller = 5", "call.toml: flow[0].controller: expected a name (a string such as \"gcc\") or a table of parameters, got a number (5)"),
        ("controller = \"fixed\"\nencoder = [\"x\"]", "call.toml: flow[0].encoder: expected a name (a string such as \"gcc\") or a table of parameters, got an array"),
        ("controller = \"fixed\"\nfec = \"yes\"", "call.toml: flow[0].fec: expected true, false or a table of parameters, got a string"),
        ("controller = \"fixed\"\naudio = 1", "call.toml: flow[0].audio: expected true, false or a table of parameters, got a number (1)"),
        ("controller = \"fixed\"\nfps = \"30\"", "call.toml: flow[0].fps: expected a number, got a string (\"30\")"),
        ("controller = \"fixed\"\nnack = 1", "call.toml: flow[0].nack: expected true or false, got a number (1)"),
    ];
    for (flow, want) in cases {
        let got = refusal(flow, "");
        assert_eq!(got, format!("{want} (flow at line 5)"));
        plain(&got);
    }
    // The top level and the link go the same way.
    let e =
        Scenario::parse("duration = { s = 5 }\n[link]\ncapacity = \"3Mbps\"\n", "call.toml").err().expect("refused");
    assert!(e.to_string().starts_with("call.toml: duration: expected a number or a string with a unit"), "{e}");
    assert!(e.to_string().contains("got a table"), "{e}");
    let e =
        Scenario::parse("duration = 1979-05-27\n[link]\ncapacity = \"3Mbps\"\n", "call.toml").err().expect("refused");
    assert!(e.to_string().contains("got a date"), "{e}");
    let e = refusal("controller = \"fixed\"", "queue = true");
    assert!(e.starts_with("call.toml: link.queue: expected a queue limit such as"), "{e}");
    assert!(e.contains("got a boolean (true)"), "{e}");
    plain(&e);
    let e = refusal("controller = \"fixed\"", "delay = [1]");
    assert!(e.starts_with("call.toml: link.delay: expected a number or a string with a unit"), "{e}");
    plain(&e);
}

#[test]
fn a_queue_smaller_than_one_packet_is_refused() {
    let e = refusal("controller = \"fixed\"", "queue = \"1B\"");
    assert!(
        e.starts_with("call.toml: link.queue: queue limit '1B' holds less than one 1500-byte packet (one MTU)"),
        "{e}"
    );
    let e = refusal("controller = \"fixed\"", "queue = { kind = \"codel\", limit = \"1kB\" }");
    assert!(
        e.starts_with("call.toml: link.queue.limit: queue limit '1kB' holds less than one 1500-byte packet"),
        "{e}"
    );
    // A time limit is judged at the link's peak capacity: 1 ms at 3 Mbps is 375 B.
    let e = refusal("controller = \"fixed\"", "queue = \"1ms\"");
    assert!(
        e.starts_with("call.toml: link.queue: queue limit 1ms holds 375 B at the link's peak capacity 3 Mbps, less than one 1500-byte packet"),
        "{e}"
    );
    assert!(e.ends_with("use at least 4ms"), "{e}");
    let e = refusal(
        "controller = \"fixed\"",
        "reverse_capacity = \"100kbps\"\nreverse_queue = { kind = \"droptail\", limit = \"50ms\" }",
    );
    assert!(e.starts_with("call.toml: link.reverse_queue.limit: queue limit 50ms holds 625 B"), "{e}");
    assert!(parse("controller = \"fixed\"", "queue = \"4ms\"").is_ok());
    assert!(parse("controller = \"fixed\"", "queue = \"1500B\"").is_ok());
    assert!(parse("controller = \"fixed\"", "queue = \"1pkt\"").is_ok());
}

#[test]
fn a_fixed_rate_below_min_rate_or_absurdly_high_is_refused() {
    let e = refusal("controller = { name = \"fixed\", rate = \"5kbps\" }", "");
    assert_eq!(
        e,
        "call.toml: flow[0].controller.rate: the fixed rate 5 kbps is below the flow's min_rate 30 kbps: the encoder \
         never goes below min_rate, so the pacer could not keep up; raise controller.rate or lower min_rate"
    );
    assert!(parse("controller = { name = \"fixed\", rate = \"5kbps\" }\nmin_rate = \"5kbps\"", "").is_ok());
    let e = refusal("controller = \"fixed\"\nmin_rate = \"2Mbps\"", "");
    assert!(
        e.starts_with("call.toml: flow[0].min_rate: the fixed rate 1 Mbps is below the flow's min_rate 2 Mbps"),
        "{e}"
    );
    // Beyond what a µs clock can pace: refused before a run fills memory.
    let e = refusal("controller = { name = \"fixed\", rate = \"50Gbps\" }", "");
    assert!(
        e.starts_with(
            "call.toml: flow[0].controller.rate: pacing at rate × pacing_factor: 125000 Mbps is above 10000 Mbps, \
             the most one flow may send"
        ),
        "{e}"
    );
    let e = refusal("controller = { name = \"fixed\", rate = \"5Gbps\", pacing_factor = 4 }", "");
    assert!(
        e.starts_with("call.toml: flow[0].controller.pacing_factor: pacing at rate × pacing_factor: 20000 Mbps"),
        "{e}"
    );
    let e = refusal("controller = { name = \"fixed\", padding = \"11Gbps\" }", "");
    assert!(e.starts_with("call.toml: flow[0].controller.padding: 11000 Mbps is above"), "{e}");
    let e = refusal("controller = \"gcc\"\nmax_rate = \"100Gbps\"", "");
    assert!(e.starts_with("call.toml: flow[0].max_rate: 100000 Mbps is above 10000 Mbps"), "{e}");
    assert!(parse("controller = { name = \"fixed\", rate = \"4Gbps\" }\nmax_rate = \"10Gbps\"", "").is_ok());
}

#[test]
fn frames_never_delivered_count_as_sent_and_lost_at_full_loss() {
    // Exact timing: no packet is still on its way at the end (under realistic
    // timing the last one may be, and is then neither received nor lost).
    let out = Call::new("5s", "\"3Mbps\"").exact().link("loss = 1.0").fixed("1Mbps", "").run();
    let f = &out.summary.flows[0];
    assert!(f.packets_sent > 0 && f.packets_lost == f.packets_sent, "{} {}", f.packets_sent, f.packets_lost);
    assert!(f.frames_sent >= 140, "frames_sent {}", f.frames_sent);
    assert_eq!((f.frames_lost, f.frames_displayed), (f.frames_sent, 0));
    // Only frames still on their way when the run ends are left out: the
    // last one, whose packets were still crossing the link.
    let status = u8s(&out.frames, "status");
    let in_flight = status.iter().filter(|&&s| s == 4).count();
    assert!(in_flight <= 2 && status.iter().all(|&s| s == 1 || s == 4), "{status:?}");
    // Counts add up.
    assert_eq!(f.frames_sent, f.frames_displayed + f.frames_lost + f.frames_late);
}

#[test]
fn frames_in_the_network_at_the_end_stay_in_flight() {
    // A 10 s queue at 300 kbps: frames queued when the run ends are in
    // flight (status 4), not lost.
    let out = Call::new("5s", "\"300kbps\"").fixed("1Mbps", "").run();
    let status = u8s(&out.frames, "status");
    let f = &out.summary.flows[0];
    assert!(status.contains(&4), "{status:?}");
    assert_eq!(f.frames_lost, 0);
}

#[test]
fn skipped_captures_have_frame_minus_one_not_u32_max() {
    // The pacer at a fifth of the encoder's rate: the sender skips captures.
    let out = Call::new("5s", "\"3Mbps\"")
        .flow("controller = { name = \"fixed\", rate = \"300kbps\", pacing_factor = 0.2 }")
        .run();
    let frame = i64s(&out.frames, "frame");
    let status = u8s(&out.frames, "status");
    assert!(out.summary.flows[0].frames_skipped > 0);
    assert!(frame.iter().all(|&f| f >= -1 && f < u32::MAX as i64), "{frame:?}");
    for (f, s) in frame.iter().zip(status) {
        assert_eq!(*f == -1, *s == 3, "frame {f} status {s}");
    }
    // The same convention as the packets table's `frame`.
    assert!(i64s(&out.packets, "frame").iter().all(|&f| f >= -1 && f < u32::MAX as i64));
}

#[test]
fn trace_errors_in_a_scenario() {
    let dir = std::env::temp_dir().join(format!("rtcc-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bom.down"), b"\xef\xbb\xbf1\n2\n").unwrap();
    std::fs::write(dir.join("passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let scen = |cap: &str| {
        let text = format!("duration = 5\n[link]\ncapacity = {cap}\n[[flow]]\ncontroller = \"fixed\"\n");
        Scenario::parse(&text, dir.join("call.toml").to_str().unwrap()).err().map(|e| e.to_string())
    };
    assert_eq!(scen("{ kind = \"trace\", file = \"bom.down\" }"), None);
    let e = scen("{ kind = \"trace\", file = \"passwd\" }").expect("refused");
    assert!(
        e.ends_with(
            "passwd: not a trace in a known format (mahimahi, pensieve, opennetlab, gnettrack): it starts \
             'root:x:0:0:root:/roo…'"
        ),
        "{e}"
    );
    assert!(!e.contains("bash"));
    let t0 = std::time::Instant::now();
    let e = scen("{ kind = \"trace\", file = \"/dev/zero\" }").expect("refused");
    assert!(e.ends_with("link.capacity.file: /dev/zero: is not a regular file (a device, FIFO or socket); a trace must be a text file of timestamps"), "{e}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(1));
    let e = scen("{ kind = \"trace\", file = \"bom.down\", scale = 0.000001 }").expect("refused");
    assert!(e.contains("link.capacity.scale: scale 0.000001 is outside 1/3000"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_over_its_packet_budget_is_refused_before_it_starts_or_stopped_with_an_error() {
    let fast = |extra: &str| {
        format!(
            "duration = 120\n{extra}\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\ncontroller = {{ name = \"fixed\", rate = \"10Gbps\", pacing_factor = 1 }}\n"
        )
    };
    // 10 Gbps for 120 s is 125 million 1200 B packets: known before the run.
    let msg = Scenario::parse(&fast(""), "call.toml").err().expect("refused").to_string();
    plain(&msg);
    assert!(msg.starts_with("call.toml: limits.packets: "), "{msg}");
    assert!(msg.contains("about 125000000 packets") && msg.contains("budget of 100000000"), "{msg}");
    // The user can raise it (parsed only: the run itself would take minutes).
    Scenario::parse(&fast("[limits]\npackets = 200000000"), "call.toml").expect("a raised budget is accepted");
    // UDP at its rate counts the same way; TCP and adaptive video do not.
    let udp = "duration = 60\n[limits]\npackets = 1000\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\nkind = \"udp\"\nrate = \"1Mbps\"\n";
    let msg = Scenario::parse(udp, "u.toml").err().expect("refused").to_string();
    assert!(msg.contains("about 5000 packets"), "{msg}");
    let zero = Scenario::parse(
        "duration = 5\n[limits]\npackets = 0\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\ncontroller = \"gcc\"\n",
        "z.toml",
    );
    assert!(zero.err().expect("refused").to_string().contains("limits.packets: must be at least 1"));
    // An adaptive flow is stopped where it crosses the budget.
    let gcc = "duration = 30\n[limits]\npackets = 2000\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\ncontroller = \"gcc\"\n";
    let msg = rtcc_sim::run_text(gcc, "g.toml", None).err().expect("stopped").to_string();
    plain(&msg);
    assert!(msg.starts_with("g.toml: limits.packets: the run stopped at "), "{msg}");
    assert!(msg.contains("more than its budget of 2000 packets"), "{msg}");
    let ok =
        "duration = 30\n[limits]\npackets = 200000\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\ncontroller = \"gcc\"\n";
    let out = rtcc_sim::run_text(ok, "g.toml", None).expect("within budget");
    assert!(out.summary.flows[0].packets_sent > 2000);
}
