"""RFC 8868 §3 metrics of one run and the pass/fail verdict of RFC 8867's expectations.

Per run (the media flows of the case, forward and reverse): rate, utilisation, one-way and
queueing delay (mean, 95th percentile), loss, feedback overhead and round trip, Jain's index
and the min/max rate ratio over the window every media flow is on, convergence time after
each capacity change or flow arrival, and oscillation. The thresholds are in
:data:`THRESHOLDS`; docs/rfc8867.md gives each one's reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rtcc.rfc8867.cases import MIN_KBPS

__all__ = ["THRESHOLDS", "converge", "metrics", "verdict"]

BAND = 0.25  # converged: the rate within ±25 % of its share of the capacity (a choice)
HOLD_S = 3.0  # ... for this long without leaving the band (a choice)


def _media(summary: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, f) for i, f in enumerate(summary["flows"]) if f.get("kind", "video") == "video"]


def _series(record: Mapping[str, Any], i: int) -> pd.DataFrame | None:
    data = record.get("flows", {}).get(str(i), {}).get("series")
    return pd.DataFrame(data) if data else None


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def jain(values: Sequence[float]) -> float:
    x = np.asarray(values, dtype=float)
    if len(x) == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def converge(t: np.ndarray, rate: np.ndarray, share: np.ndarray, since: float,
             until: float) -> float:  # fmt: skip
    """Seconds from ``since`` until ``rate`` enters ±BAND of ``share`` and stays there
    HOLD_S (bins ending in (since, until]); ``until - since`` when it never does."""
    sel = (t > since) & (t <= until)
    tt, ok = t[sel], np.abs(rate[sel] - share[sel]) <= BAND * share[sel]
    if len(tt) < 2:
        return math.nan
    step = float(np.median(np.diff(tt)))
    need = max(1, int(round(HOLD_S / step)))
    for k in range(len(ok) - need + 1):
        if ok[k : k + need].all():
            return float(tt[k] - step - since)
    return float(until - since)


def _window(frames: list[pd.DataFrame], lo: float, hi: float) -> list[pd.DataFrame]:
    return [f[(f["t_s"] > lo) & (f["t_s"] <= hi)] for f in frames]


def metrics(record: Mapping[str, Any], changes: Sequence[float] = (),
            max_kbps: float = math.inf) -> dict[str, Any]:  # fmt: skip
    """One run's RFC 8868 §3 metrics; ``changes`` are the case's capacity-change instants,
    ``max_kbps`` the media's highest rate (a flow's share never exceeds it)."""
    s = record["summary"]
    media = _media(s)
    fwd = [(i, f) for i, f in media if f.get("direction", "forward") == "forward"]
    rev = [(i, f) for i, f in media if f.get("direction") == "reverse"]
    rates = [_num(f.get("goodput_kbps")) for _, f in media]
    row: dict[str, Any] = {
        "media_flows": len(media),
        "rate_kbps": float(np.nanmean(rates)) if rates else math.nan,
        "owd_ms_mean": float(np.nanmean([_num(f.get("owd_ms_mean")) for _, f in media])),
        "owd_ms_p95": float(np.nanmax([_num(f.get("owd_ms_p95")) for _, f in media])),
        "queue_delay_ms_p95": float(
            np.nanmax([_num(f.get("queue_delay_ms_p95")) for _, f in media])),
        "loss_rate": float(np.nanmax([_num(f.get("loss_rate")) for _, f in media])),
        # RFC 8868 §3 feedback overhead: report bits over media bits.
        "feedback_overhead": (
            sum(_num(f.get("report_kbps")) for _, f in media)
            / max(1e-9, sum(_num(f.get("video_kbps")) for _, f in media))),
        "link_utilization": _num(s["link"].get("utilization")),
    }  # fmt: skip
    cap = _num(s["link"].get("capacity_kbps_mean"))
    dur = float(s["duration_s"])
    # Media utilisation: the media flows' bytes over capacity × run (RFC 8868 §3 bandwidth
    # utilisation); a flow's goodput is over its own active window, so weigh it by it.
    def used(flows: list[tuple[int, Mapping[str, Any]]]) -> float:
        return sum(_num(f.get("goodput_kbps")) * _active(f, dur) for _, f in flows) / dur

    row["utilization"] = used(fwd) / cap if cap else math.nan
    bulk = [f for f in s["flows"] if f.get("kind") == "tcp"]
    if bulk and cap:
        # Against long TCP flows: the media rate over an equal share of the link.
        fair = cap / (len(fwd) + len(bulk))
        media_kbps = float(np.nanmean([_num(f.get("goodput_kbps")) for _, f in fwd]))
        row["share_of_fair"] = media_kbps / fair
        row["tcp_kbps"] = float(np.nanmean([_num(f.get("goodput_kbps")) for f in bulk]))
    if rev and s.get("reverse_link"):
        rcap = _num(s["reverse_link"].get("capacity_kbps_mean"))
        row["reverse_utilization"] = used(rev) / rcap if rcap else math.nan
    frames = {i: _series(record, i) for i, _ in media}
    ok = {i: f for i, f in frames.items() if f is not None and len(f)}
    # What the media could use: the capacity, but no more than each active flow's maximum
    # rate (RFC 8867 §4.3's 1.5 Mbps): 5.1's 2.5 Mbps period leaves 1 Mbps no media flow
    # may take, so its plain utilisation cannot exceed 0.83.
    row["usable_utilization"] = _usable(used(fwd), fwd, ok, dur, max_kbps)
    if rev and s.get("reverse_link"):
        row["reverse_usable_utilization"] = _usable(used(rev), rev, ok, dur, max_kbps)
    # Fairness over the window every forward media flow is on (RFC 8868 §3: Jain, ratios).
    # The flows still on at the end (a paused flow's resumed half, not its first) are the
    # ones compared, over the window they are all on.
    last = max((_stop(f, dur) for _, f in fwd), default=dur)
    fair = [(i, f) for i, f in fwd if _stop(f, dur) >= last - 1.0]
    if len(fair) > 1 and all(i in ok for i, _ in fair):
        lo = max(_num(f.get("start_s")) for _, f in fair)
        hi = min(_stop(f, dur) for _, f in fair)
        means = [float(w["goodput_kbps"].mean()) for w in _window([ok[i] for i, _ in fair], lo, hi)]
        row["jain"] = jain(means)
        row["rate_ratio"] = min(means) / max(means) if max(means) > 0 else math.nan
    row.update(_dynamics(fwd, ok, changes, dur, max_kbps))
    return row


def _usable(kbps: float, flows: list[tuple[int, Mapping[str, Any]]],
            ok: Mapping[int, pd.DataFrame], dur: float, max_kbps: float) -> float:  # fmt: skip
    """``kbps`` (the flows' bytes over the run) over the mean of min(capacity, active
    flows × ``max_kbps``), the capacity read from the flows' series (NaN without)."""
    parts = [ok[i][["t_s", "capacity_kbps"]] for i, _ in flows if i in ok and "capacity_kbps" in ok[i]]
    if not parts or not dur:
        return math.nan
    # Every flow's series carries the link's capacity; one row per bin, a bin without a
    # value takes its neighbour's (the capacity is a step function).
    cap = pd.concat(parts).groupby("t_s")["capacity_kbps"].max().sort_index().ffill().bfill()
    t, c = cap.index.to_numpy(float), cap.to_numpy(float)
    if np.isnan(c).all():
        return math.nan
    if len(t) < 2:
        return math.nan
    step = float(np.median(np.diff(t)))
    spans = [(_num(f.get("start_s")), _stop(f, dur)) for _, f in flows]
    n = np.zeros(len(t))
    for lo, hi in spans:
        n += (t > (0.0 if math.isnan(lo) else lo)) & (t <= hi + 1e-9)
    usable = float(np.minimum(c, n * max_kbps).sum() * step / dur)
    return kbps / usable if usable > 0 else math.nan


