"""The comparison page's interactive charts (plotly): delay against utilisation, CDFs,
boxes and time series, each built from tidy tables, and their embedding in the page.

Every chart shares one look (:func:`layout`), one colour per scheme across the page, and
a legend whose entries toggle a scheme in every panel of a chart (``legendgroup``).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rtcc.metrics import mean_ci, metric
from rtcc.runset import DISTRIBUTIONS

__all__ = ["Charts", "boxes", "cdfs", "layout", "log_ticks", "scatter", "series"]

_FONT = 'system-ui, -apple-system, "Segoe UI", sans-serif'
_CONFIG = {"displaylogo": False, "responsive": True, "scrollZoom": False}
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star")
_DASHES = ("solid", "dash", "dot", "dashdot")
_CDF_SCALE = {"utilization": 100.0}
_CDF_UNIT = {
    "utilization": "%", "frame_latency_ms": "ms", "bin_latency_ms": "ms", "recv_kbps": "kbps",
}  # fmt: skip
_LOG_CDFS = ("frame_latency_ms", "bin_latency_ms")
# A delay axis turns logarithmic when its values span more than this factor.
LOG_SPAN = 10.0
_DASH = "\u2013"


class Charts:
    """Numbers the page's chart elements and turns figures into them: a ``<div>`` with
    ``data-kind`` (scatter, cdf, box, series) and ``data-experiment``, and the script that
    draws it."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, fig: Any, kind: str, experiment: str | None, height: int) -> str:
        self.count += 1
        div = f"chart-{self.count}"
        data = json.loads(fig.to_json())
        data["layout"]["height"] = height
        # "</" would end the <script> element early, whatever a label holds.
        payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        config = json.dumps({**_CONFIG, "toImageButtonOptions": {"filename": div, "scale": 2}})
        where = f' data-experiment="{html.escape(experiment)}"' if experiment is not None else ""
        return (
            f'<div class="chart" id="{div}" data-kind="{kind}"{where} '
            f'style="height:{height}px"></div>\n'
            f"<script>(function(){{var f={payload};"
            f'Plotly.newPlot("{div}",f.data,f.layout,{config});}})();</script>'
        )


def _axis() -> dict[str, Any]:
    return {
        "gridcolor": "#e8e8ec", "linecolor": "#999", "zeroline": False, "ticks": "outside",
        "tickcolor": "#999", "automargin": True, "title": {"standoff": 8},
    }  # fmt: skip


def layout(**extra: Any) -> dict[str, Any]:
    """The look every chart shares; ``extra`` overrides."""
    base: dict[str, Any] = {
        "template": "none",
        "font": {"family": _FONT, "size": 13, "color": "#1d1d1f"},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "margin": {"l": 70, "r": 20, "t": 40, "b": 60},
        "hoverlabel": {"font": {"family": _FONT}},
        "legend": {"title": {"text": "scheme"}, "itemclick": "toggle",
                   "itemdoubleclick": "toggleothers"},
    }  # fmt: skip
    base.update(extra)
    return base


def _style(fig: Any, **extra: Any) -> None:
    fig.update_layout(**layout(**extra))
    fig.update_xaxes(**_axis())
    fig.update_yaxes(**_axis())
    fig.update_annotations(font_size=13)


def _round(values: Iterable[Any], digits: int = 4) -> list[float | None]:
    """Values to ``digits`` significant digits (keeps the page small), None for NaN."""
    out: list[float | None] = []
    for v in values:
        f = math.nan if v is None or v is pd.NA else float(v)
        out.append(None if not math.isfinite(f) else float(f"{f:.{digits}g}"))
    return out


def log_ticks(lo: float, hi: float) -> list[float]:
    """The 1-2-5 values from ``lo`` to ``hi`` (both > 0): readable ticks on a log axis."""
    out = []
    for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0**exponent
            if lo <= value <= hi:
                out.append(float(f"{value:.12g}"))
    return out


