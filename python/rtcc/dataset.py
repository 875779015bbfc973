"""One results dataset: every sweep's and reproduction's runs as Parquet, queried with DuckDB.

>>> import rtcc
>>> rtcc.query("SELECT scheme, avg(utilization) FROM runs GROUP BY scheme")  # doctest: +SKIP

A dataset is a folder::

    DIR/dataset.json                                   marks it (format, version)
    DIR/runs/study=<study>/<batch>.parquet             one row per flow per run
    DIR/timeseries/study=<study>/<batch>.parquet       kept per-bin series: one row per bin

A study is a sweep's name or a reproduction's paper (``dumbo``, ``cross``, ...). Each
finished sweep (or group of a reproduction's runs) adds one batch file per table, written
under a temporary name and renamed, never rewritten, so any number of processes may
append to one dataset. A run already in the dataset -- same study, run key, labels and
flow -- is not added again: re-running or resuming a sweep adds only what is new. The
``runs`` and ``timeseries`` views keep one row per such identity (the earliest batch's)
should two writers add the same run at the same moment.

``runs`` columns: ``study``, ``experiment`` (a reproduction's experiment; a sweep's base
scenario), ``scheme`` (a reproduction's scheme; a sweep's controller label), ``trace``,
``seed``, ``run`` (the run key: a hash of the scenario text, seed, analysis options, trace
contents and simulator build, as ``OUT/runs/<run>.json``), ``flow`` (index),
``flow_name``, ``kind``, ``controller``, then every metric of the flow in
``summary.json`` under its own name, ``duration_s``, ``jain_goodput_active`` (and
``jain_index``, the same value under its first name), the link's
``link_<metric>``, the convergence metrics when computed (``converge_up_s``, ...),
``labels`` (JSON of all the run's labels, e.g. sweep override axes), ``wall_s``,
``rtcc_version``, ``written_at`` (UTC) and ``scenario`` (the TOML the run simulated).
Metrics are DOUBLE, names and labels VARCHAR. ``timeseries`` columns: ``study``, ``run``,
``flow``, ``t_s`` (bin end) and the kept series' columns; join on (study, run, flow).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import signal
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtcc.limits import (
    atomic_path, check_output_dir, output_dir_refusal, safe_file_name, write_atomic,
)  # fmt: skip

if TYPE_CHECKING:
    import pandas as pd

    from rtcc.sweeprun import SweepResult

__all__ = [
    "DEFAULT", "MARKER", "DatasetError", "append", "check_result_path", "check_target",
    "connect", "escape_controls", "find", "format_csv", "format_frame", "query", "write_result",
]  # fmt: skip

FORMAT = "rtcc-dataset"
VERSION = 1
MARKER = "dataset.json"
RUNS = "runs"
TIMESERIES = "timeseries"
# What `rtcc query` reads without --dataset: every dataset under the default results folder.
DEFAULT = "results"

# Columns first in every runs row. Text columns are VARCHAR even in a batch where they
# are all empty (cross traffic's `cc` in a video-only sweep), so batches always union.
_HEAD = ("experiment", "scheme", "trace", "seed", "run", "flow", "flow_name", "kind", "controller")
_TEXT = frozenset(
    {*_HEAD, "labels", "rtcc_version", "scenario", "direction", "cc", "encoder", "quality_source"}
    - {"seed", "flow"}
)
# Empty views' columns (a dataset with no runs yet): the identity columns.
_EMPTY = {
    RUNS: "NULL::VARCHAR AS study, NULL::VARCHAR AS experiment, NULL::VARCHAR AS scheme, "
    "NULL::VARCHAR AS trace, NULL::UBIGINT AS seed, NULL::VARCHAR AS run, "
    "NULL::INTEGER AS flow, NULL::VARCHAR AS labels",
    TIMESERIES: "NULL::VARCHAR AS study, NULL::VARCHAR AS run, NULL::INTEGER AS flow, "
    "NULL::DOUBLE AS t_s",
}
# One row per identity, the earliest batch's (files sort by the time they were written).
_IDENTITY = {RUNS: "study, run, labels, flow", TIMESERIES: "study, run, flow, t_s"}


class DatasetError(ValueError):
    """A refused dataset folder or query; the message is one line naming it."""


# --- writing --------------------------------------------------------------------------


def check_target(folder: Path) -> None:
    """Refuse a folder runs cannot be appended to, before any run: not a folder, not
    writable, or holding something other than a dataset."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise DatasetError(f"{folder}: not a folder (dataset)")
    # Hidden entries are temporary files: another writer's marker on its way in.
    if folder.is_dir() and not (folder / MARKER).is_file() and _holds_files(folder):
        raise DatasetError(
            f"{folder}: not an rtcc dataset (no {MARKER}) and not empty; give a new or empty "
            "folder, or one a sweep or reproduction wrote, as the dataset"
        )
    check_output_dir(folder)


