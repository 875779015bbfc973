"""rtcc.app: a Python policy drives a flow through the FBRA paper's application API (§6)."""

from __future__ import annotations

import pytest

import rtcc
from conftest import policy_scenario, requires_native

pytestmark = requires_native

LINK = policy_scenario(flow_extra='start_rate = "3Mbps"\n')


class LossPolicy:
    """The README's example: halve on > 10 % loss, +5 % otherwise; FEC while loss > 2 %."""

    def __init__(self) -> None:
        self.reports: list[dict] = []
        self.frames = 0
        self.fec_sent = 0
        self.timers: list[float] = []

    def on_start(self, s) -> None:
        s.set_bitrate(3e6)
        s.set_timer(5.0)

    def on_report(self, s, report) -> None:
        self.reports.append(report)
        loss = report["fraction_lost"]
        s.set_bitrate(s.target_bps * (0.5 if loss > 0.10 else 1.05))
        s.enable_fec(loss > 0.02)

    def on_frame(self, s, frame) -> None:
        self.frames += 1

    def on_fec_sent(self, s, packet) -> None:
        assert packet["kind"] == "fec"
        self.fec_sent += 1

    def on_timer(self, s) -> None:
        self.timers.append(s.now_s)


def test_a_loss_policy_adapts_to_the_link_and_turns_fec_on():
    from rtcc import app

    p = LossPolicy()
    res = app.run(LINK, p)
    flow = res.summary["flows"][0]
    assert flow["controller"] == "python"
    # From 3 Mbps on a 1 Mbps link: the policy comes down to about the link.
    assert 400 < flow["video_kbps"] < 1100, flow["video_kbps"]
    assert flow["fec_packets"] > 0 and p.fec_sent == flow["fec_packets"]
    assert p.frames > 300  # the pacer pauses the encoder while 3 Mbps drains
    assert p.timers == [pytest.approx(5.0, abs=0.01)]
    times = [r["report_time_s"] for r in p.reports]
    assert times == sorted(times) and len(times) > 100
    r = p.reports[-1]
    assert 0.0 <= r["fraction_lost"] <= 1.0
    # Transport-wide CC carries no jitter and no discards; no format carries
    # FEC recoveries.
    assert r["jitter_s"] is None and r["late_discards"] is None and r["fec_recovered"] is None
    assert r["packets"] and len(r["packets"][0]) == 7
    assert all(x["owd_min_s"] is None or x["owd_min_s"] >= 0.025 for x in p.reports)


def test_runs_are_deterministic_and_the_policy_is_removed_after():
    from rtcc import app

    a = app.run(LINK, LossPolicy()).summary["flows"][0]
    b = app.run(LINK, LossPolicy()).summary["flows"][0]
    assert a == b
    # The policy lives only for its run.
    with pytest.raises(rtcc.native().ScenarioError, match="policy"):
        stale = 'controller = { name = "python", policy = "policy-0" }'
        rtcc.simulate(LINK.replace('encoder = "ideal"', 'encoder = "ideal"\n' + stale))


def test_codec_and_network_interfaces():
    from rtcc import app

    seen = {}

    class Probe:
        def on_start(self, s) -> None:
            seen["unknown"] = s.set_param("qp", 30)
            seen["bad"] = s.set_param("pacing_factor", -1)
            seen["pacing"] = s.set_param("pacing_factor", 1.5)
            seen["burst"] = s.set_param("frame_schedule", "burst")
            seen["get"] = (s.get_param("pacing_factor"), s.get_param("frame_schedule"),
                           s.get_param("nothing"))  # fmt: skip
            s.set_fec_scheme(5)
            seen["fec"] = s.fec_enabled
            s.set_bitrate(1e12)
            seen["clamped"] = s.target_bps

        def on_frame(self, s, frame) -> None:
            seen["rate"] = s.get_bitrate()

    capped = LINK.replace('start_rate = "3Mbps"', 'max_rate = "500kbps"')
    res = app.run(capped, Probe(), preferences={"fps": 15},
                  session_params={"feedback_interval": "100ms"})  # fmt: skip
    assert seen["unknown"] is False and seen["bad"] is False
    assert seen["pacing"] is True and seen["burst"] is True
    assert seen["get"] == (1.5, "burst", None)
    assert seen["fec"] is True and seen["clamped"] == 500e3
    assert seen["rate"] == pytest.approx(500e3, rel=0.1)
    flow = res.summary["flows"][0]
    assert flow["fec_packets"] > 0
    assert flow["frames_sent"] == pytest.approx(15 * 20, abs=2)
    with pytest.raises(ValueError, match="preferences: unknown key 'bogus'"):
        app.run(LINK, Probe(), preferences={"bogus": 1})
    with pytest.raises(ValueError, match="flow 3"):
        app.run(LINK, Probe(), flow=3)


def test_an_exception_in_a_policy_stops_the_run_with_its_message():
    from rtcc import app

    class Broken:
        def on_report(self, s, report) -> None:
            if report["report_time_s"] > 1.0:
                raise KeyError("policy bug at one second")

    with pytest.raises(KeyError, match="policy bug at one second"):
        app.run(LINK, Broken())
    # The next run is not affected.
    assert app.run(LINK, LossPolicy()).summary["flows"][0]["video_kbps"] > 0


def test_the_documented_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "controllers.md").read_text()
    start = text.index("```python", text.index("## Scripting an adaptation policy"))
    code = text[start + len("```python") : text.index("```", start + 9)]
    monkeypatch.chdir(root)
    exec(compile(code, "docs/controllers.md", "exec"), {})
    kbps, owd_ms, _fec = (float(x) for x in capsys.readouterr().out.split())
    # 3 Mbps link, 25 ms one way: the policy uses most of it within its 50 ms queue bound.
    assert 1000 < kbps < 3000 and owd_ms < 25 + 60
