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
    # Its RTCP, every datagram parsed by rtcc-wire: transport feedback every 100 ms,
    # receiver reports about once a second.
    assert p["rtcp_undecodable"] == 0
    assert 100 <= p["transport_feedback"] <= 130 and p["receiver_reports"] >= 5
    assert p["sender_reports"] >= 5  # rtcc's SRs reached it
    # Every packet it reported was handed to it; its arrival times within a few ms
    # of when rtcc handed the datagram over (its own stamping, p50).
    # (all but the last few, handed after its last feedback).
    assert p["twcc_handed"] >= p["media_packets"]
    assert p["twcc_handed"] - 40 <= p["twcc_reported"] <= p["twcc_handed"] and p["twcc_lost_but_handed"] == 0
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
    assert r.timeseries["rtt_ms"].notna().any()
    # Its key-frame request as the stream starts (GStreamer 1.22) reached rtcc's
    # sender, which answered with a second key frame: the PLI path works end to end
    # (the request-keyframe=false test below shows the other side).
    assert p["plis"] >= 1 and int(r.frames["key"].sum()) >= 2
    # The flow's repair requests are the peer's.
    f = r.summary["flows"][0]
    assert (f["nacks_sent"], f["plis_sent"]) == (p["nacked_sequences"], p["plis"])


def test_gstreamers_nacks_and_plis_repair_a_lossy_call(gstreamer):
    """2 % random loss: GStreamer's NACKs bring rtcc's retransmissions (RFC 4588), which
    fill its gaps, and its RR counts the losses rtcc counted."""
    r = rtcc.live(
        CALL.format(duration="8s", extra="loss = 0.02"),
        bottleneck="udp",
        peer="gstreamer",
        peer_options={"rtx-next-seqnum": False},
    )
    (p,) = r.summary["live"]["peers"]
    jb = p["report"]["jitterbuffers"][0]
    assert p["nacks"] > 0 and r.summary["flows"][0]["rtx_packets"] > 0
    assert jb["rtx-success-count"] > 0, jb
    assert max(s["cumulative_lost"] for s in p["rr"]) > 0
    for s in p["rr"]:
        assert abs(s["cumulative_lost"] - s["own_cumulative_lost"]) <= 2


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
    no_video = 'name = "x"\nduration = "2s"\n[link]\ncapacity = "1Mbps"\n[[flow]]\nkind = "udp"\nrate = "100kbps"\n'
    with pytest.raises(ScenarioError, match="has none"):
        rtcc.live(no_video, peer="gstreamer")


def test_a_peer_program_that_misbehaves_is_an_error_naming_it(tmp_path):
    sc = CALL.format(duration="2s", extra="")
    cases = [
        (["/bin/echo", "hello"], "not a JSON line"),
        (["/bin/false"], "ended before it was ready"),
        (["/bin/sh", "-c", "echo broken >&2; exit 3"], "it said: broken"),
        (["/bin/sh", "-c", 'echo \'{"error": "no camera"}\''], "no camera"),
        (["/bin/sh", "-c", 'echo \'{"ready": true, "rtp": "8.8.8.8:5004", "rtcp": "127.0.0.1:1"}\''], "not an IPv4 loopback"),
        (["/bin/sh", "-c", 'echo \'{"ready": true, "rtp": "127.0.0.1:0", "rtcp": "127.0.0.1:1"}\''], "has no port"),
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
    with pytest.raises(ValueError, match="not true or false"):
        rtcc.live(CALL.format(duration="2s", extra=""), peer="gstreamer", peer_options={"request-keyframe": "maybe"})
    with pytest.raises(ValueError, match="whole number"):
        rtcc.live(CALL.format(duration="2s", extra=""), peer="gstreamer", peer_options={"latency": "soon"})


def test_ctrl_c_at_the_terminal_keeps_the_run_and_the_peers_report(gstreamer, tmp_path):
    """SIGINT to the whole process group, as a terminal sends it: the peer (in a group
    of its own) is not hit; the run stops, asks it for its report, and keeps both."""
    import json
    import signal
    import sys
    import time

    path = tmp_path / "call.toml"
    path.write_text(CALL.format(duration="20s", extra=""))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "rtcc", "live", str(path), "--peer", "gstreamer", "--out", str(out), "--no-plots", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(6)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    summary = json.loads((out / "summary.json").read_text())
    (p,) = summary["live"]["peers"]
    assert summary["live"]["interrupted"] is True
    assert p.get("report_error") is None and p["report"]["decoded_frames"] > 30, p


def test_without_key_frame_requests_gstreamer_sends_no_pli(gstreamer):
    """request-keyframe=false: GStreamer 1.22 then asks for no key frame, not even the one
    it asks for as the stream starts, so rtcc sends its first key frame alone."""
    r = rtcc.live(
        CALL.format(duration="4s", extra=""),
        bottleneck="udp",
        peer="gstreamer",
        peer_options={"request-keyframe": False, "rtx-next-seqnum": False},
    )
    (p,) = r.summary["live"]["peers"]
    assert p["plis"] == 0 and int(r.frames["key"].sum()) == 1
    assert p["report"]["decoded_frames"] > 90
