"""How the Ray executor scales, and what it costs per run.

1. Wall time of a fixed subset of ``rtcc reproduce dumbo --encoder vp8``'s cellular
   experiment (every cellular scheme on the first N ``.down`` traces, S seconds each, real
   VP8) on a local Ray cluster of 1 and of 2 worker processes.
2. The per-run overhead on a run of about 0.05 s (a fixed-rate call, its length calibrated
   here): many such runs serially in this process, on the local process pool and on Ray,
   each with 1 and 2 workers; overhead = wall x workers / runs - the serial time per run.

    PYTHONPATH=python python3 scripts/ray_scaling.py [--traces 2] [--seconds 10] [--repeat 1]
        [--tiny 400] [--skip-vp8]

Nothing is cached (no output folder); every number is one measurement on this machine,
whose load moves them: compare the ratios.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Callable

import ray

from rtcc.reproduce import dumbo
from rtcc.reproduce.dumbo import experiments
from rtcc.reproduce.traces import MAHIMAHI, find_traces
from rtcc.sweeprun import execute
from rtcc.sweepspec import Analysis, Run
from rtcc.traces import locate

TINY_S = 0.05


def on_ray(workers: int, work: Callable[[], float]) -> float:
    ray.init(
        num_cpus=workers, include_dashboard=False, logging_level=logging.ERROR,
        log_to_driver=False,
    )  # fmt: skip
    try:
        return work()
    finally:
        ray.shutdown()


def timed(runs: list[Run], analysis: Analysis, **how: object) -> float:
    started = time.perf_counter()
    result = execute(runs, analysis, None, on_error="raise", dataset=False, **how)
    assert result.executed == len(runs) and result.failed == 0
    return time.perf_counter() - started


def tiny_runs(count: int, seconds: float) -> list[Run]:
    scenario = {
        "name": "tiny", "duration": f"{seconds:.3f}s",
        "link": {"capacity": "5Mbps", "delay": "20ms", "queue": "unlimited"},
        "flow": [{"name": "call", "controller": {"name": "fixed", "rate": "4Mbps"},
                  "encoder": "ideal"}],
    }  # fmt: skip
    return [Run({"seed": s}, {**scenario, "seed": s}, s, "<tiny>") for s in range(1, count + 1)]


def calibrate() -> float:
    """Seconds of call that take about TINY_S of wall time to simulate here (twice: the
    cost is not quite proportional to the length)."""
    seconds = 20.0
    timed(tiny_runs(2, seconds), Analysis(), jobs=1)  # warm up: imports, the build's digest
    for _ in range(2):
        took = min(timed(tiny_runs(10, seconds), Analysis(), jobs=1) / 10 for _ in range(3))
        seconds *= TINY_S / took
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=2, help="cellular traces (default 2)")
    parser.add_argument("--seconds", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument("--tiny", type=int, default=400, help="0.05 s runs (default 400)")
    parser.add_argument("--repeat", type=int, default=1, help="VP8 timings per worker count")
    parser.add_argument("--skip-vp8", action="store_true", help="only the overhead")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")

    if not args.skip_vp8:
        files = find_traces(locate(None, MAHIMAHI), "down", args.traces)
        runs = experiments.cellular_runs(dumbo.CELLULAR_SCHEMES, files, args.seconds, "vp8")
        analysis = Analysis(distributions=True)
        print(f"dumbo --encoder vp8 cellular subset: {len(runs)} runs "
              f"({len(dumbo.CELLULAR_SCHEMES)} schemes x {[f.name for f in files]}, "
              f"{args.seconds} s each)")  # fmt: skip
        walls: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.repeat):  # alternating, so a change in load hits both
            for workers in (1, 2):
                load = os.getloadavg()[0]
                walls[workers].append(
                    on_ray(workers, lambda: timed(runs, analysis, executor="ray"))
                )
                print(f"  Ray, {workers} worker process{'es' if workers > 1 else ''}: "
                      f"{walls[workers][-1]:.1f} s (load average {load:.1f} before)")  # fmt: skip
        best = {w: min(times) for w, times in walls.items()}
        print(f"  best: {best[1]:.1f} s and {best[2]:.1f} s; speed-up 1 -> 2 workers "
              f"{best[1] / best[2]:.2f}x")  # fmt: skip

    seconds = calibrate()
    runs = tiny_runs(args.tiny, seconds)
    plain = Analysis()
    serial = timed(runs, plain, jobs=1)
    per_run = serial / len(runs)
    print(
        f"{len(runs)} runs of a {seconds:.1f} s fixed call ({per_run * 1000:.1f} ms each serially)"
    )
    print(f"  serial in this process: {serial:.2f} s")
    for workers in (1, 2):
        for name, wall in (
            ("local pool", timed(runs, plain, jobs=workers) if workers > 1 else serial),
            ("Ray", on_ray(workers, lambda: timed(runs, plain, executor="ray"))),
        ):
            if name == "local pool" and workers == 1:
                continue  # one job runs in this process: that is the serial row
            cost = wall * workers / len(runs)
            print(f"  {name}, {workers} worker{'s' if workers > 1 else ''}: {wall:.2f} s; "
                  f"{cost * 1000:.1f} ms per run per worker, overhead "
                  f"{(cost - per_run) * 1000:+.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
