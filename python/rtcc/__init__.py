"""rtcc: a congestion-control workbench for real-time video.

>>> import rtcc
>>> result = rtcc.simulate("scenarios/demo.toml", seed=3)  # doctest: +SKIP
>>> result.frames.groupby("flow")["latency_ms"].describe()  # doctest: +SKIP
>>> result.save("results/demo")  # doctest: +SKIP

The simulator itself is the native module ``rtcc._rtcc`` (Rust); this package
turns scenarios into text for it and its output into pandas tables, plots and a
report. Native names (``ScenarioError``, ``controllers`` …) are loaded on first
use, so the pure-Python parts import even where the extension is not built, and
pandas is loaded only when a result is built, so the CLI starts quickly.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rtcc.scenario import ScenarioLike, dumps_toml, load_scenario

if TYPE_CHECKING:
    from rtcc._rtcc import (
        ScenarioError,
        Simulation,
        bench,
        controllers,
        default_scenario,
        encoders,
    )
    from rtcc.comparison import compare
    from rtcc.console import Bar
    from rtcc.dataset import query
    from rtcc.result import FRAME_STATUS, PACKET_KINDS, Result
    from rtcc.runset import load_runs
    from rtcc.sweeprun import sweep

try:
    __version__ = metadata.version("rtcc")
except metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "FRAME_STATUS",
    "PACKET_KINDS",
    "Result",
    "ScenarioError",
    "Simulation",
    "__version__",
    "bench",
    "compare",
    "controllers",
    "default_scenario",
    "dumps_toml",
    "encoders",
    "live",
    "load_runs",
    "load_scenario",
    "query",
    "register_controller",
    "simulate",
    "sweep",
]

_NATIVE_NAMES = frozenset(
    {"ScenarioError", "Simulation", "bench", "controllers", "default_scenario", "encoders"}
)

# Progress is reported this many times per run; each is one run_until() call.
PROGRESS_STEPS = 100
# With tables written as the run goes: simulated seconds between checks of how many
# rows are waiting.
STREAM_SLICE_S = 10.0

ProgressCallback = Callable[[float, float], None]


def native() -> ModuleType:
    """The compiled simulator module, with a clear error if it was never built."""
    try:
        from rtcc import _rtcc
    except ImportError as exc:
        # Built, but a system library it links is missing (a wheel on a machine without
        # libvpx or OpenH264): the loader's message names the library.
        if "cannot open shared object file" in str(exc):
            raise ImportError(f"rtcc's native module rtcc._rtcc cannot load: {exc}") from exc
        raise ImportError(
            "rtcc's native module rtcc._rtcc is not built; "
            "install with `pip install -e .` or `maturin develop`"
        ) from exc
    return _rtcc


_RESULT_NAMES = frozenset({"FRAME_STATUS", "PACKET_KINDS", "Result"})


def __getattr__(name: str) -> Any:
    if name in _NATIVE_NAMES:
        return getattr(native(), name)
    if name in _RESULT_NAMES:
        from rtcc import result

        return getattr(result, name)
    if name == "sweep":
        # Imported on first use: it pulls in pandas, which the CLI's start-up avoids.
        from rtcc.sweeprun import sweep

        return sweep
    if name == "compare":
        from rtcc.comparison import compare

        return compare
    if name == "load_runs":
        from rtcc.runset import load_runs

        return load_runs
    if name == "query":
        from rtcc.dataset import query

        return query
    if name == "register_controller":
        from rtcc.pycontrollers import register_controller

        return register_controller
    raise AttributeError(f"module 'rtcc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(
        set(globals())
        | _NATIVE_NAMES
        | _RESULT_NAMES
        | {"sweep", "compare", "load_runs", "query", "register_controller"}
    )


def simulate(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    source: str | None = None,
    record_packets: bool = True,
    progress: bool | ProgressCallback = False,
    save_video: str | os.PathLike[str] | None = None,
    tables_dir: str | os.PathLike[str] | None = None,
) -> Result:
    """Run one scenario to completion and return its :class:`Result`.

    ``scenario`` is a path to a TOML file, TOML text (any string containing a
    newline or ``=``) or a dict in the scenario layout. ``seed`` overrides the
    scenario's seed. ``source`` names the scenario in error messages (default:
    the path, ``<scenario>`` for text, ``<dict>`` for dicts). ``progress`` is
    ``True`` for a bar with the time left on stderr (drawn only on a terminal) or a
    callable taking ``(simulated_s, duration_s)``.

    ``save_video`` is a folder: every flow with a real codec (``encoder =
    "vp8"`` or ``"h264"``) writes ``<flow>.received.mp4`` (the screen at each
    frame instant, freezes included) and ``<flow>.side_by_side.mp4`` (source
    beside it, labelled with controller and target bitrate) there.

    ``tables_dir`` is a folder: the four tables are written there as
    ``<table>.parquet`` while the run goes on, so memory stays flat however long
    the call, and the result reads them from there when they are used.

    Raises :class:`ScenarioError` for a scenario the simulator refuses, and the
    usual ``OSError``/``UnicodeDecodeError`` when a path cannot be read.
    """
    from rtcc import media
    from rtcc.result import Result

    seed = _check_seed(seed)
    if not isinstance(record_packets, bool):
        raise TypeError(f"record_packets must be True or False, not {_kind(record_packets)}")
    if not isinstance(progress, bool) and not callable(progress):
        raise TypeError(
            f"progress must be True, False or a callable (simulated_s, duration_s), "
            f"not {_kind(progress)}"
        )
    if save_video is not None and not isinstance(save_video, (str, os.PathLike)):
        raise TypeError(f"save_video must be a folder path or None, not {_kind(save_video)}")
    if tables_dir is not None and not isinstance(tables_dir, (str, os.PathLike)):
        raise TypeError(f"tables_dir must be a folder path or None, not {_kind(tables_dir)}")
    loaded = load_scenario(scenario, source)
    video_dir = None
    if save_video is not None:
        _check_video_names(loaded)
        video_dir = Path(save_video)
        video_dir.mkdir(parents=True, exist_ok=True)
    sim = native().Simulation(
        loaded.text,
        loaded.source,
        seed,
        record_packets,
        media.photo_dir(),
        None if video_dir is None else str(video_dir),
        media.scenario_media_map(loaded.text, loaded.source),
    )

    bar: Bar | None = None
    callback: ProgressCallback | None
    if progress is True:
        from rtcc.console import Bar  # rich: loaded only to draw

        bar = Bar(loaded.stem or "")
        callback = bar
    else:
        callback = progress or None

    stream = None
    if tables_dir is not None:
        from rtcc.tablestream import TableStream

        stream = TableStream(Path(tables_dir))
        # The simulator pauses once a batch of packet rows is held, however
        # fast packets come, so the rows are taken before more pile up.
        sim.set_pause_rows(stream.rows_per_batch)
    duration = float(sim.duration_s)
    reached = 0.0
    try:
        for step in range(1, PROGRESS_STEPS + 1):
            until = duration if step == PROGRESS_STEPS else duration * step / PROGRESS_STEPS
            if stream is None:
                more = sim.run_until(until)
            else:
                # Slices of bounded simulated time, so a batch stays near its size
                # however long the call.
                while True:
                    reached = min(until, reached + STREAM_SLICE_S)
                    while True:
                        more = sim.run_until(reached)
                        if sim.pending_rows >= stream.rows_per_batch:
                            stream.add(sim.take_tables())
                        if not (more and sim.paused):
                            break
                    if not more or reached >= until:
                        break
            if callback is not None:
                callback(min(float(sim.now_s), duration), duration)
            if not more:
                break
        streams = [(Path(p), float(fps)) for p, fps in sim.video_files()]
        try:
            out = sim.finish()
        except RuntimeError:
            for raw, _ in streams:
                raw.unlink(missing_ok=True)
            raise
        if stream is not None:
            stream.finish(out["tables"])
    except BaseException:
        if stream is not None:
            stream.abandon()
        raise
    finally:
        if bar is not None:
            bar.close()
    result = Result.from_native(out, loaded.text, loaded.source, tables_dir)
    for raw, fps in streams:
        # <flow>.received.h264 -> <flow>.received.mp4
        media.to_mp4(raw, raw.with_suffix(".mp4"), fps)
    return result


def live(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    source: str | None = None,
    bottleneck: str = "auto",
    fallback: bool = False,
    peer: str | None = None,
    peer_options: dict | None = None,
) -> Result:
    """Run one scenario live: each flow's ends on UDP sockets of their own, in
    real time (the scenario's duration of wall time), through rtcc's emulated
    bottleneck (the scenario's ``[link]``, the simulator's own link, queue, trace and
    path objects). The result is the same as :func:`simulate`'s, with
    ``summary["live"]``: timer lateness percentiles, socket drops, undecodable and
    refused datagrams, the host's load. Ctrl-C stops the run where it is; the result
    then covers the time up to there and ``summary["live"]["interrupted"]`` is true.

    ``bottleneck``: ``"udp"`` puts the emulator on two loopback UDP sockets the ends
    address (no privilege needed); ``"tun"`` puts it between two TUN devices in two
    network namespaces of the run's own (root, or CAP_SYS_ADMIN and CAP_NET_ADMIN), where it sees IP
    packets and ``kind = "tcp"`` and ``"web"`` flows are the kernel's own TCP with the scenario's
    ``cc`` (``summary["live"]["tcp"]`` says what the kernel gave); ``"auto"``: TUN
    when the scenario has TCP flows, UDP otherwise. Where TUN is wanted and the
    machine does not allow it, the run is refused, saying why, unless ``fallback``:
    then it runs on UDP without its TCP flows, named in ``summary["live"]["left_out"]``.

    A real codec (``encoder = "vp8" | "h264"``) encodes on a thread of its own, fed by
    a camera clock; ``summary["live"]["encoders"]`` gives its encode times and the
    captures it could not take in time. A ``kind = "web"`` flow is the kernel's TCP
    carrying the simulator's web-like downloads (TUN form). A reverse flow is refused
    with a :class:`ScenarioError` naming the flow.

    ``peer="gstreamer"``: every video flow's receiving end is GStreamer's RTP stack
    (one process per flow, UDP form; it needs ``encoder = "vp8"`` and transport-wide
    feedback). Its RTCP — receiver reports, NACK, PLI, transport-wide feedback —
    drives rtcc's sending end; ``summary["live"]["peers"]`` gives what it sent and
    decoded, each receiver report beside rtcc's own RFC 3550 statistics of the same
    stream. The frame metrics are rtcc's receiving end's, fed the same datagrams.
    ``peer_options``: the peer's settings (:func:`rtcc.peers.command`), e.g.
    ``{"rtx-next-seqnum": False}``.
    """
    from rtcc import media
    from rtcc.result import Result

    seed = _check_seed(seed)
    loaded = load_scenario(scenario, source)
    if bottleneck not in ("auto", "udp", "tun"):
        raise ValueError(f"bottleneck: {bottleneck!r} is not one of 'auto', 'udp', 'tun'")
    peer_command = None
    if peer is not None:
        from rtcc import peers

        peer_command = (peer, peers.command(peer, peer_options))
    elif peer_options:
        raise ValueError("peer_options: given without a peer")
    out = native().live(
        loaded.text,
        loaded.source,
        seed,
        media.scenario_media_map(loaded.text, loaded.source),
        bottleneck,
        bool(fallback),
        peer_command,
    )
    return Result.from_native(out, loaded.text, loaded.source)


_MAX_SEED = 2**64 - 1


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def _check_seed(seed: object) -> int | None:
    """``seed`` as an int in 0..2^64-1 (None: the scenario's); bools and floats are refused."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"seed must be an integer in 0..2^64-1 or None, not {_kind(seed)}")
    value = int(seed.__index__())
    if not 0 <= value <= _MAX_SEED:
        raise ValueError(f"seed must be in 0..2^64-1, not {value}")
    return value


def _check_video_names(loaded: Any) -> None:
    """Saved videos are named after their flows (``<flow>.received.mp4``): every flow
    name must be file-name safe, so no file lands outside the video folder."""
    from rtcc.limits import file_name_error
    from rtcc.scenario import peek, toml_module

    if toml_module() is None:
        raise ValueError("saving video needs Python 3.11+ or the tomli package")
    flows = peek(loaded.text).get("flow", [])
    for i, flow in enumerate(flows if isinstance(flows, list) else [flows]):
        if isinstance(flow, dict) and "name" in flow:
            why = file_name_error(flow["name"])
            if why is not None:
                raise ValueError(
                    f"{loaded.source}: flow[{i}].name: {why}; saved videos are named after flows"
                )
