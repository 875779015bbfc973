"""Type stub for rtcc's native module (crates/rtcc-py)."""

from typing import Literal, TypedDict, final

__all__ = [
    "ScenarioError",
    "Simulation",
    "bench",
    "controllers",
    "default_scenario",
    "encoders",
]

class ScenarioError(ValueError):
    """A scenario was refused. The message is one line: ``SOURCE: FIELD: reason``."""

# Helper types exist only in this stub (hence the underscores).
class _ParamInfo(TypedDict):
    name: str
    default: str
    doc: str

class _RegistryEntry(TypedDict):
    name: str
    summary: str
    params: list[_ParamInfo]

class _BenchResult(TypedDict):
    workload: str
    sim_s: float
    wall_s: float
    speedup: float
    packets: int
    packets_per_s: float
    events: int

# A table is {column: (dtype, little-endian bytes)}, dtype one of "f64", "i64", "u8".
_Table = dict[str, tuple[str, bytes]]

class _Finished(TypedDict):
    summary: str  # JSON text
    tables: dict[str, _Table]  # packets, frames, timeseries, link

@final
class Simulation:
    def __new__(
        cls,
        scenario_text: str,
        source: str = "<scenario>",
        seed: int | None = None,
        record_packets: bool = True,
    ) -> Simulation: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def now_s(self) -> float: ...
    def run_until(self, t_s: float) -> bool: ...
    def finish(self) -> _Finished: ...

def controllers() -> list[_RegistryEntry]: ...
def encoders() -> list[_RegistryEntry]: ...
def default_scenario() -> str: ...
def bench(workload: Literal["fixed", "gcc"] | str) -> _BenchResult: ...
