"""Runs gathered from results folders into one tidy table, the input of ``rtcc report``.

>>> import rtcc
>>> runs = rtcc.load_runs(["results/reproduce-dumbo"])  # doctest: +SKIP
>>> runs.groupby(["experiment", "scheme"])["utilization"].mean()  # doctest: +SKIP

:func:`load_runs` reads any mix of the folders rtcc writes and returns one row per flow
per run: the run's key (``run``), ``experiment``, ``scheme``, ``trace``, ``seed``, the
flow (``flow``, ``flow_name``, ``kind``, ``controller``, ``scheme_flow``), any other
labels the runs carry, every summary metric of the flow, the convergence metrics where
they were computed, the run's link metrics (``link_*``), ``jain_goodput_active`` and
``jain_index`` (the same value, its first name), then where
the run was read (``folder``, ``record``) and its ``error`` (a failed run has one row and
no metrics). A table of that shape from elsewhere (a results dataset) feeds the report
as well; :func:`load_series` and :func:`load_distributions` read what a run kept beyond
its summary, through the ``record`` column.

Folders it reads:

- a sweep (``rtcc sweep``): ``table.csv`` gives each run's labels and key, ``runs/<key>.json``
  its record (summary, and series or quantiles when the sweep kept them);
- a reproduction (``rtcc reproduce``): ``runs.csv`` (one row per run, as a sweep's table);
- one run (``rtcc run``): ``summary.json`` with ``timeseries.parquet``, ``link.parquet``
  and ``frames.parquet``;
- a folder holding only ``runs/*.json`` (written before runs.csv existed): every record
  there, labelled from its own scenario (name, controller, capacity);
- an ``rtcc reproduce all`` folder: each paper's folder in it, as if named one by one.

The labels become columns: ``experiment`` is the ``experiment`` label, else the sweep's
base scenario (``scenario``), else the run's scenario name; ``scheme`` the ``scheme``
label, else ``controller``, else the first video flow's controller; ``trace`` the ``trace``
label, else the link's capacity as the scenario gives it. Any other label that varies
within an experiment (a sweep's override, FBRA's ``delay_ms``) is added to the experiment's
name (``Table 1 · delay_ms=50``), so a scheme's runs are only pooled where they share a
setting. ``scheme_flow`` marks the flows that speak for the scheme: the run's video flows,
or every flow of a run without video.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc import safeio

__all__ = [
    "DISTRIBUTIONS", "LABELS", "RunsError", "describe_capacity", "load_distributions",
    "load_runs", "load_series", "write_runs",
]  # fmt: skip

# The columns every row starts with, in order.
LABELS = (
    "run", "experiment", "scheme", "trace", "seed", "flow", "flow_name", "kind", "controller",
    "scheme_flow",
)  # fmt: skip
_TAIL = ("folder", "record", "error")
# Labels that are not folded into the experiment's name.
_NAMED = frozenset({"experiment", "scenario", "scheme", "controller", "trace", "seed", "flow"})
# Distributions within a run, each from what the run kept (see load_distributions).
DISTRIBUTIONS = {
    "utilization": "utilisation per time-series bin",
    "frame_latency_ms": "frame latency per frame",
    "bin_latency_ms": "frame latency, mean per time-series bin",
    "recv_kbps": "received bitrate per time-series bin",
}
_QUANTILES = np.linspace(0.0, 1.0, 101)


class RunsError(ValueError):
    """A folder or file that holds no runs rtcc can read; one line naming it and why."""


@dataclass
class _Run:
    """One run before it becomes rows: labels, the record's summary and convergence."""

    key: str | None
    labels: dict[str, Any]
    summary: dict[str, Any] | None
    convergence: dict[int, dict[str, Any]]
    scenario: dict[str, Any]
    folder: str
    record: str | None
    error: str | None = None


