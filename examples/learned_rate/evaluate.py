"""Run the learned controller and gcc on the held-out traces and print a table.

    python examples/learned_rate/evaluate.py --seeds 1 2 --duration 60

Both controllers get the same scenarios (link, delay, queue, encoder and rates as in
training; the same seeds). Writes ``--out``/eval.csv (one row per trace, controller and
seed) and ``--out``/eval_table.csv (per trace and controller, seeds averaged, plus the
mean over traces), and prints the latter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
LEARNED = "py:policy_controller:PolicyController"
COLUMNS = [
    "rate_kbps",
    "utilization",
    "delay_p50_ms",
    "delay_p95_ms",
    "loss",
    "frame_delay_ms",
    "freezes",
    "freeze_ratio",
]


def scenario(
    set_name: str, file: str, controller: Any, env: dict[str, Any], args: Any
) -> dict[str, Any]:
    """RtccEnv's scenario for one trace, delay and queue, with ``controller``."""
    return {
        "duration": f"{args.duration}s",
        "link": {
            "capacity": {"kind": "trace", "set": set_name, "file": file, "drop_above": "1Gbps"},
            "delay": args.delay,
            "queue": args.queue,
        },
        "flow": [
            {
                "controller": controller,
                "encoder": "ideal",
                "start_rate": f"{env['start_rate']}bps",
                "min_rate": f"{env['min_rate']}bps",
                "max_rate": f"{env['max_rate']}bps",
            }
        ],
    }


def measure(result: Any) -> dict[str, float]:
    """The table's columns from one run: the summary, and one-way delay quantiles of the
    flow's packets that arrived (the summary has no median)."""
    flow = result.summary["flows"][0]
    p = result.packets
    owd = p.loc[(p["flow"] == 0) & ~p["lost"] & ~p["dropped"], "owd_ms"].dropna()
    return {
        "rate_kbps": flow["goodput_kbps"],
        "utilization": flow["utilization"],
        "delay_p50_ms": float(np.percentile(owd, 50)) if len(owd) else float("nan"),
        "delay_p95_ms": float(np.percentile(owd, 95)) if len(owd) else float("nan"),
        "loss": flow["loss_rate"],
        "frame_delay_ms": flow["frame_delay_ms_mean"],
        "freezes": flow["freeze_count"],
        "freeze_ratio": flow["freeze_ratio"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--model",
        type=Path,
        default=HERE / "out" / "policy.zip",
        help="policy (.zip or .npz) with its .json beside it",
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds per run")
    ap.add_argument("--delay", default="25ms")
    ap.add_argument("--queue", default="100pkt")
    ap.add_argument(
        "--traces",
        nargs="+",
        metavar="SET/FILE",
        help="held-out traces to run (default: the split's whole test part)",
    )
    ap.add_argument("--baseline", default="gcc")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args(argv)
    if args.duration <= 0:
        ap.error("--duration must be positive")
    import pandas as pd

    import rtcc

    sidecar = args.model.with_suffix(".json")
    try:
        meta = json.loads(sidecar.read_text())
        env, test = meta["env"], [tuple(t) for t in meta["split"]["test"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(
            f"evaluate.py: {sidecar}: cannot read env/split ({type(exc).__name__}: {exc})",
            file=sys.stderr,
        )
        return 2
    if args.traces:
        wanted = [tuple(t.split("/", 1)) for t in args.traces]
        trained = {tuple(t) for t in meta["split"]["train"]}
        for t in wanted:
            if t in trained:
                print(f"evaluate.py: --traces: {'/'.join(t)} was used in training", file=sys.stderr)
                return 2
            if t not in test:
                print(
                    f"evaluate.py: --traces: {'/'.join(t)} is not in the split's test part",
                    file=sys.stderr,
                )
                return 2
        test = wanted
    controllers = {
        "learned": {"name": LEARNED, "model": str(args.model.resolve())},
        args.baseline: args.baseline,
    }
    rows = []
    for set_name, file in test:
        for label, ctl in controllers.items():
            for seed in args.seeds:
                result = rtcc.simulate(scenario(set_name, file, ctl, env, args), seed=seed)
                rows.append(
                    {
                        "trace": f"{set_name}/{file}",
                        "controller": label,
                        "seed": seed,
                        **measure(result),
                    }
                )
                print(
                    f"{set_name}/{file} {label} seed {seed}: {rows[-1]['rate_kbps']:.0f} kbps",
                    file=sys.stderr,
                )
    runs = pd.DataFrame(rows)
    table = runs.groupby(["trace", "controller"], sort=False)[COLUMNS].mean().reset_index()
    mean = table.groupby("controller", sort=False)[COLUMNS].mean().reset_index()
    mean.insert(0, "trace", "mean over traces")
    table = pd.concat([table, mean], ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "eval.csv", index=False)
    table.to_csv(args.out / "eval_table.csv", index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))  # so py:policy_controller:... imports
    sys.exit(main())
