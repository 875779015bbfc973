"""The Dumbo reproduction's runs: the scheme matrix, the two experiments, their tables.

Reproduces the Dumbo thesis's evaluation in simulation (Karimi, "Bridging the Gap Between
Real-time Video and Backlogged Traffic Congestion Control", MIT MS thesis 2023).

1. Pulse link (§3.1, §6.2.1): 3 Mbps ↔ 500 kbps every 40 s, 25 ms one-way delay, no
   drops (queue unlimited), 160 s; convergence after each step (rtcc.convergence).
2. Cellular traces (§6.2.2, §6.3, §6.4, App. A): each Mahimahi trace, 2 min, 25 ms
   one-way delay, queue unlimited; per-scheme means over the traces.

Every video flow uses the lagging encoder and Dumbo's resolution table (§5.1), except
"gcc (720p)", fixed 720p as the thesis's original-GCC comparison (Fig. A-12).
"Copa (backlogged)" is a bulk flow under Copa, the reference line of Fig. 3-1.
"copa" and "rocc" are Dumbo with its dummy generator off (§6.2.2 "without the dummy
stream"; ``dummy = false``).
A scheme whose controller cannot be built is skipped and named in the report.
The thesis's receiver sat behind the Mahimahi shell, so the media crossed the shell's
downlink: the ``.down`` files are the default (``direction="all"`` runs every file).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rtcc.convergence import COLUMNS as CONVERGENCE_COLUMNS
from rtcc.limits import write_atomic
from rtcc.reproduce.dumbo import figures, page, thesis
from rtcc.reproduce.figures import scheme_colors
from rtcc.reproduce.runs import flow_error, progress_label
from rtcc.reproduce.traces import mahimahi_files
from rtcc.sweeprun import SweepResult, execute
from rtcc.sweepspec import Analysis, Run
from rtcc.tables import format_number, table_text

__all__ = [
    "CELLULAR_SCHEMES", "PULSE_SCHEMES", "Outcome", "Scheme", "cellular_runs", "probe",
    "pulse_series", "ratios", "run", "summary_text", "utilization_quantiles",
]  # fmt: skip


@dataclass(frozen=True)
class Scheme:
    label: str
    controller: str
    resolution: str = "dumbo"
    bulk: bool = False
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def described(self) -> str:
        """The controller with its parameters, as table.csv names it."""
        args = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}"
                         for k, v in self.params)  # fmt: skip
        return f"{self.controller} ({args})" if args else self.controller

    def flow(self, encoder: str = "lagging") -> dict[str, Any]:
        controller: Any = (
            {"name": self.controller, **dict(self.params)} if self.params else self.controller
        )
        flow: dict[str, Any] = {"name": "call", "controller": controller}
        if self.bulk:
            flow["source"] = "bulk"
        else:
            flow.update(encoder=ENCODERS[encoder], resolution=self.resolution)
        return flow


# The model encoder with the thesis's lag: VP8 in its libwebrtc took "nearly
# 3 seconds" for 500 kbps -> 2 Mbps (§3, Fig. 3-8), 90 % after tau·ln 10.
# rtcc's default lag is measured on libvpx alone (profiles/vp8.toml), which
# responds faster; the reproduction keeps the paper's condition.
THESIS_LAGGING = {
    "kind": "lagging",
    "tau_up": "1.3s",
    "tau_down": "0.3s",
    "sigma": 0.1,
    "key_ratio": 5,
}
ENCODERS: dict[str, Any] = {"lagging": THESIS_LAGGING, "vp8": "vp8", "h264": "h264"}


GCC_720P = Scheme("gcc (720p)", "gcc", resolution="720p")
# §6.2.2 compares Copa and RoCC "with and without the dummy stream" in one
# system: the plain rows are Dumbo with its dummy generator off, keeping the
# latency threshold (Table A.1 lists it under each scheme) and the target's
# Standing_PQ term (§4). The bare controllers leave frames in the window-gated
# pacer queue for seconds instead (NOTES in thesis.py).
WITHOUT_DUMMY = (("dummy", False),)
PLAIN_COPA = Scheme("copa", "copa+dumbo", params=WITHOUT_DUMMY)
PLAIN_ROCC = Scheme("rocc", "rocc+dumbo", params=WITHOUT_DUMMY)
PULSE_SCHEMES = (
    Scheme("gcc", "gcc"),
    PLAIN_COPA,
    PLAIN_ROCC,
    Scheme("copa+dumbo", "copa+dumbo"),
    Scheme("rocc+dumbo", "rocc+dumbo"),
    Scheme("copa (backlogged)", "copa", bulk=True),
    GCC_720P,
)
CELLULAR_SCHEMES = (
    Scheme("gcc", "gcc"),
    Scheme("gcc-probing", "gcc-probing"),
    Scheme("vivace", "vivace"),
    PLAIN_COPA,
    PLAIN_ROCC,
    Scheme("copa+dumbo", "copa+dumbo"),
    Scheme("rocc+dumbo", "rocc+dumbo"),
    GCC_720P,
)
DUMBO_SCHEMES = ("copa+dumbo", "rocc+dumbo")


@dataclass(frozen=True)
class Variant:
    name: str
    pulse_s: int
    pulse_every_s: int
    trace_s: int
    max_traces: int | None


# Short: the pulse alternates every 20 s so 80 s still holds a down, an up and a down step.
FULL = Variant("full", 160, 40, 120, None)
SHORT = Variant("short", 80, 20, 30, 3)
DELAY = "25ms"
SEED = 1


def _scenario(
    name: str, duration_s: int, capacity: Any, scheme: Scheme, encoder: str = "lagging"
) -> dict[str, Any]:
    return {
        "name": name,
        "duration": f"{duration_s}s",
        "seed": SEED,
        "link": {"capacity": capacity, "delay": DELAY, "queue": "unlimited"},
        "record": {"bin": "100ms"},
        "flow": [scheme.flow(encoder)],
    }


def probe(scheme: Scheme) -> str | None:
    """Why the scheme cannot run here (its controller is not built, say), or None."""
    return flow_error(scheme.flow(), scheme.label, scheme.controller)


@dataclass
class Outcome:
    """Everything the report needs; ``table`` is table.csv, ``runs`` is runs.csv."""

    variant: Variant
    table: pd.DataFrame
    runs: pd.DataFrame
    pulse: SweepResult | None
    cellular: SweepResult | None
    skipped: dict[str, str]
    traces: list[Path]
    traces_note: str
    direction: str
    wall_s: float = 0.0
    controllers: list[str] = field(default_factory=list)

    @property
    def results(self) -> dict[str, SweepResult]:
        """The experiments that ran, by name, as the other reproductions' ``results``."""
        parts = {"pulse": self.pulse, "cellular": self.cellular}
        return {name: r for name, r in parts.items() if r is not None}


