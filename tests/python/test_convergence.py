"""Dumbo §6.2.1 convergence metrics on hand-built series with hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from conftest import requires_native
from rtcc import convergence as conv

BIN = 0.1


def series(
    end_s: float, capacity: dict[float, float], recv: dict[float, float], latency=None
) -> pd.DataFrame:
    """Bins ending at 0.1 … end_s; ``{from_s: value}`` tables are piecewise constant
    (a bin takes the value of the last key at or before its start)."""
    t = np.round(np.arange(1, round(end_s / BIN) + 1) * BIN, 6)

    def piecewise(table: dict[float, float]) -> np.ndarray:
        keys = sorted(table)
        return np.array([table[max(k for k in keys if k <= ts - BIN + 1e-9)] for ts in t])

    out = pd.DataFrame(
        {"t_s": t, "capacity_kbps": piecewise(capacity), "recv_kbps": piecewise(recv)}
    )
    out["latency_ms"] = piecewise(latency) if latency is not None else np.nan
    return out


def test_up_step_time_to_90_percent_of_the_post_step_maximum():
    s = series(20, {0: 500, 10: 3000}, {0: 500, 10: 1000, 12: 2850})
    s.loc[np.isclose(s["t_s"], 15.0), "recv_kbps"] = 3000  # the maximum: utilisation 1.0
    assert conv.detect_steps(s) == [conv.Step(10.0, 500.0, 3000.0)]
    m = conv.convergence(s)
    # 90 % of 1.0 is first reached by the bin 12.0-12.1 (2850 / 3000 = 0.95).
    assert m["converge_up_s"] == pytest.approx(2.1)
    assert m["up_max_mbps"] == pytest.approx(3.0)
    # Steady state: mean from that bin (12.1 s) to the end (20 s): 79 bins of 2850, one of 3000.
    assert m["up_steady_mbps"] == pytest.approx((79 * 2850 + 3000) / 80 / 1000)
    assert m["up_steady_util"] == pytest.approx((79 * 0.95 + 1.0) / 80)
    assert m["steps_up"] == 1 and m["steps_down"] == 0
    assert math.isnan(m["converge_down_s"])


def test_up_step_ignores_a_single_burst_bin():
    # A key frame fills one bin at 2900 kbps while the flow still sends 1500 kbps.
    s = series(40, {0: 500, 10: 3000}, {0: 500, 10: 1500, 30: 2850})
    s.loc[np.isclose(s["t_s"], 17.0), "recv_kbps"] = 2900
    # Smoothed (1 s centred median): the burst is neither the maximum nor the crossing;
    # 2850 from 30 s is reached in the bin ending 30.1 s.
    assert conv.convergence(s)["converge_up_s"] == pytest.approx(20.1)
    # Raw bins: the burst bin (ending 17.0 s) counts, as before the smoothing.
    assert conv.convergence(s, smooth_s=0)["converge_up_s"] == pytest.approx(7.0)


def test_down_step_time_until_latency_is_back_within_110_percent():
    latency = {0: 50, 20: 500, 23: 58}
    s = series(40, {0: 3000, 20: 500}, {0: 2800, 20: 450}, latency)
    # Pre-step steady state: bins 10-20 s alternate 50/60 ms, median 55 ms -> limit 60.5 ms.
    pre = (s["t_s"] > 10) & (s["t_s"] <= 20.0 + 1e-9)
    s.loc[pre, "latency_ms"] = np.where(np.arange(pre.sum()) % 2, 60.0, 50.0)
    s["latency_max_ms"] = s["latency_ms"] + 10
    m = conv.convergence(s)
    assert m["down_latency_pre_ms"] == pytest.approx(55.0)
    # 500 ms until 23 s, then 58 ms: back within 60.5 ms in the bin ending 23.1 s.
    assert m["converge_down_s"] == pytest.approx(3.1)
    assert m["down_latency_steady_ms"] == pytest.approx(58.0)
    assert m["down_latency_max_ms"] == pytest.approx(510.0)
    assert m["down_steady_mbps"] == pytest.approx(0.45)
    assert m["down_unconverged"] == 0
    # The post-step steady state (58 ms, median of 30-40 s) gives the same settling time.
    assert m["converge_down_settle_s"] == pytest.approx(3.1)
    # Without smoothing the answer is the same: the excursion is long and clean.
    assert conv.convergence(s, smooth_s=0)["converge_down_s"] == pytest.approx(3.1)


def test_noise_spikes_are_not_an_excursion():
    s = series(40, {0: 3000, 20: 500}, {0: 2800, 20: 450}, {0: 55})
    post = s["t_s"] > 20
    # Every 7th post-step bin jumps to 70 ms (> 60.5): noise, not a latency excursion.
    s.loc[post & (np.arange(len(s)) % 7 == 0), "latency_ms"] = 70.0
    assert conv.convergence(s)["converge_down_s"] == 0.0
    # Raw 100 ms bins would call the first spike an excursion and its next bin "converged".
    raw = conv.step_metrics(s, smooth_s=0)[0]
    assert raw.converge_s > 0


def test_latency_that_never_comes_back_is_unconverged():
    s = series(30, {0: 3000, 15: 500}, {0: 2800, 15: 500}, {0: 50, 15: 400})
    m = conv.convergence(s)
    assert math.isnan(m["converge_down_s"])
    assert m["down_unconverged"] == 1
    assert m["down_latency_max_ms"] == pytest.approx(400.0)
    # It jumped straight to its new level and stayed: settled at once, steady at 400 ms.
    assert m["converge_down_settle_s"] == 0.0
    assert m["down_latency_steady_ms"] == pytest.approx(400.0)


def test_settling_when_the_new_level_is_above_the_old_band():
    # 50 ms before, a 2 s excursion to 800 ms, then 70 ms (> 55 ms = 110 % of 50).
    s = series(30, {0: 3000, 15: 500}, {0: 2800, 15: 500}, {0: 50, 15: 800, 17: 70})
    m = conv.convergence(s)
    assert math.isnan(m["converge_down_s"]) and m["down_unconverged"] == 1
    assert m["converge_down_settle_s"] == pytest.approx(2.1)
    assert m["down_latency_steady_ms"] == pytest.approx(70.0)
    assert m["down_steady_mbps"] == pytest.approx(0.5)


def test_steps_of_each_direction_are_averaged():
    # Pulse: high 0-10, low 10-20, high 20-30, low 30-40 (as the thesis's link, scaled).
    cap = {0: 3000, 10: 500, 20: 3000, 30: 500}
    recv = {0: 2900, 10: 500, 20: 1500, 21: 2900, 30: 500}
    latency = {0: 50, 10: 900, 13: 50, 20: 50, 30: 900, 31: 50}
    m = conv.convergence(series(40, cap, recv, latency))
    assert [s.t_s for s in conv.detect_steps(series(40, cap, recv))] == [10.0, 20.0, 30.0]
    assert m["steps_down"] == 2 and m["steps_up"] == 1
    # Down: 3.1 s after 10 s and 1.1 s after 30 s -> 2.1 s; up: 2900 / 3000 from 21 s.
    assert m["converge_down_s"] == pytest.approx(2.1)
    assert m["converge_up_s"] == pytest.approx(1.1)


def test_step_detection_straddling_bin_and_traces():
    s = series(10, {0: 3000, 5: 500}, {0: 0})
    s.loc[np.isclose(s["t_s"], 5.1), "capacity_kbps"] = 2375.0  # 75 % of the bin still high
    (step,) = conv.detect_steps(s)
    assert step.t_s == pytest.approx(5.075)
    assert (step.before_kbps, step.after_kbps) == (3000.0, 500.0)
    rng = np.random.default_rng(1)
    trace = s.assign(capacity_kbps=rng.uniform(500, 5000, len(s)))
    assert conv.detect_steps(trace) == []
    assert math.isnan(conv.convergence(trace)["converge_up_s"])


def test_bins_longer_than_100ms_are_refused():
    s = series(10, {0: 3000, 5: 500}, {0: 100}).iloc[::2].reset_index(drop=True)
    with pytest.raises(ValueError, match="at most 100 ms"):
        conv.convergence(s)


@requires_native
def test_bin_series_from_a_run_on_a_pulse_link():
    import rtcc

    scenario = {
        "name": "pulse-fixed",
        "duration": "20s",
        # Exact timing: the latencies below are the link's arithmetic (realistic timing
        # adds the encode time, 14.2 ms on average).
        "model_timing": "exact",
        "link": {
            "capacity": {"kind": "pulse", "high": "3Mbps", "low": "1Mbps", "every": "5s"},
            "delay": "25ms",
            "queue": "unlimited",
        },
        "record": {"packets": False},
        # Paced at the rate itself, so each frame serialises at the link's rate, and
        # shown when decoded, so latency is the network's alone.
        "flow": [
            {
                "controller": {"name": "fixed", "rate": "500kbps", "pacing_factor": 1},
                "encoder": "ideal",
                "playout": "immediate",
            }
        ],
    }
    s = conv.bin_series(rtcc.simulate(scenario, record_packets=False))
    assert [(st.t_s, st.after_kbps) for st in conv.detect_steps(s)] == [
        (5.0, 1000.0),
        (10.0, 3000.0),
        (15.0, 1000.0),
    ]
    # A 500 kbps frame (2083 B) never queues, but it serialises 11 ms slower at 1 Mbps:
    # the new steady state (50 ms) is above 110 % of the old (44.4 ms), so by the
    # thesis's definition latency never converges after either drop.
    assert s["latency_ms"].between(25, 80).all()
    m = conv.convergence(s)
    assert 40 < m["down_latency_pre_ms"] < 48
    assert m["down_latency_max_ms"] > 1.1 * m["down_latency_pre_ms"]
    assert math.isnan(m["converge_down_s"])
    assert m["down_unconverged"] == 2
    assert m["converge_down_settle_s"] == 0.0  # but it reached its new level at once
    # Utilisation is flat (0.5 / 3) after the up step: its first bin already qualifies.
    assert m["converge_up_s"] == pytest.approx(0.1)
    assert m["up_steady_mbps"] == pytest.approx(0.5, rel=0.02)
