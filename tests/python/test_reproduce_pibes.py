"""`rtcc reproduce pibes --short`: files, rows, and the PIBES paper's claims in the
shortened runs (§I, §IV)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from conftest import reproduce_refused, requires_native
from conftest import table_value as value

pytestmark = requires_native
PAPER = "pibes"  # what conftest's `reproduced` and `table` run and read


def test_every_scheme_ran_and_the_files_are_there(
    reproduced: tuple[Path, str], table: pd.DataFrame
):
    out, stdout = reproduced
    assert "skipped gcc" not in stdout and "skipped salsify" not in stdout, stdout
    assert list(table.columns[:2]) == ["experiment", "scheme"]
    assert {"utilization", "tcp_utilization", "frame_delay_ms_mean", "estimate_error",
            "detection_correct"} <= set(table.columns)  # fmt: skip
    assert table["error"].isna().all(), table[table["error"].notna()][["experiment", "error"]]
    experiments = set(table["experiment"])
    assert {"Table 1", "Fig. 8 forward", "Fig. 8 reverse", "Fig. 10", "Fig. 12", "Fig. 13",
            "Fig. 14", "Fig. 16", "Fig. 17", "Fig. 18"} <= experiments  # fmt: skip
    assert set(table[table["experiment"] == "Table 1"]["scheme"]) == {
        "gcc", "gcc uncapped", "salsify", "pibes"
    }  # fmt: skip
    page = (out / "report.html").read_text()
    assert "Reproducing PIBES" in page and "<img" in page
    for png in ("table1.png", "estimate.png", "throughput_tcp.png"):
        assert (out / png).stat().st_size > 1000, png


def test_table_1_pibes_holds_its_share_and_gcc_does_not(table: pd.DataFrame):
    # Must show: alone >= 90 % of 4 Mbps (FEC included); >= 45 % (s_min) against two
    # Cubic flows; gcc below 30 % with two (paper: WebRTC 73/24/8 %).
    assert value(table, "Table 1", "pibes", "utilization", tcp_flows=0) >= 0.90
    assert value(table, "Table 1", "pibes", "utilization", tcp_flows=2) >= 0.45
    assert value(table, "Table 1", "gcc", "utilization", tcp_flows=2) < 0.30
    assert value(table, "Table 1", "gcc", "utilization", tcp_flows=0) > value(
        table, "Table 1", "gcc", "utilization", tcp_flows=2
    )


def test_the_estimate_stays_within_10_percent_with_tcp_either_way(table: pd.DataFrame):
    # Fig. 8: with a TCP flow joining every 5 s, forward or reverse, every stretch
    # between joins keeps the estimate within 10 % of the capacity.
    for direction in ("forward", "reverse"):
        assert value(table, f"Fig. 8 {direction}", "pibes", "estimate_error_worst_stretch") <= 0.10
        assert value(table, f"Fig. 8 {direction}", "pibes", "estimate_within_10") >= 0.9


def test_a_larger_alpha_estimates_worse(table: pd.DataFrame):
    # Fig. 7: accuracy decreases as alpha increases (host timing noise modelled as jitter).
    assert value(table, "Fig. 7 alpha 0.8", "pibes", "estimate_error") > value(
        table, "Fig. 7 alpha 0.1", "pibes", "estimate_error"
    )


def test_competition_is_detected_and_cleared(table: pd.DataFrame):
    # Fig. 13: one TCP flow starts and stops; detection within 2 s each way.
    assert value(table, "Fig. 13", "pibes", "detect_s") <= 2.0
    assert value(table, "Fig. 13", "pibes", "clear_s") <= 2.0
    # A reverse TCP flow is no competition on the forward bottleneck.
    assert value(table, "Fig. 8 reverse", "pibes", "detection_correct") >= 0.95


def test_salsify_fills_the_link_within_its_delay_budget(table: pd.DataFrame):
    # Salsify uses the link where capped gcc does not (Fig. 10: PIBES and Salsify "both
    # achieved high link utilization"); its frames stay within one-way delay + its 100 ms
    # in-flight budget. Its mean frame delay is above capped gcc's here (the budget lets a
    # standing queue of about 100 ms minus the RTT form), which README and report say.
    for experiment in ("Fig. 10", "Fig. 12"):
        assert value(table, experiment, "salsify", "utilization") > 0.9
        assert value(table, experiment, "salsify", "utilization") > value(
            table, experiment, "gcc", "utilization"
        )
        assert value(table, experiment, "salsify", "frame_delay_ms_p95") < 20 + 100


def test_r_min_holds_against_tcp_and_two_pibes_flows_share(table: pd.DataFrame):
    # Fig. 17: R_min = 1.5 Mbps holds (1 s means, FEC included) while TCP competes.
    assert value(table, "Fig. 17", "pibes", "recv_kbps_min_1s") >= 1400
    # Fig. 18: s_min = s_max/2 each; Jain's index while both run, at every seed.
    assert value(table, "Fig. 18", "pibes", "jain_overlap", seed=1) >= 0.9
    from rtcc.reproduce.pibes.experiments import FIG18_SEEDS

    assert sorted(table[table["experiment"] == "Fig. 18"]["seed"]) == list(FIG18_SEEDS)


def test_fig18_spread_over_seeds_by_hand(reproduced: tuple[Path, str]):
    from rtcc.reproduce.pibes.experiments import fig18_seeds

    t = pd.DataFrame({"experiment": ["Fig. 18", "Fig. 18", "Fig. 10"], "scheme": "pibes",
                      "seed": [1, 2, 1], "jain_overlap": [0.9, 1.0, 0.1],
                      "flow1_kbps": [1000.0, 3000.0, 5.0]})  # fmt: skip
    row = fig18_seeds(t).iloc[0]
    assert row["seeds"] == 2
    assert math.isclose(row["jain_overlap_mean"], 0.95)
    assert math.isclose(row["jain_overlap_std"], 0.05)
    assert (row["jain_overlap_min"], row["jain_overlap_max"]) == (0.9, 1.0)
    assert (row["flow1_kbps_min"], row["flow1_kbps_max"]) == (1000.0, 3000.0)
    assert math.isnan(row["flow2_kbps_mean"])  # a column the table lacks
    # The run writes the same spread beside table.csv.
    out, _ = reproduced
    spread = pd.read_csv(out / "fig18_seeds.csv")
    assert int(spread["seeds"].iloc[0]) == 5 and spread["jain_overlap_min"].iloc[0] <= 1.0


def test_only_dumbo_takes_the_encoder_flag(tmp_path: Path):
    assert "--encoder" in reproduce_refused("pibes", tmp_path, "--encoder", "vp8")
    bad = tmp_path / "traces"
    bad.mkdir()
    assert "norway_bus_1" in reproduce_refused("pibes", tmp_path / "out", "--traces", str(bad))


def test_detection_scoring_by_hand():
    from rtcc.reproduce.pibes import detection

    # Truth rises after 1.0 s and falls after 3.0 s (0.5 s bins); the detector agrees
    # from 2.0 s and clears from 3.5 s.
    t = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
    truth = [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    said = [0, 0, 0, 1, 1, 1, 1, 0, 0, 0]
    d = detection(pd.DataFrame({"t_s": t, "competition": said, "competition_truth": truth}), 1.0)
    assert d["detect_s"] == 1.0  # bin ending 2.0 is the first to agree, truth rose at 1.0
    assert d["clear_s"] == 1.0
    # Settled bins (ending >= 1 s after a change, or before any): 0.5, 1.0, 2.0-3.0 and
    # 4.0-5.0; all agree.
    assert d["detection_correct"] == 1.0
    assert math.isnan(detection(pd.DataFrame({"t_s": t}))["detect_s"])


def test_summary_table_prints_keys_then_scaled_columns():
    from rtcc.reproduce.pibes import summary_text
    from rtcc.reproduce.runs import summary_table

    t = pd.DataFrame([{"experiment": "Fig. 1", "scheme": "gcc", "u": 0.4712, "d": None}])
    lines = summary_table(t, "u", [("u", "util %", 100, 1), ("d", "delay ms", 1, 0)]).splitlines()
    assert lines[0].split() == ["experiment", "scheme", "util", "%", "delay", "ms"]
    assert lines[2].split() == ["Fig.", "1", "gcc", "47.1", "-"]
    assert summary_table(t, "missing", []) == "no runs"
    row = {"experiment": "Table 1", "scheme": "pibes", "tcp_flows": 2, "queue_pkt": 50}
    t1 = pd.DataFrame([{**row, "utilization": 0.9}])
    line = summary_text(t1).splitlines()[2].split()
    assert line[:6] == ["Table", "1", "2", "TCP", "q50", "pibes"]