def load_runs(folders: Iterable[str | os.PathLike[str]], *, pool: bool = False) -> pd.DataFrame:
    """One row per flow per run of every results folder in ``folders`` (see the module).

    The same experiment name from two folders is kept apart, as ``name (folder)``, unless
    ``pool`` is set: then their runs are pooled, and a run found in both (same key and
    labels) counts once. Raises :class:`RunsError` naming the folder or file when one is
    not a results folder, holds no runs or cannot be read.
    """
    paths = _folder_list(folders)
    if not isinstance(pool, bool):
        raise TypeError(f"pool must be True or False, not {pool!r}")
    per_folder = [_folder_runs(p) for p in paths]
    for runs in per_folder:
        _fold_labels(runs)
    if not pool:
        names = _folder_names(paths)
        found = [{r.labels["experiment"] for r in runs} for runs in per_folder]
        for i, runs in enumerate(per_folder):
            shared = set().union(*(f for j, f in enumerate(found) if j != i)) & found[i]
            for r in runs:
                if r.labels["experiment"] in shared:
                    r.labels["experiment"] = f"{r.labels['experiment']} ({names[i]})"
    rows: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for runs in per_folder:
        for r in runs:
            ident = (r.key, tuple(sorted((k, str(v)) for k, v in r.labels.items())))
            if r.key is not None and ident in seen:
                continue
            seen.add(ident)
            rows += _rows(r)
    return _columns(pd.DataFrame(rows))


def _folder_list(folders: object) -> list[Path]:
    if isinstance(folders, str | os.PathLike):
        folders = [folders]
    if not isinstance(folders, Iterable):
        raise TypeError(f"folders must be a list of folder paths, not {type(folders).__name__}")
    out = []
    for f in folders:
        if not isinstance(f, str | os.PathLike):
            raise TypeError(f"folders must be folder paths, not {type(f).__name__} {f!r}")
        out.append(Path(f))
    if not out:
        raise RunsError("no results folders given")
    unique: dict[Path, Path] = {}
    for p in (paper for f in out for paper in _papers(f)):  # a folder named twice: read once
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def _papers(folder: Path) -> list[Path]:
    """``folder``, or the paper folders of an ``rtcc reproduce all`` folder (its
    ``OUT/<paper>/``: it holds no runs itself). A results dataset is refused here: its
    rows name no records to read series from."""
    from rtcc.dataset import MARKER
    from rtcc.reproduce import EXPERIMENTS

    if (folder / MARKER).is_file():
        raise RunsError(
            f"{folder}: a results dataset, not a results folder; query it with rtcc query, "
            "or give the folders its runs were written to"
        )
    if any((folder / name).exists() for name in ("summary.json", "runs.csv", "table.csv")):
        return [folder]
    found = [folder / n for n in EXPERIMENTS if (folder / n / "runs.csv").is_file()]
    return found or [folder]


def _folder_names(paths: Sequence[Path]) -> list[str]:
    """How a folder is named in an experiment: its last part, or the whole path when two
    folders share it."""
    last = [p.resolve().name or str(p) for p in paths]
    return [n if last.count(n) == 1 else str(p) for n, p in zip(last, paths, strict=True)]


def _folder_runs(folder: Path) -> list[_Run]:
    if not folder.exists():
        raise RunsError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise RunsError(
            f"{folder}: not a folder (give results folders written by rtcc run, sweep or reproduce)"
        )
    # exists(), not is_file(): a summary or table that is not a regular file (a link to
    # /dev/zero, a FIFO) is refused by name when read, not passed over.
    if (folder / "summary.json").exists():
        return [_single(folder)]
    for name in ("runs.csv", "table.csv"):
        path = folder / name
        if path.exists():
            labels = _read_csv(path)
            if "run" in labels.columns:
                return _listed(folder, path, labels)
    records = sorted((folder / "runs").glob("*.json")) if (folder / "runs").is_dir() else []
    if records:
        return [_unlisted(folder, p) for p in records]
    try:
        empty = not any(folder.iterdir())
    except OSError as exc:
        raise RunsError(f"{folder}: cannot be read ({exc.strerror})") from None
    if empty:
        raise RunsError(f"{folder}: empty folder, no runs in it")
    raise RunsError(
        f"{folder}: not a results folder (no summary.json, no runs.csv or table.csv with a "
        "'run' column, no runs/*.json)"
    )


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        raw = safeio.read_bytes(path, safeio.MAX_TABLE_BYTES)
    except safeio.ReadError as exc:
        raise RunsError(str(exc)) from None
    try:
        return pd.read_csv(io.BytesIO(raw))
    except pd.errors.EmptyDataError:
        raise RunsError(f"{path}: empty file, no runs in it") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        why = " ".join(str(exc).split())
        raise RunsError(f"{path}: not a readable CSV table ({why})") from None


