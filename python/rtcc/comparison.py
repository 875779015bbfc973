"""The comparison report: the papers' views of any set of runs as one self-contained HTML
page with interactive charts (``rtcc report DIR... --out page.html``, :func:`compare`).

>>> import rtcc
>>> rtcc.compare(["results/reproduce-dumbo"], out="dumbo.html")  # doctest: +SKIP

Per experiment (see :mod:`rtcc.runset` for how runs get their experiment, scheme and
trace), split by trace as Pantheon splits by link (``pool_traces`` pools them): a scheme x
metric table of means over the runs with 95 % Student-t confidence intervals, delay
against utilisation as Pantheon draws it (one panel per trace: per-scheme centre with its
intervals on both axes, every run behind it, the delay axis inverted so better is up and
to the right; on a log axis the centre is the geometric mean and its interval
multiplicative, so it stays positive), per-scheme CDFs of what the runs kept (utilisation
per bin, frame latency, bitrate) and boxes of the per-run metrics per trace; then the
time series of chosen runs, one row per scheme. A run's value of a metric is its mean
over the run's scheme flows (a per-flow value). Runs from several papers or sweeps are
grouped by their folder.

The charts are plotly.js, embedded once with the data (compressed, inflated by the
browser), so the page reads offline; each chart is drawn when scrolled to, the rest while
the page is idle: zoom (drag), hover, a legend click toggles a scheme in every panel.
"""

from __future__ import annotations

import difflib
import html
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from rtcc import charts
from rtcc.metrics import LEVEL, mean_ci, metric, per_run
from rtcc.report import CSS, fmt
from rtcc.runset import load_distributions, load_runs, load_series
from rtcc.styles import styles

__all__ = ["DELAYS", "RATES", "TABLE_METRICS", "OptionError", "build", "compare", "render"]

# Defaults, each shown when the runs have it.
# End-to-end frame delay and its part spent waiting at the sender stand beside network
# delay: a sender's queue is in neither one-way nor queuing delay.
TABLE_METRICS = (
    "utilization", "video_kbps", "owd_ms_p95", "frame_delay_ms_mean", "sender_wait_ms_mean",
    "frame_latency_ms_mean", "frame_latency_ms_p95", "freeze_ratio", "loss_rate", "psnr_db_mean",
    "converge_up_s", "converge_down_s",
)  # fmt: skip
DELAYS = (
    "owd_ms_p95", "owd_ms_mean", "frame_latency_ms_p95", "frame_latency_ms_mean",
    "frame_delay_ms_mean", "sender_wait_ms_mean", "queue_delay_ms_mean", "sojourn_ms_mean",
)  # fmt: skip
RATES = ("utilization", "utilization_mean", "goodput_kbps", "video_kbps")
_BOXES = 6  # metrics in the box chart, the table's first
_MAX_RUN_ROWS = 1000  # the rest are in the folders' runs.csv and table.csv
_DASH = "\u2013"

_PAGE_CSS = """
nav { margin: 0.5em 0 1em; } nav a { margin-right: 1em; }
h3 { font-size: 1em; margin: 1.6em 0 0.3em; }
h2.group { font-size: 1.5em; border-top: 3px solid #1d1d1f; padding-top: 0.4em; margin-top: 2em; }
nav { line-height: 1.7; }
.chart { width: 100%; margin: 0.4em 0 0.2em; }
.caption { color: #555; font-size: 0.9em; margin: 0 0 1em; }
td.ci { white-space: nowrap; }
details summary { cursor: pointer; color: #333; }
code { font-size: 0.92em; }
"""


class OptionError(ValueError):
    """An option that does not fit the runs; ``option`` names it (``metrics``, ``series``)."""

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(f"{option}: {reason}")
        self.option = option
        self.reason = reason


# --- options --------------------------------------------------------------------------


def _numeric_columns(runs: pd.DataFrame) -> list[str]:
    skip = {"run", "seed", "flow", "scheme_flow"}
    out = []
    for c in runs.columns:
        if c in skip or runs[c].dtype == bool:
            continue
        if pd.to_numeric(runs[c], errors="coerce").notna().any():
            out.append(c)
    return out


