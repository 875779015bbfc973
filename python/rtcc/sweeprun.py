"""Sweep runner: many runs on a local process pool, each cached on disk, gathered into a table.

The package exposes :func:`sweep` as ``rtcc.sweep``; this module is named apart from it so
importing the module never shadows the function.

>>> import rtcc
>>> table = rtcc.sweep("sweeps/cellular.toml", out="results/cellular", jobs=4)  # doctest: +SKIP
>>> table.groupby("controller")["utilization"].mean()  # doctest: +SKIP

Each finished run is written to ``OUT/runs/<key>.json`` (its summary plus whatever the
analysis keeps), where the key hashes the fully resolved scenario TOML, the seed, the
analysis options, the contents of any trace file the run reads and the simulator
build (a digest of the native module, so a rebuilt simulator never serves stale runs).
A sweep therefore never recomputes a finished run, and an interrupted one resumes where
it stopped; ``fresh=True`` (``--fresh``) recomputes anyway. Runs never keep packets,
and keep frames only when convergence needs them.
See :mod:`rtcc.sweepspec` for the spec format.

``executor="ray"`` (``--executor ray [--address ADDR]``) runs the same runs as tasks on a
Ray cluster (:mod:`rtcc.raypool`) with the same cache: the sweep's process still reads
and writes ``OUT/runs``. Every finished batch of runs is also appended to the results
dataset (:mod:`rtcc.dataset`), ``OUT/dataset`` unless ``dataset`` names a shared one.

One folder holds one sweep: ``OUT/sweep.json`` records the sweep's name (its ``name``,
else the spec file's stem), and a sweep of another name into the same folder is refused;
the same sweep, edited (as a file, text or dict), may extend it: only new runs are
computed and ``table.csv`` is the edited spec's. A sweep holds ``OUT/sweep.lock``
(``flock``) while it runs (a reproduction holds it too), so a second process writing
into the folder at the same time is refused instead of interleaving its table with the
first one's. ``table.csv`` is written to a temporary file and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rtcc.console import Bar
from rtcc.limits import MAX_RUNS, atomic_path, write_atomic
from rtcc.safeio import read_json
from rtcc.scenario import ScenarioInput, dumps_toml
from rtcc.sweepspec import Analysis, Run, SweepError, SweepSpec, load_spec
from rtcc.tables import format_number, table_text

__all__ = [
    "CACHE_VERSION", "SweepError", "SweepResult", "execute", "run_key", "summary_text", "sweep",
]  # fmt: skip

CACHE_VERSION = 1
_QUANTILES = [q / 100 for q in range(101)]
_file_digests: dict[tuple[str, int, int], str] = {}


@dataclass
class SweepResult:
    """Runs in spec order with their cache records (None where the run failed)."""

    runs: list[Run]
    records: list[dict[str, Any] | None]
    errors: list[str | None]
    analysis: Analysis = field(default_factory=Analysis)
    executed: int = 0  # runs simulated by this call
    cached: int = 0  # runs read back from the cache
    wall_s: float = 0.0
    out: Path | None = None
    dataset: Path | None = None  # the dataset this call appended to
    appended: int = 0  # rows it added there

    def table(self) -> pd.DataFrame:
        """One row per run (per flow with ``flows = "all"``): labels, summary metrics,
        convergence metrics when computed, the cache key and any error."""
        rows: list[dict[str, Any]] = []
        for run, record, error in zip(self.runs, self.records, self.errors, strict=True):
            rows += _rows(run, record, error, self.analysis)
        table = pd.DataFrame(rows)
        table.attrs.update(executed=self.executed, cached=self.cached, failed=self.failed)
        return table

    @property
    def failed(self) -> int:
        return sum(e is not None for e in self.errors)


def _file_digest(path: str) -> str:
    stat = Path(path).stat()
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _file_digests:
        _file_digests[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return _file_digests[key]


def _simulator_digest() -> str:
    """Identifies the simulator build: a digest of the native module's file."""
    import rtcc

    native = getattr(rtcc.native(), "__file__", None)
    return _file_digest(native) if native else rtcc.__version__


def _trace_files(scenario: Mapping[str, Any]) -> list[str]:
    capacity = scenario.get("link", {}).get("capacity")
    if isinstance(capacity, Mapping) and capacity.get("kind") == "trace":
        return [str(capacity.get("file"))]
    return []


