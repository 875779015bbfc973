"""Memory stays bounded whatever the offered load: a UDP flow at 100 Gbps into a
3 Mbps link either completes with its rows taken as it goes or stops with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

import rtcc
from conftest import requires_native

pytestmark = requires_native


def _udp(
    queue: str = "unlimited", limits: str = "", duration: str = "0.05s", link: str = "3Mbps"
) -> str:
    return (
        f'duration = "{duration}"\n{limits}[link]\ncapacity = "{link}"\ndelay = "1ms"\n'
        f'queue = "{queue}"\n[[flow]]\nkind = "udp"\nrate = "100Gbps"\n'
    )


def test_rows_held_behind_a_standing_queue_stop_at_the_limit() -> None:
    # Every row waits behind the first packet still queued: the run stops at the
    # limit, holding no more rows than it allows, with one line naming the field.
    sim = rtcc.Simulation(_udp(limits="[limits]\npacket_rows = 2000\n"), "udp.toml")
    with pytest.raises(rtcc.ScenarioError) as e:
        sim.run_until(1.0)
    message = str(e.value)
    assert message.startswith("udp.toml: limits.packet_rows: the run stopped at 0.000")
    assert "\n" not in message and "more than 2000 rows" in message
    # The held rows: 2000 packets, one link row and one flow row at most.
    assert 2000 <= sim.pending_rows <= 2002


def test_rows_taken_as_the_run_goes_stay_near_one_batch() -> None:
    # A fast link and a small queue: a row waits about 1 ms for the packets before
    # it (some 10,000 rows at 100 Gbps), and the pauses keep the rows held near
    # that and a batch, where one run_until would hold all 400,000.
    sim = rtcc.Simulation(_udp(queue="100pkt", link="10Gbps"), "udp.toml")
    sim.set_pause_rows(5000)
    taken, pauses, peak = 0, 0, 0
    while sim.run_until(1.0):
        pauses += sim.paused
        peak = max(peak, sim.pending_rows)
        packets = sim.take_tables()["packets"]
        taken += len(packets["seq"][1]) // 8 if packets else 0
    (flow,) = __import__("json").loads(sim.finish()["summary"])["flows"]
    assert pauses >= 50, "about 400,000 packets in batches of 5,000"
    assert peak <= 30_000, peak
    assert taken > 0 and flow["packets_sent"] > 400_000


def test_without_packet_rows_it_completes_and_the_queue_is_capped(tmp_path: Path) -> None:
    # A queue limit far beyond memory's is held to the unlimited queue's million packets.
    text = _udp(queue="1000000000pkt", duration="0.2s")
    s = rtcc.simulate(text, record_packets=False).summary
    (udp,) = s["flows"]
    assert udp["packets_sent"] == pytest.approx(100e9 * 0.2 / 8 / 1500, rel=0.01)
    # All but the million queued and the few that left were dropped.
    assert s["link"]["drops"] >= udp["packets_sent"] - 1_000_000 - 100
    assert udp["goodput_kbps"] is None  # 0.2 s: too short to rate
    assert s["link"]["utilization"] <= 1.0 + 1e-9


def test_rtcc_run_streams_a_100gbps_source(tmp_path: Path) -> None:
    # The whole chain (pauses, batches, merge) with packet rows on.
    result = rtcc.simulate(_udp(queue="100pkt", duration="0.02s"), tables_dir=tmp_path)
    assert len(result.table("packets", ["seq"])) == result.summary["flows"][0]["packets_sent"]
