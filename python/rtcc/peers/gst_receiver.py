"""GStreamer as the receiving end of one rtcc video flow (a live run's peer).

A stand-alone program (it imports nothing of rtcc, so it runs under whichever
Python has GStreamer's bindings, python3-gi): GStreamer's own RTP stack
(rtpbin: rtpsession, rtpjitterbuffer, rtprtxreceive) receives rtcc's VP8 over
RTP, depayloads and decodes it, and answers with its own RTCP: receiver reports
(RFC 3550 §6.4.2), generic NACK and PLI (RFC 4585 §6.2.1, §6.3.1, AVPF profile)
and transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01,
GStreamer's rtpsession generates it when the stream's caps map the extension).

The streams are rtcc's (``rtcc_core::datagram``): VP8 on payload type 96, its RTX
(RFC 4588) on 97, transport-wide sequence numbers in header extension 3.

Protocol with the live run (``rtcc_net::peer``):
- argv: ``--rtcp-to HOST:PORT`` (where its RTCP goes: the emulator's receiving
  side), ``--latency MS`` (the jitter buffer's), ``--max-seconds S`` (it ends by
  itself after that, whatever happens);
- stdout, one JSON line when it is ready: ``{"ready": true, "rtp": ADDR, "rtcp":
  ADDR, "version": ...}`` (its RTCP leaves from its ``rtcp`` address);
- stdin closed (or a line ``stop``): it stops and prints one JSON line of what it
  counted, then exits 0. Errors: one JSON line ``{"error": ...}``, exit 1.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

TWCC_URI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
PT_VP8 = 96
PT_VP8_RTX = 97
# rtcc's padding and probes: padding-only packets on the RTX stream under this
# payload type (the model encoder's RTX type), mapped so rtprtxreceive takes them as RTX.
PT_MODEL = 98
PT_PADDING_RTX = 104
EXT_TRANSPORT_CC = 3


def fail(reason: str) -> None:
    print(json.dumps({"error": reason}), flush=True)
    sys.exit(1)


try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import GLib, GObject, Gst  # noqa: E402
except (ImportError, ValueError) as e:  # pragma: no cover - depends on the host
    fail(f"GStreamer's Python bindings are missing ({e}): install python3-gst-1.0")


def host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def structure_dict(s: Gst.Structure) -> dict:
    """A GstStructure's plain fields (numbers, strings, booleans)."""
    out = {}
    for i in range(s.n_fields()):
        name = s.nth_field_name(i)
        try:
            v = s.get_value(name)
        except TypeError:
            continue
        if isinstance(v, (bool, int, float, str)):
            out[name] = v
    return out


def caps_for(pt: int) -> Gst.Caps | None:
    if pt == PT_VP8:
        return Gst.Caps.from_string(
            f"application/x-rtp,media=video,clock-rate=90000,encoding-name=VP8,payload={PT_VP8},"
            f"extmap-{EXT_TRANSPORT_CC}=(string){TWCC_URI},"
            # As an SDP's a=rtcp-fb lines would say (RFC 4585 §4.2): NACK and PLI.
            "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true"
        )
    if pt == PT_VP8_RTX:
        return Gst.Caps.from_string(
            f"application/x-rtp,media=video,clock-rate=90000,encoding-name=RTX,payload={PT_VP8_RTX},apt={PT_VP8}"
        )
    return None


