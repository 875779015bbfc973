"""Sweep specs: a TOML file (or dict) that expands into the runs of a sweep.

```toml
name = "gcc-vs-copa"                       # default: the spec file's stem
base = "scenarios/gcc-constant.toml"       # a path, an inline [base] table, or a list of them
controllers = ["gcc", { name = "gcc", loss = "classic", label = "gcc-classic" }]
traces = ["traces/*.down", "3Mbps", { kind = "pulse", high = "3Mbps",
          low = "500kbps", every = "40s" }]
seeds = [1, 2, 3]                          # or a count: seeds = 3 is 1, 2, 3
flows = "first"                            # "all": one table row per flow
convergence = false                        # Dumbo §6.2.1 metrics (records frames, bins ≤ 100 ms)
series = false                             # keep the per-bin series in each run's cache file

[overrides]                                # dotted keys; a list is an axis, a scalar applies to all
"link.delay" = ["25ms", "50ms"]
"flow.*.encoder" = "ideal"                 # "*" is every flow, "flow.1.x" the second
```

Relative paths (``base``, ``traces``, a base scenario's trace file) resolve against the
file that names them. Controllers replace every video flow's controller (cross traffic
keeps its own) unless ``controller_flows = [0, ...]`` picks flows; traces replace
``link.capacity``.
A list-valued override setting is a list of lists. The fields' types and ranges are
checked by a pydantic model (strict: TOML's types as written); every refusal is one line
naming the file and field.

Limits (:mod:`rtcc.limits`): a spec expands to at most ``MAX_RUNS`` (100,000) runs unless
``max_runs`` raises it (counted before any run is built); ``name`` names the results
folder, so it is made of ASCII letters, digits, ``-``, ``_`` and ``.`` (not starting
with ``.``, at most 64 characters); spec and base files are at most 16 MiB.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from rtcc.limits import (
    MAX_NESTING,
    MAX_RUNS,
    InputError,
    file_name_error,
    safe_file_name,
    too_deep,
)
from rtcc.scenario import read_text, toml_module

__all__ = [
    "SWEEP_KEYS", "Analysis", "Run", "SweepError", "SweepSpec", "load_spec", "loads_toml",
    "set_dotted",
]  # fmt: skip

_MAX_SEED = 2**64 - 1


class SweepError(ValueError):
    """A refused sweep spec or a failed run; the message is one line naming file and field."""


# --- the spec's fields, checked by pydantic ------------------------------------------------


def _safe_name(name: str) -> str:
    why = file_name_error(name)
    if why is not None:
        raise ValueError(f"{why}; it names the results folder")
    return name


def _named(table: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(table.get("name"), str):
        raise ValueError("must be a name or a table with a name")
    return table


def _kind(table: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(table.get("kind"), str):
        raise ValueError("must be a trace file, a rate or a capacity table")
    if table["kind"] == "trace" and not isinstance(table.get("file"), str):
        raise ValueError('a capacity table of kind "trace" needs a file')
    return table


def _axis(values: Any) -> Any:
    if isinstance(values, list) and not values:
        raise ValueError("an empty list gives no runs")
    return values


_Seed = Annotated[int, Field(ge=0, le=_MAX_SEED)]
_Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
_Table = dict[str, Any]
_Base = str | _Table


class _Spec(BaseModel):
    """A spec's top-level fields and their types. Strict: TOML's types as they are (no
    "3" for 3, no true for 1). Declared in the order errors are looked for."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, AfterValidator(_safe_name)] | None = None
    base: _Base | Annotated[list[_Base], Field(min_length=1)]
    controllers: (
        Annotated[list[str | Annotated[_Table, AfterValidator(_named)]], Field(min_length=1)] | None
    ) = None
    controller_flows: list[Annotated[int, Field(ge=0)]] | None = None
    traces: (
        Annotated[list[str | Annotated[_Table, AfterValidator(_kind)]], Field(min_length=1)] | None
    ) = None
    seeds: (
        Annotated[int, Field(ge=1, le=_MAX_SEED)]
        | Annotated[list[_Seed], Field(min_length=1)]
        | None
    ) = None
    flows: Literal["first", "all"] = "first"
    convergence: bool = False
    series: bool = False
    overrides: dict[str, Annotated[Any, AfterValidator(_axis)]] | None = None
    steady_window_s: _Seconds = 10.0
    smooth_s: _Seconds = 1.0
    series_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None


