"""The traces the reproductions replay and where they are found.

Every reproduction reads the sets shipped with rtcc (:mod:`rtcc.traces`) unless
``--traces X`` says otherwise, and X means the same for all of them: a bundled set's
name, a folder of sets (each one's set folder is used), or a folder of trace files
(taken as the set itself, so a folder of Mahimahi files still serves dumbo). A
reproduction that does not find what it needs there refuses (:class:`TracesError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rtcc.traces import TracesError, locate

__all__ = ["MAHIMAHI", "Need", "TracesError", "find_traces", "mahimahi_files"]

MAHIMAHI = "mahimahi"


@dataclass(frozen=True)
class Need:
    """One trace file a reproduction replays: set ``set`` and its ``file``, for ``what``."""

    set: str
    file: str
    what: str

    def locate(self, traces: str | Path | None) -> Path:
        """The file where ``traces`` says (None: the bundled set); raises
        :class:`TracesError` naming what needs it when it is not there."""
        folder = _locate(traces, self.set)
        path = folder / self.file
        if not path.is_file():
            where = f"--traces {traces}" if traces is not None else "the bundled traces"
            raise TracesError(
                f"{where}: no {self.file} (set {self.set}) in {folder}, which {self.what} replays"
            )
        return path


def _locate(traces: str | Path | None, set_name: str) -> Path:
    try:
        return locate(traces, set_name)
    except TracesError as exc:
        raise TracesError(f"--traces {exc}") from None


def find_traces(folder: Path, direction: str, limit: int | None) -> list[Path]:
    """The ``.down`` (``direction="down"``), ``.up`` or all trace files in ``folder``, sorted,
    the first ``limit`` of them when given."""
    suffixes = {"down": (".down",), "up": (".up",), "all": (".down", ".up")}[direction]
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in suffixes)
    return files[:limit] if limit is not None else files


def mahimahi_files(
    traces: str | Path | None, direction: str, limit: int | None, what: str
) -> tuple[Path, list[Path]]:
    """The Mahimahi set's folder where ``traces`` says and its files of ``direction``
    (:func:`find_traces`); raises :class:`TracesError` when it holds none."""
    folder = _locate(traces, MAHIMAHI)
    files = find_traces(folder, direction, limit)
    if not files:
        kinds = {"down": ".down", "up": ".up", "all": ".down or .up"}[direction]
        where = f"--traces {traces}" if traces is not None else "the bundled traces"
        raise TracesError(f"{where}: no Mahimahi {kinds} traces in {folder}, which {what} replays")
    return folder, files
