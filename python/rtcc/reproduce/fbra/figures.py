"""Figures of the FBRA reproduction, as PNG bytes: per table, each scheme's mean over seeds
(bars, standard deviation as error bars) at each bottleneck delay, the paper's means as red
diamonds."""

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

from rtcc.reproduce.fbra import paper
from rtcc.reproduce.figures import REFERENCE, render, scheme_color, scheme_colors

if TYPE_CHECKING:
    from rtcc.reproduce.runs import Outcome

__all__ = ["render_all"]

SCHEMES = ("fbra", "rrtcc", "c-nadu")
# (experiment, column, label, scale, paper table, index in its tuples)
_Ref = Mapping[str, Mapping[int, Sequence[float]]]
PANELS: dict[str, tuple[tuple[str, str, float, _Ref, int], ...]] = {
    "Table 1": (("goodput_kbps", "goodput (kbps)", 1.0, paper.TABLE_1, 0),
                ("loss_discard_rate", "lost or discarded (%)", 100.0, paper.TABLE_1, 1),
                ("lost_frames", "lost frames", 1.0, paper.TABLE_1, 2)),
    "Table 2": (("goodput_kbps", "goodput (kbps)", 1.0, paper.TABLE_2, 0),
                ("loss_discard_rate", "lost or discarded (%)", 100.0, paper.TABLE_2, 1),
                ("tfs", "TCP fair share (%)", 100.0, paper.TABLE_2, 4)),
    "Table 3": (("goodput_kbps", "flow 1 goodput (kbps)", 1.0, paper.TABLE_3, 0),
                ("goodput2_kbps", "flow 2 goodput (kbps)", 1.0, paper.TABLE_3, 1),
                ("tfs", "TCP fair share (%)", 100.0, paper.TABLE_3, 3)),
}  # fmt: skip


def table(t: pd.DataFrame, experiment: str) -> Figure | None:
    if t.empty or "goodput_kbps" not in t:
        return None
    part = t[(t["experiment"] == experiment) & t["goodput_kbps"].notna()]
    if part.empty:
        return None
    colors = scheme_colors(SCHEMES)
    panels = PANELS[experiment]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.4), squeeze=False)
    delays = list(paper.DELAYS_MS)
    width = 0.8 / len(SCHEMES)
    for ax, (col, label, scale, ref, idx) in zip(axes[0], panels, strict=True):
        if col not in part:
            ax.axis("off")
            continue
        for k, s in enumerate(SCHEMES):
            g = part[part["scheme"] == s].groupby("delay_ms")[col]
            x = np.arange(len(delays)) + (k - 1) * width
            mean = [scale * g.mean().get(d, np.nan) for d in delays]
            std = [scale * g.std().get(d, np.nan) for d in delays]
            ax.bar(x, mean, width, yerr=std, capsize=2, color=scheme_color(colors, s), label=s)
            for i, d in enumerate(delays):
                if s in ref and d in ref[s]:
                    ax.plot(x[i], ref[s][d][idx], **REFERENCE.mpl())
        ax.set_xticks(range(len(delays)), [f"{d} ms" for d in delays])
        ax.set_title(f"{experiment}: {label}", fontsize=9)
        ax.legend(fontsize=7)
    return fig


def render_all(outcome: Outcome) -> dict[str, tuple[bytes, str]]:
    t = outcome.table
    return render({
        f"table{n}.png": (partial(table, t, f"Table {n}"),
                          f"Table {n}: mean over seeds (bars, std as error bars); paper red.")
        for n in (1, 2, 3)
    })  # fmt: skip
