//! `c-nadu` on the FBRA paper's first set-up, shortened (fbra.txt §5.2: one
//! flow on a link of varying capacity, 50 ms one way, a 50-packet queue):
//! it uses most of the link without loss, its playout-buffer cue keeping
//! the queue within its 100 ms playout delay.

mod common;

use common::Call;

#[test]
fn c_nadu_follows_a_varying_link_without_loss() {
    let steps =
        r#"{ kind = "step", steps = [["0s", "400kbps"], ["20s", "200kbps"], ["40s", "400kbps"], ["60s", "250kbps"]] }"#;
    let out = Call::new("80s", steps)
        .delay("50ms")
        .link("queue = \"50pkt\"")
        .flow("controller = \"c-nadu\"\nencoder = \"ideal\"\nstart_rate = \"100kbps\"")
        .run();
    let f = &out.summary.flows[0];
    let owd = f.owd_ms_mean.unwrap();
    eprintln!("goodput {:.0} kbps, loss {:.3}, owd {owd:.0} ms", f.goodput_kbps, f.loss_rate);
    // Mean capacity 312.5 kbps.
    assert!(f.goodput_kbps > 0.7 * 312.5, "{}", f.goodput_kbps);
    assert!(f.loss_rate < 0.01, "{}", f.loss_rate);
    // The 50-packet queue holds 1.5 s at 312 kbps; c-nadu keeps well below.
    assert!(owd < 50.0 + 150.0, "{owd}");
}
