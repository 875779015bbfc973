"""Video files around the simulator: default photographs for generated
content, container files (MP4, MKV, WebM, ...) converted to Y4M for the native
reader, and the saved received video turned into MP4.

PyAV is used only for file formats. The codecs in the simulated call are
driven through libvpx's and OpenH264's own APIs by the native module, because
FFmpeg ignores bitrate changes on an open encoder.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

# Content files the native reader takes as they are.
NATIVE_EXTENSIONS = frozenset({".y4m", ".yuv"})


class MediaError(ValueError):
    """A media file that cannot be read or written; the message names it."""


def photo_dir() -> str | None:
    """scikit-image's folder of sample photographs, if it is installed."""
    try:
        import skimage
    except ImportError:
        return None
    d = Path(skimage.__file__).parent / "data"
    return str(d) if (d / "astronaut.png").is_file() else None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    d = Path(base) / "rtcc" / "media"
    d.mkdir(parents=True, exist_ok=True)
    return d


def to_y4m(path: Path, max_seconds: float | None = None) -> Path:
    """Decode a container file to an I420 Y4M in the cache (once per file
    content, modification time and length) and return the Y4M's path.
    ``max_seconds`` stops after that much video: the simulator loops the
    file anyway, and a whole HD film as raw Y4M would fill the disk."""
    st = path.stat()
    ident = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}:{max_seconds}"
    key = hashlib.sha1(ident.encode()).hexdigest()[:16]
    out = cache_dir() / f"{path.stem}-{key}.y4m"
    if out.is_file():
        return out
    try:
        import av
    except ImportError as exc:
        raise MediaError(
            f"{path}: reading {path.suffix} files needs PyAV (pip install av)"
        ) from exc
    # A private temporary name: parallel runs may convert the same file.
    tmp = out.with_suffix(f".{os.getpid()}.part")
    try:
        with av.open(str(path)) as inp:
            if not inp.streams.video:
                raise MediaError(f"{path}: no video stream")
            vs = inp.streams.video[0]
            rate = vs.average_rate or vs.guessed_rate or 30
            num, den = rate.numerator, rate.denominator
            with tmp.open("wb") as f:
                header = False
                size: tuple[int, int] | None = None
                limit = None if max_seconds is None else math.ceil(max_seconds * num / den) + 1
                for n, frame in enumerate(inp.decode(vs)):
                    if limit is not None and n >= limit:
                        break
                    # Y4M has one picture size: later frames are scaled to the first's.
                    size = size or (frame.width, frame.height)
                    img = frame.reformat(width=size[0], height=size[1], format="yuv420p")
                    w, h = img.width, img.height
                    if not header:
                        f.write(f"YUV4MPEG2 W{w} H{h} F{num}:{den} Ip A1:1 C420jpeg\n".encode())
                        header = True
                    f.write(b"FRAME\n")
                    cw, ch = (w + 1) // 2, (h + 1) // 2
                    for i, (pw, ph) in enumerate([(w, h), (cw, ch), (cw, ch)]):
                        plane = img.planes[i]
                        buf = memoryview(plane)
                        for row in range(ph):
                            start = row * plane.line_size
                            f.write(buf[start : start + pw])
                if not header:
                    raise MediaError(f"{path}: no decodable video frames")
        tmp.replace(out)
    except MediaError:
        tmp.unlink(missing_ok=True)
        raise
    except Exception as exc:  # PyAV raises its own error family
        tmp.unlink(missing_ok=True)
        raise MediaError(f"{path}: cannot decode: {exc}") from exc
    return out


def media_map(
    flows: list[dict[str, Any]], base: Path, max_seconds: float | None = None
) -> dict[str, str]:
    """Y4M stand-ins for every flow content file in a container format."""
    out: dict[str, str] = {}
    for fl in flows:
        c = fl.get("content")
        if not isinstance(c, dict) or not isinstance(c.get("file"), str):
            continue
        p = base / c["file"]
        if p.suffix.lower() in NATIVE_EXTENSIONS or not p.is_file():
            continue  # the native parser reports missing files itself
        out[str(p.resolve())] = str(to_y4m(p, max_seconds))
    return out


def to_mp4(src: Path, dst: Path, fps: float) -> Path:
    """Re-encode a saved elementary stream (H.264 Annex B or VP8 IVF) as an
    H.264 MP4 that any player opens; the intermediate file is removed."""
    try:
        import av
    except ImportError as exc:
        raise MediaError(f"{dst}: writing MP4 needs PyAV (pip install av)") from exc
    fmt = "h264" if src.suffix == ".h264" else "ivf"
    from fractions import Fraction

    rate = Fraction(fps).limit_denominator(1001)
    try:
        with av.open(str(src), format=fmt) as inp, av.open(str(dst), "w") as out:
            ost = None
            for n, frame in enumerate(inp.decode(video=0)):
                if ost is None:
                    ost = out.add_stream("libx264", rate=rate)
                    ost.width, ost.height = frame.width, frame.height
                    ost.pix_fmt = "yuv420p"
                    ost.options = {"crf": "18", "preset": "veryfast"}
                frame.pts = n
                frame.time_base = 1 / rate
                for pkt in ost.encode(frame):
                    out.mux(pkt)
            if ost is not None:
                for pkt in ost.encode():
                    out.mux(pkt)
    except Exception as exc:
        raise MediaError(f"{dst}: cannot write MP4: {exc}") from exc
    src.unlink(missing_ok=True)
    return dst


def scenario_media_map(text: str, source: str) -> dict[str, str]:
    """``media_map`` for a scenario's text; relative paths against its file.
    Only as much of each file as the call lasts is converted."""
    from rtcc import native
    from rtcc.scenario import peek

    base = Path(source).parent if not source.startswith("<") else Path()
    data = peek(text)
    flows = data.get("flow", [])
    if not any(isinstance(f, dict) and isinstance(f.get("content"), dict) for f in flows or []):
        return {}
    try:  # the scenario parser reports a bad duration; here it only bounds the conversion
        seconds: float | None = native().parse_quantity(data.get("duration"), "duration")
    except (ValueError, TypeError):
        seconds = None
    return media_map(flows if isinstance(flows, list) else [], base, seconds)
