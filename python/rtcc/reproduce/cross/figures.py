"""Figures of the Cross reproduction, as PNG bytes (matplotlib Agg, fixed order and colours).

case_bars (paper Figs. 5-6), working_points (Fig. 7), flow_rates (Figs. 3, 8-12, 17),
loss_utilization (Fig. 14), adaptation (Figs. 15-16) and freeze_ratio (Fig. 19). The
paper's numbers, where its text gives them (:mod:`rtcc.reproduce.cross.paper`), are red
markers beside rtcc's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rtcc.plots import flow_color
from rtcc.reproduce.cross import paper
from rtcc.reproduce.cross.experiments import SCHEMES, SEED
from rtcc.reproduce.runs import series as flow_series
from rtcc.reproduce.figures import (
    PAPER_COLOR, REFERENCE, grouped_bars, line_style, render, scheme_color, scheme_colors,
)

if TYPE_CHECKING:
    from rtcc.reproduce.cross.experiments import Outcome

__all__ = [
    "adaptation", "case_bars", "flow_rates", "freeze_ratio", "loss_utilization", "render_all",
    "working_points",
]  # fmt: skip


def _part(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    if table.empty or "utilization_received" not in table:
        return table.iloc[0:0]
    return table[table["experiment"].str.startswith(prefix) & table["utilization_received"].notna()]


def _number(experiment: str) -> int:
    """The trailing number of 'VI-A case 4' / 'VI-B loss 10%'."""
    return int(experiment.split()[-1].rstrip("%"))


def _grouped_bars(
    ax: Axes,
    part: pd.DataFrame,
    column: str,
    scale: float,
    colors: Mapping[str, str],
    paper_values: Mapping[str, Mapping[int, float]],
) -> list[int]:
    """One bar per scheme in each case (``part`` has a ``case`` column), the paper's
    values as red diamonds on their scheme's bar; returns the cases in x order."""
    cases = grouped_bars(ax, part, "case", column, scale, colors, paper_values)
    ax.set_xticks(range(len(cases)), [f"case {c}" for c in cases])
    return cases


def case_bars(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "VI-A case")
    if part.empty:
        return None
    part = part.assign(case=part["experiment"].map(_number))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    _grouped_bars(top, part, "owd_ms_mean", 1.0, colors, {})
    _grouped_bars(bottom, part, "utilization_received", 100.0, colors, {"cross": paper.VI_A_CROSS})
    top.set_ylabel("mean one-way delay (ms)")
    bottom.set_ylabel("channel utilisation (%)")
    top.set_title("Table III links, three flows (cf. Figs. 5-6; red: the paper's ≈ 95 % for cross)")
    top.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    return fig


def working_points(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "VI-A case")
    cases = [c for c in (4, 6) if f"VI-A case {c}" in set(part["experiment"])]
    if not cases:
        return None
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 3.6), squeeze=False)
    for ax, case in zip(axes[0], cases, strict=True):
        mine = part[part["experiment"] == f"VI-A case {case}"]
        for _, r in mine.iterrows():
            look = line_style(colors, str(r["scheme"]))
            ax.plot(r["owd_ms_mean"], 100 * r["utilization_received"], **look)
            ax.annotate(r["scheme"], (r["owd_ms_mean"], 100 * r["utilization_received"]),
                        fontsize=8, xytext=(3, 3), textcoords="offset points")  # fmt: skip
        ax.axhline(100 * paper.VI_A_CROSS[case], color=PAPER_COLOR, ls=":", lw=1,
                   label="paper: cross ≈ 95 %")  # fmt: skip
        ax.set_title(f"case {case}")
        ax.set_xlabel("mean one-way delay (ms)")
        ax.set_ylabel("channel utilisation (%)")
        ax.legend(fontsize=8)
    fig.suptitle("Working points (cf. Fig. 7)")
    fig.tight_layout()
    return fig


def flow_rates(
    runs: Sequence[tuple[str, list[pd.DataFrame]]], title: str, column: str = "target_kbps"
) -> Figure | None:
    runs = [(s, flows) for s, flows in runs if flows]
    if not runs:
        return None
    cols = min(3, len(runs))
    rows = (len(runs) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.6 * rows), squeeze=False,
                             sharey=True)  # fmt: skip
    flat = axes.ravel()
    for ax, (scheme, flows) in zip(flat, runs, strict=False):
        for i, s in enumerate(flows):
            ax.plot(s["t_s"], s[column] / 1000, color=flow_color(i), lw=0.9, label=f"flow {i + 1}")
        ax.set_title(scheme, fontsize=9)
    for ax in flat[len(runs) :]:
        ax.set_visible(False)
    flat[0].legend(fontsize=7)
    fig.supxlabel("time (s)")
    fig.supylabel("target rate (Mbps)" if column == "target_kbps" else column)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def loss_utilization(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "VI-B loss")
    if part.empty:
        return None
    part = part.assign(loss=part["experiment"].map(_number))
    fig, ax = plt.subplots(figsize=(7, 4))
    for scheme, mine in part.groupby("scheme", sort=False):
        mine = mine.sort_values("loss")
        color = scheme_color(colors, str(scheme))
        ax.plot(mine["loss"], 100 * mine["utilization_received"], **line_style(colors, str(scheme)),
                label=scheme)
        for loss, value in paper.LOSS_UTILIZATION.get(str(scheme), {}).items():
            ax.plot(loss, 100 * value, **REFERENCE.mpl())
            ax.annotate(str(scheme), (loss, 100 * value), fontsize=7, color=PAPER_COLOR,
                        xytext=(3, -9), textcoords="offset points")  # fmt: skip
    ax.set_xlabel("random loss from 10 s (%)")
    ax.set_ylabel("channel utilisation (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Case 6 with random loss (cf. Fig. 14; red: the paper's numbers)")
    ax.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    return fig


