"""Progress in the user's words: a reproduction's bars name the paper's sections and count
runs, and ``reproduce all`` draws one bar over the papers with each paper's bars beneath."""

from __future__ import annotations

import io

from rich.console import Console

from rtcc.console import Bar, Overall
from rtcc.reproduce import EXPERIMENTS
from rtcc.reproduce.runs import PROGRESS_LABELS, progress_label


def _terminal() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, width=200, color_system=None), buf


def test_labels_name_the_paper_and_its_sections():
    assert progress_label("cross", "summary") == "Cross §VI-B, §VI-E: random loss, online stand-in"
    assert progress_label("cross", "new") == "cross: new"
    assert {study for study, _ in PROGRESS_LABELS} == set(EXPERIMENTS) | {"rfc8867"}  # the RMCAT evaluation, not a paper


def test_a_bar_shows_its_label_and_runs():
    term, buf = _terminal()
    with Bar("Cross §VI-B: random loss", unit=" runs", digits=0, terminal=term) as bar:
        bar(23, 65)
        bar._progress.refresh()
    assert "Cross §VI-B: random loss" in buf.getvalue()
    assert "23/65 runs" in buf.getvalue()


def test_overall_bar_holds_each_papers_bar_beneath_it():
    term, buf = _terminal()
    with Overall("reproduce all, now dumbo", 5, unit=" papers", terminal=term) as overall:
        with Bar("Dumbo §6.2.1: pulse link", unit=" runs", digits=0, terminal=term) as bar:
            bar(3, 7)
            assert bar._progress is overall._progress  # one display, two lines
            overall._progress.refresh()
            assert len(overall._progress.tasks) == 2
        assert len(overall._progress.tasks) == 1  # the paper's bar is gone with it
        overall.advance("reproduce all, now cross")
        overall._progress.refresh()
    text = buf.getvalue()
    assert "0/5 papers" in text and "3/7 runs" in text and "1/5 papers" in text
    assert "reproduce all, now cross" in text


def test_a_bar_after_the_overall_one_draws_alone():
    term, _ = _terminal()
    with Overall("all", 1, terminal=term):
        pass
    with Bar("alone", terminal=term) as bar:
        bar(1, 2)
        assert not bar._shared
