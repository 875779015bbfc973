"""simulate(), Result.save(), plots and the HTML report, driven by the fake native module.

These check the Python layer's own logic; test_native.py repeats the essentials
against the compiled simulator.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rtcc
from conftest import SHORT_SCENARIO
from rtcc import charts, plots, report

tomllib = pytest.importorskip("tomllib")  # stdlib from Python 3.11

pytestmark = pytest.mark.usefixtures("fake_native")

EXPECTED_FILES = [
    "summary.json",
    "packets.parquet",
    "frames.parquet",
    "timeseries.parquet",
    "link.parquet",
    "rates.png",
    "queue.png",
    "frame_delay.png",
    "cdf.png",
    "report.html",
]


def test_simulate_accepts_text_path_and_dict(short_scenario: Path):
    by_text = rtcc.simulate(SHORT_SCENARIO)
    by_path = rtcc.simulate(short_scenario)
    by_dict = rtcc.simulate(tomllib.loads(SHORT_SCENARIO))
    assert by_text.source == "<scenario>"
    assert by_path.source == str(short_scenario)
    assert by_dict.source == "<dict>"
    for result in (by_text, by_path, by_dict):
        assert result.name == "fixed-1mbps"
        assert len(result.frames) == 300  # 10 s at 30 fps
    assert by_path.summary == by_text.summary == by_dict.summary


def test_seed_override_and_record_packets():
    assert rtcc.simulate(SHORT_SCENARIO).seed == 7
    assert rtcc.simulate(SHORT_SCENARIO, seed=99).seed == 99
    result = rtcc.simulate(SHORT_SCENARIO, record_packets=False)
    assert result.packets.empty
    assert not result.frames.empty


def test_progress_callback_sees_the_whole_run():
    seen: list[tuple[float, float]] = []
    rtcc.simulate(SHORT_SCENARIO, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) == rtcc.PROGRESS_STEPS
    assert all(total == 10.0 for _, total in seen)
    done = [d for d, _ in seen]
    assert done == sorted(done)
    assert done[0] == pytest.approx(0.1)
    assert done[-1] == 10.0


def test_progress_bar_is_silent_off_a_terminal(capsys: pytest.CaptureFixture[str]):
    rtcc.simulate(SHORT_SCENARIO, progress=True)
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ""


def test_scenario_error_is_the_native_class():
    with pytest.raises(rtcc.ScenarioError, match="flow"):
        rtcc.simulate('name = "x"\nduration = "1s"\n')
    assert issubclass(rtcc.ScenarioError, ValueError)


def test_save_writes_every_file(tmp_path: Path):
    result = rtcc.simulate(SHORT_SCENARIO)
    written = result.save(tmp_path / "out")
    assert [p.name for p in written] == EXPECTED_FILES
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(EXPECTED_FILES)

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary == result.summary
    assert list(summary) == list(result.summary)  # key order kept
    assert (tmp_path / "out" / "summary.json").read_text().startswith('{\n  "scenario"')

    import pandas as pd

    frames = pd.read_parquet(tmp_path / "out" / "frames.parquet")
    assert frames.shape == result.frames.shape
    assert frames["status"].tolist() == result.frames["status"].tolist()
    packets = pd.read_parquet(tmp_path / "out" / "packets.parquet")
    assert packets["kind_code"].tolist() == result.packets["kind_code"].tolist()

    for png in EXPECTED_FILES[5:9]:
        assert (tmp_path / "out" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_without_plots(tmp_path: Path):
    written = rtcc.simulate(SHORT_SCENARIO).save(tmp_path, plots=False)
    assert [p.name for p in written] == [n for n in EXPECTED_FILES if not n.endswith(".png")]
    assert "data:image/png" not in (tmp_path / "report.html").read_text()


def test_report_is_self_contained(tmp_path: Path):
    result = rtcc.simulate(SHORT_SCENARIO.replace('"call"', '"<b>call</b>"'))
    result.save(tmp_path)
    html = (tmp_path / "report.html").read_text()
    # Interactive charts drawn from the tables, their data and plotly.js inlined.
    assert len(charts.figures_of(html)) == 3
    # No external resources: every src/href is a data URI, every script inline.
    assert all(u.startswith("data:") for u in re.findall(r'(?:src|href)="([^"]*)"', html))
    assert not re.search(r"<script[^>]*\bsrc=", html)
    assert "&lt;b&gt;call&lt;/b&gt;" in html and "<b>call</b>" not in html  # escaped
    assert "fixed-1mbps" in html and "seed 7" in html
    assert "capacity = &quot;3Mbps&quot;" in html  # the scenario text, escaped, in <pre>
    for key in ("video_kbps", "frame_latency_ms", "freeze_ratio", "capacity_kbps_mean"):
        assert f'data-field="{key}"' in html


def test_plots_are_deterministic():
    result = rtcc.simulate(SHORT_SCENARIO)
    first, second = plots.render_all(result), plots.render_all(result)
    assert list(first) == ["rates.png", "queue.png", "frame_delay.png", "cdf.png"]
    assert first == second


def test_plots_tolerate_empty_tables(tmp_path: Path):
    result = rtcc.simulate(SHORT_SCENARIO, record_packets=False)
    result.timeseries = result.timeseries.iloc[0:0]
    result.link = result.link.iloc[0:0]
    result.frames = result.frames.iloc[0:0]
    images = plots.render_all(result)
    assert all(png.startswith(b"\x89PNG") for png in images.values())


def test_legends_use_flow_names():
    two = SHORT_SCENARIO + '\n[[flow]]\nname = "second"\ncontroller = "fixed"\n'
    result = rtcc.simulate(two)
    fig = plots.rates(result)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "link capacity" in labels
    assert "call sending" in labels and "second video" in labels
    fig = plots.cdf(result)
    assert fig.axes[2].get_legend_handles_labels()[1] == ["call", "second"]


def test_report_formatting():
    assert report.fmt(None) == "\u2013"
    assert report.fmt(float("nan")) == "\u2013"
    assert report.fmt(0.12345) == "0.1235"
    assert report.fmt(2500.4) == "2,500"
    assert report.fmt(12) == "12"
    assert report.fmt("gcc") == "gcc"
