"""Figures of the Dumbo reproduction, as PNG bytes (matplotlib Agg, fixed order and colours).

pulse_rates (thesis Fig. 3-1), pulse_latency (Fig. 3-6), bitrate_breakdown (Figs. 3-9,
6-30), cellular_boxes (Figs. 6-29/6-33: per-scheme spread over traces) and
cellular_utilization (Fig. 6-31: per-bin utilisation pooled over traces).

Every figure is drawn from the data passed in (tables, per-run series, colours); the
thesis's own numbers, drawn beside rtcc's, come from :mod:`rtcc.reproduce.dumbo.thesis`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rtcc.reproduce.dumbo import thesis
from rtcc.reproduce.figures import REFERENCE, render, scheme_color

__all__ = [
    "bitrate_breakdown", "cellular_boxes", "cellular_utilization", "pulse_latency",
    "pulse_rates", "render_all",
]  # fmt: skip

# (scheme, its 100 ms series) per pulse run, in run order
Series = Sequence[tuple[str, pd.DataFrame]]


def pulse_rates(runs: Series, colors: Mapping[str, str]) -> Figure | None:
    if not runs:
        return None
    cols = 2
    rows = (len(runs) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 2.1 * rows), sharex=True, sharey=True)
    flat = np.atleast_1d(axes).ravel()
    for ax, (label, s) in zip(flat, runs, strict=False):
        ax.step(s["t_s"], s["capacity_kbps"] / 1000, where="pre", color="#222", lw=1.3,
                label="capacity")  # fmt: skip
        color = scheme_color(colors, label)
        ax.plot(s["t_s"], s["recv_kbps"] / 1000, color=color, lw=1.0, label="throughput")
        ax.plot(s["t_s"], s["video_kbps"] / 1000, color=color, lw=0.8, ls=":", label="video")
        ax.set_title(label, fontsize=9)
        ax.set_ylim(0, 3.6)
    for ax in flat[len(runs) :]:
        ax.set_visible(False)
    fig.supxlabel("time (s)")
    fig.supylabel("rate (Mbps)")
    fig.suptitle("Pulse link: capacity vs received rate (cf. thesis Fig. 3-1)", x=0.3)
    fig.tight_layout()
    handles, labels = flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=3)
    return fig


def pulse_latency(series: Series, colors: Mapping[str, str]) -> Figure | None:
    runs = [(lab, s) for lab, s in series if s["latency_ms"].notna().any()]
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for label, s in runs:
        ax.plot(s["t_s"], s["latency_ms"], color=scheme_color(colors, label), lw=0.9, label=label)
    ax.set_yscale("log")
    return _labelled(
        fig, ax, "capture time (s)", "frame latency (ms), mean per 100 ms",
        "Pulse link: frame latency (cf. thesis Fig. 3-6)", ncol=3,
    )  # fmt: skip


def bitrate_breakdown(table: pd.DataFrame) -> Figure | None:
    """``table`` is the per-scheme table (table.csv)."""
    table = table[table["runs"] > 0]
    experiments = [e for e in ("pulse", "cellular") if (table["experiment"] == e).any()]
    if not experiments or "video_kbps" not in table:
        return None
    fig, axes = plt.subplots(1, len(experiments), figsize=(5.2 * len(experiments), 3.8))
    for ax, experiment in zip(np.atleast_1d(axes), experiments, strict=True):
        part = table[table["experiment"] == experiment]
        x = np.arange(len(part))
        video = part["video_kbps"].fillna(0).to_numpy()
        dummy = part["padding_kbps"].fillna(0).to_numpy()  # the summary's includes probes
        ax.bar(x, video, color="#1f77b4", label="video")
        ax.bar(x, dummy, bottom=video, color="#ff7f0e", label="padding / dummy (incl. probes)")
        if experiment == "pulse":
            for xi, scheme in zip(x, part["scheme"], strict=True):
                ref = thesis.PULSE.get(scheme, {})
                if "video_kbps" in ref:
                    ax.plot([xi], [ref["video_kbps"]], **REFERENCE.mpl(), label="thesis video")
        ax.set_xticks(x, part["scheme"], rotation=30, ha="right")
        ax.set_ylabel("mean bitrate (kbps)")
        figure = "3-9" if experiment == "pulse" else "6-30"
        ax.set_title(f"{experiment}: video vs dummy (cf. Fig. {figure})")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3)
    return fig


_BOXES = (
    ("frame_latency_ms_mean", "frame latency (ms)", 1.0),
    ("sojourn_ms_mean", "queuing delay (ms)", 1.0),
    ("utilization", "utilisation (%)", 100.0),
    ("video_kbps", "video bitrate (kbps)", 1.0),
)


def cellular_boxes(runs: pd.DataFrame) -> Figure | None:
    """``runs`` is the per-run table (runs.csv)."""
    if runs.empty or "experiment" not in runs:
        return None
    runs = runs[(runs["experiment"] == "cellular") & runs["error"].isna()]
    if runs.empty:
        return None
    schemes = list(dict.fromkeys(runs["scheme"]))
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.6))
    for ax, (column, title, scale) in zip(axes.ravel(), _BOXES, strict=True):
        data = [runs.loc[runs["scheme"] == s, column].dropna().to_numpy() * scale for s in schemes]
        ax.boxplot(data, showmeans=True)
        ref = [thesis.CELLULAR.get(s, {}).get(column, np.nan) * scale for s in schemes]
        ax.plot(
            np.arange(1, len(schemes) + 1), ref, **REFERENCE.mpl(), label="thesis mean"
        )
        ax.set_xticks(np.arange(1, len(schemes) + 1), schemes, rotation=30, ha="right")
        ax.set_title(title)
    axes[0, 0].legend()
    fig.suptitle("Cellular traces: per-trace means by scheme (cf. Figs. 6-29, 6-33)")
    fig.tight_layout()
    return fig


def cellular_utilization(
    pooled: Mapping[str, Sequence[float]], colors: Mapping[str, str]
) -> Figure | None:
    """``pooled``: per scheme, the utilisation quantiles of all its traces together."""
    if not pooled:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for scheme, values in pooled.items():
        v = np.sort(np.asarray(values)) * 100
        y = np.arange(1, v.size + 1) / v.size
        ax.step(v, y, where="post", color=scheme_color(colors, scheme), label=scheme)
    ax.set_xlim(0, 110)
    return _labelled(
        fig, ax, "utilisation per 100 ms bin (%)", "CDF",
        "Cellular traces: link utilisation per sample (cf. Fig. 6-31)", ncol=2,
    )  # fmt: skip


def _labelled(fig: Figure, ax: Axes, xlabel: str, ylabel: str, title: str, ncol: int) -> Figure:
    """A one-panel figure with its axis labels, title and legend, laid out."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(ncol=ncol)
    fig.tight_layout()
    return fig