class Receiver:
    def __init__(
        self,
        rtcp_to: tuple[str, int],
        latency_ms: int,
        rtcp_interval_ms: int,
        twcc_interval_ms: int,
        request_keyframe: bool,
        jitterbuffer_props: dict,
    ):
        self.jitterbuffer_props = jitterbuffer_props
        self.counts = {"depayloaded_frames": 0, "decoded_frames": 0, "key_frames": 0}
        self.first_decoded = None
        self.last_decoded = None
        self.messages: list[str] = []
        self.media_ssrc = None
        self.jitterbuffers: list[Gst.Element] = []
        # The decoding chain, made now so a missing element is an error before
        # the ready line (a callback's exception would be lost); linked when
        # the media stream's pad appears.
        # A loss it cannot repair asks for a key frame (PLI), as a WebRTC receiver
        # does. GStreamer 1.22 also asks once as the stream starts: its first
        # buffer is a discontinuity.
        self.depay = make("rtpvp8depay", request_keyframe=request_keyframe)
        self.dec = make("vp8dec")
        self.sink = make("fakesink", sync=False, async_=False)
        p = Gst.Pipeline.new("peer")
        self.pipeline = p
        # NACK on (do-retransmission); lost packets told downstream (do-lost), so
        # the depayloader drops the broken frame and asks for a key frame (PLI).
        self.rtpbin = make("rtpbin", latency=latency_ms, do_retransmission=True, do_lost=True)
        self.rtpbin.set_property("rtp-profile", "avpf")
        self.rtp_src = make(
            "udpsrc", address="127.0.0.1", port=0, caps=caps_for(PT_VP8), buffer_size=4 * 1024 * 1024
        )
        self.rtcp_src = make("udpsrc", address="127.0.0.1", port=0, caps=Gst.Caps.from_string("application/x-rtcp"))
        self.rtcp_sink = make(
            "udpsink", host=rtcp_to[0], port=rtcp_to[1], sync=False, async_=False, close_socket=False
        )
        for e in (self.rtpbin, self.rtp_src, self.rtcp_src, self.rtcp_sink):
            p.add(e)
        self.rtpbin.connect("request-pt-map", lambda _bin, _sess, pt: caps_for(pt))
        self.rtpbin.connect("request-aux-receiver", self.aux_receiver)
        self.rtpbin.connect("new-jitterbuffer", self.new_jitterbuffer)
        self.rtpbin.connect("pad-added", self.pad_added)
        link(self.rtp_src.get_static_pad("src"), self.rtpbin.request_pad_simple("recv_rtp_sink_0"))
        link(self.rtcp_src.get_static_pad("src"), self.rtpbin.request_pad_simple("recv_rtcp_sink_0"))
        link(self.rtpbin.request_pad_simple("send_rtcp_src_0"), self.rtcp_sink.get_static_pad("sink"))
        # Regular RTCP (the RR) once a second, as a WebRTC video receiver sends
        # it (GStreamer's own default is 5 s); feedback goes early (AVPF).
        session = self.rtpbin.emit("get-internal-session", 0)
        session.set_property("rtcp-min-interval", rtcp_interval_ms * 1_000_000)
        # Transport-wide feedback every `twcc_interval_ms`: 100 ms by default, the
        # receive side's default in libwebrtc (RemoteEstimatorProxy, which adapts it
        # within 50-250 ms to the rate). 0: GStreamer's own rule, one per frame (at
        # each marker bit), which in one measured 12 s run left its regular RTCP
        # without a single report block.
        if twcc_interval_ms > 0:
            session.set_property("twcc-feedback-interval", twcc_interval_ms * 1_000_000)
        bus = p.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)

    def new_jitterbuffer(self, _rtpbin, jb: Gst.Element, _session: int, _ssrc: int) -> None:
        for name, value in self.jitterbuffer_props.items():
            jb.set_property(name, value)
        self.jitterbuffers.append(jb)

    def aux_receiver(self, _rtpbin, session: int) -> Gst.Element:
        # RFC 4588: RTX on its own SSRC and payload type (the map goes from the
        # media's payload type to its RTX one).
        rtx = make("rtprtxreceive")
        rtx.set_property(
            "payload-type-map",
            Gst.Structure.new_from_string(f"pt-map,{PT_VP8}=(uint){PT_VP8_RTX},{PT_MODEL}=(uint){PT_PADDING_RTX}"),
        )
        b = Gst.Bin.new(f"rtx{session}")
        b.add(rtx)
        b.add_pad(Gst.GhostPad.new(f"sink_{session}", rtx.get_static_pad("sink")))
        b.add_pad(Gst.GhostPad.new(f"src_{session}", rtx.get_static_pad("src")))
        return b

    def pad_added(self, _rtpbin, pad: Gst.Pad) -> None:
        name = pad.get_name()
        if not name.startswith("recv_rtp_src_"):
            return
        # recv_rtp_src_<session>_<ssrc>_<pt>
        parts = name.split("_")
        if len(parts) >= 6 and parts[5] != str(PT_VP8):
            return
        if self.media_ssrc is not None:
            return
        self.media_ssrc = int(parts[4])
        depay, dec, sink = self.depay, self.dec, self.sink
        for e in (depay, dec, sink):
            self.pipeline.add(e)
        depay.link(dec)
        dec.link(sink)
        depay.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, self.on_depayloaded)
        dec.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, self.on_decoded)
        for e in (depay, dec, sink):
            e.sync_state_with_parent()
        link(pad, depay.get_static_pad("sink"))

    def on_depayloaded(self, _pad, info):
        self.counts["depayloaded_frames"] += 1
        buf = info.get_buffer()
        if buf is not None and not buf.has_flags(Gst.BufferFlags.DELTA_UNIT):
            self.counts["key_frames"] += 1
        return Gst.PadProbeReturn.OK

    def on_decoded(self, _pad, _info):
        self.counts["decoded_frames"] += 1
        now = time.monotonic_ns()
        if self.first_decoded is None:
            self.first_decoded = now
        self.last_decoded = now
        return Gst.PadProbeReturn.OK

    def on_message(self, _bus, msg: Gst.Message) -> None:
        if msg.type in (Gst.MessageType.ERROR, Gst.MessageType.WARNING):
            err, _ = msg.parse_error() if msg.type == Gst.MessageType.ERROR else msg.parse_warning()
            src = msg.src.get_name() if msg.src else "?"
            if len(self.messages) < 50:
                self.messages.append(f"{msg.type.first_value_nick} {src}: {err.message}")

    def start(self) -> dict:
        # Its RTCP leaves from the socket it reads RTCP on (one address each
        # way): that socket exists once the source is READY, before the sink opens.
        if self.rtcp_src.set_state(Gst.State.READY) == Gst.StateChangeReturn.FAILURE:
            fail("the RTCP socket would not open")
        self.rtcp_sink.set_property("socket", self.rtcp_src.get_property("used-socket"))
        if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            fail("the pipeline would not start")
        return {
            "ready": True,
            "rtp": f"127.0.0.1:{self.rtp_src.get_property('port')}",
            "rtcp": f"127.0.0.1:{self.rtcp_src.get_property('port')}",
            "version": Gst.version_string(),
        }

    def report(self) -> dict:
        try:
            return self._report()
        except Exception as e:  # noqa: BLE001 - one JSON line, whatever broke
            fail(f"its statistics could not be read: {type(e).__name__}: {e}")

    def _report(self) -> dict:
        out = dict(self.counts)
        out["version"] = Gst.version_string()
        out["decode_span_s"] = (
            (self.last_decoded - self.first_decoded) / 1e9 if self.first_decoded is not None else None
        )
        out["first_decoded_monotonic_ns"] = self.first_decoded
        out["media_ssrc"] = self.media_ssrc
        session = self.rtpbin.emit("get-internal-session", 0)
        sources = []
        if session is not None:
            stats = session.get_property("stats")
            arr = stats.get_value("source-stats") if stats is not None else None
            for s in arr or []:
                d = structure_dict(s)
                if d.get("internal"):
                    continue
                sources.append(d)
        out["sources"] = sources
        out["jitterbuffers"] = [structure_dict(jb.get_property("stats")) for jb in self.jitterbuffers]
        out["messages"] = self.messages
        return out

    def stop(self) -> None:
        self.pipeline.set_state(Gst.State.NULL)


