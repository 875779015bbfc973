"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Call with (simulated seconds, total seconds); ``close()`` clears the line.

    ``unit`` and ``digits`` label the counts (a sweep counts runs: ``unit=" runs"``,
    ``digits=0``).

    When the stream is not a TTY (CI logs, pipes) it writes nothing at all, so
    output captured by scripts stays clean.
    """

    def __init__(
        self,
        label: str = "",
        stream: TextIO | None = None,
        width: int = 30,
        min_interval_s: float = 0.05,
        unit: str = " s",
        digits: int = 1,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = label
        self.width = width
        self.min_interval_s = min_interval_s
        self.unit = unit
        self.digits = digits
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, done_s: float, total_s: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = total_s > 0 and done_s >= total_s
        if not finished and now - self._last_draw < self.min_interval_s:
            return
        self._last_draw = now
        fraction = min(max(done_s / total_s, 0.0), 1.0) if total_s > 0 else 1.0
        filled = round(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        label = f"{self.label} " if self.label else ""
        d = self.digits
        self.stream.write(
            f"\r{label}[{bar}] {fraction * 100:5.1f}%  {done_s:.{d}f}/{total_s:.{d}f}{self.unit}"
        )
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