def _check_metric(runs: pd.DataFrame, name: object, option: str, numeric: list[str]) -> str:
    if not isinstance(name, str) or not name:
        raise OptionError(option, f"give a metric name (a column of the runs), not {name!r}")
    if name not in numeric:
        close = difflib.get_close_matches(name, numeric, n=3)
        hint = f"; close: {', '.join(close)}" if close else ""
        raise OptionError(option, f"no numeric column '{name}' in the runs{hint}")
    return name


def _present(runs: pd.DataFrame, names: Iterable[str]) -> list[str]:
    return [n for n in names if n in runs and pd.to_numeric(runs[n], errors="coerce").notna().any()]


def _chosen_runs(runs: pd.DataFrame, wanted: Sequence[str] | None) -> list[str]:
    """Run keys for the time series: ``wanted`` (keys or unique prefixes), or the first
    finished run of each experiment and scheme."""
    ok = runs[runs["error"].isna() & runs["run"].notna()]
    keys = list(dict.fromkeys(ok["run"].astype(str)))
    if wanted is None:
        first = ok.drop_duplicates(["experiment", "scheme"])
        return list(dict.fromkeys(first["run"].astype(str)))
    if isinstance(wanted, str) or not isinstance(wanted, Iterable):
        raise OptionError("series", f"give a list of run keys, not {type(wanted).__name__}")
    out = []
    for prefix in wanted:
        if not isinstance(prefix, str) or not prefix:
            raise OptionError("series", f"a run key must be text, not {prefix!r}")
        match = [k for k in keys if k.startswith(prefix)]
        if not match:
            raise OptionError(
                "series",
                f"no run '{prefix}' in the folders (run keys are in the page's Runs table, "
                "runs.csv and table.csv)",
            )
        if len(match) > 1:
            raise OptionError("series", f"'{prefix}' matches {len(match)} runs; give more of it")
        out.append(match[0])
    return list(dict.fromkeys(out))


# --- entry points ---------------------------------------------------------------------


def compare(
    folders: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    series: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    delay: str | None = None,
    rate: str | None = None,
    pool: bool = False,
    title: str | None = None,
    pool_traces: bool = False,
) -> str:
    """The comparison page of the runs in ``folders`` (see :mod:`rtcc.runset` for what a
    folder may be); written to ``out`` when given (checked writable before anything is
    read). Returns the page's HTML.

    ``series`` names runs (keys or unique prefixes) whose time series to show (default:
    the first run of each scheme in each experiment); ``metrics`` the table's and boxes'
    columns; ``delay`` and ``rate`` the scatter's default axes (``owd_ms_p95``,
    ``utilization``); ``pool`` pools same-named experiments across folders;
    ``pool_traces`` pools an experiment's traces in one panel (default: one per trace).
    ``title`` defaults to the names of the sweeps or studies the folders hold.
    """
    target = _check_out(out) if out is not None else None
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be text or None, not {type(title).__name__}")
    if not isinstance(pool_traces, bool):
        raise TypeError(f"pool_traces must be True or False, not {pool_traces!r}")
    runs = load_runs(folders, pool=pool)
    page = build(
        runs, series=series, metrics=metrics, delay=delay, rate=rate,
        title=title if title is not None else _title(folders), pool_traces=pool_traces,
    )  # fmt: skip
    if target is not None:
        from rtcc.limits import write_atomic

        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, page)
    return page


