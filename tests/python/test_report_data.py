"""The comparison report's data: confidence intervals, per-run values, the loader
(`rtcc.load_runs`) over every kind of results folder, and bad input refused in one line.

The browser check of the page itself is in test_report_page.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import SHORT_SCENARIO, requires_native
from rtcc import cli
from rtcc.comparison import OptionError, build, compare
from rtcc.metrics import mean_ci, per_run
from rtcc.runset import (
    LABELS,
    RunsError,
    describe_capacity,
    load_distributions,
    load_runs,
    load_series,
)

# --- confidence intervals -------------------------------------------------------------


def test_mean_ci_by_hand():
    # s = sqrt(2.5) = 1.58114, s/sqrt(5) = 0.70711, t(0.975, 4) = 2.77645 -> 1.96324
    mean, half, n = mean_ci([1, 2, 3, 4, 5])
    assert (mean, n) == (3.0, 5)
    assert half == pytest.approx(1.96324, abs=1e-5)
    # s = sqrt(2), s/sqrt(2) = 1, t(0.975, 1) = 12.7062
    assert mean_ci([1, 3]) == pytest.approx((2.0, 12.7062, 2), abs=1e-4)
    # 90 %: t(0.95, 4) = 2.13185
    assert mean_ci([1, 2, 3, 4, 5], level=0.90)[1] == pytest.approx(1.50744, abs=1e-5)


def test_mean_ci_edges():
    mean, half, n = mean_ci([7.0])
    assert (mean, n) == (7.0, 1) and math.isnan(half)
    mean, half, n = mean_ci([])
    assert n == 0 and math.isnan(mean) and math.isnan(half)
    # NaN and inf are not values: the interval is of the finite ones.
    assert mean_ci([1, float("nan"), 3, float("inf")]) == pytest.approx(mean_ci([1, 3]))
    assert mean_ci([4, 4, 4]) == (4.0, 0.0, 3)


def test_mean_ci_covers_the_mean_at_its_level():
    # 2,000 samples of 5 draws from N(10, 2): the 95 % interval holds 10 about 95 % of the time.
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        mean, half, _ = mean_ci(rng.normal(10, 2, 5))
        hits += abs(mean - 10) <= half
    assert 0.935 <= hits / 2000 <= 0.965


def test_per_run_is_the_mean_over_scheme_flows():
    runs = pd.DataFrame(
        {
            "run": ["a", "a", "a", "b"],
            "experiment": ["e"] * 4,
            "scheme": ["x"] * 4,
            "trace": ["t"] * 4,
            "seed": [1, 1, 1, 2],
            "scheme_flow": [True, True, False, True],
            "owd_ms_mean": [10.0, 30.0, 999.0, 50.0],
            "utilization": [0.4, None, 0.9, 0.8],
            "error": [None] * 4,
        }
    )
    out = per_run(runs, ["owd_ms_mean", "utilization"])
    assert out["run"].tolist() == ["a", "b"]
    assert out["flows"].tolist() == [2, 1]
    assert out["owd_ms_mean"].tolist() == [20.0, 50.0]  # the TCP flow's 999 is not the scheme's
    assert out["utilization"].tolist() == [0.4, 0.8]


# --- fabricated folders ---------------------------------------------------------------


def _record(key: str, flows: list[dict], kept: dict | None = None, seed: int = 1) -> dict:
    return {
        "version": 1,
        "key": key,
        "seed": seed,
        "scenario": 'name = "base"\n[link]\ncapacity = { kind = "trace", file = "/x/ATT.down" }\n',
        "summary": {
            "scenario": "base",
            "seed": seed,
            "duration_s": 30.0,
            "flows": flows,
            "link": {"utilization": 0.5, "utilization_by_kind": {"video": 0.5}},
            "jain_index": None,
        },
        "flows": kept or {},
    }


def _video(name: str, controller: str, **metrics: float) -> dict:
    return {"name": name, "kind": "video", "controller": controller, **metrics}


def _sweep(folder: Path, rows: list[dict], records: dict[str, dict]) -> Path:
    (folder / "runs").mkdir(parents=True)
    for key, record in records.items():
        (folder / "runs" / f"{key}.json").write_text(json.dumps(record))
    pd.DataFrame(rows).to_csv(folder / "table.csv", index=False)
    return folder


def _row(key: str | None, controller: str, seed: int, **labels: object) -> dict:
    return {"scenario": "base", "controller": controller, "seed": seed, **labels,
            "flow_name": "call", "video_kbps": 1.0, "run": key, "error": None}  # fmt: skip


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    tcp = {"name": "bulk", "kind": "tcp", "cc": "cubic", "owd_ms_mean": 500.0}
    series = {"t_s": [0.1, 0.2, 0.3], "recv_kbps": [100, 200, 300],
              "capacity_kbps": [400, 400, 0], "latency_ms": [50, None, 70]}  # fmt: skip
    records = {
        "k1": _record("k1", [_video("call", "gcc", owd_ms_mean=40.0, utilization=0.5), tcp],
                      {"0": {"series": series, "convergence": {"converge_up_s": 3.5}}}),
        "k2": _record("k2", [_video("call", "gcc", owd_ms_mean=60.0, utilization=0.7)],
                      {"0": {"quantiles": {"utilization": list(np.linspace(0, 1, 101))}}},
                      seed=2),
        "k3": _record("k3", [_video("call", "copa", owd_ms_mean=20.0, utilization=0.9)]),
    }  # fmt: skip
    rows = [_row("k1", "gcc", 1), _row("k2", "gcc", 2), _row("k3", "copa", 1),
            {**_row(None, "copa", 2), "error": "boom (run controller=copa seed=2)"}]  # fmt: skip
    return _sweep(tmp_path / "sweep", rows, records)


def test_loader_rows_labels_and_metrics(sweep_dir: Path):
    runs = load_runs([sweep_dir])
    assert list(runs.columns[: len(LABELS)]) == list(LABELS)
    assert list(runs.columns[-3:]) == ["folder", "record", "error"]
    ok = runs[runs["error"].isna()]
    # one row per flow per run: k1 has a TCP flow beside its call
    assert ok.groupby("run").size().to_dict() == {"k1": 2, "k2": 1, "k3": 1}
    k1 = ok[ok["run"] == "k1"].set_index("flow")
    assert k1.loc[0, "scheme"] == "gcc" and k1.loc[1, "scheme"] == "gcc"
    assert k1.loc[0, "experiment"] == "base"  # the sweep's base scenario
    assert k1.loc[0, "trace"] == "ATT.down"  # from the record's scenario
    assert bool(k1.loc[0, "scheme_flow"]) and not bool(k1.loc[1, "scheme_flow"])
    assert k1.loc[1, "kind"] == "tcp" and k1.loc[1, "controller"] == "cubic"
    assert k1.loc[0, "converge_up_s"] == 3.5
    assert k1.loc[0, "link_utilization"] == 0.5
    assert "link_utilization_by_kind" not in runs  # tables are not cells
    assert ok.set_index("run").loc["k2", "seed"] == 2
    failed = runs[runs["error"].notna()]
    assert len(failed) == 1 and failed.iloc[0]["scheme"] == "copa"
    assert failed.iloc[0]["error"].startswith("boom")


def test_loader_series_and_distributions(sweep_dir: Path):
    runs = load_runs([sweep_dir])
    series = load_series(runs, ["k1", "k2", "k3"])
    assert series["run"].unique().tolist() == ["k1"]  # only k1 kept a series
    assert series["recv_kbps"].tolist() == [100, 200, 300]
    dist = load_distributions(runs)
    got = dist.groupby(["run", "metric"]).size().to_dict()
    assert got == {
        ("k1", "bin_latency_ms"): 101, ("k1", "recv_kbps"): 101, ("k1", "utilization"): 101,
        ("k2", "utilization"): 101,
    }  # fmt: skip
    k1 = dist[(dist["run"] == "k1") & (dist["metric"] == "utilization")]["value"]
    # per bin: 100/400 and 200/400; the bin without capacity is left out
    assert k1.min() == 0.25 and k1.max() == 0.5
    assert dist.loc[dist["run"] == "k2", "value"].tolist() == pytest.approx(np.linspace(0, 1, 101))


def test_other_labels_split_experiments(tmp_path: Path):
    records = {k: _record(k, [_video("call", "gcc", owd_ms_mean=1.0)]) for k in ("a", "b", "c")}
    rows = [_row("a", "gcc", 1, **{"link.delay": "25ms", "experiment": "E"}),
            _row("b", "gcc", 1, **{"link.delay": "50ms", "experiment": "E"}),
            _row("c", "gcc", 1, **{"link.delay": "25ms", "experiment": "F"})]  # fmt: skip
    runs = load_runs([_sweep(tmp_path / "s", rows, records)])
    assert runs["experiment"].tolist() == ["E · link.delay=25ms", "E · link.delay=50ms", "F"]
    assert runs["link.delay"].tolist() == ["25ms", "50ms", "25ms"]


def test_empty_label_cells_fall_back(tmp_path: Path):
    records = {"a": _record("a", [_video("call", "nada", owd_ms_mean=1.0)])}
    rows = [_row("a", "", 1, trace=None)]  # empty cells in the CSV
    runs = load_runs([_sweep(tmp_path / "s", rows, records)])
    assert runs[["scheme", "trace"]].values.tolist() == [["nada", "ATT.down"]]


def test_same_experiment_in_two_folders(sweep_dir: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    for name in ("table.csv", "runs"):
        src = sweep_dir / name
        if src.is_dir():
            (other / name).mkdir()
            for f in src.iterdir():
                (other / name / f.name).write_bytes(f.read_bytes())
        else:
            (other / name).write_bytes(src.read_bytes())
    apart = load_runs([sweep_dir, other])
    assert set(apart["experiment"]) == {"base (sweep)", "base (other)"}
    pooled = load_runs([sweep_dir, other], pool=True)
    assert set(pooled["experiment"]) == {"base"}
    # the same runs (same key and labels) count once
    assert len(pooled[pooled["error"].isna()]) == len(apart[apart["error"].isna()]) // 2


def test_a_folder_named_twice_is_read_once(sweep_dir: Path):
    once = load_runs([sweep_dir])
    twice = load_runs([sweep_dir, sweep_dir.parent / ".." / sweep_dir.parent.name / "sweep"])
    pd.testing.assert_frame_equal(once, twice)


def test_a_reproduce_all_folder_reads_each_paper(tmp_path: Path):
    out = tmp_path / "all"
    for paper, scheme in (("dumbo", "gcc"), ("fbra", "fbra")):
        records = {f"{paper}1": _record(f"{paper}1", [_video("call", scheme, owd_ms_mean=1.0)])}
        _sweep(out / paper, [_row(f"{paper}1", scheme, 1, experiment="E")], records)
        (out / paper / "table.csv").rename(out / paper / "runs.csv")
    (out / "index.html").write_text("<html></html>")
    (out / "dataset").mkdir()
    runs = load_runs([out])
    assert runs[["experiment", "scheme"]].values.tolist() == [
        ["E (dumbo)", "gcc"], ["E (fbra)", "fbra"],
    ]  # fmt: skip
    # Named beside one of its papers, that paper is read once.
    pd.testing.assert_frame_equal(load_runs([out, out / "fbra"]), runs)


def test_records_without_a_table(tmp_path: Path):
    folder = tmp_path / "old"
    (folder / "runs").mkdir(parents=True)
    record = _record("r1", [_video("call", "copa+dumbo", owd_ms_mean=5.0)])
    (folder / "runs" / "r1.json").write_text(json.dumps(record))
    runs = load_runs(folder)
    assert runs[["run", "experiment", "scheme", "trace", "seed"]].values.tolist() == [
        ["r1", "base", "copa+dumbo", "ATT.down", 1]
    ]


def test_log_ticks():
    from rtcc.charts import log_ticks

    assert log_ticks(30, 700) == [50, 100, 200, 500]
    assert log_ticks(0.15, 2) == [0.2, 0.5, 1, 2]
    assert log_ticks(3, 4) == []


def test_describe_capacity():
    assert describe_capacity("3Mbps") == "3Mbps"
    assert describe_capacity({"kind": "trace", "file": "/a/b/TMobile.down"}) == "TMobile.down"
    pulse = {"kind": "pulse", "high": "3Mbps", "low": "500kbps", "every": "40s"}
    assert describe_capacity(pulse) == "pulse 3Mbps/500kbps every 40s"
    assert describe_capacity(None) is None


# --- bad input ------------------------------------------------------------------------


def _bad_folders(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    cases: dict[str, tuple[Path, str]] = {}
    cases["missing"] = (tmp_path / "nope", "no such folder")
    (tmp_path / "file.txt").write_text("x")
    cases["file"] = (tmp_path / "file.txt", "not a folder")
    (tmp_path / "empty").mkdir()
    cases["empty"] = (tmp_path / "empty", "empty folder")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.md").write_text("x")
    cases["junk"] = (tmp_path / "junk", "not a results folder")
    lost = _sweep(tmp_path / "lost", [_row("gone", "gcc", 1)], {})
    cases["lost record"] = (lost, "gone.json: no such file")
    bad = _sweep(tmp_path / "badjson", [_row("k", "gcc", 1)], {})
    (bad / "runs" / "k.json").write_text("{not json")
    cases["bad json"] = (bad, "k.json: not readable JSON")
    shape = _sweep(tmp_path / "shape", [_row("k", "gcc", 1)], {})
    (shape / "runs" / "k.json").write_text(json.dumps({"summary": {"flows": 3}}))
    cases["bad record"] = (shape, "k.json: not a run's summary")
    key = _sweep(tmp_path / "key", [_row("../../etc/passwd", "gcc", 1)], {})
    cases["key"] = (key, "is not a run key")
    (tmp_path / "emptycsv").mkdir()
    (tmp_path / "emptycsv" / "table.csv").write_text("")
    cases["empty csv"] = (tmp_path / "emptycsv", "table.csv: empty file")
    (tmp_path / "summary").mkdir()
    (tmp_path / "summary" / "summary.json").write_text("[1, 2]")
    cases["bad summary"] = (tmp_path / "summary", "summary.json: not a run's summary")
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "dataset.json").write_text('{"format": "rtcc-dataset"}')
    cases["dataset"] = (tmp_path / "dataset", "a results dataset, not a results folder")
    return cases


def test_bad_folders_are_one_clear_error(tmp_path: Path):
    for name, (folder, needle) in _bad_folders(tmp_path).items():
        with pytest.raises(RunsError) as caught:
            load_runs([folder])
        message = str(caught.value)
        assert str(folder) in message and needle in message, (name, message)
        assert "\n" not in message


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, capsys, sweep_dir: Path):
    cases = [([str(folder)], needle) for folder, needle in _bad_folders(tmp_path).values()]
    cases += [
        ([str(sweep_dir), "--out", str(tmp_path)], "--out"),
        ([str(sweep_dir), "--out", str(tmp_path / "file.txt" / "p.html")], "not a folder"),
        ([str(sweep_dir), "--out", "/proc/page.html"], "cannot write into /proc"),
        ([str(sweep_dir), "--metrics", "utilisation"], "close: utilization"),
        ([str(sweep_dir), "--metrics", ","], "--metrics"),
        ([str(sweep_dir), "--delay", "nope"], "--delay: no numeric column 'nope'"),
        ([str(sweep_dir), "--rate", "flow_name"], "--rate"),
        ([str(sweep_dir), "--series", "zz"], "--series: no run 'zz'"),
        ([str(sweep_dir), "--series", "k"], "matches 3 runs"),
        ([], "DIR"),
    ]
    for args, needle in cases:
        out = [] if "--out" in args else ["--out", str(tmp_path / "page.html")]
        code = cli.main(["report", *args, *out])
        stdout, err = capsys.readouterr()
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1, (args, err)
        assert lines[0].startswith("rtcc: error: ") and needle in lines[0], (args, err)
        assert stdout == ""
    assert not (tmp_path / "page.html").exists()


def test_python_argument_types(sweep_dir: Path, tmp_path: Path):
    with pytest.raises(TypeError, match="folders must be"):
        load_runs(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pool must be"):
        load_runs([sweep_dir], pool="yes")  # type: ignore[arg-type]
    with pytest.raises(RunsError, match="no results folders"):
        load_runs([])
    with pytest.raises(TypeError, match="out must be"):
        compare([sweep_dir], out=5)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="metrics: give a list"):
        compare([sweep_dir], metrics="utilization")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="series: give a list"):
        compare([sweep_dir], series="k1")  # type: ignore[arg-type]


def test_chosen_series(sweep_dir: Path):
    default = compare([sweep_dir])  # first run of each scheme: k1 (gcc) kept one, k3 not
    assert default.count('data-kind="series"') == 1
    assert "No time series kept by the chosen runs of base (1 run)" in default
    picked = compare([sweep_dir], series=["k2"])
    assert 'data-kind="series"' not in picked
    assert "No time series kept by the chosen runs of base (1 run)" in picked


def test_no_finished_runs_is_refused(tmp_path: Path):
    rows = [{**_row(None, "gcc", 1), "error": "it broke"}]
    folder = _sweep(tmp_path / "failed", rows, {})
    with pytest.raises(OptionError, match=r"no finished runs.*it broke"):
        build(load_runs([folder]))


# --- real runs ------------------------------------------------------------------------


@requires_native
def test_sweep_and_run_folders_and_a_deterministic_page(tmp_path: Path):
    import rtcc

    base = tmp_path / "s.toml"
    base.write_text(SHORT_SCENARIO.replace('duration = "10s"', 'duration = "3s"'))
    spec = {"name": "mini", "base": str(base), "seeds": 2, "series": True,
            "controllers": ["gcc", "copa"], "traces": ["2Mbps"]}  # fmt: skip
    table = rtcc.sweep(spec, out=tmp_path / "sweep", jobs=1)
    rtcc.simulate(base).save(tmp_path / "one", plots=False)
    runs = rtcc.load_runs([tmp_path / "sweep", tmp_path / "one"])
    sweep_rows = runs[runs["folder"] == str(tmp_path / "sweep")]
    assert sorted(sweep_rows["run"]) == sorted(table["run"])
    assert sweep_rows["scheme"].tolist() == table["controller"].tolist()
    assert sweep_rows["video_kbps"].tolist() == pytest.approx(table["video_kbps"].tolist())
    one = runs[runs["folder"] == str(tmp_path / "one")]
    # one base scenario in two folders: kept apart, each named after its folder
    assert one[["experiment", "scheme", "seed"]].values.tolist() == [
        ["fixed-1mbps (one)", "fixed", 7]
    ]
    assert set(sweep_rows["experiment"]) == {"fixed-1mbps (sweep)"}
    series = load_series(runs, runs["run"])
    # the sweep kept its series; the run folder has its own
    assert set(series["run"]) == set(runs["run"])
    assert set(load_distributions(runs)["metric"]) >= {"utilization", "recv_kbps"}
    first = compare([tmp_path / "sweep", tmp_path / "one"], out=tmp_path / "a.html")
    second = compare([tmp_path / "sweep", tmp_path / "one"], out=tmp_path / "b.html")
    assert first == second == (tmp_path / "a.html").read_text(encoding="utf-8")
    assert first.startswith("<!DOCTYPE html>") and 'src="http' not in first
    assert first.count('class="chart"') >= 4


@requires_native
def test_reproductions_write_runs_csv(tmp_path: Path):
    """Each reproduction lists its runs with their keys, so the report can read them."""
    from rtcc.runset import write_runs
    from rtcc.sweeprun import execute
    from rtcc.sweepspec import Analysis, Run

    scenario = {"name": "x", "duration": "1s", "link": {"capacity": "1Mbps"},
                "flow": [{"name": "call", "controller": "gcc", "encoder": "ideal"}]}  # fmt: skip
    run = Run({"experiment": "E", "scheme": "gcc", "seed": 1}, scenario, 1, "<t>")
    result = execute([run], Analysis(), tmp_path, jobs=1)
    write_runs(tmp_path, [result])
    runs = load_runs([tmp_path])
    assert runs[["experiment", "scheme", "seed"]].values.tolist() == [["E", "gcc", 1]]
    assert runs["run"].tolist() == [result.records[0]["key"]]