_KNOWN = tuple(_Spec.model_fields)
# The fields that make a TOML file a sweep spec rather than a scenario (`rtcc validate`).
SWEEP_KEYS = frozenset(_KNOWN) - {"name"}
# Which problem a spec with several is refused for: the name, unknown fields, a missing
# base, the analysis options, then the axes (the order they were always checked in).
_ORDER = (
    "name", "", "base?", "flows", "convergence", "series", "steady_window_s", "smooth_s",
    "series_s", "base", "controllers", "traces", "seeds", "controller_flows", "overrides",
)  # fmt: skip
# Why a field (or one of its items, "[]") is refused, in the project's words; a few
# depend on pydantic's error type. Reasons of rtcc's own validators are their messages.
_REASONS: dict[str, str] = {
    "name": "must be a string, not {kind}; it names the results folder",
    "base": "must be a path or a table",
    "base[]": "must be a path or a table",
    "base:missing": "missing (a scenario path or an inline [base] table)",
    "base:too_short": "needs at least one scenario",
    "controllers": "must be a non-empty list",
    "controllers[]": "must be a name or a table with a name",
    "controller_flows": "must be a list of flow indices",
    "traces": "must be a non-empty list",
    "traces[]": "must be a trace file, a rate or a capacity table",
    "seeds": "must be a count or a non-empty list of integers",
    "seeds[]": "must be an integer in 0..2^64-1",
    "seeds:greater_than_equal": "a count must be at least 1",
    "seeds:less_than_equal": "a count must be at most 2^64-1",
    "flows": 'must be "first" or "all"',
    "convergence": "must be true or false",
    "series": "must be true or false",
    "overrides": "must be a table of dotted keys",
    "steady_window_s": "must be a non-negative number of seconds",
    "smooth_s": "must be a non-negative number of seconds",
    "series_s": "must be a positive number of seconds",
}
# Fields whose items are named in messages (seeds[1]); the others name the field only.
_ITEMS = ("base", "controllers", "traces", "seeds")


def _validate(data: Mapping[str, Any], source: str) -> _Spec:
    """The spec's fields checked by type and range; the first problem (in :data:`_ORDER`)
    as one line ``source: field: reason``."""
    try:
        return _Spec.model_validate(data)
    except ValidationError as exc:
        raise SweepError(f"{source}: {_first_problem(exc.errors())}") from None


def _first_problem(errors: list[ErrorDetails]) -> str:
    def rank(error: ErrorDetails) -> tuple[int, str]:
        top = str(error["loc"][0])
        if error["type"] == "extra_forbidden":
            return _ORDER.index(""), top
        if top == "base" and error["type"] == "missing":
            return _ORDER.index("base?"), top
        return _ORDER.index(top), top

    first = min(rank(e) for e in errors)
    errors = [e for e in errors if rank(e) == first]
    top = first[1]
    if errors[0]["type"] == "extra_forbidden":
        return f"{top}: unknown field (known: {', '.join(_KNOWN)})"
    # A union's members each report an error; the one inside a list names the item.
    items = sorted({i for e in errors for i in e["loc"][1:] if isinstance(i, int)})
    if items and top in _ITEMS:
        errors = [e for e in errors if items[0] in e["loc"][1:]]
    where = f"{top}[{items[0]}]" if items and top in _ITEMS else top
    for error in errors:
        if error["type"] == "value_error":  # rtcc's own validator: its message
            reason = str(error["ctx"]["error"])
            if top == "overrides" and len(error["loc"]) > 1:
                where = f"overrides.{error['loc'][1]}"
            return f"{where}: {reason}"
    key = f"{top}[]" if where != top else top
    for error in errors:
        special = _REASONS.get(f"{key}:{error['type']}")
        if special is not None:
            return f"{where}: {special}"
    kind = type(errors[0]["input"]).__name__
    return f"{where}: {_REASONS[key].format(kind=kind)}"


@dataclass(frozen=True)
class Analysis:
    """What each run keeps beyond its summary (part of the cache key)."""

    flows: str = "first"  # "first" or "all"
    convergence: bool = False
    series: bool = False
    distributions: bool = False  # quantiles of per-bin utilisation (and frame latency)
    steady_window_s: float = 10.0
    smooth_s: float = 1.0
    # Kept series averaged into bins of this many seconds (None: the run's own bins).
    series_s: float | None = None

    @property
    def needs_timeseries(self) -> bool:
        return self.convergence or self.series or self.distributions


@dataclass(frozen=True)
class Run:
    """One simulation: labels for the table, the resolved scenario and its seed."""

    labels: dict[str, Any]
    scenario: dict[str, Any]
    seed: int
    source: str  # names the run in errors; its folder resolves relative paths
    # Flows whose controller the "controller" label names (None: all of them).
    controller_flows: tuple[int, ...] | None = None


