"""One look per scheme everywhere rtcc draws schemes: the reproductions' matplotlib figures
and the comparison page's plotly charts take a scheme's colour, marker and dash from here,
so ``gcc`` is the same indigo circle in every figure of every paper.

Colours are Paul Tol's colour-blind-safe "muted" scheme (Tol, *Colour schemes*, SRON
technical note, 2021); none is black or grey, which are kept for the papers' own numbers
(:data:`REFERENCE`: hollow black diamonds) and for link capacity. The known schemes are
assigned by hand so that the schemes one paper compares never share a colour (Cross and
Dumbo compare nine each, the palette's size); a scheme this table does not know gets a
colour, marker and dash from a hash of its name, moved on past any style already taken in
the same set (:func:`styles`). Marker and dash differ between schemes that share a colour.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PALETTE", "REFERENCE", "SchemeStyle", "style", "styles"]

# Tol's muted scheme, in his order.
PALETTE = (
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
    "#AA4499",
)  # fmt: skip
# (plotly symbol, matplotlib marker); neither set holds a diamond, the papers' marker.
_MARKERS = (
    ("circle", "o"), ("square", "s"), ("triangle-up", "^"), ("triangle-down", "v"),
    ("pentagon", "p"), ("hexagon", "h"), ("star", "*"), ("x", "X"), ("cross", "P"),
    ("triangle-left", "<"), ("triangle-right", ">"),
)  # fmt: skip
# (plotly dash, matplotlib linestyle)
_DASHES = (
    ("solid", "-"), ("dash", (0, (5, 2))), ("dot", (0, (1, 1.5))), ("dashdot", (0, (5, 2, 1, 2))),
    ("longdash", (0, (9, 3))),
)  # fmt: skip

# scheme -> (palette index, marker index, dash index); see the module for the rule.
_KNOWN: dict[str, tuple[int, int, int]] = {
    "gcc": (0, 0, 0),
    "gcc (720p)": (1, 1, 1),
    "gcc uncapped": (1, 2, 2),
    "gcc-probing": (8, 3, 1),
    "rrtcc": (0, 4, 1),
    "copa": (2, 1, 0),
    "copa (backlogged)": (5, 5, 2),
    "copa+dumbo": (3, 6, 1),
    "rocc": (6, 2, 1),
    "rocc+dumbo": (7, 7, 2),
    "vivace": (4, 3, 0),
    "bbr": (6, 4, 0),
    "rbbr": (8, 5, 0),
    "nada": (5, 6, 0),
    "nadar": (3, 7, 0),
    "c-nadu": (5, 8, 1),
    "cross": (7, 0, 0),
    "cross (no fast adaptation)": (1, 9, 3),
    "salsify": (3, 10, 2),
    "sqp": (2, 8, 2),
    "pudica": (4, 9, 1),
    "burstrtc": (7, 1, 1),
    "pibes": (7, 2, 3),
    "fbra": (7, 3, 4),
    "fixed": (4, 10, 2),
}


@dataclass(frozen=True)
class SchemeStyle:
    """How a scheme is drawn: ``color`` (hex), ``symbol``/``dash`` for plotly and
    ``marker``/``linestyle`` for matplotlib."""

    color: str
    symbol: str
    marker: str
    dash: str
    linestyle: str | tuple[int, tuple[float, ...]]


# The paper's own numbers: a hollow black diamond (plotly, matplotlib), a shape and a
# colour no scheme uses; bars of the paper's numbers are white with black hatching.
@dataclass(frozen=True)
class _Reference:
    color: str = "#000000"
    symbol: str = "diamond-open"
    marker: str = "D"
    size: float = 6.0
    hatch: str = "////"

    def mpl(self) -> dict[str, object]:
        """Keyword arguments for ``Axes.plot`` drawing reference points."""
        return {
            "marker": self.marker, "linestyle": "none", "markerfacecolor": "none",
            "markeredgecolor": self.color, "markeredgewidth": 1.3, "ms": self.size,
            "zorder": 5,
        }  # fmt: skip


REFERENCE = _Reference()


def _make(color: int, marker: int, dash: int) -> SchemeStyle:
    symbol, mpl_marker = _MARKERS[marker % len(_MARKERS)]
    dash_name, linestyle = _DASHES[dash % len(_DASHES)]
    return SchemeStyle(PALETTE[color % len(PALETTE)], symbol, mpl_marker, dash_name, linestyle)


def _hashed(scheme: str) -> tuple[int, int, int]:
    h = zlib.crc32(scheme.encode("utf-8"))
    return h % len(PALETTE), (h // 16) % len(_MARKERS), (h // 256) % len(_DASHES)


def style(scheme: str) -> SchemeStyle:
    """``scheme``'s style: fixed for the schemes rtcc's reproductions run, else from a hash
    of the name (the same in every figure; :func:`styles` keeps a set's apart)."""
    return _make(*_KNOWN.get(scheme, _hashed(scheme)))


def styles(schemes: Iterable[str]) -> dict[str, SchemeStyle]:
    """A style per scheme of ``schemes``: each known scheme its own; an unknown one its
    hashed style, moved to the next colour no scheme of the set has (once all are taken,
    the next colour and marker pair none has), so no two schemes of the set look alike."""
    names = list(dict.fromkeys(schemes))
    out: dict[str, SchemeStyle] = {}
    taken = {(_KNOWN[s][0], _KNOWN[s][1] % len(_MARKERS)) for s in names if s in _KNOWN}
    for s in names:
        if s in _KNOWN:
            out[s] = _make(*_KNOWN[s])
            continue
        c, m, d = _hashed(s)
        colors = {t[0] for t in taken}
        free = [(c + k) % len(PALETTE) for k in range(len(PALETTE))]
        free = [k for k in free if k not in colors]
        if free:  # a colour of its own while the palette lasts
            c = free[0]
        else:
            for step in range(len(PALETTE) * len(_MARKERS)):
                cand = ((c + step) % len(PALETTE), (m + step // len(PALETTE)) % len(_MARKERS))
                if cand not in taken:
                    c, m = cand
                    break
        taken.add((c, m))
        out[s] = _make(c, m, d)
    return out
