"""The Cross reproduction's runs: the experiments of §IV and §VI and their metrics.

Reproduces Zhang & Yang, "Cross: A Delay Based Congestion Control Method for RTP Media"
(arXiv 2409.10042) in simulation:

- ``VI-A case N``: Table III's eight links, three flows of one algorithm (0-300 s,
  35-200 s, 80-300 s), for cross, gcc, copa, vivace, rbbr, nada, nadar (Figs. 5-12).
- ``VI-B loss P%``: Case 6 with random loss P from t = 10 s, one flow (Figs. 13-14).
- ``VI-C``: one cross flow, 10 -> 4 -> 10 Mbps at 40/80 s, fast bandwidth adaptation on
  (with acceleration, Fig. 15) and off (without, Fig. 16).
- ``VI-D``: 15 Mbps, flow 1 at 40 ms RTT from 0 s, flow 2 at 80 ms RTT from 40 s, 150 s,
  for rbbr, nadar, cross (Fig. 17).
- ``Table II case N``: WebRTC-style bbr vs rbbr on Table I's links, loss rate.
- ``VI-E case N``: a stand-in for the online evaluation, cross vs bbr on the six
  bandwidth scripts, freeze-duration ratio by WebRTC's rule (Figs. 18-19).

The paper's simulated encoder "output[s] data based on target rate" (§III), so every
simulated-link run uses rtcc's ``ideal`` encoder; the online stand-in uses the default
lagging encoder, as the service ran a real H.264 encoder. GCC runs with the classic
2 %/10 % loss rule (``loss = "classic"``), as WebRTC had it when the paper was written.
Every flow's ``max_rate`` is 20 Mbps, above the largest link (the paper targets 10-35
Mbps services); the online stand-in's is 6 Mbps, the service's maximum.
Where the paper does not give a setting (durations of VI-B/VI-C, queues of VI-C/VI-D/VI-E,
the flows of Table II), the choice is stated beside the constant below.

``schemes`` adds controllers (a Python one as ``py:module:Class``) to every experiment that
compares schemes (VI-A, VI-B, VI-D, Table II, VI-E; VI-C is cross against itself), labelled
by their name; the paper has no values for them.

The multi-flow experiments (VI-A, VI-D, Table II) run over seeds 1 to ``MULTI_SEEDS``: the
flows' capture phases and clocks come from the seed, and how flows of one scheme share a
link depends on them. The table has a row per run (``seed``); ``fairness.csv`` and the page
give the mean of each Jain index over seeds with its standard deviation, min and max; the
figures show seed 1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.reproduce.cross import paper
from rtcc.reproduce.runs import Outcome, Scheme, jain, probe, reproduce, summary_table
from rtcc.reproduce.runs import series as flow_series
from rtcc.sweepspec import Analysis, Run

__all__ = [
    "FULL", "SCHEMES", "SHORT", "Outcome", "Scheme", "Variant", "aligned_jain", "jain",
    "metrics", "probe", "run", "spike_seconds", "summary_text",
]  # fmt: skip

SEED = 1
MULTI_SEEDS = 5  # seeds of the multi-flow experiments
MAX_RATE = "20Mbps"
ONLINE_MAX_RATE = "6Mbps"  # §VI-E: "The maximum bitrate of the service is approximate 6Mbps"
# §VI-E lifts the limit for 30 s; 100 Mbps is far above the 6 Mbps service.
LIFTED = "100Mbps"
# Queues the paper does not give: Case 6's rule (capacity x 200 ms) for VI-C and VI-E,
# Table I's 15 Mbps rule (x 100 ms) for VI-D.
ADAPT_QUEUE_MS = 200
RTT_QUEUE_MS = 100
ONLINE_QUEUE_MS = 200
ONLINE_OWD_MS = 25  # not given (a LAN router in front of a cloud service); rtcc's default
SPIKE_MS = 100.0  # §VI-C's "large latency spike": one-way delay above its minimum + 100 ms


SCHEMES = {
    s.label: s
    for s in (
        Scheme("cross", "cross"),
        Scheme("gcc", {"name": "gcc", "loss": "classic"}),
        Scheme("copa", "copa"),
        Scheme("vivace", "vivace"),
        Scheme("rbbr", "rbbr"),
        Scheme("nada", "nada"),
        Scheme("nadar", "nadar"),
        # §IV: WebRTC's BBR lets its window block the pacer (no pushback, its default).
        Scheme("bbr", "bbr"),
        # §VI-C: Fig. 16 has the subroutine and rate acceleration off, fast reduce on.
        Scheme("cross (no fast adaptation)",
               {"name": "cross", "fast_adaptation": False, "acceleration": False}),
    )
}  # fmt: skip
VI_A_SCHEMES = ("cross", "gcc", "copa", "vivace", "rbbr", "nada", "nadar")
RTT_SCHEMES = ("rbbr", "nadar", "cross")
ADAPT_SCHEMES = ("cross", "cross (no fast adaptation)")


@dataclass(frozen=True)
class Variant:
    name: str
    cases: tuple[int, ...]
    fairness_s: int
    schedule: tuple[tuple[int, int], ...]  # (start, stop) s of VI-A's three flows
    loss_schemes: tuple[str, ...]
    losses: tuple[int, ...]  # percent
    loss_s: int
    adapt: tuple[int, int, int]  # drop, recovery, end (s)
    rtt: tuple[int, int, int]  # second flow's start, end, Jain window start (s)
    table1_cases: tuple[int, ...]
    online_cases: tuple[int, ...]
    online_period_s: int  # one trough (and one lifted stretch)


FULL = Variant(
    "full", cases=tuple(paper.CASES), fairness_s=300, schedule=((0, 300), (35, 200), (80, 300)),
    loss_schemes=VI_A_SCHEMES, losses=(0, 2, 4, 6, 8, 10),
    loss_s=120,  # not given: 10 s clean, then 110 s of loss
    adapt=(40, 80, 120), rtt=(40, 150, 60), table1_cases=(1, 2, 3),
    online_cases=(1, 2, 3, 4, 5, 6), online_period_s=30,
)  # fmt: skip
# Shortened for tests: the claims' cases, time scaled so each event still happens.
SHORT = Variant(
    "short", cases=(4, 6), fairness_s=100, schedule=((0, 100), (12, 67), (27, 100)),
    loss_schemes=("cross", "gcc"), losses=(8, 10), loss_s=60,
    adapt=(30, 60, 75), rtt=(20, 90, 40), table1_cases=(2,),
    online_cases=(1, 4), online_period_s=20,
)  # fmt: skip


def _queue(mbps: float, ms: float) -> str:
    """Table III's "C x T" queue length in bytes."""
    return f"{round(mbps * 1e6 / 8 * ms / 1e3)}B"