def _read_json(path: Path) -> Any:
    try:
        return safeio.read_json(path)
    except safeio.ReadError as exc:
        raise RunsError(str(exc)) from None


def _check_summary(summary: Any, path: Path) -> dict[str, Any]:
    if not isinstance(summary, dict) or not isinstance(summary.get("flows"), list):
        raise RunsError(f"{path}: not a run's summary (no 'flows' list)")
    if not all(isinstance(f, dict) for f in summary["flows"]):
        raise RunsError(f"{path}: flows: every flow must be a table of metrics")
    return summary


def _record(path: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]], dict[str, Any]]:
    """A sweep cache record's summary, per-flow convergence metrics and parsed scenario."""
    from rtcc.scenario import peek

    data = _read_json(path)
    if not isinstance(data, dict):
        raise RunsError(f"{path}: not a run record")
    summary = _check_summary(data.get("summary"), path)
    flows = data.get("flows") if isinstance(data.get("flows"), dict) else {}
    convergence = {}
    for i, entry in flows.items():
        if isinstance(entry, dict) and isinstance(entry.get("convergence"), dict) and i.isdigit():
            convergence[int(i)] = entry["convergence"]
    text = data.get("scenario")
    scenario = peek(text) if isinstance(text, str) else {}
    if "seed" in data and "seed" not in summary:
        summary = {**summary, "seed": data["seed"]}
    return summary, convergence, scenario


def _single(folder: Path) -> _Run:
    """An ``rtcc run`` folder: its summary; its key is a digest of the summary's bytes."""
    path = folder / "summary.json"
    try:
        raw = safeio.read_bytes(path)
    except safeio.ReadError as exc:
        raise RunsError(str(exc)) from None
    try:
        summary = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RunsError(f"{path}: not readable JSON ({' '.join(str(exc).split())})") from None
    summary = _check_summary(summary, path)
    return _Run(hashlib.sha256(raw).hexdigest()[:24], {}, summary, {}, {}, str(folder), str(folder))


def _listed(folder: Path, table: Path, labels: pd.DataFrame) -> list[_Run]:
    """The runs a sweep's table.csv or a reproduction's runs.csv lists, with their records."""
    columns = list(labels.columns)
    end = columns.index("flow_name") if "flow_name" in columns else columns.index("run")
    names = [c for c in columns[:end] if c != "flow"]
    if "flow" in labels.columns:  # one row per flow: the first flow's row carries the labels
        flow = pd.to_numeric(labels["flow"], errors="coerce")
        labels = labels[flow.isna() | (flow == flow.min())]
    runs = []
    seen: set[tuple[Any, ...]] = set()
    for _, row in labels.iterrows():
        given = {k: _plain(row[k]) for k in names}
        key = row["run"]
        error = row.get("error")
        if not isinstance(key, str) or not key:
            why = error if isinstance(error, str) and error else "no record"
            runs.append(_Run(None, given, None, {}, {}, str(folder), None, why))
            continue
        ident = (key, tuple(sorted((k, str(v)) for k, v in given.items())))
        if ident in seen:
            continue
        seen.add(ident)
        if any(c in key for c in "/\\") or key.startswith("."):
            raise RunsError(f"{table}: run: {key!r} is not a run key")
        path = folder / "runs" / f"{key}.json"
        if not path.exists():
            raise RunsError(
                f"{path}: no such file (the run is listed in {table.name}; rerun the sweep or "
                "reproduction to make it again)"
            )
        summary, convergence, scenario = _record(path)
        runs.append(_Run(key, given, summary, convergence, scenario, str(folder), str(path)))
    if not runs:
        raise RunsError(f"{table}: lists no runs")
    return runs