def prepare(run: Run, analysis: Analysis) -> dict[str, Any]:
    """The scenario as it is simulated: packets off, frames/time series only when needed."""
    scenario = dict(run.scenario)
    record = dict(scenario.get("record", {}))
    record["packets"] = False
    record["frames"] = analysis.convergence
    record["timeseries"] = analysis.needs_timeseries
    scenario["record"] = record
    return scenario


def run_key(run: Run, analysis: Analysis, text: str | None = None) -> str:
    """Cache key: resolved scenario TOML (``text``, if already made) + seed +
    analysis options + trace file contents."""
    files = {}
    for path in _trace_files(run.scenario):
        try:
            files[path] = _file_digest(path)
        except OSError:
            files[path] = "missing"  # the run itself reports the error
    blob = json.dumps(
        {
            "version": CACHE_VERSION,
            "scenario": text if text is not None else dumps_toml(prepare(run, analysis)),
            "seed": run.seed,
            "analysis": _analysis_key(analysis),
            "files": files,
            "simulator": _simulator_digest(),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _analysis_key(analysis: Analysis) -> dict[str, Any]:
    """The analysis options in a cache key; ``series_s`` only when set, so runs cached
    before it existed keep their keys."""
    options = asdict(analysis)
    if options["series_s"] is None:
        del options["series_s"]
    return options


def resample(series: pd.DataFrame, seconds: float) -> pd.DataFrame:
    """A per-bin series (``t_s`` = bin end) averaged into bins of ``seconds``, each row
    stamped with its bin's end; NaN cells are left out of the means."""
    if series.empty:
        return series
    t = series["t_s"].to_numpy(dtype=float)
    group = np.ceil(t / seconds - 1e-9).astype(np.int64)
    out = series.drop(columns="t_s").groupby(group).mean()
    out.insert(0, "t_s", out.index.to_numpy(dtype=float) * seconds)
    return out.reset_index(drop=True)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN/inf become null, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def analyse(result: Any, analysis: Analysis) -> dict[str, Any]:
    """What a run keeps: its summary and, per analysed flow, convergence/series/quantiles."""
    from rtcc import convergence as conv

    flows = result.summary.get("flows", [])
    picked = range(len(flows)) if analysis.flows == "all" else range(min(1, len(flows)))
    record: dict[str, Any] = {"summary": result.summary}
    if not analysis.needs_timeseries:
        return record
    per_flow: dict[str, Any] = {}
    for i in picked:
        series = conv.bin_series(result, i)
        entry: dict[str, Any] = {}
        kept = series if analysis.series_s is None else resample(series, analysis.series_s)
        if analysis.convergence:
            entry["convergence"] = conv.convergence(
                series, steady_window_s=analysis.steady_window_s, smooth_s=analysis.smooth_s
            )
        if analysis.series:
            entry["series"] = {c: kept[c].round(3).tolist() for c in kept.columns}
        if analysis.distributions:
            util = (series["recv_kbps"] / series["capacity_kbps"]).where(
                series["capacity_kbps"] > 0
            )
            entry["quantiles"] = {"utilization": util.dropna().quantile(_QUANTILES).tolist()}
            frames = result.frames
            if not frames.empty and "latency_ms" in frames:
                lat = frames.loc[frames["flow"] == i, "latency_ms"].dropna()
                entry["quantiles"]["latency_ms"] = lat.quantile(_QUANTILES).tolist()
        per_flow[str(i)] = entry
    record["flows"] = per_flow
    cleaned: dict[str, Any] = _clean(record)
    return cleaned


def _one(
    key: str, text: str, source: str, seed: int, analysis: Analysis, cache: str | None
) -> tuple[str, dict[str, Any] | None, str | None]:
    """Worker: simulate, analyse, write the cache file atomically; errors come back as text."""
    import rtcc

    started = time.perf_counter()
    try:
        result = rtcc.simulate(ScenarioInput(text, source), seed=seed, record_packets=False)
        record = analyse(result, analysis)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # pyo3's PanicException is not an Exception
        return key, None, " ".join(str(exc).split()) or type(exc).__name__
    record.update(
        version=CACHE_VERSION, key=key, seed=seed, scenario=text,
        wall_s=round(time.perf_counter() - started, 4),
    )  # fmt: skip
    if cache is not None:
        store(cache, record)
    return key, record, None


def store(cache: str, record: Mapping[str, Any]) -> None:
    """Write one run's cache file; atomic, so a killed sweep never leaves half a file."""
    tmp = Path(f"{cache}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, separators=(",", ":")), encoding="utf-8")
    tmp.replace(cache)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        record = read_json(path)
    except ValueError:
        return None  # absent, unreadable or not a regular file: recompute
    return record if isinstance(record, dict) and record.get("version") == CACHE_VERSION else None


def execute(
    runs: Sequence[Run],
    analysis: Analysis | None = None,
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    *,
    progress: bool | Callable[[float, float], None] = False,
    fresh: bool = False,
    on_error: str = "raise",
    label: str = "sweep",
    executor: str = "local",
    address: str | None = None,
    dataset: str | os.PathLike[str] | bool | None = None,
    study: str | None = None,
) -> SweepResult:
    """Run ``runs`` (skipping those already cached under ``out``) and collect their records.

    ``on_error="raise"`` stops at the first failed run with a :class:`SweepError` naming
    it; ``"skip"`` keeps going and leaves the error in the result (and table).
    ``executor`` is ``"local"`` (a process pool of ``jobs`` workers) or ``"ray"`` (tasks on
    the Ray cluster at ``address``; none: a running one, else one started here). When it
    finishes, the runs not yet in the dataset are appended to it under ``study`` (default
    ``label``): ``dataset`` is a folder, ``None`` for ``OUT/dataset`` (none without
    ``out``) or ``False`` for none.
    """
    analysis = analysis or Analysis()
    if on_error not in ("raise", "skip"):
        raise ValueError("on_error must be 'raise' or 'skip'")
    _check_options(jobs, out, progress, fresh, executor, address, dataset)
    asked = jobs
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise SweepError("jobs: must be at least 1")
    target = _dataset_folder(out, dataset)
    if target is not None:
        from rtcc import dataset as results

        results.check_target(target)  # before any run, not after all of them
    started = time.perf_counter()
    cache_dir = Path(out) / "runs" if out is not None else None
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
    texts = [dumps_toml(prepare(run, analysis)) for run in runs]
    keys = [run_key(run, analysis, text) for run, text in zip(runs, texts, strict=True)]
    result = SweepResult(list(runs), [None] * len(runs), [None] * len(runs), analysis, out=None)
    result.out = Path(out) if out is not None else None
    where: dict[str, list[int]] = {}
    pending: list[tuple[str, str, str, int, Analysis, str | None]] = []
    for i, (run, key, text) in enumerate(zip(runs, keys, texts, strict=True)):
        path = cache_dir / f"{key}.json" if cache_dir is not None else None
        cached = _load(path) if path is not None and not fresh else None
        if cached is not None:
            result.records[i] = cached
            result.cached += 1
            continue
        if key not in where:  # identical runs are simulated once
            pending.append((key, text, run.source, run.seed, analysis, str(path) if path else None))
        where.setdefault(key, []).append(i)

    bar = Bar(label, unit=" runs", digits=0) if progress is True else None
    report = bar or (progress if callable(progress) else None)
    done = result.cached
    total = len(runs)

    def finish(key: str, record: dict[str, Any] | None, error: str | None) -> None:
        nonlocal done
        for i in where[key]:
            result.records[i] = record
            result.errors[i] = _describe(runs[i], error) if error else None
            done += 1
        result.executed += 1
        if report is not None:
            report(done, total)
        if error and on_error == "raise":
            raise SweepError(result.errors[where[key][0]])

    if report is not None:
        report(done, total)
    try:
        if executor == "ray":
            if pending:  # a sweep found whole in its cache needs no cluster
                from rtcc import raypool

                raypool.run(pending, asked, address, finish)
        elif jobs == 1 or len(pending) <= 1:
            for task in pending:
                finish(*_one(*task))
        else:
            _pool(pending, min(jobs, len(pending)), finish)
    finally:
        if bar is not None:
            bar.close()
    if target is not None:
        from rtcc import dataset as results

        result.dataset = target
        result.appended = results.append(target, result, study or label)
    result.wall_s = time.perf_counter() - started
    return result


EXECUTORS = ("local", "ray")


def _check_options(
    jobs: object,
    out: object,
    progress: object,
    fresh: object,
    executor: object = "local",
    address: object = None,
    dataset: object = None,
) -> None:
    """Clear errors for wrongly typed arguments (``jobs="2"``, ``fresh="no"``)."""
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)):
        raise TypeError(f"jobs must be a whole number of processes or None, not {jobs!r}")
    if out is not None and not isinstance(out, str | os.PathLike):
        raise TypeError(f"out must be a folder path or None, not {type(out).__name__}")
    if not isinstance(progress, bool) and not callable(progress):
        raise TypeError(f"progress must be True, False or a callable, not {progress!r}")
    if not isinstance(fresh, bool):
        raise TypeError(f"fresh must be True or False, not {fresh!r}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be 'local' or 'ray', not {executor!r}")
    if address is not None and not isinstance(address, str):
        raise TypeError(f"address must be a Ray cluster address (text) or None, not {address!r}")
    if address is not None and executor != "ray":
        raise ValueError("address: a Ray cluster's address goes with executor 'ray'")
    if dataset is not None and dataset is not False and not isinstance(dataset, str | os.PathLike):
        raise TypeError(f"dataset must be a folder path, None or False, not {dataset!r}")


def _dataset_folder(out: object, dataset: object) -> Path | None:
    """Where a batch of runs is appended: ``dataset``, else ``OUT/dataset``; None for none."""
    if dataset is False:
        return None
    if isinstance(dataset, str | os.PathLike):
        return Path(dataset)
    return Path(out) / "dataset" if isinstance(out, str | os.PathLike) else None


def _pool(tasks: list[Any], jobs: int, finish: Callable[..., None]) -> None:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures: set[Future[Any]] = {pool.submit(_one, *task) for task in tasks}
        try:
            while futures:
                finished, futures = wait(futures, return_when=FIRST_COMPLETED)
                for future in finished:
                    finish(*future.result())
        except BaseException:
            # Stop quickly (Ctrl-C or a failed run): finished runs are already cached.
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _describe(run: Run, error: str) -> str:
    labels = " ".join(f"{k}={v}" for k, v in run.labels.items())
    return f"{error} (run {labels})"


def _rows(
    run: Run, record: Mapping[str, Any] | None, error: str | None, analysis: Analysis
) -> list[dict[str, Any]]:
    if record is None:
        return [{**run.labels, "run": None, "error": error}]
    flows = record.get("summary", {}).get("flows", [])
    picked = range(len(flows)) if analysis.flows == "all" else range(min(1, len(flows)))
    rows = []
    for i in picked:
        metrics = dict(flows[i])
        row: dict[str, Any] = dict(run.labels)
        if run.controller_flows is not None and i not in run.controller_flows:
            row["controller"] = metrics.get("controller")
        if analysis.flows == "all":
            row["flow"] = i
        row["flow_name"] = metrics.pop("name", None)
        metrics.pop("controller", None)  # the label column says it
        row.update(metrics)
        extra = record.get("flows", {}).get(str(i), {})
        row.update(extra.get("convergence", {}))
        row["run"] = record.get("key")
        row["error"] = None
        rows.append(row)
    return rows


def sweep(
    spec: str | os.PathLike[str] | Mapping[str, Any] | SweepSpec,
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    *,
    progress: bool = False,
    fresh: bool = False,
    on_error: str = "raise",
    max_runs: int = MAX_RUNS,
    executor: str = "local",
    address: str | None = None,
    dataset: str | os.PathLike[str] | bool | None = None,
) -> pd.DataFrame:
    """Run a sweep spec (path, TOML text, dict or :class:`SweepSpec`) and return its table.

    With ``out``, each run is cached under ``out/runs`` and the table is also written to
    ``out/table.csv``. ``table.attrs`` holds ``executed``/``cached``/``failed`` counts,
    ``wall_s``, and ``dataset``/``appended`` (where its runs were appended, how many rows).
    ``executor="ray"`` runs on a Ray cluster (``address``; see :func:`execute`); the runs
    go to ``out/dataset`` unless ``dataset`` names another folder (``False``: nowhere),
    under the sweep's name as their study.
    A spec of more than ``max_runs`` runs is refused before any is built. ``out`` holds
    one sweep: another sweep (another name or spec file) into it is refused, and so is a
    second process writing into it while this one runs.
    """
    _check_options(jobs, out, progress, fresh, executor, address, dataset)
    loaded = spec if isinstance(spec, SweepSpec) else load_spec(spec, max_runs=max_runs)
    where: dict[str, Any] = {"executor": executor, "address": address, "dataset": dataset}
    if out is None:
        result = execute(
            loaded.runs, loaded.analysis, None, jobs,
            progress=progress, fresh=fresh, on_error=on_error, label=loaded.name, **where,
        )  # fmt: skip
        table = result.table()
    else:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with _FolderLock(folder):
            _claim(folder, loaded)
            result = execute(
                loaded.runs, loaded.analysis, folder, jobs,
                progress=progress, fresh=fresh, on_error=on_error, label=loaded.name, **where,
            )  # fmt: skip
            table = result.table()
            with atomic_path(folder / "table.csv") as tmp:
                table.to_csv(tmp, index=False)
    table.attrs["wall_s"] = result.wall_s
    table.attrs["dataset"] = str(result.dataset) if result.dataset is not None else None
    table.attrs["appended"] = result.appended
    return table


IDENTITY_FILE = "sweep.json"
LOCK_FILE = "sweep.lock"


def _identity(spec: SweepSpec) -> dict[str, Any]:
    """What makes a sweep the same sweep: its name. Not its content (an edited spec
    extends its sweep, reusing the cached runs) nor its file (the same spec may be given
    as text or a dict)."""
    return {"name": spec.name}


def _claim(folder: Path, spec: SweepSpec) -> None:
    """Record this sweep as the folder's, or refuse when the folder holds another one."""
    mine = _identity(spec)
    path = folder / IDENTITY_FILE
    try:
        theirs = read_json(path) if path.exists() or path.is_symlink() else None
    except ValueError as exc:
        raise SweepError(f"{exc}; remove it to reuse the folder") from None
    if isinstance(theirs, dict) and {k: theirs.get(k) for k in mine} != mine:
        raise SweepError(
            f"{folder}: holds sweep '{theirs.get('name')}' (from {theirs.get('spec')}), not "
            f"'{mine['name']}'; one folder holds one sweep: give another --out (or delete "
            f"{path} to take the folder and its cached runs over)"
        )
    record = {**mine, "spec": spec.source, "runs": len(spec.runs), "version": CACHE_VERSION}
    if theirs != record:
        write_atomic(path, json.dumps(record, indent=2) + "\n")


class _FolderLock:
    """An exclusive ``flock`` on ``folder/sweep.lock`` for as long as the sweep (or
    reproduction: ``what``) runs; refused at once (not waited for) when another process
    holds it. The file holds the holder's process id and ``what`` it is."""

    def __init__(self, folder: Path, what: str = "sweep") -> None:
        self.path = folder / LOCK_FILE
        self.what = what
        self.fd: int | None = None

    def __enter__(self) -> _FolderLock:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return self
        # Not following a link nor waiting on a FIFO: only a regular file is a lock.
        flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW
        try:
            self.fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise SweepError(f"{self.path}: cannot be opened as a lock ({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            self.fd = None
            raise SweepError(f"{self.path}: not a regular file; remove it to use the folder")
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, _, what = os.pread(self.fd, 128, 0).decode(errors="replace").partition(" ")
            os.close(self.fd)
            self.fd = None
            # A holder that wrote only its id is a sweep (the lock's first format).
            what = " ".join(what.split())
            what = what if what and what.isprintable() else "sweep"
            raise SweepError(
                f"{self.path.parent}: another {what} is writing into this folder"
                + (f" (process {pid.strip()})" if pid.strip().isdigit() else "")
                + "; wait for it to finish or give another --out"
            ) from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()} {self.what}".encode(), 0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None


# Columns `rtcc sweep` prints (mean over seeds), as (column, heading, scale, digits).
_SWEEP_COLUMNS = (
    ("utilization", "util %", 100, 1),
    ("video_kbps", "video kbps", 1, 0),
    ("padding_kbps", "padding kbps", 1, 0),
    ("queue_delay_ms_mean", "queue ms", 1, 1),
    ("frame_latency_ms_mean", "latency ms", 1, 1),
    ("freeze_ratio", "freeze %", 100, 1),
    ("converge_up_s", "up s", 1, 1),
    ("converge_down_s", "down s", 1, 1),
)


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc sweep` prints: per-configuration means over seeds (and flows).

    Cross traffic (TCP, web, UDP rows) is left out of the means when a run
    also has video flows: the columns shown are the video's metrics."""
    if table.empty:
        return "no runs"
    if "kind" in table.columns:
        video = table["kind"].fillna("video") == "video"
        if video.any():
            table = table[video]
    # Label columns come first, up to the summary's flow name (failed runs: up to "run").
    columns = list(table.columns)
    end = columns.index("flow_name") if "flow_name" in columns else columns.index("run")
    labels = [c for c in columns[:end] if c not in ("seed", "flow")]
    shown = [c for c in _SWEEP_COLUMNS if c[0] in table.columns and table[c[0]].notna().any()]
    groups = table.groupby(labels, sort=False, dropna=False)
    means = groups[[c[0] for c in shown]].mean(numeric_only=True)
    counts = groups.size()
    rows = []
    for key, row in means.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        rows.append(
            [*map(str, keys), str(counts[key])]
            + [format_number(row[col], scale, digits) for col, _, scale, digits in shown]
        )
    header = [*labels, "runs", *(c[1] for c in shown)]
    return table_text(header, rows, left=len(labels))