def _means(
    per_run: pd.DataFrame, experiment: str, schemes: tuple[Scheme, ...], skipped: dict[str, str]
) -> pd.DataFrame:
    """Per-scheme means over the experiment's runs (``SweepResult.table()``);
    skipped schemes keep a row with a note."""
    rows: list[dict[str, Any]] = []
    for scheme in schemes:
        if scheme.label in skipped:
            rows.append(
                {"experiment": experiment, "scheme": scheme.label, "controller": scheme.described,
                 "runs": 0, "failed": 0, "note": f"skipped: {skipped[scheme.label]}"}
            )  # fmt: skip
            continue
        if "scheme" not in per_run:  # no runs at all
            continue
        part = per_run[per_run["scheme"] == scheme.label]
        ok = part[part["error"].isna()]
        numeric = ok.select_dtypes("number").drop(columns=["seed"], errors="ignore")
        row: dict[str, Any] = {
            "experiment": experiment,
            "scheme": scheme.label,
            "controller": scheme.described,
            "runs": len(ok),
            "failed": len(part) - len(ok),
            "note": "; ".join(sorted(set(part["error"].dropna()))) or None,
        }
        row.update(numeric.mean(numeric_only=True).to_dict() if len(ok) else {})
        rows.append(row)
    return pd.DataFrame(rows)


