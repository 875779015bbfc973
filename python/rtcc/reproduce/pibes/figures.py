"""Figures of the PIBES reproduction, as PNG bytes (matplotlib Agg, fixed order and colours).

table1 (Table 1), sensitivity (Figs. 6-7), estimate (Figs. 8-9), throughput (Figs. 10-18:
the video flow's received rate, the TCP flows' and the capacity over time) and
frame_delay (Figs. 10-12). The paper's Table 1 numbers are red markers beside rtcc's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rtcc.reproduce.figures import PAPER_COLOR, grouped_bars, render, scheme_color, scheme_colors
from rtcc.reproduce.pibes import paper

if TYPE_CHECKING:
    from rtcc.reproduce.pibes.experiments import Outcome

__all__ = ["estimate", "frame_delay", "render_all", "sensitivity", "table1", "throughput"]

TCP_COLOR = "#7f7f7f"
CAPACITY_COLOR = "#dddddd"


def _part(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    if table.empty or "utilization" not in table:
        return table.iloc[0:0]
    return table[table["experiment"].str.startswith(prefix) & table["utilization"].notna()]


def table1(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "Table 1")
    if part.empty:
        return None
    queues = sorted(part["queue_pkt"].unique())
    fig, axes = plt.subplots(1, len(queues), figsize=(6 * len(queues), 3.6), squeeze=False)
    for ax, q in zip(axes[0], queues, strict=True):
        mine = part[part["queue_pkt"] == q]
        counts = grouped_bars(ax, mine, "tcp_flows", "utilization", 100.0, colors, paper.TABLE_1)
        ax.set_xticks(range(len(counts)), [f"{int(n)} TCP" for n in counts])
        ax.set_ylabel("video utilisation (%)")
        ax.set_title(f"4 Mbps, queue {int(q)} packets")
        ax.legend(fontsize=8)
    return fig


def sensitivity(table: pd.DataFrame) -> Figure | None:
    b = _part(table, "Fig. 6")
    a = _part(table, "Fig. 7")
    if (b.empty and a.empty) or "estimate_error" not in table:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), squeeze=False)
    for ax, part, xlabel in ((axes[0][0], b, "burst size (packets)"), (axes[0][1], a, "alpha")):
        if part.empty:
            continue
        x = part["experiment"].str.split().str[-1].astype(float)
        ax.plot(x, 100 * part["estimate_error"], "o-", label="mean |error|")
        ax.plot(x, 100 * (1 - part["estimate_within_10"]), "s--", label="bins off by > 10 %")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("% of capacity / % of bins")
        ax.legend(fontsize=8)
    axes[0][0].set_title("Fig. 6: burst size (alpha = 0.1)")
    axes[0][1].set_title("Fig. 7: alpha (burst 6)")
    return fig


def estimate(outcome: Outcome) -> Figure | None:
    runs = outcome.series("Fig. 8 forward") + outcome.series("Fig. 8 reverse")
    named = [(d, outcome.series(f"Fig. 8 {d}")) for d in ("forward", "reverse")]
    if not runs:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(11, 5), sharex=True, squeeze=False)
    for col, (name, found) in enumerate(named):
        top, bottom = axes[0][col], axes[1][col]
        top.set_title(f"Fig. 8 ({name} TCP flows, one more every 5 s)")
        for _, parts in found[:1]:
            s = parts[0]
            t = s["t_s"]
            top.fill_between(t, 0, s["capacity_kbps"] / 1e3, color=CAPACITY_COLOR, step="pre",
                             label="capacity")  # fmt: skip
            if "capacity_estimate_kbps" in s:
                top.plot(t, s["capacity_estimate_kbps"] / 1e3, label="estimate B")
            top.plot(t, s["recv_kbps"] / 1e3, lw=0.8, label="video received")
            if {"competition", "competition_truth"} <= set(s.columns):
                bottom.step(t, s["competition_truth"], where="pre", color=TCP_COLOR,
                            label="another flow on the bottleneck")  # fmt: skip
                bottom.step(t, 0.9 * s["competition"], where="pre", label="detected (x0.9)")
        top.set_ylabel("Mbps")
        bottom.set_ylabel("competition")
        bottom.set_xlabel("time (s)")
        for ax in (top, bottom):
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    return fig


def throughput(outcome: Outcome, experiments: tuple[str, ...]) -> Figure | None:
    found = [(e, outcome.series(e)) for e in experiments]
    found = [(e, runs) for e, runs in found if runs]
    if not found:
        return None
    colors = scheme_colors(["gcc", "salsify", "pibes"])
    cols = max(len(runs) for _, runs in found)
    fig, axes = plt.subplots(len(found), cols, figsize=(4.2 * cols, 2.5 * len(found)),
                             squeeze=False, sharex=True)  # fmt: skip
    for row, (experiment, runs) in enumerate(found):
        for col in range(cols):
            ax = axes[row][col]
            if col >= len(runs):
                ax.axis("off")
                continue
            scheme, parts = runs[col]
            t = parts[0]["t_s"]
            ax.fill_between(t, 0, parts[0]["capacity_kbps"] / 1e3, color=CAPACITY_COLOR,
                            step="pre")  # fmt: skip
            for i, s in enumerate(parts):
                video = "video_kbps" in s and s["video_kbps"].notna().any()
                label = f"{scheme}" if i == 0 else (f"{scheme} #{i + 1}" if video else f"TCP {i}")
                color = scheme_color(colors, scheme) if video else TCP_COLOR
                ax.plot(s["t_s"], s["recv_kbps"].rolling(5, min_periods=1).mean() / 1e3,
                        lw=1.0, color=color, ls="-" if i == 0 else "--", label=label)  # fmt: skip
            ax.set_title(f"{experiment}: {scheme}", fontsize=9)
            ax.set_ylabel("Mbps")
            ax.legend(fontsize=6)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    return fig


def frame_delay(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    part = (
        table[table["experiment"].isin(["Fig. 10", "Fig. 11", "Fig. 12"])] if len(table) else table
    )
    if part.empty or "frame_delay_ms_mean" not in part:
        return None
    experiments = list(dict.fromkeys(part["experiment"]))
    schemes = list(dict.fromkeys(part["scheme"]))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(schemes)
    for k, scheme in enumerate(schemes):
        rows = part[part["scheme"] == scheme].set_index("experiment")
        x = np.arange(len(experiments)) + (k - (len(schemes) - 1) / 2) * width
        mean = [rows["frame_delay_ms_mean"].get(e, np.nan) for e in experiments]
        p95 = [rows["frame_delay_ms_p95"].get(e, np.nan) for e in experiments]
        ax.bar(x, mean, width, color=scheme_color(colors, scheme), label=scheme)
        ax.plot(x, p95, "_", color="black", ms=12)
    bound = paper.OWD_MS + paper.S_MAX * 1000 / 30
    ax.axhline(bound, color=PAPER_COLOR, lw=0.8, ls=":", label="bound: 95 % of the link")
    ax.set_xticks(range(len(experiments)), experiments)
    ax.set_ylabel("frame delay (ms); bar mean, tick p95")
    ax.legend(fontsize=8)
    return fig


def render_all(outcome: Outcome) -> dict[str, tuple[bytes, str]]:
    table = outcome.table
    colors = scheme_colors(["gcc", "gcc uncapped", "salsify", "pibes"])
    return render({
        "table1.png": (partial(table1, table, colors),
                       "Table 1: the video flow's utilisation against 0-2 Cubic flows; "
                       "paper's values as red diamonds."),
        "sensitivity.png": (partial(sensitivity, table),
                            "Figs. 6-7: estimate error by burst size and by alpha, 5 Mbps."),
        "estimate.png": (partial(estimate, outcome),
                         "Figs. 8-9: estimate and competition detection with TCP flows joining."),
        "throughput_links.png": (partial(throughput, outcome, ("Fig. 10", "Fig. 11", "Fig. 12")),
                                 "Figs. 10-12: received rate (1 s mean) over the capacity (grey)."),
        "throughput_tcp.png": (partial(throughput, outcome,
                                       ("Fig. 13", "Fig. 14", "Fig. 15", "Fig. 16")),
                               "Figs. 13-16: video (colour) and TCP (grey dashed) rates."),
        "throughput_pibes.png": (partial(throughput, outcome, ("Fig. 17", "Fig. 18")),
                                 "Figs. 17-18: R_min = 1.5 Mbps against TCP; two PIBES flows."),
        "frame_delay.png": (partial(frame_delay, table, colors),
                            "Figs. 10-12: frame delay (encode done to fully received)."),
    })  # fmt: skip