def _check_out(out: object) -> Path:
    """``out`` as a path, refused before any work when it cannot be written: a folder, or
    a file whose nearest existing folder above it is not a writable folder."""
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"out must be a file path or None, not {type(out).__name__}")
    path = Path(out)
    if path.is_dir():
        raise OptionError("out", f"{path}: is a folder; give the HTML file to write")
    folder = path.parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        raise OptionError("out", f"{path}: {folder} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".rtcc-probe-", dir=folder)
    except OSError as exc:
        raise OptionError("out", f"{path}: cannot write into {folder} ({exc.strerror})") from None
    os.close(fd)
    Path(probe).unlink()
    return path


def build(
    runs: pd.DataFrame,
    *,
    series: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    delay: str | None = None,
    rate: str | None = None,
    title: str | None = None,
    pool_traces: bool = False,
) -> str:
    """The page from a table of :func:`rtcc.runset.load_runs`' shape: checks the options,
    reads the distributions and chosen series through its ``record`` column, renders."""
    ok = runs[runs["error"].isna()]
    if ok.empty:
        failed = runs["error"].dropna()
        why = f": {failed.iloc[0]}" if len(failed) else ""
        raise OptionError("folders", f"no finished runs ({len(runs)} failed{why})")
    numeric = _numeric_columns(ok)
    if metrics is None:
        shown = _present(ok, TABLE_METRICS)
    else:
        if isinstance(metrics, str) or not isinstance(metrics, Iterable):
            raise OptionError("metrics", f"give a list of metric names, not {metrics!r}")
        shown = [_check_metric(ok, m, "metrics", numeric) for m in metrics]
        if not shown:
            raise OptionError("metrics", "give at least one metric")
    delay = (
        _check_metric(ok, delay, "delay", numeric)
        if delay is not None
        else next(iter(_present(ok, DELAYS)), None)
    )
    rate = (
        _check_metric(ok, rate, "rate", numeric)
        if rate is not None
        else next(iter(_present(ok, RATES)), None)
    )
    chosen = _chosen_runs(runs, series)
    return render(
        runs,
        load_distributions(runs),
        load_series(runs, chosen),
        metrics=shown,
        delay=delay,
        rate=rate,
        title=title,
        chosen=chosen,
        split=not pool_traces,
    )


# --- the page -------------------------------------------------------------------------


def _pm(mean: float, half: float, scale: float) -> str:
    """``mean ± half`` scaled, the half-width to two significant digits and the mean to
    the same decimal place; the mean alone (as :func:`rtcc.report.fmt`) without one."""
    if not math.isfinite(mean):
        return "\u2013"
    mean *= scale
    if not math.isfinite(half):
        return fmt(mean)
    half *= scale
    if half == 0:
        return f"{fmt(mean)} \u00b1 0"
    decimals = min(max(0, 1 - math.floor(math.log10(half))), 6)
    return f"{mean:,.{decimals}f} \u00b1 {half:,.{decimals}f}"


def _colors(schemes: Sequence[str]) -> dict[str, str]:
    """Each scheme's colour, the one the reproductions' figures give it (:mod:`rtcc.styles`)."""
    return {s: st.color for s, st in styles(schemes).items()}


def _title(folders: object) -> str | None:
    """The page's heading from what the folders hold: each sweep's name (``sweep.json``),
    the studies of a reproduction's dataset (``dataset/runs/study=*``), "every paper's
    reproduction" for an ``rtcc reproduce all`` folder; None (folder names) otherwise."""
    from rtcc.reproduce import EXPERIMENTS

    paths = [folders] if isinstance(folders, str | os.PathLike) else list(folders)  # type: ignore[call-overload]
    names: list[str] = []
    for f in paths:
        folder = Path(f)
        try:
            identity = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            identity = None
        if isinstance(identity, dict) and isinstance(identity.get("name"), str):
            names.append(identity["name"])
            continue
        if sum((folder / n / "runs.csv").is_file() for n in EXPERIMENTS) > 1:
            names.append("every paper's reproduction")
            continue
        studies = sorted(p.name.removeprefix("study=") for p in (folder / "dataset" / "runs").glob("study=*"))
        if not studies:
            return None
        names += studies
    return "rtcc comparison: " + ", ".join(dict.fromkeys(names)) if names else None


def render(
    runs: pd.DataFrame,
    distributions: pd.DataFrame | None = None,
    series: pd.DataFrame | None = None,
    *,
    metrics: Sequence[str],
    delay: str | None,
    rate: str | None,
    title: str | None = None,
    chosen: Sequence[str] | None = None,
    split: bool = True,
) -> str:
    """The page as one HTML string, from the runs (:func:`rtcc.runset.load_runs`' shape),
    their distributions (:func:`rtcc.runset.load_distributions`) and the series of the
    ``chosen`` runs (:func:`rtcc.runset.load_series`; a chosen run without one is named);
    ``split``: one panel (table rows, boxes) per trace, else the traces pooled."""
    ok = runs[runs["error"].isna()]
    schemes = list(dict.fromkeys(ok["scheme"].astype(str)))
    colors = _colors(schemes)
    experiments = list(dict.fromkeys(ok["experiment"].astype(str)))
    folders = list(dict.fromkeys(runs["folder"].dropna().astype(str)))
    heading = title or "rtcc comparison: " + ", ".join(Path(f).name or f for f in folders)
    pairs = _scatter_pairs(ok, delay, rate)
    needed = list(dict.fromkeys([*metrics, *(m for p in pairs for m in p)]))
    values = per_run(runs, needed)
    page = charts.Charts()
    n_runs = runs.drop_duplicates(["run", "experiment", "scheme"]).shape[0]
    failed = runs[runs["error"].notna()]
    body = [
        f"<h1>{html.escape(heading)}</h1>",
        f'<p class="meta">{n_runs:,} runs ({len(failed):,} failed) of {len(schemes)} '
        f"schemes in {len(experiments)} experiment{'s' if len(experiments) != 1 else ''}, "
        f"from {', '.join(html.escape(f) for f in folders)}; rtcc "
        f"{html.escape(_version())}. Drag to zoom, double-click to reset, click a legend "
        "entry to hide a scheme, double-click it to show it alone.</p>",
    ]
    groups = _groups(ok, experiments)
    links = []
    for group, names in groups.items():
        items = "".join(
            f'<a href="#exp-{experiments.index(e)}">{html.escape(e)}</a>' for e in names
        )
        links.append(f"<b>{html.escape(group)}</b>: {items}" if group else items)
    links.append(
        ('<a href="#series">time series</a>' if series is not None else "")
        + '<a href="#runs">runs</a>'
    )
    body.append("<nav>" + "<br>".join(links) + "</nav>")
    for group, names in groups.items():
        if group:
            body.append(f'<h2 class="group">{html.escape(group)}</h2>')
        for experiment in names:
            i = experiments.index(experiment)
            body += _experiment(
                i, experiment, ok, values, distributions, metrics, pairs, colors, page, split
            )
    body += _series_section(ok, series, chosen, colors, page)
    body += _runs_section(runs)
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{html.escape(heading)}</title>",
                f"<style>{CSS}{_PAGE_CSS}</style>",
                "</head><body>",
                *body,
                page.scripts(),
                "</body></html>",
            ]
        )
        + "\n"
    )