def run(
    out: str | Path,
    traces: str | Path | None = None,
    jobs: int | None = None,
    *,
    short: bool = False,
    direction: str = "down",
    fresh: bool = False,
    progress: bool = False,
    encoder: str = "lagging",
    executor: str = "local",
    address: str | None = None,
    dataset: str | Path | None = None,
    schemes: Sequence[str] = (),
) -> Outcome:
    """Run both experiments; write OUT/table.csv, OUT/runs.csv, the figures as PNG and
    OUT/report.html. Finished runs are cached under OUT/runs (``fresh`` recomputes).
    ``encoder`` is "lagging" (the model with the thesis's lag) or a real codec, "vp8"
    or "h264", whose decoded frames give PSNR/SSIM as the thesis measured them.
    ``traces`` is where the Mahimahi traces are (:mod:`rtcc.reproduce.traces`; default the
    bundled set); finding none there raises :class:`~rtcc.reproduce.traces.TracesError`.
    ``executor``/``address`` run them on a Ray cluster and ``dataset`` names the results
    dataset they are appended to (default OUT/dataset), as in :func:`rtcc.sweeprun.execute`.
    ``schemes`` names more controllers (a Python one as ``py:module:Class``) to run in both
    experiments beside the thesis's, each labelled by its name.
    """
    if encoder not in ENCODERS:
        raise ValueError(f"encoder: '{encoder}' is not one of {', '.join(ENCODERS)}")
    import rtcc

    started = time.perf_counter()
    variant = SHORT if short else FULL
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    extra = tuple(Scheme(name, name) for name in dict.fromkeys(schemes))
    all_pulse, all_cell = (*PULSE_SCHEMES, *extra), (*CELLULAR_SCHEMES, *extra)
    by_label = {s.label: s for s in (*all_pulse, *all_cell)}
    skipped = {label: why for label, s in by_label.items() if (why := probe(s)) is not None}
    pulse_schemes = tuple(s for s in all_pulse if s.label not in skipped)
    cell_schemes = tuple(s for s in all_cell if s.label not in skipped)

    # The bundled Mahimahi set unless ``traces`` says where; none there is refused.
    folder, files = mahimahi_files(traces, direction, variant.max_traces, "dumbo's cellular run")
    note = f"{len(files)} trace files from {folder}"

    every = f"{variant.pulse_every_s}s"
    pulse_capacity = {"kind": "pulse", "high": "3Mbps", "low": "500kbps", "every": every}
    pulse_runs = [
        Run(
            {"experiment": "pulse", "scheme": s.label, "trace": f"pulse {every}", "seed": SEED},
            _scenario("dumbo-pulse", variant.pulse_s, pulse_capacity, s, encoder),
            SEED,
            "<dumbo-pulse>",
        )
        for s in pulse_schemes
    ]
    cell_runs = cellular_runs(cell_schemes, files, variant.trace_s, encoder)
    common: dict[str, Any] = {
        "jobs": jobs, "fresh": fresh, "on_error": "skip", "executor": executor,
        "address": address, "dataset": dataset, "study": "dumbo",
    }  # fmt: skip
    pulse_analysis = Analysis(convergence=True, series=True)
    pulse = execute(
        pulse_runs, pulse_analysis, out, progress=progress,
        label=progress_label("dumbo", "pulse"), **common,
    )  # fmt: skip
    cellular = None
    if files:
        cell_analysis = Analysis(distributions=True)
        cellular = execute(
            cell_runs, cell_analysis, out, progress=progress,
            label=progress_label("dumbo", "cellular"), **common,
        )  # fmt: skip
    runs = [pulse.table()]
    parts = [_means(runs[0], "pulse", all_pulse, skipped)]
    if cellular is not None:
        runs.append(cellular.table())
        parts.append(_means(runs[-1], "cellular", all_cell, skipped))
    table = _order(pd.concat(parts, ignore_index=True))
    outcome = Outcome(
        variant, table, pd.concat(runs, ignore_index=True), pulse, cellular, skipped, files,
        note, direction, controllers=[c["name"] for c in rtcc.controllers()],
    )  # fmt: skip
    write_atomic(out / "table.csv", table.to_csv(index=False))
    write_atomic(out / "runs.csv", outcome.runs.to_csv(index=False))
    # Every scheme keeps one colour across the figures, whichever of them a figure shows.
    colors = scheme_colors(s.label for s in (*all_pulse, *all_cell))
    images = figures.render_all(
        outcome.table,
        outcome.runs,
        pulse_series(pulse),
        utilization_quantiles(cellular) if cellular is not None else {},
        colors,
    )
    for name, (png, _) in images.items():
        write_atomic(out / name, png)
    # The report states the wall time: everything but writing the page itself.
    outcome.wall_s = time.perf_counter() - started
    write_atomic(out / "report.html", _page(outcome, images))
    outcome.wall_s = time.perf_counter() - started
    return outcome