def _scenario(
    name: str, duration_s: int, link: Mapping[str, Any], flows: list[dict[str, Any]],
    seed: int = SEED,
) -> dict[str, Any]:  # fmt: skip
    # §VI-A: "Every 25 milliseconds, the WebRTC sender reads target transfer rate".
    return {
        "name": name, "duration": f"{duration_s}s", "seed": seed, "link": dict(link),
        "record": {"bin": "25ms"}, "flow": flows,
    }  # fmt: skip


def _run(experiment: str, scheme: Scheme, scenario: dict[str, Any]) -> Run:
    seed = int(scenario["seed"])
    labels = {"experiment": experiment, "scheme": scheme.label, "seed": seed}
    return Run(labels, scenario, seed, "<cross>")


def _video(scheme: Scheme, name: str, **extra: Any) -> dict[str, Any]:
    return scheme.flow(name, encoder="ideal", max_rate=MAX_RATE, **extra)


def _three_flows(
    v: Variant, schemes: Iterable[Scheme], cases: Mapping[int, tuple[int, int, int]], prefix: str
) -> list[Run]:
    """VI-A's three-flow schedule on each (capacity, one-way delay, queue ms) link."""
    runs = []
    for case, (mbps, owd, queue_ms) in cases.items():
        link = {"capacity": f"{mbps}Mbps", "delay": f"{owd}ms", "queue": _queue(mbps, queue_ms)}
        for s in schemes:
            flows = [
                _video(s, f"flow{k + 1}", start=f"{a}s", stop=f"{b}s")
                for k, (a, b) in enumerate(v.schedule)
            ]
            for seed in range(1, MULTI_SEEDS + 1):
                scenario = _scenario("cross", v.fairness_s, link, flows, seed)
                runs.append(_run(f"{prefix} {case}", s, scenario))
    return runs


