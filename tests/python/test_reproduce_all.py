"""`rtcc reproduce all --short`: every paper's reproduction, one dataset, one index page."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rtcc
from conftest import reproduce_short, requires_native, subprocess_env
from rtcc.reproduce import EXPERIMENTS

pytestmark = requires_native


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return reproduce_short(tmp_path_factory, "all")


def index_rows(page: str) -> dict[str, list[str]]:
    """paper -> the cells after its link, from index.html's table."""
    rows = {}
    for link, name, cells in re.findall(r'<tr><td><a href="([^"]+)">([^<]+)</a></td>(.*?)</tr>',
                                        page):  # fmt: skip
        rows[name] = [link, *(html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", cells))]
    return rows


def test_every_paper_ran_into_its_folder_and_the_index_links_it(reproduced: tuple[Path, str]):
    out, stdout = reproduced
    rows = index_rows((out / "index.html").read_text(encoding="utf-8"))
    assert list(rows) == list(EXPERIMENTS)
    for name, (link, _what, runs, computed, cached, failed, *_rest) in rows.items():
        assert link == f"{name}/report.html" and (out / link).is_file()
        assert (out / name / "table.csv").is_file()
        assert int(runs.replace(",", "")) > 0 and int(computed.replace(",", "")) > 0
        assert cached == "0" and failed == "0"
        assert f"== {name} (" in stdout
    assert not any((out / name / "dataset").exists() for name in EXPERIMENTS)
    assert f"rtcc report {out} --out compare.html" in (out / "index.html").read_text()


def test_rtcc_report_over_the_folder_compares_every_paper(
    reproduced: tuple[Path, str], tmp_path: Path
):
    out, _ = reproduced
    folders = rtcc.load_runs([out])["folder"].map(lambda f: Path(f).name)
    assert set(folders) == set(EXPERIMENTS)
    page = tmp_path / "compare.html"
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "report", str(out), "--out", str(page)],
        capture_output=True, text=True, env=subprocess_env(), timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert 'data-experiment="pulse"' in page.read_text(encoding="utf-8")


def test_one_dataset_holds_every_papers_runs(reproduced: tuple[Path, str]):
    out, _ = reproduced
    rows = index_rows((out / "index.html").read_text(encoding="utf-8"))
    counts = rtcc.query(
        "SELECT study, count(DISTINCT run || labels) AS runs, count(*) AS flows FROM runs "
        "GROUP BY ALL",
        dataset=out / "dataset",
    ).set_index("study")
    assert sorted(counts.index) == sorted(EXPERIMENTS)
    for name, cells in rows.items():
        assert counts.loc[name, "runs"] == int(cells[2].replace(",", "")), name
    dumbo = rtcc.query(
        "SELECT DISTINCT experiment FROM runs WHERE study = 'dumbo' ORDER BY 1",
        dataset=out / "dataset",
    )
    assert dumbo["experiment"].tolist() == ["cellular", "pulse"]
    # The pulse runs keep 100 ms series: 80 s of them each in the short variant.
    bins = rtcc.query(
        "SELECT count(*) AS n FROM timeseries t JOIN runs r USING (study, run, flow) "
        "WHERE r.study = 'dumbo' AND r.experiment = 'pulse' GROUP BY t.run",
        dataset=out,
    )
    assert set(bins["n"]) == {800}