def cellular_runs(
    schemes: tuple[Scheme, ...], files: list[Path], seconds: int, encoder: str = "lagging"
) -> list[Run]:
    """The cellular experiment's runs: each scheme on each trace file for ``seconds``."""
    return [
        Run(
            {"experiment": "cellular", "scheme": s.label, "trace": f.name, "seed": SEED},
            _scenario(
                "dumbo-cellular", seconds, {"kind": "trace", "file": str(f.resolve())}, s, encoder
            ),
            SEED,
            str(f),
        )
        for s in schemes
        for f in files
    ]


def _page(outcome: Outcome, images: dict[str, tuple[bytes, str]]) -> str:
    results = [r for r in (outcome.pulse, outcome.cellular) if r is not None]
    v = outcome.variant
    return page.render(
        outcome.table, images, ratios(outcome.table),
        variant=v.name, pulse_s=v.pulse_s, pulse_every_s=v.pulse_every_s, trace_s=v.trace_s,
        traces=[p.name for p in outcome.traces], traces_note=outcome.traces_note,
        direction=outcome.direction, skipped=outcome.skipped, controllers=outcome.controllers,
        computed=sum(r.executed for r in results), cached=sum(r.cached for r in results),
        wall_s=outcome.wall_s, capacity_kbps=trace_capacity_kbps(outcome.cellular),
    )  # fmt: skip


def trace_capacity_kbps(result: SweepResult | None) -> float | None:
    """Mean capacity of the cellular traces (each trace weighs the same), from the runs."""
    if result is None:
        return None
    by_trace: dict[str, float] = {}
    for run, record in zip(result.runs, result.records, strict=True):
        link = (record or {}).get("summary", {}).get("link", {})
        if "capacity_kbps_mean" in link:
            by_trace[str(run.labels.get("trace"))] = float(link["capacity_kbps_mean"])
    return sum(by_trace.values()) / len(by_trace) if by_trace else None


def pulse_series(result: SweepResult) -> list[tuple[str, pd.DataFrame]]:
    """(scheme, its 100 ms series) for each pulse run that kept one, in run order."""
    out = []
    for run, record in zip(result.runs, result.records, strict=True):
        series = (record or {}).get("flows", {}).get("0", {}).get("series")
        if series:
            out.append((str(run.labels["scheme"]), pd.DataFrame(series)))
    return out


def utilization_quantiles(result: SweepResult) -> dict[str, list[float]]:
    """Per scheme, the per-bin utilisation quantiles of all its cellular runs together."""
    pooled: dict[str, list[float]] = {}
    for run, record in zip(result.runs, result.records, strict=True):
        q = (record or {}).get("flows", {}).get("0", {}).get("quantiles", {}).get("utilization")
        if q:  # each trace contributes its 101 quantiles: traces weigh equally
            pooled.setdefault(str(run.labels["scheme"]), []).extend(v for v in q if v is not None)
    return pooled


def _order(table: pd.DataFrame) -> pd.DataFrame:
    """Labels first, then summary metrics, then the convergence columns."""
    head = ["experiment", "scheme", "controller", "runs", "failed"]
    conv = [c for c in CONVERGENCE_COLUMNS if c in table.columns]
    tail = ["note"]
    middle = [c for c in table.columns if c not in (*head, *conv, *tail)]
    for column in CONVERGENCE_COLUMNS[:2]:  # always present, NaN where not measured
        if column not in table.columns:
            table[column] = math.nan
            conv.append(column)
    return table[[*head, *middle, *conv, *tail]]


