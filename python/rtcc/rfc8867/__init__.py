"""The RMCAT evaluation suite: ``rtcc rfc8867``.

:mod:`~rtcc.rfc8867.cases` builds RFC 8867 §5's test cases and RFC 8869 §2's cellular
cases as scenarios; :mod:`~rtcc.rfc8867.metrics` computes RFC 8868 §3's metrics and each
case's verdict; :mod:`~rtcc.rfc8867.experiments` runs them; ``figures`` and ``page`` draw
the figures and report.html. docs/rfc8867.md gives the parameters and thresholds.
"""

from __future__ import annotations

from rtcc.rfc8867.experiments import (
    DEFAULT_CONTROLLERS, FULL, SHORT, check_controllers, run, summary_text,
)

__all__ = ["DEFAULT_CONTROLLERS", "FULL", "SHORT", "check_controllers", "run", "summary_text"]
