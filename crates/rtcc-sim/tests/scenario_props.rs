//! Property tests of the scenario parser: random valid scenarios parse to
//! exactly what they say; one field replaced by a bad value is refused with
//! an error naming the file and that field; and no text makes the parser
//! panic.

use proptest::prelude::*;
use rtcc_core::units::{DataRate, Duration, Time};
use rtcc_sim::Scenario;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(256)
}

const CONTROLLERS: &[&str] = &["gcc", "copa", "rocc", "vivace", "fixed", "copa+dumbo"];

/// A flow: controller, start (ms), optional stop (ms after start), access delay (ms).
#[derive(Clone, Debug)]
struct FlowGen {
    controller: &'static str,
    start_ms: u64,
    stop_after_ms: Option<u64>,
    access_ms: u64,
}

#[derive(Clone, Debug)]
struct ScenarioGen {
    duration_s: u64,
    capacity_kbps: u64,
    delay_ms: u64,
    bare_numbers: bool,
    flows: Vec<FlowGen>,
}

fn scenario_gen() -> impl Strategy<Value = ScenarioGen> {
    let flow = (prop::sample::select(CONTROLLERS), 0u64..5_000, prop::option::of(1u64..10_000), 0u64..100).prop_map(
        |(controller, start_ms, stop_after_ms, access_ms)| FlowGen { controller, start_ms, stop_after_ms, access_ms },
    );
    (10u64..600, 100u64..100_000, 0u64..300, any::<bool>(), prop::collection::vec(flow, 1..6)).prop_map(
        |(duration_s, capacity_kbps, delay_ms, bare_numbers, flows)| ScenarioGen {
            duration_s,
            capacity_kbps,
            delay_ms,
            bare_numbers,
            flows,
        },
    )
}

/// A duration in ms as text: with a unit, or a bare number of seconds.
fn dur(ms: u64, bare: bool) -> String {
    if bare {
        format!("{}", ms as f64 / 1000.0)
    } else {
        format!("\"{ms}ms\"")
    }
}

fn render(g: &ScenarioGen) -> String {
    let b = g.bare_numbers;
    let mut s = format!(
        "duration = {}\n[link]\ncapacity = {}\ndelay = {}\n",
        dur(g.duration_s * 1000, b),
        if b { format!("{}", g.capacity_kbps * 1000) } else { format!("\"{}kbps\"", g.capacity_kbps) },
        dur(g.delay_ms, b),
    );
    for (i, f) in g.flows.iter().enumerate() {
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\ncontroller = \"{}\"\nstart = {}\naccess_delay = {}\n",
            f.controller,
            dur(f.start_ms, b),
            dur(f.access_ms, b)
        );
        if let Some(after) = f.stop_after_ms {
            s += &format!("stop = {}\n", dur(f.start_ms + after, b));
        }
    }
    s
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn valid_scenarios_parse_to_what_they_say(g in scenario_gen()) {
        let text = render(&g);
        let sc = Scenario::parse(&text, "gen.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(sc.duration, Duration::from_secs(g.duration_s as i64));
        prop_assert_eq!(sc.flows.len(), g.flows.len());
        let link = sc.link.build(std::path::Path::new(".")).unwrap();
        prop_assert_eq!(sc.link.path_spec("link").unwrap().delay, Duration::from_millis(g.delay_ms as i64));
        prop_assert_eq!(link.capacity().rate_at(Time::ZERO), DataRate::from_kbps(g.capacity_kbps));
        for (f, spec) in g.flows.iter().zip(&sc.flows) {
            prop_assert_eq!(spec.controller.as_str(), f.controller);
            prop_assert_eq!(spec.sender.start, Time::from_millis(f.start_ms as i64));
            prop_assert_eq!(spec.sender.stop, f.stop_after_ms.map(|a| Time::from_millis((f.start_ms + a) as i64)));
            prop_assert_eq!(spec.access_delay, Duration::from_millis(f.access_ms as i64));
        }
    }

    #[test]
    fn one_bad_field_is_named(g in scenario_gen(), which in 0usize..5, bad in prop::sample::select(vec![
        "\"fast\"", "-3", "\"-1s\"", "[1, 2]", "{ x = 1 }", "true", "\"\"",
    ])) {
        let text = render(&g);
        // The field to spoil, as it appears in the text and in the error.
        let (key, field) = match which {
            0 => ("duration = ", "duration".to_string()),
            1 => ("capacity = ", "link.capacity".to_string()),
            2 => ("controller = ", "flow[0].controller".to_string()),
            3 => ("start = ", "flow[0].start".to_string()),
            _ => ("access_delay = ", "flow[0].access_delay".to_string()),
        };
        let line = text.lines().find(|l| l.starts_with(key)).unwrap();
        let spoiled = text.replacen(line, &format!("{key}{bad}"), 1);
        match Scenario::parse(&spoiled, "gen.toml") {
            Ok(_) => prop_assert!(false, "accepted {bad} for {field}"),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("gen.toml"), "{msg}");
                prop_assert!(msg.contains(&field), "{field} not named in: {msg}");
            }
        }
    }

    #[test]
    fn no_text_panics(text in "\\PC{0,400}") {
        if let Err(e) = Scenario::parse(&text, "any.toml") {
            prop_assert!(e.to_string().starts_with("any.toml"));
        }
    }

    #[test]
    fn no_near_scenario_panics(g in scenario_gen(), cut in 0usize..2000, junk in "[ -~]{0,20}") {
        let text = render(&g);
        let at = text.char_indices().map(|(i, _)| i).nth(cut % text.len().max(1)).unwrap_or(0);
        let mangled = format!("{}{junk}{}", &text[..at], &text[at..]);
        if let Err(e) = Scenario::parse(&mangled, "near.toml") {
            prop_assert!(e.to_string().starts_with("near.toml"), "{e}");
        }
    }
}
