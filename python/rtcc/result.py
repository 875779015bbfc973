"""A finished run as pandas tables, and writing it to a results folder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FRAME_STATUS", "PACKET_KINDS", "TABLES", "Result", "decode_table"]

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


@dataclass(repr=False)
class Result:
    """Everything one run produced.

    ``summary`` is the native summary (see DESIGN.md §4); the four tables are
    ``packets`` (one row per packet), ``frames`` (one row per frame),
    ``timeseries`` (per flow per 100 ms bin) and ``link`` (per 100 ms bin).
    """

    summary: dict[str, Any]
    packets: pd.DataFrame
    frames: pd.DataFrame
    timeseries: pd.DataFrame
    link: pd.DataFrame
    scenario_text: str = ""
    source: str = "<scenario>"

    @classmethod
    def from_native(
        cls, finished: Mapping[str, Any], scenario_text: str = "", source: str = "<scenario>"
    ) -> Result:
        """Build from ``Simulation.finish()``'s return value."""
        summary = json.loads(finished["summary"])
        tables = finished.get("tables", {})
        frames_ = {name: decode_table(tables.get(name, {}), name) for name in TABLES}
        frames_["packets"] = _categorize(frames_["packets"], "kind", PACKET_KINDS)
        frames_["frames"] = _categorize(frames_["frames"], "status", FRAME_STATUS)
        return cls(summary=summary, scenario_text=scenario_text, source=source, **frames_)

    def __repr__(self) -> str:
        flows = ", ".join(self.flow_names().values())
        rows = ", ".join(f"{name}={len(getattr(self, name))}" for name in TABLES)
        return f"<Result {self.name!r} seed={self.seed} flows=[{flows}] rows: {rows}>"

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
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: not a results folder's summary ({e})") from None
        tables = {}
        for name in TABLES:
            table = out / f"{name}.parquet"
            tables[name] = pd.read_parquet(table) if table.exists() else pd.DataFrame()
        return cls(summary=summary, source=str(out), **tables)

    def jain(
        self,
        flows: list[str] | None = None,
        start: float | None = None,
        end: float | None = None,
        metric: str = "goodput_kbps",
    ) -> float:
        """Jain's fairness index (Σx)²/(n·Σx²) of the flows' mean ``metric``
        (a time-series column) over ``[start, end)`` seconds; all flows and
        the whole run by default. A flow with no bins in the window counts 0;
        a window with no bins at all is refused."""
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
            raise ValueError("no time-series bins in the window (the run has none there)")
        xs = []
        for i in chosen:
            values = ts.loc[inside & (ts["flow"] == i), metric].dropna()
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
        for name in TABLES:
            path = out / f"{name}.parquet"
            with atomic_path(path) as tmp:
                getattr(self, name).to_parquet(tmp, index=False)
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
