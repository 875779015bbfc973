"""What rtcc writes to a terminal, through rich: progress bars and error lines.

A terminal gets more than a pipe or a file, never different text: a progress bar with the
time left (on stderr, only when stderr is a terminal) and colour. Captured output (scripts,
CI logs, tests) holds no control codes, colour or wrapped lines. Whether a stream is a
terminal is its ``isatty()``: rich's own guesses from ``FORCE_COLOR`` and ``TTY_*``
variables would draw bars into a CI log.

Tables are in :mod:`rtcc.tables`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = [
    "Bar", "Overall", "ProgressCallback", "Steps", "console", "is_terminal", "print_error",
]  # fmt: skip

ProgressCallback = Callable[[float, float], None]

# The progress display an Overall bar holds open: the Bars made while it is drawn add
# their line to it (rich draws one live display at a time).
_board: Progress | None = None


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def console(stream: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A rich console on ``stream`` (default: ``sys.stderr`` or ``sys.stdout`` as they are
    now, so captured streams are honoured) that is a terminal exactly when the stream is.
    Off a terminal it has no colour. It never wraps a line, and markup and highlighting
    are off, since messages hold file names and field paths such as ``flow[0].fps``."""
    file = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    tty = is_terminal(file)
    return Console(
        file=file,
        force_terminal=tty,
        force_jupyter=False,
        no_color=None if tty else True,  # None: a terminal follows NO_COLOR
        color_system="auto" if tty else None,
        width=None if tty else 10_000,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=True,
    )


def print_error(message: str, *, prefix: str = "rtcc: error: ") -> None:
    """``prefix`` and ``message`` as one line on stderr (whitespace folded, never wrapped);
    on a terminal the prefix is bold red. Control characters a message echoes from its
    input (an ESC in a scenario's value) are shown escaped, so they cannot recolour or
    move the terminal."""
    from rtcc.dataset import escape_controls  # stdlib-only at import

    line = Text.assemble((prefix, "bold red"), escape_controls(" ".join(str(message).split())))
    console(stderr=True).print(line)


class Bar:
    """Progress of a loop that reports ``(done, total)``: simulated seconds of a run,
    finished runs of a sweep, steps of a calibration. Drawn on stderr (label, bar,
    percentage, ``done/total`` with ``unit``, time elapsed and left) only when stderr is a
    terminal; elsewhere it writes nothing. ``close()`` (or leaving a ``with`` block)
    removes it."""

    def __init__(
        self,
        label: str = "",
        *,
        unit: str = " s",
        digits: int = 1,
        stream: TextIO | None = None,
        terminal: Console | None = None,
    ) -> None:
        self.label = label
        self._console = terminal if terminal is not None else console(stream, stderr=True)
        self.enabled = self._console.is_terminal
        self.unit = unit
        self.digits = digits
        self._columns = (
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TaskProgressColumn(),
            # Per task, so bars of different units share one display.
            TextColumn("{task.fields[count]}", markup=False),
            TimeElapsedColumn(),
            TextColumn("ETA", markup=False),
            TimeRemainingColumn(),
        )
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._shared = False

    def text(self, done: float, total: float) -> str:
        """The count beside the bar: ``done/total`` and the unit ("23/65 runs")."""
        return f"{done:,.{self.digits}f}/{total:,.{self.digits}f}{self.unit}"

    def __call__(self, done: float, total: float) -> None:
        if not self.enabled:
            return
        count = self.text(done, total)
        if self._progress is None and _board is not None and _board.live.is_started:
            # A line of the overall display, removed again by close().
            self._progress, self._shared = _board, True
            self._task = _board.add_task(self.label, total=total, completed=done, count=count)
            return
        if self._progress is None:
            # Started at the first report, so a bar that never reports draws nothing.
            # Lines printed meanwhile go above the bar, stdout's only when it is a terminal
            # too: rich would move stdout meant for a pipe to stderr.
            self._progress = Progress(
                *self._columns,
                console=self._console,
                transient=True,
                redirect_stdout=is_terminal(sys.stdout),
            )
            self._task = self._progress.add_task(
                self.label, total=total, completed=done, count=count
            )
            self._progress.start()
            return
        assert self._task is not None
        self._progress.update(self._task, completed=done, total=total, count=count)

    def close(self) -> None:
        if self._progress is not None:
            if self._shared:
                assert self._task is not None
                self._progress.remove_task(self._task)
            else:
                self._progress.stop()
            self._progress = None
            self._shared = False

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Overall(Bar):
    """A bar over a task made of parts (``rtcc reproduce all``: 5 papers), drawn on top
    while each part's own :class:`Bar` is drawn below it in the same display. Use it as a
    context manager; ``advance(label)`` counts a part done and names the next."""

    def __init__(self, label: str, total: int, *, unit: str = "", stream: TextIO | None = None,
                 terminal: Console | None = None) -> None:  # fmt: skip
        super().__init__(label, unit=unit, digits=0, stream=stream, terminal=terminal)
        self.total = total
        self.done = 0

    def advance(self, label: str | None = None) -> None:
        self.done += 1
        if self._progress is not None and self._task is not None:
            if label is not None:
                self._progress.update(self._task, description=label)
        self(self.done, self.total)

    def __enter__(self) -> Overall:
        global _board
        self(0, self.total)
        if self._progress is not None and _board is None:
            _board = self._progress
        return self

    def __exit__(self, *exc: object) -> None:
        global _board
        if _board is self._progress:
            _board = None
        self.close()


class Steps:
    """A task of ``total`` steps telling ``progress`` how far it is: a :class:`Bar`
    labelled ``label`` for ``True``, the callable itself (steps done, steps), or nothing
    for ``False``. Use it as a context manager and call ``advance()`` after each step."""

    def __init__(
        self, progress: bool | ProgressCallback, label: str, total: int, *, unit: str = " steps"
    ) -> None:
        self.total = total
        self.done = 0
        self._bar = Bar(label, unit=unit, digits=0) if progress is True else None
        self._report = self._bar or (progress if callable(progress) else None)

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        if self._report is not None:
            self._report(self.done, self.total)

    def __enter__(self) -> Steps:
        self.advance(0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
