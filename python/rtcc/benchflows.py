"""The multi-flow speed workload: N fixed-rate 2.5 Mbps calls on a 3N Mbps / 25 ms link
for 30 s, timed per packet against the single-flow cost and, when a Python with the
``ns3`` wheel is given, against bare ns-3 running the same packet volume in the same run
(``scripts/ns3_multiflow_udp.py``; ``scripts/ns3_p2p_udp.py`` is its single-flow
counterpart)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import rtcc
from rtcc.console import ProgressCallback, Steps

FLOW_COUNTS = (1, 10, 100, 200, 1000)
# Per-packet cost may grow with the number of flows by at most this factor.
COST_LIMIT = 2.0
NS3_SCRIPT = "ns3_multiflow_udp.py"


def repo_script(name: str) -> Path:
    """``scripts/NAME`` of the repository: from this file, then from the cwd."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        path = root / "scripts" / name
        if path.is_file():
            return path
    return Path("scripts") / name


def default_script() -> Path:
    """``scripts/ns3_multiflow_udp.py`` of the repository."""
    return repo_script(NS3_SCRIPT)


def run_ns3(
    python: str, script: Path, args: list[str]
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """Run an ns-3 reference script: its command line (for messages) and the finished process."""
    cmd = " ".join([python, script.name, *args])
    try:
        done = subprocess.run(
            [python, str(script), *args], capture_output=True, text=True, check=False, timeout=3600
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"ns-3 ({cmd}): {e}") from None
    return cmd, done


def ns3_seconds(python: str, script: Path, flows: int, seconds: float = 30.0) -> float:
    """Wall seconds bare ns-3 needs for ``flows`` UDP flows over ``seconds``."""
    cmd, done = run_ns3(python, script, [str(flows), str(seconds)])
    m = re.search(r"run_s=([0-9.]+)", done.stdout)
    if done.returncode != 0 or not m:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"ns-3 ({cmd}): {tail[0]}")
    return float(m.group(1))


def run(
    counts: tuple[int, ...] = FLOW_COUNTS,
    repeat: int = 3,
    ns3_python: str | None = None,
    ns3_script: Path | None = None,
    progress: bool | ProgressCallback = False,
) -> list[dict[str, Any]]:
    """One row per flow count: rtcc's best of ``repeat`` runs and, optionally, ns-3's.
    The repeats go in rounds over all the counts, so a slow stretch of a noisy machine
    hits every count alike, not all the repeats of one.
    ``progress``: ``True`` for a bar on stderr (on a terminal), or a callable taking
    (runs done, runs), ns-3's included."""
    ns3 = bool(ns3_python and ns3_script)
    rows = []
    with Steps(progress, "bench flows", len(counts) * (repeat + ns3), unit=" runs") as report:
        runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
        for _ in range(repeat):
            for n in counts:
                runs[n].append(rtcc.bench(f"flows-{n}"))
                report.advance()
        for n in counts:
            best = min(runs[n], key=lambda r: float(r["wall_s"]))
            row: dict[str, Any] = {
                "flows": n,
                "wall_s": float(best["wall_s"]),
                "speedup": float(best["speedup"]),
                "ns_per_packet": float(best["ns_per_packet"]),
                "rss_per_flow_kb": _kb(best["rss_per_flow_bytes"]),
                # Peak heap of one run: resident memory reads low once the
                # allocator reuses what an earlier run freed.
                "heap_per_flow_kb": _kb(best["heap_per_flow_bytes"]),
            }
            if ns3_python and ns3_script:
                row["ns3_wall_s"] = ns3_seconds(ns3_python, ns3_script, n)
                report.advance()
            rows.append(row)
    base = rows[0]["ns_per_packet"] if rows else 1.0
    for row in rows:
        row["cost_ratio"] = row["ns_per_packet"] / base
        if "ns3_wall_s" in row:
            row["faster_than_ns3"] = row["ns3_wall_s"] / max(row["wall_s"], 1e-12)
    return rows


def _kb(b: Any) -> float | None:
    return None if b is None else float(b) / 1e3