def render_all(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    pulse_series: Series,
    utilization: Mapping[str, Sequence[float]],
    colors: Mapping[str, str],
) -> dict[str, tuple[bytes, str]]:
    """``{filename: (png, caption)}`` for every figure there is data for: ``table`` and
    ``runs`` are table.csv and runs.csv, ``pulse_series`` each pulse run's series,
    ``utilization`` each scheme's pooled cellular utilisation quantiles, ``colors`` a colour
    per scheme (:func:`rtcc.reproduce.figures.scheme_colors`)."""
    return render({
        "pulse_rates.png": (partial(pulse_rates, pulse_series, colors),
                            "Capacity against each scheme's received rate (throughput, all "
                            "bytes) and video rate on the pulse link."),
        "pulse_latency.png": (partial(pulse_latency, pulse_series, colors),
                              "Frame latency per 100 ms of capture time."),
        "bitrate_breakdown.png": (partial(bitrate_breakdown, table),
                                  "Mean video and padding/dummy bitrate per scheme; the "
                                  "diamond is the thesis's number where it gives one."),
        "cellular_boxes.png": (partial(cellular_boxes, runs),
                               "Spread over traces of each scheme's per-trace means "
                               "(triangle: their mean); red diamonds are the thesis's means "
                               "over its 16 traces."),
        "cellular_utilization.png": (partial(cellular_utilization, utilization, colors),
                                     "Per-bin utilisation over all traces (each trace "
                                     "weighted equally)."),
    })  # fmt: skip
