"""Sweep axes: the controller axis applies to video flows, cross traffic keeps its own."""

from __future__ import annotations

import pytest

import rtcc
from conftest import requires_native
from rtcc.sweepspec import SweepError, load_spec


def spec(**extra):
    return {
        "base": {
            "name": "mixed",
            "duration": "4s",
            "link": {"capacity": "3Mbps", "delay": "20ms", "queue": "unlimited"},
            "flow": [
                {"name": "video", "controller": "gcc", "encoder": "ideal"},
                {"name": "bulk", "kind": "tcp", "cc": "cubic"},
            ],
        },
        "controllers": ["gcc", {"name": "fixed", "rate": "800kbps", "label": "fixed-800k"}],
        **extra,
    }


def test_the_controller_axis_leaves_a_tcp_flow_alone():
    runs = load_spec(spec()).runs
    assert [r.labels["controller"] for r in runs] == ["gcc", "fixed-800k"]
    for run in runs:
        video, bulk = run.scenario["flow"]
        assert "controller" not in bulk
        assert run.controller_flows == (0,)
    assert runs[1].scenario["flow"][0]["controller"] == {"name": "fixed", "rate": "800kbps"}


def test_a_video_flow_after_cross_traffic_is_the_one_labelled():
    data = spec()
    data["base"]["flow"].reverse()
    data.pop("controllers")
    runs = load_spec(data).runs
    assert runs[0].labels["controller"] == "gcc"
    assert runs[0].controller_flows == (1,)


def test_explicit_flows_are_still_targeted_as_given():
    data = spec(controller_flows=[0, 1])
    run = load_spec(data).runs[1]
    assert [f["controller"]["name"] for f in run.scenario["flow"]] == ["fixed", "fixed"]
    assert run.controller_flows is None


def test_a_controller_axis_over_cross_traffic_alone_is_refused():
    data = spec()
    data["base"]["flow"] = [{"kind": "tcp"}, {"kind": "udp", "rate": "1Mbps"}]
    with pytest.raises(SweepError, match=r"^<sweep>: controllers: base 'mixed' .* no video flow"):
        load_spec(data)


@requires_native
def test_a_sweep_with_tcp_cross_traffic_runs_every_controller():
    table = rtcc.sweep(spec(flows="all"), jobs=1)
    assert table["error"].isna().all(), table["error"].tolist()
    assert list(table["flow"]) == [0, 1, 0, 1]
    # The TCP rows name the flow's own congestion control, not the axis's controller.
    assert list(table["controller"]) == ["gcc", "cubic", "fixed-800k", "cubic"]
