"""The ``rtcc`` command line: run, live, relay, calibrate-encoder, validate, controllers,
encoders, traces, bench, fairness, sweep, reproduce, rfc8867, report, query.

Every error a user can cause (a refused scenario, a missing or unreadable file, a
bad option) ends as one line ``rtcc: error: <message>`` on stderr and exit status
2. Set ``RTCC_DEBUG=1`` to get the Python traceback instead. Long commands (run, bench,
sweep, reproduce, calibrate-encoder) draw a progress bar on stderr when it is a terminal;
tables and results go to stdout as plain text (:mod:`rtcc.console`, :mod:`rtcc.tables`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import rtcc
from rtcc.limits import (
    MAX_INPUT_BYTES, MAX_RUNS, check_nesting, check_output_dir, output_dir_refusal, safe_file_name,
)  # fmt: skip
from rtcc.scenario import ScenarioInput, load_scenario, peek
from rtcc.tables import format_number, table_text

# Speed-up targets (simulated seconds per wall second), DESIGN.md §6.
# vp8: a 120 s real-codec call (encode, decode, both quality measures) in
# at most 120 s of wall time.
# tcp: one Cubic flow on 10 Mbps / 20 ms for 120 s: ~830 data packets and ~415 ACKs
# per simulated second, ~2.7x the gcc call's packets plus a per-ACK congestion-control
# update, so the gcc budget per packet, halved; `--workload tcp --ns3 PYTHON` also
# times bare ns-3 on the same flow.
BENCH_TARGETS = {"fixed": 10_000.0, "gcc": 2_000.0, "vp8": 1.0, "tcp": 1_000.0}
EXIT_USAGE = 2
_MAX_SEED = 2**64 - 1


class CliError(Exception):
    """An error to report as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse's own error() prints usage plus a message; we want one line.
    def error(self, message: str) -> NoReturn:
        raise CliError(message)


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: not an integer") from None
    if not 0 <= value <= _MAX_SEED:
        raise argparse.ArgumentTypeError(f"invalid seed {value}: must be in 0..2^64-1")
    return value


