//! `[wire] datagrams = true`: every video packet crosses as its RTP
//! datagram (`rtcc_core::datagram`), and the receiving end gets only what
//! the bytes parse to. The run fails if a packet reads back other than it
//! was sent (a probe reads back as padding), and each run must be the same,
//! to the last digit, as the run that hands packets over directly.

mod common;

use common::{run, Call};
use rtcc_video::codec::Codec;

fn same_through_datagrams(call: &Call) {
    let text = call.text();
    let direct = run(&text);
    let wired = run(&format!("{text}\n[wire]\ndatagrams = true\n"));
    let json = |o: &rtcc_sim::Output| serde_json::to_string(&o.summary).unwrap();
    assert_eq!(json(&direct), json(&wired), "{text}");
    // Every packet's and frame's row too (by their printed form: a NaN
    // equals itself there).
    for (a, b) in [(&direct.packets, &wired.packets), (&direct.frames, &wired.frames)] {
        let differ: Vec<&str> = a
            .columns
            .iter()
            .zip(&b.columns)
            .filter(|(x, y)| format!("{x:?}") != format!("{y:?}"))
            .map(|(x, _)| x.0.as_str())
            .collect();
        assert!(differ.is_empty(), "columns differ: {differ:?}");
    }
    assert!(direct.summary.flows[0].packets_sent > 1000, "{text}");
}

#[test]
fn gcc_with_probes_and_padding() {
    same_through_datagrams(
        &Call::new("20s", r#"{ kind = "pulse", high = "3Mbps", low = "1Mbps", every = "10s" }"#)
            .flow(r#"controller = "gcc""#),
    );
}

#[test]
fn model_frames_with_fec_nack_and_loss_across_the_wrap() {
    same_through_datagrams(
        &Call::new("90s", r#""12Mbps""#)
            .link("loss = 0.03\nqueue = \"100ms\"")
            .flow("controller = { name = \"fixed\", rate = \"8Mbps\" }\nencoder = \"ideal\"\nfec = true\nnack = true\naudio = true"),
    );
}

#[test]
fn fbra_starts_its_fec_beside_web_traffic() {
    same_through_datagrams(
        &Call::new("30s", r#""5Mbps""#).link("queue = \"100ms\"").flow(r#"controller = "fbra""#).flow(
            "kind = \"web\"\ncc = \"cubic\"\nobject_size = \"pareto\"\nobject_mean = \"300kB\"\nthink_time = \"1s\"",
        ),
    );
}

#[test]
fn windowed_and_bursting_controllers_over_a_trace() {
    for controller in ["copa+dumbo", "burstrtc", "pibes"] {
        same_through_datagrams(
            &Call::new("20s", r#""4Mbps""#).link("loss = 0.01").flow(&format!("controller = \"{controller}\"")),
        );
    }
}

#[test]
fn real_vp8_with_fec_and_nack_rebuilds_frames_from_the_parities_bytes() {
    if let Err(e) = Codec::Vp8.available() {
        assert!(std::env::var("RTCC_REQUIRE_CODECS").as_deref() != Ok("1"), "{e}");
        eprintln!("skipped: {e}");
        return;
    }
    let call = Call::new("10s", r#""2Mbps""#)
        .link("loss = 0.05\nqueue = \"100ms\"")
        .flow("controller = \"gcc\"\nencoder = \"vp8\"\nresolution = \"180p\"\nfec = true\nnack = true");
    same_through_datagrams(&call);
    let out = run(&format!("{}\n[wire]\ndatagrams = true\n", call.text()));
    // Frames rebuilt from the parities' bytes were decoded.
    assert!(
        out.summary.flows[0].psnr_db_fec_mean.is_some_and(|p| p > 20.0),
        "{:?}",
        out.summary.flows[0].psnr_db_fec_mean
    );
}