def ratios(table: pd.DataFrame) -> dict[str, float]:
    """Dumbo schemes (mean of those that ran) vs GCC over the cellular traces: ratios, and
    the frame-latency difference in ms."""
    cell = table[(table["experiment"] == "cellular") & (table["runs"] > 0)].set_index("scheme")
    dumbo = [s for s in DUMBO_SCHEMES if s in cell.index]
    if "gcc" not in cell.index or not dumbo:
        return {}
    mean = cell.loc[dumbo].mean(numeric_only=True)
    gcc = cell.loc["gcc"]
    return {
        "utilization": float(mean["utilization_mean"] / gcc["utilization_mean"]),
        "queue_delay": float(gcc["sojourn_ms_mean"] / mean["sojourn_ms_mean"]),
        "video_kbps": float(mean["video_kbps"] / gcc["video_kbps"]),
        # A difference, as the thesis states it (§6.3: "100 ms lower frame latency").
        "frame_latency_ms": float(mean["frame_latency_ms_mean"] - gcc["frame_latency_ms_mean"]),
    }


def _with_thesis(value: Any, ref: Any, scale: float = 1.0, digits: int = 1) -> str:
    mine = format_number(value, scale, digits)
    return mine if ref is None else f"{mine} ({format_number(ref, scale, digits)})"


# One summary row's cells after the scheme: from rtcc's row and the thesis's numbers.
_Cells = Callable[[pd.Series, Mapping[str, float]], list[str]]


def _scheme_rows(
    table: pd.DataFrame,
    experiment: str,
    reference: Mapping[str, Mapping[str, float]],
    cells: _Cells,
) -> list[list[str]]:
    """A row per scheme that ran in ``experiment``: its name, then its ``cells``."""
    part = table[(table["experiment"] == experiment) & (table["runs"] > 0)]
    return [
        [str(r["scheme"]), *cells(r, reference.get(r["scheme"], {}))] for _, r in part.iterrows()
    ]


def _pulse_cells(r: pd.Series, ref: Mapping[str, float]) -> list[str]:
    return [
        _with_thesis(r["converge_up_s"], ref.get("converge_up_s"), digits=2),
        _with_thesis(r["converge_down_s"], ref.get("converge_down_s"), digits=2),
        format_number(r.get("converge_down_settle_s"), 1, 2),
        _with_thesis(r.get("up_steady_mbps"), ref.get("up_steady_mbps"), digits=2),
        _with_thesis(r.get("down_latency_max_ms"), ref.get("down_latency_max_ms"), 1, 0),
        format_number(r["utilization"], 100, 1),
        format_number(r.get("psnr_db_mean"), 1, 1),
    ]


def _cellular_cells(r: pd.Series, ref: Mapping[str, float]) -> list[str]:
    return [
        str(int(r["runs"])),
        _with_thesis(r["utilization_mean"], ref.get("utilization_mean"), 100, 1),
        _with_thesis(r["frame_latency_ms_mean"], ref.get("frame_latency_ms_mean"), 1, 0),
        _with_thesis(r["sojourn_ms_mean"], ref.get("sojourn_ms_mean"), digits=0),
        _with_thesis(r["video_kbps"], ref.get("video_kbps"), digits=0),
    ]


def summary_text(table: pd.DataFrame) -> str:
    """What `rtcc reproduce dumbo` prints: headline numbers, the thesis's in parentheses."""
    blocks = []
    rows = _scheme_rows(table, "pulse", thesis.PULSE, _pulse_cells)
    if rows:
        header = ["pulse link", "up s", "down s", "settle s", "steady up Mbps", "max lat. ms",
                  "util %", "PSNR dB"]  # fmt: skip
        blocks.append(table_text(header, rows))
    rows = _scheme_rows(table, "cellular", thesis.CELLULAR, _cellular_cells)
    if rows:
        # Utilisation per sample and arrival → departure delay, as the thesis measures.
        header = ["cellular (mean)", "traces", "util %", "latency ms", "network ms", "video kbps"]
        blocks.append(table_text(header, rows))
        ours = ratios(table)
        if ours:
            ref = thesis.CELLULAR_RATIOS
            blocks.append(
                f"Dumbo / GCC: utilisation {ours['utilization']:.2f}x "
                f"({ref['utilization']:.2f}x), video {ours['video_kbps']:.2f}x "
                f"({ref['video_kbps']:.2f}x); GCC / Dumbo queuing delay "
                f"{ours['queue_delay']:.1f}x ({ref['queue_delay']:.1f}x); frame latency "
                f"Dumbo - GCC {ours['frame_latency_ms']:+.0f} ms "
                f"({ref['frame_latency_ms']:+.0f} ms)"
            )
    return "\n\n".join(blocks) + "\n(thesis values in parentheses)" if blocks else "no runs"
