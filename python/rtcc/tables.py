"""Plain-text tables for the terminal: number cells and column alignment.

Shared by everything that prints a table (``rtcc run``, ``rtcc bench``, ``rtcc sweep``,
``rtcc reproduce``), so each of them formats numbers the same way without importing
the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["format_number", "format_table"]


def format_number(value: Any, scale: float = 1.0, digits: int = 0) -> str:
    """``value * scale`` with thousands separators and ``digits`` decimals; "-" when missing
    (None, NaN or not a number)."""
    if value is None or not isinstance(value, (int, float)) or value != value:
        return "-"
    return f"{value * scale:,.{digits}f}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Align columns: the first ``left`` columns (text) left, the rest (numbers) right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
