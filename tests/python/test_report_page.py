"""`rtcc report` over a short Dumbo reproduction, opened in a real headless Chromium: the
page loads offline with no console errors, draws its charts, the delay-utilisation
scatter holds every scheme that ran, and its legend and hover respond.

Needs the Python package playwright and Chromium at /usr/bin/chromium (scripts/test.sh
installs both); skipped, saying which is missing, without them, and failed instead with
RTCC_REQUIRE_BROWSER=1 (as CI runs).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import reproduce_short, requires_native, subprocess_env

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
TRACES = Path(__file__).resolve().parents[2] / "python" / "rtcc" / "data" / "traces" / "mahimahi"
HAVE_TRACES = TRACES.is_dir() and any(TRACES.glob("*.down"))

try:
    from playwright.sync_api import sync_playwright
except ImportError:
    sync_playwright = None

MISSING = (
    "the playwright package is not installed"
    if sync_playwright is None
    else f"no Chromium at {CHROMIUM}"
    if not CHROMIUM.is_file()
    else None
)
REQUIRED = os.environ.get("RTCC_REQUIRE_BROWSER") == "1"
pytestmark = [
    requires_native,
    pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING)),
]


@pytest.fixture(scope="module")
def dumbo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traces = ["--traces", str(TRACES)] if HAVE_TRACES else []
    return reproduce_short(tmp_path_factory, "dumbo", "-q", *traces, timeout=600)[0]


@pytest.fixture(scope="module")
def page(dumbo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "dumbo.html"
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "report", str(dumbo), "--out", str(out)],
        capture_output=True, text=True, env=subprocess_env(), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"report: {out} (")
    return out


@pytest.fixture(scope="module")
def browser_page(page: Path, tmp_path_factory: pytest.TempPathFactory):
    """The page open in Chromium with a fresh profile; every request that is not the file
    itself (or inline data) is recorded and refused, so the page must stand alone."""
    if MISSING is not None:
        pytest.fail(f"{MISSING} (RTCC_REQUIRE_BROWSER=1)")
    assert sync_playwright is not None
    problems: list[str] = []
    outside: list[str] = []
    profile = tmp_path_factory.mktemp("profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=ARGS, headless=True,
            viewport={"width": 1280, "height": 900},
        )  # fmt: skip

        def route(r) -> None:
            if r.request.url.startswith(("file:", "data:")):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        tab = context.new_page()
        tab.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in (
            "error", "warning") else None)  # fmt: skip
        tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        tab.goto(page.as_uri(), wait_until="load")
        # Every chart element holds a drawn plot.
        drawn = "e => e.querySelector('.main-svg')"
        tab.wait_for_function(
            f"() => [...document.querySelectorAll('.chart')].every({drawn})", timeout=60_000
        )
        yield tab, problems, outside
        context.close()


def _scatter_names(tab) -> dict[str, list[list[str]]]:
    """Per scatter chart (by experiment): the names of its legend entries, and of all traces."""
    return tab.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.chart[data-kind=scatter]')]
            .map(e => [e.dataset.experiment, [
                e.data.filter(t => t.showlegend !== false).map(t => t.name),
                [...new Set(e.data.map(t => t.name))]]]))"""
    )


def test_page_loads_offline_without_errors(browser_page):
    tab, problems, outside = browser_page
    assert problems == []
    assert outside == []
    kinds = tab.evaluate(
        "() => [...document.querySelectorAll('.chart')].map(e => [e.dataset.kind, e.data.length])"
    )
    assert {k for k, _ in kinds} == {"scatter", "cdf", "box", "series"}
    assert all(n > 0 for _, n in kinds)
    assert tab.title().startswith("rtcc comparison: ")


