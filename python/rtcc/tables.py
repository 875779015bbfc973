"""Tables as text, laid out by rich: number cells and aligned columns.

Shared by everything that prints a table (``rtcc run``, ``rtcc bench``, ``rtcc sweep``,
``rtcc reproduce``, ``rtcc controllers``), so each of them formats numbers the same way
without importing the command line. A table is text, the same on a terminal and in a pipe:
a header, a rule of ``-`` under each column, the rows; columns two spaces apart, never
wrapped, lines without trailing spaces, so ``split()`` reads every row.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["format_number", "table_text"]

# Wider than any table: the console never wraps or crops a row.
_WIDTH = 100_000


def format_number(value: Any, scale: float = 1.0, digits: int = 0) -> str:
    """``value * scale`` with thousands separators and ``digits`` decimals; "-" when missing
    (None, NaN or not a number)."""
    if value is None or not isinstance(value, (int, float)) or value != value:
        return "-"
    return f"{value * scale:,.{digits}f}"


class _Rule:
    """The rule under a header: ``-`` across its column's width (rich gives the width)."""

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement(1, 1)

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment

        yield Segment("-" * options.max_width)


def table_text(header: Sequence[str] | None, rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """``rows`` under ``header`` and its rule (no header: the rows alone); the first
    ``left`` columns (text) aligned left, the rest (numbers) right."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    count = len(header) if header is not None else max((len(r) for r in rows), default=0)
    table = Table(box=None, show_header=header is not None, padding=(0, 1), pad_edge=False)
    for i in range(count):
        table.add_column(
            Text(header[i]) if header is not None else "",
            justify="left" if i < left else "right",
            no_wrap=True,
        )
    if header is not None:
        table.add_row(*(_Rule() for _ in range(count)))
    for row in rows:
        if len(row) != count:
            raise ValueError(f"a row of {len(row)} cells in a table of {count} columns")
        table.add_row(*(Text(str(cell)) for cell in row))
    out = io.StringIO()
    Console(
        file=out, width=_WIDTH, force_terminal=False, force_jupyter=False, color_system=None,
        markup=False, emoji=False, highlight=False,
    ).print(table)  # fmt: skip
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())