def _holds_files(folder: Path) -> bool:
    return any(not p.name.startswith(".") for p in folder.iterdir())


def append(folder: Path, result: SweepResult, study: str) -> int:
    """Append ``result``'s runs that ``folder`` does not hold yet under ``study``; returns
    the number of runs rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    check_target(folder)
    study = safe_file_name(str(study), "study")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / MARKER).is_file():
        marker = {"format": FORMAT, "version": VERSION, "tables": [RUNS, TIMESERIES]}
        write_atomic(folder / MARKER, json.dumps(marker, indent=2) + "\n")
    known = _identities(folder / RUNS / f"study={study}")
    rows, series = _rows(result, known)
    if not rows:
        return 0
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = f"{stamp}-{os.getpid()}-{secrets.token_hex(4)}.parquet"
    # Series first: a batch counts as written once its runs file is there.
    if series:
        table = pa.concat_tables(series, promote_options="default")
        _write(folder / TIMESERIES / f"study={study}" / name, table, pq)
    _write(folder / RUNS / f"study={study}" / name, _runs_table(rows, pa), pq)
    return len(rows)


def _write(path: Path, table: Any, pq: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def _identities(folder: Path) -> set[tuple[str, str, int]]:
    """(run, labels, flow) of every runs row already in one study's folder."""
    import pyarrow.parquet as pq

    known: set[tuple[str, str, int]] = set()
    for path in sorted(folder.glob("*.parquet")):
        _check_parquet(str(path))
        try:
            table = pq.read_table(path, columns=["run", "labels", "flow"]).to_pydict()
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise DatasetError(_one_line(f"{path}: unreadable Parquet ({exc})")) from None
        known.update(zip(table["run"], table["labels"], table["flow"], strict=True))
    return known