def _peers(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid --peers {text!r}: not an integer") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"invalid --peers {value}: must be in 1..1024")
    return value


def _read_scenario(path_text: str | None) -> ScenarioInput:
    """The scenario named on the command line ('-' is stdin; none is the demo)."""
    if path_text is None:
        return ScenarioInput(rtcc.default_scenario(), "demo", "demo")
    if path_text == "-":
        text = sys.stdin.read(MAX_INPUT_BYTES + 1)
        if len(text) > MAX_INPUT_BYTES:
            raise CliError(f"<stdin>: above the {MAX_INPUT_BYTES // 2**20} MiB input limit")
        check_nesting(text, "<stdin>")
        return ScenarioInput(text, "<stdin>", "stdin")
    try:
        return load_scenario(Path(path_text), path_text)
    except UnicodeDecodeError as exc:
        raise CliError(f"{path_text}: not UTF-8 text (byte {exc.start})") from None


# --- formatting -------------------------------------------------------------------


def _times() -> str:
    # U+00D7 where the terminal can show it, plain "x" otherwise.
    try:
        "\u00d7".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return "x"
    return "\u00d7"


def summary_text(
    summary: dict[str, Any],
    wall_s: float | None = None,
    timing: Mapping[str, Any] | None = None,
) -> str:
    """The per-flow table and run totals printed by ``rtcc run``. The simulator's own
    wall time comes from ``timing`` (timing.json), or from the summary's ``sim``
    section of a folder written before timing.json existed, else ``wall_s``."""
    header = [
        "flow",
        "controller",
        "video kbps",
        "padding kbps",
        "goodput kbps",
        "util %",
        "owd ms",
        "owd p95",
        "latency ms",
        "lat. p95",
        "freeze %",
        "loss %",
    ]
    rows = [
        [
            str(f.get("name", i)),
            _scheme(f),
            format_number(f.get("video_kbps")),
            format_number(f.get("padding_kbps")),
            format_number(f.get("goodput_kbps")),
            format_number(f.get("utilization"), 100, 1),
            format_number(f.get("owd_ms_mean"), 1, 1),
            format_number(f.get("owd_ms_p95"), 1, 1),
            format_number(f.get("frame_latency_ms_mean"), 1, 1),
            format_number(f.get("frame_latency_ms_p95"), 1, 1),
            format_number(f.get("freeze_ratio"), 100, 1),
            format_number(f.get("loss_rate"), 100, 2),
        ]
        for i, f in enumerate(summary.get("flows", []))
    ]
    lines = [table_text(header, rows, left=2), ""]
    link = summary.get("link", {})
    shares = _shares(link)
    lines.append(
        f"link: capacity {format_number(link.get('capacity_kbps_mean'))} kbps mean, "
        f"utilization {format_number(link.get('utilization'), 100, 1)} %{shares}"
    )
    rev = summary.get("reverse_link")
    if rev:
        lines.append(
            f"reverse link: capacity {format_number(rev.get('capacity_kbps_mean'))} kbps mean, "
            f"utilization {format_number(rev.get('utilization'), 100, 1)} %{_shares(rev)}"
        )
    for i, f in enumerate(summary.get("flows", [])):
        if f.get("kind") in ("tcp", "web"):
            lines.append(
                f"{f.get('name', i)} ({_scheme(f)}): "
                f"RTT {format_number(f.get('rtt_ms_mean'), 1, 1)} ms mean, "
                f"{format_number(f.get('rtt_ms_p95'), 1, 1)} ms p95; "
                f"{f.get('retransmits', 0)} retransmissions"
                + (
                    f"; {f.get('objects_completed', 0)} of {f.get('objects_started', 0)} downloads "
                    f"done, completion {format_number(f.get('fct_ms_mean'), 1, 0)} ms mean, "
                    f"{format_number(f.get('fct_ms_p95'), 1, 0)} ms p95"
                    if f.get("kind") == "web"
                    else ""
                )
            )
    for i, f in enumerate(summary.get("flows", [])):
        if f.get("psnr_db_mean") is None:
            continue
        lines.append(
            f"quality {f.get('name', i)} ({f.get('encoder')}, {f.get('quality_source', 'model')}): "
            f"PSNR {format_number(f['psnr_db_mean'], 1, 1)} dB, "
            f"SSIM {format_number(f.get('ssim_db_mean'), 1, 1)} dB "
            f"({format_number(f.get('ssim_mean'), 1, 3)}) "
            f"per frame; on screen {format_number(f.get('psnr_db_displayed'), 1, 1)} dB, "
            f"{format_number(f.get('ssim_db_displayed'), 1, 1)} dB "
            f"({format_number(f.get('ssim_displayed'), 1, 3)})"
        )
    # jain_goodput_active, under its first name jain_index in summaries written before it.
    jain = next(
        (summary[k] for k in ("jain_goodput_active", "jain_index") if summary.get(k) is not None),
        None,
    )
    if len(rows) > 1 and jain is not None:
        lines.append(
            "Jain's index of goodput, each flow over its active time (jain_goodput_active): "
            f"{format_number(jain, 1, 3)}"
        )
    sim = timing if timing is not None else summary.get("sim", {})
    wall = sim.get("wall_s", wall_s)
    speed = sim.get("speedup")
    duration = summary.get("duration_s")
    if speed is None and wall and duration:
        speed = duration / wall
    lines.append(
        f"simulated {format_number(duration, 1, 1)} s in {format_number(wall, 1, 3)} s "
        f"({format_number(speed)}{_times()} real time)"
    )
    return "\n".join(lines)


def _registry_text(entries: Sequence[Mapping[str, Any]]) -> str:
    blocks = []
    for entry in entries:
        # A controller written in Python (rtcc.pycontrollers) says so.
        mark = " [Python]" if entry.get("python") else ""
        lines = [f"{entry['name']}{mark}: {entry.get('summary', '')}".rstrip(": ")]
        params = entry.get("params", [])
        if params:
            # name, default, accepted values, doc: all from the one declaration.
            rows = [
                [
                    f"  {p['name']}",
                    str(p.get("default", "")),
                    str(p.get("range") or ""),
                    str(p.get("doc", "")),
                ]
                for p in params
            ]
            lines.append(table_text(None, rows, left=4))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# --- commands -----------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    scenario = _read_scenario(args.scenario)
    out = _out_dir(args.out, Path("results") / safe_file_name(scenario.stem or "", "scenario"))
    started = time.perf_counter()
    result = rtcc.simulate(
        scenario,
        seed=args.seed,
        progress=not args.quiet,  # a bar labelled with the scenario's file name
        save_video=out if args.save_video else None,
        tables_dir=out,
    )
    wall = time.perf_counter() - started
    files = result.save(out, plots=not args.no_plots)
    if args.save_video:
        files += sorted(out.glob("*.mp4"))
    if not args.quiet:
        from rtcc.dataset import escape_controls

        # Flow names are the scenario's text: a control character in one stays inert.
        text = summary_text(result.summary, wall, result.timing)
        print("\n".join(escape_controls(line) for line in text.splitlines()))
        print(f"results: {out}")
        sizes = [[f"  {p.name}", f"{p.stat().st_size:,} bytes"] for p in files]
        print(table_text(None, sizes))
    return 0


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while a live run goes, so it stops where it
    is and its results up to there are written, as on Ctrl-C."""

    def raise_interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
    except ValueError:  # not the main thread: leave SIGTERM as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_live(args: argparse.Namespace) -> int:
    scenario = _read_scenario(args.scenario)
    default = Path("results") / (safe_file_name(scenario.stem or "", "scenario") + "-live")
    out = _out_dir(args.out, default)
    if not args.quiet:
        print(f"live: {scenario.source}, in real time; Ctrl-C stops it and keeps what ran", flush=True)
    started = time.perf_counter()
    with _sigterm_interrupts():
        result = rtcc.live(
            scenario,
            seed=args.seed,
            bottleneck=args.bottleneck,
            fallback=args.tun_fallback,
            peer=args.peer,
            peer_options=_peer_options(args),
        )
    wall = time.perf_counter() - started
    files = result.save(out, plots=not args.no_plots)
    live = result.summary.get("live", {})
    comparison = None
    if args.compare and not live.get("interrupted"):
        simulated = rtcc.simulate(scenario, seed=args.seed)
        comparison = sim_vs_live(simulated.summary, result.summary)
        path = out / "sim_vs_live.csv"
        comparison.to_csv(path, index=False)
        files.append(path)
    if not args.quiet:
        from rtcc.dataset import escape_controls

        text = summary_text(result.summary, wall, result.timing)
        print("\n".join(escape_controls(line) for line in text.splitlines()))
        late = live.get("late_us") or [None, None, None]
        print(
            f"live: wake-ups late by {format_number(late[0])} µs median, "
            f"{format_number(late[1])} µs p99, {format_number(late[2])} µs max; "
            f"socket drops {live.get('socket_drops', 0)}, undecodable {live.get('undecodable', 0)}, "
            f"refused {live.get('refused', 0)}; loop on CPU "
            f"{format_number(live.get('loop_cpu'), 100, 0)} %, load "
            f"{format_number(live.get('load_average'), 1, 2)}; bottleneck {live.get('bottleneck')}"
        )
        for t in live.get("tcp") or []:
            info = t.get("info") or {}
            print(
                f"live: flow {t['flow']} is the kernel's TCP {t['cc']} (asked: {t['cc_asked']}): "
                f"{info.get('total_retrans', 0)} retransmissions, min RTT "
                f"{format_number((info.get('min_rtt_us') or 0) / 1000, 1, 1)} ms"
            )
        if live.get("left_out"):
            print(f"live: left out {', '.join(live['left_out'])}: {live.get('fallback_reason')}")
        for p in live.get("peers") or []:
            print(peer_text(p))
        if comparison is not None:
            print("the same scenario and seed simulated, beside live:")
            rows = [[format_number(v, 1, 2) if isinstance(v, float) else str(v) for v in r]
                    for r in comparison.itertuples(index=False)]  # fmt: skip
            print(table_text(list(comparison.columns), rows, left=2))
        print(f"results: {out}")
        sizes = [[f"  {p.name}", f"{p.stat().st_size:,} bytes"] for p in files]
        print(table_text(None, sizes))
    return 130 if live.get("interrupted") else 0


def _peer_options(args: argparse.Namespace) -> dict | None:
    from rtcc import peers

    if args.peer_option and not args.peer:
        raise SystemExit("rtcc live: --peer-option needs --peer")
    try:
        return peers.parse_options(args.peer_option) or None
    except ValueError as e:
        raise SystemExit(f"rtcc live: {e}") from None


def peer_text(p: dict) -> str:
    """One line on a live run's peer: what it decoded and the RTCP it sent."""
    rep = p.get("report") or {}
    rr = p.get("rr") or []
    last = rr[-1] if rr else None
    text = (
        f"live: flow {p['flow']} received by {p['kind']} ({rep.get('version', '?')}): "
        f"{rep.get('decoded_frames', '?')} frames decoded; its RTCP: {p['rtcp_datagrams']} datagrams, "
        f"{p['receiver_reports']} RR, {p['transport_feedback']} transport feedback, "
        f"{p['nacks']} NACK, {p['plis']} PLI, {p['rtcp_undecodable']} not parsed"
    )
    if p.get("report_error"):
        text += f"; no report from it: {p['report_error']}"
    if last:
        text += (
            f"; last RR: lost {last['cumulative_lost']} (rtcc: {last['own_cumulative_lost']}), "
            f"jitter {format_number(last['jitter_ms'], 1, 2)} ms (rtcc: {format_number(last['own_jitter_ms'], 1, 2)})"
        )
    return text


# What `rtcc live --compare` sets side by side, per flow: (summary field, column, scale).
SIM_VS_LIVE = (
    ("utilization", "util %", 100.0),
    ("goodput_kbps", "goodput kbps", 1.0),
    ("owd_ms_mean", "owd ms", 1.0),
    ("owd_ms_p95", "owd p95", 1.0),
    ("frame_delay_ms_p95", "frame delay p95", 1.0),
    ("freeze_ratio", "freeze %", 100.0),
    ("loss_rate", "loss %", 100.0),
)


def sim_vs_live(simulated: Mapping[str, Any], live: Mapping[str, Any]) -> Any:
    """One row per flow and run ("sim", "live"): the fields of :data:`SIM_VS_LIVE`."""
    import pandas as pd

    rows = []
    for run, summary in (("sim", simulated), ("live", live)):
        for i, f in enumerate(summary.get("flows", [])):
            row: dict[str, Any] = {"flow": str(f.get("name", i)), "run": run}
            for field, column, scale in SIM_VS_LIVE:
                value = f.get(field)
                row[column] = None if value is None else float(value) * scale
            rows.append(row)
    return pd.DataFrame(rows).sort_values(["flow", "run"], ascending=[True, False], kind="stable")


def cmd_relay(args: argparse.Namespace) -> int:
    scenario = _read_scenario(args.scenario)
    duration = float(rtcc.native().parse_quantity(args.duration, "duration"))
    if not args.quiet:
        print(
            f"relay: {args.listen} -> {args.to} through {scenario.source}'s [link] for "
            f"{duration:g} s; Ctrl-C stops it"
        )
    with _sigterm_interrupts():
        report = json.loads(
            rtcc.native().relay(
                scenario.text, args.listen, args.to, duration, scenario.source, args.seed, args.peers
            )
        )
    text = json.dumps(report, indent=2)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    if not args.quiet:
        print(text)
    if report.get("error"):
        raise CliError(f"relay stopped early: {report['error']}")
    return 130 if report.get("interrupted") else 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Each file is checked as what it is: a scenario, or a sweep spec (every run's
    scenario); one line per file, ``ok (...)`` or the error."""
    status = 0
    for path_text in args.scenarios:
        try:
            scenario = _read_scenario(path_text)
            data = peek(scenario.text)
            if _is_sweep_spec(data):
                line = _validate_sweep(scenario, path_text)
            else:
                if data and not _SCENARIO_KEYS & data.keys():
                    raise CliError(
                        f"{scenario.source}: neither a scenario (no duration, [link] or "
                        "[[flow]]) nor a sweep spec (no base)"
                    )
                sim = _check_scenario(scenario.text, scenario.source, args.seed)
                flows = data.get("flow", [])
                count = len(flows) if isinstance(flows, list) else 1
                line = (
                    f"{scenario.source}: ok ({data.get('name', scenario.stem)!s}, "
                    f"{sim.duration_s:g} s, {count} flow{'s' if count != 1 else ''})"
                )
        except (ValueError, OSError, CliError) as exc:  # Scenario/SweepError are ValueErrors
            _print_error(exc)
            status = EXIT_USAGE
            continue
        print(line)
    return status


_SCENARIO_KEYS = {"duration", "link", "flow"}


def _is_sweep_spec(data: Mapping[str, Any]) -> bool:
    """A sweep spec names its base scenarios, or has a sweep's axes and no scenario
    fields (a spec missing its base is told so by the spec's own check)."""
    from rtcc.sweepspec import SWEEP_KEYS

    if "base" in data:
        return True
    return bool(SWEEP_KEYS & data.keys()) and not _SCENARIO_KEYS & data.keys()


def _check_scenario(text: str, source: str, seed: int | None) -> Any:
    """The native simulation of a scenario, built (so checked) but not run."""
    from rtcc import media

    media_map = media.scenario_media_map(text, source)
    return rtcc.Simulation(text, source, seed, False, None, None, media_map)


def _validate_sweep(spec_input: ScenarioInput, path_text: str) -> str:
    """Every run of a sweep spec checked as the scenario it runs (runs that differ
    only by seed once); the first refused run as the error, with how many were."""
    from rtcc.scenario import dumps_toml
    from rtcc.sweepspec import load_spec

    source = spec_input.source
    spec = load_spec(spec_input.text if path_text == "-" else Path(path_text), source)
    seen: dict[tuple[str, str], str | None] = {}
    refused, first = 0, ""
    for i, run in enumerate(spec.runs):
        key = (dumps_toml({k: v for k, v in run.scenario.items() if k != "seed"}), run.source)
        if key not in seen:
            try:
                _check_scenario(dumps_toml(run.scenario), run.source, run.seed)
                seen[key] = None
            except (ValueError, OSError) as exc:
                seen[key] = " ".join(str(exc).split())
        if seen[key] is not None:
            refused += 1
            if not first:
                labels = " ".join(f"{k}={v}" for k, v in run.labels.items())
                first = f"run {i} ({labels}): {seen[key]}"
    total = len(spec.runs)
    if refused:
        raise CliError(f"{source}: {refused} of {total} runs refused; the first, {first}")
    return (
        f"{source}: ok (sweep {spec.name}, {total} run{'s' if total != 1 else ''}, "
        f"{len(seen)} distinct scenario{'s' if len(seen) != 1 else ''})"
    )


def cmd_registry(args: argparse.Namespace) -> int:
    # `rtcc controllers` also lists encoders: a flow names both, so users want both.
    sections = {"encoders": rtcc.encoders()}
    if args.command == "controllers":
        from rtcc.pycontrollers import load_entry_points

        load_entry_points()  # installed packages' controllers are listed too
        sections = {"controllers": rtcc.controllers(), **sections}
    if args.json:
        print(json.dumps(sections if len(sections) > 1 else sections["encoders"], indent=2))
        return 0
    blocks = []
    for title, entries in sections.items():
        heading = f"{title} ({'controller' if title == 'controllers' else 'encoder'} = ...)"
        blocks.append(
            f"{heading}\n\n{_registry_text(entries)}"
            if len(sections) > 1
            else _registry_text(entries)
        )
    print("\n\n".join(blocks))
    return 0


def cmd_traces(args: argparse.Namespace) -> int:
    from rtcc.traces import listing

    print(listing(args.what))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.repeat < 1:
        raise CliError("argument --repeat: must be at least 1")
    if args.workload == "flows":
        return _bench_flows(args)
    if args.workload == "tcp":
        return _bench_tcp(args)
    if args.workload == "pyctl":
        return _bench_pyctl(args)
    if args.workload == "gym":
        return _bench_gym(args)
    from rtcc.console import Steps

    workloads = list(BENCH_TARGETS) if args.workload == "all" else [args.workload]
    rows, below = [], []
    codecs = rtcc.native().codecs() if "vp8" in workloads else {}
    for workload in workloads:
        if codecs.get(workload):
            print(f"skipped {workload}: {codecs[workload]}")
    timed = [w for w in workloads if not codecs.get(w)]
    with Steps(True, "bench", len(timed) * args.repeat, unit=" runs") as report:
        for workload in timed:
            runs = []
            for _ in range(args.repeat):
                runs.append(rtcc.bench(workload))
                report.advance()
            best = max(runs, key=lambda r: float(r["speedup"]))
            target = BENCH_TARGETS[workload]
            ok = float(best["speedup"]) >= target
            if not ok:
                below.append(workload)
            rows.append(
                [
                    workload,
                    format_number(best["sim_s"], 1, 0),
                    format_number(best["wall_s"], 1000, 2),
                    format_number(best["speedup"]),
                    format_number(best["packets_per_s"]),
                    format_number(target),
                    "PASS" if ok else "BELOW TARGET",
                ]
            )
    header = ["workload", "sim s", "wall ms", "sim s / wall s", "packets/s", "target", "result"]
    print(table_text(header, rows))
    print(f"best of {args.repeat} run{'s' if args.repeat != 1 else ''} per workload")
    return 1 if (below and args.strict) else 0


def _bench_pyctl(args: argparse.Namespace) -> int:
    from rtcc import benchpy
    from rtcc.console import Steps

    with Steps(True, "bench", 2 * len(benchpy.PAIRS) * args.repeat, unit=" runs") as report:
        rows = benchpy.run(args.repeat, report.advance)
    header = ["controller", "packets", "Rust ms/sim s", "Python ms/sim s", "Rust us/pkt",
              "Python us/pkt", "slowdown", "same rates"]  # fmt: skip
    body = [
        [r["controller"], str(r["packets"]),
         *(format_number(r[k], 1, 2) for k in ("rust_ms_per_sim_s", "python_ms_per_sim_s",
                                              "rust_us_per_packet", "python_us_per_packet")),
         f"{r['slowdown']:.1f}x", "yes" if r["same_rates"] else "NO"]
        for r in rows
    ]  # fmt: skip
    print(table_text(header, body))
    print(f"{benchpy.SCENARIO_TEXT}; best of {args.repeat} run{'s' if args.repeat != 1 else ''}")
    return 0 if all(r["same_rates"] for r in rows) else 1


def _bench_gym(args: argparse.Namespace) -> int:
    try:
        from rtcc import benchgym
    except ImportError as e:  # gymnasium is an extra
        raise CliError(f"--workload gym needs gymnasium (pip install 'rtcc[gym]'): {e}") from None
    from rtcc.console import Steps

    with Steps(True, "bench", args.repeat, unit=" runs") as report:
        rows = benchgym.run(args.repeat, report.advance)
    header = ["way", "steps", "sim s", "wall s", "steps/s", "sim s / wall s", "us/step", "goal", "result"]
    body = []
    for r in rows:
        goal = r["way"] == "env"
        ok = r["steps_per_s"] >= benchgym.GOAL_STEPS_PER_S
        body.append([
            r["way"], str(r["steps"]), format_number(r["sim_s"]), format_number(r["wall_s"], 1, 3),
            format_number(r["steps_per_s"]), format_number(r["real_time_factor"]),
            format_number(r["us_per_step"]),
            format_number(benchgym.GOAL_STEPS_PER_S) if goal else "",
            ("PASS" if ok else "BELOW GOAL") if goal else "",
        ])  # fmt: skip
    print(table_text(header, body))
    env = next(r for r in rows if r["way"] == "env")
    sim = next(r for r in rows if r["way"] == "simulation")
    print(
        f"{benchgym.EPISODES} episodes of {benchgym.DURATION_S:.0f} s (opennetlab traces), a constant "
        f"action, {env['step_ms']:.1f} ms per step; best of {args.repeat} run{'s' if args.repeat != 1 else ''}; "
        f"the environment costs {sim['steps_per_s'] / env['steps_per_s']:.1f}x the simulation alone"
    )
    return 1 if (args.strict and env["steps_per_s"] < benchgym.GOAL_STEPS_PER_S) else 0


def _ns3_script(args: argparse.Namespace, default: Callable[[], Path], what: str) -> Path | None:
    """With --ns3: the reference script (--ns3-script, else ``default()``), which must exist."""
    if not args.ns3:
        return None
    script = Path(args.ns3_script) if args.ns3_script else default()
    if not script.is_file():
        raise CliError(f"{script}: ns-3 {what} script not found (give --ns3-script)")
    return script


def _bench_flows(args: argparse.Namespace) -> int:
    from rtcc import benchflows

    script = _ns3_script(args, benchflows.default_script, "reference")
    try:
        rows = benchflows.run(
            repeat=args.repeat, ns3_python=args.ns3, ns3_script=script, progress=True
        )
    except RuntimeError as e:
        raise CliError(str(e)) from None
    header = ["flows", "wall s", "sim s / wall s", "ns/packet", "cost vs 1 flow", "kB/flow (heap)"]
    if args.ns3:
        header += ["bare ns-3 wall s", "rtcc faster by"]
    table = []
    for r in rows:
        kb = r["heap_per_flow_kb"]
        line = [
            str(r["flows"]),
            format_number(r["wall_s"], 1, 3),
            format_number(r["speedup"]),
            format_number(r["ns_per_packet"]),
            f"{r['cost_ratio']:.2f}x",
            "n/a" if kb is None else format_number(kb),
        ]
        if args.ns3:
            line += [format_number(r["ns3_wall_s"], 1, 3), f"{r['faster_than_ns3']:.1f}x"]
        table.append(line)
    print(table_text(header, table))
    print(
        f"best of {args.repeat} run{'s' if args.repeat != 1 else ''}; N fixed 2.5 Mbps flows, "
        f"3N Mbps / 25 ms, 30 s; target: cost within {benchflows.COST_LIMIT:.0f}x of 1 flow"
    )
    over = [r["flows"] for r in rows if r["cost_ratio"] > benchflows.COST_LIMIT]
    return 1 if (over and args.strict) else 0


def _bench_tcp(args: argparse.Namespace) -> int:
    from rtcc import benchtcp

    script = _ns3_script(args, benchtcp.default_script, "TCP")
    try:
        r = benchtcp.run(repeat=args.repeat, ns3_python=args.ns3, ns3_script=script, progress=True)
    except RuntimeError as e:
        raise CliError(str(e)) from None
    target = BENCH_TARGETS["tcp"]
    ok = r["speedup"] >= target
    header = ["workload", "sim s", "wall s", "sim s / wall s", "target", "result", "goodput Mbps"]
    line = [
        "tcp",
        format_number(r["sim_s"], 1, 0),
        format_number(r["wall_s"], 1, 3),
        format_number(r["speedup"]),
        format_number(target),
        "PASS" if ok else "BELOW TARGET",
        format_number(r["goodput_mbps"], 1, 2),
    ]
    if args.ns3:
        header += ["bare ns-3 wall s", "ns-3 goodput Mbps", "rtcc faster by"]
        line += [
            format_number(r["ns3_wall_s"], 1, 3),
            format_number(r["ns3_goodput_mbps"], 1, 2),
            f"{r['faster_than_ns3']:.1f}x",
        ]
    print(table_text(header, [line]))
    if args.ns3:
        print(table_text(["Cubic", "rtcc", "ns-3"], benchtcp.dynamics_rows(r)))
    print(f"best of {args.repeat} run{'s' if args.repeat != 1 else ''}; {benchtcp.PATH_TEXT}")
    return 1 if (not ok and args.strict) else 0


def _jobs(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid job count {text!r}: not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid job count {value}: must be at least 1")
    return value


def _out_dir(text: str | None, default: Path, flag: str = "--out") -> Path:
    """The results folder, checked writable before any work (not after the runs). A
    refusal names the folder that failed and the system's own reason (a read-only file
    system, no permission), not only the kind of error."""
    out = Path(text) if text else default
    if out.exists() and not out.is_dir():
        raise CliError(f"{flag} {out}: not a directory")
    try:
        check_output_dir(out)
    except OSError as exc:
        failed = os.fsdecode(exc.filename) if exc.filename is not None else str(out)
        if isinstance(exc, NotADirectoryError):
            raise CliError(f"{flag} {out}: {failed} is not a directory") from None
        raise CliError(f"{flag} {out}: {output_dir_refusal(exc, out)}") from None
    return out


def _scheme(f: dict[str, Any]) -> str:
    """A flow's controller, or its kind and congestion control for cross traffic."""
    kind = f.get("kind", "video")
    if kind == "video":
        return str(f.get("controller", "-"))
    direction = " (rev)" if f.get("direction") == "reverse" else ""
    return f"{kind} {f['cc']}{direction}" if f.get("cc") else f"{kind}{direction}"


def _shares(link: dict[str, Any]) -> str:
    """Each kind's share of a link, when more than video uses it."""
    by_kind = link.get("utilization_by_kind") or {}
    used = {k: v for k, v in by_kind.items() if v > 0}
    if set(used) <= {"video", "feedback"}:
        return ""
    return " (" + ", ".join(f"{k} {format_number(v, 100, 1)} %" for k, v in used.items()) + ")"


def cmd_fairness(args: argparse.Namespace) -> int:
    from rtcc.result import Result

    try:
        result = Result.load(args.results)
    except ValueError as e:
        raise CliError(str(e)) from None
    try:
        flows = [f.strip() for f in args.flows.split(",")] if args.flows is not None else None
        if flows is not None and not all(flows):
            raise ValueError(f"--flows {args.flows!r}: give flow names separated by commas")
        index = result.jain(flows=flows, start=args.start, end=args.end, metric=args.metric)
    except ValueError as e:  # about this run: name it
        raise CliError(f"{args.results}: {e}") from None
    window = f"{args.start if args.start is not None else 0:g} s to " + (
        f"{args.end:g} s" if args.end is not None else "the end"
    )
    who = ", ".join(flows) if flows else "all flows"
    # One window shared by all flows (not the summary's per-flow active time).
    print(f"Jain's index of {args.metric} over one window ({who}; {window}): {index:.4f}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from rtcc import sweeprun
    from rtcc.sweepspec import load_spec

    if args.max_runs < 1:
        raise CliError("argument --max-runs: must be at least 1")
    where = _where(args)
    # A Path: never mistaken for TOML text. The spec's name is file-name safe (checked).
    spec = load_spec(Path(args.spec), max_runs=args.max_runs)
    out = _out_dir(args.out, Path("results") / spec.name)
    table = sweeprun.sweep(
        spec, out=out, jobs=args.jobs, progress=not args.quiet, fresh=args.fresh, **where
    )
    if not args.quiet:
        print(sweeprun.summary_text(table))
        attrs = table.attrs
        print(
            f"{len(spec.runs)} runs: {attrs['executed']} simulated, {attrs['cached']} cached, "
            f"{attrs['failed']} failed in {attrs['wall_s']:.1f} s"
        )
        print(f"table: {out / 'table.csv'}")
        print(f"dataset: {attrs['dataset']} ({attrs['appended']} rows added)")
    return 0


def _where(args: argparse.Namespace) -> dict[str, Any]:
    """Where runs execute and where they are appended: --executor, --address, --dataset."""
    if args.address is not None and args.executor != "ray":
        raise CliError("--address: a Ray cluster's address goes with --executor ray")
    if args.dataset is not None:
        _out_dir(args.dataset, Path(args.dataset), "--dataset")
    return {"executor": args.executor, "address": args.address, "dataset": args.dataset}


def cmd_query(args: argparse.Namespace) -> int:
    from rtcc import dataset

    where = args.dataset or dataset.DEFAULT
    if not args.dataset and not Path(dataset.DEFAULT).is_dir():
        raise CliError(
            f"no results dataset here (no ./{dataset.DEFAULT} folder); run it from the folder "
            "holding results/, or pass --dataset DIR"
        )
    if not args.dataset:
        try:
            dataset.find(where)
        except dataset.DatasetError as exc:
            raise CliError(f"{exc}; or pass --dataset DIR") from None
    # Ctrl-C interrupts DuckDB (KeyboardInterrupt: main prints one line, exit 130).
    frame = dataset.query(args.sql, where, out=args.out)
    if args.out is not None:
        if not args.quiet:
            print(f"result: {args.out} ({len(frame)} row{'s' if len(frame) != 1 else ''})")
    elif args.csv:
        # Escaped for a terminal only: a pipe gets the values as they are.
        print(dataset.format_csv(frame, terminal=sys.stdout.isatty()), end="")
    else:
        print(dataset.format_frame(frame))
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    _where(args)  # the flags are checked before any folder is looked at
    if args.scheme and args.experiment not in ("dumbo", "cross"):
        raise CliError("--scheme: only 'rtcc reproduce dumbo' and 'rtcc reproduce cross' take it")
    if args.experiment == "all":
        return _reproduce_all(args)
    if args.no_vp8 and args.experiment != "burstrtc":
        raise CliError("--no-vp8: only 'rtcc reproduce burstrtc' takes it")
    if args.experiment == "cross":
        return _reproduce_cross(args)
    if args.experiment == "pibes":
        return _reproduce_pibes(args)
    if args.experiment == "burstrtc":
        return _reproduce_burstrtc(args)
    if args.experiment == "fbra":
        return _reproduce_fbra(args)
    from rtcc.reproduce import dumbo

    _probe_schemes(args, dumbo)
    started = time.perf_counter()
    out = _out_dir(args.out, Path("results") / f"reproduce-{args.experiment}")
    with _reproduction_lock(out, "dumbo"):
        outcome = dumbo.run(
            out, args.traces, args.jobs, short=args.short, direction=args.direction,
            fresh=args.fresh, progress=not args.quiet, encoder=args.encoder,
            schemes=args.scheme, **_where(args),
        )  # fmt: skip
    wall = time.perf_counter() - started
    if not args.quiet:
        print(dumbo.summary_text(outcome.table))
        if not outcome.traces:
            print(f"cellular traces skipped: {outcome.traces_note}")
        for scheme, why in outcome.skipped.items():
            print(f"skipped {scheme}: {why}")
        print(f"results: {out} (table.csv, runs.csv, report.html)")
        print(_dataset_line(args, out, outcome))
        print(f"wall time: {wall:.1f} s")
    return 0


def _probe_schemes(args: argparse.Namespace, paper: Any) -> None:
    for name in args.scheme:  # a typo is refused, not skipped after the run
        if (why := paper.probe(paper.Scheme(name, name))) is not None:
            raise CliError(f"--scheme {name}: {why}")


def _reproduction_lock(out: Path, name: str) -> Any:
    """Held while a reproduction writes into ``out``: a second one (or a sweep) is refused."""
    from rtcc.reproduce.index import lock

    return lock(out, name)


def _dataset_line(args: argparse.Namespace, out: Path, outcome: Any) -> str:
    """Where a reproduction's runs were appended, and how many rows this call added."""
    added = sum(r.appended for r in outcome.results.values())
    return f"dataset: {args.dataset or out / 'dataset'} ({added} rows added)"


def cmd_report(args: argparse.Namespace) -> int:
    from rtcc.comparison import OptionError, compare

    metrics = None
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",")]
        if not all(metrics):
            raise CliError(f"--metrics {args.metrics!r}: give metric names separated by commas")
    try:
        page = compare(
            args.folders, args.out, series=args.series, metrics=metrics, delay=args.delay,
            rate=args.rate, pool=args.pool, title=args.title, pool_traces=args.pool_traces,
        )  # fmt: skip
    except OptionError as exc:
        raise CliError(f"--{exc.option}: {exc.reason}") from None
    if not args.quiet:
        print(f"report: {args.out} ({len(page.encode('utf-8')):,} bytes)")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    if args.content:
        return _calibrate_content(args)
    if args.seconds is not None:
        raise CliError("--seconds applies to --content")
    from rtcc.calibrate import calibrate

    available = rtcc.native().codecs()
    codecs = ["vp8", "h264"] if args.codec == "all" else [args.codec]
    for c in codecs:
        if available.get(c):
            raise CliError(f"--codec {c}: {available[c]}")
    out = _out_dir(args.out, Path("results") / "calibration")
    started = time.perf_counter()
    log = (lambda _m: None) if args.quiet else print
    command = "rtcc calibrate-encoder" + (" --short" if args.short else "")
    calibrate(codecs, out, short=args.short, log=log, command=command, progress=not args.quiet)
    if not args.quiet:
        print(
            f"results: {out} ({', '.join(f'profile-{c}.toml' for c in codecs)}, "
            "calibration.json, plots)"
        )
        print(f"wall time: {time.perf_counter() - started:.1f} s")
    return 0


def _calibrate_content(args: argparse.Namespace) -> int:
    from rtcc.calibrate_content import calibrate_content, x264_available

    if args.codec != "all":
        raise CliError("--codec does not apply to --content (it measures x264)")
    why = x264_available()
    if why:
        raise CliError(f"--content measures x264 through PyAV: {why}")
    out = _out_dir(args.out, Path("results") / "calibration")
    started = time.perf_counter()
    log = (lambda _m: None) if args.quiet else print
    command = "rtcc calibrate-encoder --content" + (" --short" if args.short else "")
    if args.seconds is not None:
        command += f" --seconds {args.seconds:g}"
    calibrate_content(
        out, short=args.short, seconds=args.seconds, log=log, command=command,
        progress=not args.quiet,
    )  # fmt: skip
    if not args.quiet:
        print(
            f"results: {out} (profile-content-static.toml, profile-content-dynamic.toml, "
            "content.json, content_variation.png)"
        )
        print(f"wall time: {time.perf_counter() - started:.1f} s")
    return 0


def _window_time(text: str) -> float:
    """A `rtcc fairness` window bound in seconds ("20s", "1min"; a bare number is seconds)."""
    from rtcc.result import window_seconds

    try:
        seconds = window_seconds(text, "time")
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a duration such as \"20s\", \"1min\" or a number of seconds"
        ) from None
    assert seconds is not None
    return seconds


def _calibration_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not 4 <= v <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is outside 4..3600 seconds")
    return v


def _run_arguments(p: argparse.ArgumentParser, default_out: str) -> None:
    """What `run` and `live` both take: the scenario, --out, --seed, --no-plots."""
    p.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="scenario TOML file ('-' for stdin; default: the built-in demo)",
    )
    p.add_argument("--out", metavar="DIR", help=f"results folder (default: {default_out})")
    p.add_argument("--seed", type=_seed, metavar="N", help="override the scenario's seed")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rtcc", description="Congestion-control workbench for real-time video.")
    parser.add_argument("--version", action="version", version=f"rtcc {rtcc.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run a scenario and write a results folder")
    _run_arguments(run, "results/<scenario name>")
    run.add_argument(
        "--save-video",
        action="store_true",
        help="write <flow>.received.mp4 and <flow>.side_by_side.mp4 for real-codec flows",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    run.set_defaults(func=cmd_run)

    lv = sub.add_parser(
        "live",
        help="run a scenario's video and UDP flows on UDP sockets (and its TCP and web flows as "
        "the kernel's TCP) in real time through rtcc's emulated bottleneck, and write the same "
        "results folder as 'run'",
    )
    _run_arguments(lv, "results/<scenario name>-live")
    lv.add_argument(
        "--compare",
        action="store_true",
        help="also simulate the scenario with the same seed and print both side by side "
        "(written as sim_vs_live.csv)",
    )
    lv.add_argument(
        "--bottleneck",
        choices=("auto", "udp", "tun"),
        default="auto",
        help="udp: the emulator on two loopback UDP sockets (no privilege); tun: between two "
        "TUN devices in network namespaces of the run's own (root), carrying kind = \"tcp\" "
        "flows as the kernel's TCP; auto (default): tun when the scenario has TCP flows",
    )
    lv.add_argument(
        "--tun-fallback",
        action="store_true",
        help="where TUN is wanted and not available, run on udp without the TCP flows "
        "(named in the summary) instead of refusing",
    )
    lv.add_argument(
        "--peer",
        choices=("gstreamer",),
        default=None,
        help="another implementation as every video flow's receiving end: gstreamer (its RTP "
        "stack decodes VP8 and sends RR, NACK, PLI and transport-wide feedback; needs "
        "gstreamer1.0-plugins-good and python3-gst-1.0)",
    )
    lv.add_argument(
        "--peer-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a peer setting (repeatable); gstreamer: latency=MS (its jitter buffer, 200 by "
        "default), rtcp-interval=MS (between its receiver reports, 1000 by default), "
        "twcc-interval=MS (between its transport-wide feedback reports, 100 by default; 0: one "
        "per frame, GStreamer's own rule), request-keyframe=true|false (a PLI on a loss it "
        "cannot repair and once at the start; true by default) or any "
        "rtpjitterbuffer property, e.g. rtx-next-seqnum=false",
    )
    lv.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    lv.set_defaults(func=cmd_live)

    rl = sub.add_parser(
        "relay",
        help="relay UDP between two addresses through a scenario's [link], in real time",
    )
    rl.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="scenario TOML file whose [link] is emulated (default: the built-in demo's)",
    )
    rl.add_argument(
        "--listen",
        default="127.0.0.1:5004",
        metavar="ADDR:PORT",
        help="where the sending side sends (default 127.0.0.1:5004; loopback unless told)",
    )
    rl.add_argument(
        "--to", required=True, metavar="ADDR:PORT", help="the receiving side's address"
    )
    rl.add_argument(
        "--duration", required=True, metavar="TIME", help="how long it runs, e.g. 60s or 5min"
    )
    rl.add_argument(
        "--peers",
        type=_peers,
        default=16,
        metavar="N",
        help="pairs of ends served, 1-1024 (default 16)",
    )
    rl.add_argument("--seed", type=_seed, metavar="N", help="override the scenario's seed")
    rl.add_argument("--report", metavar="FILE", help="also write the counts as JSON to FILE")
    rl.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    rl.set_defaults(func=cmd_relay)

    cal = sub.add_parser(
        "calibrate-encoder",
        help="measure the real encoders (step response, frame sizes, rate-quality); write profiles",
    )
    cal.add_argument("--codec", choices=["vp8", "h264", "all"], default="all")
    cal.add_argument("--out", metavar="DIR", help="results folder (default: results/calibration)")
    cal.add_argument(
        "--short", action="store_true", help="shorter clips and fewer points (for tests)"
    )
    cal.add_argument(
        "--content",
        action="store_true",
        help="measure x264 on static and dynamic content and fit the content model's profiles",
    )
    cal.add_argument(
        "--seconds",
        type=_calibration_seconds,
        metavar="S",
        help="--content: seconds of each profile's content (default 120, --short 12)",
    )
    cal.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    cal.set_defaults(func=cmd_calibrate)

    validate = sub.add_parser(
        "validate", help="check scenarios or sweep specs (every run) without running them"
    )
    validate.add_argument("scenarios", nargs="+", metavar="SCENARIO", help="scenario or sweep spec")
    validate.add_argument("--seed", type=_seed, metavar="N", help=argparse.SUPPRESS)
    validate.set_defaults(func=cmd_validate)

    for name, what in (
        ("controllers", "congestion controllers (and encoder models)"),
        ("encoders", "encoder models"),
    ):
        reg = sub.add_parser(name, help=f"list {what} and their parameters")
        reg.add_argument("--json", action="store_true", help="print JSON")
        reg.set_defaults(func=cmd_registry)

    traces = sub.add_parser(
        "traces", help="list the bundled trace sets, or one set's (or folder's) traces"
    )
    traces.add_argument(
        "what", nargs="?", metavar="SET|PATH",
        help="a bundled set's name, a folder of trace files or of sets, or one trace file",
    )  # fmt: skip
    traces.set_defaults(func=cmd_traces)

    bench = sub.add_parser("bench", help="measure simulator speed against the targets")
    bench.add_argument(
        "--workload",
        choices=[*BENCH_TARGETS, "all", "flows", "pyctl", "gym"],
        default="all",
        help="a single-flow workload (tcp: one Cubic TCP flow on 10 Mbps / 20 ms), all of "
        "them, 'flows': 1-1000 flows sharing a link, 'pyctl': controllers in Python "
        "against the same in Rust, or 'gym': steps per second of rtcc.gym",
    )
    bench.add_argument(
        "--ns3",
        metavar="PYTHON",
        help="with --workload flows or tcp: a Python that has the ns3 wheel; bare ns-3 runs "
        "the same work in the same run",
    )
    bench.add_argument(
        "--ns3-script",
        metavar="FILE",
        help="the ns-3 reference script (default: the repository's scripts/ns3_multiflow_udp.py "
        "for flows, scripts/ns3_tcp.py for tcp)",
    )
    bench.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="runs per workload; the best counts (default 3)",
    )
    bench.add_argument(
        "--strict", action="store_true", help="exit 1 when a workload is below its target"
    )
    bench.set_defaults(func=cmd_bench)

    fair = sub.add_parser(
        "fairness",
        help="Jain's fairness index of chosen flows over one time window shared by all of them",
    )
    fair.add_argument("results", metavar="DIR", help="a results folder written by 'rtcc run'")
    fair.add_argument("--flows", metavar="A,B", help="flow names, comma-separated (default: all)")
    fair.add_argument(
        "--from", dest="start", type=_window_time, metavar="T",
        help='window start: "20s", "1min", ... (a bare number is seconds)',
    )  # fmt: skip
    fair.add_argument(
        "--to", dest="end", type=_window_time, metavar="T",
        help='window end: "90s", "2min", ... (a bare number is seconds)',
    )  # fmt: skip
    fair.add_argument(
        "--metric",
        default="goodput_kbps",
        help="time-series column to compare (default goodput_kbps)",
    )
    fair.set_defaults(func=cmd_fairness)

    sweep = sub.add_parser("sweep", help="run a sweep spec on a process pool, cached per run")
    sweep.add_argument("spec", metavar="SPEC", help="sweep spec TOML file")
    sweep.add_argument("--out", metavar="DIR", help="results folder (default: results/<spec name>)")
    sweep.add_argument(
        "--jobs", "-j", type=_jobs, metavar="N", help="worker processes (default: CPU count)"
    )
    sweep.add_argument("--fresh", action="store_true", help="recompute runs already cached")
    sweep.add_argument(
        "--max-runs",
        type=int,
        default=MAX_RUNS,
        metavar="N",
        help=f"refuse a spec that expands to more runs (default {MAX_RUNS:,})",
    )
    sweep.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    _executor_flags(sweep)
    sweep.set_defaults(func=cmd_sweep)

    repro = sub.add_parser("reproduce", help="re-run a paper's experiments and compare")
    repro.add_argument(
        "experiment", choices=["dumbo", "cross", "pibes", "burstrtc", "fbra", "all"],
        metavar="EXPERIMENT", help="dumbo, cross, pibes, burstrtc, fbra, or all of them",
    )  # fmt: skip
    repro.add_argument(
        "--traces", metavar="SET|DIR",
        help="where the traces are (default: the bundled sets, see 'rtcc traces'): a bundled "
        "set's name, a folder of sets, or a folder of trace files; dumbo replays the mahimahi "
        "set, pibes pensieve-norway/norway_bus_1, burstrtc mahimahi/TMobile-LTE-driving.down",
    )  # fmt: skip
    repro.add_argument(
        "--out", metavar="DIR", help="results folder (default: results/reproduce-<experiment>)"
    )
    repro.add_argument(
        "--jobs", "-j", type=_jobs, metavar="N", help="worker processes (default: CPU count)"
    )
    repro.add_argument("--short", action="store_true", help="shortened runs (for tests)")
    repro.add_argument(
        "--encoder",
        choices=["lagging", "vp8", "h264"],
        default="lagging",
        help="video encoder: the lagging model with the thesis's lag (default), or a real codec",
    )
    repro.add_argument(
        "--direction", choices=["down", "up", "all"], default="down",
        help="which trace files: .down (default), .up or both",
    )  # fmt: skip
    repro.add_argument(
        "--scheme", action="append", default=[], metavar="CONTROLLER",
        help="dumbo, cross: also run this controller (repeatable; py:module:Class for one in "
        "Python)",
    )  # fmt: skip
    repro.add_argument(
        "--no-vp8", action="store_true",
        help="burstrtc: leave out the dynamic-content runs with real VP8",
    )  # fmt: skip
    repro.add_argument("--fresh", action="store_true", help="recompute runs already cached")
    repro.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    _executor_flags(repro)
    repro.set_defaults(func=cmd_reproduce)

    from rtcc.rfc8867.command import add_parser as add_rfc8867

    add_rfc8867(sub, _jobs, _executor_flags)

    rep = sub.add_parser(
        "report", help="compare the runs of sweeps and reproductions on one interactive page"
    )
    rep.add_argument(
        "folders", nargs="+", metavar="DIR",
        help="results folders written by rtcc sweep, reproduce or run ('reproduce all': "
        "each paper's)",
    )  # fmt: skip
    rep.add_argument(
        "--out", metavar="FILE", default="comparison.html",
        help="the HTML page to write (default: comparison.html)",
    )  # fmt: skip
    rep.add_argument(
        "--series", nargs="+", metavar="RUN",
        help="runs whose time series to show, by key or a unique prefix of one (default: the "
        "first run of each scheme)",
    )  # fmt: skip
    rep.add_argument(
        "--metrics", metavar="A,B",
        help="the table's and boxes' metrics, summary columns separated by commas",
    )  # fmt: skip
    rep.add_argument(
        "--delay", metavar="METRIC", help="the scatter's delay axis (default owd_ms_p95)"
    )
    rep.add_argument(
        "--rate", metavar="METRIC", help="the scatter's rate axis (default utilization)"
    )
    rep.add_argument(
        "--pool", action="store_true",
        help="pool experiments of the same name from several folders (default: kept apart)",
    )  # fmt: skip
    rep.add_argument(
        "--pool-traces", action="store_true",
        help="pool an experiment's traces in one panel (default: one panel per trace)",
    )  # fmt: skip
    rep.add_argument(
        "--title", metavar="TEXT",
        help="the page's heading (default: the sweeps' or studies' names)",
    )  # fmt: skip
    rep.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    rep.set_defaults(func=cmd_report)
    query = sub.add_parser("query", help="run DuckDB SQL over the results dataset")
    query.add_argument(
        "sql", metavar="SQL", help="a query over the views runs and timeseries (see README)"
    )
    query.add_argument(
        "--dataset", metavar="DIR", action="append",
        help="a dataset, or a folder searched for datasets (repeatable; default: results)",
    )  # fmt: skip
    query.add_argument(
        "--csv", action="store_true",
        help="print CSV instead of a table (control characters escaped on a terminal only)",
    )  # fmt: skip
    query.add_argument(
        "--out", metavar="FILE",
        help="write the result to FILE (.csv or .parquet) instead of printing it; the only "
        "file a query writes",
    )  # fmt: skip
    query.add_argument("--quiet", "-q", action="store_true", help="with --out: print nothing")
    query.set_defaults(func=cmd_query)
    # What a bare `rtcc` lists: every command, as registered here.
    parser.set_defaults(commands=tuple(sub.choices))
    return parser