@dataclass
class SweepSpec:
    name: str
    runs: list[Run]
    analysis: Analysis = field(default_factory=Analysis)
    source: str = "<sweep>"


def loads_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML with tomllib (3.11+) or tomli, as a one-line SweepError on bad syntax."""
    toml = toml_module()
    if toml is None:
        raise SweepError(f"{source}: reading TOML needs Python 3.11+ or the tomli package")
    deep = f"{source}: arrays or inline tables nested more than {MAX_NESTING} deep"
    if too_deep(text):
        raise SweepError(deep)
    try:
        data: dict[str, Any] = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise SweepError(f"{source}: {exc}") from None
    except RecursionError:
        raise SweepError(deep) from None
    return data


def _read(path: Path, source: str, field_: str) -> str:
    try:
        return read_text(path)
    except FileNotFoundError:
        raise SweepError(f"{source}: {field_}: {path}: no such file") from None
    except IsADirectoryError:
        raise SweepError(f"{source}: {field_}: {path}: is a directory") from None
    except InputError as exc:  # not a regular file, or above the size limit
        raise SweepError(f"{source}: {field_}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{source}: {field_}: {path}: {exc}") from None


def _absolute_trace(capacity: Any, folder: Path) -> Any:
    """A trace capacity with its file made absolute (so the cache key names the real file)."""
    if isinstance(capacity, Mapping) and capacity.get("kind") == "trace" and "set" not in capacity:
        # A file within a named set is the set's, not relative to the scenario.
        file = capacity.get("file")
        if isinstance(file, str) and not Path(file).is_absolute():
            return {**capacity, "file": str((folder / file).resolve())}
    return capacity


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``a.b.0.c`` (``*`` = every list entry) in nested dicts/lists; KeyError on a bad path."""
    parts = key.split(".")
    if not all(parts):
        raise KeyError(f"'{key}' is not a dotted key")
    targets: list[Any] = [data]
    for depth, part in enumerate(parts[:-1]):
        following: list[Any] = []
        for node in targets:
            if isinstance(node, list):
                if part == "*":
                    following.extend(node)
                elif part.isdigit() and int(part) < len(node):
                    following.append(node[int(part)])
                else:
                    raise KeyError(f"'{'.'.join(parts[: depth + 1])}': no such entry")
            elif isinstance(node, dict):
                child = node.setdefault(part, {})
                if isinstance(child, dict | list):
                    following.append(child)
                else:  # e.g. controller = "gcc" and a key below it: become a table
                    node[part] = {"name": child} if part == "controller" else {}
                    following.append(node[part])
            else:
                raise KeyError(f"'{'.'.join(parts[:depth])}' is not a table")
        targets = following
    for node in targets:
        if isinstance(node, list):
            raise KeyError(f"'{key}': give an index or '*' for a list")
        node[parts[-1]] = value


def _label(value: Any) -> str:
    if isinstance(value, Mapping):
        params = ",".join(f"{k}={v}" for k, v in value.items() if k not in ("name", "label"))
        return f"{value.get('name', '?')}({params})" if params else str(value.get("name", "?"))
    return str(value)


def _bases(raw: _Base | list[_Base], folder: Path, source: str) -> list[tuple[str, _Table, str]]:
    """(label, scenario dict, source) for each base scenario (a path or an inline table)."""
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for i, item in enumerate(items):
        where = "base" if not isinstance(raw, list) else f"base[{i}]"
        if isinstance(item, str):
            path = folder / item
            data = loads_toml(_read(path, source, where), str(path))
            scenario_folder, scenario_source = path.parent, str(path)
            label = str(data.get("name", path.stem))
        else:
            data = dict(item)
            scenario_folder, scenario_source = folder, source
            label = str(data.get("name", Path(source).stem))
        link = data.get("link")
        if isinstance(link, Mapping) and "capacity" in link:
            data["link"] = {**link, "capacity": _absolute_trace(link["capacity"], scenario_folder)}
        out.append((label, data, scenario_source))
    return out


def _controllers(raw: list[str | _Table]) -> list[tuple[str, Any]]:
    """(label, controller) per entry: a name, or a table whose ``label`` names it."""
    out: list[tuple[str, Any]] = []
    for item in raw:
        if isinstance(item, str):
            out.append((item, item))
        else:
            spec = {k: v for k, v in item.items() if k != "label"}
            out.append((str(item.get("label", _label(item))), spec))
    return out


