"""The standard plots of a run, rendered to PNG bytes with matplotlib's Agg backend.

Every figure is built from the tables alone, drawn in a fixed order with fixed
colours, and saved without the "Software" PNG tag, so the same run gives the same
bytes. Plots tolerate missing columns and empty tables (a run recorded without
packets, or a flow that never sent).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: no display needed

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

# Shared with the run page's interactive charts, which need no matplotlib.
from rtcc.runcharts import flow_color, flows, thin

if TYPE_CHECKING:
    from rtcc.result import Result

__all__ = [
    "PLOTS", "cdf", "flow_color", "flows", "frame_delay", "queue", "rates", "render_all", "style",
    "thin", "to_png",
]  # fmt: skip

DPI = 110
_SIZE = (9.0, 4.2)
_CAPACITY = "#222222"
_STYLE: dict[str, Any] = {
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "font.size": 9,
    "svg.hashsalt": "rtcc",
}


def _has(df: pd.DataFrame, *columns: str) -> bool:
    return not df.empty and all(c in df.columns for c in columns)


def _empty(ax: Axes, what: str) -> None:
    ax.text(
        0.5,
        0.5,
        f"no {what} recorded",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#777777",
    )


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best")


# The controller's rates beside a flow's own, where it reports them (time-series column,
# legend name, line style).
_CONTROLLER_RATES = (
    ("target_kbps", "target", "--"),
    ("capacity_estimate_kbps", "capacity estimate", (0, (7, 2, 1, 2))),
)


def rates(result: Result) -> Figure:
    """Link capacity against each flow's sending, video and padding rate, and its
    controller's target and capacity estimate."""
    fig, ax = plt.subplots(figsize=_SIZE)
    link = result.table("link", ["t_s", "capacity_kbps"])
    columns = ["send_kbps", "video_kbps", "padding_kbps", *(c for c, _, _ in _CONTROLLER_RATES)]
    ts = result.table("timeseries", ["flow", "t_s", *columns])
    names = result.flow_names()
    if _has(link, "t_s", "capacity_kbps"):
        ax.step(
            *thin(link["t_s"], link["capacity_kbps"]),
            where="post",
            color=_CAPACITY,
            lw=1.6,
            label="link capacity",
        )
    drawn = False
    for fid, name, part in flows(ts, names):
        color = flow_color(fid)
        # Sending (video + padding + probes + FEC + rtx) is drawn light, video on top of it,
        # so the two stay distinguishable where they coincide.
        if "send_kbps" in part:
            ax.plot(
                *thin(part["t_s"], part["send_kbps"]), color=color, lw=2.2, alpha=0.35,
                label=f"{name} sending",
            )  # fmt: skip
            drawn = True
        if "video_kbps" in part:
            video = thin(part["t_s"], part["video_kbps"])
            ax.plot(*video, color=color, lw=1.0, label=f"{name} video")
            drawn = True
        # Padding only when the flow pads, to keep legends short for the rest.
        if "padding_kbps" in part and np.nansum(part["padding_kbps"].to_numpy()) > 0:
            ax.plot(
                *thin(part["t_s"], part["padding_kbps"]),
                color=color,
                lw=0.9,
                ls=":",
                label=f"{name} padding",
            )
        for column, label, ls in _CONTROLLER_RATES:
            if column in part and part[column].notna().any():
                ax.plot(
                    *thin(part["t_s"], part[column]), color=color, lw=0.9, ls=ls,
                    label=f"{name} {label}",
                )  # fmt: skip
    if not drawn and not _has(link, "capacity_kbps"):
        _empty(ax, "rates")
    ax.set_ylim(bottom=0)
    _finish(ax, "Sending rate vs link capacity", "time (s)", "rate (kbps)")
    return fig


def queue(result: Result) -> Figure:
    """Bottleneck queuing delay, overall and as seen by each flow's packets."""
    fig, ax = plt.subplots(figsize=_SIZE)
    link = result.table("link", ["t_s", "queue_ms"])
    ts = result.table("timeseries", ["flow", "t_s", "queue_ms"])
    names = result.flow_names()
    drawn = False
    if _has(link, "t_s", "queue_ms"):
        ax.plot(*thin(link["t_s"], link["queue_ms"]), color=_CAPACITY, lw=1.4, label="link queue")
        drawn = True
    for fid, name, part in flows(ts, names):
        if "queue_ms" in part:
            ax.plot(
                *thin(part["t_s"], part["queue_ms"]),
                color=flow_color(fid),
                lw=1.0,
                label=f"{name} queuing delay",
            )
            drawn = True
    if not drawn:
        _empty(ax, "queue")
    ax.set_ylim(bottom=0)
    _finish(ax, "Queuing delay at the bottleneck", "time (s)", "queuing delay (ms)")
    return fig