def _executor_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor", choices=["local", "ray"], default="local",
        help="where runs execute: a local process pool (default) or a Ray cluster",
    )  # fmt: skip
    parser.add_argument(
        "--address", metavar="ADDR",
        help="with --executor ray: the cluster's HOST:PORT (default: RAY_ADDRESS, a cluster "
        "started here with 'ray start', else a new local one)",
    )  # fmt: skip
    parser.add_argument(
        "--dataset", metavar="DIR",
        help="append the runs to this results dataset (default: OUT/dataset)",
    )  # fmt: skip


def _reproduce_cross(args: argparse.Namespace) -> int:
    from rtcc.reproduce import cross

    # The Cross experiments run on modelled links with the paper's encoder, not traces.
    if args.traces is not None:
        raise CliError("--traces: 'rtcc reproduce cross' runs no traces")
    _refuse_dumbo_flags(args, scheme=False)
    _probe_schemes(args, cross)
    return _reproduce_paper(args, "cross", cross, schemes=args.scheme)


def _refuse_dumbo_flags(args: argparse.Namespace, scheme: bool = True) -> None:
    for flag, value, default in (
        ("--encoder", args.encoder, "lagging"), ("--direction", args.direction, "down"),
        ("--scheme", args.scheme if scheme else [], []),
    ):  # fmt: skip
        if value != default:
            raise CliError(f"{flag}: only 'rtcc reproduce dumbo' takes it")