def _groups(ok: pd.DataFrame, experiments: Sequence[str]) -> dict[str, list[str]]:
    """The experiments by the folder (paper, sweep) their runs came from, in order; one
    unnamed group when they all came from one folder."""
    where = ok.drop_duplicates("experiment").set_index("experiment")["folder"]
    folders = list(dict.fromkeys(str(where.get(e, "")) for e in experiments))
    if len(folders) < 2:
        return {"": list(experiments)}
    out: dict[str, list[str]] = {}
    for e in experiments:
        folder = str(where.get(e, ""))
        out.setdefault(Path(folder).name or folder, []).append(e)
    return out


def _version() -> str:
    import rtcc

    return str(rtcc.__version__)


def _experiment(
    index: int,
    experiment: str,
    ok: pd.DataFrame,
    values: pd.DataFrame,
    distributions: pd.DataFrame | None,
    metrics: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    colors: Mapping[str, str],
    page: charts.Charts,
    split: bool = True,
) -> list[str]:
    rows = ok[ok["experiment"] == experiment]
    mine = values[values["experiment"] == experiment]
    schemes = list(dict.fromkeys(mine["scheme"].astype(str)))
    traces = list(dict.fromkeys(rows["trace"].dropna().astype(str)))
    seeds = sorted({int(s) for s in rows["seed"].dropna()})
    trace_text = ", ".join(traces[:6]) + (f" and {len(traces) - 6} more" if len(traces) > 6 else "")
    seed_text = ", ".join(map(str, seeds[:8])) + (" ..." if len(seeds) > 8 else "")
    split = split and len(traces) > 1
    over = "each trace's runs (every seed)" if split else "the runs (every trace and seed)"
    out = [
        f'<h2 id="exp-{index}">{html.escape(experiment)}</h2>',
        f'<p class="meta">{len(mine):,} runs of {len(schemes)} schemes; '
        f"{len(traces)} trace{'s' if len(traces) != 1 else ''}"
        + (f" ({html.escape(trace_text)})" if traces else "")
        + f"; seed{'s' if len(seeds) != 1 else ''} {html.escape(seed_text) or _DASH}.</p>",
        "<h3>Schemes and metrics</h3>",
        _table(mine, schemes, metrics, split),
        f'<p class="caption">Mean over {over} of each run\'s value, '
        f"\u00b1 the half-width of the {LEVEL:.0%} Student-t confidence interval of that mean "
        "(n - 1 degrees of freedom; none for a single run). A run's value is per flow: the "
        "mean over its scheme flows (its video flows, or all flows of a run without video); "
        "<code>link_utilization</code> is the whole link's.</p>",
    ]
    if pairs:
        fig, height = charts.scatter(mine, schemes, colors, pairs, split=split)
        out += [
            "<h3>Delay against utilisation</h3>",
            page.add(fig, "scatter", experiment, height),
            f'<p class="caption">{"One panel per trace. " if split else ""}Large markers: each '
            f"scheme's centre over its runs with the {LEVEL:.0%} Student-t confidence interval "
            "on both axes: on a linear axis the mean \u00b1 the interval's half-width, on a "
            "logarithmic one the geometric mean and the interval of the mean of the "
            "logarithms taken back (a multiplicative spread, never below zero); small "
            "markers: single runs. The delay axis is inverted (and logarithmic when the "
            "delays span more than a factor of 10), so better is up and to the right, as "
            "Pantheon draws it. The menu at the top left picks the axes.</p>",
        ]
    if distributions is not None and not distributions.empty:
        cdfs = charts.cdfs(rows, distributions, schemes, colors)
        if cdfs is not None:
            out += [
                "<h3>Distributions within the runs</h3>",
                page.add(cdfs[0], "cdf", experiment, cdfs[1]),
                '<p class="caption">Each scheme\'s CDF pools its runs over every trace, each '
                "run weighing the same (101 quantiles per run and flow); from what the runs kept: quantiles or "
                "time series.</p>",
            ]
    boxed = [m for m in metrics if mine[m].notna().any()][:_BOXES]
    if boxed:
        box, height = charts.boxes(mine, schemes, colors, boxed, split=split)
        out += [
            "<h3>Per-run metrics</h3>",
            page.add(box, "box", experiment, height),
            f'<p class="caption">{"Boxes side by side per trace; " if split else ""}One '
            'point per run; the box spans the quartiles, the line is '
            "the median, the whiskers reach the furthest run within 1.5 interquartile ranges.</p>",
        ]
    return out


