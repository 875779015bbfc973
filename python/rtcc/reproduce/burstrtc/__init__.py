"""Reproducing BurstRTC (Jia et al.): ``rtcc reproduce burstrtc``.

:mod:`~rtcc.reproduce.burstrtc.experiments` builds and runs the experiments of §III and §IV
and computes their metrics; :mod:`~rtcc.reproduce.burstrtc.paper` holds the paper's own
numbers and setups; :mod:`~rtcc.reproduce.burstrtc.figures` and
:mod:`~rtcc.reproduce.burstrtc.page` draw the PNGs and report.html.
"""

from __future__ import annotations

from rtcc.reproduce.burstrtc.experiments import (
    FULL,
    SCHEMES,
    SHORT,
    TRACE,
    Outcome,
    Scheme,
    Variant,
    jain,
    metrics,
    run,
    summary_text,
)

__all__ = [
    "FULL", "SCHEMES", "SHORT", "TRACE", "Outcome", "Scheme", "Variant", "jain", "metrics",
    "run", "summary_text",
]  # fmt: skip