def _traces_holding(args: argparse.Namespace, needed: Any) -> str | None:
    """``--traces`` (None: the bundled sets), refused at once when the trace ``needed``
    (a :class:`rtcc.reproduce.traces.Need`) is not there, even by a variant that skips it."""
    needed.locate(args.traces)
    return args.traces


def _print_outcome(
    args: argparse.Namespace,
    text: str,
    outcome: Any,
    out: Path,
    files: str,
    started: float,
) -> None:
    """What a reproduction prints unless --quiet: its summary, what it skipped and where
    its results and runs are."""
    wall = time.perf_counter() - started
    if not args.quiet:
        print(text)
        for what, why in outcome.skipped.items():
            print(f"skipped {what}: {why}")
        print(f"results: {out} ({files})")
        print(_dataset_line(args, out, outcome))
        print(f"wall time: {wall:.1f} s")


def _reproduce_paper(
    args: argparse.Namespace,
    name: str,
    paper: Any,
    files: str = "table.csv, runs.csv, report.html",
    **extra: Any,
) -> int:
    """``paper.run`` (a reproduction package) into --out (default results/reproduce-NAME)
    with the common flags and ``extra``; prints its outcome."""
    started = time.perf_counter()
    out = _out_dir(args.out, Path("results") / f"reproduce-{name}")
    with _reproduction_lock(out, name):
        outcome = paper.run(
            out, args.jobs, short=args.short, fresh=args.fresh, progress=not args.quiet,
            **extra, **_where(args),
        )  # fmt: skip
    _print_outcome(args, paper.summary_text(outcome.table), outcome, out, files, started)
    return 0