def adaptation(
    runs: Sequence[tuple[str, list[pd.DataFrame]]], drop: float, back: float
) -> Figure | None:
    runs = [(s, flows) for s, flows in runs if flows]
    if not runs:
        return None
    fig, axes = plt.subplots(2, len(runs), figsize=(5 * len(runs), 5), squeeze=False, sharex=True)
    for k, (scheme, flows) in enumerate(runs):
        s = flows[0]
        axes[0][k].plot(s["t_s"], s["target_kbps"] / 1000, lw=0.9, color=flow_color(0))
        axes[0][k].set_title(scheme, fontsize=9)
        axes[1][k].plot(s["t_s"], s["owd_ms"], lw=0.9, color=flow_color(1))
        for ax in (axes[0][k], axes[1][k]):
            ax.axvspan(drop, back, color="#ddd", zorder=0)
    axes[0][0].set_ylabel("target rate (Mbps)")
    axes[1][0].set_ylabel("one-way delay (ms)")
    fig.supxlabel("time (s); grey: capacity 4 Mbps, else 10 Mbps")
    fig.suptitle("Fast bandwidth adaptation on and off (cf. Figs. 15-16)")
    fig.tight_layout()
    return fig


def freeze_ratio(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "VI-E case")
    if part.empty:
        return None
    part = part.assign(case=part["experiment"].map(_number))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _grouped_bars(ax, part, "freeze_ratio_webrtc", 100.0, colors, paper.ONLINE_FREEZE)
    ax.set_ylabel("freeze duration ratio (%)")
    ax.set_title("Online stand-in: WebRTC freeze ratio (cf. Fig. 19; red: the paper's)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _seed_one(outcome: Outcome) -> Callable[[str], list[tuple[str, list[pd.DataFrame]]]]:
    """``outcome.series`` for the runs of seed 1 only (the multi-flow experiments have
    several seeds; a figure draws one run per scheme)."""

    def series(experiment: str) -> list[tuple[str, list[pd.DataFrame]]]:
        out = []
        for result in outcome.results.values():
            for run, record in zip(result.runs, result.records, strict=True):
                labels = run.labels
                if labels["experiment"] != experiment or labels.get("seed", SEED) != SEED:
                    continue
                if record:
                    count = len(record["summary"]["flows"])
                    parts = [flow_series(record, i) for i in range(count)]
                    out.append((str(labels["scheme"]), [p for p in parts if p is not None]))
        return out

    return series


def render_all(outcome: Outcome) -> dict[str, tuple[bytes, str]]:
    """``{filename: (png, caption)}`` for every figure there is data for (seed 1's runs)."""
    table = outcome.table
    if "seed" in table:
        table = table[table["seed"] == SEED]
    series = _seed_one(outcome)
    colors = scheme_colors(s for s in table.get("scheme", pd.Series(dtype=str)))
    v = outcome.variant
    shown: list[int] = [c for c in (1, 7) if c in v.cases] or list(v.cases[:1])
    rate_runs = [
        (f"{scheme} · case {case}", flows)
        for case in shown
        for scheme, flows in series(f"VI-A case {case}")
        # and any scheme named on top of the paper's (``--scheme``)
        if scheme in ("gcc", "copa", "cross", "vivace") or scheme not in SCHEMES
    ]
    nada_case = 8 if 8 in v.cases else v.cases[-1]
    nada_runs = [
        (f"{scheme} · case {nada_case}", flows)
        for scheme, flows in series(f"VI-A case {nada_case}")
        if scheme in ("nada", "nadar")
    ]
    bbr_case = 2 if 2 in v.table1_cases else v.table1_cases[0]
    drop, back, _ = v.adapt
    return render({
        "case_bars.png": (partial(case_bars, table, colors),
                          "Mean one-way delay and channel utilisation (eq. 6) per Table III "
                          "case and scheme; red diamonds: the paper's ≈ 95 % for cross."),
        "working_points.png": (partial(working_points, table, colors),
                               "Utilisation against delay in Cases 4 and 6."),
        "rates_vi_a.png": (partial(flow_rates, rate_runs,
                                   "Target rate per flow (cf. Figs. 8-11)"),
                           "Target rate of each of the three flows, 1 s means of the 25 ms "
                           "samples."),
        "rates_nada.png": (partial(flow_rates, nada_runs, "NADA and NADAR (cf. Fig. 12)"),
                           "NADA's late-comer advantage and NADAR's fairness."),
        "loss_utilization.png": (partial(loss_utilization, table, colors),
                                 "Channel utilisation against random loss in Case 6."),
        "adaptation.png": (partial(adaptation, series("VI-C"), drop, back),
                           "10 → 4 → 10 Mbps: target rate and one-way delay (100 ms means)."),
        "rates_rtt.png": (partial(flow_rates, series("VI-D"),
                                  "40 ms vs 80 ms RTT (cf. Fig. 17)"),
                          "Flow 1: 40 ms RTT from 0 s; flow 2: 80 ms RTT."),
        "rates_bbr.png": (partial(flow_rates, series(f"Table II case {bbr_case}"),
                                  f"BBR vs RBBR, Table I case {bbr_case} (cf. Fig. 3)"),
                          "WebRTC-style BBR (cwnd-capped; the pacer's 2 s limit) vs RBBR."),
        "freeze_ratio.png": (partial(freeze_ratio, table, colors),
                             "Freeze duration ratio by WebRTC's rule, cross vs bbr."),
    })  # fmt: skip
