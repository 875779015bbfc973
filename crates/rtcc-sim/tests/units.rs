//! Units cannot be dropped by accident: text without a unit is refused in
//! every quantity field, and a capacity under 10 kbps or a one-way delay
//! over 10 s is refused unless the scenario sets `allow_extreme = true`.

use rtcc_sim::Scenario;

/// A one-flow scenario with `top` lines, `link` lines after the capacity and
/// `flow` lines in the flow's table.
fn scenario(top: &str, capacity: &str, link: &str, flow: &str) -> String {
    format!(
        "duration = \"5s\"\n{top}\n[link]\ncapacity = {capacity}\n{link}\n\
         [[flow]]\ncontroller = {{ name = \"fixed\", rate = \"500kbps\" }}\nencoder = \"ideal\"\n{flow}\n"
    )
}

fn refusal(text: &str) -> String {
    match Scenario::parse(text, "s.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn accepted(text: &str) {
    if let Err(e) = Scenario::parse(text, "s.toml") {
        panic!("refused: {e}\n{text}");
    }
}

#[test]
fn text_without_a_unit_is_refused_naming_the_units() {
    assert_eq!(
        refusal(&scenario("", "\"3\"", "", "")),
        r#"s.toml: link.capacity: "3" has no unit; write "3kbps", "3Mbps", ... (rates: bps, kbps, Mbps, Gbps)"#
    );
    assert_eq!(
        refusal(&scenario("", "\"3Mbps\"", "delay = \"25\"", "")),
        r#"s.toml: link.delay: "25" has no unit; write "25ms", "25s", ... (durations: us, ms, s, min)"#
    );
    let flow = refusal(&scenario("", "\"3Mbps\"", "", "max_rate = \"3\""));
    assert!(flow.starts_with(r#"s.toml: flow[0].max_rate: "3" has no unit; write "3kbps""#), "{flow}");
    let param = refusal(&scenario("", "\"3Mbps\"", "", "").replace("\"500kbps\"", "\"500000\""));
    assert!(param.contains(r#"flow[0].controller.rate: "500000" has no unit"#), "{param}");
    let udp = "[[flow]]\nkind = \"udp\"\nrate = \"1\"\n";
    let udp = refusal(&format!("{}{udp}", scenario("", "\"3Mbps\"", "", "")));
    assert!(udp.contains(r#"flow[1].rate: "1" has no unit"#), "{udp}");
    assert!(refusal(&scenario("duration = \"5\"", "\"3Mbps\"", "", "").replace("duration = \"5s\"\n", ""))
        .contains(r#"duration: "5" has no unit"#));
    // A bare number keeps the base-unit rule.
    accepted(&scenario("", "3000000", "delay = 0.025", "start = 1"));
}

#[test]
fn a_capacity_under_10_kbps_is_refused_in_every_form() {
    let bare =
        "link.capacity: 3 bps (a bare number is bits/s) is under 10 kbps; write a unit, or set allow_extreme = true";
    assert_eq!(refusal(&scenario("", "3", "", "")), format!("s.toml: {bare}"));
    assert_eq!(
        refusal(&scenario("", "\"5kbps\"", "", "")),
        "s.toml: link.capacity: \"5kbps\" is under 10 kbps; set allow_extreme = true if the scenario means it"
    );
    for (capacity, field) in [
        ("{ kind = \"constant\", rate = 9999 }", "link.capacity.rate"),
        ("{ kind = \"pulse\", high = \"3Mbps\", low = 500, every = \"10s\" }", "link.capacity.low"),
        ("{ kind = \"square\", high = 4, low = \"1Mbps\", period = \"2s\", duty = 0.5 }", "link.capacity.high"),
        ("{ kind = \"step\", steps = [[\"0s\", \"1Mbps\"], [\"1s\", \"1kbps\"]] }", "link.capacity.steps[1]"),
        ("{ kind = \"ramp\", from = 100, to = \"2Mbps\", duration = \"3s\" }", "link.capacity.from"),
    ] {
        let e = refusal(&scenario("", capacity, "", ""));
        assert!(e.starts_with(&format!("s.toml: {field}: ")) && e.contains("is under 10 kbps"), "{capacity}: {e}");
        accepted(&scenario("allow_extreme = true", capacity, "", ""));
    }
    let reverse = refusal(&scenario("", "\"3Mbps\"", "reverse_capacity = 64", ""));
    assert!(reverse.starts_with("s.toml: link.reverse_capacity: 64 bps (a bare number is bits/s)"), "{reverse}");
    // Zero is an outage, 10 kbps is the threshold itself.
    accepted(&scenario("", "{ kind = \"pulse\", high = \"3Mbps\", low = 0, every = \"1s\" }", "", ""));
    accepted(
        &scenario("", "\"10kbps\"", "queue = \"2s\"", "")
            .replace("500kbps", "5kbps")
            .replace("encoder = \"ideal\"", "encoder = \"ideal\"\nmin_rate = \"1kbps\""),
    );
}

#[test]
fn a_delay_over_10_s_is_refused_wherever_it_is_given() {
    assert_eq!(
        refusal(&scenario("", "\"3Mbps\"", "delay = 25", "")),
        "s.toml: link.delay: 25 s (a bare number is seconds) is over 10 s; write a unit, or set allow_extreme = true"
    );
    for (link, flow, field) in [
        ("reverse_delay = \"11s\"", "", "link.reverse_delay"),
        ("jitter = 12", "", "link.jitter"),
        ("", "access_delay = 20", "flow[0].access_delay"),
    ] {
        let e = refusal(&scenario("", "\"3Mbps\"", link, flow));
        assert!(e.starts_with(&format!("s.toml: {field}: ")) && e.contains("is over 10 s"), "{field}: {e}");
        accepted(&scenario("allow_extreme = true", "\"3Mbps\"", link, flow));
    }
    // Cross traffic's access delay has a hard bound of its own (`traffic::parse`).
    let tcp = format!("{}[[flow]]\nkind = \"tcp\"\naccess_delay = \"1min\"\n", scenario("", "\"3Mbps\"", "", ""));
    assert!(refusal(&tcp).starts_with("s.toml: flow[1].access_delay: "));
    accepted(&scenario("", "\"3Mbps\"", "delay = 10", "access_delay = \"10s\""));
}

#[test]
fn the_shipped_scenarios_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            if let Err(e) = Scenario::parse(&text, path.to_str().unwrap()) {
                // A real codec or trace may be missing here; a unit never is.
                assert!(!e.to_string().contains("unit") && !e.to_string().contains("allow_extreme"), "{e}");
            }
        }
    }
}
