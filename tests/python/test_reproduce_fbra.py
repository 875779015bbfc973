"""`rtcc reproduce fbra --short`: files, rows, and the FBRA paper's claims in the shortened
runs (§5)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rtcc
from conftest import requires_native

pytestmark = requires_native
PAPER = "fbra"  # what conftest's `reproduced` runs


@pytest.fixture(scope="module")
def means(reproduced: tuple[Path, str]) -> pd.DataFrame:
    return pd.read_csv(reproduced[0] / "summary.csv").set_index(
        ["experiment", "scheme", "delay_ms"]
    )


def test_every_case_ran_and_the_files_are_there(reproduced: tuple[Path, str]):
    out, stdout = reproduced
    assert "skipped" not in stdout, stdout
    table = pd.read_csv(out / "table.csv")
    assert table["error"].isna().all(), table[table["error"].notna()][["experiment", "error"]]
    # (3 tables + the two loss cases) x 3 schemes x 3 delays x 3 seeds, Table 3's seeds 4-5
    # (3 x 3 x 2), and Tables 2-3 at 50 ms with host_jitter 0.1 and 1 ms (3 x 2 x 2 x 3).
    assert len(table) == 135 + 18 + 36
    assert set(table["scheme"]) == {"fbra", "rrtcc", "c-nadu"}
    page = (out / "report.html").read_text()
    assert "Reproducing FBRA" in page and "<img" in page
    for n in (1, 2, 3):
        assert (out / f"table{n}.png").stat().st_size > 1000
    # What it prints names every file it wrote, and the dataset its runs went to.
    listed = stdout.split(f"results: {out} (")[1].split(")")[0].split(", ")
    assert all((out / name).is_file() for name in listed) and "runs.csv" in listed
    flows = len(rtcc.query("SELECT * FROM runs", dataset=out / "dataset"))
    assert f"dataset: {out / 'dataset'} ({flows} rows added)" in stdout.splitlines()


def test_fbra_probes_with_fec_and_most_probes_are_right(means: pd.DataFrame):
    # Must show (Table 1 set-up): FRCC >= 80 % at 50 and 100 ms with at least 6 PROBE
    # episodes a minute, and FEC at 5-15 % of the media rate.
    for delay in (50, 100):
        row = means.loc[("Table 1", "fbra", delay)]
        assert row["frcc_mean"] >= 0.8, row["frcc_mean"]
        assert row["probes_per_min_mean"] >= 6
        assert 0.05 <= row["fec_share_mean"] <= 0.15, row["fec_share_mean"]


def test_fbra_loses_less_than_rrtcc_at_50_ms(means: pd.DataFrame):
    # Table 1 at 50 ms: fewer packets lost or discarded past 400 ms (paper 1.23 % against
    # 4.27 %). Its goodput is about 16 % below rrtcc's here (paper 1.5 %), which README and
    # report say. The paper's fewer lost frames (441 against 1842) holds in the full
    # reproduction (30 seeds: 584 against 954) but three short seeds cannot decide it: rrtcc
    # loses 0, 66 and 460 frames by seed, and one fbra seed went from 134 to 238 lost frames
    # when timestamps took the wire's grain (90 kHz RTP timestamps, 3.8 us abs-send-time).
    fbra, rrtcc = means.loc[("Table 1", "fbra", 50)], means.loc[("Table 1", "rrtcc", 50)]
    assert fbra["loss_discard_rate_mean"] < rrtcc["loss_discard_rate_mean"]
    assert fbra["goodput_kbps_mean"] > 0.8 * rrtcc["goodput_kbps_mean"]


def test_capacity_steps_are_per_seed_and_in_range():
    from rtcc.reproduce.fbra import capacity_steps

    a, b = capacity_steps(1, 900, 50), capacity_steps(2, 900, 50)
    assert len(a["steps"]) == 18 and a != b and a == capacity_steps(1, 900, 50)
    rates = [int(s[1].removesuffix("kbps")) for s in a["steps"]]
    assert min(rates) >= 100 and max(rates) <= 400


def test_tcp_share_falls_with_delay_and_c_nadu_leaves_tcp_its_share(means: pd.DataFrame):
    # Table 3: the web flows' fair share falls as the bottleneck delay grows, for every
    # scheme (paper: fbra 134.9 -> 93.2 -> 60.0 %); c-nadu leaves TCP at least its fair
    # share at 50 ms (paper 152.7 %). rrtcc does not crowd TCP out here (README).
    for scheme in ("fbra", "rrtcc", "c-nadu"):
        tfs = [means.loc[("Table 3", scheme, d)]["tfs_mean"] for d in (50, 100, 240)]
        assert tfs[0] > tfs[1] > tfs[2], (scheme, tfs)
    assert means.loc[("Table 3", "c-nadu", 50)]["tfs_mean"] >= 1.0


def test_two_flows_over_five_seeds_and_tcp_friendliness_over_host_jitter(
    reproduced: tuple[Path, str], means: pd.DataFrame
):
    from rtcc.reproduce.fbra.experiments import MULTI_SEEDS

    for scheme in ("fbra", "rrtcc", "c-nadu"):
        for delay in (50, 100, 240):
            row = means.loc[("Table 3", scheme, delay)]
            assert row["runs"] == MULTI_SEEDS >= 5
            assert row["jain_video_min"] <= row["jain_video_mean"] <= row["jain_video_max"] <= 1
        for table in ("Table 2", "Table 3"):
            row = means.loc[(table, scheme, 50)]
            assert row["jitter_values"] == 3
            assert row["tfs_jitter_min"] <= row["tfs_jitter_max"]
            assert pd.isna(means.loc[(table, scheme, 100)]["tfs_jitter_min"])  # 50 ms only here
    page = (reproduced[0] / "report.html").read_text()
    assert "TFS over host_jitter 0-1 ms" in page and "Jain, the two flows (min-max)" in page


def test_tfs_over_host_jitter_is_the_range_of_means_over_shared_seeds():
    from rtcc.reproduce.fbra.experiments import summary

    # Jitter 0 over seeds 1-3 (seed 3 has no jitter twin), 1 ms over seeds 1-2.
    t = pd.DataFrame({"experiment": ["Table 2"] * 5, "scheme": ["fbra"] * 5,
                      "delay_ms": [50] * 5, "seed": [1, 2, 3, 1, 2],
                      "host_jitter_ms": [0.0, 0.0, 0.0, 1.0, 1.0],
                      "goodput_kbps": [1.0] * 5, "tfs": [1.0, 0.8, 9.0, 0.6, 0.6]})  # fmt: skip
    s = summary(t).iloc[0]
    assert s["runs"] == 3 and s["tfs_mean"] == pytest.approx(10.8 / 3)
    assert (s["tfs_jitter_min"], s["tfs_jitter_max"]) == pytest.approx((0.6, 0.9))


def test_web_flows_start_as_ns2_tcp_and_reports_are_rtcp_xr():
    from rtcc.reproduce.fbra.experiments import SHORT, table_runs

    runs = table_runs(SHORT, ["fbra"])
    flows = next(r for r in runs if r.labels["experiment"] == "Table 3").scenario["flow"]
    assert [f["initial_window"] for f in flows if f.get("kind") == "web"] == [2] * 10
    assert {f["report_format"] for f in flows if "kind" not in f} == {"rtcp-xr"}
    # The web objects calibrated to the paper's loss levels (paper.NOTES): 300-1000 kB.
    web = [f for f in flows if f.get("kind") == "web"]
    assert {(f["object_min"], f["object_max"]) for f in web} == {("300kB", "1000kB")}


def test_table_3_keeps_table_2s_link():
    # §5.4: "link characteristics ... remain the same" as §5.3's.
    from rtcc.reproduce.fbra.experiments import SHORT, table_runs

    links = {r.labels["experiment"]: r.scenario["link"] for r in table_runs(SHORT, ["fbra"])}
    assert links["Table 3"]["capacity"] == links["Table 2"]["capacity"] == "5000kbps"
    assert links["GE loss"]["loss"]["kind"] == "gilbert_elliott" and links["No loss"]["loss"] == 0.0


def test_the_lossfree_ratio_pairs_each_ge_case_with_its_twin():
    from rtcc.reproduce.fbra.experiments import summary

    t = pd.DataFrame({
        "experiment": ["No loss", "No loss", "GE loss", "GE loss", "Table 1"],
        "scheme": ["fbra", "rrtcc", "fbra", "rrtcc", "fbra"], "delay_ms": [50] * 5,
        "seed": [1] * 5, "goodput_kbps": [1800.0, 1900.0, 180.0, 1710.0, 200.0],
    })  # fmt: skip
    s = summary(t).set_index(["experiment", "scheme"])
    assert s.loc[("GE loss", "fbra"), "goodput_vs_lossfree"] == pytest.approx(0.1)
    assert s.loc[("GE loss", "rrtcc"), "goodput_vs_lossfree"] == pytest.approx(0.9)
    others = s.index.get_level_values("experiment") != "GE loss"
    assert s.loc[others, "goodput_vs_lossfree"].isna().all()


def test_fbra_collapses_under_ge_loss_and_the_new_metrics_show_it(means: pd.DataFrame):
    # 5 % Gilbert-Elliott loss: every report carries loss, each undershoots, and fbra's
    # rate sinks while FRCC (probes that end in UP) stays high; goodput over capacity and
    # goodput against the loss-free twin drop.
    for delay in (50, 100, 240):
        lossfree, ge = means.loc[("No loss", "fbra", delay)], means.loc[("GE loss", "fbra", delay)]
        assert lossfree["utilization_mean"] > 0.3, lossfree["utilization_mean"]
        assert ge["utilization_mean"] < 0.5 * lossfree["utilization_mean"]
        assert ge["goodput_vs_lossfree"] < 0.5, ge["goodput_vs_lossfree"]


def test_a_case_whose_runs_all_failed_shows_no_runs():
    from rtcc.reproduce.fbra.experiments import summary
    from rtcc.reproduce.fbra.page import _table

    failed = pd.DataFrame({"experiment": ["Table 1"], "scheme": ["fbra"], "delay_ms": [50],
                           "seed": [1], "error": ["flow[0]: bad"]})  # fmt: skip
    assert _table(summary(failed), "Table 1") == "<p>No runs.</p>"


def test_ffre_is_counted_by_frames_against_the_web_flows(means: pd.DataFrame):
    # Queue drops next to the web flows: some protected frames are rebuilt from parity.
    row = means.loc[("Table 2", "fbra", 50)]
    assert 0.0 < row["ffre_frames_mean"] < 1.0, row["ffre_frames_mean"]
