"""Run bookkeeping every paper reproduction shares: which controllers are registered, a
run's per-flow series, the series of one experiment across schemes, and table rows."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.sweeprun import SweepResult

__all__ = [
    "Outcome", "jain", "missing_controller", "rows", "series", "series_of", "window",
    "write_outputs",
]  # fmt: skip


def missing_controller(name: str) -> str | None:
    """Why a scheme on controller ``name`` cannot run here (not registered), or None."""
    import rtcc

    names = {c["name"] for c in rtcc.controllers()}
    return None if name in names else f"controller '{name}' is not registered"


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
    """Jain's index (Σx)²/(n·Σx²); NaN for no values or all zero."""
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


def write_outputs(
    out: Path,
    outcome: Outcome,
    render_figures: Callable[[Outcome], dict[str, tuple[bytes, str]]],
    render_page: Callable[[Outcome, Mapping[str, tuple[bytes, str]]], str],
    started: float,
) -> None:
    """OUT/table.csv, the figures as PNG and OUT/report.html; ``outcome.wall_s`` from
    ``started`` (a ``time.perf_counter()``) to the end."""
    from rtcc.limits import write_atomic

    write_atomic(out / "table.csv", outcome.table.to_csv(index=False))
    images = render_figures(outcome)
    for name, (png, _) in images.items():
        write_atomic(out / name, png)
    outcome.wall_s = time.perf_counter() - started
    write_atomic(out / "report.html", render_page(outcome, images))
    outcome.wall_s = time.perf_counter() - started
