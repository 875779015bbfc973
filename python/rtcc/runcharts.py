"""The interactive charts of one run's page (``report.html``, :mod:`rtcc.report`): rates
against the link's capacity, delays over time and delay distributions, drawn with plotly
from the run's tables in the comparison page's look (:mod:`rtcc.charts`).

Each line is thinned as the PNG plots' are (:func:`thin`, shared with :mod:`rtcc.plots`), so
a chart costs the same however long the call; a table or column the run did not record is
left out.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rtcc import charts

if TYPE_CHECKING:
    from rtcc.result import Result

__all__ = ["PALETTE", "RATE_SERIES", "cdfs", "delays", "flow_color", "flows", "rates", "thin"]

# matplotlib's tab10, as hex: every rtcc figure colours its flows in this order.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
)  # fmt: skip


def flow_color(flow: int) -> str:
    """The colour of the ``flow``-th line in every rtcc figure (:data:`PALETTE`, cycled)."""
    return PALETTE[flow % len(PALETTE)]


def flows(df: pd.DataFrame, names: dict[int, str]) -> Iterator[tuple[int, str, pd.DataFrame]]:
    """Per-flow slices of a long-format table, in flow id order."""
    if df.empty or "flow" not in df.columns:
        return
    for flow, part in df.groupby("flow", sort=True):
        fid = int(flow)
        yield fid, names.get(fid, f"flow {fid}"), part


# A line is drawn through at most about this many points: each of half as many
# buckets keeps its lowest and highest point, so spikes survive, and the figure
# costs the same however long the call.
_LINE_POINTS = 4000


def thin(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` cut to at most ``_LINE_POINTS`` points, keeping each bucket's
    extremes in their order."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    buckets = _LINE_POINTS // 2
    if len(xs) <= _LINE_POINTS:
        return xs, ys
    edges = np.linspace(0, len(xs), buckets + 1).astype(np.int64)
    keep = []
    for a, b in itertools.pairwise(edges):
        part = ys[a:b]
        if np.isnan(part).all():
            keep.append(a)
            continue
        keep.extend(sorted({a + int(np.nanargmin(part)), a + int(np.nanargmax(part))}))
    at = np.asarray(keep, dtype=np.int64)
    return xs[at], ys[at]


_LINK = "#222222"
# The rate chart's lines of each flow (time-series column, legend name, line), in drawing
# order: sending wide and light under video so both stay visible where they coincide.
RATE_SERIES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("send_kbps", "sending rate", {"width": 7}),
    ("video_kbps", "video rate", {"width": 1.8}),
    ("padding_kbps", "padding rate", {"width": 1.3, "dash": "dot"}),
    ("target_kbps", "target", {"width": 1.6, "dash": "dash"}),
    ("pacing_kbps", "pacing rate", {"width": 1.3, "dash": "dashdot"}),
    ("capacity_estimate_kbps", "capacity estimate", {"width": 2.2, "dash": "longdash"}),
)
_OPACITY = {"send_kbps": 0.28}
# Series left out of the initial rate axis: a pacing rate runs at a multiple of the target
# (2.5x in libwebrtc) and would squeeze the rest; the modebar's autoscale shows it.
_OFF_SCALE = ("pacing_kbps",)
# Drawn only when the flow has some: a flow that never pads keeps a short legend.
_IF_ANY = ("padding_kbps",)
# A delay distribution is drawn through these quantiles: fine in the tail, where p95, p99
# and the maximum are read.
_GRID = np.unique(np.concatenate([np.linspace(0, 0.9, 91), np.linspace(0.9, 1, 201)]))


def _values(x: Any) -> np.ndarray:
    """Values as float32 (half the page's bytes; 7 digits), NaN kept as a gap."""
    return np.asarray(x, dtype=float).astype(np.float32)


def _line(t: Any, y: Any) -> dict[str, Any]:
    xs, ys = thin(t, y)
    return {"x": _values(xs), "y": _values(ys)}


def _legend(**extra: Any) -> dict[str, Any]:
    # A legend entry hides or shows its own line, not its flow's group.
    return {"title": {"text": ""}, "groupclick": "toggleitem", "tracegroupgap": 14, **extra}


def _drawn(part: pd.DataFrame, column: str) -> bool:
    if column not in part:
        return False
    values = pd.to_numeric(part[column], errors="coerce")
    if column in _IF_ANY:
        return bool((values.fillna(0) != 0).any())
    return bool(values.notna().any())


def _flow_traces(
    table: pd.DataFrame, names: dict[int, str]
) -> Iterator[tuple[int, str, pd.DataFrame, dict[str, Any]]]:
    """Per flow: id, name, rows and the legend group its lines share."""
    for fid, name, part in flows(table, names):
        group = {"legendgroup": f"flow-{fid}", "legendgrouptitle": {"text": name}}
        yield fid, name, part, group


def rates(result: Result) -> tuple[Any, int]:
    """The link's capacity against each flow's sending, video and padding rates and its
    controller's target, pacing rate and capacity estimate (those it reports)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    link = result.table("link", ["t_s", "capacity_kbps"])
    columns = ["flow", "t_s", *(c for c, _, _ in RATE_SERIES)]
    ts = result.table("timeseries", columns)
    tops: list[float] = []
    if {"t_s", "capacity_kbps"} <= set(link.columns) and not link.empty:
        tops.append(float(np.nanmax(link["capacity_kbps"].to_numpy(dtype=float), initial=0)))
        fig.add_trace(
            go.Scatter(
                **_line(link["t_s"], link["capacity_kbps"]), mode="lines", name="link capacity",
                line={"color": _LINK, "width": 2.2, "shape": "hv"}, legendgroup="link",
                legendgrouptitle={"text": "link"},
                hovertemplate="link capacity %{y:,.0f} kbps<extra></extra>",
            )
        )  # fmt: skip
    for fid, name, part, group in _flow_traces(ts, result.flow_names()):
        for column, label, line in RATE_SERIES:
            if not _drawn(part, column):
                continue
            if column not in _OFF_SCALE:
                # A spike of a bin or two (a start-up burst) is not the scale either.
                tops.append(float(np.nanquantile(part[column].to_numpy(dtype=float), 0.99)))
            fig.add_trace(
                go.Scatter(
                    **_line(part["t_s"], part[column]), mode="lines", name=label,
                    line={"color": flow_color(fid), **line}, opacity=_OPACITY.get(column, 1.0),
                    meta=column, **group,
                    hovertemplate=f"{html.escape(name)} {label} %{{y:,.0f}} kbps<extra></extra>",
                )
            )  # fmt: skip
    charts.style(fig, hovermode="x unified", legend=_legend())
    fig.update_xaxes(title_text="time (s)")
    fig.update_yaxes(title_text="rate (kbps)", rangemode="tozero")
    top = max((t for t in tops if np.isfinite(t)), default=0.0)
    if top > 0:
        fig.update_yaxes(range=[0, 1.15 * top])
    return fig, 470


def delays(result: Result) -> tuple[Any, int]:
    """Per time-series bin: the link's queuing delay and each flow's one-way and queuing
    delay; per frame (when frames were recorded): latency and frame delay."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    link = result.table("link", ["t_s", "queue_ms"])
    ts = result.table("timeseries", ["flow", "t_s", "owd_ms", "queue_ms"])
    frames = result.table("frames", ["flow", "capture_s", "latency_ms", "delay_ms"])
    names = result.flow_names()
    per_frame = any(_drawn(frames, c) for c in ("latency_ms", "delay_ms"))
    rows = 2 if per_frame else 1
    titles = ["per 100 ms bin (ms)", "per frame, by capture time (ms)"][:rows]
    fig = make_subplots(
        rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=titles
    )
    if _drawn(link, "queue_ms"):
        fig.add_trace(
            go.Scatter(
                **_line(link["t_s"], link["queue_ms"]), mode="lines", name="link queue",
                line={"color": _LINK, "width": 1.6}, legendgroup="link",
                legendgrouptitle={"text": "link"},
                hovertemplate="link queue %{y:.1f} ms<extra></extra>",
            ),
            row=1, col=1,
        )  # fmt: skip
    bins = (("owd_ms", "one-way delay", "solid"), ("queue_ms", "queuing delay", "dot"))
    per = (("latency_ms", "frame latency", "solid"), ("delay_ms", "frame delay", "dot"))
    tables = ((ts, "t_s", bins, 1), (frames, "capture_s", per, 2))
    for table, x, series, row in tables[:rows]:
        for fid, name, part, group in _flow_traces(table, names):
            for column, label, dash in series:
                if not _drawn(part, column):
                    continue
                fig.add_trace(
                    go.Scatter(
                        **_line(part[x], part[column]), mode="lines", name=label, meta=column,
                        line={"color": flow_color(fid), "width": 1.3, "dash": dash}, **group,
                        hovertemplate=f"{html.escape(name)} {label} %{{y:.1f}} ms<extra></extra>",
                    ),
                    row=row, col=1,
                )  # fmt: skip
    charts.style(fig, hovermode="x unified", legend=_legend())
    fig.update_xaxes(title_text="time (s)", row=rows, col=1)
    fig.update_yaxes(rangemode="tozero")
    return fig, 140 + 320 * rows


# Packets a one-way-delay distribution is read from (every k-th row beyond).
_CDF_SAMPLE = 500_000


def cdfs(result: Result) -> tuple[Any, int] | None:
    """CDFs of frame latency, frame delay and packet one-way delay per flow (those
    recorded), each panel's axis logarithmic when its delays span decades; None when no
    table holds any."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    frames = result.table("frames", ["flow", "latency_ms", "delay_ms"])
    packets = result.table("packets", ["flow", "owd_ms"], max_rows=_CDF_SAMPLE)
    panels = [
        (table, column, title)
        for table, column, title in (
            (frames, "latency_ms", "frame latency (ms)"),
            (frames, "delay_ms", "frame delay (ms)"),
            (packets, "owd_ms", "packet one-way delay (ms)"),
        )
        if _drawn(table, column)
    ]
    if not panels:
        return None
    names = result.flow_names()
    fig = make_subplots(
        rows=1, cols=len(panels), horizontal_spacing=0.08,
        subplot_titles=[t for _, _, t in panels],
    )  # fmt: skip
    shown: set[int] = set()
    for k, (table, column, _) in enumerate(panels):
        lows, highs = [], []
        for fid, name, part in flows(table, names):
            values = pd.to_numeric(part[column], errors="coerce").to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            if not values.size:
                continue
            x = np.quantile(values, _GRID)
            lows.append(float(x[0]))
            highs.append(float(x[-1]))
            fig.add_trace(
                go.Scatter(
                    x=_values(x), y=_values(_GRID), mode="lines", name=name,
                    legendgroup=f"flow-{fid}", showlegend=fid not in shown,
                    line={"color": flow_color(fid), "width": 2, "shape": "hv"},
                    hovertemplate=f"<b>{html.escape(name)}</b><br>%{{y:.1%}} at or below "
                    f"%{{x:.4g}} ms<extra></extra>",
                ),
                row=1, col=k + 1,
            )  # fmt: skip
            shown.add(fid)
        lo, hi = min(lows), max(highs)
        if lo > 0 and hi > charts.LOG_SPAN * lo:
            a, b = np.log10(lo) - 0.05, np.log10(hi) + 0.05
            fig.update_xaxes(
                type="log", range=[a, b], tickmode="array",
                tickvals=charts.log_ticks(10**a, 10**b), row=1, col=k + 1,
            )  # fmt: skip
        fig.update_xaxes(title_text="ms", row=1, col=k + 1)
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    fig.update_yaxes(title_text="CDF", row=1, col=1)
    charts.style(fig, hovermode="closest", legend=_legend(title={"text": "flow"}))
    return fig, 400
