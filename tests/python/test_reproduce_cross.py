"""`rtcc reproduce cross --short`: files, rows, and the Cross paper's claims in the
shortened runs (§IV, §VI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import reproduce_refused, requires_native
from conftest import table_value as value

pytestmark = requires_native
PAPER = "cross"  # what conftest's `reproduced` and `table` run and read


def test_every_scheme_ran_and_the_files_are_there(
    reproduced: tuple[Path, str], table: pd.DataFrame
):
    from rtcc.reproduce.cross import SHORT

    out, stdout = reproduced
    assert "skipped" not in stdout, stdout
    assert list(table.columns[:2]) == ["experiment", "scheme"]
    assert {"utilization_received", "owd_ms_mean", "loss_rate", "freeze_ratio_webrtc"} <= set(
        table.columns
    )
    assert table["error"].isna().all(), table[table["error"].notna()][["experiment", "error"]]
    experiments = set(table["experiment"])
    for case in SHORT.cases:
        assert f"VI-A case {case}" in experiments
    assert {"VI-C", "VI-D"} <= experiments
    assert (out / "report.html").is_file()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Reproducing Cross" in page and "data:image/png;base64," in page
    # The paper's numbers sit beside rtcc's: Table II's BBR loss rate, §VI-B's 86.78 %.
    assert "(5.9)" in page and "(86.78)" in page
    # The summary's index beside the aligned one, under its newer name (the old one kept).
    assert table["jain_goodput_active"].equals(table["jain_index"])
    assert "Jain, each over its own lifetime (jain_goodput_active)" in page
    for name in ("case_bars.png", "adaptation.png", "rates_rtt.png", "freeze_ratio.png"):
        assert (out / name).stat().st_size > 1000, name


def test_multi_flow_experiments_run_over_seeds_with_their_spread(
    reproduced: tuple[Path, str], table: pd.DataFrame
):
    from rtcc.reproduce.cross.experiments import MULTI_SEEDS

    out, _ = reproduced
    seeds = table.groupby(["experiment", "scheme"])["seed"].nunique()
    for e, n in seeds.items():
        assert n == (MULTI_SEEDS if e[0].startswith(("VI-A", "VI-D", "Table II")) else 1), e
    assert MULTI_SEEDS >= 5
    fair = pd.read_csv(out / "fairness.csv").set_index(["experiment", "scheme"])
    row = fair.loc[("VI-D", "cross")]
    runs = table[(table["experiment"] == "VI-D") & (table["scheme"] == "cross")]["jain_window"]
    assert row["seeds"] == MULTI_SEEDS
    assert row["jain_window"] == pytest.approx(runs.mean())
    assert (row["jain_window_min"], row["jain_window_max"]) == (runs.min(), runs.max())
    assert row["jain_window_std"] == pytest.approx(runs.std())
    assert fair.loc[("VI-A case 4", "gcc")]["jain_aligned_min"] <= fair.loc[
        ("VI-A case 4", "gcc")]["jain_aligned_max"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"run over seeds 1-{MULTI_SEEDS}" in page
    from rtcc.reproduce.page import cell

    assert f"({cell(row['jain_window_min'])}-{cell(row['jain_window_max'])})" in page


def test_over_seeds_means_and_spreads():
    from rtcc.reproduce.cross.experiments import over_seeds

    t = pd.DataFrame({"experiment": ["VI-D"] * 3 + ["VI-C"], "scheme": ["x"] * 4,
                      "seed": [1, 2, 3, 1], "jain_window": [0.9, 0.6, 0.75, np.nan],
                      "utilization_received": [0.5, 0.7, 0.6, 0.8],
                      "error": [None] * 4})  # fmt: skip
    s = over_seeds(t).set_index(["experiment", "scheme"])
    d = s.loc[("VI-D", "x")]
    assert d["seeds"] == 3 and d["jain_window"] == pytest.approx(0.75)
    assert (d["jain_window_min"], d["jain_window_max"]) == (0.6, 0.9)
    assert d["utilization_received"] == pytest.approx(0.6)
    assert s.loc[("VI-C", "x")]["seeds"] == 1


def test_cross_utilization_and_delay_in_cases_4_and_6(table: pd.DataFrame):
    """§VI-A: cross ≈ 95 % utilisation in Cases 4/6, with delay below NADA's and RBBR's
    (means over seeds)."""
    from rtcc.reproduce.cross.experiments import over_seeds

    table = over_seeds(table)
    for case in (4, 6):
        e = f"VI-A case {case}"
        assert value(table, e, "cross", "utilization_received") >= 0.9
        owd = value(table, e, "cross", "owd_ms_mean")
        assert owd < value(table, e, "nada", "owd_ms_mean")
        assert owd < value(table, e, "rbbr", "owd_ms_mean")


def test_random_loss(table: pd.DataFrame):
    """§VI-B: at 10 % loss cross keeps ≥ 80 % and ≥ 20 points above gcc (86.8 % vs 41.1 %);
    gcc's classic rule holds its rate at 8 % and cuts it at 10 %."""
    cross10 = value(table, "VI-B loss 10%", "cross", "utilization_received")
    gcc10 = value(table, "VI-B loss 10%", "gcc", "utilization_received")
    gcc8 = value(table, "VI-B loss 8%", "gcc", "utilization_received")
    assert cross10 >= 0.8
    assert cross10 >= gcc10 + 0.2
    assert gcc8 >= gcc10 + 0.15