def _unlisted(folder: Path, path: Path) -> _Run:
    summary, convergence, scenario = _record(path)
    return _Run(path.stem, {}, summary, convergence, scenario, str(folder), str(path))


def _plain(value: Any) -> Any:
    """A label cell as a plain Python value (NaN as None, whole floats as ints)."""
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return int(value)
    return value


def describe_capacity(capacity: Any) -> str | None:
    """A link capacity as a scenario gives it, in a few words: ``3Mbps``, a trace file's
    name, ``pulse 3Mbps/500kbps every 40s``; None when there is none."""
    if capacity is None:
        return None
    if not isinstance(capacity, Mapping):
        return str(capacity)
    kind = str(capacity.get("kind", "?"))
    if kind == "trace" and capacity.get("file"):
        return Path(str(capacity["file"])).name
    if kind == "pulse":
        return (
            f"pulse {capacity.get('high', '?')}/{capacity.get('low', '?')} "
            f"every {capacity.get('every', '?')}"
        )
    return kind


def _video_controller(summary: Mapping[str, Any]) -> str | None:
    for flow in summary.get("flows", []):
        if flow.get("kind", "video") == "video" and flow.get("controller") is not None:
            return str(flow["controller"])
    return None


def _fold_labels(runs: list[_Run]) -> None:
    """Fill experiment, scheme and trace; fold the other labels that vary within an
    experiment into its name."""
    for r in runs:
        given = r.labels
        summary = r.summary or {}
        link = r.scenario.get("link") if isinstance(r.scenario.get("link"), dict) else {}
        experiment = _first(given.get("experiment"), given.get("scenario"), summary.get("scenario"))
        scheme = _first(given.get("scheme"), given.get("controller"), _video_controller(summary))
        trace = _first(given.get("trace"), describe_capacity(link.get("capacity")))
        seed = _first(summary.get("seed"), given.get("seed"))
        r.labels = {
            **{k: v for k, v in given.items() if k not in _NAMED},
            "experiment": str(experiment) if experiment is not None else "runs",
            "scheme": str(scheme) if scheme is not None else "?",
            "trace": None if trace is None else str(trace),
            "seed": _plain(seed),
        }
    extra = sorted({k for r in runs for k in r.labels} - {"experiment", "scheme", "trace", "seed"})
    by_experiment: dict[str, list[_Run]] = {}
    for r in runs:
        by_experiment.setdefault(r.labels["experiment"], []).append(r)
    for name, members in by_experiment.items():
        varying = [k for k in extra if len({str(m.labels.get(k)) for m in members}) > 1]
        for m in members:
            parts = [f"{k}={m.labels.get(k)}" for k in varying]
            m.labels["experiment"] = " · ".join([name, *parts])


def _first(*values: Any) -> Any:
    """The first value that is not None (an empty label cell is None)."""
    return next((v for v in values if v is not None), None)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _rows(r: _Run) -> list[dict[str, Any]]:
    head = {"run": r.key, **r.labels}
    tail = {"folder": r.folder, "record": r.record, "error": r.error}
    if r.summary is None:
        return [{**head, **tail}]
    summary = r.summary
    flows = summary["flows"]
    video = [f.get("kind", "video") == "video" for f in flows]
    run_level: dict[str, Any] = {}
    link = summary.get("link")
    if isinstance(link, dict):
        run_level.update({f"link_{k}": v for k, v in link.items() if _scalar(v)})
    for key in ("jain_index", "duration_s"):
        if _scalar(summary.get(key)):
            run_level[key] = summary.get(key)
    # The same index under its newer name; a summary from before it has only jain_index.
    active = summary.get("jain_goodput_active", summary.get("jain_index"))
    if _scalar(active):
        run_level["jain_goodput_active"] = active
    rows = []
    for i, flow in enumerate(flows):
        metrics = {
            k: v for k, v in flow.items() if _scalar(v) and k not in ("name", "controller", "kind")
        }
        metrics.update({k: v for k, v in r.convergence.get(i, {}).items() if _scalar(v)})
        rows.append(
            {
                **head,
                "flow": i,
                "flow_name": flow.get("name"),
                "kind": flow.get("kind", "video"),
                "controller": flow.get("controller", flow.get("cc")),
                "scheme_flow": video[i] if any(video) else True,
                **metrics,
                **run_level,
                **tail,
            }
        )
    return rows


