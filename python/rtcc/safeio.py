"""Reading results files with bounds: every reader of what rtcc wrote goes through here.

A results folder is data from anywhere (copied, unpacked, shared), so a reader:

- opens the file without blocking (``O_NONBLOCK``: a FIFO answers at once) and checks
  what it opened (``fstat`` of the open file, so nothing is swapped in between): only a
  regular file is read -- a symbolic link to one is followed, a link to ``/dev/zero``, a
  FIFO, a socket or a folder is refused;
- refuses a file above its size limit before reading it, and reads at most the limit
  (the file may grow while it is read): :data:`MAX_RECORD_BYTES` for JSON (a run's
  ``summary.json``, a sweep's ``runs/<key>.json`` record, a dataset's marker),
  :data:`MAX_TABLE_BYTES` for a table read whole (``table.csv``, ``runs.csv``, a run's
  Parquet tables);
- says why in one line naming the file (:class:`ReadError`, a ``ValueError``).

Parquet files are read by pyarrow or DuckDB from their path: :func:`check_file` checks
them first (kind and, when given, size).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_RECORD_BYTES", "MAX_TABLE_BYTES", "ReadError", "check_file", "read_bytes",
    "read_json", "read_text",
]  # fmt: skip

# A run record keeps a flow's series (100 ms bins) and quantiles: ~10 MB for an hour.
MAX_RECORD_BYTES = 256 * 1024 * 1024
# A sweep's table.csv of 100,000 runs (limits.MAX_RUNS) with many flows is ~1 GB at most.
MAX_TABLE_BYTES = 2 * 1024 * 1024 * 1024


class ReadError(ValueError):
    """A results file refused or unreadable; the message is one line naming it."""


def _size(limit: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if limit >= scale:
            return f"{limit / scale:g} {unit}"
    return f"{limit} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _check(path: Path, st: os.stat_result, limit: int | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        link = " (through a symbolic link)" if path.is_symlink() else ""
        raise ReadError(f"{path}: {_kind(st.st_mode)}{link}, not a regular file; not read")
    if limit is not None and st.st_size > limit:
        raise ReadError(f"{path}: {st.st_size:,} bytes, above the {_size(limit)} limit; not read")


def _reason(path: Path, exc: OSError) -> ReadError:
    reason = {errno.ENOENT: "no such file", errno.EACCES: "permission denied"}.get(
        exc.errno or 0, exc.strerror or str(exc)
    )
    return ReadError(f"{path}: {reason}")


def check_file(path: str | os.PathLike[str], limit: int | None = None) -> Path:
    """``path`` if it is a regular file (a link to one counts) of at most ``limit`` bytes;
    else :class:`ReadError`. For files another library opens by name (Parquet)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise _reason(path, exc) from None
    _check(path, st, limit)
    return path


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (see the module)."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise ReadError(f"{path}: a folder, not a regular file; not read") from None
        raise _reason(path, exc) from None
    try:
        _check(path, os.fstat(fd), limit)
        chunks: list[bytes] = []
        left = limit + 1  # one byte more tells a file that grew past the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise _reason(path, exc) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ReadError(f"{path}: grew above the {_size(limit)} limit while read; not read")
    return data


def read_text(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> str:
    """A regular file's UTF-8 text (see :func:`read_bytes`)."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def read_json(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> Any:
    """A regular file's JSON (see :func:`read_bytes`)."""
    text = read_text(path, limit)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise ReadError(f"{path}: not readable JSON ({why})") from None