def _labels(labels: Mapping[str, Any]) -> str:
    return json.dumps(dict(labels), sort_keys=True, default=str, separators=(",", ":"))


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _rows(
    result: SweepResult, known: set[tuple[str, str, int]]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """Runs rows (one per flow) and time-series tables of the runs not ``known``."""
    import rtcc

    rows: list[dict[str, Any]] = []
    series: list[Any] = []
    seen = set(known)
    for run, record in zip(result.runs, result.records, strict=True):
        if record is None:  # failed: nothing measured
            continue
        key = str(record.get("key"))
        labels = _labels(run.labels)
        summary = record.get("summary", {})
        flows = summary.get("flows", [])
        shared: dict[str, Any] = {
            "duration_s": summary.get("duration_s"),
            "jain_index": summary.get("jain_index"),
            # The same index, its newer name; a summary from before it has only jain_index.
            "jain_goodput_active": summary.get("jain_goodput_active", summary.get("jain_index")),
        }
        link = summary.get("link") or {}
        shared.update({f"link_{k}": v for k, v in link.items() if _scalar(v)})
        kept = record.get("flows", {})
        for i, flow in enumerate(flows):
            if (key, labels, i) in seen:
                continue
            seen.add((key, labels, i))
            row: dict[str, Any] = {
                "experiment": run.labels.get("experiment", run.labels.get("scenario")),
                "scheme": run.labels.get("scheme", run.labels.get("controller")),
                "trace": run.labels.get("trace"),
                "seed": run.seed,
                "run": key,
                "flow": i,
                "flow_name": flow.get("name"),
                "kind": flow.get("kind"),
                "controller": flow.get("controller"),
            }
            row.update((k, v) for k, v in flow.items() if k not in row and k != "name")
            row.update(shared)
            row.update(kept.get(str(i), {}).get("convergence", {}))
            row.update(
                labels=labels, wall_s=record.get("wall_s"), rtcc_version=rtcc.__version__,
                scenario=record.get("scenario"),
            )  # fmt: skip
            rows.append({k: v for k, v in row.items() if _scalar(v)})
            data = kept.get(str(i), {}).get("series")
            if data:
                series.append(_series_table(key, i, data))
    return rows, series


def _series_table(run: str, flow: int, data: Mapping[str, list[Any]]) -> Any:
    import pyarrow as pa

    length = len(next(iter(data.values()), []))
    columns = {"run": pa.array([run] * length, pa.string())}
    columns["flow"] = pa.array([flow] * length, pa.int32())
    for name, values in data.items():
        columns[name] = pa.array([_number(v) for v in values], pa.float64())
    return pa.table(columns)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _runs_table(rows: Sequence[Mapping[str, Any]], pa: Any) -> Any:
    """Rows as an Arrow table with one type per column: identity columns as declared,
    text as string, everything else double (so batches always union)."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    columns: dict[str, Any] = {}
    for name in names:
        values = [row.get(name) for row in rows]
        if name == "seed":
            columns[name] = pa.array(values, pa.uint64())
        elif name == "flow":
            columns[name] = pa.array(values, pa.int32())
        elif name in _TEXT or any(isinstance(v, str) for v in values):
            columns[name] = pa.array([None if v is None else str(v) for v in values], pa.string())
        else:
            columns[name] = pa.array([_number(v) for v in values], pa.float64())
    now = datetime.now(timezone.utc)
    columns["written_at"] = pa.array([now] * len(rows), pa.timestamp("us", tz="UTC"))
    # The scenario text last: the widest column, rarely shown.
    if "scenario" in columns:
        columns["scenario"] = columns.pop("scenario")
    return pa.table(columns)


# --- reading --------------------------------------------------------------------------


def find(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The datasets named: each path is a dataset or a folder searched for datasets."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise DatasetError("dataset: give at least one folder")
    found: list[Path] = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise TypeError(f"dataset must be a folder path or a list of them, not {item!r}")
        path = Path(item)
        if not path.is_dir():
            reason = "not a folder" if path.exists() else "no such folder"
            raise DatasetError(f"{path}: {reason} (dataset)")
        here = []
        for folder, dirs, files in os.walk(path):
            if MARKER in files:
                here.append(Path(folder))
                dirs.clear()  # a dataset's own folders hold no other dataset
            else:
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if not here:
            raise DatasetError(
                f"{path}: holds no rtcc dataset (no {MARKER} in it or below it); every "
                "sweep and reproduction writes one in OUT/dataset"
            )
        for folder in here:
            _check_marker(folder)
        found += here
    return list(dict.fromkeys(found))


def _check_marker(folder: Path) -> None:
    from rtcc.safeio import ReadError, read_json

    path = folder / MARKER
    try:
        marker = read_json(path, 1 << 20)  # a few fields
    except ReadError as exc:
        raise DatasetError(f"{exc} (the dataset's marker)") from None
    if not isinstance(marker, dict) or marker.get("format") != FORMAT:
        raise DatasetError(f"{path}: not an rtcc dataset marker")
    if not isinstance(marker.get("version"), int) or marker["version"] > VERSION:
        raise DatasetError(
            f"{path}: version {marker.get('version')!r}; this rtcc reads version {VERSION}"
        )


def connect(dataset: Any = DEFAULT) -> Any:
    """An in-memory DuckDB connection with the views ``runs`` and ``timeseries`` over the
    datasets in ``dataset`` (a folder or a list of them, as :func:`find`).

    The connection reads the datasets' Parquet files and nothing else: external access is
    off (no other file, no network), the configuration is locked (no ``SET``) and
    extensions are neither installed nor loaded. DuckDB checks each file a view reads
    when a query runs, so the views' files are the allowed paths (``allowed_paths``), set
    before the lock; spilled data goes to a private folder removed with the connection."""
    try:
        import duckdb
    except ImportError:
        raise DatasetError("querying the dataset needs DuckDB: pip install duckdb") from None
    folders = find(dataset)
    files = {
        table: sorted(
            str(p.absolute()) for f in folders for p in (f / table).glob("study=*/*.parquet")
        )
        for table in (RUNS, TIMESERIES)
    }
    every = [p for listed in files.values() for p in listed]
    for path in every:
        _check_parquet(path)
    con = duckdb.connect(
        ":memory:",
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    spill = tempfile.mkdtemp(prefix="rtcc-query-")
    weakref.finalize(con, shutil.rmtree, spill, ignore_errors=True)
    try:
        for table, listed in files.items():
            con.execute(_view(table, listed))
        con.execute(f"SET temp_directory = {_literal(spill)}")
        con.execute(f"SET allowed_paths = [{', '.join(_literal(p) for p in every)}]")
        con.execute("SET allowed_directories = []")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        error = _duck_error(exc, every, con)
        con.close()
        raise error from None
    return con


def _view(table: str, files: Sequence[str]) -> str:
    if not files:
        return f"CREATE VIEW {table} AS SELECT {_EMPTY[table]} WHERE false"
    listed = ", ".join(_literal(p) for p in files)
    return (
        f"CREATE VIEW {table} AS SELECT study, * EXCLUDE (study, filename) FROM read_parquet("
        f"[{listed}], union_by_name = true, hive_partitioning = true, "
        "hive_types = {'study': VARCHAR}, filename = true) "
        f"QUALIFY row_number() OVER (PARTITION BY {_IDENTITY[table]} ORDER BY filename) = 1"
    )


def _check_parquet(path: str) -> None:
    """Refuse a dataset file that is not a regular file or not Parquet (its ``PAR1``
    marks at both ends), naming it, before DuckDB reads it."""
    from rtcc.safeio import ReadError, check_file

    damaged = "a damaged batch: move it out of the dataset (rerunning its sweep adds it again)"
    try:
        size = check_file(path).stat().st_size
        with open(path, "rb") as f:
            head = f.read(4)
            if size >= 12:
                f.seek(size - 4)
            tail = f.read(4)
    except (ReadError, OSError) as exc:
        raise DatasetError(_one_line(str(exc))) from None
    if size < 12 or head != b"PAR1" or tail != b"PAR1":
        raise DatasetError(f"{path}: not a Parquet file (no PAR1 marks), {damaged}")


def _duck_error(exc: Exception, files: Sequence[str], con: Any) -> DatasetError:
    """A DuckDB error as one line; one about a dataset file names the file first. Some
    errors (a damaged footer: ``TProtocolException``) name none: the first file whose
    metadata does not read is then the one."""
    import duckdb

    first = " ".join((str(exc).strip().splitlines() or [type(exc).__name__])[0].split())
    named = next((p for p in files if p in str(exc)), None)
    # Only an error of no SQL class (DuckDB's bare Error) or about input is searched for.
    unnamed = (duckdb.Error, duckdb.IOException, duckdb.InvalidInputException)
    if named is None and type(exc) in unnamed:
        for path in files:
            try:
                con.execute(f"SELECT count(*) FROM parquet_metadata({_literal(path)})")
            except duckdb.Error:
                named = path
                break
    if named is not None:
        return DatasetError(_one_line(f"{named}: unreadable Parquet ({first})"))
    return DatasetError(_one_line(f"query: {first}"))


def _one_line(text: str) -> str:
    """``text`` on one line: tabs and newlines folded to spaces, other controls escaped."""
    return " ".join(_LINE_CONTROL.sub(lambda m: _escaped(m.group()), text).split())


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# What a query may be: statements that only read. Writing goes through `out=` (--out).
# MULTI: PIVOT. CALL f(...) is DuckDB's SELECT * FROM f(...) (a table function), bound
# and sandboxed as that SELECT is (no path outside allowed_paths, configuration locked).
_READING = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "MULTI", "CALL"})
_EXPLAIN = re.compile(r"\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?", re.IGNORECASE)


def _check_reading(sql: str, duckdb: Any) -> None:
    """Refuse any statement that does not only read (COPY, ATTACH, INSTALL, SET, ...),
    before any runs; EXPLAIN is checked for what it explains (ANALYZE runs it)."""
    statements = duckdb.extract_statements(sql)
    if not statements:
        raise DatasetError("query: no SQL statement in it (empty or only comments)")
    for statement in statements:
        kind = statement.type.name
        text = statement.query
        if kind == "EXPLAIN":
            inner = _EXPLAIN.match(text)
            if inner is None:
                kind = "EXPLAIN with options"
            else:
                _check_reading(text[inner.end() :], duckdb)
                continue
        if kind == "SET":  # DuckDB's type for SET, RESET, USE and PRAGMA x=...
            word = (text.split() or [kind])[0].upper()
            raise DatasetError(
                _one_line(
                    f"query: {word[:20]} refused: a setting change (SET, RESET, USE, "
                    "PRAGMA x=...); rtcc query reads the dataset with the settings it opens"
                )
            )
        if kind not in _READING:
            word = (text.split() or [kind])[0].upper()
            raise DatasetError(
                _one_line(
                    f"query: {word[:20]} refused: rtcc query only reads the dataset (SELECT, "
                    "EXPLAIN, CALL, PIVOT, PRAGMA without =); to write a result to a file "
                    "give --out FILE (Python: out=)"
                )
            )


def query(
    sql: str, dataset: Any = DEFAULT, *, out: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Run DuckDB SQL over the datasets in ``dataset`` (default: every dataset under
    ``results/``) and return the result as a pandas DataFrame. The tables are the views
    ``runs`` and ``timeseries`` (see the module's docs for their columns); only reading
    statements run, over the datasets' own files (see :func:`connect`). ``out`` (a
    ``.csv`` or ``.parquet`` path) also writes the result there, the only file a query
    writes. SIGINT (Ctrl-C) interrupts DuckDB and raises ``KeyboardInterrupt``."""
    if not isinstance(sql, str):
        raise TypeError(f"sql must be text, not {type(sql).__name__}")
    target = None if out is None else check_result_path(out)
    con = connect(dataset)  # first: it says how to install DuckDB when it is missing
    import duckdb

    files = con.execute("SELECT unnest(current_setting('allowed_paths'))").fetchall()
    try:
        with _interruptible(con):
            _check_reading(sql, duckdb)
            done = con.execute(sql)
            # DuckDB runs empty text (or only comments) and returns no result at all.
            if done is None:
                raise DatasetError("query: no SQL statement in it (empty or only comments)")
            frame: pd.DataFrame = done.df()
    except duckdb.InterruptException:
        raise KeyboardInterrupt from None
    except duckdb.Error as exc:
        raise _duck_error(exc, [str(f[0]) for f in files], con) from None
    finally:
        con.close()
    if target is not None:
        write_result(frame, target)
    return frame


@contextlib.contextmanager
def _interruptible(con: Any) -> Iterator[None]:
    """While the block runs, SIGINT interrupts ``con``'s query (DuckDB then raises
    ``InterruptException``) instead of waiting for it; the previous handler is put back.
    Only the main thread may set a handler: elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        con.interrupt()

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# --- a query's result ------------------------------------------------------------------

RESULT_FORMATS = (".csv", ".parquet")


def check_result_path(out: str | os.PathLike[str]) -> Path:
    """Where ``out=`` (``rtcc query --out``) writes a result, checked before the query
    runs: a ``.csv`` or ``.parquet`` file in a writable folder, not a folder, not inside a
    dataset (a Parquet file there would become one of its batches)."""
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"out must be a file path, not {type(out).__name__}")
    path = Path(out)
    if path.suffix.lower() not in RESULT_FORMATS:
        raise DatasetError(
            f"--out {path}: give a file ending in {' or '.join(RESULT_FORMATS)} (its format)"
        )
    if path.is_dir():
        raise DatasetError(f"--out {path}: a folder; give a file name")
    if path.exists() and not path.is_file():
        raise DatasetError(f"--out {path}: exists and is not a regular file; not overwritten")
    for folder in path.absolute().parents:
        if (folder / MARKER).exists():
            raise DatasetError(
                f"--out {path}: inside the dataset {folder}; write results outside it"
            )
    try:
        check_output_dir(path.parent)
    except OSError as exc:
        raise DatasetError(f"--out {path}: {output_dir_refusal(exc, path.parent)}") from None
    return path


def write_result(frame: pd.DataFrame, path: Path) -> Path:
    """``frame`` to ``path`` (CSV or Parquet by its suffix) through a temporary file and a
    rename; the values exactly as queried (no escaping)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)
    return path


