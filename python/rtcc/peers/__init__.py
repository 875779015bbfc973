"""Other implementations as a live flow's receiving end (``rtcc live --peer``).

Each peer is a program of its own that the live run starts, one per video flow
(``rtcc_net::peer`` gives the line protocol). ``gstreamer``: GStreamer's RTP
stack (rtpbin with RTX, NACK, PLI and transport-wide feedback) decoding VP8,
``gst_receiver.py``, run by a Python that has GStreamer's bindings.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

PEERS = ("gstreamer",)

_HERE = Path(__file__).resolve().parent


def _gi_python() -> str:
    """A Python with GStreamer's bindings: ``RTCC_GST_PYTHON``, this one when it
    has them, else the system's (Debian's python3-gst-1.0 installs there)."""
    chosen = os.environ.get("RTCC_GST_PYTHON")
    if chosen:
        return chosen
    if importlib.util.find_spec("gi") is not None:
        return sys.executable
    for p in ("/usr/bin/python3", shutil.which("python3")):
        if p and Path(p).exists():
            return p
    return sys.executable


def command(kind: str, options: dict | None = None) -> list[str]:
    """The program a live run starts for ``kind``'s peer (it adds its own arguments).

    ``options`` (gstreamer): ``latency`` (ms, rtpbin's jitter-buffer latency, 200 by
    default), ``rtcp-interval`` (ms between its receiver reports, 1000 by default,
    as a WebRTC video receiver; GStreamer's own is 5000), ``twcc-interval`` (ms between
    its transport-wide feedback reports, 100 by default as libwebrtc's receive side; 0:
    GStreamer's own rule, one per frame), ``request-keyframe`` (true by default: a PLI on a
    loss it cannot repair, and, in GStreamer 1.22, once as the stream starts) and any
    property of its
    rtpjitterbuffers by name, e.g.
    ``{"rtx-next-seqnum": False}``; the program checks each name and value."""
    if kind not in PEERS:
        raise ValueError(f"peer: {kind!r} is not one of {', '.join(map(repr, PEERS))}")
    argv = [_gi_python(), str(_HERE / "gst_receiver.py")]
    for key, value in (options or {}).items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if key in ("latency", "rtcp-interval", "twcc-interval"):
            if not text.isdigit():
                raise ValueError(f"peer option {key}: {value!r} is not a whole number of ms")
            argv += [f"--{key}", text]
        elif key == "request-keyframe":
            if text not in ("true", "false"):
                raise ValueError(f"peer option {key}: {value!r} is not true or false")
            argv += [f"--{key}", text]
        else:
            argv += ["--jitterbuffer", f"{key}={text}"]
    return argv


def parse_options(items: list[str]) -> dict:
    """``KEY=VALUE`` strings (``rtcc live --peer-option``) as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--peer-option {item!r}: give KEY=VALUE")
        out[key] = value
    return out
