"""Convergence after capacity steps, as the Dumbo thesis defines it (dumbo.txt §6.2.1).

    "the convergence time of an algorithm after a link transition to up [is] the time
    it takes to achieve 90% utilization of the max utilization it achieves after the
    transition for the first time. [...] after a link transition to down [it is] the
    time it takes for it to achieve 110% frame latency of the steady-state latency it
    had before the transition. [...] the steady-state metrics [...] after a link
    transition [are] the average of that metric after reaching a steady behavior."

Everything works on one flow's per-bin series (bins of at most 100 ms; the scenario's
``[record] bin``): ``t_s`` (bin end), ``capacity_kbps``, ``recv_kbps`` and, for steps
down, ``latency_ms`` (mean frame latency of the frames captured in the bin). Choices
the thesis leaves open, with the value taken:

* Utilisation is the flow's received rate / link capacity per bin; the post-step
  window runs from the step to the next step (or the end of the run); the time is
  measured to the *end* of the first bin that qualifies.
* A single frame can fill a 100 ms bin on its own: a key frame (a resolution switch
  starts one) leaves the pacer at 2.5 x the target, so GCC climbing at half the
  capacity received 3.06 Mbps over the bin of its 720p switch (pulse link, seed 5).
  The up rule therefore reads utilisation through the same centred ``smooth_s``
  rolling median as the down rule, for the maximum and for the crossing: an isolated
  burst bin is neither the flow reaching 90 % nor its maximum. ``smooth_s = 0`` reads
  raw bins.
* The pre-step steady-state latency is the median of the per-bin latency over the
  last ``steady_window_s`` = 10 s before the step (or since the previous step).
* Per-bin frame latency fluctuates by ±20 % in steady state (frame-size noise), so a
  110 % band on raw bins fires on noise. The down rule therefore reads a centred
  rolling median over ``smooth_s`` = 1 s (rounded up to an odd number of bins, 11 at
  100 ms, so it is symmetric) within the post-step window: converged = the end of the
  first bin where the smoothed latency is back within 110 % after having left it; 0 s
  if it never left; NaN if it never came back before the next step.
* Steady state after convergence = the mean from the converged bin to the window end.
* The pre-step reference can sit below the post-step steady state by more than 10 %
  (at a lower rate each frame serialises for longer), and then latency never
  "converges" by the thesis's rule (``down_unconverged`` counts such steps). rtcc adds
  ``converge_down_settle_s``: the same rule against the post-step steady state (median
  of the window's last ``steady_window_s``); steady-state metrics of a step that never
  converged start from that settling point instead.
* Steps are found in the capacity series (plateaus of ≥ 1 s that differ by ≥ 20 %),
  so no link description is needed; pass ``steps`` to override.

Averages over all steps of each direction give ``converge_up_s``/``converge_down_s``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from rtcc.result import Result

__all__ = [
    "COLUMNS",
    "Step",
    "StepMetrics",
    "bin_series",
    "convergence",
    "detect_steps",
    "step_metrics",
]

UP_FRACTION = 0.9  # §6.2.1: 90 % of the post-step maximum utilisation
DOWN_FACTOR = 1.1  # §6.2.1: 110 % of the pre-step steady-state frame latency
STEADY_WINDOW_S = 10.0
SMOOTH_S = 1.0
MAX_BIN_S = 0.1
_EPS = 1e-9

# Keys of convergence()'s result, in table order.
COLUMNS = (
    "converge_up_s",
    "converge_down_s",
    "converge_down_settle_s",
    "up_max_mbps",
    "up_steady_mbps",
    "up_steady_util",
    "down_latency_pre_ms",
    "down_latency_steady_ms",
    "down_latency_max_ms",
    "down_steady_mbps",
    "steps_up",
    "steps_down",
    "down_unconverged",
)


@dataclass(frozen=True)
class Step:
    """A capacity change at ``t_s`` from ``before_kbps`` to ``after_kbps``."""

    t_s: float
    before_kbps: float
    after_kbps: float

    @property
    def up(self) -> bool:
        return self.after_kbps > self.before_kbps


@dataclass(frozen=True)
class StepMetrics:
    """One step's numbers; fields that do not apply to its direction are NaN."""

    step: Step
    end_s: float  # end of the post-step window (next step or end of run)
    converge_s: float
    max_kbps: float = math.nan  # up: highest received rate in the window
    steady_kbps: float = math.nan  # mean received rate after convergence
    steady_util: float = math.nan  # mean utilisation after convergence
    pre_latency_ms: float = math.nan  # down: pre-step steady state
    steady_latency_ms: float = math.nan  # down: mean latency after convergence
    max_latency_ms: float = math.nan  # down: highest frame latency in the window
    settle_s: float = math.nan  # down: back within 110 % of the post-step steady state
    unconverged: bool = False  # down: latency left the band and never came back