def _table(
    mine: pd.DataFrame, schemes: Sequence[str], metrics: Sequence[str], split: bool = False
) -> str:
    """Scheme x metric means with their intervals; rows per trace and scheme with ``split``."""
    shown = [m for m in metrics if mine[m].notna().any()]
    head = "".join(f"<th>{html.escape(metric(m).title())}</th>" for m in shown)
    first = "<th>trace</th>" if split else ""
    lines = [f'<div class="scroll"><table><tr>{first}<th>scheme</th><th>runs</th>{head}</tr>']
    traces = list(dict.fromkeys(mine["trace"].fillna(_DASH).astype(str))) if split else [None]
    for trace in traces:
        rows = mine if trace is None else mine[mine["trace"].fillna(_DASH).astype(str) == trace]
        for s in schemes:
            part = rows[rows["scheme"] == s]
            if part.empty:
                continue
            cells = []
            for m in shown:
                mean, half, _ = mean_ci(part[m])
                cells.append(f'<td class="ci">{html.escape(_pm(mean, half, metric(m).scale))}</td>')
            lead = f"<td>{html.escape(trace)}</td>" if trace is not None else ""
            lines.append(
                f"<tr>{lead}<td>{html.escape(s)}</td><td>{len(part)}</td>{''.join(cells)}</tr>"
            )
    lines.append("</table></div>")
    return "\n".join(lines)


