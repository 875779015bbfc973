"""The test cases of RFC 8867 §5 and the cellular cases of RFC 8869 §2 as rtcc scenarios.

Each case's parameters are the RFC's (section cited beside each); a capacity in Mbps is
decimal: a case's capacity is its "path capacity ratio" times its "reference bottleneck
capacity" (RFC 8867 §4.2). Queues are given as the RFCs give them, in ms at the bottleneck rate (drop-tail of
that much link time). ``short`` keeps every case's shape and cuts its duration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "Case", "build", "scenarios"]

DELAY_MS = 50  # RFC 8867 §4.2: one-way propagation delay 50 ms (§5.5 sets its own)
QUEUE_MS = 300  # RFC 8867 §4.2: tail-drop bottleneck queue of 300 ms
# RFC 8867 §4.2: at most 30 ms end-to-end jitter, modelled as RFC 8868 §4.5 says: no
# reordering (NR-BPDV), |N(0, std²)| with std = 5 ms (§4.5.3; its 3·std bound, 15 ms each
# way, is the 30 ms round trip). rtcc's path jitter is that half-normal, never reordering.
JITTER_MS = 5
# RFC 8867 §4.3 media source: bit rate range 150 kbps - 1.5 Mbps, startup rate 150 kbps.
# The range is also a controller's RMIN/RMAX (RFC 8698 §4.3 takes them from the codec).
MIN_KBPS, MAX_KBPS, START_KBPS = 150, 1500, 150
# RFC 8867 §5.6, §5.7: "default TCP congestion control [RFC5681]", i.e. NewReno.
TCP_CC = "reno"
# RFC 8869 §2.1.1-2.1.2: the wired part adds 10 ms one way and the end-to-end RTT is
# [40 ms, 150 ms]; with a trace (no radio delay of its own) 20 ms each way gives 40 ms.
CELL_DELAY_MS = 20
# A queue given in time is sized at the capacity in force, so on a trace link it holds one
# packet whenever the trace has no delivery opportunity and drops the rest: losses no
# congestion caused. The cellular cases' queue is RFC 8867 §4.2's 300 ms at the trace's
# mean rate instead (`rtcc traces mahimahi`: 12.77 and 5.03 Mbps), in bytes.
SHORT_SCALE = 0.2  # --short: every time (schedule, start, stop, duration) times this


@dataclass(frozen=True)
class Case:
    """One test case: its id (``5.1``), RFC section, title, link, media flows (start, stop,
    extra one-way delay) and cross traffic; times in seconds, rates in kbps."""

    id: str
    section: str
    title: str
    duration_s: float
    capacity: Sequence[tuple[float, float]] | Mapping[str, Any]  # steps, or a trace table
    media: Sequence[tuple[float, float | None, float]]  # (start, stop, access delay ms)
    delay_ms: float = DELAY_MS
    queue_ms: float = QUEUE_MS
    reverse_capacity: Sequence[tuple[float, float]] | None = None
    reverse_media: int = 0
    tcp_long: int = 0
    web: int = 0
    web_on: int = 0
    pause: tuple[int, float, float] | None = None  # (media flow index, pause s, resume s)
    changes: Sequence[float] = field(default_factory=tuple)  # capacity-change instants
    queue_kb: float | None = None  # a queue in kB instead of ``queue_ms`` (trace links)


def _steps(pairs: Sequence[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    return tuple((float(t), float(k)) for t, k in pairs)


CASES: dict[str, Case] = {c.id: c for c in (
    # §5.1: 1 → 2.5 → 0.6 → 1 Mbps at 40/60/80 s, 100 s, one flow 0-99 s.
    Case("5.1", "RFC 8867 §5.1", "variable available capacity, one flow", 100,
         _steps([(0, 1000), (40, 2500), (60, 600), (80, 1000)]), [(0, 99, 0)],
         changes=(40, 60, 80)),
    # §5.1 also asks for the same at 100 ms one-way.
    Case("5.1-100", "RFC 8867 §5.1", "variable available capacity, one flow, 100 ms", 100,
         _steps([(0, 1000), (40, 2500), (60, 600), (80, 1000)]), [(0, 99, 0)],
         delay_ms=100, changes=(40, 60, 80)),
    # §5.2: 4 → 2 → 3.5 → 1 → 2 Mbps at 25/50/75/100 s, 125 s, two flows from 0 s.
    Case("5.2", "RFC 8867 §5.2", "variable available capacity, two flows", 125,
         _steps([(0, 4000), (25, 2000), (50, 3500), (75, 1000), (100, 2000)]),
         [(0, 124, 0), (0, 124, 0)], changes=(25, 50, 75, 100)),
    # §5.3: forward 2 → 1 → 0.5 → 2 Mbps at 20/40/60 s; backward 2 → 0.8 → 2 Mbps at
    # 35/70 s; one media flow each way, whose feedback crosses the other's bottleneck.
    Case("5.3", "RFC 8867 §5.3", "congested feedback link, bi-directional media", 100,
         _steps([(0, 2000), (20, 1000), (40, 500), (60, 2000)]), [(0, 99, 0)],
         reverse_capacity=_steps([(0, 2000), (35, 800), (70, 2000)]), reverse_media=1,
         changes=(20, 40, 60)),
    # §5.4: three flows of one algorithm on 3.5 Mbps, starting at 0/20/40 s, to 119 s.
    Case("5.4", "RFC 8867 §5.4", "competing media flows, same algorithm", 120,
         _steps([(0, 3500)]), [(0, 119, 0), (20, 119, 0), (40, 119, 0)]),
    # §5.5: five flows on 4 Mbps, one-way delays 10/25/50/100/150 ms, starting 10 s apart.
    Case("5.5", "RFC 8867 §5.5", "round-trip-time fairness", 300, _steps([(0, 4000)]),
         [(0, 299, 0), (10, 299, 15), (20, 299, 40), (30, 299, 90), (40, 299, 140)],
         delay_ms=10),
    # §5.6: one media flow (5-119 s) against one long TCP flow (0-119 s) on 2 Mbps; the
    # RFC asks for queues of 300 ms and 1000 ms: two cases.
    Case("5.6", "RFC 8867 §5.6", "media against a long TCP flow (300 ms queue)", 120,
         _steps([(0, 2000)]), [(5, 119, 0)], tcp_long=1),
    Case("5.6-1000", "RFC 8867 §5.6", "media against a long TCP flow (1000 ms queue)", 120,
         _steps([(0, 2000)]), [(5, 119, 0)], tcp_long=1, queue_ms=1000),
    # §5.7: two media flows (5-299 s) against 10 short TCP flows on 2 Mbps, 300 s; the
    # short flows follow RFC 8868 §5.1 (30-50 kB, exponential 10 s idle), two on at start.
    Case("5.7", "RFC 8867 §5.7", "media against short TCP flows", 300, _steps([(0, 2000)]),
         [(5, 299, 0), (5, 299, 0)], web=10, web_on=2),
    # §5.8: §5.4's three flows, all from 0 s; the second pauses at 40 s and resumes at 60 s.
    Case("5.8", "RFC 8867 §5.8", "media pause and resume", 120, _steps([(0, 3500)]),
         [(0, 119, 0), (0, 119, 0), (0, 119, 0)], pause=(1, 40, 60)),
    # RFC 8869 §2: cellular. Its radio model cannot be run here; a measured LTE downlink
    # (bundled Mahimahi traces) stands for the varying cellular capacity, one media flow.
    Case("8869-2-driving", "RFC 8869 §2", "cellular, LTE driving trace", 120,
         {"kind": "trace", "set": "mahimahi", "file": "TMobile-LTE-driving.down"},
         [(0, None, 0)], delay_ms=CELL_DELAY_MS, queue_kb=0.3 * 12770 / 8),
    Case("8869-2-short", "RFC 8869 §2", "cellular, LTE short trace", 120,
         {"kind": "trace", "set": "mahimahi", "file": "Verizon-LTE-short.down"},
         [(0, None, 0)], delay_ms=CELL_DELAY_MS, queue_kb=0.3 * 5030 / 8),
)}  # fmt: skip


_RATES = {"min_rate": f"{MIN_KBPS}kbps", "max_rate": f"{MAX_KBPS}kbps",
          "start_rate": f"{START_KBPS}kbps"}


def _capacity(cap: Any, scale: float) -> Any:
    if isinstance(cap, Mapping):
        return dict(cap)
    steps = [[f"{t * scale:g}s", f"{k:g}kbps"] for t, k in cap]
    return {"kind": "step", "steps": steps} if len(steps) > 1 else steps[0][1]


def _t(x: float, scale: float) -> str:
    return f"{x * scale:g}s"


def build(case: Case, controller: str, seed: int = 1, short: bool = False) -> dict[str, Any]:
    """The scenario table of ``case`` with every media flow on ``controller``."""
    s = SHORT_SCALE if short else 1.0
    link: dict[str, Any] = {
        "capacity": _capacity(case.capacity, s), "delay": f"{case.delay_ms:g}ms",
        "queue": f"{case.queue_kb:.0f}kB" if case.queue_kb else f"{case.queue_ms:g}ms",
        "jitter": f"{JITTER_MS:g}ms",
    }  # fmt: skip
    if case.reverse_capacity is not None:
        link["reverse_capacity"] = _capacity(case.reverse_capacity, s)
        link["reverse_queue"] = f"{case.queue_ms:g}ms"
    flows: list[dict[str, Any]] = []
    for i, (start, stop, extra) in enumerate(case.media):
        base = {"name": f"media{i + 1}", "controller": controller, "start": _t(start, s),
                **_RATES}
        if extra:
            base["access_delay"] = f"{extra:g}ms"
        if case.pause is not None and case.pause[0] == i:
            # A pause is the flow stopping and a second flow of the same endpoints starting
            # at the resume instant (the controller starts afresh: see docs/rfc8867.md).
            _, p, r = case.pause
            flows.append(base | {"stop": _t(p, s)})
            flows.append(base | {"name": f"media{i + 1}-resumed", "start": _t(r, s),
                                 **({"stop": _t(stop, s)} if stop is not None else {})})
            continue
        if stop is not None:
            base["stop"] = _t(stop, s)
        flows.append(base)
    for i in range(case.reverse_media):
        flows.append({"name": f"reverse{i + 1}", "controller": controller, **_RATES,
                      "direction": "reverse", "start": "0s",
                      "stop": _t(case.media[0][1] or case.duration_s, s)})  # fmt: skip
    for i in range(case.tcp_long):
        flows.append({"name": f"tcp{i + 1}", "kind": "tcp", "cc": TCP_CC, "start": "0s",
                      "stop": _t(119, s)})  # fmt: skip
    for i in range(case.web):
        # RFC 8868 §5.1: uniform 30-50 kB objects, exponential 10 s idle; RFC 8867 §5.7:
        # two of the ten start on, the rest off (past ``web_on`` begin idle).
        flows.append({"name": f"short{i + 1}", "kind": "web", "cc": TCP_CC,
                      "object_size": "uniform",
                      "object_min": "30kB", "object_max": "50kB", "think_time": "10s",
                      "start": "0s", "start_idle": i >= case.web_on})  # fmt: skip
    return {
        "name": f"rfc8867-{case.id}", "duration": _t(case.duration_s, s), "seed": seed,
        "link": link, "record": {"packets": False}, "flow": flows,
    }  # fmt: skip


def scenarios(controllers: Sequence[str], short: bool = False) -> list[tuple[Case, str, dict]]:
    """(case, controller, scenario) for every case and controller."""
    return [(c, ctl, build(c, ctl, short=short)) for c in CASES.values() for ctl in controllers]
