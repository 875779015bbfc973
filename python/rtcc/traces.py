"""Trace sets: the ones rtcc ships (``rtcc/data/traces``) and any folder of trace files.

A *set* is a folder of trace files (beside them its README, licence and ``summary.csv``);
a *traces root* is a folder of sets. A scenario names a bundled trace as
``{ kind = "trace", set = "mahimahi", file = "TMobile-LTE-driving.down" }``; ``--traces X``
(every reproduction) and ``rtcc traces X`` take X as a bundled set's name, a folder of
sets, or a folder of trace files. Files are read by the simulator's own loader
(``rtcc._rtcc.trace_info``), so the numbers shown are the ones a run replays.
``RTCC_TRACES``, when set, names the traces root in place of the shipped one, for the
simulator and for every name here alike.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "TraceSet", "TracesError", "bundled_root", "bundled_sets", "describe_file", "find",
    "is_root", "locate", "set_stats", "trace_files",
]  # fmt: skip

# Files of a set folder that are not traces.
_NOT_TRACES = ("summary.csv", "sets.csv")
_NOT_TRACE_PREFIXES = ("readme", "license", "licence", "copying")
# Above this a rate is a recording artefact unless a table says otherwise (trace.rs).
IMPLAUSIBLE = "1Gbps"
# Names the folder of trace sets in place of the shipped one (trace.rs TRACES_ENV).
TRACES_ENV = "RTCC_TRACES"


class TracesError(ValueError):
    """A traces folder or set name that holds nothing usable (one line)."""


@dataclass(frozen=True)
class TraceSet:
    """One set: its name, folder, format and licence (``-`` when unknown)."""

    name: str
    folder: Path
    format: str
    licence: str
    source: str = ""


def bundled_root() -> Path:
    """The folder of trace sets: ``RTCC_TRACES`` when set, else the sets shipped with the
    package (editable or installed). The simulator looks in the same order
    (``trace::traces_root``), so a set's name means the same folder to both."""
    env = os.environ.get(TRACES_ENV)
    if env:
        root = Path(env)
        if not root.is_dir():
            raise TracesError(f"{TRACES_ENV}={env}: not a folder (of trace sets)")
        return root
    return Path(str(resources.files("rtcc").joinpath("data", "traces")))


def bundled_sets() -> list[TraceSet]:
    """The sets of :func:`bundled_root`, as ``sets.csv`` beside them describes them; a
    root without one (an ``RTCC_TRACES`` folder) by its sub-folders of trace files."""
    from rtcc.safeio import ReadError, read_text

    root = bundled_root()
    table = root / "sets.csv"
    if not table.exists():
        return [
            _plain_set(p)
            for p in sorted(root.iterdir())
            if p.is_dir() and not p.name.startswith(".") and trace_files(p)
        ]
    try:
        rows = list(csv.DictReader(io.StringIO(read_text(table, 1 << 20))))
    except ReadError as exc:
        raise TracesError(str(exc)) from None
    try:
        return [
            TraceSet(r["set"], root / r["set"], r["format"], r["licence"], r["source"])
            for r in rows
        ]
    except (KeyError, TypeError) as exc:
        raise TracesError(f"{table}: not a table of trace sets ({exc})") from None


def trace_files(folder: Path) -> list[Path]:
    """The trace files directly in ``folder`` (not its README, licence or summary), sorted."""
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file()
        and not p.name.startswith(".")
        and p.name not in _NOT_TRACES
        and not p.name.lower().startswith(_NOT_TRACE_PREFIXES)
        and p.suffix != ".md"
    )


def is_root(folder: Path) -> bool:
    """Whether ``folder`` holds sets (sub-folders of trace files) rather than traces."""
    return not trace_files(folder) and any(
        p.is_dir() and trace_files(p) for p in folder.iterdir() if not p.name.startswith(".")
    )


def locate(traces: str | Path | None, set_name: str) -> Path:
    """The folder to take set ``set_name``'s files from: the bundled set when ``traces`` is
    None; the bundled set ``traces`` names; ``traces/set_name`` in a folder of sets; else
    ``traces`` itself, a folder of trace files. Raises :class:`TracesError` when ``traces``
    is neither a folder nor a bundled set."""
    if traces is None:
        return bundled_root() / set_name
    path = Path(traces)
    if path.is_dir():
        return path / set_name if (path / set_name).is_dir() else path
    names = [s.name for s in bundled_sets()]
    if str(traces) in names:
        return bundled_root() / str(traces)
    raise TracesError(f"{traces}: no such folder or bundled set (sets: {', '.join(names)})")


def find(traces: str | Path | None, set_name: str, file: str) -> Path | None:
    """Trace ``file`` of set ``set_name`` where ``traces`` says (:func:`locate`), or None."""
    path = locate(traces, set_name) / file
    return path if path.is_file() else None