def _stop(f: Mapping[str, Any], dur: float) -> float:
    stop = _num(f.get("stop_s"))
    return dur if math.isnan(stop) else min(stop, dur)


def _active(f: Mapping[str, Any], dur: float) -> float:
    start = _num(f.get("start_s"))
    return max(0.0, _stop(f, dur) - (0.0 if math.isnan(start) else start))


def _dynamics(fwd: list[tuple[int, Mapping[str, Any]]], ok: Mapping[int, pd.DataFrame],
              changes: Sequence[float], dur: float,
              max_kbps: float = math.inf) -> dict[str, Any]:  # fmt: skip
    """Convergence time (max over events and flows) and oscillation (mean coefficient of
    variation of the rate over the second half of each stable period)."""
    flows = [(i, f) for i, f in fwd if i in ok]
    if not flows:
        return {}
    starts = {i: _num(f.get("start_s")) for i, f in flows}
    starts = {i: 0.0 if math.isnan(v) else v for i, v in starts.items()}
    stops = {i: _stop(f, dur) for i, f in flows}
    events = sorted({0.0, *changes, *starts.values(), *(v for v in stops.values() if v < dur)})
    events = [e for e in events if e < dur] + [dur]
    conv, cvs = [], []
    for i, _ in flows:
        d = ok[i]
        t = d["t_s"].to_numpy(float)
        rate = d["goodput_kbps"].to_numpy(float)
        capacity = d["capacity_kbps"].to_numpy(float) if "capacity_kbps" in d else None
        if capacity is None:
            continue
        n = np.array([sum(starts[j] < x <= stops[j] + 1e-9 for j, _ in flows) for x in t])
        # RFC 8867 §5.2: where the link holds more, the flows settle at their maximum rate.
        share = np.minimum(capacity / np.maximum(n, 1), max_kbps)
        for a, b in zip(events[:-1], events[1:]):
            if not (starts[i] <= a < stops[i]) or b - a <= HOLD_S:
                continue
            conv.append(converge(t, rate, share, a, min(b, stops[i])))
            half = rate[(t > (a + b) / 2) & (t <= b)]
            if len(half) > 2 and half.mean() > 0:
                cvs.append(float(half.std() / half.mean()))
    conv = [c for c in conv if not math.isnan(c)]
    return {
        "convergence_s": max(conv) if conv else math.nan,
        "oscillation_cv": float(np.mean(cvs)) if cvs else math.nan,
    }


