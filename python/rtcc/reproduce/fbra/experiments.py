"""The FBRA reproduction's runs: §5.2-5.4 of Nagy, Singh, Ott & Eggert (fbra.txt) and their
metrics, for fbra, rrtcc and c-nadu at bottleneck delays of 50, 100 and 240 ms:

- ``Table 1``: one flow over a variable-capacity link (each seed its own capacity steps).
- ``Table 2``: one flow against 10 web-like TCP flows on 5 Mbps.
- ``Table 3``: two flows against 10 web-like TCP flows on the same 5 Mbps (§5.4 keeps §5.3's
  link).
- ``No loss`` and ``GE loss``: one flow alone on a constant 2 Mbps link, without loss and with
  5 % Gilbert-Elliott loss (not in the paper: where a loss-driven undershoot collapses).

Every case runs over ``seeds`` seeds (Table 3, two flows sharing the link, over at least
``MULTI_SEEDS``); the table has one row per run and the report the mean and standard
deviation over seeds, as the paper's tables, and Table 3's Jain index of its two flows with
its min-max over seeds. Tables 2 and 3's TCP-friendliness also runs with the web flows'
``host_jitter`` at each of ``HOST_JITTER_MS`` (rtcc's default is 0, and no one realistic value
is defensible), and the summary gives its range over those values.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.reproduce.fbra import paper
from rtcc.reproduce.runs import (
    SUMMARY_KEYS, Outcome, jain, missing_controller, reproduce, summary_table,
)
from rtcc.reproduce.runs import series as flow_series
from rtcc.sweepspec import Analysis, Run

__all__ = ["FULL", "SCHEMES", "SHORT", "Variant", "capacity_steps", "metrics", "run",
           "summary", "summary_text"]  # fmt: skip

QUEUE = "50pkt"  # §5: "the queue length to 50 packets (ns-2 default)"
MAX_DELAY = "400ms"  # §5: packets later than this are discarded
REPORT = "100ms"  # receiver report interval of every scheme (paper.NOTES)
START = "100kbps"
FLOOR = "30kbps"
TCP_FLOWS = 10
CAPACITY_T2 = 5_000  # kbps (paper.NOTES)
# §5.4: "All other parameters including the network topology, link characteristics, and
# traffic source properties remain the same" as §5.3's.
CAPACITY_T3 = CAPACITY_T2
CAPACITY_GE = 2_000  # kbps, the loss runs' constant link (chosen)
# Gilbert-Elliott: 1.58 % of packets enter the lossy state, which loses all and lasts 1/0.3 =
# 3.3 packets on average: 0.0158 / (0.0158 + 0.3) = 5 % loss (chosen).
GE_LOSS = {"kind": "gilbert_elliott", "p_gb": 0.0158, "p_bg": 0.3}
GE_SEEDS = 10  # at most, per case
MULTI_SEEDS = 5  # at least, for Table 3's two flows
# The web flows' host_jitter besides 0 (ms): TFS is reported over this range, on the first
# min(seeds, GE_SEEDS) seeds; a sub-ms delay difference can decide how TCP flows split.
HOST_JITTER_MS = (0.1, 1.0)
BIN_S = 1.0

SCHEMES: dict[str, dict[str, Any]] = {
    # §4.1: the receiver measures the OWD "without the need for clock
    # synchronization" (Sync & Sense, its ref. [36]), an absolute OWD whose
    # ratios to the watermarks FBRA reads; the simulator's agreeing clocks
    # give it (the default, said here as the set-up depends on it).
    "fbra": {"controller": {"name": "fbra", "report_interval": REPORT},
             "fec": {"group": 8, "per_frame": False}, "clocks_agree": True},
    # RRTCC and C-NADU read per-packet arrival times, which RR + XR do not
    # carry (the scenario refuses them under rtcp-xr): RFC 8888, the RTCP
    # feedback that carries them (1/1024 s).
    "rrtcc": {"controller": "rrtcc", "report_format": "rfc8888"},
    "c-nadu": {"controller": "c-nadu", "report_format": "rfc8888"},
}  # fmt: skip


@dataclass(frozen=True)
class Variant:
    name: str
    seeds: int
    table1_s: int
    step_s: int
    tcp_s: int
    jitter_delays: tuple[int, ...]  # delays (ms) of the host_jitter runs


FULL = Variant("full", seeds=30, table1_s=900, step_s=50, tcp_s=300,
               jitter_delays=tuple(paper.DELAYS_MS))  # fmt: skip
# Shortened for tests: three seeds, shorter runs, every case kept (host_jitter at 50 ms only).
SHORT = Variant("short", seeds=3, table1_s=300, step_s=50, tcp_s=120, jitter_delays=(50,))


def capacity_steps(seed: int, duration_s: int, step_s: int) -> dict[str, Any]:
    """Table 1's link for ``seed``: a step every ``step_s``, each level uniform in
    100-400 kbps (paper.NOTES)."""
    rng = random.Random(f"fbra-table-1-{seed}")
    steps = [[f"{t}s", f"{rng.randint(10, 40) * 10}kbps"] for t in range(0, duration_s, step_s)]
    return {"kind": "step", "steps": steps}


def _video(scheme: str, name: str) -> dict[str, Any]:
    return {
        "name": name, "encoder": "ideal", "start_rate": START, "min_rate": FLOOR, "nack": False,
        "feedback_interval": REPORT, "max_delay": MAX_DELAY, "early_reports": True,
        "report_format": "rtcp-xr",
        **SCHEMES[scheme],
    }  # fmt: skip


# The paper's TCP is ns-2's, whose agents start with a 2-segment window
# (ns-default.tcl: Agent/TCP windowInit_ 2), not Linux's 10 (RFC 6928).
WEB_INITIAL_WINDOW = 2
# Web objects, uniform in this range (kB), 10 s mean think time (RFC 8868 §6.1). The paper's
# sizes were lost; RFC 8868's 30-50 kB carry about 320 kbps on 5 Mbps, where no scheme
# loses anything, while the paper's all lose 0.4-6.3 %. 300-1000 kB is the smallest load
# on the calibration grid (paper.NOTES) at which every scheme's lost-or-discarded rate at
# 50 ms lies in that band.
WEB_OBJECT_KB = (300, 1000)


def _web(k: int, jitter_ms: float = 0.0) -> dict[str, Any]:
    # Half the flows begin idle, so the ten do not start in step.
    lo, hi = WEB_OBJECT_KB
    flow = {"name": f"web{k + 1}", "kind": "web", "start_idle": k % 2 == 1,
            "initial_window": WEB_INITIAL_WINDOW, "object_min": f"{lo}kB",
            "object_max": f"{hi}kB"}  # fmt: skip
    return flow | ({"host_jitter": f"{jitter_ms}ms"} if jitter_ms else {})


def _scenario(name: str, seed: int, duration_s: int, capacity: Any, delay_ms: int,
              flows: list[dict[str, Any]], loss: Any = 0.0) -> dict[str, Any]:  # fmt: skip
    return {
        "name": name, "duration": f"{duration_s}s", "seed": seed,
        "link": {"capacity": capacity, "delay": f"{delay_ms}ms", "queue": QUEUE, "loss": loss},
        "record": {"packets": False}, "flow": flows,
    }  # fmt: skip


def _tcp_runs(scheme: str, delay: int, seed: int, v: Variant, jitter_ms: float) -> list[Run]:
    """Tables 2 and 3 for one seed, the web flows at ``jitter_ms`` of host_jitter."""
    labels = {"scheme": scheme, "delay_ms": delay, "seed": seed, "host_jitter_ms": jitter_ms}
    web = [_web(k, jitter_ms) for k in range(TCP_FLOWS)]
    s2 = _scenario("fbra-table-2", seed, v.tcp_s, f"{CAPACITY_T2}kbps", delay,
                   [_video(scheme, "rtp"), *web])  # fmt: skip
    s3 = _scenario("fbra-table-3", seed, v.tcp_s, f"{CAPACITY_T3}kbps", delay,
                   [_video(scheme, "rtp1"), _video(scheme, "rtp2"), *web])  # fmt: skip
    return [Run({"experiment": "Table 2", **labels}, s2, seed, "<fbra>"),
            Run({"experiment": "Table 3", **labels}, s3, seed, "<fbra>")]  # fmt: skip


def table_runs(v: Variant, schemes: Sequence[str]) -> list[Run]:
    runs = []
    for scheme in schemes:
        for delay in paper.DELAYS_MS:
            for seed in range(1, v.seeds + 1):
                labels = {"scheme": scheme, "delay_ms": delay, "seed": seed}
                cap = capacity_steps(seed, v.table1_s, v.step_s)
                s1 = _scenario(
                    "fbra-table-1", seed, v.table1_s, cap, delay, [_video(scheme, "rtp")]
                )
                runs.append(Run({"experiment": "Table 1", **labels}, s1, seed, "<fbra>"))
                runs += _tcp_runs(scheme, delay, seed, v, 0.0)
                if seed > GE_SEEDS:
                    continue
                for experiment, loss in (("No loss", 0.0), ("GE loss", GE_LOSS)):
                    s4 = _scenario(f"fbra-{experiment.lower().replace(' ', '-')}", seed,
                                   v.tcp_s, f"{CAPACITY_GE}kbps", delay,
                                   [_video(scheme, "rtp")], loss)  # fmt: skip
                    runs.append(Run({"experiment": experiment, **labels}, s4, seed, "<fbra>"))
            for seed in range(v.seeds + 1, MULTI_SEEDS + 1):
                runs.append(_tcp_runs(scheme, delay, seed, v, 0.0)[1])
            if delay in v.jitter_delays:
                for jitter in HOST_JITTER_MS:
                    for seed in range(1, min(v.seeds, GE_SEEDS) + 1):
                        runs += _tcp_runs(scheme, delay, seed, v, jitter)
    return runs


# --- metrics -------------------------------------------------------------------------


def _lost_or_discarded(f: Mapping[str, Any]) -> float:
    loss, discard = f.get("loss_rate"), f.get("discard_rate")
    if loss is None or discard is None:
        return math.nan
    return float(loss + (1.0 - loss) * discard)


def _video_metrics(f: Mapping[str, Any]) -> dict[str, Any]:
    rec, unrec = f.get("fec_recovered") or 0, f.get("fec_unrepaired") or 0
    return {
        "goodput_kbps": f.get("goodput_kbps"),
        "loss_rate": f.get("loss_rate"),
        "discard_rate": f.get("discard_rate"),
        # What the paper's loss rate must count (paper.FINDINGS): lost or discarded.
        "loss_discard_rate": _lost_or_discarded(f),
        "lost_frames": (f.get("frames_lost") or 0) + (f.get("frames_late") or 0),
        "fec_kbps": f.get("fec_kbps"),
        "fec_share": (f["fec_kbps"] / f["video_kbps"]) if f.get("video_kbps") else math.nan,
        # Packets rebuilt over those a parity covered; ffre_frames is the paper's (frames).
        "ffre": rec / (rec + unrec) if rec + unrec else math.nan,
        "ffre_frames": f["ffre"] if f.get("ffre") is not None else math.nan,
        "psnr_db": f.get("psnr_db_mean"),
        "owd_ms_mean": f.get("owd_ms_mean"),
        # End to end beside the network: frame delay and its wait at the sender.
        "frame_delay_ms_mean": f.get("frame_delay_ms_mean"),
        "sender_wait_ms_mean": f.get("sender_wait_ms_mean"),
    }


def _probes(series: pd.DataFrame | None, duration_s: float) -> dict[str, float]:
    if series is None or "probe_episodes" not in series:
        return {}
    last = series.dropna(subset=["probe_episodes"]).iloc[-1]
    n = float(last["probe_episodes"])
    return {
        "probes_per_min": n / duration_s * 60.0,
        "frcc": float(last["probe_up"]) / n if n else math.nan,
    }


def metrics(record: Mapping[str, Any], experiment: str) -> dict[str, Any]:
    summary = record["summary"]
    flows = summary["flows"]
    video = [f for f in flows if f.get("kind", "video") == "video"]
    web = [f for f in flows if f.get("kind") == "web"]
    row = _video_metrics(video[0])
    duration = float(summary["duration_s"])
    capacity = summary["link"]["capacity_kbps_mean"]
    # The first flow's goodput over the link's mean capacity: what a probe-accuracy figure
    # (FRCC) does not show when every report carries loss and the rate sits at the floor.
    if row["goodput_kbps"] is not None and capacity:
        row["utilization"] = row["goodput_kbps"] / capacity
    row.update(_probes(flow_series(record, 0), duration))
    if len(video) > 1:
        row["goodput2_kbps"] = video[1].get("goodput_kbps")
        row["loss_rate2"] = video[1].get("loss_rate")
        # The two calls start together and run to the end: goodput is over the common window.
        rates = [f.get("goodput_kbps") for f in video[:2]]
        row["jain_video"] = jain(rates) if None not in rates else math.nan
    if web:
        # A web flow's throughput while it downloads: its bytes over its download time.
        rates = []
        for f in web:
            n, fct = f.get("objects_completed") or 0, f.get("fct_ms_mean")
            if n and fct:
                rates.append(f["goodput_kbps"] * duration / (n * fct / 1000.0))
        tcp = float(np.mean(rates)) if rates else math.nan
        row["tcp_kbps"] = tcp
        row["tfs"] = tcp / (capacity / (len(web) + len(video)))
    return row


KEYS = ["experiment", "scheme", "delay_ms"]
SPREAD = ("jain_video",)  # columns whose min and max over seeds the summary adds


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds per experiment, scheme and delay (the web
    flows at host_jitter 0), the min and max over seeds of the ``SPREAD`` columns, and
    ``tfs_jitter_min``/``tfs_jitter_max``: the range over host_jitter 0 and
    ``HOST_JITTER_MS`` of the mean TFS over the seeds those runs share."""
    if table.empty or "goodput_kbps" not in table:
        return table
    jitter = table["host_jitter_ms"].fillna(0.0) if "host_jitter_ms" in table else None
    base = table if jitter is None else table[jitter == 0.0]
    cols = [c for c in ("goodput_kbps", "goodput2_kbps", "loss_rate", "discard_rate",
                        "loss_discard_rate", "lost_frames", "fec_share",
                        "ffre", "ffre_frames", "frcc", "probes_per_min", "tcp_kbps", "tfs",
                        "owd_ms_mean", "frame_delay_ms_mean", "sender_wait_ms_mean",
                        "utilization", *SPREAD)
            if c in base]  # fmt: skip
    groups = base.groupby(KEYS, sort=False)
    g, spread = groups[cols], groups[[c for c in SPREAD if c in cols]]
    out = (
        g.mean().add_suffix("_mean").join(g.std().add_suffix("_std"))
        .join(spread.min().add_suffix("_min")).join(spread.max().add_suffix("_max"))
        .join(g.size().rename("runs"))
    ).reset_index()  # fmt: skip
    if jitter is not None and "tfs" in table and (jitter > 0).any():
        out = out.merge(_tfs_over_jitter(table.assign(host_jitter_ms=jitter)), on=KEYS, how="left")
    return _against_lossfree(out)


