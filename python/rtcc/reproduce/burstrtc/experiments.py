"""The BurstRTC reproduction's runs: the experiments of §III and §IV and their metrics.

Reproduces Jia et al., "Tackling Bit-Rate Variation of RTC through Frame-Bursting
Congestion Control" in simulation. Unless stated, a run is
60 s on 4 Mbps with 20 ms one way and an unlimited drop-tail queue (mahimahi's default),
one video flow on the ``content`` encoder model:

- ``Fig. 12`` (static) / ``Fig. 13`` (dynamic content): gcc, bbr, salsify, sqp, pudica
  and burstrtc alone; also Figs. 14 (p95 frame delay), 15-16 (freezes) and Fig. 3's send
  buffer over- and undershoot. ``Fig. 13 vp8``: the dynamic comparison with real VP8.
- ``Fig. 17``: dynamic, 4 -> 2 Mbps at 38 s, back to 4 Mbps 10 s later.
- ``Fig. 18``: a long cellular trace + 20 ms (needs ``--traces``).
- ``Fig. 19 loss P`` / ``Fig. 20 jitter J``: dynamic with random loss or delay jitter.
- ``Table I``: two flows of one scheme, fixed-size frames, the second from 10 s.
- ``Fig. 8``: burstrtc against 1 Mbps UDP on a 2 <-> 4 Mbps square wave (10 s period),
  20 ms one way (§III-B2's added delay); the sampler's capacity and background errors.
- ``Fig. 11 cubic`` / ``Fig. 11 udp``: burstrtc with L = 30 against a Cubic flow or
  1 Mbps UDP; the delay model's error 30 frames ahead against the naive predictor's.

Every experiment runs over ``seeds`` seeds (fewer for real VP8, the slow one): table.csv
has one row per case with the mean over seeds in each metric's column and its range in
``<metric>_min`` / ``<metric>_max`` (``seeds`` says how many ran); table_runs.csv has every
run. The paper's figures draw 25 % ellipses over repeated runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.reproduce.burstrtc import paper
from rtcc.reproduce.runs import (
    Outcome, Scheme, jain, probe, progress_label, rows, summary_table, write_outputs,
)
from rtcc.runset import write_runs
from rtcc.sweeprun import execute
from rtcc.reproduce.runs import series as flow_series
from rtcc.reproduce.runs import window as _window
from rtcc.reproduce.traces import Need
from rtcc.sweepspec import Analysis, Run

__all__ = [
    "FULL", "SCHEMES", "SHORT", "TRACE", "Outcome", "Scheme", "Variant", "jain", "metrics",
    "run", "seeded", "spread", "summary_text",
]  # fmt: skip

SEED = 1
BIN = "100ms"
QUEUE = "unlimited"  # mahimahi's default drop-tail queue (paper.NOTES)
# Fig. 18's stand-in for the Lumos 4G walking trace (paper.NOTES).
TRACE = Need("mahimahi", "TMobile-LTE-driving.down", "burstrtc's Fig. 18")
UDP_BACKGROUND = "1Mbps"  # Fig. 8: "UDP background traffic that constantly sends at 1 Mbps"
TC_QUEUE = "1000pkt"  # Fig. 11 (tc): netem's default limit
SALSIFY_FPS_FIG_17 = 12  # §IV-B4: "we set the frame rate of Salsify to 12"
TWO_FLOW_JOIN_S = 10  # Table I: the second flow's start (the paper's Fig. 21 is not timed)
FPS = 30


def encoder(profile: str) -> dict[str, Any]:
    """The content model with a calibrated profile ("static" or "dynamic")."""
    return {"kind": "content", "profile": profile}


SCHEMES = {
    s.label: s
    for s in (
        # WebRTC's goog_cc with NACK; not capped (the paper streams 1080p).
        Scheme("gcc", "gcc", {"nack": True}),
        Scheme("bbr", "bbr", {"nack": True}),
        # Salsify recovers from loss by coding against the last state the receiver has;
        # rtcc's pipeline has no such codec, and without NACK every lost packet of a
        # random-loss run would freeze the video until a key frame (paper.NOTES).
        Scheme("salsify", "salsify", {"nack": True}),
        Scheme("sqp", "sqp", {"nack": True}),
        Scheme("pudica", "pudica", {"nack": True}),
        Scheme("burstrtc", "burstrtc", {"nack": True}),
    )
}
COMPARED = tuple(SCHEMES)
FAIR = ("salsify", "bbr", "burstrtc", "gcc", "pudica", "sqp")  # Table I's order


@dataclass(frozen=True)
class Variant:
    name: str
    duration_s: int
    drop: tuple[int, int]  # Fig. 17: capacity 2 Mbps from, back to 4 Mbps at (s)
    losses: tuple[float, ...]
    jitters_ms: tuple[int, ...]
    join_s: int  # Table I: the second flow's start
    phases: int  # Table I: runs with the second flow's frames k/phases of a frame later
    square_period_s: int
    trace_s: int | None  # Fig. 18's length (None: the whole trace); 0 skips it
    vp8: bool  # Fig. 13 with real VP8
    vp8_s: int
    seeds: int  # runs per case, seeds 1..seeds
    vp8_seeds: int


FULL = Variant(
    "full", duration_s=60, drop=(38, 48), losses=(0.02, 0.04, 0.06, 0.08, 0.10),
    jitters_ms=(2, 4, 6, 8, 10), join_s=TWO_FLOW_JOIN_S, phases=5, square_period_s=10,
    trace_s=None,
    vp8=True, vp8_s=60, seeds=5, vp8_seeds=2,
)  # fmt: skip
# Shortened for tests: every run at full length (each takes well under a second), one
# loss and one jitter level, three phases for Table I, no trace and no real codec, two
# seeds (enough to show a range).
SHORT = Variant(
    "short", duration_s=60, drop=(38, 48), losses=(0.05,), jitters_ms=(5,),
    join_s=TWO_FLOW_JOIN_S, phases=3, square_period_s=10, trace_s=0, vp8=False, vp8_s=0,
    seeds=2, vp8_seeds=0,
)  # fmt: skip


def _scenario(
    name: str, duration_s: float, link: Mapping[str, Any], flows: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "name": name, "duration": f"{duration_s:g}s", "seed": SEED, "link": dict(link),
        "record": {"bin": BIN, "packets": False}, "flow": flows,
    }  # fmt: skip


def _link(capacity: Any, delay_ms: int = paper.OWD_MS, **extra: Any) -> dict[str, Any]:
    return {"capacity": capacity, "delay": f"{delay_ms}ms", "queue": QUEUE} | extra


def _run(experiment: str, scheme: Scheme, scenario: dict[str, Any], **labels: Any) -> Run:
    return Run({"experiment": experiment, "scheme": scheme.label, **labels}, scenario, SEED,
               "<burstrtc>")  # fmt: skip


def content_runs(v: Variant, schemes: Sequence[Scheme]) -> list[Run]:
    """Figs. 12-16 (and Fig. 3's buffer states): static and dynamic content alone."""
    runs = []
    for experiment, profile in (("Fig. 12", "static"), ("Fig. 13", "dynamic")):
        for s in schemes:
            flows = [s.flow("video", encoder(profile))]
            scenario = _scenario(f"burstrtc-{profile}", v.duration_s, _link("4Mbps"), flows)
            runs.append(_run(experiment, s, scenario, content=profile))
    return runs


def vp8_runs(v: Variant, schemes: Sequence[Scheme]) -> list[Run]:
    """Fig. 13 with real VP8 on rtcc's generated game content (720p30)."""
    runs = []
    for s in schemes:
        flows = [s.flow("video", "vp8", content="game")]
        scenario = _scenario("burstrtc-vp8", v.vp8_s, _link("4Mbps"), flows)
        runs.append(_run("Fig. 13 vp8", s, scenario, content="game"))
    return runs


def stress_runs(v: Variant, schemes: Sequence[Scheme], trace: Path | None) -> list[Run]:
    """Figs. 17-20 on dynamic content."""
    dyn = encoder("dynamic")
    a, b = v.drop
    drop = {"kind": "step", "steps": [["0s", "4Mbps"], [f"{a}s", "2Mbps"], [f"{b}s", "4Mbps"]]}
    runs = []
    for s in schemes:
        extra = {"fps": SALSIFY_FPS_FIG_17} if s.label == "salsify" else {}
        flows = [s.flow("video", dyn, **extra)]
        runs.append(_run("Fig. 17", s, _scenario("burstrtc-fig-17", v.duration_s, _link(drop),
                                                 flows)))  # fmt: skip
        for p in v.losses:
            link = _link("4Mbps", loss=p)
            runs.append(
                _run(
                    f"Fig. 19 loss {p:g}",
                    s,
                    _scenario("burstrtc-fig-19", v.duration_s, link, [s.flow("video", dyn)]),
                    loss=p,
                )
            )
        for j in v.jitters_ms:
            link = _link("4Mbps", jitter=f"{j}ms")
            runs.append(
                _run(
                    f"Fig. 20 jitter {j}",
                    s,
                    _scenario("burstrtc-fig-20", v.duration_s, link, [s.flow("video", dyn)]),
                    jitter_ms=j,
                )
            )
        if trace is not None and v.trace_s != 0:
            path = trace.resolve()
            length = v.trace_s or trace_length_s(path)
            cap = {"kind": "trace", "file": str(path)}
            runs.append(_run("Fig. 18", s, _scenario("burstrtc-fig-18", length, _link(cap),
                                                     [s.flow("video", dyn)])))  # fmt: skip
    return runs


def trace_length_s(path: Path) -> int:
    """Whole seconds covered by a Mahimahi trace (its last timestamp, ms)."""
    last = 0
    with path.open() as f:
        for line in f:
            line = line.strip()
            if line:
                last = int(line)
    if last < 1000:
        raise ValueError(f"{path}: shorter than a second")
    return last // 1000


def fairness_runs(v: Variant, schemes: Sequence[Scheme]) -> list[Run]:
    """Table I: two flows of one scheme, fixed-size frames (the ideal encoder), the second
    from ``join_s`` plus k/``phases`` of a frame interval for k = 0..phases-1. Two cameras
    are not phase-locked, and frame-train schemes share differently when their frames
    overlap at the bottleneck than when they interleave, so each scheme runs at several
    phases."""
    runs = []
    for s in schemes:
        for k in range(v.phases):
            start = v.join_s + k / v.phases / FPS
            flows = [s.flow("video1", "ideal"), s.flow("video2", "ideal", start=f"{start:.6f}s")]
            scenario = _scenario("burstrtc-table-i", v.duration_s, _link("4Mbps"), flows)
            runs.append(_run("Table I", s, scenario, phase=k))
    return runs


def model_runs(v: Variant, burstrtc: Scheme) -> list[Run]:
    """Fig. 8 (sampler) and Fig. 11 (delay model, L = 30)."""
    square = {"kind": "square", "high": "4Mbps", "low": "2Mbps",
              "period": f"{v.square_period_s}s", "duty": 0.5}  # fmt: skip
    udp = {"name": "udp", "kind": "udp", "rate": UDP_BACKGROUND}
    dyn = encoder("dynamic")
    runs = [
        _run("Fig. 8", burstrtc, _scenario(
            "burstrtc-fig-8", v.duration_s, _link(square, 20),
            [burstrtc.flow("video", dyn), udp])),
    ]  # fmt: skip
    l30 = Scheme(burstrtc.label, {"name": "burstrtc", "l": 30}, burstrtc.flow_extra)
    # §III-D3 shaped the link with tc: netem's default limit of 1000 packets, which also
    # keeps Cubic from filling an unlimited queue up to its receive window.
    link = _link("4Mbps", queue=TC_QUEUE)
    for bg, flow in (("cubic", {"name": "tcp", "kind": "tcp", "cc": "cubic"}), ("udp", udp)):
        scenario = _scenario("burstrtc-fig-11", v.duration_s, link, [l30.flow("video", dyn), flow])
        runs.append(_run(f"Fig. 11 {bg}", l30, scenario))
    return runs


# --- metrics -------------------------------------------------------------------------


def _col(series: pd.DataFrame | None, name: str) -> pd.Series | None:
    if series is None or name not in series:
        return None
    return series[name].astype(float)


def sampler_errors(series: pd.DataFrame | None, background_kbps: float) -> dict[str, float]:
    """Fig. 8: mean |Ĉ - C| and |B̂ - B| in Mbps over the bins with both estimates, from 2 s
    (the first 10-frame averages)."""
    est = _col(series, "capacity_estimate_kbps")
    bg = _col(series, "background_estimate_kbps")
    if series is None or est is None or bg is None:
        return {}
    t = series["t_s"].to_numpy(dtype=float)
    ok = (t > 2.0) & est.notna().to_numpy() & bg.notna().to_numpy()
    cap = series["capacity_kbps"].astype(float).to_numpy()
    if not ok.any():
        return {}
    return {
        "capacity_error_mbps": float(np.mean(np.abs(est.to_numpy()[ok] - cap[ok]))) / 1e3,
        "background_error_mbps": float(np.mean(np.abs(bg.to_numpy()[ok] - background_kbps))) / 1e3,
    }


def prediction_errors(series: pd.DataFrame | None) -> dict[str, float]:
    """Fig. 11: the controller's mean |predicted - measured| delay D of each interval's last
    frame, predicted 30 frames ahead, and the naive predictor's (the newest measured D), from
    its cumulative sums at the end of the run."""
    cols = [_col(series, c) for c in ("model_error_sum_ms", "naive_error_sum_ms",
                                      "predictions_resolved")]  # fmt: skip
    if any(c is None or c.dropna().empty for c in cols):
        return {}
    model, naive, n = (float(c.dropna().iloc[-1]) for c in cols)  # type: ignore[union-attr]
    if n <= 0:
        return {}
    return {"model_error_ms": model / n, "naive_error_ms": naive / n, "predictions": n}


def responsiveness(series: pd.DataFrame | None, drop: tuple[int, int]) -> dict[str, float]:
    """Fig. 17: seconds from the drop until the target is at most 2 Mbps, from the rise until
    it is back to 90 % of 4 Mbps, and the worst 1 s mean one-way delay while the link is low."""
    target = _col(series, "target_kbps")
    if series is None or target is None:
        return {}
    t = series["t_s"].to_numpy(dtype=float)
    a, b = drop
    out: dict[str, float] = {}
    for key, start, end, hit in (
        ("react_down_s", a, b, target.to_numpy() <= 2000.0),
        ("react_up_s", b, t[-1], target.to_numpy() >= 3600.0),
    ):
        idx = np.flatnonzero((t > start) & (t <= end) & hit)
        out[key] = float(t[idx[0]] - start) if len(idx) else math.inf
    owd = _window(series, a, b)["owd_ms"].astype(float)
    out["owd_ms_max_1s_low"] = float(owd.rolling(10, min_periods=5).mean().max())
    return out


def metrics(record: Mapping[str, Any], experiment: str, v: Variant) -> dict[str, Any]:
    """One run's row: the first video flow's bit-rate, frame delay, freezes and send buffer,
    and per experiment its sampler, model, responsiveness or fairness figures."""
    summary = record["summary"]
    flows = summary["flows"]
    video = [f for f in flows if f.get("kind", "video") == "video"]
    first = video[0] if video else {}
    cap = summary["link"]["capacity_kbps_mean"]
    row: dict[str, Any] = {
        "goodput_kbps": first.get("goodput_kbps"),
        "video_kbps": first.get("video_kbps"),
        "capacity_kbps": cap,
        "utilization": first.get("utilization"),
        "frame_delay_ms_mean": first.get("frame_delay_ms_mean"),
        "frame_delay_ms_p95": first.get("frame_delay_ms_p95"),
        # Frame delay split: waiting at the sender, and the network's one-way delay.
        "sender_wait_ms_mean": first.get("sender_wait_ms_mean"),
        "sender_wait_ms_p95": first.get("sender_wait_ms_p95"),
        "owd_ms_mean": first.get("owd_ms_mean"),
        "freeze_ratio": first.get("freeze_ratio"),
        "send_buffer_overshoot": first.get("send_buffer_overshoot"),
        "send_buffer_undershoot": first.get("send_buffer_undershoot"),
        "loss_rate": first.get("loss_rate"),
        "frames_displayed": first.get("frames_displayed"),
        "capacity_estimate_error": first.get("capacity_estimate_error"),
    }
    series = flow_series(record, 0)
    if experiment == "Fig. 8":
        row.update(sampler_errors(series, float(UDP_BACKGROUND.removesuffix("Mbps")) * 1e3))
    if experiment.startswith("Fig. 11"):
        row.update(prediction_errors(series))
    if experiment == "Fig. 17":
        row.update(responsiveness(series, v.drop))
    if experiment == "Table I":
        parts = [flow_series(record, i) for i in range(2)]
        rates = [
            float(_window(p, v.join_s, v.duration_s)["goodput_kbps"].fillna(0).mean())
            if p is not None else 0.0
            for p in parts
        ]  # fmt: skip
        row["jain"] = jain(rates)
        row["flow1_kbps"], row["flow2_kbps"] = rates
        late = [
            float(_window(p, (v.join_s + v.duration_s) / 2, v.duration_s)["goodput_kbps"]
                  .fillna(0).mean()) if p is not None else 0.0
            for p in parts
        ]  # fmt: skip
        row["jain_second_half"] = jain(late)
    return row


# --- seeds ---------------------------------------------------------------------------

# A case: the labels that tell its runs apart but for the seed.
CASE = ("experiment", "scheme", "content", "loss", "jitter_ms", "phase")
# Metrics whose range over seeds table.csv gives (<metric>_min, <metric>_max).
SPREAD = (
    "goodput_kbps", "utilization", "frame_delay_ms_mean", "frame_delay_ms_p95",
    "freeze_ratio", "loss_rate", "jain", "jain_second_half", "flow1_kbps", "flow2_kbps",
    "capacity_error_mbps", "background_error_mbps", "model_error_ms", "naive_error_ms",
    "react_down_s", "react_up_s",
)  # fmt: skip


def seeded(runs: Sequence[Run], seeds: int) -> list[Run]:
    """Each run at seeds 1..``seeds``, the seed in its labels and its scenario."""
    out = []
    for r in runs:
        for seed in range(1, seeds + 1):
            scenario = dict(r.scenario) | {"seed": seed}
            out.append(replace(r, labels={**r.labels, "seed": seed}, scenario=scenario, seed=seed))
    return out


def spread(per_run: pd.DataFrame) -> pd.DataFrame:
    """One row per case (:data:`CASE`): the mean over its seeds in every metric's column,
    ``seeds`` (runs without an error), ``<metric>_min`` / ``<metric>_max`` for
    :data:`SPREAD`, and the first error of a case where every run failed."""
    if per_run.empty or "seed" not in per_run:
        return per_run
    keys = [k for k in CASE if k in per_run]
    ok = per_run["error"].isna() if "error" in per_run else pd.Series(True, per_run.index)
    out = []
    for _, g in per_run.groupby(keys, sort=False, dropna=False):
        good = g[ok.loc[g.index]]
        row: dict[str, Any] = {k: g.iloc[0][k] for k in keys}
        for c in per_run.columns:
            if c in keys or c in ("seed", "error"):
                continue
            values = pd.to_numeric(good[c], errors="coerce")
            row[c] = float(values.mean()) if values.notna().any() else None
        row["error"] = None if len(good) else g["error"].dropna().iloc[0]
        row["seeds"] = len(good)
        for c in SPREAD:
            if c in good:
                values = pd.to_numeric(good[c], errors="coerce").dropna()
                row[f"{c}_min"] = float(values.min()) if len(values) else None
                row[f"{c}_max"] = float(values.max()) if len(values) else None
        out.append(row)
    return pd.DataFrame(out)


# --- the run ---------------------------------------------------------------------------


def vp8_missing() -> str | None:
    """Why real VP8 cannot run here, or None."""
    import rtcc

    why = rtcc.native().codecs().get("vp8")
    return f"real VP8: {why}" if why else None


def run(
    out: str | Path,
    jobs: int | None = None,
    *,
    short: bool = False,
    fresh: bool = False,
    progress: bool = False,
    traces: str | Path | None = None,
    vp8: bool | None = None,
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
) -> Outcome:
    """Run every experiment; write OUT/table.csv, the figures as PNG and OUT/report.html.
    Finished runs are cached under OUT/runs (``fresh`` recomputes them). ``traces`` is where
    Fig. 18's trace is (:mod:`rtcc.reproduce.traces`; default the bundled set); not finding
    it raises :class:`~rtcc.reproduce.traces.TracesError`. ``vp8`` overrides
    whether the real-VP8 runs are made (the full variant makes them).
    ``executor``/``address`` run them on a Ray cluster and ``dataset`` names the results
    dataset they are appended to (default OUT/dataset), as in :func:`rtcc.sweeprun.execute`.
    """
    from rtcc.reproduce.burstrtc import figures, page

    started = time.perf_counter()
    v = SHORT if short else FULL
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    skipped = {label: why for label, s in SCHEMES.items() if (why := probe(s)) is not None}
    trace = TRACE.locate(traces) if v.trace_s != 0 else None
    with_vp8 = v.vp8 if vp8 is None else vp8
    if with_vp8 and (why := vp8_missing()):
        skipped["Fig. 13 vp8"] = why
        with_vp8 = False

    def pick(labels: Iterable[str]) -> list[Scheme]:
        return [SCHEMES[label] for label in labels if label not in skipped]

    burst = pick(("burstrtc",))
    vp8_v = v if v.vp8_s else FULL
    groups = {
        "burstrtc": (
            seeded(
                content_runs(v, pick(COMPARED))
                + stress_runs(v, pick(COMPARED), trace)
                + fairness_runs(v, pick(FAIR))
                + [r for b in burst for r in model_runs(v, b)],
                v.seeds,
            )
            + (seeded(vp8_runs(vp8_v, pick(COMPARED)), vp8_v.vp8_seeds or 1) if with_vp8 else []),
            Analysis(flows="all", series=True, series_s=0.1),
        ),
    }
    # As runs.reproduce, but table.csv is the mean and range over seeds per case and
    # table_runs.csv every run.
    import rtcc

    common: dict[str, Any] = {
        "jobs": jobs, "fresh": fresh, "on_error": "skip", "executor": executor,
        "address": address, "dataset": dataset, "study": "burstrtc",
    }  # fmt: skip
    results = {
        name: execute(runs, analysis, out, progress=progress,
                      label=progress_label("burstrtc", name), **common)
        for name, (runs, analysis) in groups.items()
        if runs
    }  # fmt: skip
    per_run = rows(results.values(), lambda record, experiment: metrics(record, experiment, v))
    write_runs(out, results.values())
    controllers = [c["name"] for c in rtcc.controllers()]
    outcome = Outcome(v, spread(per_run), results, skipped, controllers=controllers,
                      traces=str(trace) if trace else None)  # fmt: skip
    write_outputs(out, outcome, figures.render_all, page.render, started,
                  {"table_runs.csv": lambda _: per_run})  # fmt: skip
    return outcome


# What `rtcc reproduce burstrtc` prints per run: (column, heading, scale, decimals).
_SUMMARY_COLUMNS = (
    ("goodput_kbps", "kbps", 1, 0), ("frame_delay_ms_mean", "delay ms", 1, 0),
    ("frame_delay_ms_p95", "p95 ms", 1, 0), ("freeze_ratio", "freeze %", 100, 2),
    ("send_buffer_overshoot", "over %", 100, 1), ("send_buffer_undershoot", "empty %", 100, 1),
    ("jain", "jain", 1, 3),
)  # fmt: skip


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc reproduce burstrtc` prints: per run, the headline metrics."""
    return summary_table(table, "goodput_kbps", _SUMMARY_COLUMNS)