def _traces(raw: list[str | _Table], folder: Path, source: str) -> list[tuple[str, Any]]:
    """(label, capacity) per entry: a rate, every trace file a pattern matches (relative
    to the spec's folder, else ``SET/GLOB`` in a trace set), or a capacity table."""
    out: list[tuple[str, Any]] = []
    for i, item in enumerate(raw):
        if isinstance(item, str) and _is_rate(item):
            out.append((item.strip(), item))
        elif isinstance(item, str):
            files = _glob(folder, item) or _set_glob(item)
            if not files:
                raise SweepError(f"{source}: traces[{i}]: {_no_trace(item)}")
            out += [(f.name, {"kind": "trace", "file": str(f.resolve())}) for f in files]
        else:
            table = {k: v for k, v in item.items() if k != "label"}
            default = Path(table["file"]).name if table["kind"] == "trace" else table["kind"]
            out.append((str(item.get("label", default)), _absolute_trace(table, folder)))
    return out


def _is_rate(text: str) -> bool:
    """A constant capacity ("3Mbps": text names its unit), by the scenario's own
    quantity rule, rather than a trace file pattern."""
    from rtcc import native

    try:
        native().parse_quantity(text, "rate")
    except ValueError:
        return False
    return True


def _set_glob(item: str) -> list[Path]:
    """Files of ``SET/GLOB`` (``"mahimahi/*-LTE-*.down"``): GLOB in the trace set SET
    where ``rtcc traces`` finds it, so a spec need not know where the package is."""
    from rtcc.traces import locate

    head, sep, rest = item.partition("/")
    if not sep or not head or not rest or Path(item).is_absolute():
        return []
    folder = locate(None, head)
    return _glob(folder, rest) if folder.is_dir() else []


def _no_trace(item: str) -> str:
    """Why a trace entry that is neither a rate nor a file was refused: a number
    without its unit is told as the scenario tells it, anything else as a pattern."""
    from rtcc import native

    try:
        float(item)
    except ValueError:
        return (
            f"no trace file matches '{item}' (in the spec's folder, nor as SET/GLOB in a trace set)"
        )
    try:
        native().parse_quantity(item, "rate")
    except ValueError as exc:
        return f"{exc} (or name a trace file)"
    return f"no trace file matches '{item}'"


def _glob(folder: Path, pattern: str) -> list[Path]:
    """Files matching ``pattern`` (relative to ``folder`` unless absolute), sorted."""
    path = Path(pattern)
    if not any(ch in pattern for ch in "*?["):
        full = path if path.is_absolute() else folder / path
        return [full] if full.is_file() else []
    anchor = Path(path.anchor) if path.is_absolute() else folder
    relative = str(path.relative_to(path.anchor)) if path.is_absolute() else pattern
    return sorted(p for p in anchor.glob(relative) if p.is_file())


def _seeds(raw: int | list[int]) -> Sequence[int]:
    """A count ``n`` is seeds 1..n (a range: the run count is checked before expanding);
    a list keeps its first of each seed."""
    return range(1, raw + 1) if isinstance(raw, int) else list(dict.fromkeys(raw))


