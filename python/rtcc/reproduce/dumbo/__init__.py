"""Reproducing the Dumbo thesis (Karimi, MIT MS thesis 2023): ``rtcc reproduce dumbo``.

:mod:`~rtcc.reproduce.dumbo.experiments` runs the pulse-link and cellular-trace
experiments and makes their tables; :mod:`~rtcc.reproduce.dumbo.thesis` holds the
thesis's own numbers; :mod:`~rtcc.reproduce.dumbo.figures` and
:mod:`~rtcc.reproduce.dumbo.page` draw the PNGs and report.html from the data they are
given. The names below are the reproduction's entry points.
"""

from __future__ import annotations

from rtcc.reproduce.dumbo.experiments import (
    CELLULAR_SCHEMES,
    PULSE_SCHEMES,
    Outcome,
    Scheme,
    probe,
    ratios,
    run,
    summary_text,
)

__all__ = [
    "CELLULAR_SCHEMES", "PULSE_SCHEMES", "Outcome", "Scheme", "probe", "ratios",
    "run", "summary_text",
]  # fmt: skip
