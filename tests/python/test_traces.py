"""The trace sets shipped with rtcc, the formats the simulator reads, set names in
scenarios and in ``--traces``, and ``rtcc traces``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import reproduce_refused, requires_native, run_main, subprocess_env

pytestmark = requires_native

FORMATS = "mahimahi, pensieve, opennetlab, gnettrack"
SETS = ["mahimahi", "opennetlab", "pensieve-fcc", "pensieve-norway", "ucc-5g"]


def bundled() -> Path:
    from rtcc.traces import bundled_root

    return bundled_root()


def test_the_sets_ship_in_the_package_with_their_licences_and_summaries():
    import rtcc
    from rtcc.traces import bundled_sets, trace_files

    root = bundled()
    assert root == Path(rtcc.__file__).parent / "data" / "traces"
    assert [s.name for s in bundled_sets()] == SETS
    for s in bundled_sets():
        names = {p.name for p in s.folder.iterdir()}
        assert "summary.csv" in names, s.name
        if s.name != "opennetlab":  # its source states no licence (README.md)
            assert names & {"LICENSE", "COPYING"}, s.name
        with (s.folder / "summary.csv").open(encoding="utf-8") as f:
            listed = {r["file"] for r in csv.DictReader(f)}
        assert listed == {p.name for p in trace_files(s.folder)}, s.name
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in SETS)


@pytest.mark.parametrize("name", SETS)
def test_every_file_reads_at_its_summary_mean_and_duration(name: str):
    from rtcc.traces import bundled_sets, describe_file

    s = next(s for s in bundled_sets() if s.name == name)
    with (s.folder / "summary.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        d = describe_file(s.folder / row["file"])
        assert d["format"] == s.format, row["file"]
        # summary.csv rounds to 3 decimals.
        assert d["mean_mbps"] == pytest.approx(float(row["mean_mbps"]), abs=6e-4), row["file"]
        assert d["duration_s"] == pytest.approx(float(row["duration_s"]), abs=2e-3), row["file"]


def test_opennetlab_artefacts_are_counted_and_dropped_on_request():
    from rtcc.traces import describe_file

    d = describe_file(bundled() / "opennetlab" / "4G_3mbps.json")
    # README.md's two means: all entries, and the entries above 1 Gbps dropped.
    assert d["implausible"] == 1
    assert d["mean_mbps"] == pytest.approx(30.195, abs=1e-3)
    assert d["mean_mbps_without"] == pytest.approx(3.80, abs=5e-3)
    assert "implausible" not in describe_file(bundled() / "opennetlab" / "4G_500kbps.json")


def scenario(tmp_path: Path, capacity: str, duration: str = "10s") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'duration = "{duration}"\n[link]\ncapacity = {capacity}\n[[flow]]\ncontroller = "fixed"\n',
        encoding="utf-8",
    )
    return path


def test_a_scenario_names_a_bundled_set(tmp_path: Path):
    import rtcc

    path = scenario(tmp_path, '{ kind = "trace", set = "opennetlab", file = "4G_500kbps.json" }')
    link = rtcc.simulate(path).summary["link"]
    # 10 s is the first 50 entries of 200 ms; the link's mean is theirs.
    entries = json.loads((bundled() / "opennetlab" / "4G_500kbps.json").read_text())
    first = [e["capacity"] for e in entries["uplink"]["trace_pattern"][:50]]
    assert link["capacity_kbps_mean"] == pytest.approx(sum(first) / 50, rel=1e-3)


def validate(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtcc", "validate", *map(str, args)],
        capture_output=True, text=True, env=env or subprocess_env(), timeout=120,
    )  # fmt: skip


def test_a_file_of_another_format_is_refused_with_the_formats_known(tmp_path: Path):
    (tmp_path / "bus").write_text("0.0 1.5\n1.0 2.5\n", encoding="utf-8")
    done = validate(scenario(tmp_path, '{ kind = "trace", file = "bus", format = "mahimahi" }'))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "link.capacity.file: " in line and "bus: is a pensieve trace, not mahimahi" in line
    assert f"(formats known: {FORMATS})" in line
    (tmp_path / "notes").write_text("hello there trace\n", encoding="utf-8")
    done = validate(scenario(tmp_path, '{ kind = "trace", file = "notes" }'))
    assert done.returncode == 2
    assert f"notes: not a trace in a known format ({FORMATS})" in done.stderr
    # Read as what it is, the same file is fine.
    assert validate(scenario(tmp_path, '{ kind = "trace", file = "bus" }')).returncode == 0


def test_rtcc_traces_env_names_another_folder_of_sets(tmp_path: Path):
    (tmp_path / "sets" / "mine").mkdir(parents=True)
    (tmp_path / "sets" / "mine" / "one.down").write_text("1\n", encoding="utf-8")
    env = {**subprocess_env(), "RTCC_TRACES": str(tmp_path / "sets")}
    ok = scenario(tmp_path, '{ kind = "trace", set = "mine", file = "one.down" }')
    assert validate(ok, env=env).returncode == 0
    done = validate(scenario(tmp_path, '{ kind = "trace", set = "mahimahi", file = "x" }'), env=env)
    assert done.returncode == 2
    assert f"link.capacity.set: no trace set 'mahimahi' in {tmp_path / 'sets'} (sets: mine)" in done.stderr


def test_python_takes_set_names_from_rtcc_traces_as_the_simulator_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from rtcc import traces

    sets = tmp_path / "sets"
    (sets / "mine").mkdir(parents=True)
    (sets / "mine" / "one.down").write_text("1\n2\n", encoding="utf-8")
    monkeypatch.setenv("RTCC_TRACES", str(sets))
    assert traces.bundled_root() == sets
    assert traces.locate("mine", "x") == sets / "mine"
    assert traces.find(None, "mine", "one.down") == sets / "mine" / "one.down"
    assert [s.name for s in traces.bundled_sets()] == ["mine"]
    code, out, _ = run_main(capsys, "traces")
    assert code == 0 and "\nmine " in out and "opennetlab" not in out
    code, out, _ = run_main(capsys, "traces", "mine")
    assert code == 0 and "one.down" in out
    with pytest.raises(traces.TracesError, match="mahimahi: no such folder or bundled set .sets: mine."):
        traces.locate("mahimahi", "mahimahi")
    monkeypatch.setenv("RTCC_TRACES", str(tmp_path / "nope"))
    with pytest.raises(traces.TracesError, match=f"RTCC_TRACES={tmp_path / 'nope'}: not a folder"):
        traces.bundled_root()
    monkeypatch.setenv("RTCC_TRACES", "")  # empty counts as unset, as in trace.rs
    assert traces.bundled_root() == bundled() and "mahimahi" in traces.locate("mahimahi", "").name


def test_traces_means_a_set_name_a_folder_of_sets_or_a_folder_of_files(tmp_path: Path):
    from rtcc.reproduce.traces import Need, TracesError, mahimahi_files

    need = Need("mahimahi", "ATT-LTE-driving.up", "a test")
    assert need.locate(None) == bundled() / "mahimahi" / "ATT-LTE-driving.up"
    assert need.locate("mahimahi") == need.locate(None)
    assert need.locate(bundled()) == need.locate(None)  # a folder of sets
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "ATT-LTE-driving.up").write_text("1\n", encoding="utf-8")
    (flat / "a.down").write_text("1\n", encoding="utf-8")
    assert need.locate(flat) == flat / "ATT-LTE-driving.up"  # a folder of trace files
    assert mahimahi_files(flat, "down", None, "x") == (flat, [flat / "a.down"])
    with pytest.raises(TracesError, match="--traces opennetlab: no ATT-LTE-driving.up .set mahimahi. in .*which a test replays"):
        need.locate("opennetlab")
    with pytest.raises(TracesError, match="--traces nope: no such folder or bundled set .sets: mahimahi, "):
        need.locate("nope")


@pytest.mark.parametrize(
    ("paper", "needle"),
    [
        ("dumbo", "no Mahimahi .down traces"),
        ("pibes", "no norway_bus_1 (set pensieve-norway)"),
        ("burstrtc", "no TMobile-LTE-driving.down (set mahimahi)"),
        ("all", "no Mahimahi .down traces"),
    ],
)
def test_a_reproduction_refuses_a_traces_folder_without_its_traces(tmp_path: Path, paper: str, needle: str):
    (tmp_path / "unrelated").mkdir()
    (tmp_path / "unrelated" / "notes.txt").write_text("x\n", encoding="utf-8")
    err = reproduce_refused(paper, tmp_path / "out", "--traces", str(tmp_path / "unrelated"))
    (line,) = err.splitlines()
    assert line.startswith(f"rtcc: error: --traces {tmp_path / 'unrelated'}: {needle}"), line
    assert not (tmp_path / "out" / "runs").exists()


def test_rtcc_traces_lists_sets_then_files(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    code, out, _ = run_main(capsys, "traces")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["set", "format", "licence", "files", "mean", "Mbps", "total", "s", "median", "s"]
    # Mean of the files' means, total and median duration (summary.csv's, rounded).
    assert lines[2].split() == ["mahimahi", "mahimahi", "GPL-3.0-or-later", "13", "5.428", "7,060", "474.6"]
    assert any(line.split()[:2] == ["ucc-5g", "gnettrack"] for line in lines)
    code, out, _ = run_main(capsys, "traces", "opennetlab")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("4G_3mbps.json"))
    assert row.split() == ["4G_3mbps.json", "opennetlab", "60.9", "306", "30.195", "3.799", "(1",
                           "above", "1Gbps", "dropped)"]  # fmt: skip
    # A folder of the user's own, read the same way; a file that is no trace is named.
    (tmp_path / "one.down").write_text("1\n2\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("hello there trace\n", encoding="utf-8")
    code, out, _ = run_main(capsys, "traces", tmp_path)
    assert code == 0
    assert ["one.down", "mahimahi", "0.0", "2", "12.000"] in [line.split() for line in out.splitlines()]
    assert f"not read: {tmp_path / 'notes.txt'}: not a trace in a known format ({FORMATS})" in out
    code, _, err = run_main(capsys, "traces", "nope")
    assert code == 2 and err.startswith("rtcc: error: nope: no such folder or bundled set")