# Pass/fail per case: (metric, "min" or "max", bound). Every bound is a choice derived from
# the RFC's stated expectation; docs/rfc8867.md justifies each.
_DELAY = ("queue_delay_ms_p95", "max", 150.0)  # half the 300 ms queue (RFC 8836 §2 low delay)
_LOSS = ("loss_rate", "max", 0.02)
_FLOOR = ("rate_kbps", "min", 0.95 * MIN_KBPS)
THRESHOLDS: dict[str, tuple[tuple[str, str, float], ...]] = {
    "5.1": (("usable_utilization", "min", 0.70), ("convergence_s", "max", 10.0),
            ("oscillation_cv", "max", 0.25), _DELAY, _LOSS),
    "5.1-100": (("usable_utilization", "min", 0.70), ("convergence_s", "max", 10.0),
                ("oscillation_cv", "max", 0.25), _DELAY, _LOSS),
    "5.2": (("usable_utilization", "min", 0.70), ("jain", "min", 0.90),
            ("convergence_s", "max", 15.0), _DELAY, _LOSS),
    "5.3": (("usable_utilization", "min", 0.60), ("reverse_usable_utilization", "min", 0.60), _DELAY, _LOSS),
    "5.4": (("usable_utilization", "min", 0.70), ("jain", "min", 0.90),
            ("convergence_s", "max", 20.0), _DELAY),
    "5.5": (("usable_utilization", "min", 0.70), ("jain", "min", 0.80), ("rate_ratio", "min", 0.33)),
    # Against TCP: neither starves (media at least a fifth of its half share, at most 1.5×).
    # RFC 8867 §5.6: "In the worst case, the media stream will fall to the minimum media
    # bit rate": the media passes while its goodput holds that minimum (less 5 %: a flow
    # held there measures 149-152 kbps), and TCP is not starved (media at most 1.5x its share).
    "5.6": (_FLOOR, ("share_of_fair", "max", 1.50)),
    "5.6-1000": (_FLOOR, ("share_of_fair", "max", 1.50)),
    "5.7": (("usable_utilization", "min", 0.50), ("jain", "min", 0.90), _DELAY, _LOSS),
    "5.8": (("usable_utilization", "min", 0.70), ("jain", "min", 0.80), _DELAY),
    # The traces carry more than the media's 1.5 Mbps (RFC 8867 §4.3) most of the time, so
    # utilisation of the trace cannot be asked: the rate, 40 % of that maximum, is.
    "8869-2-driving": (("rate_kbps", "min", 600.0), ("queue_delay_ms_p95", "max", 300.0),
                       ("loss_rate", "max", 0.05)),
    "8869-2-short": (("rate_kbps", "min", 600.0), ("queue_delay_ms_p95", "max", 300.0),
                     ("loss_rate", "max", 0.05)),
}  # fmt: skip


def verdict(case: str, row: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Whether ``row`` (a run's metrics) passes ``case``'s thresholds, and why not: one
    text per crossed threshold; a missing or NaN metric fails."""
    failed = []
    for metric, side, bound in THRESHOLDS.get(case, ()):
        v = row.get(metric)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            failed.append(f"{metric} missing")
        elif (side == "min" and v < bound) or (side == "max" and v > bound):
            failed.append(f"{metric} {v:.3g} {'<' if side == 'min' else '>'} {bound:g}")
    return not failed, failed
