"""RTCP sender reports and the round trip receiver reports echo (RFC 3550 §6.4.1).

gcc takes its RTT from the RR's LSR/DLSR, as a WebRTC sender does: on an
uncongested 50 ms round trip it reads 50 ms plus the SR's serialisation; with
``rtcp_interval = "0s"`` no SR goes out, no RR echoes one, and gcc has no RTT.
"""

from __future__ import annotations

import pytest

import rtcc


def _run(**flow: object) -> rtcc.Result:
    scenario = {
        "name": "sr",
        "duration": "12s",
        "seed": 3,
        "link": {"capacity": "20Mbps", "delay": "25ms"},
        "flow": [{"name": "f", "controller": "gcc", "max_rate": "1Mbps", **flow}],
    }
    return rtcc.simulate(scenario, record_packets=True)


@pytest.mark.parametrize("report_format", ["twcc", "rfc8888"])
def test_gcc_reads_the_round_trip_its_receiver_reports_echo(report_format: str) -> None:
    r = _run(report_format=report_format)
    ts = r.timeseries
    rtt = ts[ts["t_s"] > 3]["rtt_ms"].dropna()
    assert len(rtt) > 0
    # 2 x 25 ms, the SR's own 20 Mbps serialisation and the fields' 1/65,536 s.
    assert rtt.between(49.9, 51.0).all(), rtt.describe()
    # The SRs are no rows of the packet table and no media.
    assert "feedback" not in set(r.packets["kind"])


def test_without_sender_reports_gcc_has_no_rtcp_round_trip() -> None:
    r = _run(rtcp_interval="0s")
    ts = r.timeseries
    assert "rtt_ms" not in ts or ts["rtt_ms"].isna().all()


@pytest.mark.parametrize("value", ["50ms", "2min", "-1s", "fast"])
def test_a_bad_rtcp_interval_is_refused_by_name(value: str) -> None:
    with pytest.raises(rtcc.ScenarioError, match="rtcp_interval"):
        _run(rtcp_interval=value)


class _RecordsRtt:
    """A fixed-rate Python controller that keeps every report's RR round trip."""

    params: list = []
    seen: list = []

    def __init__(self, params, context):
        self.rate = 500_000.0

    def decision(self):
        return self.rate

    def on_feedback(self, now_s, fb):
        _RecordsRtt.seen.append(fb.rtcp_rtt_s)


def test_a_python_controller_reads_the_rr_round_trip() -> None:
    rtcc.register_controller("records-rtcp-rtt", _RecordsRtt)
    _RecordsRtt.seen.clear()
    _run(controller="records-rtcp-rtt")
    rtts = [v for v in _RecordsRtt.seen if v == v]  # NaN: a report without an RR
    # About one RR a second of 12 s, and 50 ms each; most reports carry none.
    assert 8 <= len(rtts) <= 14, len(rtts)
    assert all(0.0499 <= v <= 0.051 for v in rtts), rtts
    assert len(_RecordsRtt.seen) > 10 * len(rtts)
