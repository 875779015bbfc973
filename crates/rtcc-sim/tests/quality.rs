//! The quality model as a run reports it: each received frame against its own
//! source, and the viewer's view that counts freezes.

use rtcc_sim::run_text;

fn fixed(rate: &str, link: &str, flow: &str) -> rtcc_sim::Output {
    let text = format!(
        r#"duration = "20s"
seed = 2
[link]
capacity = "10Mbps"
delay = "25ms"
{link}
[[flow]]
controller = {{ name = "fixed", rate = "{rate}", pacing_factor = 1.5 }}
encoder = "ideal"
resolution = "720p"
{flow}
"#
    );
    run_text(&text, "q.toml", None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn quality_rises_with_bitrate() {
    let psnr: Vec<f64> = ["500kbps", "1Mbps", "2Mbps", "3Mbps"]
        .iter()
        .map(|r| fixed(r, "", "").summary.flows[0].psnr_db_mean.unwrap())
        .collect();
    assert!(psnr.windows(2).all(|w| w[1] > w[0] + 0.5), "{psnr:?}");
    // The model's 720p talking-head anchors: ~33 dB at 500 kbps, ~35.7 at 1 Mbps.
    assert!((32.0..34.5).contains(&psnr[0]), "{psnr:?}");
    assert!((34.5..37.0).contains(&psnr[1]), "{psnr:?}");
    let f = &fixed("2Mbps", "", "").summary.flows[0];
    // Smooth playback: the viewer sees every frame as it was sent.
    assert!((f.psnr_db_displayed.unwrap() - f.psnr_db_mean.unwrap()).abs() < 0.05);
    assert!(f.ssim_db_mean.unwrap() > 9.0 && f.ssim_db_mean.unwrap() < 16.0, "{:?}", f.ssim_db_mean);
}

#[test]
fn freezes_lower_the_viewers_quality() {
    // Random loss without NACK: frozen frames decay against the moving source.
    let lossy = fixed("2Mbps", "loss = 0.02", "nack = false");
    let f = &lossy.summary.flows[0];
    assert!(f.freeze_ratio.unwrap() > 0.05, "{:?}", f.freeze_ratio);
    let (own, viewer) = (f.psnr_db_mean.unwrap(), f.psnr_db_displayed.unwrap());
    assert!(viewer < own - 1.0, "viewer {viewer} vs own {own}");
}
