"""Type stub for rtcc's native module (crates/rtcc-py)."""

import os
from typing import Any, Literal, NotRequired, TypedDict, final

__all__ = [
    "AppSession",
    "ControllerError",
    "ScenarioError",
    "Simulation",
    "app_register",
    "app_unregister",
    "bench",
    "bench_aimd_register",
    "codecs",
    "content_frames",
    "controllers",
    "default_scenario",
    "encode_sequence",
    "encoders",
    "frozen_curve",
    "lagging_rates",
    "parse_quantity",
    "pyctl_helpers",
    "pyctl_register",
    "trace_formats",
    "trace_info",
]

class ScenarioError(ValueError):
    """A scenario was refused. The message is one line: ``SOURCE: FIELD: reason``."""

class ControllerError(ValueError):
    """A controller written in Python raised or decided something invalid; one line
    naming the controller and method, the original exception as ``__cause__``."""

# Helper types exist only in this stub (hence the underscores).
class _ParamInfo(TypedDict):
    name: str
    default: str  # as a scenario writes it: "1Mbps", "100ms", "0.5", "48.5 (game: 45)"
    doc: str
    kind: Literal["number", "integer", "duration", "rate", "size", "bool", "choice", "text"]
    range: str | None  # accepted: "[0.001, 1]", "(0s, 10s]", "v2, classic"; None for free text

class _RegistryEntry(TypedDict):
    name: str
    summary: str
    params: list[_ParamInfo]
    # controllers() only: rebuilt from a public description, not the paper's code
    reconstruction: NotRequired[bool]
    # controllers() only: written in Python (rtcc.pycontrollers)
    python: NotRequired[bool]

class _BenchResult(TypedDict):
    workload: str
    sim_s: float
    wall_s: float
    speedup: float
    packets: int
    packets_per_s: float
    events: int
    flows: int
    ns_per_packet: float
    goodput_mbps: float
    rss_per_flow_bytes: float | None
    heap_per_flow_bytes: float | None

# A table is {column: (dtype, little-endian bytes)}, dtype one of "f64", "i64", "u8".
_Table = dict[str, tuple[str, bytes]]

class _Finished(TypedDict):
    summary: str  # JSON text
    timing: str  # JSON text: wall_s, events, speedup (timing.json)
    tables: dict[str, _Table]  # packets, frames, timeseries, link

@final
class Simulation:
    def __new__(
        cls,
        scenario_text: str,
        source: str = "<scenario>",
        seed: int | None = None,
        record_packets: bool = True,
        photo_dir: str | None = None,
        video_dir: str | None = None,
        media_map: dict[str, str] | None = None,
    ) -> Simulation: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def now_s(self) -> float: ...
    def run_until(self, t_s: float) -> bool: ...
    # Until a controller written in Python has handled a report (within 1 ms), or t_s.
    def run_until_report(self, t_s: float) -> bool: ...
    def set_pause_rows(self, rows: int | None) -> None: ...
    @property
    def paused(self) -> bool: ...
    def video_files(self) -> list[tuple[str, float]]: ...
    def finish(self) -> _Finished: ...

def controllers() -> list[_RegistryEntry]: ...
def encoders() -> list[_RegistryEntry]: ...
def default_scenario() -> str: ...
def bench(workload: Literal["fixed", "gcc", "vp8", "tcp"] | str) -> _BenchResult: ...
def codecs() -> dict[str, str | None]: ...
def encode_sequence(
    codec: str,
    content: str,
    fps: float,
    duration_s: float,
    schedule: list[tuple[float, int]],
    encode_size: tuple[int, int] | None = None,
    speed: int | None = None,
    measure: bool = True,
    force_keys: list[int] = ...,
    photo_dir: str | None = None,
) -> dict[str, list[float] | list[int] | list[bool]]: ...
def frozen_curve(
    content: str,
    fps: float,
    starts: int = 8,
    span_s: float = 20.0,
    max_k: int = 60,
    photo_dir: str | None = None,
) -> list[tuple[int, float, float]]: ...
def content_frames(
    content: str, fps: float, start: int, count: int, photo_dir: str | None = None
) -> tuple[int, int, list[bytes]]: ...
def parse_quantity(value: str | float, kind: Literal["duration", "rate", "size"]) -> float:
    """A scenario quantity in its base unit: seconds, bits per second or bytes.

    Text carries its unit ("25ms", "3Mbps", "1500B"; text without one is refused); a
    bare number is already in the base unit. Raises ValueError with the reason otherwise.
    """

class _TraceInfo(TypedDict):
    format: str
    duration_s: float
    mean_bps: int
    samples: int
    implausible: int

def trace_info(
    path: str | os.PathLike[str],
    format: str | None = None,
    unit: str | None = None,
    drop_above: str | None = None,
) -> _TraceInfo:
    """A trace file read as a scenario's capacity table reads it (ValueError if it cannot be)."""

def trace_formats() -> list[tuple[str, str | None]]:
    """Each trace format's name and default unit (None for Mahimahi)."""

def lagging_rates(
    targets_bps: list[float], fps: float, tau_up_s: float, tau_down_s: float
) -> list[float]: ...
def si_ti(width: int, height: int, prev: bytes, cur: bytes) -> tuple[float, float]:
    """ITU-T P.910 (SI, TI) of ``cur`` against ``prev`` (luma planes first, I420)."""

def content_rates(
    complexity: list[float], fps: float, gamma: float, rc_buffer_s: float, rc_memory_s: float
) -> list[float]:
    """The ``content`` model's rate control: each frame's size over its budget."""

def content_model(
    params: dict[str, str | float | bool],
    fps: float,
    duration_s: float,
    target_bps: float,
    seed: int = 1,
) -> dict[str, Any]:
    """The ``content`` encoder model at a fixed target: columns size, key, si, ti, cut."""

@final
class AppSession:
    """What an rtcc.app policy changes: the codec and network interfaces (FBRA §6)."""

    @property
    def now_s(self) -> float: ...
    @property
    def target_bps(self) -> float: ...
    @property
    def fec_enabled(self) -> bool: ...
    def set_bitrate(self, bps: float) -> None: ...
    def get_bitrate(self) -> float: ...
    def get_param(self, name: str) -> float | str | None: ...
    def set_param(self, name: str, value: object) -> bool: ...
    def enable_fec(self, on: bool) -> None: ...
    def set_fec_scheme(self, group: int) -> None: ...
    def set_timer(self, at_s: float | None) -> None: ...

def app_register(id: str, policy: object) -> None: ...
def app_unregister(id: str) -> None: ...
def pyctl_register(
    name: str,
    summary: str,
    params: list[tuple[str, str, Any, float | None, float | None, str, list[str]]],
    factory: Any,
) -> None: ...
def pyctl_helpers(resolve: Any, feedback: Any, frame: Any, packet: Any, state: Any) -> None: ...
def bench_aimd_register() -> None:
    """Registers ``bench-aimd``, the Rust side of ``rtcc bench --workload pyctl``."""