# Terminal control: C0 (ESC, BEL, CR, ...), DEL, C1, line and paragraph separators and
# bidirectional overrides, which would move the cursor, recolour or reorder the screen.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LINE_CONTROL = re.compile(  # the same but tab and newline, which a table folds into spaces
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def escape_controls(text: str) -> str:
    """``text`` with each terminal control character shown as ``\\xNN``/``\\uNNNN``."""
    return _CONTROL.sub(lambda m: _escaped(m.group()), text)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def format_csv(frame: pd.DataFrame, *, terminal: bool) -> str:
    """A query's result as CSV. For a terminal, control characters in names and text
    values (newlines and tabs too) are escaped, so a row is one line and nothing moves
    the cursor; for a pipe or file the values are exactly as queried."""
    if not terminal:
        return str(frame.to_csv(index=False))
    import pandas as pd

    shown = frame.copy()
    shown.columns = [escape_controls(str(c)) for c in frame.columns]
    for i, column in enumerate(frame.columns):
        values = frame[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            shown.iloc[:, i] = [
                v if v is None or (pd.api.types.is_scalar(v) and pd.isna(v))
                else escape_controls(str(v))
                for v in values
            ]  # fmt: skip
    return str(shown.to_csv(index=False))


def format_frame(frame: pd.DataFrame) -> str:
    """A query's result as an aligned text table; numbers to six significant digits."""
    from rtcc.tables import table_text

    header = [_one_line(str(c)) for c in frame.columns]
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    text = [i for i, c in enumerate(frame.columns) if not _numeric(frame[c])]
    left = next((i for i in range(len(header)) if i not in text), len(header))
    count = f"({len(rows)} row{'s' if len(rows) != 1 else ''})"
    return table_text(header, rows, left=left) + "\n" + count if header else count


def _numeric(column: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column)) and not pd.api.types.is_bool_dtype(column)


def _cell(value: Any) -> str:
    import pandas as pd

    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.1f}" if abs(value) >= 1e6 else f"{value:.6g}"
    if hasattr(value, "item") and not isinstance(value, str):
        return _cell(value.item())
    return _one_line(str(value))