def fairness_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    return _three_flows(v, list(schemes), {c: paper.CASES[c] for c in v.cases}, "VI-A case")


def loss_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    mbps, owd, queue_ms = paper.CASES[6]
    runs = []
    for percent in v.losses:
        # §VI-B: loss "at timepoint 10s", after the algorithms found the capacity.
        loss: Any = {"kind": "bernoulli", "p": percent / 100, "start": "10s"} if percent else 0.0
        link = {
            "capacity": f"{mbps}Mbps", "delay": f"{owd}ms", "queue": _queue(mbps, queue_ms),
            "loss": loss,
        }  # fmt: skip
        for s in schemes:
            scenario = _scenario("cross-vi-b", v.loss_s, link, [_video(s, "flow1")])
            runs.append(_run(f"VI-B loss {percent}%", s, scenario))
    return runs


def adapt_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    drop, back, end = v.adapt
    steps = [["0s", "10Mbps"], [f"{drop}s", "4Mbps"], [f"{back}s", "10Mbps"]]
    link = {
        "capacity": {"kind": "step", "steps": steps}, "delay": "50ms",
        "queue": _queue(10, ADAPT_QUEUE_MS),
    }  # fmt: skip
    return [
        _run("VI-C", s, _scenario("cross-vi-c", end, link, [_video(s, "flow1")])) for s in schemes
    ]


def rtt_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    second, end, _ = v.rtt
    # 40 ms vs 80 ms round-trip propagation: 20 ms each way on the link, 20 ms more
    # each way on the second flow's access.
    link = {"capacity": "15Mbps", "delay": "20ms", "queue": _queue(15, RTT_QUEUE_MS)}
    runs = []
    for s in schemes:
        flows = [
            _video(s, "rtt40"),
            _video(s, "rtt80", start=f"{second}s", access_delay="20ms"),
        ]
        for seed in range(1, MULTI_SEEDS + 1):
            runs.append(_run("VI-D", s, _scenario("cross-vi-d", end, link, flows, seed)))
    return runs


def table1_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    # Table I gives no flows: VI-A's three-flow schedule, as Fig. 3 shows several flows.
    cases = {c: paper.TABLE_I[c] for c in v.table1_cases}
    return _three_flows(v, list(schemes), cases, "Table II case")


def online_capacity(case: int, period_s: int) -> tuple[Any, int]:
    """§VI-E's scripts: cases 1-3 a square wave between 3/4/6 Mbps troughs and a lifted
    limit (three troughs, Fig. 18), cases 4-6 constant 3/4/6 Mbps; and the duration."""
    base = {1: 3, 2: 4, 3: 6, 4: 3, 5: 4, 6: 6}[case]
    duration = 5 * period_s  # trough, lifted, trough, lifted, trough
    if case > 3:
        return f"{base}Mbps", duration
    steps = [[f"{k * period_s}s", f"{base}Mbps" if k % 2 == 0 else LIFTED] for k in range(5)]
    return {"kind": "step", "steps": steps}, duration


