"""`rtcc reproduce burstrtc --short`: files, rows, and the BurstRTC paper's claims in the
shortened runs (§III, §IV)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import reproduce_refused, requires_native
from conftest import table_value as value

pytestmark = requires_native
PAPER = "burstrtc"  # what conftest's `reproduced` and `table` run and read


def test_every_scheme_ran_and_the_files_are_there(
    reproduced: tuple[Path, str], table: pd.DataFrame
):
    out, stdout = reproduced
    assert "skipped" not in stdout.replace("skipped Fig. 18", ""), stdout
    assert list(table.columns[:2]) == ["experiment", "scheme"]
    assert {"goodput_kbps", "frame_delay_ms_mean", "frame_delay_ms_p95", "freeze_ratio",
            "send_buffer_overshoot", "send_buffer_undershoot",
            "jain"} <= set(table.columns)  # fmt: skip
    assert table["error"].isna().all(), table[table["error"].notna()][["experiment", "error"]]
    assert {"Fig. 8", "Fig. 11 cubic", "Fig. 11 udp", "Fig. 12", "Fig. 13", "Fig. 17",
            "Table I"} <= set(table["experiment"])  # fmt: skip
    assert set(table[table["experiment"] == "Fig. 13"]["scheme"]) == {
        "gcc", "bbr", "salsify", "sqp", "pudica", "burstrtc"
    }  # fmt: skip
    page = (out / "report.html").read_text()
    assert "Reproducing BurstRTC" in page and "<img" in page
    for png in ("content.png", "tail.png", "sampler.png", "fairness.png"):
        assert (out / png).stat().st_size > 1000, png


def test_dynamic_content_burstrtc_uses_the_link_with_low_tail_delay(table: pd.DataFrame):
    # Must show (Figs. 13-14): most of 4 Mbps and at least gcc's bit-rate; p95 frame
    # delay at most gcc's and below sqp's and pudica's (paper 95.7 vs 174.4 / 181.1 ms).
    # 85 % with exact wake-ups (3,405 kbps); on the realistic 1 ms pacer tick the paced
    # part leaves at S = 3.85 of C = 4.0 Mbps and eq. 6 reads the gap as 0.27 Mbps of
    # background on an idle link (3,183 kbps; README), so 78 %.
    rate = value(table, "Fig. 13", "burstrtc", "goodput_kbps")
    assert rate >= 0.78 * 4000
    assert rate >= value(table, "Fig. 13", "gcc", "goodput_kbps")
    p95 = value(table, "Fig. 13", "burstrtc", "frame_delay_ms_p95")
    assert p95 <= value(table, "Fig. 13", "gcc", "frame_delay_ms_p95")
    assert p95 < value(table, "Fig. 13", "sqp", "frame_delay_ms_p95")
    assert p95 < value(table, "Fig. 13", "pudica", "frame_delay_ms_p95")


def test_the_sampler_tracks_capacity_and_background(table: pd.DataFrame):
    # Must show (Fig. 8): both errors under 0.3 Mbps (paper 0.21 / 0.18).
    assert value(table, "Fig. 8", "burstrtc", "capacity_error_mbps") < 0.3
    assert value(table, "Fig. 8", "burstrtc", "background_error_mbps") < 0.3


def test_the_delay_model_beats_the_naive_predictor_against_udp(table: pd.DataFrame):
    # Must show (Fig. 11): 30 frames ahead against constant UDP background. Against Cubic
    # the model is worse than the naive predictor here (README and report say why).
    e = "Fig. 11 udp"
    assert value(table, e, "burstrtc", "predictions") >= 50
    assert value(table, e, "burstrtc", "model_error_ms") < value(
        table, e, "burstrtc", "naive_error_ms"
    )


def test_two_flows_of_sqp_and_gcc_share_fairly(table: pd.DataFrame):
    # Table I: Jain >= 0.9 while both flows run, on average over the second flow's frame
    # phases. burstrtc and pudica do not reach it here (README and report say why); the
    # Jain values are in table.csv for every phase.
    part = table[table["experiment"] == "Table I"]
    assert part.groupby("scheme")["phase"].nunique().min() == 3
    jain = part.groupby("scheme")["jain"].mean()
    assert jain["sqp"] >= 0.9
    assert jain["gcc"] >= 0.9
    assert part["jain"].notna().all()


def test_bbr_overshoots_the_send_buffer_and_bursting_schemes_do_not(table: pd.DataFrame):
    # Fig. 3's overshooting: a window-limited sender's queue; frame-bursting never queues.
    assert value(table, "Fig. 13", "bbr", "send_buffer_overshoot") > 0.2
    assert value(table, "Fig. 13", "burstrtc", "send_buffer_overshoot") < 0.01


def test_only_dumbo_takes_the_encoder_flag(tmp_path: Path):
    assert "--encoder" in reproduce_refused("burstrtc", tmp_path, "--encoder", "vp8")
    bad = tmp_path / "traces"
    bad.mkdir()
    err = reproduce_refused("burstrtc", tmp_path / "out", "--traces", str(bad))
    assert "TMobile-LTE-driving" in err
    assert "--no-vp8" in reproduce_refused("pibes", tmp_path / "out2", "--no-vp8")


def test_metric_helpers_by_hand():
    from rtcc.reproduce.burstrtc.experiments import responsiveness, sampler_errors

    t = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    s = pd.DataFrame({
        "t_s": t, "capacity_kbps": [4000, 4000, 2000, 2000, 4000, 4000],
        "capacity_estimate_kbps": [9999, 3800, 2300, 2000, 4000, 4400],
        "background_estimate_kbps": [0, 1000, 1200, 900, 1000, 1100],
    })  # fmt: skip
    e = sampler_errors(s, 1000.0)
    # From 2 s on (bins ending 3..6 s): |C err| = 300, 0, 0, 400; |B err| = 200, 100, 0, 100.
    assert e["capacity_error_mbps"] == pytest.approx(0.175)
    assert e["background_error_mbps"] == pytest.approx(0.1)
    r = pd.DataFrame({
        "t_s": t, "target_kbps": [4000, 3000, 1900, 1900, 3000, 3700],
        "owd_ms": [20, 40, 60, 30, 20, 20],
    })  # fmt: skip
    out = responsiveness(r, (2, 4))
    assert out["react_down_s"] == 1.0  # the bin ending 3 s is the first at <= 2 Mbps
    assert out["react_up_s"] == 2.0  # the bin ending 6 s is the first back at >= 3.6 Mbps
    assert math.isinf(responsiveness(r.assign(target_kbps=4000), (2, 4))["react_down_s"])


def test_seeds_are_run_and_summarised_per_case():
    from rtcc.reproduce.burstrtc.experiments import FULL, SHORT, seeded, spread
    from rtcc.sweepspec import Run

    assert FULL.seeds >= 5 and FULL.vp8_seeds >= 1 and SHORT.seeds >= 2
    runs = seeded([Run({"experiment": "Fig. 12", "scheme": "gcc"}, {"seed": 1}, 1, "<t>")], 3)
    assert [(r.seed, r.labels["seed"], r.scenario["seed"]) for r in runs] == [
        (1, 1, 1), (2, 2, 2), (3, 3, 3)
    ]  # fmt: skip
    per_run = pd.DataFrame([
        {"experiment": "Table I", "scheme": "gcc", "phase": 0, "seed": 1, "jain": 0.9,
         "goodput_kbps": 1000.0, "error": None},
        {"experiment": "Table I", "scheme": "gcc", "phase": 0, "seed": 2, "jain": 0.7,
         "goodput_kbps": 3000.0, "error": None},
        {"experiment": "Table I", "scheme": "gcc", "phase": 1, "seed": 1, "jain": 1.0,
         "goodput_kbps": 2000.0, "error": None},
        {"experiment": "Table I", "scheme": "gcc", "phase": 1, "seed": 2, "jain": None,
         "goodput_kbps": None, "error": "boom"},
        {"experiment": "Fig. 8", "scheme": "burstrtc", "phase": None, "seed": 1, "jain": None,
         "goodput_kbps": None, "error": "failed"},
    ])  # fmt: skip
    t = spread(per_run)
    assert len(t) == 3 and "seed" not in t
    first = t.iloc[0]
    assert (first["phase"], first["seeds"]) == (0, 2)
    assert math.isclose(first["jain"], 0.8) and first["jain_min"] == 0.7
    assert first["goodput_kbps"] == 2000.0 and first["goodput_kbps_max"] == 3000.0
    # A failed seed is left out of the mean; a case with no run left keeps its error.
    assert (t.iloc[1]["seeds"], t.iloc[1]["goodput_kbps"]) == (1, 2000.0)
    assert t.iloc[2]["error"] == "failed" and t.iloc[2]["seeds"] == 0