def _span(values: Sequence[float], log: bool) -> tuple[float, float]:
    """An axis range around ``values`` with a margin (in log10 units on a log axis)."""
    v = np.asarray(values, dtype=float)
    if log:
        v = np.log10(v[v > 0])
    lo, hi = float(v.min()), float(v.max())
    pad = 0.1 * (hi - lo) if hi > lo else (0.1 if log else max(abs(hi) * 0.1, 1.0))
    return lo - pad, hi + pad


# --- delay against utilisation --------------------------------------------------------


def _scatter_state(
    mine: pd.DataFrame, schemes: Sequence[str], delay: str, rate: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-trace data (each scheme's runs, then its mean) and the axes for one pair."""
    dx, ry = metric(delay), metric(rate)
    traces: list[dict[str, Any]] = []
    xs: list[float] = []
    ys: list[float] = []
    for s in schemes:
        part = mine[mine["scheme"] == s]
        x = part[delay].to_numpy(dtype=float) * dx.scale
        y = part[rate].to_numpy(dtype=float) * ry.scale
        keep = np.isfinite(x) & np.isfinite(y)
        info = [
            [_DASH if t is None or pd.isna(t) else str(t), "" if pd.isna(sd) else str(sd),
             str(r)[:12]]
            for t, sd, r in zip(part["trace"][keep], part["seed"][keep], part["run"][keep],
                                strict=True)
        ]  # fmt: skip
        traces.append(
            {
                "x": _round(x[keep]), "y": _round(y[keep]), "customdata": info,
                "hovertemplate": f"<b>{html.escape(s)}</b><br>%{{customdata[0]}}, seed "
                f"%{{customdata[1]}}<br>{dx.title()}: %{{x:.4g}}<br>{ry.title()}: %{{y:.4g}}"
                "<br>run %{customdata[2]}<extra></extra>",
            }
        )  # fmt: skip
        mx, hx, n = mean_ci(x[keep])
        my, hy, _ = mean_ci(y[keep])
        if n:
            xs += [*x[keep], mx]
            ys += [*y[keep], my]
        bars = {"type": "data", "visible": n > 1, "thickness": 1.6, "width": 5}
        traces.append(
            {
                "x": _round([mx]), "y": _round([my]),
                "error_x": {**bars, "array": _round([hx if n > 1 else 0])},
                "error_y": {**bars, "array": _round([hy if n > 1 else 0])},
                "hovertemplate": f"<b>{html.escape(s)}</b>, mean of {n} run"
                f"{'s' if n != 1 else ''}<br>{dx.title()}: %{{x:.4g}}"
                + (f" \u00b1 {hx:.3g}" if n > 1 else "")
                + f"<br>{ry.title()}: %{{y:.4g}}"
                + (f" \u00b1 {hy:.3g}" if n > 1 else "")
                + "<extra></extra>",
            }
        )  # fmt: skip
    positive = [v for v in xs if v > 0]
    log = len(positive) == len(xs) > 1 and max(positive) > LOG_SPAN * min(positive)
    axes: dict[str, Any] = {
        "xaxis.title.text": f"{dx.title()}, axis inverted",
        "xaxis.type": "log" if log else "linear",
        "yaxis.title.text": ry.title(),
        "xaxis.tickmode": "auto",
        "xaxis.tickvals": None,
        "xaxis.autorange": "reversed",
        "yaxis.autorange": True,
    }
    # The points set the ranges; an interval reaching past them is cut at the edge (the
    # modebar's autoscale shows all of it).
    if xs:
        lo, hi = _span(xs, log)
        axes.update({"xaxis.autorange": False, "xaxis.range": [hi, lo]})
        if log:
            axes.update({"xaxis.tickmode": "array",
                         "xaxis.tickvals": log_ticks(10**lo, 10**hi)})  # fmt: skip
        ylo, yhi = _span(ys, False)
        axes.update({"yaxis.autorange": False, "yaxis.range": [ylo, yhi]})
    return traces, axes


def scatter(
    mine: pd.DataFrame,
    schemes: Sequence[str],
    colors: Mapping[str, str],
    pairs: Sequence[tuple[str, str]],
) -> Any:
    """Pantheon's view of one experiment's runs (``mine``, one row per run): per scheme
    its runs (small) and their mean with its confidence intervals (large), delay on an
    inverted x axis; a menu switches between the (delay, rate) ``pairs``."""
    import plotly.graph_objects as go

    states = [_scatter_state(mine, schemes, d, r) for d, r in pairs]
    traces, axes = states[0]
    fig = go.Figure()
    for i, s in enumerate(schemes):
        runs, mean = traces[2 * i], traces[2 * i + 1]
        fig.add_trace(
            go.Scatter(
                mode="markers", name=s, legendgroup=s, showlegend=False,
                marker={"color": colors[s], "size": 7, "opacity": 0.4}, **runs,
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                mode="markers", name=s, legendgroup=s,
                marker={"color": colors[s], "size": 15, "symbol": _SYMBOLS[i % len(_SYMBOLS)],
                        "line": {"color": "white", "width": 1.5}},
                **mean,
            )
        )  # fmt: skip
    buttons = []
    for (d, r), (data, ax) in zip(pairs, states, strict=True):
        restyle = {
            key: [t.get(key, {"visible": False} if key.startswith("error") else None)
                  for t in data]
            for key in ("x", "y", "customdata", "hovertemplate", "error_x", "error_y")
        }  # fmt: skip
        label = f"x: {metric(d).label}, y: {metric(r).label}"
        buttons.append({"label": label, "method": "update", "args": [restyle, ax]})
    extra: dict[str, Any] = {
        "hovermode": "closest",
        "margin": {"l": 70, "r": 20, "t": 64, "b": 60},
        "annotations": [
            {"xref": "paper", "yref": "paper", "x": 1, "y": 1.02, "xanchor": "right",
             "yanchor": "bottom", "showarrow": False, "text": "better \u2197",
             "font": {"color": "#555", "size": 13}},
        ],
    }  # fmt: skip
    if len(buttons) > 1:
        extra["updatemenus"] = [
            {"buttons": buttons, "direction": "down", "x": 0, "xanchor": "left", "y": 1.02,
             "yanchor": "bottom", "showactive": True, "bgcolor": "#f5f5f7",
             "bordercolor": "#ccc", "font": {"size": 12}, "pad": {"b": 4}},
        ]  # fmt: skip
    _style(fig, **extra)
    fig.update_layout(**{k.replace(".", "_"): v for k, v in axes.items()})
    return fig


# --- distributions and boxes ----------------------------------------------------------


def cdfs(
    rows: pd.DataFrame,
    distributions: pd.DataFrame,
    schemes: Sequence[str],
    colors: Mapping[str, str],
) -> tuple[Any, int] | None:
    """Per-scheme CDFs of each distribution the runs kept (one panel each), pooling the
    runs' quantiles so every run weighs the same; None when there are none. ``rows`` are
    the experiment's flows (``run``, ``flow``, ``scheme``)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    flows = rows[["run", "flow", "scheme"]].dropna(subset=["run", "flow"]).drop_duplicates()
    flows = flows.assign(flow=flows["flow"].astype("int64"))
    dist = distributions.assign(flow=distributions["flow"].astype("int64")).merge(
        flows, on=["run", "flow"]
    )
    names = [m for m in DISTRIBUTIONS if (dist["metric"] == m).any()]
    if not names:
        return None
    cols = min(2, len(names))
    nrows = math.ceil(len(names) / cols)
    fig = make_subplots(
        rows=nrows, cols=cols, horizontal_spacing=0.1, vertical_spacing=0.2 if nrows > 1 else 0,
        subplot_titles=[f"{DISTRIBUTIONS[m]} ({_CDF_UNIT[m]})" for m in names],
    )  # fmt: skip
    grid = np.linspace(0, 1, 201)
    shown: set[str] = set()
    for k, m in enumerate(names):
        part = dist[dist["metric"] == m]
        where = {"row": k // cols + 1, "col": k % cols + 1}
        tops = []
        for i, s in enumerate(schemes):
            pooled = part.loc[part["scheme"] == s, "value"].to_numpy(dtype=float)
            pooled = pooled[np.isfinite(pooled)] * _CDF_SCALE.get(m, 1.0)
            if not len(pooled):
                continue
            x = np.quantile(pooled, grid)
            tops.append(float(np.quantile(pooled, 0.99)))
            fig.add_trace(
                go.Scatter(
                    x=_round(x), y=_round(grid, 3), mode="lines", name=s, legendgroup=s,
                    showlegend=s not in shown,
                    line={"color": colors[s], "width": 2, "dash": _DASHES[(i // 10) % 4]},
                    hovertemplate=f"<b>{html.escape(s)}</b><br>%{{y:.0%}} at or below "
                    f"%{{x:.4g}} {_CDF_UNIT[m]}<extra></extra>",
                ),
                **where,
            )  # fmt: skip
            shown.add(s)
            tops.append(float(x[0]))
        # Up to every scheme's 99th percentile: a long tail (bunched trace deliveries)
        # would squeeze the rest; zooming out shows it.
        lo, hi = min(tops), max(tops)
        if m in _LOG_CDFS and lo > 0 and hi > LOG_SPAN * 2 * lo:
            # Latency tails span decades: a log axis keeps the short ones readable.
            a, b = _span([lo, hi], True)
            fig.update_xaxes(
                title_text=_CDF_UNIT[m], type="log", range=[a, b], tickmode="array",
                tickvals=log_ticks(10**a, 10**b), **where,
            )  # fmt: skip
        else:
            pad = 0.03 * (hi - lo) if hi > lo else 1.0
            fig.update_xaxes(title_text=_CDF_UNIT[m], range=[lo - pad, hi + pad], **where)
        fig.update_yaxes(title_text="CDF", range=[0, 1.02], tickformat=".0%", **where)
    _style(fig)
    return fig, 100 + 340 * nrows


def boxes(
    mine: pd.DataFrame, schemes: Sequence[str], colors: Mapping[str, str], names: Sequence[str]
) -> tuple[Any, int]:
    """One panel per metric of ``names``: a box of each scheme's runs (one row per run)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    cols = min(3, len(names))
    nrows = math.ceil(len(names) / cols)
    fig = make_subplots(
        rows=nrows, cols=cols, subplot_titles=[metric(m).title() for m in names],
        horizontal_spacing=0.08, vertical_spacing=0.14 if nrows > 1 else 0,
    )  # fmt: skip
    for k, m in enumerate(names):
        scale = metric(m).scale
        for s in schemes:
            part = mine[mine["scheme"] == s]
            y = part[m].to_numpy(dtype=float) * scale
            keep = np.isfinite(y)
            if not keep.any():
                continue
            info = [
                [_DASH if t is None or pd.isna(t) else str(t), str(r)[:12]]
                for t, r in zip(part["trace"][keep], part["run"][keep], strict=True)
            ]
            fig.add_trace(
                go.Box(
                    y=_round(y[keep]), name=s, legendgroup=s, showlegend=k == 0,
                    marker={"color": colors[s], "size": 5}, line={"width": 1.5},
                    boxpoints="all", jitter=0.3, pointpos=0, customdata=info,
                    hovertemplate=f"<b>{html.escape(s)}</b><br>%{{customdata[0]}}<br>"
                    f"{metric(m).title()}: %{{y:.4g}}<br>run %{{customdata[1]}}<extra></extra>",
                ),
                row=k // cols + 1, col=k % cols + 1,
            )  # fmt: skip
    _style(fig)
    fig.update_xaxes(showticklabels=False, ticks="")
    return fig, 90 + 300 * nrows


# --- time series ----------------------------------------------------------------------


def series(
    part: pd.DataFrame, labels: pd.DataFrame, keys: Sequence[str], colors: Mapping[str, str]
) -> tuple[Any, int]:
    """The chosen runs ``keys`` over time: received bitrate against the link's capacity,
    and frame latency (or one-way delay) per bin; ``labels`` is indexed by run key."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    latency = "latency_ms" in part and pd.to_numeric(part["latency_ms"]).notna().any()
    delay = "latency_ms" if latency else "owd_ms"
    delay_title = "frame latency, mean per bin (ms)" if latency else "one-way delay (ms)"
    rows = 2 if delay in part else 1
    fig = make_subplots(
        rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.1,
        subplot_titles=["received bitrate (kbps)", delay_title][:rows],
    )  # fmt: skip
    capacities: set[str] = set()
    used: dict[str, int] = {}
    delays: list[float] = []
    for key in keys:
        mine = part[part["run"] == key]
        row = labels.loc[key]
        scheme = str(row["scheme"])
        trace = "" if pd.isna(row["trace"]) else str(row["trace"])
        seed = "" if pd.isna(row["seed"]) else f", seed {row['seed']}"
        dash = _DASHES[used.get(scheme, 0) % 4]  # a scheme's second run is dashed
        used[scheme] = used.get(scheme, 0) + 1
        flows = sorted(mine["flow"].unique())
        for flow in flows:
            one = mine[mine["flow"] == flow]
            name = f"{scheme} \u00b7 {trace}{seed}"
            if len(flows) > 1:
                name += f" \u00b7 flow {flow}"
            group = f"{key}-{flow}"
            t = _round(one["t_s"], 6)
            rate = "recv_kbps" if "recv_kbps" in one else "video_kbps"
            line = {"color": colors.get(scheme, "#333"), "width": 1.6, "dash": dash}
            fig.add_trace(
                go.Scatter(
                    x=t, y=_round(one[rate]), mode="lines", name=name, legendgroup=group,
                    line=line, hovertemplate=f"<b>{html.escape(name)}</b><br>%{{x:.1f}} s: "
                    "%{y:.0f} kbps<extra></extra>",
                ),
                row=1, col=1,
            )  # fmt: skip
            if rows == 2:
                values = pd.to_numeric(one[delay], errors="coerce")
                delays += [v for v in values.dropna() if v > 0]
                fig.add_trace(
                    go.Scatter(
                        x=t, y=_round(values), mode="lines", name=name, legendgroup=group,
                        showlegend=False, line=line,
                        hovertemplate=f"<b>{html.escape(name)}</b><br>%{{x:.1f}} s: "
                        "%{y:.0f} ms<extra></extra>",
                    ),
                    row=2, col=1,
                )  # fmt: skip
            if "capacity_kbps" in one and trace not in capacities:
                capacities.add(trace)
                fig.add_trace(
                    go.Scatter(
                        x=t, y=_round(one["capacity_kbps"]), mode="lines",
                        name=f"capacity \u00b7 {trace}" if trace else "capacity",
                        line={"color": "#888", "width": 1.2, "dash": "dot"},
                        hovertemplate="%{x:.1f} s: capacity %{y:.0f} kbps<extra></extra>",
                    ),
                    row=1, col=1,
                )  # fmt: skip
    _style(fig, hovermode="closest", legend={"title": {"text": "run"}})
    if delays and max(delays) > LOG_SPAN * 3 * min(delays):
        lo, hi = min(delays), max(delays)
        fig.update_yaxes(type="log", tickmode="array", tickvals=log_ticks(lo, hi), row=2, col=1)
    fig.update_xaxes(title_text="time (s)", row=rows, col=1)
    return fig, 140 + 300 * rows