def _reproduce_pibes(args: argparse.Namespace) -> int:
    from rtcc.reproduce import pibes

    _refuse_dumbo_flags(args)
    traces = _traces_holding(args, pibes.NORWAY)
    return _reproduce_paper(args, "pibes", pibes, traces=traces)


def _reproduce_burstrtc(args: argparse.Namespace) -> int:
    from rtcc.reproduce import burstrtc

    _refuse_dumbo_flags(args)
    traces = _traces_holding(args, burstrtc.TRACE)
    vp8 = False if args.no_vp8 else None
    return _reproduce_paper(args, "burstrtc", burstrtc, traces=traces, vp8=vp8)


def _reproduce_fbra(args: argparse.Namespace) -> int:
    from rtcc.reproduce import fbra

    # FBRA's experiments run on modelled links and its own frame model, not traces.
    _refuse_dumbo_flags(args)
    if args.traces is not None:
        raise CliError("--traces: 'rtcc reproduce fbra' runs no traces")
    files = "table.csv, summary.csv, runs.csv, report.html"
    return _reproduce_paper(args, "fbra", fbra, files)


def _reproduce_all(args: argparse.Namespace) -> int:
    from rtcc.reproduce import index

    index.check_traces(args.traces, args.direction)
    started = time.perf_counter()
    out = _out_dir(args.out, Path("results") / "reproduce-all")

    def show(entry: index.Entry) -> None:
        if not args.quiet:
            print(f"== {entry.name} ({entry.wall_s:.1f} s)\n{entry.summary}")
            for what, why in entry.skipped.items():
                print(f"skipped {what}: {why}")

    with _reproduction_lock(out, "all"):
        index.run_all(
            out, args.jobs, short=args.short, fresh=args.fresh, progress=not args.quiet,
            traces=args.traces, encoder=args.encoder, direction=args.direction,
            vp8=False if args.no_vp8 else None, on_paper=show, **_where(args),
        )  # fmt: skip
    if not args.quiet:
        print(f"results: {out} ({index.PAGE}, one folder per paper)")
        print(f"dataset: {args.dataset or out / 'dataset'}")
        print(f"wall time: {time.perf_counter() - started:.1f} s")
    return 0


def _print_error(exc: BaseException) -> None:
    from rtcc.console import print_error

    if isinstance(exc, OSError) and exc.filename is not None:
        reason = {
            FileNotFoundError: "no such file",
            IsADirectoryError: "is a directory",
            PermissionError: "permission denied",
            NotADirectoryError: "not a directory",
            FileExistsError: "already exists",
        }.get(type(exc), exc.strerror or str(exc))
        message = f"{os.fsdecode(exc.filename)}: {reason}"
    else:
        message = str(exc)
    print_error(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rtcc`` script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise CliError(f"missing command ({', '.join(args.commands)}); see 'rtcc --help'")
        return int(args.func(args))
    except KeyboardInterrupt:
        from rtcc.console import print_error

        print_error("interrupted", prefix="rtcc: ")
        return 130
    except BrokenPipeError:
        # Output piped into `head`: stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (CliError, ValueError, OSError, ImportError) as exc:
        # ScenarioError is a ValueError; OSError covers missing/unreadable files.
        if os.environ.get("RTCC_DEBUG"):
            raise
        _print_error(exc)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
