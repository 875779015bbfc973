"""GStreamer's RTP stack as a live flow's receiving end (``rtcc live --peer gstreamer``):
rtcc's VP8 decoded by GStreamer, GStreamer's own RTCP (receiver reports, transport-wide
feedback, NACK, PLI) parsed by rtcc-wire and driving rtcc's sending end, and its receiver
reports matching rtcc's own RFC 3550 statistics of the same stream.

Skipped where GStreamer and its Python bindings are missing, unless
RTCC_REQUIRE_GSTREAMER=1 (as CI runs): then they fail."""

from __future__ import annotations

import os
import subprocess

import pytest

import rtcc
from rtcc import peers
from rtcc import ScenarioError

REQUIRED = os.environ.get("RTCC_REQUIRE_GSTREAMER") == "1"


def _gstreamer_missing() -> str | None:
    python = peers.command("gstreamer")[0]
    probe = (
        "import gi; gi.require_version('Gst', '1.0'); from gi.repository import Gst; Gst.init(None); "
        "import sys; sys.exit(0 if all(Gst.ElementFactory.find(e) for e in "
        "('rtpbin', 'rtpvp8depay', 'vp8dec', 'rtprtxreceive', 'udpsrc')) else 3)"
    )
    try:
        r = subprocess.run([python, "-c", probe], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{python}: {e}"
    if r.returncode != 0:
        return f"GStreamer (gstreamer1.0-plugins-good, python3-gst-1.0) is missing for {python}"
    return None


@pytest.fixture(scope="module")
def gstreamer():
    missing = _gstreamer_missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"{missing} (RTCC_REQUIRE_GSTREAMER=1)")
        pytest.skip(missing)


CALL = """name = "gst-call"
duration = "{duration}"
seed = 3
[link]
capacity = "2Mbps"
delay = "20ms"
queue = "100ms"
{extra}
[[flow]]
name = "call"
controller = "gcc"
encoder = "vp8"
resolution = "360p"
content = "talking-head"
"""


def test_gstreamer_decodes_rtcc_vp8_and_its_rtcp_drives_gcc(gstreamer):
    # Spurious NACKs off (GStreamer's rtx-next-seqnum asks for any packet later
    # than it predicts), so the run shows the feedback path, not a retransmission storm.
    r = rtcc.live(
        CALL.format(duration="12s", extra=""),
        bottleneck="udp",
        peer="gstreamer",
        peer_options={"rtx-next-seqnum": False},
    )
    live = r.summary["live"]
    (p,) = live["peers"]
    rep = p["report"]
    assert p["kind"] == "gstreamer" and rep["version"].startswith("GStreamer 1.")
    # Real frames through GStreamer's depayloader and libvpx decoder: most of 360.
    assert rep["decoded_frames"] > 250, rep
    assert rep["media_ssrc"] is not None and rep["messages"] == []
    # Its RTCP, every datagram parsed by rtcc-wire: transport feedback about once a
    # frame, receiver reports about once a second.
    assert p["rtcp_undecodable"] == 0
    assert p["transport_feedback"] > 200 and p["receiver_reports"] >= 5
    assert p["sender_reports"] >= 5  # rtcc's SRs reached it
    # Every packet it reported was handed to it; its arrival times within a few ms
    # of when rtcc handed the datagram over (its own stamping, p50).
    assert p["twcc_reported"] > 0.9 * p["media_packets"] and p["twcc_lost_but_handed"] == 0
    assert p["twcc_arrival_error_us"][0] < 2000
    # RR blocks on the media stream beside rtcc's own RFC 3550 statistics of it.
    assert len(p["rr"]) >= 3
    for s in p["rr"]:
        assert abs(s["extended_highest_seq"] - s["own_highest_seq"]) <= 2
        assert abs(s["jitter_ms"] - s["own_jitter_ms"]) < 1.0
        assert abs(s["cumulative_lost"] - s["own_cumulative_lost"]) <= 2
    # The sending end ran on GStreamer's feedback alone: gcc rose from its 300 kbps
    # start only on what the transport feedback said, and the RR's LSR/DLSR gave it
    # a round trip. (Its share of the link is not asserted: GStreamer asks for a key
    # frame as the stream starts, and the burst that answers it can cut gcc early.)
    assert r.timeseries["target_kbps"].max() > 1000
    assert p["plis"] >= 1
    assert r.timeseries["rtt_ms"].notna().any()


def test_a_peer_flow_that_gstreamer_cannot_receive_is_refused_naming_the_field():
    bad = CALL.format(duration="2s", extra="").replace('encoder = "vp8"', 'encoder = "ideal"')
    with pytest.raises(ScenarioError) as e:
        rtcc.live(bad, peer="gstreamer")
    assert "flow[0].encoder" in str(e.value) and "VP8" in str(e.value)
    fec = CALL.format(duration="2s", extra="").replace('content = "talking-head"', 'content = "talking-head"\nfec = true')
    with pytest.raises(ScenarioError, match=r"flow\[0\]\.fec"):
        rtcc.live(fec, peer="gstreamer")
    tcp = CALL.format(duration="2s", extra="")
    with pytest.raises(ScenarioError, match="UDP bottleneck"):
        rtcc.live(tcp, peer="gstreamer", bottleneck="tun")
    with pytest.raises(ValueError, match="not one of"):
        rtcc.live(tcp, peer="chrome")
    with pytest.raises(ValueError, match="without a peer"):
        rtcc.live(tcp, peer_options={"latency": 50})


def test_a_peer_program_that_misbehaves_is_an_error_naming_it(tmp_path):
    sc = CALL.format(duration="2s", extra="")
    cases = [
        (["/bin/echo", "hello"], "not a JSON line"),
        (["/bin/false"], "ended before it was ready"),
        (["/bin/sh", "-c", 'echo \'{"error": "no camera"}\''], "no camera"),
        (["/bin/sh", "-c", 'echo \'{"ready": true, "rtp": "8.8.8.8:5004", "rtcp": "127.0.0.1:1"}\''], "not a loopback"),
        (["/nonexistent/peer"], "could not start"),
    ]
    for command, reason in cases:
        with pytest.raises(ScenarioError) as e:
            rtcc.native().live(sc, "gst.toml", None, {}, "udp", False, ("gstreamer", command))
        assert "flow[0].peer" in str(e.value) and reason in str(e.value), (command, str(e.value))


def test_a_bad_gstreamer_option_is_named_before_the_run(gstreamer):
    with pytest.raises(ScenarioError, match="rtpjitterbuffer has no property 'no-such'"):
        rtcc.live(CALL.format(duration="2s", extra=""), peer="gstreamer", peer_options={"no-such": 1})
    with pytest.raises(ScenarioError, match="not true or false"):
        rtcc.live(CALL.format(duration="2s", extra=""), peer="gstreamer", peer_options={"rtx-next-seqnum": "maybe"})
    with pytest.raises(ValueError, match="whole number"):
        rtcc.live(CALL.format(duration="2s", extra=""), peer="gstreamer", peer_options={"latency": "soon"})