def _columns(table: pd.DataFrame) -> pd.DataFrame:
    """LABELS first, then the other labels, the metrics, and folder/record/error last."""
    for column in (*LABELS, *_TAIL):
        if column not in table.columns:
            table[column] = None
    middle = [c for c in table.columns if c not in (*LABELS, *_TAIL)]
    table = table[[*LABELS, *middle, *_TAIL]].copy()
    for column in ("seed", "flow"):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype("Int64")
    table["scheme_flow"] = table["scheme_flow"].astype("boolean")
    return table.reset_index(drop=True)


def write_runs(out: Path, results: Iterable[Any]) -> Path:
    """``out/runs.csv``: one row per run (per flow with ``flows = "all"``) of the
    :class:`~rtcc.sweeprun.SweepResult` ``results``, as a sweep's table.csv: labels,
    summary metrics and the run key that names the run's record under ``out/runs``."""
    from rtcc.limits import write_atomic

    tables = [r.table() for r in results]
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return write_atomic(Path(out) / "runs.csv", table.to_csv(index=False))


# --- what runs kept beyond their summary ----------------------------------------------


def _kept(record: str) -> dict[int, dict[str, Any]]:
    """Per flow, the series (a DataFrame) and quantiles a run kept; read through
    ``record`` (a cache record's path or an ``rtcc run`` folder)."""
    path = Path(record)
    if path.is_dir():
        return _kept_folder(path)
    data = _read_json(path)
    flows = data.get("flows") if isinstance(data, dict) else None
    out: dict[int, dict[str, Any]] = {}
    for i, entry in (flows or {}).items():
        if not (isinstance(entry, dict) and str(i).isdigit()):
            continue
        kept: dict[str, Any] = {}
        series = entry.get("series")
        if isinstance(series, dict) and series:
            try:
                kept["series"] = pd.DataFrame(series)
            except ValueError as exc:
                raise RunsError(f"{path}: flows.{i}.series: {exc}") from None
        quantiles = entry.get("quantiles")
        if isinstance(quantiles, dict):
            kept["quantiles"] = quantiles
        out[int(i)] = kept
    return out


