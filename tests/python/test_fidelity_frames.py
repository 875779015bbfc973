"""End-to-end frame delay beside network delay (sender wait), the reconstruction mark the
pages read from the controller registry, and Dumbo's frame-latency row."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import requires_native


def _fixed(pacing_factor: float, model_timing: str) -> dict:
    # 1 Mbps at 25 fps over a 10 Mbps link: a frame is 5 kB, 4 packets, no queue at the link.
    return {
        "name": "wait", "duration": "6s", "seed": 1, "model_timing": model_timing,
        "link": {"capacity": "10Mbps", "delay": "20ms", "queue": "unlimited"},
        "flow": [{
            "name": "call", "encoder": "ideal", "fps": 25,
            "controller": {"name": "fixed", "rate": "1Mbps", "pacing_factor": pacing_factor},
        }],
    }  # fmt: skip


@requires_native
def test_sender_wait_is_the_pacer_time_inside_frame_delay() -> None:
    """Paced at the target, a frame's last packet leaves about one frame interval (40 ms)
    after capture; at 2.5x the target, 2.5 times sooner (exact timing: encoded at once).
    Frame delay holds the wait plus the network's one-way delay. Under the default
    realistic timing the wait also holds the encode time (14.2 ms mean) and hand-over."""
    import rtcc

    flows = {k: rtcc.simulate(_fixed(k, "exact"), record_packets=False).summary["flows"][0]
             for k in (1.0, 2.5)}  # fmt: skip
    slow, fast = flows[1.0], flows[2.5]
    for f in (slow, fast):
        assert f["sender_wait_ms_p95"] >= f["sender_wait_ms_mean"] > 0
        owd = f["owd_ms_mean"]
        assert f["frame_delay_ms_mean"] == pytest.approx(f["sender_wait_ms_mean"] + owd, abs=3)
    # The last of 4 packets leaves 3/4 of the frame's pacing time after the first.
    assert 25 < slow["sender_wait_ms_mean"] < 40
    assert slow["sender_wait_ms_mean"] / fast["sender_wait_ms_mean"] == pytest.approx(2.5, rel=0.2)

    real = rtcc.simulate(_fixed(2.5, "realistic"), record_packets=False)
    f, frames = real.summary["flows"][0], real.frames
    assert f["frame_delay_ms_mean"] == pytest.approx(f["sender_wait_ms_mean"] + f["owd_ms_mean"], abs=3)
    # Capture to first packet: encode (14.2 ms) + hand-over (0.5 ms) + up to a 1 ms tick.
    assert ((frames.first_sent_s - frames.capture_s) * 1000).mean() == pytest.approx(15.2, abs=1.5)
    assert f["sender_wait_ms_mean"] == pytest.approx(fast["sender_wait_ms_mean"] + 15.2, abs=2.5)


@requires_native
def test_reconstructions_come_from_the_registry_and_are_marked_in_tables() -> None:
    import rtcc
    from rtcc.reproduce.page import comparison, run_table, scheme_text
    from rtcc.reproduce.runs import is_reconstruction, reconstructions

    flagged = {c["name"] for c in rtcc.controllers() if c.get("reconstruction")}
    assert flagged == {"sqp", "pudica", "c-nadu"} == set(reconstructions())
    assert is_reconstruction("pudica") and is_reconstruction("sqp (2 flows)")
    assert not is_reconstruction("gcc") and not is_reconstruction("cross (no fast adaptation)")
    assert scheme_text("c-nadu") == "c-nadu (reconstruction)"
    assert scheme_text("fbra") == "fbra"
    part = pd.DataFrame({"experiment": ["Fig. 12"] * 2, "scheme": ["sqp", "gcc"], "x": [1, 2]})
    table = run_table(part, [("x", "x", 1.0)], ["experiment", "scheme"])
    assert "<td>sqp (reconstruction)</td>" in table and "<td>gcc</td>" in table
    rows = [{"scheme": "pudica", "x": 1.0}]
    assert "<td>pudica (reconstruction)</td>" in comparison(rows, [("x", "x", 1.0)], {}, {})


@requires_native
def test_cross_rows_carry_frame_delay_and_sender_wait() -> None:
    from rtcc.reproduce.cross.experiments import SHORT, metrics

    def flow(delay: float, wait: float) -> dict:
        return {"packets_sent": 10, "loss_rate": 0.0, "goodput_kbps": 1.0,
                "owd_ms_mean": 40.0, "frame_delay_ms_mean": delay, "frame_delay_ms_p95": delay,
                "sender_wait_ms_mean": wait, "sender_wait_ms_p95": wait}  # fmt: skip

    summary = {"flows": [flow(100.0, 50.0), flow(300.0, 250.0)],
               "link": {"utilization_received": 0.9, "utilization": 0.9}}  # fmt: skip
    row = metrics({"summary": summary}, "VI-A case 4", SHORT)
    assert row["frame_delay_ms_mean"] == 200.0 and row["sender_wait_ms_mean"] == 150.0
    assert row["owd_ms_mean"] == 40.0
    old = {"flows": [{k: v for k, v in flow(1, 1).items() if "wait" not in k}],
           "link": summary["link"]}  # fmt: skip
    assert math.isnan(metrics({"summary": old}, "VI-A case 4", SHORT)["sender_wait_ms_mean"])


def test_dumbo_frame_latency_row_is_dumbo_minus_gcc() -> None:
    from rtcc.reproduce.dumbo import page, thesis
    from rtcc.reproduce.dumbo.experiments import ratios

    def r(scheme: str, latency: float) -> dict:
        return {"experiment": "cellular", "scheme": scheme, "runs": 7,
                "utilization_mean": 0.5, "sojourn_ms_mean": 50.0, "video_kbps": 1000.0,
                "frame_latency_ms_mean": latency}  # fmt: skip

    table = pd.DataFrame([r("gcc", 800.0), r("copa+dumbo", 700.0), r("rocc+dumbo", 860.0)])
    ours = ratios(table)
    assert ours["frame_latency_ms"] == pytest.approx(-20.0)
    assert thesis.CELLULAR_RATIOS["frame_latency_ms"] == -100.0
    html_text = page._ratios(ours)
    assert "<td>frame latency, Dumbo − GCC</td><td>-20 ms</td>" in html_text
    assert "-100 ms (100 ms lower, §6.3)" in html_text
