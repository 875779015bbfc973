"""``rtcc reproduce all``: every paper's reproduction into one dataset, and an index page.

Each paper runs into ``OUT/<paper>/`` (its own cache, ``table.csv`` and ``report.html``),
all of them appending to one results dataset (``OUT/dataset`` unless another is named),
and ``OUT/index.html`` links every paper's page with what it ran, skipped and took.
"""

from __future__ import annotations

import html
import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtcc.console import Overall
from rtcc.limits import write_atomic
from rtcc.reproduce import EXPERIMENTS
from rtcc.reproduce.page import document

__all__ = ["Entry", "render", "run_all"]

PAGE = "index.html"


@dataclass
class Entry:
    """One paper's reproduction as the index shows it."""

    name: str
    folder: Path
    summary: str  # what `rtcc reproduce <name>` prints
    computed: int
    cached: int
    failed: int
    wall_s: float
    skipped: dict[str, str] = field(default_factory=dict)


def check_traces(traces: str | Path | None, direction: str = "down") -> None:
    """Raise :class:`~rtcc.reproduce.traces.TracesError` unless every paper finds its
    traces where ``traces`` says (None: the bundled sets), before any of them runs."""
    from rtcc.reproduce import burstrtc, pibes
    from rtcc.reproduce.traces import mahimahi_files

    mahimahi_files(traces, direction, None, "dumbo's cellular run")
    pibes.NORWAY.locate(traces)
    burstrtc.TRACE.locate(traces)


def run_all(
    out: str | Path,
    jobs: int | None = None,
    *,
    short: bool = False,
    fresh: bool = False,
    progress: bool = False,
    traces: str | Path | None = None,
    encoder: str = "lagging",
    direction: str = "down",
    vp8: bool | None = None,
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
    on_paper: Callable[[Entry], None] | None = None,
) -> list[Entry]:
    """Run every registered reproduction (:data:`rtcc.reproduce.EXPERIMENTS`) into
    ``OUT/<paper>``, all appending to ``dataset`` (default ``OUT/dataset``); write
    ``OUT/index.html``. ``traces`` is where every paper finds its traces, as ``--traces``
    means (:mod:`rtcc.reproduce.traces`; default the bundled sets), checked before anything
    runs; ``encoder`` and ``direction`` go to dumbo, ``vp8`` to burstrtc. ``on_paper``
    hears each paper as it finishes."""
    check_traces(traces, direction)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    common: dict[str, Any] = {
        "short": short, "fresh": fresh, "progress": progress, "executor": executor,
        "address": address, "dataset": dataset if dataset is not None else out / "dataset",
    }  # fmt: skip
    entries = []
    # One bar over the papers, each paper's own bars drawn beneath it.
    overall = _OverallBar(progress, on_paper)
    on_paper = overall.paper_done
    for name in EXPERIMENTS:
        module = importlib.import_module(f"rtcc.reproduce.{name}")
        started = time.perf_counter()
        folder = out / name
        with lock(folder, name):
            outcome = _run_one(name, module, folder, jobs, traces, encoder, direction, vp8, common)
        results = list(outcome.results.values())
        entry = Entry(
            name, folder, module.summary_text(outcome.table),
            computed=sum(r.executed for r in results), cached=sum(r.cached for r in results),
            failed=sum(r.failed for r in results), wall_s=time.perf_counter() - started,
            skipped=dict(outcome.skipped),
        )  # fmt: skip
        entries.append(entry)
        if on_paper is not None:
            on_paper(entry)
    overall.close()
    write_atomic(out / PAGE, render(entries, Path(common["dataset"]), out))
    return entries


class _OverallBar:
    """``reproduce all``'s overall bar (papers done of all, naming the one running), when
    ``progress``; ``paper_done`` advances it and passes the entry on to ``told``."""

    def __init__(self, progress: bool, told: Callable[[Entry], None] | None) -> None:
        self.names = list(EXPERIMENTS)
        self.told = told
        self.bar = Overall(self.label(0), len(self.names), unit=" papers") if progress else None
        if self.bar is not None:
            self.bar.__enter__()

    def label(self, done: int) -> str:
        if done < len(self.names):
            return f"reproduce all, now {self.names[done]}"
        return "reproduce all"

    def paper_done(self, entry: Entry) -> None:
        if self.bar is not None:
            self.bar.advance(self.label(self.bar.done + 1))
        if self.told is not None:
            self.told(entry)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__()


def lock(folder: str | Path, name: str) -> Any:
    """``folder``'s lock, held while reproduction ``name`` writes into it: the one a sweep
    holds (``OUT/sweep.lock``), so a second reproduction or a sweep into the folder is
    refused at once, naming the folder and the holder's process, as a second sweep is."""
    from rtcc.sweeprun import _FolderLock

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return _FolderLock(folder, f"reproduction (rtcc reproduce {name})")


def _run_one(
    name: str,
    module: Any,
    folder: Path,
    jobs: int | None,
    traces: str | Path | None,
    encoder: str,
    direction: str,
    vp8: bool | None,
    common: Mapping[str, Any],
) -> Any:
    """One paper's ``run`` with the arguments it takes."""
    if name == "dumbo":
        return module.run(folder, traces, jobs, encoder=encoder, direction=direction, **common)
    if name == "pibes":
        return module.run(folder, jobs, traces=traces, **common)
    if name == "burstrtc":
        return module.run(folder, jobs, traces=traces, vp8=vp8, **common)
    return module.run(folder, jobs, **common)


def render(entries: list[Entry], dataset: Path, out: Path) -> str:
    """The index page: one row per paper, linking its report."""
    rows = []
    for e in entries:
        link = f"{e.folder.name}/report.html"
        skipped = "; ".join(f"{k}: {v}" for k, v in e.skipped.items())
        rows.append(
            f'<tr><td><a href="{html.escape(link)}">{html.escape(e.name)}</a></td>'
            f"<td>{html.escape(EXPERIMENTS[e.name])}</td>"
            f"<td>{e.computed + e.cached:,}</td><td>{e.computed:,}</td><td>{e.cached:,}</td>"
            f"<td>{e.failed:,}</td><td>{e.wall_s:,.1f}</td>"
            f'<td class="note">{html.escape(skipped)}</td></tr>'
        )
    try:
        shown = dataset.relative_to(out)
    except ValueError:
        shown = dataset
    query = "SELECT study, scheme, count(*) AS runs, avg(utilization) FROM runs GROUP BY ALL"
    body = [
        "<p>Every paper's reproduction, each in its own folder with its report.</p>",
        '<div class="scroll"><table><tr><th>paper</th><th>experiments</th><th>runs</th>'
        "<th>computed</th><th>cached</th><th>failed</th><th>wall s</th><th>skipped</th></tr>",
        *rows,
        "</table></div>",
        f"<p>All runs, one row per flow, are in the results dataset "
        f"<code>{html.escape(str(shown))}</code>; query it with "
        f"<code>rtcc query &quot;{html.escape(query)}&quot; --dataset "
        f"{html.escape(str(dataset))}</code>.</p>",
        "<p>All papers' runs on one interactive page: "
        f"<code>rtcc report {html.escape(str(out))} --out compare.html</code>.</p>",
    ]
    return document("reproductions", "rtcc reproductions", body)
