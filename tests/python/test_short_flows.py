"""Rates over stated windows: a flow too short to have a rate is flagged, not rated
absurdly, is left out of the Jain index, and utilisation stays a share of the link."""

from __future__ import annotations

import pytest

import rtcc
from conftest import requires_native

pytestmark = requires_native

LINK = '[link]\ncapacity = "3Mbps"\ndelay = "25ms"\nqueue = "unlimited"\n'


def _summary(flows: str, duration: str = "4s") -> dict:
    text = f'duration = "{duration}"\nseed = 3\n{LINK}{flows}'
    return rtcc.simulate(text, record_packets=False).summary


def _shares_fit(summary: dict) -> None:
    """Every utilisation in the summary is a share of its link (to rounding)."""
    for f in summary["flows"]:
        for key in ("utilization", "media_utilization", "link_share"):
            if f[key] is not None:
                assert 0.0 <= f[key] <= 1.0 + 1e-9, (f["name"], key, f[key])
    link = summary["link"]
    assert link["utilization"] <= 1.0 + 1e-9
    assert link["utilization_received"] <= link["utilization"] + 1e-9
    assert sum(link["utilization_by_kind"].values()) <= link["utilization"] + 1e-9


@pytest.mark.parametrize("stop", ["1us", "100ms"])
def test_a_tcp_flow_shorter_than_a_second_has_no_rate(stop: str) -> None:
    s = _summary(
        f'[[flow]]\nname = "short"\nkind = "tcp"\nstop = "{stop}"\n'
        '[[flow]]\nname = "long"\nkind = "tcp"\n'
    )
    short, long = s["flows"]
    for key in ("goodput_kbps", "utilization", "send_kbps", "report_kbps", "utilization_mean"):
        assert short[key] is None, (key, short[key])
    assert "less than the 1 s a rate needs" in short["rate_null_reason"]
    # What it sent still crossed the link, after its stop.
    assert short["packets_sent"] > 0 and short["received_until_s"] > short["stop_s"]
    assert long["rate_null_reason"] is None and 0 < long["goodput_kbps"] <= 3000
    # The index is of the long flow alone.
    assert s["jain_index"] == 1.0
    _shares_fit(s)


def test_received_rates_reach_the_last_arrival_and_fit_the_link() -> None:
    # 2 s of TCP into an unlimited queue: what it sent drains after its stop, and
    # counted over [start, stop) alone would be more than the link carried.
    s = _summary('[[flow]]\nkind = "tcp"\nstop = "2s"\n[[flow]]\nkind = "udp"\nrate = "500kbps"\n')
    tcp, udp = s["flows"]
    assert tcp["rate_null_reason"] is None
    assert tcp["stop_s"] == 2.0 < tcp["received_until_s"] <= s["duration_s"]
    assert 0.5 < tcp["utilization"] <= 1.0
    assert tcp["goodput_kbps"] <= 3000
    assert s["jain_index"] < 1.0, "both flows feed the index"
    _shares_fit(s)


def test_a_udp_flow_beyond_its_link_gets_at_most_the_link() -> None:
    s = _summary('[[flow]]\nkind = "udp"\nrate = "6Mbps"\nstop = "3s"\n')
    (udp,) = s["flows"]
    assert udp["send_kbps"] == pytest.approx(6000, rel=0.01)  # over [start, stop)
    assert udp["goodput_kbps"] <= 3000 * (1 + 1e-9)
    assert 3.0 < udp["received_until_s"] <= s["duration_s"], "its queue drained after its stop"
    assert udp["utilization"] == pytest.approx(1.0, abs=0.01)
    _shares_fit(s)


def test_a_udp_flow_starting_near_the_end_is_flagged() -> None:
    s = _summary('[[flow]]\nname = "late"\nkind = "udp"\nrate = "1Mbps"\nstart = "3.5s"\n')
    (late,) = s["flows"]
    assert late["goodput_kbps"] is None and late["video_kbps"] is None
    assert late["rate_null_reason"].startswith("active 0.5")
    assert late["packets_sent"] > 0
