"""The TCP speed workload: one Cubic TCP bulk flow for 120 s over a 10 Mbps / 20 ms link
(RTT 40 ms) with a drop-tail queue of 33 packets (49.5 kB, 1 BDP), timed against its
target and, when a Python with the ``ns3`` wheel is given, against bare ns-3 running the
same flow on the same path in the same run (``scripts/ns3_tcp.py``, with ``--prr-rfc``: ns-3
3.44's PRR counts every duplicate ACK's segment on top of the SACKed bytes, which doubles
each congestion episode into two recoveries; the script's RFC 6937 PRR counts them once, as
Linux does)."""

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


# Cubic's window dynamics, compared with ns-3's: the fields the script prints.
DYNAMICS = ("loss_events", "cwnd_period_s", "cwnd_trough_pkts", "retransmits")
# rtcc's side runs the `tcp` workload of bench.rs (same link and flow) with its time
# series on, which the timed runs leave off.
SCENARIO = {
    "name": "bench-tcp-dynamics",
    "link": {"capacity": "10Mbps", "delay": "20ms", "queue": "33pkt"},
    "flow": [{"kind": "tcp", "cc": "cubic"}],
    "record": {"packets": False, "frames": False, "timeseries": True},
}
PACKET_BYTES = 1500  # the window's unit on the wire, as ns-3's MSS 1448 + 52 B


def dynamics_of(series: Any) -> dict[str, float]:
    """Loss events, mean spacing after the first (the slow-start exit), median window
    after the reduction in packets, from a TCP flow's 100 ms time series: an event is a
    bin with retransmissions after one without; its trough is the least window at the
    end of that bin and the next (recovery, under two RTTs, ends within them at
    ssthresh, where ns-3's trough is read)."""
    if not {"t_s", "retransmits", "cwnd_bytes"} <= set(series.columns):
        # Not a TCP flow's series (a stand-in simulator's): nothing measured.
        return dict.fromkeys(DYNAMICS, float("nan"))
    t = [float(x) for x in series["t_s"]]
    rtx = [float(x) for x in series["retransmits"]]
    cwnd = [float(x) for x in series["cwnd_bytes"]]
    starts = [i for i in range(len(t)) if rtx[i] > 0 and (i == 0 or rtx[i - 1] == 0)]
    gaps = [t[b] - t[a] for a, b in zip(starts[1:], starts[2:])]
    troughs = sorted(min(cwnd[i : i + 2]) / PACKET_BYTES for i in starts[1:])
    return {
        "loss_events": float(len(starts)),
        "cwnd_period_s": sum(gaps) / len(gaps) if gaps else float("nan"),
        "cwnd_trough_pkts": troughs[len(troughs) // 2] if troughs else float("nan"),
        "retransmits": float(sum(rtx)),
    }


def rtcc_dynamics(seconds: float = SECONDS, seed: int = 1) -> dict[str, float]:
    """Cubic's window dynamics in rtcc on the workload's path for ``seconds``."""
    r = rtcc.simulate({**SCENARIO, "duration": f"{seconds:g}s"}, seed=seed, record_packets=False)
    ts = r.timeseries
    return dynamics_of(ts[ts["flow"] == 0])


def ns3_run(python: str, script: Path, seconds: float = SECONDS) -> dict[str, float]:
    """Bare ns-3's wall seconds (``run_s``), goodput (``goodput_mbps``) and, when the
    script prints them, Cubic's window dynamics (``DYNAMICS``) for the flow."""
    cmd, done = benchflows.run_ns3(python, script, [f"{seconds:g}", "--prr-rfc"])
    return parse_ns3(cmd, done.returncode, done.stdout, done.stderr)


def parse_ns3(cmd: str, returncode: int, stdout: str, stderr: str) -> dict[str, float]:
    """The numbers of ``scripts/ns3_tcp.py``'s output; a failed run raises RuntimeError
    with one line saying why."""
    run_s = _number("run_s", stdout)
    goodput = _number("goodput_mbps", stdout)
    if returncode != 0 or run_s is None or goodput is None:
        # The wheel's loader writes warnings to stderr: report the last line, the script's
        # own message when it failed, else what stdout lacked.
        lines = (stderr or stdout).strip().splitlines()
        why = lines[-1] if lines else "no output"
        if returncode == 0:
            why = f"no run_s=/goodput_mbps= in its output ({why})"
        else:
            why = f"exit status {returncode}: {why}"
        raise RuntimeError(f"ns-3 ({cmd}) failed: {why}")
    row = {"run_s": run_s, "goodput_mbps": goodput}
    for name in DYNAMICS:
        value = _number(name, stdout)
        if value is not None:
            row[name] = value
    return row


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
            for name in DYNAMICS:
                row[f"ns3_{name}"] = ns3_row.get(name)
            report.advance()
    if ns3:
        row.update(rtcc_dynamics(row["sim_s"] or SECONDS))
    return row


def dynamics_rows(row: dict[str, Any]) -> list[list[str]]:
    """Cubic's window dynamics, rtcc's beside ns-3's (``None``: not measured)."""

    def cell(v: Any, digits: int) -> str:
        return "-" if v is None or v != v else f"{float(v):.{digits}f}"

    names = {
        "loss_events": ("loss events", 0),
        "cwnd_period_s": ("cwnd period s (between loss events)", 2),
        "cwnd_trough_pkts": ("cwnd trough packets (after reduction)", 1),
        "retransmits": ("retransmissions", 0),
    }
    return [[label, cell(row.get(k), d), cell(row.get(f"ns3_{k}"), d)] for k, (label, d) in names.items()]


def default_script() -> Path:
    """``scripts/ns3_tcp.py`` of the repository."""
    return benchflows.repo_script(NS3_SCRIPT)