def test_scatter_has_every_scheme(browser_page, dumbo: Path, tmp_path: Path):
    tab, _, _ = browser_page
    runs = pd.read_csv(dumbo / "runs.csv")
    ran = runs[runs["error"].isna()]
    expected = {e: list(dict.fromkeys(g["scheme"])) for e, g in ran.groupby("experiment")}
    assert set(expected) == ({"pulse", "cellular"} if HAVE_TRACES else {"pulse"})
    names = _scatter_names(tab)
    assert set(names) == set(expected)
    for experiment, schemes in expected.items():
        legend, every = names[experiment]
        assert legend == schemes, experiment
        assert sorted(every) == sorted(schemes), experiment

    # The screenshot shows it: a full page, and every experiment's scatter (the cellular
    # one is Pantheon's view) holding each scheme's colour.
    shot = tmp_path / "report.png"
    tab.screenshot(path=str(shot), full_page=True)
    full = _pixels(shot.read_bytes())
    assert full.shape[0] > 2000 and _inked(full) > 0.02
    charts = tab.locator(".chart[data-kind=scatter]")
    assert charts.count() == len(expected)
    for i in range(charts.count()):
        scatter = charts.nth(i)
        experiment = scatter.get_attribute("data-experiment")
        pixels = _pixels(scatter.screenshot())
        assert _inked(pixels) > 0.01, experiment
        colors = scatter.evaluate(
            "e => e.data.filter(t => t.showlegend !== false).map(t => [t.name, t.marker.color])"
        )
        assert [name for name, _ in colors] == expected[experiment]
        for name, color in colors:
            assert _has_color(pixels, color), f"no {name} ({color}) in {experiment}'s scatter"


def test_legend_toggles_and_hover_shows_values(browser_page):
    tab, problems, _ = browser_page
    chart = tab.locator(".chart[data-kind=scatter]").first
    chart.scroll_into_view_if_needed()
    first = tab.evaluate("() => document.querySelector('.chart[data-kind=scatter]').data[1].name")
    hidden = (
        "() => document.querySelector('.chart[data-kind=scatter]').data.slice(0, 2)"
        ".every(t => t.visible === 'legendonly')"
    )
    # A legend click acts once the double-click delay has passed.
    chart.locator(".legend .traces .legendtoggle").first.click()
    tab.wait_for_function(hidden, timeout=5000)  # the scheme's runs and its mean
    assert tab.evaluate(
        "() => document.querySelector('.chart[data-kind=scatter]').data.slice(2)"
        ".every(t => t.visible !== 'legendonly')"
    ), f"clicking {first} hid other schemes"
    chart.locator(".legend .traces .legendtoggle").first.click()
    tab.wait_for_function(f"() => !({hidden})()", timeout=5000)
    # Hovering the second scheme's marker shows its name and numbers.
    second = tab.evaluate("() => document.querySelector('.chart[data-kind=scatter]').data[3].name")
    box = chart.locator(".scatterlayer .trace").nth(3).locator(".point").first.bounding_box()
    assert box is not None
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tab.wait_for_selector(".chart[data-kind=scatter] .hoverlayer .hovertext", timeout=5000)
    text = chart.locator(".hoverlayer .hovertext").first.text_content() or ""
    assert text.startswith(second) and "one-way delay, p95 (ms): " in text, text
    assert "utilisation (%): " in text, text
    assert problems == []


def test_menu_switches_the_axes(browser_page):
    tab, problems, _ = browser_page
    chart = tab.locator(".chart[data-kind=scatter]").first
    chart.scroll_into_view_if_needed()
    before = tab.evaluate(
        "() => document.querySelector('.chart[data-kind=scatter]').layout.xaxis.title.text"
    )
    chart.locator(".updatemenu-header-group").click()
    chart.locator(".updatemenu-dropdown-button", has_text="frame latency, mean").first.click()
    after = tab.evaluate(
        """() => { const e = document.querySelector('.chart[data-kind=scatter]');
                   return [e.layout.xaxis.title.text, e.data[1].x[0]]; }"""
    )
    assert before.startswith("one-way delay, p95") and after[0].startswith("frame latency, mean")
    assert after[1] > 0
    assert problems == []


def _pixels(png: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return (imread(io.BytesIO(png), format="png")[..., :3] * 255).round().astype(int)


def _inked(pixels: np.ndarray) -> float:
    """The share of pixels that are not (near) white."""
    return float((pixels.min(axis=2) < 235).mean())


def _has_color(pixels: np.ndarray, color: str, tolerance: int = 6) -> bool:
    rgb = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)])
    return bool((np.abs(pixels - rgb).max(axis=2) <= tolerance).sum() >= 6)