def bin_series(result: Result, flow: int = 0) -> pd.DataFrame:
    """One flow's per-bin series from a run: rates, capacity and frame latency by capture bin.

    Needs the run's time series (``[record] timeseries``); latency columns are NaN when
    the frames table was not recorded.
    """
    ts = result.timeseries
    if ts.empty or "flow" not in ts.columns:
        raise ValueError("convergence needs the per-bin time series ([record] timeseries = true)")
    part = ts[ts["flow"] == flow]
    keep = [
        "t_s", "recv_kbps", "goodput_kbps", "send_kbps", "video_kbps", "padding_kbps",
        "target_kbps", "owd_ms",
        # estimate and competition detection, where the controller reports them
        "capacity_estimate_kbps", "capacity_error", "competition", "competition_truth", "share",
        # BurstRTC's sampler and delay model (background rate, prediction errors)
        "background_estimate_kbps", "model_error_sum_ms", "naive_error_sum_ms",
        "predictions_resolved",
        # FBRA's probes (cumulative) and FEC
        "probe_episodes", "probe_up", "probe_down", "fec_kbps",
    ]  # fmt: skip
    out = part[[c for c in keep if c in part.columns]].reset_index(drop=True)
    link = result.link.set_index("t_s")["capacity_kbps"] if not result.link.empty else None
    out["capacity_kbps"] = (
        out["t_s"].map(link).to_numpy(dtype=float) if link is not None else np.nan
    )
    out["latency_ms"] = np.nan
    out["latency_max_ms"] = np.nan
    frames = result.frames
    if len(out) and not frames.empty and {"capture_s", "latency_ms"} <= set(frames.columns):
        bin_s = bin_width(out["t_s"].to_numpy(dtype=float))
        mine = frames[frames["flow"] == flow]
        # Bin i covers [i·bin, (i+1)·bin); rounding the bin end keeps float noise out.
        index = np.floor(mine["capture_s"].to_numpy(dtype=float) / bin_s + _EPS).astype(np.int64)
        grouped = mine["latency_ms"].groupby(index)
        at = np.rint(out["t_s"].to_numpy(dtype=float) / bin_s).astype(np.int64) - 1
        out["latency_ms"] = pd.Series(at).map(grouped.mean()).to_numpy(dtype=float)
        out["latency_max_ms"] = pd.Series(at).map(grouped.max()).to_numpy(dtype=float)
    return out


def bin_width(t_s: np.ndarray) -> float:
    """The bin width of a series of bin end times."""
    if len(t_s) >= 2:
        return float(np.median(np.diff(t_s)))
    return float(t_s[0]) if len(t_s) else math.nan


def detect_steps(
    series: pd.DataFrame, min_change: float = 0.2, min_hold_s: float = 1.0, tol: float = 0.01
) -> list[Step]:
    """Capacity steps: consecutive plateaus (≥ ``min_hold_s`` within ``tol``) that differ
    by at least ``min_change`` of the larger, at most two bins apart.

    A bin straddling the change puts the step time inside it, in proportion to its
    capacity; a trace-driven link has no plateaus and so no steps.
    """
    t = series["t_s"].to_numpy(dtype=float)
    cap = series["capacity_kbps"].to_numpy(dtype=float)
    if len(t) < 2:
        return []
    bin_s = bin_width(t)
    plateaus: list[tuple[int, int, float]] = []  # first bin, last bin, level
    start = 0
    for i in range(1, len(cap) + 1):
        if i < len(cap) and abs(cap[i] - cap[start]) <= tol * max(abs(cap[start]), 1.0):
            continue
        if (i - start) * bin_s >= min_hold_s - _EPS:
            plateaus.append((start, i - 1, float(np.mean(cap[start:i]))))
        start = i
    steps = []
    for (_, last, before), (first, _, after) in itertools.pairwise(plateaus):
        gap = first - last - 1
        if gap > 2 or abs(after - before) < min_change * max(before, after):
            continue
        end = float(t[last])
        if gap == 1:  # one straddling bin: interpolate where in it the change happened
            share = (cap[last + 1] - after) / (before - after)
            end += bin_s * min(max(float(share), 0.0), 1.0)
        elif gap == 2:
            end += bin_s
        steps.append(Step(end, before, after))
    return steps


