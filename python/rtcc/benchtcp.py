"""The TCP speed workload: one Cubic TCP bulk flow for 120 s over a 10 Mbps / 20 ms link
(RTT 40 ms) with a drop-tail queue of 33 packets (49.5 kB, 1 BDP), timed against its
target and, when a Python with the ``ns3`` wheel is given, against bare ns-3 running the
same flow on the same path in the same run (``scripts/ns3_tcp.py``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import rtcc
from rtcc import benchflows
from rtcc.console import ProgressCallback, Steps

WORKLOAD = "tcp"
SECONDS = 120.0
NS3_SCRIPT = "ns3_tcp.py"
PATH_TEXT = "1 Cubic flow, 10 Mbps / 20 ms, 33-packet drop-tail queue (1 BDP), 120 s"


def _number(name: str, text: str) -> float | None:
    m = re.search(rf"^{name}=([0-9.eE+-]+)\s*$", text, re.MULTILINE)
    return float(m.group(1)) if m else None


def ns3_run(python: str, script: Path, seconds: float = SECONDS) -> dict[str, float]:
    """Bare ns-3's wall seconds (``run_s``) and goodput (``goodput_mbps``) for the flow."""
    cmd, done = benchflows.run_ns3(python, script, [f"{seconds:g}"])
    run_s = _number("run_s", done.stdout)
    goodput = _number("goodput_mbps", done.stdout)
    if done.returncode != 0 or run_s is None or goodput is None:
        # The wheel's loader writes warnings to stderr: report the last line, the script's
        # own message when it failed, else what stdout lacked.
        lines = (done.stderr or done.stdout).strip().splitlines()
        why = lines[-1] if lines else "no output"
        if done.returncode == 0:
            why = f"no run_s=/goodput_mbps= in its output ({why})"
        else:
            why = f"exit status {done.returncode}: {why}"
        raise RuntimeError(f"ns-3 ({cmd}) failed: {why}")
    return {"run_s": run_s, "goodput_mbps": goodput}


def run(
    repeat: int = 3,
    ns3_python: str | None = None,
    ns3_script: Path | None = None,
    progress: bool | ProgressCallback = False,
) -> dict[str, Any]:
    """rtcc's best of ``repeat`` runs of the workload and, optionally, bare ns-3's run.
    ``progress``: ``True`` for a bar on stderr (on a terminal), or a callable taking
    (runs done, runs), ns-3's included."""
    ns3 = bool(ns3_python and ns3_script)
    with Steps(progress, "bench tcp", repeat + ns3, unit=" runs") as report:
        runs = []
        for _ in range(repeat):
            runs.append(rtcc.bench(WORKLOAD))
            report.advance()
        best = min(runs, key=lambda r: float(r["wall_s"]))
        goodput = best.get("goodput_mbps")
        row: dict[str, Any] = {
            "sim_s": float(best["sim_s"]),
            "wall_s": float(best["wall_s"]),
            "speedup": float(best["speedup"]),
            "packets_per_s": float(best["packets_per_s"]),
            "goodput_mbps": None if goodput is None else float(goodput),
        }
        if ns3_python and ns3_script:
            ns3_row = ns3_run(ns3_python, ns3_script, row["sim_s"] or SECONDS)
            row["ns3_wall_s"] = ns3_row["run_s"]
            row["ns3_goodput_mbps"] = ns3_row["goodput_mbps"]
            row["faster_than_ns3"] = ns3_row["run_s"] / max(row["wall_s"], 1e-12)
            report.advance()
    return row


def default_script() -> Path:
    """``scripts/ns3_tcp.py`` of the repository: from this file, then from the cwd."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        path = root / "scripts" / NS3_SCRIPT
        if path.is_file():
            return path
    return Path("scripts") / NS3_SCRIPT