def online_runs(v: Variant, schemes: Iterable[Scheme]) -> list[Run]:
    runs = []
    for case in v.online_cases:
        capacity, duration = online_capacity(case, v.online_period_s)
        base = {1: 3, 2: 4, 3: 6, 4: 3, 5: 4, 6: 6}[case]
        link = {
            "capacity": capacity, "delay": f"{ONLINE_OWD_MS}ms",
            "queue": _queue(base, ONLINE_QUEUE_MS),
        }  # fmt: skip
        for s in schemes:
            flow = s.flow("call", max_rate=ONLINE_MAX_RATE)
            runs.append(
                _run(f"VI-E case {case}", s, _scenario("cross-vi-e", duration, link, [flow]))
            )
    return runs


# --- metrics -------------------------------------------------------------------------


def spike_seconds(series: pd.DataFrame, start_s: float, end_s: float) -> float:
    """Seconds in [start_s, end_s) whose one-way delay is above the run's minimum + 100 ms
    (§VI-C's "large latency spike"), from a per-bin series (``t_s`` = bin end)."""
    owd = series["owd_ms"].astype(float)
    if owd.notna().sum() == 0:
        return math.nan
    t = series["t_s"].to_numpy(dtype=float)
    width = float(np.median(np.diff(t))) if len(t) > 1 else float(t[0])
    inside = (t > start_s) & (t <= end_s)
    above = owd.to_numpy() > np.nanmin(owd.to_numpy()) + SPIKE_MS
    return float(np.count_nonzero(inside & above) * width)


def aligned_jain(
    series: Sequence[pd.DataFrame | None], schedule: Sequence[tuple[float, float]]
) -> float:
    """Jain's index of the flows' mean received rates over the time all of them are active
    (the latest start to the earliest stop): Figs. 8-12's fairness claims compare flows
    side by side, which the summary's ``jain_index`` (each flow over its own lifetime, so a
    flow alone at first counts its solo rate) does not. NaN without that overlap."""
    start = max(a for a, _ in schedule)
    end = min(b for _, b in schedule)
    if end <= start or len(series) != len(schedule) or any(s is None for s in series):
        return math.nan
    return jain([_window_mean(s, "recv_kbps", start, end) for s in series])


def _window_mean(series: pd.DataFrame | None, column: str, start_s: float, end_s: float) -> float:
    if series is None or column not in series:
        return 0.0
    t = series["t_s"].to_numpy(dtype=float)
    part = series.loc[(t > start_s) & (t <= end_s), column]
    return float(part.fillna(0.0).mean()) if len(part) else 0.0


