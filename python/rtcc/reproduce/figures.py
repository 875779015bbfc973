"""Figure helpers every reproduction shares: one colour per scheme across every paper's
figures (:mod:`rtcc.styles`, shared with the comparison page), the paper's own numbers as
hollow black diamonds, bars per scheme and case beside the paper's,
and rendering a list of figures to PNG in rtcc's style. Each paper's figures module builds
its figures from data passed in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from rtcc.plots import style, to_png
from rtcc.styles import REFERENCE, styles
from rtcc.styles import style as scheme_style

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "PAPER_COLOR", "REFERENCE", "FigureList", "grouped_bars", "line_style", "render",
    "scheme_color", "scheme_colors",
]  # fmt: skip

# The paper's own numbers in every reproduction figure: black, a colour no scheme has;
# points are drawn with ``**REFERENCE.mpl()`` (hollow diamonds).
PAPER_COLOR = REFERENCE.color

# filename -> (draws the figure, or None when there is no data for it; caption)
FigureList = Mapping[str, tuple[Callable[[], Figure | None], str]]


def scheme_colors(labels: Iterable[str]) -> dict[str, str]:
    """Each scheme's colour (:func:`rtcc.styles.styles`): the same in every figure of every
    paper and on the comparison page, whatever subset of schemes a figure shows."""
    return {label: st.color for label, st in styles(labels).items()}


def scheme_color(colors: Mapping[str, str], scheme: str) -> str:
    """``scheme``'s colour in ``colors``; its own (:func:`rtcc.styles.style`) when not listed."""
    return colors[scheme] if scheme in colors else scheme_style(scheme).color


def line_style(colors: Mapping[str, str], scheme: str, *, marker: bool = True) -> dict[str, Any]:
    """``Axes.plot`` keywords for ``scheme``'s line: its colour, dash and (with ``marker``)
    marker, so lines of neighbouring colours still differ."""
    st = scheme_style(scheme)
    out: dict[str, Any] = {"color": scheme_color(colors, scheme), "linestyle": st.linestyle}
    if marker:
        out.update(marker=st.marker, ms=4)
    return out


def grouped_bars(
    ax: Axes,
    part: pd.DataFrame,
    by: str,
    column: str,
    scale: float,
    colors: Mapping[str, str],
    paper_values: Mapping[str, Mapping[Any, float]],
) -> list[Any]:
    """One bar of ``column`` x ``scale`` per scheme at each value of the column ``by`` (a
    case, a flow count), the paper's values (scheme -> value of ``by`` -> number) as hollow
    black diamonds on their scheme's bar; returns the values of ``by`` in x order."""
    cases = sorted(part[by].unique())
    schemes = list(dict.fromkeys(part["scheme"]))
    width = 0.8 / len(schemes)
    for k, scheme in enumerate(schemes):
        mine = part[part["scheme"] == scheme].set_index(by)
        x = np.arange(len(cases)) + (k - (len(schemes) - 1) / 2) * width
        values = [scale * mine[column].get(c, np.nan) for c in cases]
        ax.bar(x, values, width, color=scheme_color(colors, scheme), label=scheme)
        for i, case in enumerate(cases):
            ref = paper_values.get(scheme, {}).get(case)
            if ref is not None:
                ax.plot(x[i], scale * ref, **REFERENCE.mpl())
    return cases


def render(figures: FigureList) -> dict[str, tuple[bytes, str]]:
    """``{filename: (png, caption)}`` for every figure that has data, in ``figures``' order."""
    images = {}
    with style():
        for name, (build, caption) in figures.items():
            fig = build()
            if fig is not None:
                images[name] = (to_png(fig), caption)
    return images