def load_spec(
    spec: str | os.PathLike[str] | Mapping[str, Any],
    source: str | None = None,
    *,
    max_runs: int = MAX_RUNS,
) -> SweepSpec:
    """Expand a spec (path, TOML text or dict) into runs: bases x controllers x traces x
    override axes x seeds, in that nesting order. A spec of more than ``max_runs`` runs
    is refused before any run is built."""
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise TypeError(f"max_runs must be a positive integer, not {max_runs!r}")
    if isinstance(spec, Mapping):
        data, src, folder, stem = dict(spec), source or "<sweep>", Path.cwd(), "sweep"
    elif isinstance(spec, str) and ("\n" in spec or "=" in spec):
        src = source or "<sweep>"
        data, folder, stem = loads_toml(spec, src), Path.cwd(), "sweep"
    else:
        path = Path(spec)
        src = source or str(path)
        data, folder, stem = loads_toml(_read(path, src, "spec"), src), path.parent, path.stem
    fields = _validate(data, src)
    name = fields.name if fields.name is not None else safe_file_name(stem, "sweep")
    analysis = Analysis(
        flows=fields.flows,
        convergence=fields.convergence,
        series=fields.series,
        steady_window_s=fields.steady_window_s,
        smooth_s=fields.smooth_s,
        series_s=fields.series_s,
    )
    bases = _bases(fields.base, folder, src)
    controllers = _controllers(fields.controllers) if fields.controllers else [None]
    traces = _traces(fields.traces, folder, src) if fields.traces else [None]
    seeds = _seeds(fields.seeds) if fields.seeds is not None else None
    picked = fields.controller_flows
    if picked is not None:
        for label, base, base_source in bases:
            flows = base.get("flow")
            count = len(flows) if isinstance(flows, list) else 0
            missing = [i for i in picked if i >= count]
            if missing and count:
                raise SweepError(
                    f"{src}: controller_flows: flow {missing[0]} does not exist: base "
                    f"'{label}' ({base_source}) has {count} flow{'s' if count != 1 else ''} "
                    f"(indices 0..{count - 1})"
                )
    overrides = fields.overrides or {}
    fixed = {k: v for k, v in overrides.items() if not isinstance(v, list)}
    axes = {k: v for k, v in overrides.items() if isinstance(v, list)}
    total = len(bases) * len(controllers) * len(traces) * (len(seeds) if seeds else 1)
    for values in axes.values():
        total *= len(values)
    if total > max_runs:
        sizes = [f"{len(bases)} base", f"{len(controllers)} controller", f"{len(traces)} trace"]
        sizes += [f"{len(v)} {k}" for k, v in axes.items()]
        sizes.append(f"{len(seeds) if seeds else 1} seed")
        raise SweepError(
            f"{src}: {total:,} runs ({' x '.join(sizes)}) is above the limit of "
            f"{max_runs:,} runs (raise it with --max-runs or max_runs=)"
        )

    runs = []
    for (label, base, base_source), ctrl, trace, combo in itertools.product(
        bases, controllers, traces, itertools.product(*axes.values())
    ):
        flows = base.get("flow")
        if not isinstance(flows, list) or not flows:
            raise SweepError(f"{base_source}: flow: at least one [[flow]] is required")
        for run_seed in seeds or [int(base.get("seed", 1))]:
            scenario = _deepcopy(base)
            labels: dict[str, Any] = {"scenario": label}
            # Only a video flow has a controller: by default the axis applies to those,
            # so cross traffic in the base keeps its own congestion control.
            targets = picked if picked is not None else _video_flows(scenario["flow"])
            if ctrl is not None and not targets:
                raise SweepError(
                    f"{src}: controllers: base '{label}' ({base_source}) has no video flow "
                    "to apply a controller to (controller_flows picks flows)"
                )
            if ctrl is not None:
                for i, flow in enumerate(scenario["flow"]):
                    if i in targets:
                        flow["controller"] = _deepcopy(ctrl[1])
            first = flows[targets[0]] if targets and targets[0] < len(flows) else flows[0]
            labels["controller"] = ctrl[0] if ctrl else _label(first.get("controller", "?"))
            if trace is not None:
                scenario.setdefault("link", {})["capacity"] = _deepcopy(trace[1])
            labels["trace"] = trace[0] if trace else _capacity_label(base)
            labels["seed"] = run_seed
            for key, value in [*fixed.items(), *zip(axes, combo, strict=True)]:
                try:
                    set_dotted(scenario, key, _deepcopy(value))
                except KeyError as exc:
                    raise SweepError(f"{src}: overrides.{key}: {exc.args[0]}") from None
            labels.update({k: _label(v) for k, v in zip(axes, combo, strict=True)})
            scenario["seed"] = run_seed
            every = len(targets) == len(flows)
            runs.append(
                Run(labels, scenario, run_seed, base_source, None if every else tuple(targets))
            )
    return SweepSpec(name, runs, analysis, src)


def _video_flows(flows: Sequence[Any]) -> list[int]:
    """Indices of the video flows (``kind`` absent or "video"): the ones with a controller."""
    return [
        i
        for i, f in enumerate(flows)
        if not isinstance(f, Mapping) or f.get("kind", "video") == "video"
    ]


def _capacity_label(scenario: Mapping[str, Any]) -> str:
    capacity = scenario.get("link", {}).get("capacity", "?")
    if isinstance(capacity, Mapping):
        if capacity.get("kind") == "trace":
            return Path(str(capacity.get("file", "?"))).name
        return str(capacity.get("kind", "?"))
    return str(capacity)


def _deepcopy(value: Any) -> Any:
    # Scenario data is plain TOML (dicts, lists, scalars): cheaper than copy.deepcopy.
    if isinstance(value, Mapping):
        return {k: _deepcopy(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_deepcopy(v) for v in value]
    return value
