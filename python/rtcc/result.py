"""A finished run as pandas tables, and writing it to a results folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rtcc.safeio import ReadError, check_file, read_json

__all__ = ["FRAME_STATUS", "PACKET_KINDS", "TABLES", "Result", "decode_table", "native_tables"]

# Code order is the native module's: packets.kind and frames.status are u8 codes.
PACKET_KINDS = ("media", "padding", "probe", "fec", "rtx", "audio", "feedback", "data")
FRAME_STATUS = ("displayed", "lost", "late", "skipped", "in_flight")
TABLES = ("packets", "frames", "timeseries", "link")

_DTYPES: dict[str, np.dtype[Any]] = {
    "f64": np.dtype("<f8"),
    "i64": np.dtype("<i8"),
    "u8": np.dtype("u1"),
}


def decode_table(columns: Mapping[str, tuple[str, bytes]], name: str = "table") -> pd.DataFrame:
    """Build a DataFrame from ``{column: (dtype, little-endian bytes)}``."""
    data: dict[str, np.ndarray] = {}
    length: int | None = None
    for column, (dtype, raw) in columns.items():
        try:
            np_dtype = _DTYPES[dtype]
        except KeyError:
            raise ValueError(f"{name}.{column}: unknown dtype {dtype!r}") from None
        if len(raw) % np_dtype.itemsize:
            raise ValueError(f"{name}.{column}: {len(raw)} bytes is not a whole number of {dtype}")
        # Copy: frombuffer views are read-only and would pin the native buffer.
        array = np.frombuffer(raw, dtype=np_dtype).astype(np_dtype.newbyteorder("="))
        if length is not None and len(array) != length:
            raise ValueError(f"{name}.{column}: {len(array)} rows, expected {length}")
        length = len(array)
        data[column] = array
    return pd.DataFrame(data)


def _categorize(df: pd.DataFrame, column: str, names: tuple[str, ...]) -> pd.DataFrame:
    """Replace a u8 code column by a Categorical, keeping the code as ``<column>_code``."""
    if column not in df.columns:
        return df
    codes = df[column].to_numpy().astype(np.int64)
    codes = np.where(codes < len(names), codes, -1)  # unknown codes become NaN
    category = pd.Categorical.from_codes(codes, categories=list(names))
    at = df.columns.get_loc(column)
    assert isinstance(at, int)
    df = df.rename(columns={column: f"{column}_code"})
    df.insert(at, column, category)
    return df


def _frame(table: pa.Table) -> pd.DataFrame:
    # Column by column, each Arrow buffer freed as it is converted: the peak stays
    # near one copy of the table.
    return table.to_pandas(split_blocks=True, self_destruct=True)


def _stride(rows: int, max_rows: int | None) -> int:
    return 1 if max_rows is None or rows <= max_rows else -(-rows // max(max_rows, 1))


def native_tables(tables: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The four tables from the native module's ``{table: {column: (dtype, bytes)}}``,
    with ``packets.kind`` and ``frames.status`` as categories."""
    out = {name: decode_table(tables.get(name, {}), name) for name in TABLES}
    out["packets"] = _categorize(out["packets"], "kind", PACKET_KINDS)
    out["frames"] = _categorize(out["frames"], "status", FRAME_STATUS)
    return out