def _kept_folder(folder: Path) -> dict[int, dict[str, Any]]:
    """An ``rtcc run`` folder's per-flow series (as a sweep keeps them) and frame latencies."""
    from rtcc.convergence import bin_series
    from rtcc.result import Result

    tables = {}
    for name in ("timeseries", "link", "frames"):
        path = folder / f"{name}.parquet"
        try:
            present = path.exists()
            if present:
                safeio.check_file(path, safeio.MAX_TABLE_BYTES)
            tables[name] = pd.read_parquet(path) if present else pd.DataFrame()
        except safeio.ReadError as exc:
            raise RunsError(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise RunsError(f"{path}: not a readable Parquet table ({exc})") from None
    summary = _read_json(folder / "summary.json")
    result = Result(summary=summary, packets=pd.DataFrame(), **tables)
    out: dict[int, dict[str, Any]] = {}
    for i in range(len(summary.get("flows", []))):
        kept: dict[str, Any] = {}
        with contextlib.suppress(ValueError):  # the run recorded no time series
            kept["series"] = bin_series(result, i)
        frames = tables["frames"]
        if not frames.empty and {"flow", "latency_ms"} <= set(frames.columns):
            latency = frames.loc[frames["flow"] == i, "latency_ms"].dropna()
            if len(latency):
                kept["quantiles"] = {"latency_ms": latency.quantile(_QUANTILES).tolist()}
        out[i] = kept
    return out


def load_series(runs: pd.DataFrame, keys: Iterable[str]) -> pd.DataFrame:
    """The kept time series of the runs ``keys`` (``run`` values of :func:`load_runs`' table):
    one row per flow per bin, ``run`` and ``flow`` first, then ``t_s`` and the series'
    columns. Runs that kept none are absent."""
    parts = []
    wanted = list(dict.fromkeys(keys))
    for key in wanted:
        rows = runs[(runs["run"] == key) & runs["record"].notna()]
        if rows.empty:
            continue
        kept = _kept(str(rows["record"].iloc[0]))
        for flow, entry in sorted(kept.items()):
            series = entry.get("series")
            if series is None or series.empty or "t_s" not in series:
                continue
            part = series.copy()
            part.insert(0, "flow", flow)
            part.insert(0, "run", key)
            parts.append(part)
    if not parts:
        return pd.DataFrame(columns=["run", "flow", "t_s"])
    return pd.concat(parts, ignore_index=True)


def load_distributions(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run and scheme flow, 101 quantiles (q = 0, 0.01 ... 1) of each distribution in
    :data:`DISTRIBUTIONS` the run kept: ``run``, ``flow``, ``metric``, ``q``, ``value``.

    Utilisation per bin comes from the quantiles a sweep keeps (``distributions``), else
    from the series (received rate over capacity, bins with capacity only); frame latency
    per frame from kept quantiles (or an ``rtcc run`` folder's frames); the per-bin mean
    frame latency and the received bitrate from the series."""
    ok = runs[runs["record"].notna() & runs["scheme_flow"].fillna(False).astype(bool)]
    parts: list[pd.DataFrame] = []
    for (key, record), group in ok.groupby(["run", "record"], sort=False):
        kept = _kept(str(record))
        for flow in group["flow"].dropna().astype(int):
            for metric, values in _flow_distributions(kept.get(flow, {})).items():
                frame = {"run": key, "flow": flow, "metric": metric, "q": _QUANTILES}
                parts.append(pd.DataFrame({**frame, "value": values}))
    if not parts:
        return pd.DataFrame(columns=["run", "flow", "metric", "q", "value"])
    return pd.concat(parts, ignore_index=True)


def _flow_distributions(kept: Mapping[str, Any]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    quantiles = kept.get("quantiles") or {}
    series = kept.get("series")

    def from_quantiles(name: str) -> np.ndarray | None:
        values = quantiles.get(name)
        if not isinstance(values, list) or len(values) != len(_QUANTILES):
            return None
        arr = np.array([np.nan if v is None else v for v in values], dtype=float)
        return None if np.isnan(arr).all() else arr

    def from_series(values: pd.Series) -> np.ndarray | None:
        values = pd.to_numeric(values, errors="coerce").dropna()
        values = values[np.isfinite(values)]
        return values.quantile(_QUANTILES).to_numpy(dtype=float) if len(values) else None

    util = from_quantiles("utilization")
    if util is None and series is not None and {"recv_kbps", "capacity_kbps"} <= set(series):
        capacity = pd.to_numeric(series["capacity_kbps"], errors="coerce")
        util = from_series((series["recv_kbps"] / capacity).where(capacity > 0))
    latency = from_quantiles("latency_ms")
    picked = {"utilization": util, "frame_latency_ms": latency}
    if series is not None:
        if "latency_ms" in series:
            picked["bin_latency_ms"] = from_series(series["latency_ms"])
        if "recv_kbps" in series:
            picked["recv_kbps"] = from_series(series["recv_kbps"])
    for name, values in picked.items():
        if values is not None:
            out[name] = values
    return out
