"""The figures RFC 8868 §3 asks for, per case: each media flow's rate against the available
capacity over time (one panel per controller), and the CDF of the media packets' one-way
delay (per kept bin of the series) per controller."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rtcc.reproduce.figures import line_style, render, scheme_colors
from rtcc.rfc8867.cases import CASES

if TYPE_CHECKING:
    from rtcc.reproduce.runs import Outcome

__all__ = ["media_series", "render_all"]


def media_series(outcome: Outcome, case: str) -> list[tuple[str, list[tuple[str, pd.DataFrame]]]]:
    """(controller, [(flow name, series)]) of ``case``'s runs, media flows only."""
    out = []
    for result in outcome.results.values():
        for r, record in zip(result.runs, result.records, strict=True):
            if r.labels["experiment"] != case or not record:
                continue
            flows = []
            for i, f in enumerate(record["summary"]["flows"]):
                data = record.get("flows", {}).get(str(i), {}).get("series")
                if f.get("kind", "video") == "video" and data:
                    flows.append((str(f.get("name", i)), pd.DataFrame(data)))
            out.append((str(r.labels["scheme"]), flows))
    return out


def rate_figure(outcome: Outcome, case: str) -> Figure | None:
    runs = [(c, f) for c, f in media_series(outcome, case) if f]
    if not runs:
        return None
    fig, axes = plt.subplots(len(runs), 1, figsize=(7.5, 2.4 * len(runs)), squeeze=False,
                             sharex=True)  # fmt: skip
    for ax, (ctl, flows) in zip(axes[:, 0], runs, strict=True):
        first = flows[0][1]
        if "capacity_kbps" in first:
            ax.step(first["t_s"], first["capacity_kbps"], where="post", color="black", lw=1.2,
                    label="capacity")  # fmt: skip
        for name, d in flows:
            ax.plot(d["t_s"], d["goodput_kbps"], lw=0.9, label=name)
        ax.set_ylabel("kbps")
        ax.set_title(f"{ctl}: rate and available capacity", fontsize=9)
        ax.legend(fontsize=6, ncol=4)
    axes[-1, 0].set_xlabel("time (s)")
    return fig


def cdf_figure(outcome: Outcome, case: str) -> Figure | None:
    runs = [(c, f) for c, f in media_series(outcome, case) if f]
    if not runs:
        return None
    colors = scheme_colors([c for c, _ in runs])
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for ctl, flows in runs:
        owd = np.concatenate([d["owd_ms"].dropna().to_numpy(float) for _, d in flows
                              if "owd_ms" in d])  # fmt: skip
        if not len(owd):
            continue
        x = np.sort(owd)
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=ctl,
                **line_style(colors, ctl, marker=False))  # fmt: skip
    ax.set_xlabel("one-way delay (ms, per 0.5 s bin)")
    ax.set_ylabel("CDF")
    ax.legend(fontsize=7)
    return fig


def render_all(outcome: Outcome) -> dict[str, tuple[bytes, str]]:
    figures: dict[str, Any] = {}
    for cid, case in CASES.items():
        figures[f"rate_{cid}.png"] = (partial(rate_figure, outcome, cid),
                                      f"{case.section} {case.title}: rate against capacity.")
        figures[f"cdf_{cid}.png"] = (partial(cdf_figure, outcome, cid),
                                     f"{case.section} {case.title}: one-way delay CDF.")
    return render(figures)
