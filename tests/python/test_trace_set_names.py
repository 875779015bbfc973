"""Trace sets by name outside a scenario: ``SET/GLOB`` in a sweep's traces axis, the
sets' means and durations in ``rtcc traces``, and the OpenNetLab set's own record."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from conftest import requires_native, run_main
from rtcc.sweepspec import SweepError, load_spec

pytestmark = requires_native

REPO = Path(__file__).resolve().parents[2]
SPEC = """\
name = "sets"
controllers = ["gcc"]
traces = [TRACES]
seeds = 1

[base]
duration = "5s"

[base.link]
capacity = "2Mbps"

[[base.flow]]
controller = "gcc"
"""


def spec(tmp_path: Path, traces: str) -> Path:
    path = tmp_path / "sub" / "s.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SPEC.replace("TRACES", traces), encoding="utf-8")
    return path


def test_a_sweep_names_files_of_a_trace_set(tmp_path: Path):
    from rtcc.traces import bundled_root

    runs = load_spec(spec(tmp_path, '"mahimahi/*-LTE-*.down"')).runs
    files = [Path(r.scenario["link"]["capacity"]["file"]) for r in runs]
    assert [f.name for f in files] == [r.labels["trace"] for r in runs]
    assert files == sorted((bundled_root() / "mahimahi").glob("*-LTE-*.down"))
    assert len(files) == 5
    # One file of a set, no glob.
    (run,) = load_spec(spec(tmp_path, '"opennetlab/4G_500kbps.json"')).runs
    assert run.scenario["link"]["capacity"]["file"] == str(bundled_root() / "opennetlab" / "4G_500kbps.json")


def test_a_path_beside_the_spec_comes_before_a_set_of_that_name(tmp_path: Path):
    path = spec(tmp_path, '"mahimahi/*.down"')
    (path.parent / "mahimahi").mkdir()
    (path.parent / "mahimahi" / "mine.down").write_text("1\n", encoding="utf-8")
    (run,) = load_spec(path).runs
    assert run.scenario["link"]["capacity"]["file"] == str((path.parent / "mahimahi" / "mine.down").resolve())


@pytest.mark.parametrize("traces", ['"mahimahi/*-5G-*.down"', '"nosuchset/*.down"', '"mahimahi/"'])
def test_a_set_glob_matching_nothing_is_refused_by_field(tmp_path: Path, traces: str):
    path = spec(tmp_path, traces)
    with pytest.raises(SweepError) as info:
        load_spec(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: traces[0]: no trace file matches")
    assert "SET/GLOB" in message


def test_the_shipped_lte_sweep_finds_its_set():
    from rtcc.traces import bundled_root

    runs = load_spec(REPO / "sweeps" / "lte-controllers.toml").runs
    assert len(runs) == 75
    assert {Path(r.scenario["link"]["capacity"]["file"]).parent for r in runs} == {bundled_root() / "mahimahi"}
    assert "data/traces" not in (REPO / "sweeps" / "lte-controllers.toml").read_text(encoding="utf-8")


def test_rtcc_traces_gives_each_sets_mean_and_durations(capsys: pytest.CaptureFixture[str]):
    from rtcc.traces import bundled_root

    code, out, _ = run_main(capsys, "traces")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:7]}
    for name in ("pensieve-norway", "ucc-5g"):
        with (bundled_root() / name / "summary.csv").open(encoding="utf-8") as f:
            table = list(csv.DictReader(f))
        durations = [float(r["duration_s"]) for r in table]
        mean = statistics.fmean(float(r["mean_mbps"]) for r in table)
        assert rows[name][-3:] == [f"{mean:,.3f}", f"{sum(durations):,.0f}", f"{statistics.median(durations):,.1f}"]
    # OpenNetLab's mean leaves its >1 Gbps artefacts out, and says so.
    with (bundled_root() / "opennetlab" / "summary.csv").open(encoding="utf-8") as f:
        kept = [float(r["mean_mbps_without_artefacts"]) for r in csv.DictReader(f)]
    assert rows["opennetlab"][-3] == f"{statistics.fmean(kept):.3f}*"
    assert "* rates above 1Gbps (recording artefacts) left out" in out


def test_opennetlab_states_its_source_licence_and_artefacts():
    from rtcc.traces import bundled_root, describe_file, trace_files

    folder = bundled_root() / "opennetlab"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for needle in ("8a21e6bb45e9f993741ae3089e9cc9b7c9c90c55", "alphartc_gym/tests/data/",
                   "no licence file", "BSD-3-Clause", "mean_mbps_without_artefacts"):  # fmt: skip
        assert needle in readme, needle
    assert "README.md" not in {p.name for p in trace_files(folder)}
    with (folder / "summary.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:8] == ["file", "duration_s", "mean_mbps", "p10_mbps", "p50_mbps", "p90_mbps",
                                 "max_1s_mbps", "min_1s_mbps"]  # fmt: skip
    artefacts = 0
    for row in rows:
        d = describe_file(folder / row["file"])
        assert float(row["mean_mbps_without_artefacts"]) == pytest.approx(
            d.get("mean_mbps_without", d["mean_mbps"]), abs=6e-4
        ), row["file"]
        artefacts += "implausible" in d
        if "implausible" in d:
            assert f"| {row['file']} | {d['implausible']} |" in readme
    assert artefacts == 3
