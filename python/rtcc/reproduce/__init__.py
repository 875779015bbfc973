"""Reproductions of the papers' experiments: ``rtcc reproduce NAME``.

Each experiment module has ``run(out, ...)`` writing ``table.csv`` and ``report.html``
under ``out``; see :mod:`rtcc.reproduce.dumbo`.
"""

from __future__ import annotations

__all__ = ["EXPERIMENTS"]

# Name -> module under rtcc.reproduce (imported on demand: they pull in pandas/matplotlib).
EXPERIMENTS = {"dumbo": "Dumbo thesis: pulse-link convergence and Mahimahi cellular traces"}
