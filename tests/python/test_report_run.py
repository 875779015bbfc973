"""The single-run page (``report.html`` of ``rtcc run``) and the summary's delay tails, over
one short native run of a capacity-estimating call (SQP), a padding one (Copa + Dumbo) and a
bulk TCP flow: every delay's p99 and maximum beside its p95 and in order, SSIM on both
scales, the page's rate chart holding each flow's rates and its controller's, metrics in
groups without a raw dict, and the page drawn in headless Chromium without an error (the
comparison page's browser fixture, :mod:`test_report_page`).
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import rtcc
from conftest import requires_native
from rtcc import charts, report
from test_report_page import MISSING, REQUIRED, browser_page  # noqa: F401 (a fixture)

pytestmark = requires_native

SCENARIO = """\
name = "page-check"
duration = "8s"
seed = 3

[link]
capacity = { kind = "step", steps = [["0s", "3Mbps"], ["4s", "1.5Mbps"]] }
delay = "20ms"
queue = "100ms"

[[flow]]
name = "sqp"
controller = "sqp"
encoder = "ideal"

[[flow]]
name = "dumbo"
controller = "copa+dumbo"
encoder = "ideal"

[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
start = "2s"
"""

# Every delay with a p95 in the summary, and the flows that must have a value of it.
TAILS = {
    "owd_ms": ("sqp", "dumbo", "bulk"),
    "queue_delay_ms": ("sqp", "dumbo", "bulk"),
    "sojourn_ms": ("sqp", "dumbo", "bulk"),
    "frame_latency_ms": ("sqp", "dumbo"),
    "frame_delay_ms": ("sqp", "dumbo"),
    "playout_delay_ms": ("sqp", "dumbo"),
    "rtt_ms": ("bulk",),
    "fct_ms": (),
}
RATE_COLUMNS = {
    "sqp": {"send_kbps", "video_kbps", "target_kbps", "pacing_kbps", "capacity_estimate_kbps"},
    "dumbo": {"send_kbps", "video_kbps", "padding_kbps", "target_kbps", "pacing_kbps"},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[rtcc.Result, Path]:
    out = tmp_path_factory.mktemp("run")
    result = rtcc.simulate(SCENARIO)
    result.save(out, plots=False)
    return result, out


@pytest.fixture(scope="module")
def page(run: tuple[rtcc.Result, Path]) -> Path:
    """The page the browser fixture opens."""
    return run[1] / "report.html"


def _db(ssim: float) -> float:
    return min(60.0, -10 * math.log10(max(1e-300, 1 - ssim)))


def test_every_delay_has_p99_and_max_in_order(run):
    result, _ = run
    flows = {f["name"]: f for f in result.summary["flows"]}
    for prefix, having in TAILS.items():
        for name, flow in flows.items():
            keys = [f"{prefix}_{s}" for s in ("p95", "p99", "max")]
            assert [k for k in keys if k not in flow] == [], name
            p95, p99, top = (flow[k] for k in keys)
            if name not in having:
                continue
            assert None not in (p95, p99, top), (name, prefix)
            assert p95 <= p99 <= top, (name, prefix, p95, p99, top)
            assert flow[f"{prefix}_mean"] <= top, (name, prefix)
    # A maximum kept exactly is a sample: no frame latency above it in the frames table.
    frames = result.frames
    for fid, name in result.flow_names().items():
        latency = frames.loc[frames["flow"] == fid, "latency_ms"].dropna()
        if name in TAILS["frame_latency_ms"]:
            assert flows[name]["frame_latency_ms_max"] == pytest.approx(latency.max(), abs=1e-3)


def test_ssim_on_both_scales(run):
    result, _ = run
    for flow in result.summary["flows"]:
        if flow["kind"] != "video":
            assert flow["ssim_mean"] is None and flow["ssim_displayed"] is None
            continue
        for mean, db in (("ssim_mean", "ssim_db_mean"), ("ssim_displayed", "ssim_db_displayed")):
            assert 0 < flow[mean] < 1, flow["name"]
            # dB is convex in SSIM: the mean of dB is at least the dB of the mean.
            assert flow[db] >= _db(flow[mean]) - 1e-9, flow["name"]
            assert flow[db] < _db(flow[mean]) + 3, flow["name"]
    frames = result.frames.dropna(subset=["ssim"])
    assert len(frames) > 100
    assert frames["ssim"].between(0, 1).all()
    for ssim, db in zip(frames["ssim"], frames["ssim_db"], strict=True):
        assert db == pytest.approx(_db(ssim), abs=1e-9)


class _Cells(HTMLParser):
    """The text of every table cell outside scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self._in = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._in is not None:
            self.cells.append(self._in.strip())
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self._in += data


def test_page_leads_with_the_rate_chart(run):
    result, out = run
    page = (out / "report.html").read_text(encoding="utf-8")
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    # Charts first: the rate chart before any table.
    assert body.index('data-kind="rates"') < body.index("<table")
    figures = charts.figures_of(page)
    kinds = re.findall(r'<div class="chart" id="(chart-\d+)" data-kind="(\w+)"', page)
    assert [k for _, k in kinds] == ["rates", "delay", "cdf"]
    rates = figures[kinds[0][0]]["data"]
    names = result.flow_names()
    assert [t["name"] for t in rates if t.get("legendgroup") == "link"] == ["link capacity"]
    for fid, name in names.items():
        drawn = {t.get("meta") for t in rates if t.get("legendgroup") == f"flow-{fid}"}
        assert RATE_COLUMNS.get(name, {"send_kbps"}) <= drawn, name
    # Metrics in groups, each row with its unit; delay tails as columns.
    for group in ("Throughput", "Delay", "Video quality", "Loss", "Fairness", "Link"):
        assert f"<h3>{group}</h3>" in body, group
    assert "<th>p99</th>" in body and "<th>max</th>" in body
    assert 'data-field="ssim_mean"' in body and "SSIM, displayed frames (0\u20131)" in body
    assert "video bitrate (kbps)" in body and "loss (%)" in body
    cells = _Cells()
    cells.feed(body)
    assert len(cells.cells) > 100
    raw = [c for c in cells.cells if c.startswith(("{", "[")) or "': " in c or '": ' in c]
    assert raw == []
    # The same page for the same run.
    assert report.render(result) == report.render(result)


@pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING))
def test_page_draws_in_chromium(browser_page, run):  # noqa: F811 (the imported fixture)
    tab, problems, outside = browser_page
    assert problems == []
    assert outside == []
    drawn = tab.evaluate(
        """() => [...document.querySelectorAll('.chart')].map(e => [e.dataset.kind,
            e.data.map(t => [t.legendgroup || '', t.meta || t.name])])"""
    )
    assert [k for k, _ in drawn] == ["rates", "delay", "cdf"]
    rates = drawn[0][1]
    for fid, name in run[0].flow_names().items():
        mine = {m for g, m in rates if g == f"flow-{fid}"}
        assert RATE_COLUMNS.get(name, {"send_kbps"}) <= mine, name
    assert ["link", "link capacity"] in rates
    # Every chart holds drawn lines; no table cell shows a container.
    assert tab.evaluate("() => document.querySelectorAll('.chart .scatterlayer path').length") > 10
    text = tab.evaluate("() => [...document.querySelectorAll('td')].map(c => c.innerText)")
    assert text and not [t for t in text if t.startswith(("{", "["))]
    assert "Rates" in tab.locator("h2").first.inner_text()


def test_run_summary_prints_ssim_on_both_scales(run):
    from rtcc.cli import summary_text

    result, _ = run
    sqp = next(f for f in result.summary["flows"] if f["name"] == "sqp")
    line = next(s for s in summary_text(result.summary).splitlines() if s.startswith("quality sqp"))
    assert f"SSIM {sqp['ssim_db_mean']:.1f} dB ({sqp['ssim_mean']:.3f})" in line
    assert line.endswith(f"{sqp['ssim_db_displayed']:.1f} dB ({sqp['ssim_displayed']:.3f})")
