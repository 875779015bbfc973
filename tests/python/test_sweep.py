"""Sweeps: spec expansion, the per-run cache, resuming, the table, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import rtcc
from conftest import requires_native
from rtcc.sweepspec import SweepError, load_spec, set_dotted

SPEC = """\
name = "small"
controllers = ["gcc", { name = "fixed", rate = "800kbps", label = "fixed-800k" }]
traces = ["3Mbps", { kind = "pulse", high = "3Mbps", low = "1Mbps", every = "4s" }]
seeds = [1, 2]

[base]
name = "base"
duration = "8s"

[base.link]
capacity = "2Mbps"
delay = "20ms"
queue = "unlimited"

[[base.flow]]
controller = "gcc"
encoder = "ideal"

[overrides]
"flow.0.fps" = 25
"""
RUNS = 2 * 2 * 2  # controllers x traces x seeds


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_spec_expands_to_the_cartesian_product(spec: Path):
    loaded = load_spec(spec)
    assert loaded.name == "small"
    labels = [(r.labels["controller"], r.labels["trace"], r.seed) for r in loaded.runs]
    assert labels == [
        (c, t, s) for c in ("gcc", "fixed-800k") for t in ("3Mbps", "pulse") for s in (1, 2)
    ]
    run = loaded.runs[2]  # gcc, pulse, seed 1
    assert run.scenario["link"]["capacity"]["every"] == "4s"
    assert run.scenario["flow"][0]["fps"] == 25
    assert run.scenario["seed"] == 1
    fixed = loaded.runs[4].scenario["flow"][0]["controller"]
    assert fixed == {"name": "fixed", "rate": "800kbps"}  # the label is not a parameter


def test_override_axes_and_dotted_keys(tmp_path: Path):
    text = SPEC.replace(
        '"flow.0.fps" = 25', '"link.delay" = ["10ms", "40ms"]\n"flow.*.mtu" = "1000B"'
    )
    loaded = load_spec(text)
    assert len(loaded.runs) == RUNS * 2
    assert {r.labels["link.delay"] for r in loaded.runs} == {"10ms", "40ms"}
    assert all(r.scenario["flow"][0]["mtu"] == "1000B" for r in loaded.runs)
    data = {"flow": [{"controller": "gcc"}, {"controller": "gcc"}]}
    set_dotted(data, "flow.1.controller.loss", "classic")
    assert data["flow"][1]["controller"] == {"name": "gcc", "loss": "classic"}
    with pytest.raises(KeyError):
        set_dotted(data, "flow.5.fps", 30)


def test_trace_globs_resolve_against_the_spec(tmp_path: Path):
    folder = tmp_path / "t"
    folder.mkdir()
    for name in ("b.down", "a.down", "a.up"):
        (folder / name).write_text("1\n", encoding="utf-8")  # 12 Mbps, constant
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC.replace('traces = ["3Mbps",', 'traces = ["t/*.down",'), encoding="utf-8")
    runs = load_spec(spec).runs
    assert [r.labels["trace"] for r in runs[:6]] == ["a.down"] * 2 + ["b.down"] * 2 + ["pulse"] * 2
    file = runs[0].scenario["link"]["capacity"]["file"]
    assert Path(file).is_absolute() and Path(file).name == "a.down"


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (("seeds = [1, 2]", "seeds = 0"), ["seeds", "at least 1"]),
        (("seeds = [1, 2]", "seeds = [1, -2]"), ["seeds[1]"]),
        (("seeds = [1, 2]", "colour = 1"), ["colour", "unknown field"]),
        (('traces = ["3Mbps",', 'traces = ["nope/*.down",'), ["traces[0]", "nope"]),
        (('"flow.0.fps" = 25', '"flow.3.fps" = 25'), ["overrides.flow.3.fps"]),
        (('"flow.0.fps" = 25', '"link.delay" = []'), ["overrides.link.delay", "empty"]),
        (("[base]", "[base"), ["small.toml"]),
        (('controllers = ["gcc",', "controllers = [3,"), ["controllers[0]"]),
    ],
)
def test_spec_errors_name_file_and_field(tmp_path: Path, change, needles):
    path = tmp_path / "small.toml"
    path.write_text(SPEC.replace(*change), encoding="utf-8")
    with pytest.raises(SweepError) as info:
        load_spec(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    for needle in needles:
        assert needle in message


def test_missing_base_file(tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text('base = "gone.toml"\n', encoding="utf-8")
    with pytest.raises(SweepError, match=r"s\.toml: base: .*gone\.toml: no such file"):
        load_spec(path)


INLINE_BASE = {
    "duration": "1s",
    "link": {"capacity": "2Mbps", "delay": "20ms", "queue": "unlimited"},
    "flow": [{"name": "call", "controller": {"name": "fixed", "rate": "300kbps"}}],
}
KNOWN = (
    "name, base, controllers, controller_flows, traces, seeds, flows, convergence, series, "
    "overrides, steady_window_s, smooth_s, series_s"
)
NAME_RULE = (
    "cannot be used in a file name (use ASCII letters, digits, '-', '_' and '.', not "
    "starting with '.', at most 64 characters); it names the results folder"
)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"bogus": 1}, f"bogus: unknown field (known: {KNOWN})"),
        ({"seeds": 0}, "seeds: a count must be at least 1"),
        ({"seeds": 2**64}, "seeds: a count must be at most 2^64-1"),
        ({"seeds": 2.5}, "seeds: must be a count or a non-empty list of integers"),
        ({"seeds": True}, "seeds: must be a count or a non-empty list of integers"),
        ({"seeds": []}, "seeds: must be a count or a non-empty list of integers"),
        ({"seeds": [1, True, -1]}, "seeds[1]: must be an integer in 0..2^64-1"),
        ({"controllers": []}, "controllers: must be a non-empty list"),
        ({"controllers": "gcc"}, "controllers: must be a non-empty list"),
        (
            {"controllers": ["gcc", {"rate": "1Mbps"}]},
            "controllers[1]: must be a name or a table with a name",
        ),
        ({"traces": [5]}, "traces[0]: must be a trace file, a rate or a capacity table"),
        (
            {"traces": [{"kind": "trace"}]},
            'traces[0]: a capacity table of kind "trace" needs a file',
        ),
        ({"flows": "some"}, 'flows: must be "first" or "all"'),
        ({"convergence": "yes"}, "convergence: must be true or false"),
        ({"series": 1}, "series: must be true or false"),
        ({"steady_window_s": -1}, "steady_window_s: must be a non-negative number of seconds"),
        ({"steady_window_s": True}, "steady_window_s: must be a non-negative number of seconds"),
        ({"smooth_s": float("nan")}, "smooth_s: must be a non-negative number of seconds"),
        ({"series_s": 0}, "series_s: must be a positive number of seconds"),
        ({"name": 5}, "name: must be a string, not int; it names the results folder"),
        ({"name": "../x"}, f"name: '../x' {NAME_RULE}"),
        ({"controller_flows": "0"}, "controller_flows: must be a list of flow indices"),
        ({"controller_flows": [True]}, "controller_flows: must be a list of flow indices"),
        ({"overrides": 5}, "overrides: must be a table of dotted keys"),
        ({"overrides": {"link.delay": []}}, "overrides.link.delay: an empty list gives no runs"),
        ({"base": [INLINE_BASE, 5]}, "base[1]: must be a path or a table"),
        ({"base": []}, "base: needs at least one scenario"),
        ({"base": 5}, "base: must be a path or a table"),
        ({"base": None}, "base: missing (a scenario path or an inline [base] table)"),
        # Several problems: the first in the order the fields were always checked.
        ({"seeds": 0, "flows": "x", "bogus": 1}, f"bogus: unknown field (known: {KNOWN})"),
        ({"seeds": 0, "controllers": []}, "controllers: must be a non-empty list"),
        (
            {"seeds": 0, "flows": "x", "name": 5},
            "name: must be a string, not int; it names the results folder",
        ),
    ],
)
def test_spec_errors_are_the_one_line_messages(fields, message):
    spec = {"base": INLINE_BASE, **fields}
    if spec["base"] is None:
        del spec["base"]
    with pytest.raises(SweepError) as info:
        load_spec(spec, "spec.toml")
    assert str(info.value) == f"spec.toml: {message}"


def test_spec_error_on_the_command_line(capsys, tmp_path: Path):
    from rtcc import cli

    path = tmp_path / "spec.toml"
    path.write_text("seeds = [1, true]\n" + SPEC.split("seeds = [1, 2]\n")[1], encoding="utf-8")
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"rtcc: error: {path}: seeds[1]: must be an integer in 0..2^64-1\n"
    assert captured.out == ""


@requires_native
def test_cache_second_run_computes_nothing(spec: Path, tmp_path: Path):
    out = tmp_path / "out"
    first = rtcc.sweep(spec, out=out, jobs=2)
    assert (first.attrs["executed"], first.attrs["cached"], first.attrs["failed"]) == (RUNS, 0, 0)
    assert len(list((out / "runs").glob("*.json"))) == RUNS
    second = rtcc.sweep(spec, out=out, jobs=2)
    assert (second.attrs["executed"], second.attrs["cached"]) == (0, RUNS)
    pd.testing.assert_frame_equal(first, second)
    # A different seed list reuses the overlapping runs and simulates only the new ones.
    third = rtcc.sweep(spec.read_text().replace("seeds = [1, 2]", "seeds = [2, 3]"), out=out)
    assert (third.attrs["executed"], third.attrs["cached"]) == (RUNS // 2, RUNS // 2)
    fresh = rtcc.sweep(spec, out=out, jobs=1, fresh=True)
    assert fresh.attrs["executed"] == RUNS


@requires_native
def test_a_rebuilt_simulator_invalidates_the_cache(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from rtcc import sweeprun as module

    assert rtcc.sweep is module.sweep  # the package exposes the function, not the module
    rtcc.sweep(spec, out=tmp_path, jobs=1)
    monkeypatch.setattr(module, "_simulator_digest", lambda: "another build")
    again = rtcc.sweep(spec, out=tmp_path, jobs=1)
    assert (again.attrs["executed"], again.attrs["cached"]) == (RUNS, 0)


@requires_native
def test_interrupted_sweep_resumes(spec: Path, tmp_path: Path):
    full = rtcc.sweep(spec, out=tmp_path / "a", jobs=1)
    # An interrupted sweep leaves some finished runs behind: keep three of them.
    partial = tmp_path / "b" / "runs"
    partial.mkdir(parents=True)
    kept = sorted((tmp_path / "a" / "runs").glob("*.json"))[:3]
    for path in kept:
        shutil.copy(path, partial / path.name)
    (partial / "broken.json.123.tmp").write_text("{", encoding="utf-8")  # a killed write
    resumed = rtcc.sweep(spec, out=tmp_path / "b", jobs=2)
    assert (resumed.attrs["executed"], resumed.attrs["cached"]) == (RUNS - 3, 3)
    pd.testing.assert_frame_equal(full, resumed)  # deterministic: same numbers either way


@requires_native
def test_table_columns_and_values(spec: Path, tmp_path: Path):
    out = tmp_path / "out"
    table = rtcc.sweep(spec, out=out, jobs=1)
    on_disk = pd.read_csv(out / "table.csv")
    assert list(on_disk.columns) == list(table.columns)
    assert len(table) == RUNS
    summary = rtcc.simulate(load_spec(spec).runs[4].scenario, record_packets=False).summary
    metrics = [k for k in summary["flows"][0] if k not in ("name", "controller")]
    assert list(table.columns) == [
        "scenario", "controller", "trace", "seed", "flow_name", *metrics, "run", "error",
    ]  # fmt: skip
    row = table.iloc[4]  # fixed-800k, 3Mbps, seed 1: the run simulated above
    assert row["controller"] == "fixed-800k" and row["trace"] == "3Mbps"
    assert row["video_kbps"] == pytest.approx(summary["flows"][0]["video_kbps"])
    assert row["video_kbps"] == pytest.approx(800, rel=0.02)
    record = json.loads((out / "runs" / f"{row['run']}.json").read_text())
    assert record["seed"] == 1 and "packets = false" in record["scenario"]


@requires_native
def test_all_flows_and_convergence_columns(tmp_path: Path):
    spec = {
        "base": {
            "name": "two",
            "duration": "12s",
            "link": {
                "capacity": {"kind": "pulse", "high": "3Mbps", "low": "1Mbps", "every": "4s"},
                "delay": "20ms",
                "queue": "unlimited",
            },
            "flow": [
                {"name": "a", "controller": {"name": "fixed", "rate": "300kbps"}},
                {"name": "b", "controller": "gcc", "encoder": "ideal"},
            ],
        },
        "flows": "all",
        "convergence": True,
        "controller_flows": [0],
        "controllers": [{"name": "fixed", "rate": "400kbps", "label": "fixed-400k"}],
    }
    table = rtcc.sweep(spec, jobs=1)
    assert list(table["flow"]) == [0, 1]
    assert list(table["controller"]) == ["fixed-400k", "gcc"]
    assert list(table["flow_name"]) == ["a", "b"]
    assert list(table["steps_down"]) == [1, 1] and list(table["steps_up"]) == [1, 1]  # 4 s, 8 s
    # 400 kbps never needs more than the link gives: it is at 90 % of its peak within bins.
    assert table.loc[0, "converge_up_s"] <= 0.5
    # ... and receives at least its own 400 kbps (more while the low phase's queue drains).
    assert 0.39 <= table.loc[0, "up_steady_mbps"] <= 0.6


@requires_native
def test_failed_runs(tmp_path: Path, spec: Path):
    bad = spec.read_text().replace('"gcc",', '"no-such-cc",', 1)
    with pytest.raises(SweepError, match=r"controller.*\(run scenario=base controller=no-such-cc"):
        rtcc.sweep(bad, jobs=1)
    table = rtcc.sweep(bad, jobs=2, on_error="skip")
    assert table.attrs["failed"] == RUNS // 2
    assert table["error"].notna().sum() == RUNS // 2
    assert table.loc[table["controller"] == "fixed-800k", "video_kbps"].notna().all()


@requires_native
def test_cli_sweep(run_cli, spec: Path, tmp_path: Path):
    out = tmp_path / "cli"
    done = run_cli("sweep", spec, "--out", out, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert f"{RUNS} runs: {RUNS} simulated, 0 cached, 0 failed" in done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].split()[:5] == ["scenario", "controller", "trace", "runs", "util"]
    assert len(pd.read_csv(out / "table.csv")) == RUNS
    again = run_cli("sweep", spec, "--out", out, "-q")
    assert again.returncode == 0 and again.stdout == ""
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace("seeds = [1, 2]", "seeds = 'x'"), encoding="utf-8")
    for args in (("sweep", bad), ("sweep", spec, "--jobs", "0"), ("sweep", tmp_path / "no.toml")):
        failed = run_cli(*args)
        assert failed.returncode == 2
        assert len(failed.stderr.splitlines()) == 1, failed.stderr
        assert failed.stderr.startswith("rtcc: error: ") and "Traceback" not in failed.stderr


def test_series_are_kept_resampled_and_series_s_is_checked(tmp_path: Path):
    from rtcc.sweeprun import resample

    series = pd.DataFrame({"t_s": [0.1, 0.2, 0.3, 0.4], "owd_ms": [10.0, float("nan"), 30.0, 50.0]})
    out = resample(series, 0.2)
    assert out["t_s"].tolist() == pytest.approx([0.2, 0.4])
    assert out["owd_ms"].tolist() == pytest.approx([10.0, 40.0])  # NaN left out of the mean
    path = tmp_path / "s.toml"
    for bad in ("0", "-1", "true", '"1s"'):
        extra = f"seeds = [1, 2]\nseries = true\nseries_s = {bad}\n"
        text = SPEC.replace("seeds = [1, 2]\n", extra)
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SweepError, match=r"series_s: must be a positive number"):
            load_spec(path)
    text = SPEC.replace("seeds = [1, 2]\n", "seeds = [1, 2]\nseries = true\nseries_s = 2\n")
    path.write_text(text, encoding="utf-8")
    assert load_spec(path).analysis.series_s == 2.0


@requires_native
def test_a_base_on_a_named_sets_file_keeps_the_set(tmp_path: Path):
    # A file of a named set is the set's: making it absolute against the spec's folder
    # would refuse it ("must be a file inside the set").
    path = tmp_path / "set.toml"
    path.write_text(
        'name = "set"\ncontrollers = ["gcc"]\nseeds = [1]\n[base]\nduration = "2s"\n'
        '[base.link]\ncapacity = { kind = "trace", set = "mahimahi", file = "ATT-LTE-driving.down" }\n'
        '[[base.flow]]\ncontroller = "gcc"\n',
        encoding="utf-8",
    )
    loaded = load_spec(path)
    capacity = loaded.runs[0].scenario["link"]["capacity"]
    assert capacity["file"] == "ATT-LTE-driving.down"
    result = rtcc.simulate(loaded.runs[0].scenario, record_packets=False)
    assert result.summary["flows"][0]["goodput_kbps"] > 0