class _Table:
    """A table attribute of :class:`Result`: a DataFrame held in memory, or read
    from ``<folder>/<name>.parquet`` when first used (and then kept)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, result: Result | None, owner: type) -> Any:
        if result is None:
            return self
        held = result._tables.get(self.name)
        if held is None:
            held = result.table(self.name)
            result._tables[self.name] = held
        return held

    def __set__(self, result: Result, value: pd.DataFrame) -> None:
        result._tables[self.name] = value


class Result:
    """Everything one run produced.

    ``summary`` is the native summary (see DESIGN.md §4); the four tables are
    ``packets`` (one row per packet), ``frames`` (one row per frame),
    ``timeseries`` (per flow per 100 ms bin) and ``link`` (per 100 ms bin).

    A result whose tables were written to a folder while it ran
    (``rtcc.simulate(..., tables_dir=...)``) or read back with :meth:`load` reads
    each table when it is first used; :meth:`table` reads chosen columns only.
    """

    packets = _Table()
    frames = _Table()
    timeseries = _Table()
    link = _Table()

    def __init__(
        self,
        summary: dict[str, Any],
        packets: pd.DataFrame | None = None,
        frames: pd.DataFrame | None = None,
        timeseries: pd.DataFrame | None = None,
        link: pd.DataFrame | None = None,
        scenario_text: str = "",
        source: str = "<scenario>",
        tables_dir: str | Path | None = None,
        timing: dict[str, Any] | None = None,
    ) -> None:
        self.summary = summary
        # Wall time and speed-up (timing.json): apart from the summary, whose
        # bytes depend on the scenario and seed only.
        self.timing = timing
        self.scenario_text = scenario_text
        self.source = source
        self.tables_dir = None if tables_dir is None else Path(tables_dir)
        given = {"packets": packets, "frames": frames, "timeseries": timeseries, "link": link}
        if self.tables_dir is None:
            given = {k: pd.DataFrame() if v is None else v for k, v in given.items()}
        self._tables: dict[str, pd.DataFrame | None] = given

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return (
            self.summary == other.summary
            and self.scenario_text == other.scenario_text
            and self.source == other.source
            and all(getattr(self, n).equals(getattr(other, n)) for n in TABLES)
        )

    __hash__ = None  # type: ignore[assignment]

    def table(
        self, name: str, columns: list[str] | None = None, max_rows: int | None = None
    ) -> pd.DataFrame:
        """Table ``name`` (one of ``TABLES``), or only ``columns`` of it (those it
        has), without reading the rest from disk. With ``max_rows``, a longer table
        gives every k-th row (k the smallest that fits), read a batch at a time."""
        if name not in TABLES:
            raise ValueError(f"'{name}' is not a table (tables: {', '.join(TABLES)})")
        held = self._tables.get(name)
        if held is not None:
            df = held if columns is None else held[[c for c in columns if c in held.columns]]
            step = _stride(len(df), max_rows)
            return df if step == 1 else df.iloc[::step].reset_index(drop=True)
        path = None if self.tables_dir is None else self.tables_dir / f"{name}.parquet"
        if path is None or not path.exists():
            return pd.DataFrame()
        with pq.ParquetFile(check_file(path)) as file:
            if columns is not None:
                columns = [c for c in columns if c in file.schema_arrow.names]
            step = _stride(file.metadata.num_rows, max_rows)
            if step == 1:
                return _frame(file.read(columns=columns, use_threads=False))
            parts, offset = [], 0
            for batch in file.iter_batches(columns=columns):
                # Rows offset, offset + step, ... of the whole table.
                first = (-offset) % step
                parts.append(batch.take(pa.array(range(first, batch.num_rows, step))))
                offset += batch.num_rows
            # More rows than max_rows: there is at least one batch.
            return _frame(pa.Table.from_batches(parts))

    @classmethod
    def from_native(
        cls,
        finished: Mapping[str, Any],
        scenario_text: str = "",
        source: str = "<scenario>",
        tables_dir: str | Path | None = None,
    ) -> Result:
        """Build from ``Simulation.finish()``'s return value; with ``tables_dir``, the
        tables are the files there instead (written while the run went on)."""
        summary = json.loads(finished["summary"])
        timing = json.loads(finished["timing"]) if "timing" in finished else None
        if tables_dir is not None:
            return cls(
                summary, scenario_text=scenario_text, source=source, tables_dir=tables_dir,
                timing=timing,
            )  # fmt: skip
        tables = native_tables(finished.get("tables", {}))
        return cls(summary=summary, scenario_text=scenario_text, source=source, timing=timing, **tables)

    def __repr__(self) -> str:
        flows = ", ".join(self.flow_names().values())
        rows = ", ".join(f"{name}={self._rows(name)}" for name in TABLES)
        return f"<Result {self.name!r} seed={self.seed} flows=[{flows}] rows: {rows}>"

    def _on_disk(self, name: str) -> Path | None:
        """The file of table ``name`` when it has not been read into memory."""
        if self.tables_dir is None or self._tables.get(name) is not None:
            return None
        path = self.tables_dir / f"{name}.parquet"
        return path if path.exists() else None

    def _rows(self, name: str) -> int:
        held = self._tables.get(name)
        if held is not None or self.tables_dir is None:
            return 0 if held is None else len(held)
        path = self.tables_dir / f"{name}.parquet"
        return pq.ParquetFile(check_file(path)).metadata.num_rows if path.exists() else 0

    @property
    def name(self) -> str:
        return str(self.summary.get("scenario", "scenario"))

    @property
    def seed(self) -> int | None:
        seed = self.summary.get("seed")
        return int(seed) if seed is not None else None

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow summary metrics, one row per flow, indexed by flow id."""
        return pd.DataFrame(self.summary.get("flows", []))

    def flow_names(self) -> dict[int, str]:
        """Flow id (the ``flow`` column of the tables) to flow name."""
        return {
            i: str(f.get("name", f"flow {i}")) for i, f in enumerate(self.summary.get("flows", []))
        }

    @classmethod
    def load(cls, folder: str | Path) -> Result:
        """Read a results folder written by :meth:`save` (summary.json and the tables)."""
        out = Path(folder)
        path = out / "summary.json"
        try:
            summary = read_json(path)
        except ReadError as e:
            raise ValueError(f"{e} (a results folder's summary)") from None
        return cls(summary=summary, source=str(out), tables_dir=out, timing=_load_timing(out, summary))

    def jain(
        self,
        flows: list[str] | None = None,
        start: float | str | None = None,
        end: float | str | None = None,
        metric: str = "goodput_kbps",
    ) -> float:
        """Jain's fairness index (Σx)²/(n·Σx²) of the flows' mean ``metric``
        (a time-series column) over one window ``[start, end)`` shared by all
        of them; all flows and the whole run by default. ``start`` and ``end``
        are durations by the scenario rule: ``"20s"``, ``"1min"``, or a number of
        seconds. A flow with no bins in the window counts 0; a window with no
        bins at all is refused.

        This is the *window* index (``rtcc fairness``): every flow is measured
        over the same window, so a flow that joins late is judged on the time
        it shares. The summary's ``jain_goodput_active`` (``jain_index``, its
        older name) is another index: each flow's ``goodput_kbps`` over its
        own active time, flows active under a second left out."""
        start, end = window_seconds(start, "start"), window_seconds(end, "end")
        if start is not None and end is not None and start >= end:
            raise ValueError(f"the window is empty: start {start:g} s is not before end {end:g} s")
        names = self.flow_names()
        if flows is not None and not flows:
            raise ValueError("no flows chosen: give at least one flow name")
        chosen = list(names) if flows is None else []
        for name in flows or []:
            ids = [i for i, n in names.items() if n == name]
            if not ids:
                raise ValueError(
                    f"flow '{name}' is not in this run (flows: {', '.join(names.values())})"
                )
            chosen.extend(ids)
        ts = self.timeseries
        if metric not in ts.columns:
            raise ValueError(f"'{metric}' is not a time-series column")
        # A bin's row is stamped with its end.
        inside = pd.Series(True, index=ts.index)
        if start is not None:
            inside &= ts["t_s"] > start
        if end is not None:
            inside &= ts["t_s"] <= end
        if not inside.any():
            window = f"{start or 0:g} s to " + ("the end" if end is None else f"{end:g} s")
            last = f"the run's bins end at {ts['t_s'].max():g} s" if len(ts) else "the run has none"
            raise ValueError(f"no time-series bins in the window {window} ({last})")
        xs = []
        for i in chosen:
            # A bin without a value counts 0, as the reproductions' window indices do.
            values = ts.loc[inside & (ts["flow"] == i), metric].fillna(0.0)
            xs.append(float(values.mean()) if len(values) else 0.0)
        total, squares = sum(xs), sum(x * x for x in xs)
        # All zero: nobody got anything, which is equal shares.
        return 1.0 if squares == 0 else total * total / (len(xs) * squares)

    def save(self, out_dir: str | Path, plots: bool = True) -> list[Path]:
        """Write summary.json, the four tables as Parquet, PNG plots and report.html.

        Returns the files written, in the order written. Each file is written to a
        temporary file beside it and renamed into place, so a failed write (a full disk)
        leaves no half-written file; the ``OSError`` names the file.
        """
        from rtcc import report  # imported late: matplotlib is slow to load
        from rtcc.limits import atomic_path, write_atomic

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []

        summary_path = out / "summary.json"
        write_atomic(summary_path, json.dumps(self.summary, indent=2) + "\n")
        written.append(summary_path)
        if self.timing is not None:
            timing_path = out / "timing.json"
            write_atomic(timing_path, json.dumps(self.timing, indent=2) + "\n")
            written.append(timing_path)
        for name in TABLES:
            path = out / f"{name}.parquet"
            # A table still on disk (written while the run went on) is copied, or
            # left where it is, rather than read in and written again.
            there = self._on_disk(name)
            if there is None:
                with atomic_path(path) as tmp:
                    getattr(self, name).to_parquet(tmp, index=False)
            elif there.resolve() != path.resolve():
                with atomic_path(path) as tmp:
                    shutil.copyfile(there, tmp)
            written.append(path)

        images: dict[str, bytes] = {}
        if plots:
            from rtcc import plots as plotting

            images = plotting.render_all(self)
            for filename, png in images.items():
                path = out / filename
                write_atomic(path, png)
                written.append(path)

        report_path = out / "report.html"
        write_atomic(report_path, report.render(self, images))
        written.append(report_path)
        return written


def _load_timing(folder: Path, summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """A results folder's timing.json; a folder written before it existed has the
    wall time in its summary's ``sim`` section."""
    path = folder / "timing.json"
    if path.exists() or path.is_symlink():
        # Bounded like every record: a link to /dev/zero or a FIFO is refused, not read
        # (a run's timing is a few hundred bytes). ReadError is one line naming the file.
        timing = read_json(path, 1 << 20)
        return timing if isinstance(timing, dict) else None
    sim = summary.get("sim")
    if isinstance(sim, dict) and "wall_s" in sim:
        return {k: sim[k] for k in ("wall_s", "events", "speedup") if k in sim}
    return None


def window_seconds(value: float | str | None, name: str) -> float | None:
    """A window bound in seconds: text with its unit ("20s", "1min") or a number
    of seconds, by the scenario's quantity rule; ValueError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())  # a bare number is seconds, as on the command line
        except ValueError:
            pass
    from rtcc import native

    try:
        return float(native().parse_quantity(value, "duration"))
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name}: {value!r} is not a duration ({e})") from None