def _tfs_over_jitter(table: pd.DataFrame) -> pd.DataFrame:
    """Per case with host_jitter runs: the min and max over jitter values of the mean TFS,
    each mean over the seeds the jitter runs have."""
    jittered = table[table["host_jitter_ms"] > 0]
    seeds = jittered.groupby(KEYS)["seed"].agg(set)
    rows = []
    for key, part in table.groupby(KEYS):
        if key not in seeds.index:
            continue
        part = part[part["seed"].isin(seeds[key])]
        means = part.groupby("host_jitter_ms")["tfs"].mean()
        rows.append({**dict(zip(KEYS, key)), "tfs_jitter_min": means.min(),
                     "tfs_jitter_max": means.max(), "jitter_values": len(means)})  # fmt: skip
    return pd.DataFrame(rows, columns=[*KEYS, "tfs_jitter_min", "tfs_jitter_max", "jitter_values"])


def _against_lossfree(s: pd.DataFrame) -> pd.DataFrame:
    """``goodput_vs_lossfree``: a GE loss case's mean goodput over its No loss twin's (same
    scheme and delay); NaN elsewhere."""
    if "goodput_kbps_mean" not in s:
        return s
    base = s[s["experiment"] == "No loss"].set_index(["scheme", "delay_ms"])["goodput_kbps_mean"]
    keys = list(zip(s["scheme"], s["delay_ms"]))
    ref = [base.get(k, math.nan) if e == "GE loss" else math.nan
           for k, e in zip(keys, s["experiment"])]  # fmt: skip
    return s.assign(goodput_vs_lossfree=s["goodput_kbps_mean"] / pd.Series(ref, index=s.index))


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
) -> Outcome:
    """Run every case; write OUT/table.csv (one row per run), OUT/summary.csv (mean and std
    over seeds), the figures and OUT/report.html.
    ``executor``/``address`` run them on a Ray cluster and ``dataset`` names the results
    dataset they are appended to (default OUT/dataset), as in :func:`rtcc.sweeprun.execute`.
    """
    from rtcc.reproduce.fbra import figures, page

    started = time.perf_counter()
    v = SHORT if short else FULL
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    skipped = {s: why for s in SCHEMES if (why := missing_controller(s)) is not None}

    def pick(labels: Iterable[str]) -> list[str]:
        return [s for s in labels if s not in skipped]

    groups = {
        "fbra": (table_runs(v, pick(SCHEMES)), Analysis(flows="first", series=True, series_s=BIN_S))
    }
    return reproduce(
        groups, out, v, skipped, metrics, figures.render_all, page.render, started,
        study="fbra", tables={"summary.csv": summary}, jobs=jobs, fresh=fresh,
        progress=progress, executor=executor, address=address, dataset=dataset,
    )  # fmt: skip


# What `rtcc reproduce fbra` prints per case: (column, heading, scale, decimals).
_SUMMARY_COLUMNS = (
    ("goodput_kbps_mean", "kbps", 1, 0), ("loss_discard_rate_mean", "lost+late %", 100, 2),
    ("lost_frames_mean", "lost frames", 1, 0), ("fec_share_mean", "FEC %", 100, 1),
    ("frcc_mean", "FRCC %", 100, 1), ("tfs_mean", "TFS %", 100, 1),
    ("utilization_mean", "util %", 100, 1), ("goodput_vs_lossfree", "vs no loss %", 100, 0),
)  # fmt: skip
_SUMMARY_KEYS = {**SUMMARY_KEYS, "ms": lambda r: str(int(r["delay_ms"]))}


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc reproduce fbra` prints: the mean over seeds per case."""
    return summary_table(summary(table), "goodput_kbps_mean", _SUMMARY_COLUMNS, _SUMMARY_KEYS)
