"""The comparison page read the way a researcher reads it: one panel per trace unless
pooled, intervals that stay positive on a log axis, the sweep's name as the title, and a
page over many runs that stays small (plotly once, the figures compressed)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from rtcc import charts
from rtcc.comparison import _title, build
from rtcc.styles import style

TRACES = ("3 Mbps", "12 Mbps", "cell.down")


def _runs(schemes=("gcc", "copa"), traces=TRACES, seeds=4, experiment="exp", folder="f"):
    """A load_runs-shaped table: one video flow per run; delays spanning decades."""
    rng = np.random.default_rng(1)
    rows = []
    for e in (experiment if isinstance(experiment, tuple) else (experiment,)):
        for i, scheme in enumerate(schemes):
            for j, trace in enumerate(traces):
                for seed in range(seeds):
                    rows.append({
                        "run": f"{e}{i}{j}{seed}".ljust(24, "0"), "experiment": e,
                        "scheme": scheme, "trace": trace, "seed": seed, "flow": 0,
                        "flow_name": "v", "kind": "video", "controller": scheme,
                        "scheme_flow": True,
                        "utilization": 0.5 + 0.1 * i + 0.01 * rng.random(),
                        # 2 ms to 2 s: a log axis, with a wide spread across seeds.
                        "owd_ms_p95": 2.0 * 10 ** (j + i * 0.5) * (0.2 + 3 * rng.random()),
                        "video_kbps": 1000.0 + 100 * seed, "folder": folder, "record": None,
                        "error": None,
                    })  # fmt: skip
    return pd.DataFrame(rows)


def _scatter(page: str) -> dict:
    figs = charts.figures_of(page)
    return next(f for f in figs.values() if any("error_x" in t for t in f["data"]))


def test_scatter_has_one_panel_per_trace_by_default():
    page = build(_runs())
    fig = _scatter(page)
    titles = [a["text"] for a in fig["layout"]["annotations"] if a["text"] in TRACES]
    assert titles == list(TRACES)
    axes = {t.get("xaxis", "x") for t in fig["data"]}
    assert len(axes) == len(TRACES)
    # The table has a row per trace and scheme.
    table = page[page.index("<h3>Schemes and metrics</h3>"):page.index("<h3>Delay")]
    assert table.count("<td>cell.down</td>") == 2


def test_pooled_traces_are_one_panel():
    fig = _scatter(build(_runs(), pool_traces=True))
    assert {t.get("xaxis", "x") for t in fig["data"]} == {"x"}


def test_log_axis_intervals_are_positive_and_geometric():
    fig = _scatter(build(_runs(traces=("one",), seeds=6)))
    assert fig["layout"]["xaxis"]["type"] == "log"
    means = [t for t in fig["data"] if "error_x" in t and t["error_x"].get("visible")]
    assert means
    for t in means:
        centre = t["x"][0]
        lower = centre - t["error_x"]["arrayminus"][0]
        upper = centre + t["error_x"]["array"][0]
        assert 0 < lower < centre < upper
    # The centre is the geometric mean of the runs behind it.
    runs = [t for t in fig["data"] if "error_x" not in t]
    for r, m in zip(runs, means, strict=True):
        g = math.exp(np.mean(np.log(r["x"])))
        assert m["x"][0] == pytest.approx(g, rel=1e-3)


def test_geometric_ci_by_hand():
    g, lo, hi, n = charts.geometric_ci([1.0, 100.0])
    assert (g, n) == (pytest.approx(10.0), 2)
    # t(0.975, 1) = 12.706; sd of ln values = ln(100)/sqrt(2); / sqrt(2) -> ln(100) / 2.
    half = 12.706204736 * math.log(100) / 2
    assert lo == pytest.approx(10 * math.exp(-half), rel=1e-6)
    assert hi == pytest.approx(10 * math.exp(half), rel=1e-6)


def test_title_is_the_sweep_or_study_name(tmp_path):
    sweep = tmp_path / "out"
    sweep.mkdir()
    (sweep / "sweep.json").write_text(json.dumps({"name": "queue sizes"}))
    assert _title([sweep]) == "rtcc comparison: queue sizes"
    study = tmp_path / "repro"
    (study / "dataset" / "runs" / "study=cross").mkdir(parents=True)
    assert _title([study]) == "rtcc comparison: cross"
    assert _title([tmp_path / "plain"]) is None
    page = build(_runs(), title=_title([sweep]))
    assert "<h1>rtcc comparison: queue sizes</h1>" in page


def test_folders_group_the_experiments():
    runs = pd.concat([_runs(experiment="A", folder="x/cross"), _runs(experiment="B", folder="x/pibes")])
    page = build(runs)
    assert '<h2 class="group">cross</h2>' in page and '<h2 class="group">pibes</h2>' in page
    assert page.index('class="group">cross') < page.index(">A</h2>") < page.index(
        'class="group">pibes') < page.index(">B</h2>")  # fmt: skip


def test_colours_are_the_shared_scheme_styles():
    fig = _scatter(build(_runs(schemes=("gcc", "cross", "my-own"))))
    for t in fig["data"]:
        assert t["marker"]["color"] == style(t["name"]).color or t["name"] == "my-own"


def test_a_large_set_of_runs_stays_under_3_mb():
    # 5 groups x 12 experiments x 8 schemes x 3 traces x 5 seeds = 7,200 runs.
    schemes = ("gcc", "copa", "vivace", "bbr", "cross", "nada", "nadar", "rbbr")
    parts = [
        _runs(schemes, seeds=5, experiment=tuple(f"{g} case {k}" for k in range(12)),
              folder=f"all/{g}")
        for g in ("dumbo", "cross", "pibes", "burstrtc", "fbra")
    ]  # fmt: skip
    page = build(pd.concat(parts, ignore_index=True))
    assert len(page.encode()) < 3_000_000
    assert page.count('class="chart"') >= 60
    # plotly.js is in the page once.
    assert page.count('id="rtcc-plotly"') == 1
