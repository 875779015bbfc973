"""Reproductions of the papers' experiments: ``rtcc reproduce NAME``.

One sub-package per paper (:mod:`rtcc.reproduce.dumbo`, :mod:`rtcc.reproduce.cross`,
:mod:`rtcc.reproduce.pibes`, :mod:`rtcc.reproduce.burstrtc`, :mod:`rtcc.reproduce.fbra`), each
with a ``run(out, ...)`` writing ``table.csv`` and ``report.html`` under ``out``. What
every paper shares lives here: :mod:`~rtcc.reproduce.traces` (where each paper's traces are),
:mod:`~rtcc.reproduce.figures` (scheme colours, rendering in rtcc's style) and
:mod:`~rtcc.reproduce.page` (the report page and its rtcc-vs-paper tables).
"""

from __future__ import annotations

__all__ = ["EXPERIMENTS"]

# Name -> sub-package under rtcc.reproduce (imported on demand: they pull in pandas/matplotlib).
EXPERIMENTS = {
    "dumbo": "Dumbo thesis: pulse-link convergence and Mahimahi cellular traces",
    "cross": "Cross paper: Table III links, random loss, fast adaptation, RTT fairness, "
    "BBR vs RBBR, online stand-in",
    "pibes": "PIBES paper: Table 1 against Cubic, estimate and detection accuracy, fixed, 3G "
    "and ramped links with and without TCP, two PIBES flows",
    "burstrtc": "BurstRTC paper: static and dynamic content, responsiveness, a cellular trace, "
    "loss, jitter, two flows, the sampler and the delay model",
    "fbra": "FBRA paper: Tables 1-3 (variable link; one and two flows against web TCP) at "
    "50/100/240 ms over 30 seeds",
}
