"""Reproducing Cross (Zhang & Yang, arXiv 2409.10042): ``rtcc reproduce cross``.

:mod:`~rtcc.reproduce.cross.experiments` builds and runs the experiments of §IV and §VI
and computes their metrics; :mod:`~rtcc.reproduce.cross.paper` holds the paper's own
numbers and setups; :mod:`~rtcc.reproduce.cross.figures` and
:mod:`~rtcc.reproduce.cross.page` draw the PNGs and report.html.
"""

from __future__ import annotations

from rtcc.reproduce.cross.experiments import (
    FULL,
    SCHEMES,
    SHORT,
    Outcome,
    Scheme,
    Variant,
    jain,
    metrics,
    probe,
    run,
    spike_seconds,
    summary_text,
)

__all__ = [
    "FULL", "SCHEMES", "SHORT", "Outcome", "Scheme", "Variant", "jain", "metrics", "probe",
    "run", "spike_seconds", "summary_text",
]  # fmt: skip
