"""``rtcc bench --workload pyctl``: what a controller written in Python costs.

Two controllers, each run in Rust and as its Python port, on the same scenario and seed in
this process: ``fixed`` (a constant 1 Mbps; the port only answers ``decision``, and once
more hearing every report, ``fixed+reports``) and an AIMD
on loss (``bench-aimd`` in the extension, registered here only; the port ``PyAimd`` has the
same rule on the same f64 rate, one step per report). Each pair must give the same target
series bit for bit; the bench reports the simulator's wall time (``timing.json``'s, without
building the result) per simulated second and per packet sent, and the Python/Rust factor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from rtcc.pycontrollers import Param

FIXED_BPS = 1e6
DURATION_S = 300.0  # long enough that a Rust run's wall time is tens of ms
# AIMD meets loss: 2 Mbps with a short drop-tail queue, from 300 kbps.
SCENARIO: dict[str, Any] = {
    "duration": f"{DURATION_S}s",
    "seed": 1,
    "link": {"capacity": "2Mbps", "delay": "25ms", "queue": "50pkt"},
    "record": {"packets": False},
}
SCENARIO_TEXT = f"1 video flow (ideal encoder) over 2 Mbps / 25 ms / 50 packets, {DURATION_S:.0f} s"


class PyFixed:
    """fixed in Python: a constant 1 Mbps, paced at 2.5x as Rust's fixed is by default"""

    params: ClassVar[list[Param]] = []

    def __init__(self, params: dict[str, Any], context: Any) -> None:
        pass

    def decision(self) -> float:
        return FIXED_BPS


class PyFixedReports(PyFixed):
    """fixed in Python that hears every report and ignores it: the cost of one call per
    report with its packets as numpy columns (without a hook, the native side reads
    ``decision`` once and never calls back, as for Rust's fixed)"""

    def on_feedback(self, now_s: float, fb: Any) -> None:
        pass


class PyAimd:
    """AIMD on loss in Python: bench-aimd's rule (the extension's benchaimd.rs)"""

    params: ClassVar[list[Param]] = [
        Param("increase", "20kbps", "added per report without loss"),
        Param("decrease", 0.85, "factor on a report with loss", min=0.1, max=1.0),
    ]

    def __init__(self, params: dict[str, Any], context: Any) -> None:
        self.rate = context.start_bps
        self.low, self.high = context.min_bps, context.max_bps
        self.increase, self.decrease = params["increase"], params["decrease"]

    def on_feedback(self, now_s: float, fb: Any) -> None:
        if np.isnan(fb.arrival_s).any():
            self.rate *= self.decrease
        else:
            self.rate += self.increase
        self.rate = min(max(self.rate, self.low), self.high)

    def decision(self) -> float:
        return self.rate


# (pair, Rust controller, Python controller name, its class)
PAIRS: tuple[tuple[str, Any, str, type], ...] = (
    ("fixed", {"name": "fixed", "rate": "1Mbps"}, "bench-py-fixed", PyFixed),
    ("fixed+reports", {"name": "fixed", "rate": "1Mbps"}, "bench-py-fixed-reports", PyFixedReports),
    ("aimd", "bench-aimd", "bench-py-aimd", PyAimd),
)


def register() -> None:
    """The bench's controllers: Rust's bench-aimd and the two Python ports."""
    import rtcc

    rtcc.native().bench_aimd_register()
    for _, _, name, cls in PAIRS:
        rtcc.register_controller(name, cls)


def _one(controller: Any) -> tuple[float, int, float, np.ndarray]:
    """(wall s, packets sent, simulated s, target series) of one run."""
    import rtcc

    scenario = {**SCENARIO, "flow": [{"controller": controller, "encoder": "ideal"}]}
    result = rtcc.simulate(scenario, record_packets=False)
    flow = result.summary["flows"][0]
    assert result.timing is not None  # a run always has its timing
    series = result.timeseries["target_kbps"].to_numpy(dtype=float)
    return float(result.timing["wall_s"]), int(flow["packets_sent"]), DURATION_S, series


def run(repeat: int = 3, advance: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """One row per pair: each side's best wall time over ``repeat`` runs, per simulated
    second and per packet, the Python/Rust factor and whether the targets matched."""
    register()
    _one(PAIRS[0][1])  # untimed: the first run pays for first-touch allocations
    rows = []
    for pair, rust, py_name, _ in PAIRS:
        runs: dict[str, list[tuple[float, int, float, np.ndarray]]] = {"rust": [], "python": []}
        for _ in range(repeat):
            # Alternated, so a change in the machine's load falls on both sides.
            for side, ctl in (("rust", rust), ("python", py_name)):
                runs[side].append(_one(ctl))
                if advance is not None:
                    advance()
        sides = {side: min(r, key=lambda x: x[0]) for side, r in runs.items()}
        (rw, rp, sim_s, rs), (pw, pp, _, ps) = sides["rust"], sides["python"]
        rows.append(
            {
                "controller": pair,
                "sim_s": sim_s,
                "packets": rp,
                "rust_ms_per_sim_s": 1e3 * rw / sim_s,
                "python_ms_per_sim_s": 1e3 * pw / sim_s,
                "rust_us_per_packet": 1e6 * rw / rp,
                "python_us_per_packet": 1e6 * pw / pp,
                "slowdown": pw / rw,
                "same_rates": rp == pp and rs.shape == ps.shape and bool(np.array_equal(rs, ps)),
                "target_kbps_mean": float(np.mean(rs)),
            }
        )
    return rows
