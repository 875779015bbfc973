"""Figures of the BurstRTC reproduction, as PNG bytes (matplotlib Agg, fixed order and
colours): content (Figs. 12-13: bit-rate against frame delay), tail (Figs. 14-16: p95
frame delay and freezes, with the paper's numbers), buffer (Fig. 3), responsiveness
(Fig. 17), stress (Figs. 19-20), sampler (Fig. 8) and fairness (Table I, Fig. 21)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from rtcc.reproduce.burstrtc import paper
from rtcc.reproduce.figures import REFERENCE, line_style, render, scheme_color, scheme_colors

if TYPE_CHECKING:
    from rtcc.reproduce.burstrtc.experiments import Outcome

__all__ = ["render_all"]

CAPACITY_COLOR = "#dddddd"
SCHEMES = ("gcc", "bbr", "salsify", "sqp", "pudica", "burstrtc")


def _part(table: pd.DataFrame, experiment: str) -> pd.DataFrame:
    if table.empty or "goodput_kbps" not in table:
        return table.iloc[0:0]
    return table[(table["experiment"] == experiment) & table["goodput_kbps"].notna()]


def content(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    cases = [(e, _part(table, e)) for e in ("Fig. 12", "Fig. 13", "Fig. 13 vp8")]
    cases = [(e, p) for e, p in cases if not p.empty]
    if not cases:
        return None
    fig, axes = plt.subplots(1, len(cases), figsize=(4.6 * len(cases), 3.6), squeeze=False)
    for ax, (experiment, part) in zip(axes[0], cases, strict=True):
        for _, r in part.iterrows():
            c = scheme_color(colors, r["scheme"])
            mean, p95 = r["frame_delay_ms_mean"], r["frame_delay_ms_p95"]
            ax.errorbar(mean, r["goodput_kbps"] / 1e3, xerr=[[0], [max(p95 - mean, 0)]],
                        fmt="o", color=c, capsize=3, label=r["scheme"])  # fmt: skip
            # The range over seeds (the paper's ellipses): a box from the lowest to the
            # highest seed's mean delay and bit-rate.
            lo, hi = r.get("frame_delay_ms_mean_min"), r.get("frame_delay_ms_mean_max")
            rlo, rhi = r.get("goodput_kbps_min"), r.get("goodput_kbps_max")
            if not any(pd.isna(x) for x in (lo, hi, rlo, rhi)):
                ax.add_patch(Rectangle((lo, rlo / 1e3), hi - lo, (rhi - rlo) / 1e3, fill=False,
                                       edgecolor=c, lw=0.8, ls="--"))  # fmt: skip
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.axhline(paper.CAPACITY_MBPS, color=CAPACITY_COLOR, lw=1)
        ax.set_xlabel("frame delay (ms, log; bar to p95; box: seed range)")
        ax.set_ylabel("bit-rate received (Mbps)")
        ax.set_title({"Fig. 12": "Fig. 12: static", "Fig. 13": "Fig. 13: dynamic",
                      "Fig. 13 vp8": "dynamic, real VP8"}[experiment])  # fmt: skip
        ax.legend(fontsize=7)
    return fig


def tail(table: pd.DataFrame) -> Figure | None:
    parts = [(p, _part(table, e)) for p, e in (("static", "Fig. 12"), ("dynamic", "Fig. 13"))]
    parts = [(p, t) for p, t in parts if not t.empty]
    if not parts:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), squeeze=False)
    width = 0.8 / len(parts)
    for col, (metric, label, scale) in enumerate((
        ("frame_delay_ms_p95", "Fig. 14: p95 frame delay (ms)", 1.0),
        ("freeze_ratio", "Figs. 15-16: freezing time ratio (%)", 100.0),
    )):  # fmt: skip
        ax = axes[0][col]
        for k, (profile, part) in enumerate(parts):
            rows = part.set_index("scheme")
            x = np.arange(len(SCHEMES)) + (k - (len(parts) - 1) / 2) * width
            values = [scale * rows[metric].get(s, np.nan) for s in SCHEMES]
            ax.bar(x, values, width, label=profile, alpha=0.6 + 0.4 * k, color="#4c72b0")
            ref = (paper.FIG_14_P95 if col == 0 else paper.FIG_16_FREEZE).get(profile, {})
            for i, s in enumerate(SCHEMES):
                if s in ref:
                    ax.plot(x[i], scale * ref[s], **REFERENCE.mpl())
        ax.set_xticks(range(len(SCHEMES)), SCHEMES, fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7, title="content; paper red", title_fontsize=7)
    return fig


def buffer(table: pd.DataFrame) -> Figure | None:
    parts = [(p, _part(table, e)) for p, e in (("static", "Fig. 12"), ("dynamic", "Fig. 13"))]
    parts = [(p, t) for p, t in parts if not t.empty and "send_buffer_overshoot" in t]
    if not parts:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), squeeze=False)
    width = 0.8 / len(parts)
    for col, (metric, label) in enumerate((
        ("send_buffer_overshoot", "overshooting: > 150 ms queued (% of time)"),
        ("send_buffer_undershoot", "undershooting: empty (% of time)"),
    )):  # fmt: skip
        ax = axes[0][col]
        for k, (profile, part) in enumerate(parts):
            rows = part.set_index("scheme")
            x = np.arange(len(SCHEMES)) + (k - (len(parts) - 1) / 2) * width
            ax.bar(x, [100 * rows[metric].get(s, np.nan) for s in SCHEMES], width,
                   label=profile, alpha=0.6 + 0.4 * k, color="#55a868")  # fmt: skip
        ax.set_xticks(range(len(SCHEMES)), SCHEMES, fontsize=8)
        ax.set_title(f"Fig. 3: send buffer {label}", fontsize=9)
        ax.legend(fontsize=7)
    return fig


def responsiveness(outcome: Outcome, colors: Mapping[str, str]) -> Figure | None:
    runs = outcome.series("Fig. 17")
    if not runs:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    s0 = runs[0][1][0]
    top.fill_between(s0["t_s"], 0, s0["capacity_kbps"] / 1e3, color=CAPACITY_COLOR, step="pre",
                     label="capacity")  # fmt: skip
    for scheme, parts in runs:
        s = parts[0]
        c = scheme_color(colors, scheme)
        top.step(s["t_s"], s["target_kbps"] / 1e3, where="pre", color=c, lw=1, label=scheme)
        bottom.plot(s["t_s"], s["owd_ms"], color=c, lw=0.8, label=scheme)
    top.set_ylabel("target (Mbps)")
    bottom.set_ylabel("one-way delay (ms)")
    bottom.set_yscale("log")
    bottom.set_xlabel("time (s)")
    top.set_title("Fig. 17: 4 -> 2 -> 4 Mbps, dynamic content")
    top.legend(fontsize=7, ncol=4)
    return fig


def stress(table: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    if table.empty or "experiment" not in table:
        return None
    cases = []
    for prefix, key, xlabel, scale in (
        ("Fig. 19", "loss", "random loss (%)", 100.0),
        ("Fig. 20", "jitter_ms", "delay jitter (ms)", 1.0),
    ):
        part = table[table["experiment"].str.startswith(prefix) & table["goodput_kbps"].notna()]
        if not part.empty and key in part:
            cases.append((prefix, part, key, xlabel, scale))  # fmt: skip
    if not cases:
        return None
    fig, axes = plt.subplots(2, len(cases), figsize=(5 * len(cases), 5.4), squeeze=False)
    for col, (prefix, part, key, xlabel, scale) in enumerate(cases):
        for scheme in dict.fromkeys(part["scheme"]):
            rows = part[part["scheme"] == scheme].sort_values(key)
            look = line_style(colors, scheme)
            x = rows[key].astype(float) * scale
            axes[0][col].plot(x, rows["goodput_kbps"] / 1e3, **look, label=scheme)
            axes[1][col].plot(x, rows["frame_delay_ms_mean"], **look, label=scheme)
        axes[0][col].set_title(prefix, fontsize=9)
        axes[0][col].set_ylabel("bit-rate (Mbps)")
        axes[1][col].set_ylabel("frame delay (ms)")
        axes[1][col].set_xlabel(xlabel)
        axes[0][col].legend(fontsize=6)
    return fig


def sampler(outcome: Outcome) -> Figure | None:
    runs = outcome.series("Fig. 8")
    if not runs:
        return None
    s = runs[0][1][0]
    if "capacity_estimate_kbps" not in s:
        return None
    fig, ax = plt.subplots(figsize=(9, 3.2))
    t = s["t_s"]
    ax.step(t, s["capacity_kbps"] / 1e3, where="pre", color="black", lw=1, label="capacity")
    ax.plot(t, s["capacity_estimate_kbps"] / 1e3, lw=1, label="estimated capacity")
    ax.axhline(1.0, color="grey", ls=":", lw=1, label="UDP background (1 Mbps)")
    if "background_estimate_kbps" in s:
        ax.plot(t, s["background_estimate_kbps"] / 1e3, lw=1, label="estimated background")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mbps")
    ax.set_title("Fig. 8: the bandwidth sampler on a 2 <-> 4 Mbps square wave")
    ax.legend(fontsize=7, ncol=2)
    return fig


def fairness(table: pd.DataFrame, outcome: Outcome, colors: Mapping[str, str]) -> Figure | None:
    part = _part(table, "Table I")
    if part.empty or "jain" not in part:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4))
    schemes: Sequence[str] = list(dict.fromkeys(part["scheme"]))
    by = part.groupby("scheme")["jain"]
    mean, lo, hi = by.mean(), by.min(), by.max()
    x = np.arange(len(schemes))
    m = np.array([mean.get(s, np.nan) for s in schemes])
    err = [m - [lo.get(s, np.nan) for s in schemes], [hi.get(s, np.nan) for s in schemes] - m]
    left.bar(x, m, yerr=err, capsize=3, color=[scheme_color(colors, s) for s in schemes])
    for i, s in enumerate(schemes):
        if s in paper.TABLE_I:
            left.plot(i, paper.TABLE_I[s], **REFERENCE.mpl())
    left.set_xticks(x, schemes, fontsize=8)
    left.set_ylim(0.5, 1.02)
    left.set_title("Table I: Jain's index while both flows run, mean and range over the "
                   "second flow's frame phases (paper red)", fontsize=8)  # fmt: skip
    for _, parts in _first_phase(outcome, "burstrtc"):
        for i, s in enumerate(parts):
            right.plot(s["t_s"], s["goodput_kbps"].rolling(10, min_periods=1).mean() / 1e3,
                       lw=1, label=f"flow {i + 1}")  # fmt: skip
        right.set_title("Fig. 21: two burstrtc flows (1 s mean)", fontsize=9)
        right.set_xlabel("time (s)")
        right.set_ylabel("Mbps")
        right.legend(fontsize=7)
    return fig


def _first_phase(outcome: Outcome, scheme: str) -> list[tuple[str, list[pd.DataFrame]]]:
    """The Table I run of ``scheme`` at phase 0."""
    runs = [r for r in outcome.series("Table I") if r[0] == scheme]
    return runs[:1]


def render_all(outcome: Outcome) -> dict[str, tuple[bytes, str]]:
    table = outcome.table
    colors = scheme_colors(SCHEMES)
    return render({
        "content.png": (partial(content, table, colors),
                        "Figs. 12-13: bit-rate against frame delay on 4 Mbps / 20 ms."),
        "tail.png": (partial(tail, table),
                     "Figs. 14-16: p95 frame delay and freezing time ratio; paper red."),
        "buffer.png": (partial(buffer, table),
                       "Fig. 3: send buffer over- and undershoot on the 4 Mbps runs."),
        "responsiveness.png": (partial(responsiveness, outcome, colors),
                               "Fig. 17: target bit-rate and one-way delay."),
        "stress.png": (partial(stress, table, colors),
                       "Figs. 19-20: random loss and delay jitter."),
        "sampler.png": (partial(sampler, outcome),
                        "Fig. 8: estimated capacity and background against the truth."),
        "fairness.png": (partial(fairness, table, outcome, colors),
                         "Table I and Fig. 21: two flows of one scheme."),
    })  # fmt: skip
