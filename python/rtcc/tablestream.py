"""A run's tables written to Parquet while the run goes on, so memory stays flat
however long the call.

The simulator hands over the rows that are final (packets whose fate is known,
settled frames, finished bins) whenever enough have gathered; each batch goes to a
part file, one row group per flow. At the end the parts are merged into
``<table>.parquet`` flow by flow, one row group at a time, so the files hold the same
rows in the same order as a run kept in memory and saved with :meth:`Result.save`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rtcc.limits import atomic_path
from rtcc.result import TABLES, native_tables

__all__ = ["ROWS_PER_BATCH", "TableStream"]

# Rows kept in the simulator before they are taken and written (about 8 MB of packet
# rows): small against the interpreter and libraries, few enough batches that the
# merge stays quick at 1000 flows.
ROWS_PER_BATCH = 100_000


@dataclass
class _Part:
    path: Path
    # flow id (None for the link table) -> row group
    groups: dict[int | None, int] = field(default_factory=dict)


class TableStream:
    """Collects a run's table batches in ``folder`` and merges them at the end."""

    def __init__(self, folder: Path, rows_per_batch: int | None = None) -> None:
        self.folder = folder
        self.rows_per_batch = ROWS_PER_BATCH if rows_per_batch is None else rows_per_batch
        folder.mkdir(parents=True, exist_ok=True)
        self._tmp = Path(tempfile.mkdtemp(prefix=".rtcc-tables-", dir=folder))
        self._parts: dict[str, list[_Part]] = {name: [] for name in TABLES}
        self._count = 0

    def add(self, tables: Mapping[str, Any]) -> None:
        """Write one batch (``Simulation.take_tables()``)."""
        for name, df in native_tables(tables).items():
            if len(df):
                self._write_part(name, df)

    def _write_part(self, name: str, df: pd.DataFrame) -> None:
        self._count += 1
        part = _Part(self._tmp / f"{name}-{self._count}.parquet")
        table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
        with pq.ParquetWriter(part.path, table.schema) as writer:
            if "flow" in df.columns:
                flows = df["flow"].to_numpy()
                # Rows come flow by flow: each flow is one contiguous run.
                starts = np.flatnonzero(np.r_[True, flows[1:] != flows[:-1]])
                ends = np.r_[starts[1:], len(flows)]
                for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
                    part.groups[int(flows[a])] = i
                    writer.write_table(table.slice(a, b - a), row_group_size=b - a)
            else:
                part.groups[None] = 0
                writer.write_table(table, row_group_size=max(len(df), 1))
        self._parts[name].append(part)

    def finish(self, rest: Mapping[str, Any]) -> dict[str, Path]:
        """Merge every batch and ``rest`` (``finish()["tables"]``) into
        ``<table>.parquet``; returns the files. The part files are removed."""
        try:
            out: dict[str, Path] = {}
            for name, df in native_tables(rest).items():
                out[name] = self._merge(name, df)
            return out
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def abandon(self) -> None:
        """Remove the part files of a run that failed."""
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _merge(self, name: str, rest: pd.DataFrame) -> Path:
        path = self.folder / f"{name}.parquet"
        parts = self._parts[name]
        # The end lists every column, in the order a run kept in memory has them;
        # a batch taken before a column first appeared lacks it (NaN there).
        schema = pa.Schema.from_pandas(rest, preserve_index=False).remove_metadata()
        rest_table = pa.Table.from_pandas(rest, preserve_index=False).cast(schema)
        flows: list[int | None]
        if "flow" in rest.columns:
            seen = {f for p in parts for f in p.groups} | set(rest["flow"].unique().tolist())
            flows = sorted(f for f in seen if f is not None)
        else:
            flows = [None]
        with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
            wrote = False
            for flow in flows:
                for part in parts:
                    group = part.groups.get(flow)
                    if group is not None:
                        # Opened for each read: an open file keeps what it read.
                        with pq.ParquetFile(part.path) as f:
                            rows = f.read_row_group(group)
                        writer.write_table(_conform(rows, schema))
                        wrote = True
                if flow is None:
                    own = rest_table
                else:
                    own = rest_table.filter(pc.equal(rest_table["flow"], flow))
                if own.num_rows or not wrote:
                    writer.write_table(own)
                    wrote = True
        return path


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns in its order; a missing one is NaN."""
    columns = []
    for column in schema:
        if column.name in table.column_names:
            columns.append(table[column.name].cast(column.type))
        else:
            columns.append(pa.nulls(table.num_rows, pa.float64()).fill_null(np.nan))
    return pa.Table.from_arrays(columns, schema=schema)
