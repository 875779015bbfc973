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


def test_the_summary_index_is_shown_and_stored_under_its_own_name(capsys, tmp_path: Path):
    from rtcc.comparison import compare
    from rtcc.report import render
    from rtcc.runset import load_runs

    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO, encoding="utf-8")
    code, out, _ = run_main(capsys, "run", scenario, "--out", tmp_path / "run", "--no-plots")
    assert code == 0
    summary = Result.load(tmp_path / "run").summary
    line = next(x for x in out.splitlines() if x.startswith("Jain"))
    assert line.endswith(f"(jain_goodput_active): {summary['jain_goodput_active']:.3f}")
    page = render(Result.load(tmp_path / "run"))
    assert f'data-field="jain_goodput_active">{summary["jain_goodput_active"]:.4g}' in page
    assert 'data-field="jain_index"' not in page
    # The dataset, the runs table and the report's --metrics: both names, one value.
    rtcc.sweep({"name": "j", "base": str(scenario), "seeds": 1}, out=tmp_path / "j", jobs=1)
    sql = "SELECT jain_goodput_active, jain_index FROM runs"
    rows = rtcc.query(sql, dataset=tmp_path / "j" / "dataset")
    assert rows.iloc[:, 0].tolist() == rows.iloc[:, 1].tolist() == [summary["jain_index"]] * 2
    runs = load_runs([tmp_path / "j"])
    assert (runs["jain_goodput_active"] == runs["jain_index"]).all()
    for name in ("jain_index", "jain_goodput_active"):
        assert "(jain_goodput_active)" in compare([tmp_path / "j"], metrics=[name])
    # A summary written before the newer name: the table still gives it, from jain_index.
    record = next((tmp_path / "j" / "runs").glob("*.json"))
    text = record.read_text(encoding="utf-8").replace('"jain_goodput_active"', '"jain_old"')
    record.write_text(text, encoding="utf-8")
    assert load_runs([tmp_path / "j"])["jain_goodput_active"].tolist() == [summary["jain_index"]] * 2