def describe_file(path: Path) -> dict[str, Any]:
    """One trace file as the simulator reads it: ``format``, ``duration_s``, ``mean_mbps``,
    ``samples`` and, when it holds rates above 1 Gbps, ``implausible`` (their count) and
    ``mean_mbps_without`` (the mean with them dropped, ``drop_above = "1Gbps"``).
    Raises ValueError naming the file when it is no trace."""
    import rtcc

    native = rtcc.native()
    info = dict(native.trace_info(str(path)))
    out: dict[str, Any] = {
        "format": info["format"], "duration_s": info["duration_s"],
        "mean_mbps": info["mean_bps"] / 1e6, "samples": info["samples"],
    }  # fmt: skip
    if info["implausible"]:
        kept = native.trace_info(str(path), drop_above=IMPLAUSIBLE)
        out["implausible"] = info["implausible"]
        out["mean_mbps_without"] = kept["mean_bps"] / 1e6
    return out


def folder_set(folder: Path) -> TraceSet:
    """A folder of trace files as a set: the bundled set's record when it is one, else its
    format read from its first file and its licence file's name."""
    for s in bundled_sets():
        if s.folder.resolve() == folder.resolve():
            return s
    return _plain_set(folder)


def _plain_set(folder: Path) -> TraceSet:
    files = trace_files(folder)
    fmt = "-"
    if files:
        try:
            fmt = describe_file(files[0])["format"]
        except ValueError:
            fmt = "?"
    licence = next(
        (p.name for p in sorted(folder.iterdir()) if p.name.lower().startswith(("licen", "copying"))),
        "-",
    )
    return TraceSet(folder.name, folder, fmt, f"see {licence}" if licence != "-" else "-")


def set_stats(folder: Path) -> dict[str, Any]:
    """A set's files as the simulator reads them: ``files``, ``mean_mbps`` (the mean of
    the files' means, rates above :data:`IMPLAUSIBLE` left out where a file holds any: a
    run refuses them unless ``drop_above`` leaves them out), ``artefacts`` (how many files hold such rates),
    ``total_s`` and ``median_s`` (file durations); None for what no file gave."""
    import statistics

    files = trace_files(folder)
    read: list[dict[str, Any]] = []
    for f in files:
        with contextlib.suppress(ValueError):
            read.append(describe_file(f))
    means = [d.get("mean_mbps_without", d["mean_mbps"]) for d in read]
    durations = [d["duration_s"] for d in read]
    return {
        "files": len(files),
        "mean_mbps": statistics.fmean(means) if means else None,
        "artefacts": sum("implausible" in d for d in read),
        "total_s": sum(durations) if durations else None,
        "median_s": statistics.median(durations) if durations else None,
    }


def _sets_text(sets: list[TraceSet]) -> str:
    from rtcc.tables import format_number, table_text

    rows: list[list[str]] = []
    marked = False
    for s in sets:
        st = set_stats(s.folder)
        mark = "*" if st["artefacts"] else ""
        marked = marked or bool(mark)
        rows.append([
            s.name, s.format, s.licence, str(st["files"]),
            format_number(st["mean_mbps"], 1, 3) + mark,
            format_number(st["total_s"], 1, 0), format_number(st["median_s"], 1, 1),
        ])  # fmt: skip
    head = ["set", "format", "licence", "files", "mean Mbps", "total s", "median s"]
    note = (
        f"\n* rates above {IMPLAUSIBLE} (recording artefacts) left out, "
        f'as drop_above = "{IMPLAUSIBLE}" does'
        if marked else ""
    )  # fmt: skip
    return table_text(head, rows, left=3) + note


def listing(what: str | Path | None = None) -> str:
    """What ``rtcc traces [WHAT]`` prints: the bundled sets (no ``what``), the sets of a
    folder of sets, or a set's (a bundled name or a folder of trace files) or one file's
    traces with format, duration, samples and mean rate as the simulator reads them.
    Raises :class:`TracesError` for a name that is no folder, file or bundled set."""
    from rtcc.tables import format_number, table_text

    if what is None:
        root = bundled_root()
        return (
            f"{_sets_text(bundled_sets())}\n\n{root}; in a scenario: capacity = "
            '{ kind = "trace", set = "SET", file = "FILE" }; \'rtcc traces SET\' lists its files'
        )
    path = Path(what)
    if path.is_file():
        files, head = [path], ""
    else:
        folder = locate(what, "")
        if folder.is_dir() and is_root(folder):
            sets = [folder_set(p) for p in sorted(folder.iterdir()) if p.is_dir()]
            return _sets_text([s for s in sets if trace_files(s.folder)])
        one = folder_set(folder)
        files = trace_files(folder)
        if not files:
            raise TracesError(f"{what}: no trace files in {folder}")
        head = f"set {one.name} ({one.format}; licence: {one.licence}) in {folder}\n\n"
    rows, notes = [], []
    for f in files:
        try:
            d = describe_file(f)
        except ValueError as exc:
            notes.append(f"not read: {exc}")
            continue
        without = d.get("mean_mbps_without")
        rows.append([
            f.name, d["format"], format_number(d["duration_s"], 1, 1), format_number(d["samples"]),
            format_number(d["mean_mbps"], 1, 3),
            f"{format_number(without, 1, 3)} ({d['implausible']} above {IMPLAUSIBLE} dropped)"
            if without is not None else "",
        ])  # fmt: skip
    if not rows:
        raise TracesError(f"{what}: no trace that could be read; {notes[0].removeprefix('not read: ')}")
    table = table_text(
        ["file", "format", "duration s", "samples", "mean Mbps", "without artefacts"], rows, left=2
    )
    return head + table + "".join(f"\n{n}" for n in notes)