def _window(t: np.ndarray, bin_s: float, start: float, end: float) -> np.ndarray:
    """Indices of the bins lying wholly inside [start, end]."""
    return np.flatnonzero((t - bin_s >= start - _EPS) & (t <= end + _EPS))


def _nanmean(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else math.nan


def _nanmax(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(values.max()) if values.size else math.nan


def _smooth(values: np.ndarray, bins: int) -> np.ndarray:
    """Centred rolling median over ``bins`` (odd) bins; the values themselves for 1."""
    if bins <= 1:
        return values
    return pd.Series(values).rolling(bins, center=True, min_periods=1).median().to_numpy()


def _up(
    step: Step, end: float, t: np.ndarray, recv: np.ndarray, cap: np.ndarray, smooth_bins: int
) -> StepMetrics:
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(cap > 0, recv / cap, np.nan)
    if not np.isfinite(util).any():
        return StepMetrics(step, end, math.nan)
    smooth = _smooth(util, smooth_bins)
    reached = np.flatnonzero(smooth >= UP_FRACTION * np.nanmax(smooth))
    first = int(reached[0])
    return StepMetrics(
        step,
        end,
        converge_s=float(t[first]) - step.t_s,
        max_kbps=_nanmax(recv),
        steady_kbps=_nanmean(recv[first:]),
        steady_util=_nanmean(util[first:]),
    )


def _back_within(smooth: np.ndarray, limit: float) -> int | None:
    """Index of the first bin back within ``limit`` after leaving it; 0 if it never left,
    None if it never came back."""
    above = np.flatnonzero(smooth > limit)
    if above.size == 0:
        return 0
    back = np.flatnonzero(np.isfinite(smooth) & (smooth <= limit))
    back = back[back > above[0]]
    return int(back[0]) if back.size else None


def _since(t: np.ndarray, index: int | None, start: float) -> float:
    """Seconds from ``start`` to the end of bin ``index`` (0 = never left, None = NaN)."""
    if index is None:
        return math.nan
    return 0.0 if index == 0 else float(t[index]) - start


def _down(
    step: Step,
    end: float,
    t: np.ndarray,
    recv: np.ndarray,
    latency: np.ndarray,
    latency_max: np.ndarray,
    pre: np.ndarray,
    post: np.ndarray,
    smooth_bins: int,
) -> StepMetrics:
    pre_ms = float(np.median(pre[np.isfinite(pre)])) if np.isfinite(pre).any() else math.nan
    peak = _nanmax(latency_max) if np.isfinite(latency_max).any() else _nanmax(latency)
    if not math.isfinite(pre_ms) or not np.isfinite(latency).any():
        return StepMetrics(step, end, math.nan, pre_latency_ms=pre_ms, max_latency_ms=peak)
    smooth = _smooth(latency, smooth_bins)
    converged = _back_within(smooth, DOWN_FACTOR * pre_ms)
    # Settling: the same rule against the post-step steady state (median of the window's
    # last steady_window_s), which stays defined when the new level sits above 110 % of
    # the old one (a slower link serialises each frame for longer).
    post_ms = float(np.median(post[np.isfinite(post)])) if np.isfinite(post).any() else math.nan
    settled = _back_within(smooth, DOWN_FACTOR * post_ms) if math.isfinite(post_ms) else None
    # Steady state: from convergence, or from settling when latency never converged.
    first = converged if converged is not None else settled
    return StepMetrics(
        step,
        end,
        converge_s=_since(t, converged, step.t_s),
        settle_s=_since(t, settled, step.t_s),
        steady_kbps=_nanmean(recv[first:]) if first is not None else math.nan,
        pre_latency_ms=pre_ms,
        steady_latency_ms=_nanmean(latency[first:]) if first is not None else math.nan,
        max_latency_ms=peak,
        unconverged=converged is None,
    )


def step_metrics(
    series: pd.DataFrame,
    steps: Sequence[Step] | None = None,
    steady_window_s: float = STEADY_WINDOW_S,
    smooth_s: float = SMOOTH_S,
) -> list[StepMetrics]:
    """Per-step convergence numbers; see the module docstring for the rules."""
    t = series["t_s"].to_numpy(dtype=float)
    if len(t) == 0:
        return []
    bin_s = bin_width(t)
    if bin_s > MAX_BIN_S + _EPS:
        raise ValueError(
            f"convergence needs bins of at most 100 ms, not {bin_s * 1000:g} ms "
            '(set [record] bin = "100ms" or "50ms")'
        )
    steps = detect_steps(series) if steps is None else sorted(steps, key=lambda s: s.t_s)
    recv = series["recv_kbps"].to_numpy(dtype=float)
    cap = series["capacity_kbps"].to_numpy(dtype=float)
    nan = np.full(len(t), np.nan)
    latency = series["latency_ms"].to_numpy(dtype=float) if "latency_ms" in series else nan
    latency_max = (
        series["latency_max_ms"].to_numpy(dtype=float) if "latency_max_ms" in series else nan
    )
    smooth_bins = round(smooth_s / bin_s)
    smooth_bins += 1 - smooth_bins % 2  # odd: centred on the bin itself
    out = []
    run_start, run_end = float(t[0]) - bin_s, float(t[-1])
    for i, step in enumerate(steps):
        end = steps[i + 1].t_s if i + 1 < len(steps) else run_end
        win = _window(t, bin_s, step.t_s, end)
        if win.size == 0:
            continue
        if step.up:
            out.append(_up(step, end, t[win], recv[win], cap[win], smooth_bins))
            continue
        since = max(step.t_s - steady_window_s, steps[i - 1].t_s if i else run_start)
        pre = latency[_window(t, bin_s, since, step.t_s)]
        post = latency[_window(t, bin_s, max(end - steady_window_s, step.t_s), end)]
        out.append(
            _down(
                step,
                end,
                t[win],
                recv[win],
                latency[win],
                latency_max[win],
                pre,
                post,
                smooth_bins,
            )
        )
    return out


def _mean(values: Iterable[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def convergence(
    series: pd.DataFrame,
    steps: Sequence[Step] | None = None,
    steady_window_s: float = STEADY_WINDOW_S,
    smooth_s: float = SMOOTH_S,
) -> dict[str, float]:
    """The §6.2.1 metrics averaged over all steps of each direction (keys: ``COLUMNS``).

    Rates are in Mbps as the thesis quotes them; a direction without steps gives NaN,
    and down steps that never converge are counted in ``down_unconverged`` and left
    out of the averages.
    """
    per_step = step_metrics(series, steps, steady_window_s, smooth_s)
    ups = [m for m in per_step if m.step.up]
    downs = [m for m in per_step if not m.step.up]
    return {
        "converge_up_s": _mean(m.converge_s for m in ups),
        "converge_down_s": _mean(m.converge_s for m in downs),
        "converge_down_settle_s": _mean(m.settle_s for m in downs),
        "up_max_mbps": _mean(m.max_kbps / 1000 for m in ups),
        "up_steady_mbps": _mean(m.steady_kbps / 1000 for m in ups),
        "up_steady_util": _mean(m.steady_util for m in ups),
        "down_latency_pre_ms": _mean(m.pre_latency_ms for m in downs),
        "down_latency_steady_ms": _mean(m.steady_latency_ms for m in downs),
        "down_latency_max_ms": _mean(m.max_latency_ms for m in downs),
        "down_steady_mbps": _mean(m.steady_kbps / 1000 for m in downs),
        "steps_up": float(len(ups)),
        "steps_down": float(len(downs)),
        "down_unconverged": float(sum(m.unconverged for m in downs)),
    }
