"""A window-limited call whose window tail a drop-tail queue drops: without keep-alives it
waits for its send history to expire (5 s); with libwebrtc's 500 ms keep-alive it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

import rtcc

TRACE = Path(rtcc.__file__).parent / "data" / "traces" / "mahimahi" / "TMobile-LTE-driving.down"


def _run(keepalive: str | None) -> dict:
    flow = {"name": "call", "controller": "rocc+dumbo", "resolution": "dumbo"}
    if keepalive is not None:
        flow["pacer_keepalive"] = keepalive
    scenario = {
        "name": "stalls", "duration": "40s", "seed": 1,
        "link": {"capacity": {"kind": "trace", "file": str(TRACE)}, "delay": "25ms", "queue": "100ms"},
        "flow": [flow],
    }  # fmt: skip
    result = rtcc.simulate(scenario, record_packets=True)
    return {"summary": result.summary["flows"][0], "packets": result.packets}


def _longest_silence(packets) -> float:
    content = packets[~packets.kind.isin(["padding", "probe"])].sort_values("send_s")
    return float(content.send_s.diff().max())


def test_keepalive_ends_the_stalls_of_a_window_held_by_lost_packets() -> None:
    off, on = _run("off"), _run("500ms")
    assert _run(None)["summary"] == on["summary"]  # 500 ms under the default model_timing = "realistic"
    assert off["summary"]["sender_stalls"] >= 2
    # Off: the held window waits for the 5 s send history.
    assert _longest_silence(off["packets"]) > 4.5
    assert on["summary"]["sender_stalls"] < off["summary"]["sender_stalls"]
    assert _longest_silence(on["packets"]) < 2.0
    keepalives = on["packets"][(on["packets"].kind == "padding") & (on["packets"]["size"] == 267)]
    assert len(keepalives) > 0


def test_pacer_keepalive_is_refused_out_of_range() -> None:
    scenario = {
        "name": "bad", "duration": "1s",
        "link": {"capacity": "1Mbps", "delay": "10ms"},
        "flow": [{"name": "call", "controller": "copa", "pacer_keepalive": "20s"}],
    }  # fmt: skip
    with pytest.raises(rtcc.ScenarioError, match=r"pacer_keepalive.*outside 10ms\.\.10s"):
        rtcc.simulate(scenario)


def test_max_video_delay_is_a_playout_parameter() -> None:
    scenario = {
        "name": "bad", "duration": "1s",
        "link": {"capacity": "1Mbps", "delay": "10ms"},
        "flow": [{"name": "call", "controller": "gcc",
                  "playout": {"kind": "webrtc", "max_video_delay": "0.1s"}}],
    }  # fmt: skip
    with pytest.raises(rtcc.ScenarioError, match=r"max_video_delay"):
        rtcc.simulate(scenario)
