"""Reproducing FBRA (Nagy, Singh, Ott & Eggert, MMSys 2014): ``rtcc reproduce fbra``.

:mod:`~rtcc.reproduce.fbra.experiments` builds and runs Tables 1-3 of §5 and computes their
metrics; :mod:`~rtcc.reproduce.fbra.paper` holds the paper's numbers;
:mod:`~rtcc.reproduce.fbra.figures` and :mod:`~rtcc.reproduce.fbra.page` draw the PNGs and
report.html.
"""

from __future__ import annotations

from rtcc.reproduce.fbra.experiments import (
    FULL,
    SCHEMES,
    SHORT,
    Variant,
    capacity_steps,
    metrics,
    run,
    summary,
    summary_text,
)

__all__ = ["FULL", "SCHEMES", "SHORT", "Variant", "capacity_steps", "metrics", "run",
           "summary", "summary_text"]  # fmt: skip
