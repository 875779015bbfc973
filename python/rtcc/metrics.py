"""How the comparison report shows and summarises metrics: words, units and scale per
summary column, a run's value over its scheme flows, and confidence intervals of means."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["LEVEL", "METRICS", "Metric", "mean_ci", "metric", "per_run"]

LEVEL = 0.95  # confidence level of every interval on the page


@dataclass(frozen=True)
class Metric:
    """How a metric is shown: its words, unit and display scale (100 for a ratio shown
    in %)."""

    label: str
    unit: str = ""
    scale: float = 1.0

    def title(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


_JAIN_ACTIVE = Metric(
    "Jain's index of goodput, each flow over its active time (jain_goodput_active)"
)
METRICS: dict[str, Metric] = {
    "utilization": Metric("utilisation", "%", 100),
    "utilization_mean": Metric("utilisation, mean per bin", "%", 100),
    "goodput_kbps": Metric("goodput", "kbps", 1),
    "video_kbps": Metric("video bitrate", "kbps", 1),
    "send_kbps": Metric("send rate", "kbps", 1),
    "padding_kbps": Metric("padding", "kbps", 1),
    "owd_ms_mean": Metric("one-way delay, mean", "ms"),
    "owd_ms_p95": Metric("one-way delay, p95", "ms"),
    "queue_delay_ms_mean": Metric("queuing delay, mean", "ms"),
    "queue_delay_ms_p95": Metric("queuing delay, p95", "ms"),
    "sojourn_ms_mean": Metric("bottleneck sojourn, mean", "ms"),
    "sojourn_ms_p95": Metric("bottleneck sojourn, p95", "ms"),
    "frame_latency_ms_mean": Metric("frame latency, mean", "ms"),
    "frame_latency_ms_p95": Metric("frame latency, p95", "ms"),
    "frame_delay_ms_mean": Metric("frame delay, mean", "ms"),
    "frame_delay_ms_p95": Metric("frame delay, p95", "ms"),
    "sender_wait_ms_mean": Metric("sender wait, capture to last packet sent, mean", "ms"),
    "sender_wait_ms_p95": Metric("sender wait, capture to last packet sent, p95", "ms"),
    "freeze_ratio": Metric("freezes", "% of time", 100),
    "freeze_ratio_webrtc": Metric("freezes (WebRTC rule)", "% of time", 100),
    "loss_rate": Metric("loss", "%", 100),
    "psnr_db_mean": Metric("PSNR", "dB"),
    "ssim_db_mean": Metric("SSIM", "dB"),
    "converge_up_s": Metric("convergence after a rise", "s"),
    "converge_down_s": Metric("convergence after a drop", "s"),
    "link_utilization": Metric("link utilisation", "%", 100),
    # The summary's index: each flow's goodput over its own active time, named so as not to
    # be taken for `rtcc fairness`'s index over a window; jain_index is its first name.
    "jain_goodput_active": _JAIN_ACTIVE,
    "jain_index": _JAIN_ACTIVE,
}


def metric(name: str) -> Metric:
    """How ``name`` is shown; a column not in :data:`METRICS` is shown by its name."""
    return METRICS.get(name, Metric(name))


# --- statistics -----------------------------------------------------------------------


def mean_ci(values: Iterable[float], level: float = LEVEL) -> tuple[float, float, int]:
    """(mean, half-width of its two-sided Student-t confidence interval, n) of the finite
    ``values``: half = t(1 - (1 - level)/2, n - 1) * s / sqrt(n), s the sample standard
    deviation. NaN half-width for fewer than two values; NaN mean for none."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, n
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return mean, half, n


def per_run(runs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """One row per finished run (``experiment``, ``scheme``, ``run``, ``trace``, ``seed``,
    and ``flows``, how many scheme flows it had) with each metric's mean over the run's
    scheme flows (a per-flow value: flows of one run may be active over different spans,
    so their rates and utilisations do not add up); NaN where no flow has it."""
    keys = ["experiment", "scheme", "run", "trace", "seed"]
    ok = runs[runs["error"].isna() & runs["scheme_flow"].fillna(False).astype(bool)]
    frame = ok[keys].copy()
    for m in metrics:
        frame[m] = pd.to_numeric(ok[m], errors="coerce") if m in ok else np.nan
    groups = frame.groupby(keys, sort=False, dropna=False)
    out = pd.concat([groups.size().rename("flows"), groups[list(metrics)].mean()], axis=1)
    return out.reset_index()[[*keys, "flows", *metrics]]
