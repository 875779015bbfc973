"""The flow field `timing` (video) and `host_jitter` (TCP): off reproduces the exact
grid for every seed, on draws from the seed, and bad values are refused by name; the
realistic models are the defaults and `model_timing = "exact"` turns them off."""

import pytest

import rtcc

LINK = {"capacity": "4Mbps", "delay": "25ms"}
RECORD = {"packets": False, "frames": False, "timeseries": False}


def _pair(timing, seed):
    flows = [{"controller": "burstrtc", "encoder": "ideal", "timing": timing},
             {"controller": "burstrtc", "encoder": "ideal", "start": "2s", "timing": timing}]
    sc = {"duration": "8s", "link": LINK, "record": RECORD, "flow": flows}
    r = rtcc.simulate(sc, seed=seed, record_packets=False)
    return [f["goodput_kbps"] for f in r.summary["flows"]]


def test_video_timing_off_ignores_the_seed_and_on_draws_from_it():
    assert _pair(False, 1) == _pair(False, 2)
    assert _pair(True, 1) == _pair(True, 1)
    assert _pair(True, 1) != _pair(True, 2)
    assert _pair({"phase": False, "drift_ppm": 0, "handover": 0, "encode_time": 0,
                  "encode_jitter": 0, "pacer_tick": 0}, 3) == _pair(False, 3)


def _summary(flow, seed=1, **top):
    sc = {"duration": "8s", "link": LINK | {"queue": "30packets"}, "record": RECORD,
          "flow": [{"controller": "burstrtc", "encoder": "content"} | flow,
                   {"controller": "burstrtc", "encoder": "content", "start": "1s"} | flow], **top}
    return rtcc.simulate(sc, seed=seed, record_packets=False).summary["flows"]


REALISTIC = {"timing": True, "pacer_keepalive": "500ms",
             "playout": {"kind": "webrtc", "max_video_delay": "10s"}}
EXACT = {"timing": False, "pacer_keepalive": "off",
         "playout": {"kind": "webrtc", "max_video_delay": "off"}}


def test_the_defaults_are_realistic_and_model_timing_exact_turns_the_models_off():
    default = _summary({})
    assert default == _summary(REALISTIC)
    assert default == _summary({}, model_timing="realistic")
    exact = _summary({}, model_timing="exact")
    assert exact == _summary(EXACT)
    assert exact != default
    # A flow's own value wins over the scenario's switch.
    assert _summary({"timing": True}, model_timing="exact") == _summary(
        {"pacer_keepalive": "off", "playout": {"kind": "webrtc", "max_video_delay": "off"}}, model_timing="realistic")
    assert _summary(REALISTIC, model_timing="exact") == default


def test_a_bad_model_timing_is_refused_by_name():
    with pytest.raises(rtcc.ScenarioError, match=r"model_timing: 'fast' is not one of realistic, exact"):
        rtcc.simulate({"duration": "1s", "link": LINK, "model_timing": "fast",
                       "flow": [{"controller": "gcc"}]}, record_packets=False)


def _tcp(jitter, seed):
    sc = {"duration": "10s", "link": LINK | {"queue": "30packets"}, "record": RECORD,
          "flow": [{"kind": "tcp", "host_jitter": jitter},
                   {"kind": "tcp", "host_jitter": jitter, "access_delay": "10ms"}]}
    return rtcc.simulate(sc, seed=seed, record_packets=False).summary["flows"]


def test_tcp_host_jitter_draws_from_the_seed_and_rtos_are_counted():
    off = [f["goodput_kbps"] for f in _tcp("0s", 1)]
    assert off == [f["goodput_kbps"] for f in _tcp("0s", 2)]
    on1 = [f["goodput_kbps"] for f in _tcp("200us", 1)]
    assert on1 == [f["goodput_kbps"] for f in _tcp("200us", 1)]
    assert on1 != [f["goodput_kbps"] for f in _tcp("200us", 2)]
    assert all(isinstance(f["rtos"], int) and f["rtos"] >= 0 for f in _tcp("0s", 1))


@pytest.mark.parametrize(("flow", "field"), [
    ({"controller": "gcc", "timing": {"drift_ppm": -1}}, "flow[0].timing.drift_ppm"),
    ({"controller": "gcc", "timing": {"tick": "1ms"}}, "flow[0].timing"),
    ({"kind": "tcp", "host_jitter": "1s"}, "flow[0].host_jitter"),
    ({"kind": "udp", "host_jitter": "1ms"}, "flow[0].host_jitter"),
])
def test_bad_timing_is_refused_by_field(flow, field):
    with pytest.raises(rtcc.ScenarioError, match=field.replace("[", r"\[").replace("]", r"\]")):
        rtcc.simulate({"duration": "1s", "link": LINK, "flow": [flow]}, record_packets=False)
