#!/usr/bin/env bash
# Installs rtcc with its test extras, then runs every test: Rust (cargo) and
# Python (pytest). Works on a fresh machine that has Rust and Python.
set -euo pipefail
cd "$(dirname "$0")/.."
# Real codecs (encoder = "vp8" | "h264") link the system's libvpx and
# OpenH264; without them rtcc builds, but those encoders report what to install.
if ! pkg-config --exists vpx openh264 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libvpx-dev libopenh264-dev pkg-config >/dev/null
fi
# The report page is checked in a real headless Chromium, driven by playwright (from the
# test extra) on the system's browser.
if [ ! -x /usr/bin/chromium ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
# The wire formats are checked against an outside dissector: Wireshark's tshark.
if ! command -v tshark >/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tshark >/dev/null
fi
# GStreamer's RTP stack is a live run's second implementation of a receiving end
# (rtcc live --peer gstreamer), run by the system's Python with GStreamer's bindings.
if ! gst-inspect-1.0 rtpvp8depay >/dev/null 2>&1 || ! /usr/bin/python3 -c "import gi; gi.require_version('Gst', '1.0')" 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gstreamer1.0-tools gstreamer1.0-plugins-base \
        gstreamer1.0-plugins-good python3-gst-1.0 gir1.2-gst-plugins-base-1.0 >/dev/null
fi
# The codec, browser, Ray, tshark and GStreamer tests fail rather than skip when what they need is missing.
export RTCC_REQUIRE_CODECS=1 RTCC_REQUIRE_BROWSER=1 RTCC_REQUIRE_RAY=1 RTCC_REQUIRE_TSHARK=1 RTCC_REQUIRE_GSTREAMER=1
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet ".[test,ray]"
cargo test --workspace --exclude rtcc-py --release
# rtcc-core as a runtime other than the simulator builds it: without sim-layout.
cargo check --release -p rtcc-core --all-targets
python3 -m pytest tests/python -q
