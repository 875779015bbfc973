"""One scenario and seed give the same summary.json bytes every run; the wall time
lives in timing.json."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import requires_native
from conftest import run_main as run
from rtcc.cli import summary_text
from rtcc.result import Result

pytestmark = requires_native

SCENARIO = """\
duration = "3s"
seed = 11
[link]
capacity = "2Mbps"
delay = "20ms"
queue = "50kB"
loss = 0.01
[[flow]]
controller = "gcc"
[[flow]]
kind = "tcp"
start = "1s"
"""


def test_two_runs_write_the_same_summary_bytes(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    for name in ("a", "b"):
        code, _, err = run(capsys, "run", scenario, "--out", tmp_path / name, "--quiet", "--no-plots")
        assert code == 0, err
    a, b = ((tmp_path / n / "summary.json").read_bytes() for n in ("a", "b"))
    assert a == b
    summary = json.loads(a)
    assert set(summary["sim"]) == {"events"} and summary["sim"]["events"] > 0
    timing = json.loads((tmp_path / "a" / "timing.json").read_text())
    assert timing["wall_s"] > 0 and timing["events"] == summary["sim"]["events"]
    assert timing["speedup"] == summary["duration_s"] / timing["wall_s"]
    # Readers find the wall time in its new place.
    loaded = Result.load(tmp_path / "a")
    assert loaded.timing == timing
    assert f"in {timing['wall_s']:.3f} s" in summary_text(loaded.summary, None, loaded.timing)


def test_a_folder_from_before_timing_json_still_reads(tmp_path: Path) -> None:
    old = {"scenario": "s", "seed": 1, "duration_s": 2.0, "flows": [], "link": {}}
    old["sim"] = {"wall_s": 0.5, "events": 10, "speedup": 4.0}
    (tmp_path / "summary.json").write_text(json.dumps(old))
    loaded = Result.load(tmp_path)
    assert loaded.timing == {"wall_s": 0.5, "events": 10, "speedup": 4.0}
    assert "simulated 2.0 s in 0.500 s (4" in summary_text(loaded.summary, None, loaded.timing)
