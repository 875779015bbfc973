"""`rtcc fairness` windows take units like every other duration, and the two Jain
indices are told apart: the summary's (each flow over its own active time) and the
window index of `rtcc fairness` / `Result.jain` (one window shared by all flows)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rtcc
from conftest import one_line_error, requires_native, run_main
from rtcc.result import Result

pytestmark = requires_native

# A second call joins at 4 s: alone it would be fair to itself, shared it is not.
TWO = """\
name = "two"
duration = "12s"

[link]
capacity = "2Mbps"
delay = "20ms"
queue = "100ms"

[[flow]]
name = "a"
controller = { name = "fixed", rate = "1200kbps" }
encoder = "ideal"

[[flow]]
name = "b"
controller = { name = "fixed", rate = "600kbps" }
encoder = "ideal"
start = "4s"
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fair") / "out"
    rtcc.simulate(TWO, source="two.toml").save(out, plots=False)
    return out


def test_window_bounds_take_units(capsys, results: Path):
    loaded = Result.load(results)
    assert loaded.jain(start="4s", end="0.2min") == loaded.jain(start=4, end=12.0)
    assert loaded.jain(start="4s") > loaded.jain()  # b's absent time counts 0
    code, with_units, _ = run_main(capsys, "fairness", results, "--from", "4s", "--to", "0.2min")
    assert code == 0
    code, bare, _ = run_main(capsys, "fairness", results, "--from", "4", "--to", "12")
    assert code == 0 and with_units == bare
    assert f"{loaded.jain(start=4, end=12):.4f}" in bare and "4 s to 12 s" in bare
    for bad in ("4parsec", "-1", "nan"):
        code, _, err = run_main(capsys, "fairness", results, "--from", bad)
        one_line_error(code, err, "--from", bad)
    with pytest.raises(ValueError, match="start: '4x' is not a duration"):
        loaded.jain(start="4x")


def test_the_two_indices_have_their_own_names(results: Path):
    loaded = Result.load(results)
    summary = loaded.summary
    assert summary["jain_goodput_active"] == summary["jain_index"]  # old name kept
    rates = [f["goodput_kbps"] for f in summary["flows"]]
    assert summary["jain_goodput_active"] == pytest.approx(sum(rates) ** 2 / (2 * sum(r * r for r in rates)))
    # Over the whole run the window index counts b's first 4 s as 0: lower.
    assert loaded.jain() < summary["jain_goodput_active"]
