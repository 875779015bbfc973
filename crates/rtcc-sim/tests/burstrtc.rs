//! `burstrtc` scenario tests (scratch).

mod common;

use common::{f64s, i64s, Call};
use rtcc_sim::output::FlowSummary;
use rtcc_sim::Output;

fn ctl(name: &str) -> String {
    if name == "burstrtc" {
        format!("{{ name = \"burstrtc\", {} }}", std::env::var("P").unwrap_or("l = 1".into()))
    } else {
        format!("\"{name}\"")
    }
}

fn dynamic(controller: &str) -> Output {
    Call::new("30s", r#""4Mbps""#)
        .delay("20ms")
        .flow(&format!("controller = {}\nencoder = {{ kind = \"content\", profile = \"dynamic\" }}", ctl(controller)))
        .run()
}

fn describe(f: &FlowSummary) -> String {
    format!(
        "video {:.0} kbps, goodput {:.0} kbps, utilisation {:.3}, frame delay mean {:.1} ms, p95 {:.1} ms, cap err {:?}, lost {}, skipped {}",
        f.video_kbps,
        f.goodput_kbps,
        f.utilization,
        f.frame_delay_ms_mean.unwrap_or(f64::NAN),
        f.frame_delay_ms_p95.unwrap_or(f64::NAN),
        f.capacity_estimate_error,
        f.frames_lost,
        f.frames_skipped,
    )
}

fn rows(out: &Output, flow: i64, col: &str) -> Vec<(f64, f64)> {
    let (t, f, v) = (f64s(&out.timeseries, "t_s"), i64s(&out.timeseries, "flow"), f64s(&out.timeseries, col));
    (0..t.len()).filter(|&i| f[i] == flow).map(|i| (t[i], v[i])).collect()
}

#[test]
fn scratch() {
    let b = dynamic("burstrtc");
    let g = dynamic("gcc");
    eprintln!("burstrtc: {}", describe(&b.summary.flows[0]));
    eprintln!("gcc: {}", describe(&g.summary.flows[0]));
    for col in [
        "capacity_estimate_kbps",
        "background_estimate_kbps",
        "rate_kbps",
        "predicted_delay_ms",
        "measured_delay_ms",
        "d_min_ms",
        "frame_size_mu_bytes",
        "frame_size_sigma_bytes",
        "size_model_full",
        "paced_rate_kbps",
        "paced_receive_kbps",
    ] {
        let r = rows(&b, 0, col);
        let v: Vec<String> = r.iter().step_by(10).take(30).map(|x| format!("{:.0}", x.1)).collect();
        eprintln!("{col}: {}", v.join(" "));
    }
}

fn square(controller: &str) -> Output {
    Call::new("40s", r#"{ kind = "square", high = "4Mbps", low = "2Mbps", period = "10s", duty = 0.5 }"#)
        .delay("20ms")
        .flow(&format!("controller = {}\nencoder = {{ kind = \"content\", profile = \"dynamic\" }}", ctl(controller)))
        .flow("kind = \"udp\"\nrate = \"1Mbps\"")
        .run()
}

#[test]
fn scratch_square() {
    let b = square("burstrtc");
    eprintln!("burstrtc: {}", describe(&b.summary.flows[0]));
    eprintln!("udp: {}", b.summary.flows[1].goodput_kbps);
    for col in [
        "capacity_kbps",
        "capacity_estimate_kbps",
        "background_estimate_kbps",
        "rate_kbps",
        "predicted_delay_ms",
        "measured_delay_ms",
        "d_min_ms",
        "frame_size_mu_bytes",
        "frame_size_sigma_bytes",
        "paced_rate_kbps",
        "paced_receive_kbps",
    ] {
        let r = rows(&b, 0, col);
        let v: Vec<String> = r.iter().step_by(5).take(80).map(|x| format!("{:.0}", x.1)).collect();
        eprintln!("{col}: {}", v.join(" "));
    }
    let cap = rows(&b, 0, "capacity_kbps");
    let est = rows(&b, 0, "capacity_estimate_kbps");
    let bg = rows(&b, 0, "background_estimate_kbps");
    let n = cap.len() as f64;
    let ce: f64 = cap.iter().zip(&est).filter(|(_, e)| !e.1.is_nan()).map(|(c, e)| (c.1 - e.1).abs()).sum::<f64>() / n;
    let be: f64 = bg.iter().filter(|e| !e.1.is_nan()).map(|e| (e.1 - 1000.0).abs()).sum::<f64>() / n;
    eprintln!("capacity error {ce:.0} kbps, background error {be:.0} kbps");
}

#[test]
fn scratch_variants() {
    let enc = "encoder = { kind = \"content\", profile = \"dynamic\" }";
    let cases: Vec<(&str, Call)> = vec![
        (
            "static",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow("controller = \"burstrtc\"\nencoder = { kind = \"content\", profile = \"static\" }"),
        ),
        (
            "static gcc",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow("controller = \"gcc\"\nencoder = { kind = \"content\", profile = \"static\" }"),
        ),
        ("dyn 60s", Call::new("60s", r#""4Mbps""#).delay("20ms").flow(&format!("controller = \"burstrtc\"\n{enc}"))),
        ("dyn 60s gcc", Call::new("60s", r#""4Mbps""#).delay("20ms").flow(&format!("controller = \"gcc\"\n{enc}"))),
        (
            "L=30",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow(&format!("controller = {{ name = \"burstrtc\", l = 30 }}\n{enc}")),
        ),
        (
            "target-only",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow(&format!("controller = {{ name = \"burstrtc\", size_model = \"target\" }}\n{enc}")),
        ),
        (
            "loss 5%",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .link("loss = 0.05")
                .flow(&format!("controller = \"burstrtc\"\n{enc}")),
        ),
        (
            "jitter 5ms",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .link("jitter = \"5ms\"")
                .flow(&format!("controller = \"burstrtc\"\n{enc}")),
        ),
        ("ideal", Call::new("60s", r#""4Mbps""#).delay("20ms").flow("controller = \"burstrtc\"\nencoder = \"ideal\"")),
        (
            "two flows",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow("controller = \"burstrtc\"\nencoder = \"ideal\"")
                .flow("controller = \"burstrtc\"\nencoder = \"ideal\"\nstart = \"10s\""),
        ),
        (
            "two flows dyn",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow(&format!("controller = \"burstrtc\"\n{enc}"))
                .flow(&format!("controller = \"burstrtc\"\n{enc}\nstart = \"10s\"")),
        ),
        (
            "two flows noise",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .flow("controller = \"burstrtc\"\nencoder = \"noise\"")
                .flow("controller = \"burstrtc\"\nencoder = \"noise\"\nstart = \"10s\""),
        ),
        (
            "vs cubic",
            Call::new("60s", r#""4Mbps""#)
                .delay("20ms")
                .link("queue = \"250ms\"")
                .flow(&format!("controller = \"burstrtc\"\n{enc}"))
                .flow("kind = \"tcp\"\ncc = \"cubic\""),
        ),
    ];
    for (name, c) in cases {
        let t = std::time::Instant::now();
        let o = c.run();
        eprintln!("{name} ({:.1} s): {}", t.elapsed().as_secs_f64(), describe(&o.summary.flows[0]));
        if o.summary.flows.len() > 1 {
            eprintln!("   flow 1: {}", describe(&o.summary.flows[1]));
        }
    }
}

#[test]
fn scratch_two() {
    let enc = std::env::var("ENC").unwrap_or("noise".into());
    let o = Call::new("30s", r#""4Mbps""#)
        .delay("20ms")
        .flow(&format!("controller = \"burstrtc\"\nencoder = \"{enc}\""))
        .flow(&format!("controller = \"burstrtc\"\nencoder = \"{enc}\"\nstart = \"10s\""))
        .run();
    for f in 0..2 {
        for col in [
            "rate_kbps",
            "background_estimate_kbps",
            "capacity_estimate_kbps",
            "predicted_delay_ms",
            "frame_size_sigma_bytes",
        ] {
            let r = rows(&o, f, col);
            let v: Vec<String> = r.iter().skip(95).step_by(1).take(60).map(|x| format!("{:.0}", x.1)).collect();
            eprintln!("{f} {col}: {}", v.join(" "));
        }
    }
}

#[test]
fn scratch_jitter() {
    let j = std::env::var("JIT").unwrap_or("5ms".into());
    let o = Call::new("30s", r#""4Mbps""#).delay("20ms").link(&format!("jitter = \"{j}\"")).flow(&format!("controller = {{ name = \"burstrtc\", average = \"{}\" }}\nencoder = {{ kind = \"content\", profile = \"dynamic\" }}", std::env::var("AVG").unwrap_or("rate".into()))).run();
    eprintln!("{}", describe(&o.summary.flows[0]));
    for col in [
        "rate_kbps",
        "background_estimate_kbps",
        "capacity_estimate_kbps",
        "paced_rate_kbps",
        "paced_receive_kbps",
        "predicted_delay_ms",
        "measured_delay_ms",
        "d_min_ms",
    ] {
        let r = rows(&o, 0, col);
        let v: Vec<String> = r.iter().skip(50).step_by(5).take(40).map(|x| format!("{:.0}", x.1)).collect();
        eprintln!("{col}: {}", v.join(" "));
    }
}

#[test]
fn scratch_jitter_frames() {
    let o = Call::new("30s", r#""4Mbps""#)
        .delay("20ms")
        .link("jitter = \"5ms\"")
        .flow("controller = \"burstrtc\"\nencoder = { kind = \"content\", profile = \"dynamic\" }")
        .run();
    let cap = f64s(&o.frames, "capture_s");
    let pk = i64s(&o.frames, "packets");
    let tk = f64s(&o.frames, "target_kbps");
    for i in 0..cap.len() {
        if cap[i] > 11.0 && cap[i] < 13.0 {
            eprint!("{}/{:.0} ", pk[i], tk[i]);
        }
    }
    eprintln!();
}
