"""Two calls of one frame-bursting scheme on one link share it under realistic sender timing
(`model_timing = "realistic"`): burstrtc and fbra, two flows from the same start, 30 fps, 4 Mbps, 60 s,
over five seeds. Under exact timing both cameras capture at the same instants for the
whole run, and which flow's burst queues behind the other's is fixed by that phase."""

from __future__ import annotations

import statistics

import pytest

import rtcc
from conftest import requires_native

pytestmark = requires_native

SEEDS = range(1, 6)
RECORD = {"packets": False, "frames": False, "timeseries": False}


def _jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def pair_jain(controller: str, seed: int, **top: str) -> float:
    """Jain's index of two same-start flows' goodput; both are active the whole run, so
    each flow's goodput is its rate over the common window."""
    flow = {"controller": controller, "fps": 30}
    scenario = {
        "duration": "60s", "seed": seed, "record": RECORD,
        "link": {"capacity": "4Mbps", "delay": "20ms", "queue": "100ms"},
        "flow": [flow | {"name": "a"}, flow | {"name": "b"}], "model_timing": "realistic", **top,
    }  # fmt: skip
    flows = rtcc.simulate(scenario, record_packets=False).summary["flows"]
    return _jain([f["goodput_kbps"] for f in flows])


# Measured (seeds 1-5, realistic timing, the default): burstrtc mean 0.766 (0.616-1.0),
# fbra 0.842 (0.712-0.982). A burstrtc flow whose captures fall 0-9 ms after the other's
# keeps 344-669 kbps: its small paced parts cross the bottleneck while the other's frame
# drains, one packet between two halves eq. 4's R, and eq. 6 reads background equal to
# the capacity (seed 1: R/S 0.48, B 3.85 Mbps against the other's 2.64). At 15-24 ms apart
# the two share (Jain 0.98-1.0). A +-100 ppm drift moves the offset by at most 6 ms in 60 s.
# strict: once both share whatever the offset the test fails, and the mark goes.
PHASE_LOCKOUT = "a flow whose frames land within about 10 ms of the other's loses the link"


@pytest.mark.parametrize(
    "controller", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=PHASE_LOCKOUT))
                   for c in ("burstrtc", "fbra")],
)  # fmt: skip
def test_two_flows_share_the_link_over_seeds(controller: str) -> None:
    j = [pair_jain(controller, s) for s in SEEDS]
    spread = (f"{controller}: mean {statistics.mean(j):.3f}, min {min(j):.3f}, "
              f"max {max(j):.3f}, std {statistics.stdev(j):.3f} over seeds {list(SEEDS)}")  # fmt: skip
    print(spread)
    assert statistics.mean(j) >= 0.9, spread
