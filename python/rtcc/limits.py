"""Limits on what rtcc reads and rules for what it writes.

- Scenario and sweep-spec files must be regular files of at most ``MAX_INPUT_BYTES``
  (16 MiB); ``/dev/zero``, a FIFO or a huge file is refused before it is read.
- TOML nested deeper than ``MAX_NESTING`` arrays/inline tables is refused before any
  parser recurses into it (Python's own TOML reader overflows its stack at ~330).
- A sweep expands into at most ``MAX_RUNS`` runs unless the caller raises the limit
  (``rtcc sweep --max-runs N``, ``rtcc.sweep(..., max_runs=N)``); the count is computed
  before the runs are built.
- A name that becomes part of a file name (a flow's ``name`` with ``--save-video``, a
  sweep's ``name`` when it names the results folder) is made of ASCII letters, digits,
  ``-``, ``_`` and ``.``, does not start with ``.`` and has at most 64 characters;
  anything else is refused with a line naming the field.
- Results are written to a temporary file in the same folder and renamed into place, so
  a full disk leaves no half-written file, and the error names the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "MAX_INPUT_BYTES", "MAX_NAME_LENGTH", "MAX_NESTING", "MAX_RUNS", "InputError",
    "atomic_path", "check_file_name", "check_nesting", "check_output_dir", "file_name_error",
    "nesting_depth", "output_dir_refusal", "read_limited", "safe_file_name", "too_deep", "write_atomic",
]  # fmt: skip

MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_NESTING = 100
MAX_RUNS = 100_000
MAX_NAME_LENGTH = 64

NAME_RULE = (
    "use ASCII letters, digits, '-', '_' and '.', not starting with '.', "
    f"at most {MAX_NAME_LENGTH} characters"
)
_SAFE_NAME = re.compile(rf"[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{MAX_NAME_LENGTH - 1}}}")


class InputError(ValueError):
    """An input refused by a limit; the message is one line naming the file or field."""


def _show(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def file_name_error(value: object) -> str | None:
    """Why ``value`` cannot be used in a file name, or None when it can."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if _SAFE_NAME.fullmatch(value) is None:
        return f"{_show(value)} cannot be used in a file name ({NAME_RULE})"
    return None


def check_file_name(value: object, field: str) -> str:
    """``value`` if it is a file-name-safe name, else an :class:`InputError` naming ``field``."""
    why = file_name_error(value)
    if why is not None:
        raise InputError(f"{field}: {why}")
    assert isinstance(value, str)
    return value


def safe_file_name(text: str, default: str) -> str:
    """``text`` made file-name safe (other characters become ``_``), for names rtcc derives
    itself (a file's stem); ``default`` when nothing is left."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".")[:MAX_NAME_LENGTH]
    return cleaned or default


# --- reading --------------------------------------------------------------------


def read_limited(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """A regular file's bytes, refusing other kinds of file and files above ``limit``
    before reading them."""
    st = Path(path).stat()  # follows symlinks; raises FileNotFoundError etc. with the name
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file (a device, pipe or socket is not read)")
    if st.st_size > limit:
        raise InputError(f"{path}: {st.st_size:,} bytes, above the {_mb(limit)} limit")
    with Path(path).open("rb") as f:
        data = f.read(limit + 1)  # the file may have grown since the stat
    if len(data) > limit:
        raise InputError(f"{path}: above the {_mb(limit)} limit")
    return data


def _mb(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"


_TOKENS = re.compile(r'"""|\'\'\'|"|\'|#|[\[\]{}]|\n')


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in TOML text, outside strings and comments."""
    depth = deepest = 0
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKENS.search(text, pos)
        if m is None:
            break
        tok = m.group()
        pos = m.end()
        if tok in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif tok in ("]", "}"):
            depth = max(depth - 1, 0)
        elif tok == "#":
            end = text.find("\n", pos)
            pos = n if end < 0 else end
        elif tok in ('"""', "'''"):
            end = text.find(tok, pos)
            pos = n if end < 0 else end + 3
        elif tok == "'":
            end = text.find("'", pos)
            pos = n if end < 0 else end + 1
        elif tok == '"':
            while pos < n:  # a basic string: skip escapes
                ch = text[pos]
                if ch == "\\":
                    pos += 2
                    continue
                pos += 1
                if ch in '"\n':
                    break
    return deepest


def too_deep(text: str) -> bool:
    """Whether TOML text nests more than :data:`MAX_NESTING` deep (cheap for normal text:
    fewer brackets than the limit cannot nest deeper than it)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return False
    return nesting_depth(text) > MAX_NESTING


def check_nesting(text: str, source: str) -> None:
    """Refuse TOML nested deeper than :data:`MAX_NESTING` (before any parser recurses)."""
    if too_deep(text):
        raise InputError(
            f"{source}: arrays or inline tables nested more than {MAX_NESTING} deep "
            "(the limit for scenarios and sweep specs)"
        )


# --- writing --------------------------------------------------------------------


def check_output_dir(out: Path) -> None:
    """Refuse an output folder that cannot be written, before any work is done: it (or
    the nearest folder above it that exists) must be a writable directory."""
    probe = out
    while not probe.exists():
        if probe.is_symlink():  # a dangling link
            raise InputError(f"{probe}: a broken symbolic link")
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    if probe.exists() and not probe.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(probe))
    try:
        fd, name = tempfile.mkstemp(prefix=".rtcc-probe-", dir=probe)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write here ({exc.strerror})", str(probe)) from None
    os.close(fd)
    Path(name).unlink()


def output_dir_refusal(exc: OSError, out: Path) -> str:
    """Why :func:`check_output_dir` refused, for a one-line error: the folder it probed and
    the system's reason. When that folder exists the reason (e.g. ENOENT creating a file
    in ``/proc/1``) must not read as if the folder were missing, so say it exists."""
    failed = os.fsdecode(exc.filename) if exc.filename is not None else str(out)
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    if os.path.isdir(failed):
        return f"cannot create files in {failed}, which exists (the OS says: {reason})"
    return f"cannot write in {failed} ({reason})"


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed to ``path`` when the block
    succeeds, removed when it fails. An ``OSError`` is re-raised naming ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if exc.filename is not None and os.fsdecode(exc.filename) == str(path):
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file and a rename."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp:
        _write(tmp, raw)
    return path


def _write(path: Path, raw: bytes) -> None:
    with path.open("wb") as f:
        f.write(raw)