def frame_delay(result: Result) -> Figure:
    """Frame latency (capture to display) and frame delay (encoded to complete)."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(_SIZE[0], _SIZE[1] * 1.5), sharex=True)
    frames = result.table("frames", ["flow", "capture_s", "latency_ms", "delay_ms"])
    names = result.flow_names()
    for ax, column, title in (
        (top, "latency_ms", "Frame latency (capture \u2192 display)"),
        (bottom, "delay_ms", "Frame delay (encoded \u2192 received)"),
    ):
        drawn = False
        for fid, name, part in flows(frames, names):
            if "capture_s" in part and column in part:
                ax.plot(
                    *thin(part["capture_s"], part[column]),
                    color=flow_color(fid),
                    lw=0.9,
                    marker=".",
                    ms=2,
                    label=name,
                )
                drawn = True
        if not drawn:
            _empty(ax, "frames")
        ax.set_ylim(bottom=0)
        _finish(ax, title, "capture time (s)" if ax is bottom else "", f"{column[:-3]} (ms)")
    fig.tight_layout()
    return fig


# Delays spanning more than this ratio (a few ms to seconds of queue) get a log axis,
# so the body of the distribution is not squashed against the y axis by its tail.
_LOG_SPAN = 30.0


# A CDF is drawn through at most this many of its points (evenly spaced ranks, the
# extremes included): finer than the figure's pixels, bounded however long the call.
_CDF_POINTS = 20_000
_CDF_SAMPLE = 500_000


def _cdf(ax: Axes, values: np.ndarray, color: str, label: str) -> tuple[float, float] | None:
    values = np.sort(values[np.isfinite(values)])
    if values.size == 0:
        return None
    y = np.arange(1, values.size + 1) / values.size
    if values.size > _CDF_POINTS:
        keep = np.unique(np.linspace(0, values.size - 1, _CDF_POINTS).round().astype(np.int64))
        values, y = values[keep], y[keep]
    ax.step(values, y, where="post", color=color, lw=1.2, label=label)
    return float(values[0]), float(values[-1])


def cdf(result: Result) -> Figure:
    """CDFs of frame latency, frame delay and packet one-way delay per flow."""
    fig, axes = plt.subplots(1, 3, figsize=(_SIZE[0] * 1.3, _SIZE[1]), sharey=True)
    names = result.flow_names()
    frames = result.table("frames", ["flow", "latency_ms", "delay_ms"])
    # Every k-th packet: a CDF of a few hundred thousand is the same picture.
    packets = result.table("packets", ["flow", "owd_ms"], max_rows=_CDF_SAMPLE)
    panels = (
        (frames, "latency_ms", "Frame latency", "frame latency (ms)", "frames"),
        (frames, "delay_ms", "Frame delay", "frame delay (ms)", "frames"),
        (packets, "owd_ms", "One-way delay", "one-way delay (ms)", "packets"),
    )
    for ax, (table, column, title, xlabel, what) in zip(axes, panels, strict=True):
        ranges = []
        for fid, name, part in flows(table, names):
            if column in part:
                span = _cdf(ax, part[column].to_numpy(dtype=float), flow_color(fid), name)
                if span is not None:
                    ranges.append(span)
        if not ranges:
            _empty(ax, what)
        else:
            low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
            if low > 0 and high / low > _LOG_SPAN:
                ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        _finish(ax, title, xlabel, "CDF" if ax is axes[0] else "")
    fig.tight_layout()
    return fig


PLOTS: dict[str, Callable[[Result], Figure]] = {
    "rates.png": rates,
    "queue.png": queue,
    "frame_delay.png": frame_delay,
    "cdf.png": cdf,
}


def to_png(fig: Figure) -> bytes:
    """Render and close a figure; no timestamp or version metadata in the PNG."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


@contextmanager
def style() -> Iterator[None]:
    """rtcc's figure style (matplotlib's defaults, light grid, no top/right spines); every
    figure rtcc draws is built inside it, so runs and reproductions look alike."""
    with plt.style.context("default"), matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        yield


def render_all(result: Result) -> dict[str, bytes]:
    """Every standard plot as ``{filename: png bytes}``, in a fixed order."""
    images: dict[str, bytes] = {}
    with style():
        for filename, plot in PLOTS.items():
            images[filename] = to_png(plot(result))
    return images
