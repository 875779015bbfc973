//! `cargo run --release --example live -- SCENARIO.toml [--sim] [--tun|--udp]`:
//! a scenario live (or simulated, with `--sim`), its summary as JSON.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: live SCENARIO.toml [--sim]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let sc = rtcc_sim::Scenario::parse(&text, path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if args.iter().any(|a| a == "--sim") {
        let out = rtcc_sim::run_text(&text, path, None).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        println!("{}", serde_json::to_string_pretty(&out.summary).expect("json"));
        return;
    }
    let mut options = rtcc_net::live::LiveOptions::default();
    if args.iter().any(|a| a == "--tun") {
        options.bottleneck = rtcc_net::live::Bottleneck::Tun;
    }
    if args.iter().any(|a| a == "--udp") {
        options.bottleneck = rtcc_net::live::Bottleneck::Udp;
    }
    match rtcc_net::live::run_live_with(sc, None, options, &mut || false) {
        Ok(run) => {
            println!("{}", serde_json::to_string_pretty(&run.output.summary).expect("json"));
            println!("{}", serde_json::to_string_pretty(&run.live).expect("json"));
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    }
}