def make(factory: str, **props) -> Gst.Element:
    e = Gst.ElementFactory.make(factory)
    if e is None:
        fail(f"GStreamer element {factory} is missing: install gstreamer1.0-plugins-good")
    for k, v in props.items():
        e.set_property(k.rstrip("_").replace("_", "-"), v)
    return e


def link(src: Gst.Pad, sink: Gst.Pad) -> None:
    r = src.link(sink)
    if r != Gst.PadLinkReturn.OK:
        fail(f"could not link {src.get_name()} to {sink.get_name()}: {r.value_nick}")


def jitterbuffer_props(items: list[str]) -> dict:
    """``PROP=VALUE`` items as rtpjitterbuffer properties, each checked against the
    element's own (name and type) before anything starts."""
    probe = make("rtpjitterbuffer")
    props = {}
    for item in items:
        name, sep, text = item.partition("=")
        spec = probe.find_property(name) if sep else None
        if spec is None:
            fail(f"--jitterbuffer {item!r}: rtpjitterbuffer has no property {name!r} (give PROP=VALUE)")
        kind = spec.value_type
        try:
            if kind == GObject.TYPE_BOOLEAN:
                if text.lower() not in ("true", "false"):
                    raise ValueError("not true or false")
                value = text.lower() == "true"
            elif kind in (GObject.TYPE_INT, GObject.TYPE_UINT, GObject.TYPE_INT64, GObject.TYPE_UINT64):
                value = int(text)
            elif kind == GObject.TYPE_DOUBLE:
                value = float(text)
            else:
                value = text
            probe.set_property(name, value)
        except (ValueError, TypeError, OverflowError) as e:
            fail(f"--jitterbuffer {item!r}: {e}")
        props[name] = value
    return props


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtcp-to", type=host_port, required=True)
    ap.add_argument("--latency", type=int, default=200, help="jitter buffer latency, ms (rtpbin's default)")
    ap.add_argument("--rtcp-interval", type=int, default=1000, help="regular RTCP (RR) interval, ms")
    ap.add_argument(
        "--twcc-interval", type=int, default=100, help="transport-wide feedback interval, ms (0: one per frame)"
    )
    ap.add_argument(
        "--request-keyframe",
        choices=("true", "false"),
        default="true",
        help="ask for a key frame (PLI) on a loss it cannot repair, and once at the start",
    )
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument(
        "--jitterbuffer",
        action="append",
        default=[],
        metavar="PROP=VALUE",
        help="a property of each rtpjitterbuffer, e.g. rtx-next-seqnum=false (repeatable)",
    )
    args = ap.parse_args()
    # The run stops it (its standard input closes); Ctrl-C is the run's.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    Gst.init(None)
    props = jitterbuffer_props(args.jitterbuffer)
    if args.latency < 0 or args.rtcp_interval <= 0 or args.twcc_interval < 0:
        fail("--latency and --twcc-interval must be at least 0, --rtcp-interval above 0")
    r = Receiver(
        args.rtcp_to, args.latency, args.rtcp_interval, args.twcc_interval, args.request_keyframe == "true", props
    )
    print(json.dumps(r.start()), flush=True)
    loop = GLib.MainLoop()

    def on_stdin(_fd, _cond) -> bool:
        line = sys.stdin.readline()
        if line == "" or line.strip() == "stop":
            loop.quit()
            return False
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    GLib.timeout_add(int(args.max_seconds * 1000), lambda: loop.quit() or False)
    loop.run()
    out = r.report()
    r.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
