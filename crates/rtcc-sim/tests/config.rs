//! One way into configuration: a flow's quantity fields follow the core's one
//! bare-number rule (a number is seconds, bits per second or bytes), and every
//! refusal reads `file: field: reason`.

use rtcc_core::feedback::ReportFormat;
use rtcc_core::units::{DataRate, Duration, Time};
use rtcc_sim::{Scenario, ScenarioError};

fn scenario(flow: &str) -> Result<Scenario, ScenarioError> {
    let text = format!(
        "duration = 20\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\ncontroller = \"fixed\"\n{flow}\n"
    );
    Scenario::parse(&text, "call.toml")
}

fn refusal(flow: &str) -> String {
    match scenario(flow) {
        Ok(_) => panic!("accepted: {flow}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_bare_number_is_the_base_unit_in_every_flow_field() {
    let bare = scenario("start = 1\nstop = 12.5\nfeedback_interval = 0.05\nmtu = 1000\nmax_rate = 4e6").unwrap();
    let units = scenario(
        "start = \"1s\"\nstop = \"12.5s\"\nfeedback_interval = \"50ms\"\nmtu = \"1000B\"\nmax_rate = \"4Mbps\"",
    )
    .unwrap();
    let (b, u) = (&bare.flows[0], &units.flows[0]);
    assert_eq!(b.sender.start, Time::from_millis(1000));
    assert_eq!((b.sender.start, b.sender.stop), (u.sender.start, u.sender.stop));
    assert_eq!(b.receiver.interval, Duration::from_millis(50));
    assert_eq!(b.receiver.interval, u.receiver.interval);
    assert_eq!((b.ctx.mtu, b.ctx.max_rate), (u.ctx.mtu, u.ctx.max_rate));
    assert_eq!(b.ctx.max_rate, DataRate::from_mbps(4));
    // The top-level duration follows the same rule.
    assert_eq!(bare.duration, Duration::from_secs(20));
}

#[test]
fn refusals_name_file_field_and_reason() {
    assert_eq!(refusal("start = -1"), "call.toml: flow[0].start: '-1' must not be negative");
    assert_eq!(
        refusal("start = \"1 fortnight\""),
        "call.toml: flow[0].start: unknown unit 'fortnight' (expected one of us, ms, s, min)"
    );
    let bad_param = |controller: &str| {
        let text = format!(
            "duration = \"20s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\ncontroller = {controller}\n"
        );
        Scenario::parse(&text, "call.toml").err().map(|e| e.to_string()).unwrap_or_default()
    };
    assert_eq!(
        bad_param("{ name = \"copa\", delta = 2 }"),
        "call.toml: flow[0].controller.delta: 2 is outside [0.001, 1]"
    );
    assert_eq!(
        bad_param("{ name = \"copa+dumbo\", standing_window = 0 }"),
        "call.toml: flow[0].controller.standing_window: 0s is outside (0s, 10s]"
    );
    // Integer parameters refuse fractions.
    assert_eq!(
        bad_param("{ name = \"vivace\", mi_packets = 2.5 }"),
        "call.toml: flow[0].controller.mi_packets: 2.5 is not a whole number"
    );
    assert!(bad_param("{ name = \"copa\", bogus = 1 }")
        .starts_with("call.toml: flow[0].controller.bogus: unknown parameter (known: delta, "));
    assert!(bad_param("\"nope\"").starts_with("call.toml: flow[0].controller: unknown controller 'nope' (registered: "));
    assert_eq!(refusal("fec = { group = 2.5 }"), "call.toml: flow[0].fec.group: 2.5 is not a whole number");
}

/// A controller says whether its window drives pushback by default (WebRTC's
/// BBR and the Dumbo thesis's Copa and RoCC give it to the pacer); a flow's
/// `cwnd_pushback` overrides it, and a wrapper takes its inner controller's.
/// Only `cross` counts the pacer queue in the fill.
#[test]
fn cwnd_pushback_defaults_to_the_controllers_choice() {
    let pushback = |controller: &str, extra: &str| {
        let text =
            format!("duration = 20\n[link]\ncapacity = \"3Mbps\"\n[[flow]]\ncontroller = \"{controller}\"\n{extra}\n");
        let s = Scenario::parse(&text, "call.toml").unwrap().flows[0].sender.clone();
        (s.cwnd_pushback, s.pushback_pacer)
    };
    assert_eq!(pushback("bbr", ""), (false, false));
    assert_eq!(pushback("bbr", "cwnd_pushback = true"), (true, false));
    assert_eq!(pushback("copa", ""), (false, false));
    assert_eq!(pushback("rocc+dumbo", ""), (false, false));
    assert_eq!(pushback("copa", "cwnd_pushback = true"), (true, false));
    assert_eq!(pushback("fixed", ""), (true, false));
    assert_eq!(pushback("cross", ""), (true, true));
    assert_eq!(pushback("cross", "cwnd_pushback = false"), (false, true));
}

#[test]
fn content_encoder_profiles_and_refusals() {
    use rtcc_core::encoder::{ContentProfile, EncoderConfig};
    let content = |enc: &str| match scenario(&format!("encoder = {enc}")).unwrap().flows[0].encoder.clone() {
        EncoderConfig::Content(c) => c,
        other => panic!("{enc}: {other:?}"),
    };
    assert_eq!(content("\"content\""), ContentProfile::Dynamic.config());
    assert_eq!(content("{ kind = \"content\", profile = \"static\" }"), ContentProfile::Static.config());
    let c = content("{ kind = \"content\", profile = \"static\", ti = 9, scene_length = \"20s\" }");
    assert_eq!((c.profile, c.track.ti, c.track.scene_length), (ContentProfile::Static, 9.0, Duration::from_secs(20)));
    assert_eq!(scenario("encoder = \"content\"").unwrap().flows[0].encoder_kind(), "content");

    // Each refusal names the field.
    let field = |enc: &str| {
        let r = refusal(&format!("encoder = {enc}"));
        r.split(": ").nth(1).unwrap_or_default().to_string()
    };
    assert_eq!(field("{ kind = \"content\", ti = -3 }"), "flow[0].encoder.ti");
    assert_eq!(field("{ kind = \"content\", scene_length = \"-2s\" }"), "flow[0].encoder.scene_length");
    assert_eq!(field("{ kind = \"content\", gamma = -1 }"), "flow[0].encoder.gamma");
    assert_eq!(field("{ kind = \"content\", sigma = -0.2 }"), "flow[0].encoder.sigma");
    assert_eq!(field("{ kind = \"content\", rc_buffer = 0 }"), "flow[0].encoder.rc_buffer");
    assert_eq!(field("{ kind = \"content\", tau_up = 1 }"), "flow[0].encoder.tau_up");
    // A name that is neither a content profile nor a file.
    let r = refusal("encoder = { kind = \"content\", profile = \"busy\" }");
    assert!(r.starts_with("call.toml: flow[0].encoder.profile: 'busy' is neither"), "{r}");
    // A codec profile belongs to the lagging model.
    let r = refusal("encoder = { kind = \"content\", profile = \"vp8\" }");
    assert!(r.starts_with("call.toml: flow[0].encoder.profile: 'vp8' is a codec profile"), "{r}");
    assert!(r.contains("static, dynamic"), "{r}");
    // The content profiles are the content model's alone.
    let r = refusal("encoder = { kind = \"lagging\", profile = \"dynamic\" }");
    assert!(r.starts_with("call.toml: flow[0].encoder.profile: 'dynamic' is neither"), "{r}");
}

#[test]
fn content_encoder_profile_files_set_its_constants() {
    let dir = std::env::temp_dir().join(format!("rtcc-content-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("p.toml"), "[encoder]\nprofile = \"static\"\nti = 7.5\nsigma = 0.2\n").unwrap();
    std::fs::write(dir.join("bad.toml"), "[encoder]\nprofile = \"busy\"\n").unwrap();
    let run = |enc: &str| {
        let text = format!(
            "duration = 20\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\ncontroller = \"fixed\"\nencoder = {enc}\n"
        );
        Scenario::parse(&text, dir.join("call.toml").to_str().unwrap())
    };
    let s = run("{ kind = \"content\", profile = \"p.toml\", sigma = 0.3 }").unwrap();
    let rtcc_core::encoder::EncoderConfig::Content(c) = s.flows[0].encoder.clone() else { panic!("content") };
    // The file's profile and values, the table's own value over the file's.
    assert_eq!(c.profile, rtcc_core::encoder::ContentProfile::Static);
    assert_eq!((c.track.ti, c.sigma), (7.5, 0.3));
    let e = run("{ kind = \"content\", profile = \"bad.toml\" }").err().expect("refused").to_string();
    assert!(e.contains("flow[0].encoder.profile"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// RR + XR carry no arrival times: a controller that reads them is refused
/// with the file, the flow's field and why; one that runs on RR + XR is not.
#[test]
fn rtcp_xr_refuses_a_controller_that_reads_arrival_times() {
    let with = |controller: &str| {
        let text = format!(
            "duration = \"20s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\ncontroller = \"fixed\"\n\
             [[flow]]\ncontroller = {controller}\nreport_format = \"rtcp-xr\"\n"
        );
        Scenario::parse(&text, "call.toml").map(|_| ()).map_err(|e| e.to_string())
    };
    for name in ["\"gcc\"", "\"c-nadu\"", "\"rrtcc\"", "\"copa+dumbo\""] {
        let e = with(name).unwrap_err();
        assert!(
            e.starts_with("call.toml: flow[1].report_format: 'rtcp-xr' carries no per-packet arrival times"),
            "{e}"
        );
        assert!(e.contains(&format!("controller '{}' reads them", name.trim_matches('"'))), "{e}");
    }
    assert_eq!(with("\"fixed\""), Ok(()));
    assert_eq!(with("{ name = \"fbra\", report_interval = \"50ms\" }"), Ok(()));
}

/// A flow that names no report format gets its controller's: FBRA's RTCP
/// RR + XR (its discards travel only in the discard RLE), RFC 8888 for Copa,
/// RoCC, PIBES and any Dumbo wrapper (the receiver's hold time), libwebrtc's transport-wide CC for the
/// rest.
#[test]
fn an_unnamed_report_format_is_the_controllers_own() {
    let format = |controller: &str, line: &str| {
        let text = format!(
            "duration = \"20s\"\n[link]\ncapacity = \"3Mbps\"\ndelay = \"25ms\"\n[[flow]]\ncontroller = \"{controller}\"\n{line}"
        );
        Scenario::parse(&text, "call.toml").unwrap().flows[0].receiver.report_format
    };
    assert_eq!(format("fbra", ""), ReportFormat::RtcpXr);
    assert_eq!(format("fbra", "report_format = \"twcc\"\n"), ReportFormat::Twcc);
    for name in ["gcc", "rrtcc", "c-nadu", "fixed"] {
        assert_eq!(format(name, ""), ReportFormat::Twcc, "{name}");
    }
    // Copa, RoCC, PIBES and every Dumbo wrapper need the receiver's hold time: RFC 8888.
    for name in ["copa", "rocc", "copa+dumbo", "rocc+dumbo", "gcc+dumbo", "fbra+dumbo", "pibes"] {
        assert_eq!(format(name, ""), ReportFormat::Rfc8888, "{name}");
    }
}
