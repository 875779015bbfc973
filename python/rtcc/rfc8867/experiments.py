"""``rtcc rfc8867``: every case of :mod:`~rtcc.rfc8867.cases` for each controller, through
:func:`rtcc.sweeprun.execute` (cached, on the pool), into table.csv (one row per case and
controller: RFC 8868 metrics and the verdict), the figures and report.html."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from rtcc.reproduce.runs import Outcome, reproduce, summary_table
from rtcc.rfc8867 import cases as _cases
from rtcc.rfc8867.metrics import metrics as _metrics
from rtcc.rfc8867.metrics import verdict
from rtcc.sweepspec import Analysis, Run

__all__ = ["DEFAULT_CONTROLLERS", "FULL", "SHORT", "check_controllers", "run", "summary_text"]

# RFC 8698 NADA is the RMCAT candidate; gcc the deployed algorithm.
DEFAULT_CONTROLLERS = ("gcc", "nada")
SERIES_S = 0.5  # kept series' bin: rate-vs-capacity figures, convergence, delay CDF


@dataclass(frozen=True)
class Variant:
    name: str
    short: bool


FULL = Variant("full", short=False)
SHORT = Variant("short", short=True)


def check_controllers(names: Sequence[str]) -> str | None:
    """Why one of ``names`` is no controller (one line), or None. Registered names, a
    ``py:module:Class`` and ``rtcc.controllers`` entry points are accepted (the registry's
    resolver imports the last two when a scenario names them)."""
    import rtcc

    known = {c["name"] for c in rtcc.controllers()}
    points = {e.name for e in metadata.entry_points(group="rtcc.controllers")}
    for n in names:
        base = n.split("+", 1)[0] if "+" in n and n not in known else n
        if n in known or base in known or n in points or n.startswith("py:"):
            continue
        return (f"controller '{n}' is not registered (registered: {', '.join(sorted(known))}; "
                "or py:module:Class)")  # fmt: skip
    return None


def runs(controllers: Sequence[str], short: bool) -> list[Run]:
    return [
        Run({"experiment": c.id, "scheme": ctl, "section": c.section}, sc, 1, "<rfc8867>")
        for c, ctl, sc in _cases.scenarios(controllers, short=short)
    ]


def row_metrics(record: Mapping[str, Any], case_id: str) -> dict[str, Any]:
    """A run's metrics and its case's verdict (``pass``, ``why``)."""
    case = _cases.CASES[case_id]
    scale = _cases.SHORT_SCALE if record["summary"]["duration_s"] < case.duration_s else 1.0
    row = _metrics(record, [t * scale for t in case.changes], max_kbps=_cases.MAX_KBPS)
    ok, why = verdict(case_id, row)
    return row | {"pass": ok, "why": "; ".join(why)}


def run(
    out: str | Path,
    jobs: int | None = None,
    *,
    controllers: Sequence[str] = DEFAULT_CONTROLLERS,
    short: bool = False,
    fresh: bool = False,
    progress: bool = False,
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
) -> Outcome:
    """Run every case for each of ``controllers``; write OUT/table.csv, the figures and
    OUT/report.html (as a reproduction does, :func:`rtcc.reproduce.runs.reproduce`)."""
    from rtcc.rfc8867 import figures, page

    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups = {"rfc8867": (runs(list(dict.fromkeys(controllers)), short),
                          Analysis(flows="all", series=True, series_s=SERIES_S))}  # fmt: skip
    return reproduce(
        groups, out, SHORT if short else FULL, {}, row_metrics, figures.render_all,
        page.render, started, study="rfc8867", jobs=jobs, fresh=fresh, progress=progress,
        executor=executor, address=address, dataset=dataset,
    )  # fmt: skip


_COLUMNS = (
    ("rate_kbps", "kbps", 1, 0), ("utilization", "util %", 100, 0),
    ("queue_delay_ms_p95", "q p95 ms", 1, 0), ("loss_rate", "loss %", 100, 2),
    ("jain", "Jain", 1, 2), ("convergence_s", "conv s", 1, 1),
    ("oscillation_cv", "CV", 1, 2), ("feedback_overhead", "fb %", 100, 1),
)  # fmt: skip
_KEYS = {
    "case": lambda r: str(r["experiment"]),
    "controller": lambda r: str(r["scheme"]),
    "verdict": lambda r: "PASS" if r.get("pass") is True else "FAIL",
}


def summary_text(table: pd.DataFrame) -> str:
    """What ``rtcc rfc8867`` prints: a line per case and controller, its verdict first."""
    text = summary_table(table, "rate_kbps", _COLUMNS, _KEYS)
    bad = table[table["pass"] != True] if "pass" in table else table.iloc[0:0]  # noqa: E712
    lines = [f"{r['experiment']} {r['scheme']}: {r.get('why') or r.get('error')}"
             for _, r in bad.iterrows()]  # fmt: skip
    return text + ("\nfailed:\n" + "\n".join(lines) if lines else "")