def metrics(record: Mapping[str, Any], experiment: str, v: Variant) -> dict[str, Any]:
    """One run's row: the link's eq. 6 utilisation, flows' mean one-way delay, frame delay
    and sender wait (each the mean of the flows' means or 95th percentiles), aggregate
    loss rate, summed goodput, WebRTC freeze ratio; per experiment, §VI-C's spike and
    §VI-D's window fairness."""
    summary = record["summary"]
    flows = summary["flows"]
    link = summary["link"]
    sent = sum(f["packets_sent"] for f in flows)
    owd = [f["owd_ms_mean"] for f in flows if f.get("owd_ms_mean") is not None]
    freeze = [f["freeze_ratio_webrtc"] for f in flows if f.get("freeze_ratio_webrtc") is not None]

    def flow_mean(key: str) -> float:
        # Mean over the flows that have the field (a summary from before it was added: NaN).
        values = [f[key] for f in flows if f.get(key) is not None]
        return float(np.mean(values)) if values else math.nan

    row: dict[str, Any] = {
        "utilization_received": link["utilization_received"],
        "utilization": link["utilization"],
        "owd_ms_mean": float(np.mean(owd)) if owd else math.nan,
        # End to end beside the network: a frame's wait at the sender (encoder and pacer
        # queue until its last packet left) is in frame delay but not in one-way delay.
        "frame_delay_ms_mean": flow_mean("frame_delay_ms_mean"),
        "frame_delay_ms_p95": flow_mean("frame_delay_ms_p95"),
        "sender_wait_ms_mean": flow_mean("sender_wait_ms_mean"),
        "sender_wait_ms_p95": flow_mean("sender_wait_ms_p95"),
        "queue_ms_mean": link.get("queue_ms_mean"),
        "loss_rate": sum(f["loss_rate"] * f["packets_sent"] for f in flows) / sent
        if sent
        else math.nan,
        "goodput_kbps": sum(f["goodput_kbps"] for f in flows),
        "target_kbps_mean": float(
            np.nanmean([f.get("target_kbps_mean") or math.nan for f in flows])
        ),
        "freeze_ratio_webrtc": float(np.mean(freeze)) if freeze else math.nan,
        "jain_index": summary.get("jain_index"),
        "jain_goodput_active": summary.get("jain_goodput_active", summary.get("jain_index")),
    }
    if experiment.startswith(("VI-A case", "Table II case")):
        row["jain_aligned"] = aligned_jain(
            [flow_series(record, i) for i in range(len(v.schedule))], v.schedule
        )
    if experiment == "VI-C":
        drop, back, _ = v.adapt
        series = flow_series(record, 0)
        row["spike_s"] = spike_seconds(series, drop, back) if series is not None else math.nan
        row["recovery_s"] = _recovery(series, drop, back) if series is not None else math.nan
    if experiment == "VI-D":
        _, end, window = v.rtt
        parts = [flow_series(record, i) for i in range(2)]
        rates = [_window_mean(s, "recv_kbps", window, end) for s in parts]
        row["jain_window"] = jain(rates)
        row["rtt40_kbps"], row["rtt80_kbps"] = rates
    return row


def _recovery(series: pd.DataFrame, drop_s: float, back_s: float) -> float:
    """Seconds after the capacity came back until the target rate is within 90 % of its
    mean over the 10 s before the drop; NaN if it never is."""
    t = series["t_s"].to_numpy(dtype=float)
    target = series["target_kbps"].to_numpy(dtype=float)
    before = target[(t > drop_s - 10) & (t <= drop_s)]
    if not len(before):
        return math.nan
    goal = 0.9 * float(np.nanmean(before))
    after = np.flatnonzero((t > back_s) & (target >= goal))
    return float(t[after[0]] - back_s) if len(after) else math.nan


# --- the run ---------------------------------------------------------------------------


def run(
    out: str | Path,
    jobs: int | None = None,
    *,
    short: bool = False,
    fresh: bool = False,
    progress: bool = False,
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
    schemes: Sequence[str] = (),
) -> Outcome:
    """Run every experiment; write OUT/table.csv, the figures as PNG and OUT/report.html.
    Finished runs are cached under OUT/runs (``fresh`` recomputes them). ``schemes`` names
    more controllers to compare (see the module's docstring); one that cannot be built is
    skipped and named, as a built-in scheme is.
    ``executor``/``address`` run them on a Ray cluster and ``dataset`` names the results
    dataset they are appended to (default OUT/dataset), as in :func:`rtcc.sweeprun.execute`.
    """
    from rtcc.reproduce.cross import figures, page

    started = time.perf_counter()
    v = SHORT if short else FULL
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # A name already compared (gcc, say) is not run twice.
    extra = {n: Scheme(n, n) for n in dict.fromkeys(schemes) if n not in SCHEMES}
    known = {**SCHEMES, **extra}
    skipped = {label: why for label, s in known.items() if (why := probe(s)) is not None}

    def pick(labels: Iterable[str], compared: bool = True) -> list[Scheme]:
        every = (*labels, *extra) if compared else tuple(labels)
        return [known[label] for label in every if label not in skipped]

    groups = {
        # flows' 1 s series: rates for the figures, §VI-D's window fairness
        "rates": (
            fairness_runs(v, pick(VI_A_SCHEMES))
            + rtt_runs(v, pick(RTT_SCHEMES))
            + table1_runs(v, pick(("bbr", "rbbr"))),
            Analysis(flows="all", series=True, series_s=1.0),
        ),
        # 100 ms series: the length of §VI-C's delay spike
        "adapt": (
            adapt_runs(v, pick(ADAPT_SCHEMES, compared=False)),
            Analysis(series=True, series_s=0.1),
        ),
        "summary": (
            loss_runs(v, pick(v.loss_schemes)) + online_runs(v, pick(("cross", "bbr"))),
            Analysis(),
        ),
    }
    return reproduce(
        groups, out, v, skipped, lambda record, experiment: metrics(record, experiment, v),
        figures.render_all, page.render, started, study="cross",
        tables={"fairness.csv": fairness}, jobs=jobs, fresh=fresh, progress=progress, executor=executor, address=address,
        dataset=dataset,
    )  # fmt: skip


