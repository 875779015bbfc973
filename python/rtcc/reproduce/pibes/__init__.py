"""Reproducing PIBES (Heimbach, Guo, Ngan & Lee): ``rtcc reproduce pibes``.

:mod:`~rtcc.reproduce.pibes.experiments` builds and runs the experiments of §I and §IV and
computes their metrics; :mod:`~rtcc.reproduce.pibes.paper` holds the paper's own numbers
and setups; :mod:`~rtcc.reproduce.pibes.figures` and :mod:`~rtcc.reproduce.pibes.page`
draw the PNGs and report.html.
"""

from __future__ import annotations

from rtcc.reproduce.pibes.experiments import (
    FULL,
    NORWAY,
    SCHEMES,
    SHORT,
    Outcome,
    Scheme,
    Variant,
    detection,
    jain,
    metrics,
    norway_trace,
    run,
    summary_text,
)

__all__ = [
    "FULL", "NORWAY", "SCHEMES", "SHORT", "Outcome", "Scheme", "Variant", "detection", "jain",
    "metrics", "norway_trace", "run", "summary_text",
]  # fmt: skip