def test_fast_adaptation_halves_the_delay_spike(table: pd.DataFrame):
    """§VI-C: ≈ 2 s of delay spike with fast bandwidth adaptation, ≈ 10 s without."""
    on = value(table, "VI-C", "cross", "spike_s")
    off = value(table, "VI-C", "cross (no fast adaptation)", "spike_s")
    assert off > 0
    assert on <= off / 2


def test_rtt_fairness(table: pd.DataFrame):
    """§VI-D: cross and nadar share fairly across 40/80 ms RTTs; rbbr favours the longer
    (means over seeds)."""
    from rtcc.reproduce.cross.experiments import over_seeds

    table = over_seeds(table)
    for scheme in ("cross", "nadar"):
        assert value(table, "VI-D", scheme, "jain_window") >= 0.9
    assert value(table, "VI-D", "rbbr", "rtt80_kbps") > value(table, "VI-D", "rbbr", "rtt40_kbps")


def test_rbbr_loses_less_than_webrtc_bbr(table: pd.DataFrame):
    """Table II: RBBR's loss rate is below WebRTC-BBR's (means over seeds)."""
    from rtcc.reproduce.cross.experiments import over_seeds

    table = over_seeds(table)
    for e in sorted(set(table["experiment"])):
        if e.startswith("Table II"):
            assert value(table, e, "rbbr", "loss_rate") < value(table, e, "bbr", "loss_rate")


# Under realistic sender timing cross loses 0.14 % of its packets at case 4's 200 ms queue
# on 3 Mbps (none under exact timing) and NACK repair leaves four 0.3-0.6 s gaps: 0.99 %
# frozen against bbr's 0.50 % in the full run. Not yet explained; strict, so a fix shows.
CASE_4 = "VI-E case 4"


def test_online_stand_in_freezes_less_with_cross(table: pd.DataFrame):
    """§VI-E: cross's freeze ratio below bbr's in every case (1.47 % vs 6.11 % at 3 Mbps)."""
    cases = [e for e in set(table["experiment"]) if e.startswith("VI-E") and e != CASE_4]
    assert cases
    for e in cases:
        assert value(table, e, "cross", "freeze_ratio_webrtc") < value(
            table, e, "bbr", "freeze_ratio_webrtc"
        )


def test_online_stand_in_case_4_freezes_less_with_cross(table: pd.DataFrame):
    """Case 4 as well, since Cross's RTT keeps the report's wait under TWCC as the wire gives
    it (it lost packets at case 4's queue while its RTT left the receiver's exact hold out)."""
    assert value(table, CASE_4, "cross", "freeze_ratio_webrtc") < value(
        table, CASE_4, "bbr", "freeze_ratio_webrtc"
    )


def test_spike_and_jain_helpers():
    from rtcc.reproduce.cross import jain, spike_seconds

    t = np.arange(1, 101) * 0.1
    owd = np.full(100, 50.0)
    owd[40:55] = 200.0  # 1.5 s above 50 + 100 ms, from 4.0 s
    series = pd.DataFrame({"t_s": t, "owd_ms": owd})
    assert spike_seconds(series, 0, 10) == pytest.approx(1.5)
    assert spike_seconds(series, 4.5, 10) == pytest.approx(1.0)
    assert jain([1.0, 1.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0]) == pytest.approx(0.5)
    assert np.isnan(jain([]))


def test_cross_refuses_dumbo_only_flags(tmp_path: Path):
    assert "--encoder" in reproduce_refused("cross", tmp_path / "x", "--encoder", "vp8")
    # pibes and burstrtc take --traces too: the refusal says what cross does, not who else.
    err = reproduce_refused("cross", tmp_path / "x", "--traces", "mahimahi")
    assert "--traces: 'rtcc reproduce cross' runs no traces" in err and "dumbo" not in err
