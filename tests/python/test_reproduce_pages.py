"""What every reproduction page shares: one look per scheme across every paper's figures
and the comparison page, the papers' numbers in a mark no scheme has, notes whose numbers
come from the run on the page, and tables that scroll inside their own box."""

from __future__ import annotations

import re
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest
from matplotlib import pyplot as plt

from rtcc.comparison import _colors
from rtcc.reproduce.figures import PAPER_COLOR, REFERENCE, grouped_bars, scheme_colors
from rtcc.reproduce.page import findings
from rtcc.styles import PALETTE, style, styles

PAPERS = {
    "cross": ("cross", "gcc", "copa", "vivace", "rbbr", "nada", "nadar", "bbr",
              "cross (no fast adaptation)"),
    "dumbo": ("gcc", "copa", "rocc", "copa+dumbo", "rocc+dumbo", "copa (backlogged)",
              "gcc (720p)", "gcc-probing", "vivace"),
    "burstrtc": ("gcc", "bbr", "salsify", "sqp", "pudica", "burstrtc"),
    "pibes": ("gcc", "gcc uncapped", "salsify", "pibes"),
    "fbra": ("fbra", "rrtcc", "c-nadu"),
}  # fmt: skip


def test_a_scheme_has_one_colour_in_every_paper_and_on_the_comparison_page():
    seen: dict[str, str] = {}
    for schemes in PAPERS.values():
        figure = scheme_colors(schemes)
        chart = _colors(list(schemes))
        # Every subset and order a figure may show gives the same colours.
        assert scheme_colors(reversed(schemes)) == figure
        for s in schemes:
            assert figure[s] == chart[s] == style(s).color
            assert seen.setdefault(s, figure[s]) == figure[s]
        # The schemes one paper compares never share a colour.
        assert len(set(figure.values())) == len(schemes)


def test_unknown_schemes_get_a_colour_of_their_own_while_the_palette_lasts():
    looks = styles(["gcc", "mine", "yours", "theirs"])
    assert len({v.color for v in looks.values()}) == 4
    assert styles(["mine"])["mine"] == style("mine")


def test_the_papers_numbers_are_a_mark_no_scheme_has():
    assert PAPER_COLOR == REFERENCE.color not in PALETTE
    marks = {style(s).marker for ss in PAPERS.values() for s in ss}
    symbols = {style(s).symbol for ss in PAPERS.values() for s in ss}
    assert REFERENCE.marker not in marks and REFERENCE.symbol not in symbols
    fig, ax = plt.subplots()
    part = pd.DataFrame({"scheme": ["gcc", "bbr"], "case": [1, 1], "v": [1.0, 2.0]})
    grouped_bars(ax, part, "case", "v", 1.0, scheme_colors(["gcc", "bbr"]), {"gcc": {1: 1.5}})
    (ref,) = ax.lines
    assert ref.get_marker() == "D" and ref.get_markerfacecolor() == "none"
    assert ref.get_markeredgecolor() == "#000000"
    plt.close(fig)


def _summary(goodput_fbra: float) -> pd.DataFrame:
    rows = []
    for scheme, goodput, tfs in (("fbra", goodput_fbra, 0.9), ("rrtcc", 200.0, 1.2)):
        rows.append({"experiment": "Table 1", "scheme": scheme, "delay_ms": 50,
                     "goodput_kbps_mean": goodput, "tfs_mean": None})
        rows.append({"experiment": "Table 3", "scheme": scheme, "delay_ms": 50,
                     "goodput_kbps_mean": goodput, "tfs_mean": tfs})  # fmt: skip
    return pd.DataFrame(rows)


def test_fbra_findings_come_from_the_runs_table():
    from rtcc.reproduce.fbra.page import computed_findings

    first = computed_findings(_summary(150.0))
    assert "-25 % at 50 ms" in first[0]
    assert "fbra 50 ms 90 %" in first[1]
    second = computed_findings(_summary(180.0))
    assert "-10 % at 50 ms" in second[0]


def test_a_short_runs_page_quotes_no_full_run_numbers():
    from rtcc.reproduce.burstrtc import paper

    short = SimpleNamespace(variant=SimpleNamespace(name="short"))
    full = SimpleNamespace(variant=SimpleNamespace(name="full"))
    assert findings(full, paper.FINDINGS, ["computed"]) == ["computed", *paper.FINDINGS]
    shown = findings(short, paper.FINDINGS, ["computed"])
    assert shown[0] == "computed" and not set(shown) & set(paper.FINDINGS)
    assert not re.search(r"\d", shown[1])


@pytest.mark.parametrize("paper", ["dumbo", "cross", "pibes", "burstrtc", "fbra"])
def test_every_table_of_a_page_scrolls_in_its_own_box(paper):
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(f"rtcc.reproduce.{paper}.page"))
    source += inspect.getsource(importlib.import_module("rtcc.reproduce.page"))
    for m in re.finditer(r"<table", source):
        assert source[max(0, m.start() - 30) : m.start()].endswith('<div class="scroll">')
