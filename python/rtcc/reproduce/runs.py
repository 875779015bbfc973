"""Run bookkeeping every paper reproduction shares: a scheme and whether its controller is
registered, running the experiment groups, a run's per-flow series, the series of one
experiment across schemes, table rows, the files every reproduction writes and what
`rtcc reproduce` prints."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.runset import write_runs
from rtcc.sweeprun import SweepResult, execute
from rtcc.sweepspec import Analysis, Run
from rtcc.tables import format_number, table_text

__all__ = [
    "PROGRESS_LABELS", "SUMMARY_KEYS", "Outcome", "Scheme", "flow_error", "is_reconstruction",
    "jain", "missing_controller", "probe", "progress_label", "reconstructions", "reproduce",
    "rows", "series", "series_of", "summary_table", "window", "write_outputs",
]  # fmt: skip


def missing_controller(name: str) -> str | None:
    """Why a scheme on controller ``name`` cannot run here (not registered), or None."""
    import rtcc

    names = {c["name"] for c in rtcc.controllers()}
    return None if name in names else f"controller '{name}' is not registered"


@functools.cache
def reconstructions() -> frozenset[str]:
    """Controllers the registry marks as reconstructions (rebuilt from a public description,
    without their paper's constants or code)."""
    import rtcc

    return frozenset(c["name"] for c in rtcc.controllers() if c.get("reconstruction"))


def is_reconstruction(label: str) -> bool:
    """Whether a scheme label names a reconstruction: its controller is the label's first
    word (``"sqp"``, ``"c-nadu"``, ``"pudica (2 flows)"``)."""
    return label.split(" ", 1)[0] in reconstructions()


@dataclass(frozen=True)
class Scheme:
    """A compared scheme: its label in tables and figures, its controller (a name, or a
    table with its ``name`` and settings) and the settings every flow of it has."""

    label: str
    controller: str | Mapping[str, Any]
    flow_extra: Mapping[str, Any] = field(default_factory=dict)

    def flow(self, name: str, encoder: Any = None, **extra: Any) -> dict[str, Any]:
        """A flow table: name, controller, ``encoder`` (when given), ``flow_extra``, then
        ``extra`` (which wins)."""
        flow: dict[str, Any] = {"name": name, "controller": self.controller}
        if encoder is not None:
            flow["encoder"] = encoder
        flow.update(self.flow_extra)
        flow.update(extra)
        return flow

    @property
    def name(self) -> str:
        c = self.controller
        return c if isinstance(c, str) else str(c["name"])


def flow_error(flow: Mapping[str, Any], label: str, controller: Any) -> str | None:
    """Why ``flow`` cannot run here, or None: it is built into a simulation on a plain
    link, so a ``py:module:Class`` or an entry point is imported and checked as a
    registered name is, and its settings are checked too."""
    import rtcc
    from rtcc.scenario import dumps_toml

    scenario = {"name": "probe", "duration": "1s", "link": {"capacity": "3Mbps", "delay": "20ms"}}
    text = dumps_toml({**scenario, "flow": [dict(flow)]})
    source = f"<{label}>"
    try:
        rtcc.Simulation(text, source, 1, False)
    except ValueError as exc:
        reason = " ".join(str(exc).split()).removeprefix(f"{source}: ")
        return f"controller {controller!r} cannot run here ({reason})"
    return None


def probe(scheme: Scheme) -> str | None:
    """Why the scheme cannot run here (its controller is not built, say), or None."""
    return flow_error(scheme.flow("probe"), scheme.label, scheme.controller)


def series(record: Mapping[str, Any], flow: int) -> pd.DataFrame | None:
    """Flow ``flow``'s kept series of a run's record, or None."""
    data = record.get("flows", {}).get(str(flow), {}).get("series")
    return pd.DataFrame(data) if data else None


def series_of(
    results: Iterable[SweepResult], experiment: str
) -> list[tuple[str, list[pd.DataFrame]]]:
    """(scheme, per-flow series) for each run of ``experiment`` that kept them."""
    out = []
    for result in results:
        for run, record in zip(result.runs, result.records, strict=True):
            if run.labels["experiment"] != experiment or not record:
                continue
            count = len(record["summary"]["flows"])
            parts = [series(record, i) for i in range(count)]
            out.append((str(run.labels["scheme"]), [p for p in parts if p is not None]))
    return out


def rows(
    results: Iterable[SweepResult], metrics: Callable[[Mapping[str, Any], str], dict[str, Any]]
) -> pd.DataFrame:
    """One row per run: its labels, ``metrics(record, experiment)`` when it ran, and its
    error (None when it ran)."""
    out = []
    for result in results:
        for r, record, error in zip(result.runs, result.records, result.errors, strict=True):
            row: dict[str, Any] = dict(r.labels)
            if record is not None:
                row.update(metrics(record, str(r.labels["experiment"])))
            row["error"] = error
            out.append(row)
    return pd.DataFrame(out)


def jain(values: Sequence[float]) -> float:
    """Jain's index (Σx)²/(n·Σx²); NaN for no values or all zero. Given each flow's
    mean over one shared window (``jain_window``, ``jain_overlap``, Table I's ``jain``),
    it is the window index of ``Result.jain`` / ``rtcc fairness``, which gives 1 where
    this gives NaN; the summary's ``jain_index`` is the per-flow active-time index."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def window(series: pd.DataFrame, start_s: float, end_s: float) -> pd.DataFrame:
    """The bins of a kept series ending in (start_s, end_s]."""
    t = series["t_s"].to_numpy(dtype=float)
    return series[(t > start_s) & (t <= end_s)]


@dataclass
class Outcome:
    """Everything a reproduction's report needs; ``table`` is table.csv and ``variant`` the
    reproduction's own set of lengths and levels."""

    variant: Any
    table: pd.DataFrame
    results: dict[str, SweepResult]
    skipped: dict[str, str]
    wall_s: float = 0.0
    controllers: list[str] = field(default_factory=list)
    traces: str | None = None

    def series(self, experiment: str) -> list[tuple[str, list[pd.DataFrame]]]:
        """(scheme, per-flow series) for each run of ``experiment`` that kept them."""
        return series_of(self.results.values(), experiment)


# A paper's figures (outcome -> {filename: (png, caption)}) and its page (outcome, figures).
RenderFigures = Callable[[Outcome], dict[str, tuple[bytes, str]]]
RenderPage = Callable[[Outcome, Mapping[str, tuple[bytes, str]]], str]
# More CSV files beside table.csv: filename -> the file's table from table.csv.
Tables = Mapping[str, Callable[[pd.DataFrame], pd.DataFrame]]

# What each paper's run groups hold, in the paper's words, for the progress bars:
# (study, group) -> label; a group not listed shows as "study: group".
PROGRESS_LABELS = {
    ("cross", "rates"): "Cross §VI-A, §VI-D, §IV: Table III links, RTT fairness, BBR vs RBBR",
    ("cross", "adapt"): "Cross §VI-C: fast bandwidth adaptation",
    ("cross", "summary"): "Cross §VI-B, §VI-E: random loss, online stand-in",
    ("pibes", "pibes"): "PIBES Table 1, Figs. 6-18: Cubic, accuracy, links, TCP, two flows",
    ("burstrtc", "burstrtc"): "BurstRTC Figs. 3-20, Table I: content, loss, jitter, two flows",
    ("fbra", "fbra"): "FBRA Tables 1-3: variable link, web TCP, 50/100/240 ms",
    ("dumbo", "pulse"): "Dumbo §6.2.1: pulse link",
    ("dumbo", "cellular"): "Dumbo §6.2.2-6.4: Mahimahi cellular traces",
    ("rfc8867", "rfc8867"): "RFC 8867 §5.1-5.8 test cases, RFC 8869 §2 cellular",
}


def progress_label(study: str, group: str) -> str:
    """The progress bar's words for a paper's run group (:data:`PROGRESS_LABELS`)."""
    return PROGRESS_LABELS.get((study, group), f"{study}: {group}")


def reproduce(
    groups: Mapping[str, tuple[Sequence[Run], Analysis]],
    out: Path,
    variant: Any,
    skipped: dict[str, str],
    metrics: Callable[[Mapping[str, Any], str], dict[str, Any]],
    render_figures: RenderFigures,
    render_page: RenderPage,
    started: float,
    *,
    study: str,
    traces: str | None = None,
    tables: Tables | None = None,
    jobs: int | None,
    fresh: bool,
    progress: bool,
    executor: str,
    address: str | None,
    dataset: str | Path | None,
) -> Outcome:
    """Run a paper's experiment groups and write its results: each group's runs (``name ->
    (runs, analysis)``; an empty group is left out) through :func:`rtcc.sweeprun.execute`
    into ``out``, a failed run kept as its error; a table row per run (:func:`rows`),
    OUT/runs.csv, then :func:`write_outputs`. The outcome lists the controllers registered."""
    import rtcc

    common: dict[str, Any] = {
        "jobs": jobs, "fresh": fresh, "on_error": "skip", "executor": executor,
        "address": address, "dataset": dataset, "study": study,
    }  # fmt: skip
    results = {
        name: execute(
            runs, analysis, out, progress=progress, label=progress_label(study, name), **common
        )
        for name, (runs, analysis) in groups.items()
        if runs
    }
    table = rows(results.values(), metrics)
    write_runs(out, results.values())
    controllers = [c["name"] for c in rtcc.controllers()]
    outcome = Outcome(variant, table, results, skipped, controllers=controllers, traces=traces)
    write_outputs(out, outcome, render_figures, render_page, started, tables)
    return outcome


def write_outputs(
    out: Path,
    outcome: Outcome,
    render_figures: RenderFigures,
    render_page: RenderPage,
    started: float,
    tables: Tables | None = None,
) -> None:
    """OUT/table.csv (and ``tables``), the figures as PNG and OUT/report.html;
    ``outcome.wall_s`` from ``started`` (a ``time.perf_counter()``) to the end."""
    from rtcc.limits import write_atomic

    write_atomic(out / "table.csv", outcome.table.to_csv(index=False))
    for name, derive in (tables or {}).items():
        write_atomic(out / name, derive(outcome.table).to_csv(index=False))
    images = render_figures(outcome)
    for name, (png, _) in images.items():
        write_atomic(out / name, png)
    outcome.wall_s = time.perf_counter() - started
    write_atomic(out / "report.html", render_page(outcome, images))
    outcome.wall_s = time.perf_counter() - started


# The first columns of what `rtcc reproduce PAPER` prints: header -> a table row's text.
SUMMARY_KEYS: Mapping[str, Callable[[pd.Series], str]] = {
    "experiment": lambda r: str(r["experiment"]),
    "scheme": lambda r: str(r["scheme"]),
}


def summary_table(
    table: pd.DataFrame,
    needed: str,
    columns: Sequence[tuple[str, str, float, int]],
    keys: Mapping[str, Callable[[pd.Series], str]] = SUMMARY_KEYS,
) -> str:
    """What `rtcc reproduce PAPER` prints: a line per row of ``table``, its ``keys``, then
    its ``columns`` (column, heading, scale, decimals) as :func:`rtcc.tables.format_number`
    shows them; "no runs" for a table without the column ``needed``."""
    if table.empty or needed not in table:
        return "no runs"
    lines = [
        [*(key(r) for key in keys.values()),
         *(format_number(r.get(c), scale, digits) for c, _, scale, digits in columns)]
        for _, r in table.iterrows()
    ]  # fmt: skip
    return table_text([*keys, *(heading for _, heading, _, _ in columns)], lines)
