"""The ``rtcc rfc8867`` subcommand: its options and what it does (cli.py registers it)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any, jobs: Callable[[str], int],
               executor_flags: Callable[[argparse.ArgumentParser], None]) -> None:  # fmt: skip
    p = sub.add_parser(
        "rfc8867", help="the RMCAT evaluation: RFC 8867 test cases, RFC 8868 metrics, verdicts"
    )
    p.add_argument(
        "controllers", nargs="*", metavar="CONTROLLER",
        help="controllers to evaluate, any registered name (default: gcc nada)",
    )  # fmt: skip
    p.add_argument("--out", metavar="DIR", help="results folder (default: results/rfc8867)")
    p.add_argument("--jobs", "-j", type=jobs, metavar="N",
                   help="worker processes (default: CPU count)")  # fmt: skip
    p.add_argument("--short", action="store_true",
                   help="every case at a fifth of its length (for tests)")  # fmt: skip
    p.add_argument("--fresh", action="store_true", help="recompute runs already cached")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    executor_flags(p)
    p.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    from rtcc import cli
    from rtcc.rfc8867 import DEFAULT_CONTROLLERS, check_controllers, run, summary_text

    controllers = list(dict.fromkeys(args.controllers or DEFAULT_CONTROLLERS))
    if (why := check_controllers(controllers)) is not None:
        raise cli.CliError(why)
    started = time.perf_counter()
    out = cli._out_dir(args.out, Path("results") / "rfc8867")
    with cli._reproduction_lock(out, "rfc8867"):
        outcome = run(out, args.jobs, controllers=controllers, short=args.short,
                      fresh=args.fresh, progress=not args.quiet, **cli._where(args))  # fmt: skip
    cli._print_outcome(args, summary_text(outcome.table), outcome, out,
                       "table.csv, runs.csv, report.html", started)  # fmt: skip
    return 0
