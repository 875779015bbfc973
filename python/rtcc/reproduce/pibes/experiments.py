"""The PIBES reproduction's runs: the experiments of §I and §IV and their metrics.

Reproduces Heimbach, Guo, Ngan & Lee, "PIBES - A Competing-Flow-Aware Protocol for
Real-Time Video Applications" in simulation. Every run is
40 s (Fig. 18 at five seeds, the rest at one) on a link of 20 ms one-way delay (§IV-B) with a 50-packet drop-tail queue
(:mod:`~rtcc.reproduce.pibes.paper` says why):

- ``Table 1``: 4 Mbps, one video flow of gcc (capped as libwebrtc caps it, and uncapped),
  salsify or pibes against 0, 1 or 2 Cubic flows; also with a 150-packet queue.
- ``Fig. 6 burst N`` / ``Fig. 7 alpha A``: pibes alone on 5 Mbps with a fixed burst of N
  packets (alpha = 0.1) or a 6-packet burst and EWMA gain A; the estimate's error.
- ``Fig. 8 forward`` / ``Fig. 8 reverse``: pibes on 5 Mbps with a Cubic flow added every
  5 s, forward or reverse; estimate error per number of TCP flows, detection (Fig. 9).
- ``Fig. 10``: fixed 3 Mbps alone. ``Fig. 11``: a Norway HSDPA (3G) trace alone;
  ``Fig. 15``: the same with TCP. ``Fig. 12``: 4 -> 2 -> 4 Mbps ramp alone; ``Fig. 16``:
  with TCP; ``Fig. 17``: with TCP and pibes's R_min at 1.5 Mbps.
- ``Fig. 13``: 4 Mbps, one TCP flow over 10-27 s. ``Fig. 14``: TCP flows from 10 s and 20 s.
- ``Fig. 18``: two pibes flows with s_min = s_max/2 on 4 Mbps, the second from 10 s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.reproduce.pibes import paper
from rtcc.reproduce.runs import SUMMARY_KEYS, Outcome, jain, probe, reproduce, summary_table
from rtcc.reproduce.runs import Scheme as _Scheme
from rtcc.reproduce.runs import series as flow_series
from rtcc.reproduce.runs import window as _window
from rtcc.reproduce.traces import Need
from rtcc.sweepspec import Analysis, Run

__all__ = [
    "FULL", "SCHEMES", "SHORT", "Outcome", "Scheme", "Variant", "detection", "jain", "metrics",
    "norway_trace", "run", "summary_text",
]  # fmt: skip

SEED = 1
# Fig. 18 (two flows on one link) at several seeds: its fairness varies with the flows'
# phases more than one run shows; table.csv keeps a row per seed, fig18_seeds.csv the spread.
FIG18_SEEDS = (1, 2, 3, 4, 5)
QUEUE_PKT = 50  # Dummynet's default queue (50 slots); the paper gives none
QUEUE_LARGE_PKT = 150  # Table 1's second size
JITTER = "0.3ms"  # Figs. 6-7: host timing noise the simulated link lacks (paper.NOTES)
BIN = "100ms"
# The 3G trace (Figs. 11, 15): a Norway HSDPA bus ride, 2.9 Mbps mean (p10 0.8, p90 4.0),
# the operating range of the paper's 3G figure.
NORWAY = Need("pensieve-norway", "norway_bus_1", "pibes' 3G runs (Figs. 11, 15)")
# Encoder of eq. 7 for every scheme: target x (1 + N(0, 0.025)), no key frames.
ENCODER = {"kind": "noise", "sigma": 0.025, "key_interval": "none"}
# pibes's own FEC sits inside its budget (§III-B); "retransmission as a last resort".
TCP = {"kind": "tcp", "cc": "cubic"}


class Scheme(_Scheme):
    """A scheme whose every flow is on :data:`ENCODER`."""

    def flow(self, name: str, encoder: Any = ENCODER, **extra: Any) -> dict[str, Any]:
        return super().flow(name, encoder, **extra)


SCHEMES = {
    s.label: s
    for s in (
        # WebRTC: GCC capped at libwebrtc's default for the resolution, with NACK.
        Scheme("gcc", "gcc", {"caps": "webrtc", "nack": True}),
        Scheme("gcc uncapped", "gcc", {"nack": True}),
        # Salsify recovers from loss through its decoder states, not retransmission.
        Scheme("salsify", "salsify", {"nack": False}),
        Scheme("pibes", "pibes", {"nack": True}),
    )
}
COMPARED = ("gcc", "salsify", "pibes")
TABLE_1_SCHEMES = ("gcc", "gcc uncapped", "salsify", "pibes")


@dataclass(frozen=True)
class Variant:
    name: str
    duration_s: int
    queues: tuple[int, ...]
    tcp_counts: tuple[int, ...]
    bursts: tuple[int, ...]
    alphas: tuple[float, ...]
    tcp_every_s: int  # Fig. 8: a TCP flow joins every this many seconds
    tcp_window: tuple[int, int]  # Fig. 13: the TCP flow's start, stop
    staggered: tuple[int, int]  # Fig. 14: the two TCP flows' starts
    ramp: tuple[int, int, int, int]  # down from, down by, up from, up by (s)
    join_s: int  # Figs. 15-17: TCP from; Fig. 18: second pibes from
    traces: bool


FULL = Variant(
    "full", duration_s=40, queues=(QUEUE_PKT, QUEUE_LARGE_PKT), tcp_counts=(0, 1, 2),
    bursts=(2, 3, 4, 5, 6, 8, 10), alphas=(0.05, 0.1, 0.2, 0.3, 0.5, 0.8), tcp_every_s=5,
    tcp_window=(10, 27), staggered=(10, 20), ramp=(10, 15, 25, 30), join_s=10, traces=True,
)  # fmt: skip
# Shortened for tests: the claims' experiments at half length, every event kept.
SHORT = Variant(
    "short", duration_s=20, queues=(QUEUE_PKT,), tcp_counts=(0, 2), bursts=(2, 6),
    alphas=(0.1, 0.8), tcp_every_s=5, tcp_window=(5, 14), staggered=(5, 10),
    ramp=(5, 8, 13, 16), join_s=5, traces=False,
)  # fmt: skip


def _scenario(
    name: str, v: Variant, link: Mapping[str, Any], flows: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "name": name, "duration": f"{v.duration_s}s", "seed": SEED, "link": dict(link),
        "record": {"bin": BIN}, "flow": flows,
    }  # fmt: skip


def _link(capacity: Any, queue_pkt: int = QUEUE_PKT, **extra: Any) -> dict[str, Any]:
    return {"capacity": capacity, "delay": f"{paper.OWD_MS}ms", "queue": f"{queue_pkt}pkt", **extra}


def _run(
    experiment: str, scheme: Scheme, scenario: dict[str, Any], run_seed: int = SEED,
    **labels: Any,
) -> Run:
    return Run({"experiment": experiment, "scheme": scheme.label, **labels},
               {**scenario, "seed": run_seed}, run_seed, "<pibes>")  # fmt: skip


def _tcp(
    name: str, start: int | None = None, stop: int | None = None, **extra: Any
) -> dict[str, Any]:
    flow: dict[str, Any] = {"name": name, **TCP, **extra}
    if start:
        flow["start"] = f"{start}s"
    if stop:
        flow["stop"] = f"{stop}s"
    return flow


def table1_runs(v: Variant, schemes: Sequence[Scheme]) -> list[Run]:
    runs = []
    for q in v.queues:
        for n in v.tcp_counts:
            for s in schemes:
                flows = [s.flow("video")] + [_tcp(f"tcp{k + 1}") for k in range(n)]
                scenario = _scenario("pibes-table-1", v, _link("4Mbps", q), flows)
                runs.append(_run("Table 1", s, scenario, tcp_flows=n, queue_pkt=q))
    return runs


def sensitivity_runs(v: Variant, pibes: Scheme) -> list[Run]:
    """Figs. 6-7: 5 Mbps alone, one burst size or alpha per run."""
    link = _link("5Mbps", jitter=JITTER)
    runs = []
    for n in v.bursts:
        s = Scheme(pibes.label, {"name": "pibes", "n_min": n, "n_max": n, "min_frame_packets": n},
                   pibes.flow_extra)  # fmt: skip
        runs.append(
            _run(f"Fig. 6 burst {n}", s, _scenario("pibes-fig-6", v, link, [s.flow("video")]))
        )
    for a in v.alphas:
        s = Scheme(pibes.label, {"name": "pibes", "n_min": 6, "n_max": 6, "alpha": a,
                                 "min_frame_packets": 6}, pibes.flow_extra)  # fmt: skip
        runs.append(
            _run(f"Fig. 7 alpha {a:g}", s, _scenario("pibes-fig-7", v, link, [s.flow("video")]))
        )
    return runs


def estimate_runs(v: Variant, pibes: Scheme) -> list[Run]:
    """Fig. 8: a TCP flow joins every ``tcp_every_s``, forward (sharing the bottleneck) or
    reverse (its data on the reverse bottleneck, its ACKs forward)."""
    starts = range(v.tcp_every_s, v.duration_s, v.tcp_every_s)
    runs = []
    for direction in ("forward", "reverse"):
        extra: dict[str, Any] = {}
        if direction == "reverse":
            extra = {"reverse_capacity": "5Mbps", "reverse_queue": f"{QUEUE_PKT}pkt"}
        link = _link("5Mbps", QUEUE_PKT, **extra)
        flows = [pibes.flow("video")] + [
            _tcp(f"tcp{k + 1}", t, direction=direction) for k, t in enumerate(starts)
        ]
        runs.append(_run(f"Fig. 8 {direction}", pibes, _scenario("pibes-fig-8", v, link, flows)))
    return runs


def _ramp(v: Variant, high: float = 4.0, low: float = 2.0, step_s: float = 0.5) -> dict[str, Any]:
    """4 -> 2 -> 4 Mbps: linear down over [a, b], low until c, linear up over [c, d]."""
    a, b, c, d = v.ramp
    points = [(0.0, high)]
    for lo, hi, r0, r1 in ((a, b, high, low), (c, d, low, high)):
        t = float(lo)
        while t < hi:
            points.append((t, r0 + (r1 - r0) * (t - lo) / (hi - lo)))
            t += step_s
        points.append((float(hi), r1))
    steps = [[f"{t:g}s", f"{round(r * 1000)}kbps"] for t, r in points]
    return {"kind": "step", "steps": steps}


def norway_trace(path: Path, duration_s: int) -> dict[str, Any]:
    """The first ``duration_s`` of the Norway HSDPA trace (``path``) as a step schedule: row
    i holds over (time[i-1], time[i]] (the Pensieve reading, rtcc/data/traces/README.md)."""
    rows = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            rows.append((float(parts[0]), float(parts[1])))
        except (ValueError, IndexError):
            raise ValueError(f"{path}:{lineno}: expected 'time_s throughput_Mbps'") from None
    steps = []
    for (t0, _), (_, mbps) in pairwise(rows):
        if t0 >= duration_s:
            break
        steps.append([f"{t0:g}s", f"{round(mbps * 1000)}kbps"])
    if not steps:
        raise ValueError(f"{path}: no samples")
    return {"kind": "step", "steps": steps}


def link_runs(v: Variant, schemes: Sequence[Scheme], norway: Path | None) -> list[Run]:
    """Figs. 10-17 for gcc, salsify and pibes (Fig. 17: pibes with R_min = 1.5 Mbps)."""
    on, off = v.tcp_window
    a, b = v.staggered
    j = v.join_s
    cases: list[tuple[str, Any, list[dict[str, Any]]]] = [
        ("Fig. 10", "3Mbps", []),
        ("Fig. 12", _ramp(v), []),
        ("Fig. 13", "4Mbps", [_tcp("tcp1", on, off)]),
        ("Fig. 14", "4Mbps", [_tcp("tcp1", a), _tcp("tcp2", b)]),
        ("Fig. 16", _ramp(v), [_tcp("tcp1", j)]),
    ]
    if norway is not None:
        trace = norway_trace(norway, v.duration_s)
        cases += [("Fig. 11", trace, []), ("Fig. 15", trace, [_tcp("tcp1", j)])]
    runs = []
    for experiment, capacity, cross in cases:
        for s in schemes:
            flows = [s.flow("video"), *cross]
            runs.append(_run(experiment, s, _scenario("pibes-links", v, _link(capacity), flows)))
    pibes = [s for s in schemes if s.label == "pibes"]
    for s in pibes:
        rmin = Scheme("pibes", {"name": "pibes"}, {**s.flow_extra, "min_rate": "1.5Mbps"})
        flows = [rmin.flow("video"), _tcp("tcp1", j)]
        runs.append(_run("Fig. 17", rmin, _scenario("pibes-fig-17", v, _link(_ramp(v)), flows)))
        # Fig. 18: s_min = s_max/N with N = 2.
        two = Scheme("pibes", {"name": "pibes", "s_min": paper.S_MAX / 2}, s.flow_extra)
        flows = [two.flow("video1"), two.flow("video2", start=f"{j}s")]
        for seed in FIG18_SEEDS:
            scenario = _scenario("pibes-fig-18", v, _link("4Mbps"), flows)
            runs.append(_run("Fig. 18", two, scenario, seed, seed=seed))
    return runs


# --- metrics -------------------------------------------------------------------------


def detection(series: pd.DataFrame, settle_s: float = 2.0) -> dict[str, float]:
    """Competition detection against the simulator's ground truth: seconds from each
    change of the truth until the detector agrees (the first rise and the first fall),
    and the share of bins where they agree from ``settle_s`` after a change until the next
    change (a bin is a detection of ``competition`` >= 0.5)."""
    out = {"detect_s": math.nan, "clear_s": math.nan, "detection_correct": math.nan}
    if series is None or not {"competition", "competition_truth"} <= set(series.columns):
        return out
    s = series.dropna(subset=["competition", "competition_truth"])
    if s.empty:
        return out
    t = s["t_s"].to_numpy(dtype=float)
    truth = s["competition_truth"].to_numpy(dtype=float) >= 0.5
    said = s["competition"].to_numpy(dtype=float) >= 0.5
    changes = [i for i in range(1, len(t)) if truth[i] != truth[i - 1]]
    for i in changes:
        key = "detect_s" if truth[i] else "clear_s"
        if not math.isnan(out[key]):
            continue
        agree = np.flatnonzero(said[i:] == truth[i])
        out[key] = float(t[i + agree[0]] - t[i - 1]) if len(agree) else math.inf
    # Settled bins: at least settle_s after the last change of the truth.
    last_change = np.full(len(t), -math.inf)
    for i in changes:
        last_change[i:] = t[i - 1]
    settled = t - last_change >= settle_s
    if settled.any():
        out["detection_correct"] = float(np.mean(said[settled] == truth[settled]))
    return out


def _estimate_errors(
    series: pd.DataFrame | None, starts: Iterable[float], end: float
) -> dict[str, Any]:
    """Mean |estimate/capacity - 1| and share within 10 %, overall and per stretch between
    TCP flows joining (Fig. 8); the worst stretch."""
    out: dict[str, float] = {}
    if series is None or "capacity_estimate_kbps" not in series:
        return out
    est = series["capacity_estimate_kbps"].astype(float)
    cap = series["capacity_kbps"].astype(float)
    err = (est / cap.where(cap > 0) - 1.0).abs()
    ok = err.notna()
    if not ok.any():
        return out
    out["estimate_error"] = float(err[ok].mean())
    out["estimate_within_10"] = float((err[ok] <= 0.10).mean())
    edges = [0.0, *starts, end]
    t = series["t_s"].to_numpy(dtype=float)
    worst = 0.0
    for a, b in pairwise(edges):
        # The first 2 s settle the EWMA after a join (and after start-up).
        part = err[(t > a + 2.0) & (t <= b) & ok.to_numpy()]
        if len(part):
            worst = max(worst, float(part.mean()))
    out["estimate_error_worst_stretch"] = worst
    return out


def metrics(record: Mapping[str, Any], experiment: str, v: Variant) -> dict[str, Any]:
    """One run's row: the video flow's utilisation (all its received bytes, FEC included,
    over the capacity), rates and delays, the TCP flows' share, and for pibes the estimate's
    error and the competition detection."""
    summary = record["summary"]
    flows = summary["flows"]
    video = [f for f in flows if f.get("kind", "video") == "video"]
    tcp = [f for f in flows if f.get("kind") == "tcp"]
    first = video[0] if video else {}
    cap = summary["link"]["capacity_kbps_mean"]
    row: dict[str, Any] = {
        "utilization": first.get("utilization"),
        "goodput_kbps": first.get("goodput_kbps"),
        "recv_kbps": (first.get("utilization") or 0.0) * cap,
        "frame_delay_ms_mean": first.get("frame_delay_ms_mean"),
        "frame_delay_ms_p95": first.get("frame_delay_ms_p95"),
        # The part of frame delay spent at the sender (encoder and pacer queue).
        "sender_wait_ms_mean": first.get("sender_wait_ms_mean"),
        "sender_wait_ms_p95": first.get("sender_wait_ms_p95"),
        "transport_delay_ms_mean": first.get("transport_delay_ms_mean"),
        "owd_ms_mean": first.get("owd_ms_mean"),
        "loss_rate": first.get("loss_rate"),
        "freeze_ratio": first.get("freeze_ratio"),
        # TCP's share of the forward bottleneck over the whole run (a flow's own
        # utilisation covers only its active time).
        "tcp_utilization": summary["link"].get("utilization_by_kind", {}).get("tcp", math.nan)
        if tcp
        else math.nan,
        "link_utilization": summary["link"]["utilization"],
    }
    series = flow_series(record, 0)
    if series is not None:
        if experiment.startswith("Fig. 8"):
            starts = range(v.tcp_every_s, v.duration_s, v.tcp_every_s)
            row.update(_estimate_errors(series, starts, v.duration_s))
        else:
            row.update(_estimate_errors(series, [], v.duration_s))
        row.update(detection(series))
        if "share" in series:
            row["share_mean"] = float(series["share"].astype(float).mean())
    if experiment == "Fig. 18":
        parts = [flow_series(record, i) for i in range(2)]
        rates = [
            float(_window(p, v.join_s + 2, v.duration_s)["recv_kbps"].fillna(0).mean())
            if p is not None else 0.0
            for p in parts
        ]  # fmt: skip
        row["jain_overlap"] = jain(rates)
        row["flow1_kbps"], row["flow2_kbps"] = rates
    if experiment == "Fig. 17" and series is not None:
        part = _window(series, v.join_s + 2, v.duration_s)
        row["recv_kbps_min_1s"] = float(part["recv_kbps"].rolling(10, min_periods=10).mean().min())
    return row


FIG18_SPREAD = ("jain_overlap", "flow1_kbps", "flow2_kbps", "utilization", "link_utilization")


def fig18_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """Fig. 18 over its seeds: per column of :data:`FIG18_SPREAD` the mean, standard
    deviation, least and greatest (``jain_overlap_mean`` ...), and how many seeds ran."""
    part = table[table["experiment"] == "Fig. 18"]
    row: dict[str, Any] = {"experiment": "Fig. 18", "scheme": "pibes", "seeds": len(part)}
    for c in FIG18_SPREAD:
        x = part[c].astype(float) if c in part else pd.Series(dtype=float)
        row.update({f"{c}_mean": x.mean(), f"{c}_std": x.std(ddof=0), f"{c}_min": x.min(),
                    f"{c}_max": x.max()})  # fmt: skip
    return pd.DataFrame([row])


# --- the run ---------------------------------------------------------------------------


def run(
    out: str | Path,
    jobs: int | None = None,
    *,
    short: bool = False,
    fresh: bool = False,
    progress: bool = False,
    traces: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
) -> Outcome:
    """Run every experiment; write OUT/table.csv, the figures as PNG and OUT/report.html.
    Finished runs are cached under OUT/runs (``fresh`` recomputes them). ``traces`` is where
    the 3G runs' (Figs. 11, 15) Norway trace is (:mod:`rtcc.reproduce.traces`; default the
    bundled set); not finding it raises :class:`~rtcc.reproduce.traces.TracesError`.
    ``executor``/``address`` run them on a Ray cluster and ``dataset`` names the results
    dataset they are appended to (default OUT/dataset), as in :func:`rtcc.sweeprun.execute`.
    """
    from rtcc.reproduce.pibes import figures, page

    started = time.perf_counter()
    v = SHORT if short else FULL
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    skipped = {label: why for label, s in SCHEMES.items() if (why := probe(s)) is not None}
    norway = NORWAY.locate(traces) if v.traces else None

    def pick(labels: Iterable[str]) -> list[Scheme]:
        return [SCHEMES[label] for label in labels if label not in skipped]

    pibes = pick(("pibes",))
    groups = {
        "pibes": (
            table1_runs(v, pick(TABLE_1_SCHEMES))
            + [r for p in pibes for r in sensitivity_runs(v, p) + estimate_runs(v, p)]
            + link_runs(v, pick(COMPARED), norway),
            Analysis(flows="all", series=True, series_s=0.1),
        ),
    }
    return reproduce(
        groups, out, v, skipped, lambda record, experiment: metrics(record, experiment, v),
        figures.render_all, page.render, started, study="pibes",
        traces=str(norway) if norway else None, jobs=jobs, fresh=fresh, progress=progress,
        executor=executor, address=address, dataset=dataset,
        tables={"fig18_seeds.csv": fig18_seeds},
    )  # fmt: skip


# What `rtcc reproduce pibes` prints per run: (column, heading, scale, decimals).
_SUMMARY_COLUMNS = (
    ("utilization", "util %", 100, 1), ("tcp_utilization", "tcp %", 100, 1),
    ("frame_delay_ms_mean", "delay ms", 1, 0), ("frame_delay_ms_p95", "p95 ms", 1, 0),
    ("estimate_error", "est err %", 100, 1), ("detection_correct", "detect %", 100, 0),
)  # fmt: skip


def _label(r: pd.Series) -> str:
    """A run's experiment, with Table 1's TCP flows and queue."""
    label = str(r["experiment"])
    if label == "Fig. 18" and not pd.isna(r.get("seed")):
        label += f" seed {int(r['seed'])}"
    if label == "Table 1":
        label += f" {int(r['tcp_flows'])} TCP q{int(r['queue_pkt'])}"
    return label


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc reproduce pibes` prints: per run, the headline metrics."""
    keys = {**SUMMARY_KEYS, "experiment": _label}
    return summary_table(table, "utilization", _SUMMARY_COLUMNS, keys)
