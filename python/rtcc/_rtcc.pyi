"""Type stub for rtcc's native module (crates/rtcc-py)."""

from typing import Literal, TypedDict

class ScenarioError(ValueError):
    """A scenario was refused. The message is one line: ``SOURCE: FIELD: reason``."""

class ParamInfo(TypedDict):
    name: str
    default: str
    doc: str

class RegistryEntry(TypedDict):
    name: str
    summary: str
    params: list[ParamInfo]

class BenchResult(TypedDict):
    workload: str
    sim_s: float
    wall_s: float
    speedup: float
    packets: int
    packets_per_s: float
    events: int

# A table is {column: (dtype, little-endian bytes)}, dtype one of "f64", "i64", "u8".
Table = dict[str, tuple[str, bytes]]

class FinishResult(TypedDict):
    summary: str
    tables: dict[str, Table]

class Simulation:
    def __init__(
        self,
        scenario_text: str,
        source: str = "<scenario>",
        seed: int | None = None,
        record_packets: bool = True,
    ) -> None: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def now_s(self) -> float: ...
    def run_until(self, t_s: float) -> bool: ...
    def finish(self) -> FinishResult: ...

def controllers() -> list[RegistryEntry]: ...
def encoders() -> list[RegistryEntry]: ...
def default_scenario() -> str: ...
def bench(workload: Literal["fixed", "gcc"] | str) -> BenchResult: ...
