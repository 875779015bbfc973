"""Figure helpers every reproduction shares: one colour per scheme across all of a paper's
figures, the colour of the paper's own numbers, and rendering a list of figures to PNG in
rtcc's style. Each paper's figures module builds its figures from data passed in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from matplotlib.figure import Figure

from rtcc.plots import flow_color, style, to_png

__all__ = ["PAPER_COLOR", "FigureList", "render", "scheme_color", "scheme_colors"]

# The paper's own numbers (reference markers) in every reproduction figure.
PAPER_COLOR = "#d62728"

# filename -> (draws the figure, or None when there is no data for it; caption)
FigureList = Mapping[str, tuple[Callable[[], Figure | None], str]]


def scheme_colors(labels: Iterable[str]) -> dict[str, str]:
    """One palette colour per scheme, in order of first appearance, so a scheme keeps its
    colour in every figure whatever subset of schemes a figure shows."""
    return {label: flow_color(i) for i, label in enumerate(dict.fromkeys(labels))}


def scheme_color(colors: Mapping[str, str], scheme: str) -> str:
    """``scheme``'s colour in ``colors``; the next palette colour for a scheme not listed."""
    return colors[scheme] if scheme in colors else flow_color(len(colors))


def render(figures: FigureList) -> dict[str, tuple[bytes, str]]:
    """``{filename: (png, caption)}`` for every figure that has data, in ``figures``' order."""
    images = {}
    with style():
        for name, (build, caption) in figures.items():
            fig = build()
            if fig is not None:
                images[name] = (to_png(fig), caption)
    return images
