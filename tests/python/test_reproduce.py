"""`rtcc reproduce dumbo --short`: files, rows, and the thesis's directions where they hold.

Schemes whose controller is not built yet are skipped by the reproduction; these tests
probe the same way and check whichever schemes ran.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import reproduce_short, requires_native

pytestmark = requires_native

# The Mahimahi set ships with rtcc: the reproduction reads it with no --traces.
TRACES = Path(__file__).resolve().parents[2] / "python" / "rtcc" / "data" / "traces" / "mahimahi"


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return reproduce_short(tmp_path_factory, "dumbo", timeout=600)


def available() -> dict[str, bool]:
    from rtcc.reproduce import dumbo

    schemes = {s.label: s for s in (*dumbo.PULSE_SCHEMES, *dumbo.CELLULAR_SCHEMES)}
    return {label: dumbo.probe(s) is None for label, s in schemes.items()}


def row(table: pd.DataFrame, experiment: str, scheme: str) -> pd.Series:
    match = table[(table["experiment"] == experiment) & (table["scheme"] == scheme)]
    assert len(match) == 1, (experiment, scheme)
    return match.iloc[0]


def test_files_and_one_row_per_scheme(reproduced: tuple[Path, str], table: pd.DataFrame):
    from rtcc.reproduce import dumbo

    out, stdout = reproduced
    assert {"table.csv", "runs.csv", "report.html"} <= {p.name for p in out.iterdir()}
    assert "wall time:" in stdout.splitlines()[-1]
    assert f"results: {out} (table.csv, runs.csv, report.html)" in stdout
    assert stdout.splitlines()[-2].startswith(f"dataset: {out / 'dataset'} (")
    pulse = table[table["experiment"] == "pulse"]["scheme"].tolist()
    assert pulse == [s.label for s in dumbo.PULSE_SCHEMES]
    cellular = table[table["experiment"] == "cellular"]["scheme"].tolist()
    assert cellular == [s.label for s in dumbo.CELLULAR_SCHEMES]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h3>Does the rate follow the link?</h3>" in page
    for column in ("converge_up_s", "converge_down_s", "utilization", "video_kbps"):
        assert column in table.columns
    ok = available()
    for _, r in table.iterrows():
        if ok[r["scheme"]]:
            assert r["runs"] == (1 if r["experiment"] == "pulse" else 3), r["scheme"]
        else:
            assert r["runs"] == 0 and str(r["note"]).startswith("skipped: ")


def test_report_is_self_contained(reproduced: tuple[Path, str], table: pd.DataFrame):
    page = (reproduced[0] / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "Reproducing Dumbo" in page and "wall time" in page
    assert 'src="http' not in page and "<script" not in page
    assert page.count("data:image/png;base64,") >= 3
    assert "16.6" in page  # the thesis's GCC up-convergence, beside ours
    from rtcc.reproduce.page import cell

    for scheme in ("gcc", "copa+dumbo"):  # rtcc's own numbers, not only the thesis's
        assert f"<td>{cell(row(table, 'pulse', scheme)['converge_up_s'])}</td>" in page, scheme
    for scheme in table["scheme"]:
        assert f"<td>{scheme}</td>" in page.replace("&#x27;", "'").replace("&amp;", "&")
    assert "13 of those files are available" in page
    assert "ATT-LTE-driving-2016.down" in page


def test_short_pulse_convergence_numbers(table: pd.DataFrame):
    gcc = row(table, "pulse", "gcc")
    assert gcc["steps_up"] == 1 and gcc["steps_down"] == 2  # 80 s, alternating every 20 s
    # GCC behind a lagging encoder is slow both ways (thesis §6.2.1: 16.6 s up, 10.5 s down).
    assert gcc["converge_up_s"] > 5.0
    assert gcc["converge_down_settle_s"] > 3.0
    # NaN only when a drop never returned to the old band, and then it says so.
    down = gcc["converge_down_s"]
    assert down >= 3.0 or (math.isnan(down) and gcc["down_unconverged"] > 0), down
    assert gcc["down_latency_max_ms"] > 1000  # the multi-second spike of thesis Fig. 3-6
    assert 0.3 < gcc["down_steady_mbps"] <= 0.52  # at most the 500 kbps link
    ok = available()
    for dumbo in ("copa+dumbo", "rocc+dumbo"):
        if ok[dumbo]:
            d = row(table, "pulse", dumbo)
            assert d["converge_up_s"] < gcc["converge_up_s"], dumbo
            assert d["up_steady_mbps"] > gcc["up_steady_mbps"], dumbo
            assert d["down_latency_max_ms"] < gcc["down_latency_max_ms"], dumbo


def test_short_cellular_directions(table: pd.DataFrame, reproduced: tuple[Path, str]):
    runs = pd.read_csv(reproduced[0] / "runs.csv")
    cell = runs[runs["experiment"] == "cellular"]
    assert sorted(set(cell["trace"])) == sorted(p.name for p in TRACES.glob("*.down"))[:3]
    gcc = row(table, "cellular", "gcc")
    assert 0 < gcc["utilization"] < 1
    ok = available()
    for dumbo in ("copa+dumbo", "rocc+dumbo"):
        if ok[dumbo]:
            assert row(table, "cellular", dumbo)["utilization"] > gcc["utilization"], dumbo


def test_missing_traces(run_cli, tmp_path: Path):
    failed = run_cli("reproduce", "dumbo", "--short", "--traces", tmp_path / "nowhere")
    assert failed.returncode == 2
    assert failed.stderr.strip().startswith(
        f"rtcc: error: --traces {tmp_path / 'nowhere'}: no such folder or bundled set (sets: "
    )
    from rtcc.reproduce import dumbo
    from rtcc.reproduce.traces import TracesError

    # A folder without Mahimahi traces is refused, not run without its cellular part.
    (tmp_path / "empty").mkdir()
    with pytest.raises(TracesError, match="no Mahimahi .down traces in .*empty"):
        dumbo.run(tmp_path / "out", traces=tmp_path / "empty", jobs=1, short=True)


def test_plain_copa_and_rocc_are_dumbo_without_its_dummy_stream() -> None:
    """§6.2.2 compares each scheme with and without the dummy stream in one system."""
    from rtcc.reproduce.dumbo.experiments import CELLULAR_SCHEMES, PULSE_SCHEMES

    for schemes in (CELLULAR_SCHEMES, PULSE_SCHEMES):
        plain = {s.label: s for s in schemes if s.label in ("copa", "rocc")}
        assert set(plain) == {"copa", "rocc"}
        for label, scheme in plain.items():
            flow = scheme.flow()
            assert flow["controller"] == {"name": f"{label}+dumbo", "dummy": False}
            assert scheme.described == f"{label}+dumbo (dummy = false)"


def test_follow_index_tells_a_rate_that_follows_the_link_from_one_that_does_not() -> None:
    """A flow that takes a fixed share of every trace scores 1; one rate on two traces of
    different capacity scores well below 1; the page shows the thesis's rows with the
    traces' capacity, and no section without one."""
    from rtcc.report import fmt
    from rtcc.reproduce.dumbo import page, thesis

    caps = [500.0, 8_000.0]
    mean_cap = sum(caps) / len(caps)
    share = [0.6 * c for c in caps]
    assert page.follow_index(sum(share) / 2, 0.6, mean_cap) == pytest.approx(1.0)
    fixed = 450.0  # fills the slow trace, a sliver of the fast one
    util = (min(fixed, caps[0]) / caps[0] + fixed / caps[1]) / 2
    assert page.follow_index(fixed, util, mean_cap) < 0.3
    assert page.follow_index(None, 0.5, mean_cap) is None
    assert page.follow_index(100.0, 0.0, mean_cap) is None

    rows = [{"scheme": "copa", "video_kbps": 2_000.0, "utilization_mean": 0.5}]
    html_text = page._follows(rows, 4_000.0, 7)
    copa = thesis.CELLULAR["copa"]
    want = copa["video_kbps"] / (copa["utilization_mean"] * 4_000.0)
    assert "Does the rate follow the link?" in html_text
    assert "<td>1</td>" in html_text
    assert f'<td class="thesis">{fmt(want)}</td>' in html_text
    assert "mean capacity of the 7 traces here" in html_text
    assert page._follows(rows, None, 7) == ""


def test_trace_capacity_is_the_mean_over_traces_not_runs() -> None:
    from rtcc.reproduce.dumbo.experiments import trace_capacity_kbps
    from rtcc.sweeprun import SweepResult
    from rtcc.sweepspec import Run

    runs = [Run({"trace": t}, {}, 1, "<t>") for t in ("a", "a", "b", "c")]

    def rec(kbps: float) -> dict:
        return {"summary": {"link": {"capacity_kbps_mean": kbps}}}

    result = SweepResult(runs, [rec(1e3), rec(1e3), rec(3e3), None], [None, None, None, "x"])
    # Per trace (a, b): 2000; per run it would be 1666.7.
    assert trace_capacity_kbps(result) == 2000.0
    assert trace_capacity_kbps(None) is None
    assert trace_capacity_kbps(SweepResult(runs[3:], [None], ["x"])) is None