def _scatter_pairs(ok: pd.DataFrame, delay: str | None, rate: str | None) -> list[tuple[str, str]]:
    """The (delay, rate) axes the scatter's menu offers, the default first."""
    if delay is None or rate is None:
        return []
    delays = _present(ok, DELAYS)
    rates = _present(ok, RATES)
    pairs = [(delay, rate)]
    pairs += [(d, rate) for d in delays]
    pairs += [(delay, r) for r in rates]
    # The Dumbo thesis's view: per-sample utilisation against the bottleneck's sojourn.
    if {"sojourn_ms_mean"} <= set(delays) and "utilization_mean" in rates:
        pairs.append(("sojourn_ms_mean", "utilization_mean"))
    return list(dict.fromkeys(pairs))


def _series_section(
    ok: pd.DataFrame,
    series: pd.DataFrame | None,
    chosen: Sequence[str] | None,
    colors: Mapping[str, str],
    page: charts.Charts,
) -> list[str]:
    if series is None:
        return []
    out = ['<h2 id="series">Time series</h2>']
    kept = series["run"].drop_duplicates().tolist() if not series.empty else []
    labels = ok.drop_duplicates("run").set_index("run")
    for experiment in dict.fromkeys(labels.loc[kept, "experiment"].astype(str)):
        keys = [k for k in kept if str(labels.loc[k, "experiment"]) == experiment]
        fig, height = charts.series(series[series["run"].isin(keys)], labels, keys, colors)
        out += [
            f"<h3>{html.escape(experiment)}</h3>",
            page.add(fig, "series", experiment, height),
        ]
    if kept:
        out.append(
            '<p class="caption">Each chosen run\'s scheme flows per time-series bin; the dotted '
            "grey line is the link capacity.</p>"
        )
    # The chosen runs that kept none, by experiment.
    bare: dict[str, int] = {}
    for key in chosen or []:
        if key not in kept and key in labels.index:
            name = str(labels.loc[key, "experiment"])
            bare[name] = bare.get(name, 0) + 1
    if bare:
        which = ", ".join(
            f"{html.escape(e)} ({n} run{'s' if n != 1 else ''})" for e, n in bare.items()
        )
        out.append(
            f"<p>No time series kept by the chosen runs of {which}: a sweep keeps them with "
            "<code>series = true</code>.</p>"
        )
    out.append(
        '<p class="caption"><code>rtcc report ... --series RUN...</code> picks the runs '
        "(keys from the Runs table); by default the first run of each scheme.</p>"
    )
    return out


def _runs_section(runs: pd.DataFrame) -> list[str]:
    table = runs.drop_duplicates(["run", "experiment", "scheme"])
    head = ["run", "experiment", "scheme", "trace", "seed", "folder", "error"]
    lines = [
        '<h2 id="runs">Runs</h2>',
        f"<details><summary>{len(table):,} runs (keys for <code>--series</code>)</summary>",
        '<div class="scroll"><table><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr>",
    ]
    for _, r in table.head(_MAX_RUN_ROWS).iterrows():
        cells = [r.get(h) for h in head]
        lines.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape('' if v is None or pd.isna(v) else str(v))}</td>" for v in cells
            )
            + "</tr>"
        )
    lines.append("</table></div>")
    if len(table) > _MAX_RUN_ROWS:
        lines.append(
            f"<p>The first {_MAX_RUN_ROWS:,} of {len(table):,} runs; every run is in the "
            "folders' <code>runs.csv</code> or <code>table.csv</code>.</p>"
        )
    lines.append("</details>")
    failed = runs[runs["error"].notna()]
    if len(failed):
        items = "".join(
            f"<li>{html.escape(str(r['experiment']))} \u00b7 {html.escape(str(r['scheme']))}: "
            f"{html.escape(str(r['error']))}</li>"
            for _, r in failed.head(100).iterrows()
        )
        lines.append(f"<p>Runs that failed:</p><ul>{items}</ul>")
    return lines