FAIRNESS = ("jain_aligned", "jain_window", "jain_goodput_active")


def over_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """One row per experiment and scheme: each number's mean over the seeds that ran
    (``seeds`` counts them), and the ``FAIRNESS`` columns' ``_std``, ``_min`` and ``_max``."""
    if table.empty or "seed" not in table:
        return table
    ok = table[table["error"].isna()] if "error" in table else table
    keys = ["experiment", "scheme"]
    numbers = [c for c in ok.columns if c not in (*keys, "seed", "error")
               and pd.api.types.is_numeric_dtype(ok[c])]  # fmt: skip
    g = ok.groupby(keys, sort=False)
    out = g[numbers].mean().join(g.size().rename("seeds"))
    spread = [c for c in FAIRNESS if c in ok]
    for stat in ("std", "min", "max"):
        out = out.join(g[spread].agg(stat).add_suffix(f"_{stat}"))
    # A case whose every run failed keeps its row, with the error.
    failed = table[~table.set_index(keys).index.isin(out.index)].drop_duplicates(keys)
    out = out.reset_index()
    return pd.concat([out, failed.drop(columns=["seed"])], ignore_index=True) if len(failed) else out


def fairness(table: pd.DataFrame) -> pd.DataFrame:
    """``fairness.csv``: the multi-flow experiments' Jain indices over seeds."""
    s = over_seeds(table)
    if s.empty or "seeds" not in s:
        return s
    cols = [f"{c}{x}" for c in FAIRNESS if c in s for x in ("", "_std", "_min", "_max")]
    return s[s["seeds"] > 1][["experiment", "scheme", "seeds", *cols]]


def _pick(table: pd.DataFrame, experiment: str, scheme: str, column: str) -> float:
    part = table[(table["experiment"] == experiment) & (table["scheme"] == scheme)]
    if part.empty or column not in part or pd.isna(part[column].iloc[0]):
        return math.nan
    return float(part[column].iloc[0])


# What `rtcc reproduce cross` prints per run: (column, heading, scale, decimals).
_SUMMARY_COLUMNS = (
    ("utilization_received", "util %", 100, 1), ("owd_ms_mean", "owd ms", 1, 0),
    ("frame_delay_ms_mean", "frame ms", 1, 0), ("sender_wait_ms_mean", "wait ms", 1, 0),
    ("loss_rate", "loss %", 100, 2), ("freeze_ratio_webrtc", "freeze %", 100, 2),
    ("spike_s", "spike s", 1, 1), ("jain_window", "jain", 1, 3),
    ("jain_window_min", "min", 1, 3), ("jain_aligned", "jain all", 1, 3),
    ("jain_aligned_min", "min", 1, 3),
)  # fmt: skip


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc reproduce cross` prints: per experiment and scheme, the headline metrics
    (means over seeds; the Jain indices' min over seeds beside them)."""
    return summary_table(over_seeds(table), "utilization_received", _SUMMARY_COLUMNS)
