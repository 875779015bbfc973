"""The Mahimahi cellular traces the reproductions replay: where they are, which files to run."""

from __future__ import annotations

from pathlib import Path

__all__ = ["default_traces", "find_traces"]


def default_traces() -> Path | None:
    """../shared/traces/mahimahi beside the repository (from this file, then from the cwd)."""
    here = Path(__file__).resolve().parents[3]  # python/rtcc/reproduce/ -> repo root
    for root in (here, Path.cwd()):
        folder = (root / ".." / "shared" / "traces" / "mahimahi").resolve()
        if folder.is_dir():
            return folder
    return None


def find_traces(folder: Path, direction: str, limit: int | None) -> list[Path]:
    """The ``.down`` (``direction="down"``), ``.up`` or all trace files in ``folder``, sorted,
    the first ``limit`` of them when given."""
    suffixes = {"down": (".down",), "up": (".up",), "all": (".down", ".up")}[direction]
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in suffixes)
    return files[:limit] if limit is not None else files
