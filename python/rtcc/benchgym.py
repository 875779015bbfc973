"""``rtcc bench --workload gym``: how fast :mod:`rtcc.gym` steps.

A trivial policy (a constant action: the middle of the log-scaled rate range) steps the
environment over the same episodes three ways in this process, alternated so that a change
in the machine's load falls on all of them:

- ``env``: one :class:`~rtcc.gym.RtccEnv`, one step per receiver report (50 ms apart),
  resets included;
- ``vec8``: eight environments in one :func:`~rtcc.gym.make_vec`, counted per environment
  step (its resets are the vector's own autoresets);
- ``simulation``: each episode's scenario (:meth:`~rtcc.gym.RtccEnv.scenario`) run whole by
  the Rust ``fixed`` controller at the policy's target: what the simulator alone costs for
  the same simulated time, as reports per second.

The goal for ``env`` is 20,000 steps per second (1,000x real time at 50 ms per step).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

GOAL_STEPS_PER_S = 20_000.0
EPISODES = 8  # per run; each 60 simulated seconds
DURATION_S = 60.0
VEC = 8
ACTION = 0.5  # absolute mode: the log-middle of [min_rate, max_rate]


def _env_run(env: Any) -> tuple[float, int, float]:
    """(wall s, steps, simulated s) of EPISODES episodes, seeds 0.."""
    action = np.array([ACTION], dtype=np.float32)
    steps, sim_s = 0, 0.0
    start = time.perf_counter()
    for seed in range(EPISODES):
        env.reset(seed=seed)
        while True:
            _, _, done, _, info = env.step(action)
            steps += 1
            if done:
                sim_s += info["time_s"]
                break
    return time.perf_counter() - start, steps, sim_s


def _vec_run(vec: Any) -> tuple[float, int, float]:
    """(wall s, environment steps, simulated s) until EPISODES episodes have ended (the
    others' partial episodes count too)."""
    actions = np.full((VEC, 1), ACTION, dtype=np.float32)
    finished, steps = 0, 0
    resetting = np.zeros(VEC, dtype=bool)
    now = np.zeros(VEC)
    sim_s = 0.0
    start = time.perf_counter()
    vec.reset(seed=0)
    while finished < EPISODES:
        _, _, done, _, info = vec.step(actions)
        ran = ~resetting  # an autoreset step runs no simulation
        steps += int(ran.sum())
        t = np.where(ran, info["time_s"], 0.0)
        sim_s += float((t - now)[ran].sum())
        now = np.where(done, 0.0, t)
        finished += int(done.sum())
        resetting = done
    return time.perf_counter() - start, steps, sim_s


def _simulation_run(env: Any) -> tuple[float, float]:
    """(wall s, simulated s) of the same episodes run whole by Rust's fixed."""
    import rtcc

    target = env.min_rate * (env.max_rate / env.min_rate) ** ACTION
    wall, sim_s = 0.0, 0.0
    for seed in range(EPISODES):
        env.reset(seed=seed)
        scenario = env.scenario({"name": "fixed", "rate": f"{target:.0f}bps"})
        result = rtcc.simulate(scenario, record_packets=False)
        assert result.timing is not None  # a run always has its timing
        wall += float(result.timing["wall_s"])
        sim_s += DURATION_S
    return wall, sim_s


def run(repeat: int = 3, advance: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """One row per way (``env``, ``vec8``, ``simulation``): the best of ``repeat`` runs in
    steps (reports) per second, simulated seconds per wall second and µs per step."""
    from rtcc.gym import RtccEnv, make_vec

    env = RtccEnv(duration=DURATION_S)
    vec = make_vec(VEC, duration=DURATION_S)
    _env_run(env)  # untimed: the first run pays for trace loading and first-touch allocations
    best: dict[str, tuple[float, int, float]] = {}
    report_s = None
    for _ in range(repeat):
        runs = {"env": _env_run(env), "vec8": _vec_run(vec)}
        wall, sim_s = _simulation_run(env)
        if report_s is None:
            report_s = sim_s / runs["env"][1]  # simulated time per step
        runs["simulation"] = (wall, round(sim_s / report_s), sim_s)
        for way, r in runs.items():
            if way not in best or r[1] / r[0] > best[way][1] / best[way][0]:
                best[way] = r
        if advance is not None:
            advance()
    vec.close()
    rows = []
    for way, (wall, steps, sim_s) in best.items():
        rows.append({
            "way": way,
            "steps": steps,
            "sim_s": sim_s,
            "wall_s": wall,
            "steps_per_s": steps / wall,
            "real_time_factor": sim_s / wall,
            "us_per_step": 1e6 * wall / steps,
            "step_ms": 1e3 * sim_s / steps,
        })  # fmt: skip
    return rows
