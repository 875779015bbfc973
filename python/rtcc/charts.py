"""The comparison page's interactive charts (plotly): delay against utilisation, CDFs,
boxes and time series, each built from tidy tables, and their embedding in the page.

Every chart shares one look (:func:`layout`), one colour per scheme across the page, and
a legend whose entries toggle a scheme in every panel of a chart (``legendgroup``).
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rtcc.metrics import mean_ci, metric
from rtcc.runset import DISTRIBUTIONS
from rtcc.styles import styles

__all__ = [
    "Charts", "boxes", "bundle", "cdfs", "decimate", "figures_of", "geometric_ci", "layout",
    "log_ticks", "scatter", "series", "style",
]  # fmt: skip

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
    """Numbers the page's chart elements and keeps their figures: :meth:`add` gives a
    ``<div>`` with ``data-kind`` (scatter, cdf, box, series) and ``data-experiment``;
    :meth:`scripts` the one bundle that draws them all (:func:`bundle`)."""

    def __init__(self) -> None:
        self.count = 0
        self.figures: dict[str, dict[str, Any]] = {}

    def add(self, fig: Any, kind: str, experiment: str | None, height: int) -> str:
        self.count += 1
        div = f"chart-{self.count}"
        data = json.loads(fig.to_json())
        data["layout"]["height"] = height
        data["config"] = {**_CONFIG, "toImageButtonOptions": {"filename": div, "scale": 2}}
        self.figures[div] = data
        where = f' data-experiment="{html.escape(experiment)}"' if experiment is not None else ""
        return (
            f'<div class="chart" id="{div}" data-kind="{kind}"{where} '
            f'style="height:{height}px"></div>'
        )

    def scripts(self) -> str:
        """plotly.js and every figure, compressed, with the script that draws them."""
        return bundle(self.figures)


# Inflates plotly.js and the figures (gzip, base64) once the page has loaded, draws the
# charts in view first (IntersectionObserver), then the rest one at a time while idle,
# so the first screen is drawn without waiting for a hundred charts.
_LOADER = """<script>
(async function () {
  async function inflate(id) {
    const text = atob(document.getElementById(id).textContent.trim());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }
  const [js, json] = await Promise.all([inflate("rtcc-plotly"), inflate("rtcc-figures")]);
  // A script element: V8 compiles it lazily, where eval would compile all of it now.
  const lib = document.createElement("script");
  lib.text = js;
  document.head.appendChild(lib);
  const figures = JSON.parse(json);
  const charts = [...document.querySelectorAll(".chart")];
  const drawn = new Set();
  function draw(el) {
    if (drawn.has(el.id)) return;
    drawn.add(el.id);
    const f = figures[el.id];
    if (f) Plotly.newPlot(el, f.data, f.layout, f.config);
  }
  const seen = new IntersectionObserver((entries) => entries.forEach((e) => {
    if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
  }), { rootMargin: "400px 0px" });
  charts.forEach((el) => seen.observe(el));
  let next = 0;
  function rest() {
    while (next < charts.length && drawn.has(charts[next].id)) next++;
    if (next < charts.length) { draw(charts[next]); setTimeout(rest, 30); }
  }
  setTimeout(rest, 300);
})();
</script>"""


@functools.lru_cache(maxsize=1)
def _plotly_gz() -> str:
    import plotly

    return _gz64(plotly.offline.get_plotlyjs())


def _gz64(text: str) -> str:
    # mtime 0: the same page byte for byte from the same runs.
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 9, mtime=0)).decode("ascii")


def bundle(figures: Mapping[str, Any]) -> str:
    """The page's scripts: plotly.js (embedded once) and ``figures`` (element id -> plotly
    figure dict with ``config``), each gzip-compressed in base64, and the loader that
    inflates them in the browser (``DecompressionStream``) and draws each chart."""
    data = json.dumps(figures, separators=(",", ":"), sort_keys=False)
    return (
        f'<script id="rtcc-plotly" type="application/octet-stream">{_plotly_gz()}</script>\n'
        f'<script id="rtcc-figures" type="application/octet-stream">{_gz64(data)}</script>\n'
        + _LOADER
    )


def figures_of(page: str) -> dict[str, Any]:
    """The figures a page holds (element id -> plotly figure dict), read back from its
    bundle: what the browser draws, for checks outside one."""
    import re

    found = re.search(r'<script id="rtcc-figures" type="application/octet-stream">([^<]*)<', page)
    if found is None:
        return {}
    return dict(json.loads(gzip.decompress(base64.b64decode(found.group(1)))))


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


def style(fig: Any, **extra: Any) -> None:
    """Gives ``fig`` the look of this page's charts (:func:`layout`, axes, titles), for
    charts drawn elsewhere (the run page's, :mod:`rtcc.runcharts`)."""
    _style(fig, **extra)


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


def geometric_ci(values: Iterable[float]) -> tuple[float, float, float, int]:
    """(geometric mean, lower, upper, n) of the positive finite ``values``: the Student-t
    interval of the mean of their logarithms, taken back (a multiplicative spread), so
    both ends stay positive on a log axis. NaN bounds for fewer than two values."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    m, h, n = mean_ci(np.log(x))
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    if not math.isfinite(h):
        return math.exp(m), math.nan, math.nan, n
    return math.exp(m), math.exp(m - h), math.exp(m + h), n


def _centre(values: np.ndarray, log: bool) -> tuple[float, float, float, int, str]:
    """A scheme's centre on one axis with its interval as (centre, minus, plus, n, name):
    the geometric mean with a multiplicative interval on a log axis, else the mean with
    its Student-t half-width."""
    if log:
        g, lo, hi, n = geometric_ci(values)
        return g, g - lo, hi - g, n, "geometric mean"
    m, h, n = mean_ci(values)
    return m, h, h, n, "mean"


def _scatter_state(
    mine: pd.DataFrame, schemes: Sequence[str], delay: str, rate: str, axis: str = ""
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-trace data (each scheme's runs, then its centre) and the axes (``xaxis{axis}``,
    ``yaxis{axis}``) of one panel for one pair."""
    dx, ry = metric(delay), metric(rate)
    values = {}
    xs: list[float] = []
    for s in schemes:
        part = mine[mine["scheme"] == s]
        x = part[delay].to_numpy(dtype=float) * dx.scale
        y = part[rate].to_numpy(dtype=float) * ry.scale
        keep = np.isfinite(x) & np.isfinite(y)
        values[s] = (part, x, y, keep)
        xs += list(x[keep])
    positive = [v for v in xs if v > 0]
    log = len(positive) == len(xs) > 1 and max(positive) > LOG_SPAN * min(positive)
    traces: list[dict[str, Any]] = []
    points_x: list[float] = []
    points_y: list[float] = []
    for s in schemes:
        part, x, y, keep = values[s]
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
        mx, mxl, mxh, n, centre = _centre(x[keep], log)
        my, myl, myh, _, _ = _centre(y[keep], False)
        if n:
            points_x += [*x[keep], mx]
            points_y += [*y[keep], my]
        wide = n > 1 and math.isfinite(mxl)
        bars = {"type": "data", "visible": wide, "thickness": 1.6, "width": 5,
                "symmetric": False}  # fmt: skip
        span_x = f" ({mx - mxl:.3g} to {mx + mxh:.3g})" if wide else ""
        span_y = f" \u00b1 {myh:.3g}" if wide else ""
        traces.append(
            {
                "x": _round([mx]), "y": _round([my]),
                "error_x": {**bars, "array": _round([mxh if wide else 0]),
                            "arrayminus": _round([mxl if wide else 0])},
                "error_y": {**bars, "array": _round([myh if wide else 0]),
                            "arrayminus": _round([myl if wide else 0])},
                "hovertemplate": f"<b>{html.escape(s)}</b>, {n} run{'s' if n != 1 else ''}"
                f"<br>{dx.title()}, {centre}: %{{x:.4g}}{span_x}"
                f"<br>{ry.title()}, mean: %{{y:.4g}}{span_y}<extra></extra>",
            }
        )  # fmt: skip
    xa, ya = f"xaxis{axis}", f"yaxis{axis}"
    axes: dict[str, Any] = {
        f"{xa}.title.text": f"{dx.title()}, inverted",
        f"{xa}.type": "log" if log else "linear",
        f"{ya}.title.text": ry.title(),
        f"{xa}.tickmode": "auto",
        f"{xa}.tickvals": None,
        f"{xa}.autorange": "reversed",
        f"{ya}.autorange": True,
    }
    # The points set the ranges; an interval reaching past them is cut at the edge (the
    # modebar's autoscale shows all of it).
    if points_x:
        lo, hi = _span(points_x, log)
        axes.update({f"{xa}.autorange": False, f"{xa}.range": [hi, lo]})
        if log:
            axes.update({f"{xa}.tickmode": "array",
                         f"{xa}.tickvals": log_ticks(10**lo, 10**hi)})  # fmt: skip
        ylo, yhi = _span(points_y, False)
        axes.update({f"{ya}.autorange": False, f"{ya}.range": [ylo, yhi]})
    return traces, axes


def _panels(mine: pd.DataFrame, split: bool) -> list[str | None]:
    """The traces (links, conditions) that get a panel each; [None] for one pooled panel."""
    if not split:
        return [None]
    traces = list(dict.fromkeys(mine["trace"].fillna(_DASH).astype(str)))
    return traces if len(traces) > 1 else [None]


def _panel_rows(mine: pd.DataFrame, panel: str | None) -> pd.DataFrame:
    return mine if panel is None else mine[mine["trace"].fillna(_DASH).astype(str) == panel]


def scatter(
    mine: pd.DataFrame,
    schemes: Sequence[str],
    colors: Mapping[str, str],
    pairs: Sequence[tuple[str, str]],
    *,
    split: bool = True,
) -> tuple[Any, int]:
    """Pantheon's view of one experiment's runs (``mine``, one row per run), one panel per
    trace (``split``; else one pooling them): per scheme its runs (small) and their centre
    with its intervals (large), delay on an inverted x axis; a menu switches between the
    (delay, rate) ``pairs``. Returns the figure and its height."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = _panels(mine, split)
    cols = min(3, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig = make_subplots(
        rows=nrows, cols=cols, horizontal_spacing=0.09, vertical_spacing=0.5 / max(nrows, 2),
        subplot_titles=[p for p in panels] if panels != [None] else None,
    )  # fmt: skip
    looks = styles(schemes)

    def states(d: str, r: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        data: list[dict[str, Any]] = []
        axes: dict[str, Any] = {}
        for k, p in enumerate(panels):
            t, a = _scatter_state(_panel_rows(mine, p), schemes, d, r, "" if k == 0 else str(k + 1))
            data += t
            axes.update(a)
        return data, axes

    all_states = [states(d, r) for d, r in pairs]
    traces, axes = all_states[0]
    for k, _ in enumerate(panels):
        where = {"row": k // cols + 1, "col": k % cols + 1}
        for i, s in enumerate(schemes):
            runs, mean = traces[2 * (k * len(schemes) + i)], traces[2 * (k * len(schemes) + i) + 1]
            fig.add_trace(
                go.Scatter(
                    mode="markers", name=s, legendgroup=s, showlegend=False,
                    marker={"color": colors[s], "size": 7, "opacity": 0.4,
                            "symbol": looks[s].symbol}, **runs,
                ),
                **where,
            )  # fmt: skip
            fig.add_trace(
                go.Scatter(
                    mode="markers", name=s, legendgroup=s, showlegend=k == 0,
                    marker={"color": colors[s], "size": 15, "symbol": looks[s].symbol,
                            "line": {"color": "white", "width": 1.5}},
                    **mean,
                ),
                **where,
            )  # fmt: skip
    buttons = []
    for (d, r), (data, ax) in zip(pairs, all_states, strict=True):
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
            *fig.layout.annotations,
            {"xref": "paper", "yref": "paper", "x": 1, "y": 1.0, "xanchor": "right",
             "yanchor": "bottom", "yshift": 22, "showarrow": False, "text": "better \u2197",
             "font": {"color": "#555", "size": 13}},
        ],
    }  # fmt: skip
    if len(buttons) > 1:
        extra["updatemenus"] = [
            {"buttons": buttons, "direction": "down", "x": 0, "xanchor": "left", "y": 1.0,
             "yanchor": "bottom", "pad": {"b": 24}, "showactive": True, "bgcolor": "#f5f5f7",
             "bordercolor": "#ccc", "font": {"size": 12}},
        ]  # fmt: skip
    _style(fig, **extra)
    fig.update_layout(_nested(axes))
    height = 520 if nrows == 1 and cols == 1 else 120 + 360 * nrows
    return fig, height


def _nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"xaxis2.range": v}`` as ``{"xaxis2": {"range": v}}`` for ``update_layout``."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return out


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
    mine: pd.DataFrame,
    schemes: Sequence[str],
    colors: Mapping[str, str],
    names: Sequence[str],
    *,
    split: bool = True,
) -> tuple[Any, int]:
    """One panel per metric of ``names``: a box of each scheme's runs (one row per run),
    side by side per trace along the x axis when ``split`` and there are several."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    split = split and len(_panels(mine, True)) > 1
    cols = min(2 if split else 3, len(names))
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
            by_trace = {"x": part["trace"][keep].fillna(_DASH).astype(str).tolist()} if split else {}
            fig.add_trace(
                go.Box(
                    y=_round(y[keep]), name=s, legendgroup=s, showlegend=k == 0, **by_trace,
                    marker={"color": colors[s], "size": 5}, line={"width": 1.5},
                    boxpoints="all", jitter=0.3, pointpos=0, customdata=info,
                    hovertemplate=f"<b>{html.escape(s)}</b><br>%{{customdata[0]}}<br>"
                    f"{metric(m).title()}: %{{y:.4g}}<br>run %{{customdata[1]}}<extra></extra>",
                ),
                row=k // cols + 1, col=k % cols + 1,
            )  # fmt: skip
    if split:
        _style(fig, boxmode="group")
        fig.update_xaxes(ticks="", type="category")
    else:
        _style(fig)
        fig.update_xaxes(showticklabels=False, ticks="")
    return fig, 90 + 300 * nrows


# --- time series ----------------------------------------------------------------------


def decimate(t: Sequence[float], y: Sequence[float], points: int = 400) -> tuple[list[int], int]:
    """Indices of a line of ``t``, ``y`` to draw with about ``points`` points: all of them
    when there are no more than that, else each bucket's first, lowest and highest
    sample in time order, so spikes (a delay peak, a capacity step) survive; and the
    number of buckets."""
    n = len(t)
    if n <= points:
        return list(range(n)), n
    buckets = max(1, points // 3)
    values = np.asarray(y, dtype=float)
    keep: list[int] = []
    for edge in range(buckets):
        lo, hi = edge * n // buckets, (edge + 1) * n // buckets
        part = values[lo:hi]
        picks = {lo}
        if np.isfinite(part).any():
            picks |= {lo + int(np.nanargmin(part)), lo + int(np.nanargmax(part))}
        keep += sorted(picks)
    if keep[-1] != n - 1:
        keep.append(n - 1)
    return keep, buckets


def series(
    part: pd.DataFrame, labels: pd.DataFrame, keys: Sequence[str], colors: Mapping[str, str]
) -> tuple[Any, int]:
    """The chosen runs ``keys`` over time as small multiples, one row per scheme: its runs'
    received bitrate against the link's capacity (left) and frame latency or one-way delay
    per bin (right), on axes every row shares; ``labels`` is indexed by run key. Lines are
    decimated (:func:`decimate`) to keep the page small."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    latency = "latency_ms" in part and pd.to_numeric(part["latency_ms"]).notna().any()
    delay = "latency_ms" if latency else "owd_ms"
    delay_title = "frame latency, mean per bin (ms)" if latency else "one-way delay (ms)"
    cols = 2 if delay in part else 1
    schemes = list(dict.fromkeys(str(labels.loc[k, "scheme"]) for k in keys))
    titles = []
    for sch in schemes:
        titles += [f"{sch}: received bitrate (kbps)", f"{sch}: {delay_title}"][:cols]
    fig = make_subplots(
        rows=len(schemes), cols=cols, shared_xaxes=True, horizontal_spacing=0.08,
        vertical_spacing=min(0.12, 0.35 / max(len(schemes), 1)), subplot_titles=titles,
    )  # fmt: skip
    looks = styles(schemes)
    capacities: set[tuple[str, str]] = set()
    used: dict[str, int] = {}
    delays: list[float] = []
    for key in keys:
        mine = part[part["run"] == key]
        row = labels.loc[key]
        scheme = str(row["scheme"])
        where = schemes.index(scheme) + 1
        trace = "" if pd.isna(row["trace"]) else str(row["trace"])
        seed = "" if pd.isna(row["seed"]) else f", seed {row['seed']}"
        # A scheme's further runs in its panel are dashed; its own dash marks the first.
        dash = looks[scheme].dash if used.get(scheme, 0) == 0 else _DASHES[used[scheme] % 4]
        used[scheme] = used.get(scheme, 0) + 1
        flows = sorted(mine["flow"].unique())
        for flow in flows:
            one = mine[mine["flow"] == flow]
            name = f"{scheme} \u00b7 {trace}{seed}"
            if len(flows) > 1:
                name += f" \u00b7 flow {flow}"
            group = f"{key}-{flow}"
            rate = "recv_kbps" if "recv_kbps" in one else "video_kbps"
            pick, _ = decimate(one["t_s"].to_numpy(), one[rate].to_numpy(dtype=float))
            thin = one.iloc[pick]
            t = _round(thin["t_s"], 6)
            line = {"color": colors.get(scheme, "#333"), "width": 1.6, "dash": dash}
            fig.add_trace(
                go.Scatter(
                    x=t, y=_round(thin[rate]), mode="lines", name=name, legendgroup=group,
                    line=line, hovertemplate=f"<b>{html.escape(name)}</b><br>%{{x:.1f}} s: "
                    "%{y:.0f} kbps<extra></extra>",
                ),
                row=where, col=1,
            )  # fmt: skip
            if cols == 2:
                values = pd.to_numeric(one[delay], errors="coerce")
                delays += [v for v in values.dropna() if v > 0]
                dpick, _ = decimate(one["t_s"].to_numpy(), values.to_numpy(dtype=float))
                fig.add_trace(
                    go.Scatter(
                        x=_round(one["t_s"].iloc[dpick], 6), y=_round(values.iloc[dpick]),
                        mode="lines", name=name, legendgroup=group, showlegend=False, line=line,
                        hovertemplate=f"<b>{html.escape(name)}</b><br>%{{x:.1f}} s: "
                        "%{y:.0f} ms<extra></extra>",
                    ),
                    row=where, col=2,
                )  # fmt: skip
            if "capacity_kbps" in one and (scheme, trace) not in capacities:
                capacities.add((scheme, trace))
                fig.add_trace(
                    go.Scatter(
                        x=t, y=_round(thin["capacity_kbps"]), mode="lines",
                        name=f"capacity \u00b7 {trace}" if trace else "capacity",
                        legendgroup=f"capacity-{trace}",
                        showlegend=sum(c[1] == trace for c in capacities) == 1,
                        line={"color": "#888", "width": 1.2, "dash": "dot"},
                        hovertemplate="%{x:.1f} s: capacity %{y:.0f} kbps<extra></extra>",
                    ),
                    row=where, col=1,
                )  # fmt: skip
    _style(fig, hovermode="closest", legend={"title": {"text": "run"}})
    fig.update_annotations(font_size=12)
    if cols == 2:
        # Every delay panel on one scale, so schemes compare by eye.
        fig.update_yaxes(matches="y2", col=2)
        if delays and max(delays) > LOG_SPAN * 3 * min(delays):
            lo, hi = min(delays), max(delays)
            fig.update_yaxes(type="log", tickmode="array", tickvals=log_ticks(lo, hi), col=2)
    fig.update_yaxes(matches="y", col=1)
    fig.update_xaxes(title_text="time (s)", row=len(schemes))
    return fig, 120 + 230 * len(schemes)
