"""``rtcc calibrate-encoder --content``: the ``content`` encoder model's
``static`` and ``dynamic`` profiles, measured from x264 at a fixed target as
BurstRTC measured its bit-rate variation (burstrtc.txt §II-B, Fig. 2: 1080p
at 30 fps, a 4 Mbps target, preset faster, tune zerolatency, intra-refresh,
everything else default; a dynamic video varied from 2 to 6 Mbps).

The videos are rtcc's generated content spliced into scenes (the papers'
films and game recordings are not redistributable):

- **static** (animation-like, little motion): long scenes of a talking head
  at different speeds and slow pans over a still scene;
- **dynamic** (game-like, frequent scene changes): short scenes of game pans
  from idle (a map or menu drifting) to fast, and a talking head (a
  cut-scene), as a game stream alternates them. A perfectly still picture is
  left out: rendered without noise it costs x264 nothing, which no camera or
  game stream does.

Scene lengths are exponential (a Poisson process of cuts, the model's own
assumption) with the profile's mean. Each frame's ITU-T P.910 SI/TI is
computed from the source picture (``si_ti.rs``), and every frame is encoded
three times with x264 through PyAV:

1. at a constant QP, with an IDR forced every few seconds: the content's cost
   at a fixed quantizer, against which the model's complexity
   ``(TI + ti_floor) · (SI/50)^si_exp`` is fitted (least squares in logs),
   with ``cut_ratio`` (a scene's first frame) as a median, and
   ``sigma``/``sigma_tau`` from what is left (its spread and lag-1
   autocorrelation);
2. in one-pass ABR at the target, as the paper's encoder ran: its 1 s
   bitrates are the variation to reproduce, and the rate control's
   ``gamma``, ``rc_buffer`` and ``rc_memory`` are the values with which the
   model's own rate control (``content_rates``, the Rust code) turns the
   constant-QP sizes into these ABR sizes best, over a trailing 1 s window;
3. in ABR again with the IDRs of pass 1 forced (as a receiver's key-frame
   requests would): ``key_ratio`` is an IDR over the frames before it.

The track's constants come from the SI/TI of the spliced content: scene
levels (log-means per scene: median and spread), the variation within scenes
(log-std and its lag-1 autocorrelation as a correlation time) and the TI of
cut frames. Finally the fitted model runs at the target (``content_model``)
and its 1 s bitrates are set beside x264's.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rtcc import media, native
from rtcc.console import ProgressCallback, Steps
from rtcc.limits import atomic_path, write_atomic
from rtcc.scenario import dumps_toml

FPS = 30.0
# BurstRTC §II-B: 4 Mbps at 1080p. Other resolutions get the same bits per
# pixel.
TARGET_BPS = 4_000_000
PAPER_PIXELS = 1920 * 1080
# The constant-QP pass: a quantizer in the range x264's ABR chooses at
# 0.064 bit/pixel on this content.
QP = 30
X264_OPTIONS = {"preset": "faster", "tune": "zerolatency", "intra-refresh": "1"}
# An IDR forced in the constant-QP pass every this many seconds (not on a cut).
KEY_EVERY_S = 4.0
# The shortest rate-control buffer fitted: x264's abr_buffer at the start,
# 2 · rate_tolerance (1.0) seconds of the target (ratecontrol.c).
RC_BUFFER_MIN_S = 2.0
# Frames left out of the fits at the start (the first IDR, rate control warm-up).
WARMUP_S = 2.0
RES = {"360p": (640, 360), "720p": (1280, 720), "1080p": (1920, 1080)}


@dataclass(frozen=True)
class Mix:
    """A profile's stand-in content: mean scene length and the scene kinds
    drawn (content kind, speed: 1 = as generated, 0.5 = half as fast)."""

    scene_s: float
    kinds: tuple[tuple[str, float], ...]


MIXES = {
    "static": Mix(
        8.0,
        (
            ("talking-head", 0.5),
            ("talking-head", 1.0),
            ("talking-head", 2.0),
            ("game", 0.05),
            ("game", 0.1),
        ),
    ),
    "dynamic": Mix(
        3.0,
        (
            ("game", 0.25),
            ("game", 0.5),
            ("game", 1.0),
            ("game", 1.5),
            ("game", 2.0),
            ("game", 0.05),
            ("talking-head", 1.0),
        ),
    ),
}


@dataclass(frozen=True)
class Scene:
    kind: str
    speed: float
    seed: int
    start: int
    frames: int


def scenes(mix: Mix, seconds: float, seed: int) -> list[Scene]:
    """Scenes of exponential length covering ``seconds``, each a kind from the
    mix with its own content seed and start."""
    rng = np.random.default_rng(seed)
    n = round(seconds * FPS)
    out: list[Scene] = []
    while sum(s.frames for s in out) < n:
        kind, speed = mix.kinds[int(rng.integers(len(mix.kinds)))]
        length = max(1, round(rng.exponential(mix.scene_s) * FPS))
        length = min(length, n - sum(s.frames for s in out))
        out.append(
            Scene(kind, speed, int(rng.integers(1, 1 << 30)), int(rng.integers(0, 9000)), length)
        )
    return out


def _frames(scene: Scene, resolution: str, photos: str | None) -> Iterator[bytes]:
    """The scene's pictures (I420), generated in chunks."""
    content = (
        f'{{ kind = "{scene.kind}", resolution = "{resolution}", seed = {scene.seed % 1000} }}'
    )
    # Frame i of content made at FPS/speed is t = i·speed/FPS: `speed` times the motion.
    fps = FPS / scene.speed
    done = 0
    while done < scene.frames:
        k = min(60, scene.frames - done)
        _, _, chunk = native().content_frames(content, fps, scene.start + done, k, photos)
        yield from chunk
        done += k


class _X264:
    """x264 through PyAV, one frame in, the sizes of whatever came out."""

    def __init__(self, w: int, h: int, bit_rate: int | None, qp: int | None) -> None:
        import av

        self.av = av
        self.out = av.open("/dev/null", "w", format="h264")
        self.st = self.out.add_stream("libx264", rate=int(FPS))
        self.st.width, self.st.height, self.st.pix_fmt = w, h, "yuv420p"
        opts: dict[str, str] = dict(X264_OPTIONS)
        if qp is not None:
            opts["qp"] = str(qp)
        else:
            self.st.bit_rate = bit_rate
        self.st.options = opts  # type: ignore[assignment]
        self.w, self.h, self.i = w, h, 0
        self.sizes: list[int] = []

    def encode(self, raw: bytes, idr: bool = False) -> None:
        arr = np.frombuffer(raw, np.uint8).reshape(self.h * 3 // 2, self.w)
        vf = self.av.VideoFrame.from_ndarray(arr, format="yuv420p")
        vf.pts = self.i
        if idr:
            vf.pict_type = self.av.video.frame.PictureType.I
        self.i += 1
        self.sizes += [p.size for p in self.st.encode(vf)]

    def close(self) -> list[int]:
        self.sizes += [p.size for p in self.st.encode()]
        self.out.close()
        return self.sizes


def x264_available() -> str | None:
    """Why x264 through PyAV cannot run here, or None."""
    try:
        import av
    except ImportError:
        return "PyAV is not installed (pip install av)"
    try:
        av.codec.Codec("libx264", "w")
    except Exception as exc:  # PyAV raises its own error types per version
        return f"PyAV has no libx264 encoder ({exc})"
    return None


def measure(
    profile: str, resolution: str, seconds: float, seed: int, photos: str | None
) -> dict[str, Any]:
    """Encode the profile's stand-in content twice (module doc); per-frame
    columns and the scene list."""
    w, h = RES[resolution]
    target = round(TARGET_BPS * w * h / PAPER_PIXELS)
    sc = scenes(MIXES[profile], seconds, seed)
    abr, abr_key, cqp = _X264(w, h, target, None), _X264(w, h, target, None), _X264(w, h, None, QP)
    si, ti, cut, key, scene_of = [], [], [], [], []
    prev: bytes | None = None
    i, next_key = 0, round(KEY_EVERY_S * FPS)
    for k, s in enumerate(sc):
        for j, raw in enumerate(_frames(s, resolution, photos)):
            a, b = native().si_ti(w, h, prev if prev is not None else raw, raw)
            is_cut = j == 0 and k > 0
            idr = i >= next_key and not is_cut
            if idr:
                next_key = i + round(KEY_EVERY_S * FPS)
            abr.encode(raw)
            abr_key.encode(raw, idr)
            cqp.encode(raw, idr)
            si.append(a)
            ti.append(b)
            cut.append(is_cut)
            key.append(idr or i == 0)
            scene_of.append(k)
            prev = raw
            i += 1
    size_abr, size_abr_key, size_cqp = abr.close(), abr_key.close(), cqp.close()
    if not len(size_abr) == len(size_abr_key) == len(size_cqp) == i:
        raise RuntimeError(
            f"x264 returned {len(size_abr)}/{len(size_abr_key)}/{len(size_cqp)} frames for {i}"
        )
    return {
        "profile": profile,
        "resolution": resolution,
        "target_bps": target,
        "scene_s": MIXES[profile].scene_s,
        "scenes": [s.__dict__ for s in sc],
        "size_abr": size_abr,
        "size_abr_key": size_abr_key,
        "size_cqp": size_cqp,
        "si": si,
        "ti": ti,
        "cut": cut,
        "key": key,
        "scene": scene_of,
    }


def _cols(m: dict[str, Any]) -> dict[str, np.ndarray]:
    return {
        k: np.asarray(m[k], float if k not in ("cut", "key") else bool)
        for k in ("size_abr", "size_abr_key", "size_cqp", "si", "ti", "cut", "key", "scene")
    }


def _plain(c: dict[str, np.ndarray]) -> np.ndarray:
    """Frames that are neither a cut nor a key frame, after the warm-up."""
    n = len(c["ti"])
    plain: np.ndarray = (np.arange(n) >= WARMUP_S * FPS) & ~c["cut"] & ~c["key"]
    return plain


def complexity(si: np.ndarray, ti: np.ndarray, ti_floor: float, si_exp: float) -> np.ndarray:
    """The model's complexity (encoder/content.rs), without the cut factor."""
    c: np.ndarray = (ti + ti_floor) * (np.maximum(si, 1e-3) / 50.0) ** si_exp
    return c


def fit_complexity(measured: Sequence[dict[str, Any]]) -> dict[str, float]:
    """ti_floor, si_exp (and the scale, which the model does not need) from
    the constant-QP sizes of every profile's plain frames; then cut_ratio as
    a median."""
    cols = [_cols(m) for m in measured]
    y = np.concatenate([np.log(np.maximum(c["size_cqp"][_plain(c)], 1)) for c in cols])
    si = np.concatenate([c["si"][_plain(c)] for c in cols])
    ti = np.concatenate([c["ti"][_plain(c)] for c in cols])
    best: tuple[float, float, float, float] = (math.inf, 1.0, 0.0, 0.0)
    for floor in np.exp(np.linspace(math.log(0.25), math.log(64.0), 80)):
        rest = y - np.log(ti + floor)
        x = np.log(np.maximum(si, 1e-3) / 50.0)
        if np.ptp(x) > 1e-6:
            a = np.c_[np.ones_like(x), x]
            (scale, slope), *_ = np.linalg.lstsq(a, rest, rcond=None)
            slope = float(np.clip(slope, 0.0, 3.0))
        else:
            slope = 0.0
        scale = float(np.mean(rest - slope * x))
        err = float(np.mean((rest - scale - slope * x) ** 2))
        if err < best[0]:
            best = (err, float(floor), slope, scale)
    err, floor, si_exp, scale = best
    cut_ratios = []
    for c in cols:
        pred = np.exp(scale) * complexity(c["si"], c["ti"], floor, si_exp)
        cut_ratios += list(c["size_cqp"][c["cut"]] / pred[c["cut"]])
    return {
        "ti_floor": floor,
        "si_exp": si_exp,
        "log_scale": scale,
        "rms_log_error": math.sqrt(err),
        "cut_ratio": float(np.clip(np.median(cut_ratios), 1.0, 20.0)) if cut_ratios else 1.0,
        "cuts": len(cut_ratios),
    }


def fit_key(m: dict[str, Any]) -> dict[str, float]:
    """key_ratio: each forced IDR of the ABR pass over the median of the plain
    frames of its scene just before it."""
    c = _cols(m)
    plain = _plain(c)
    ratios = []
    for k in np.flatnonzero(c["key"])[1:]:
        lo = max(0, k - 10)
        before = np.flatnonzero(plain[lo:k] & (c["scene"][lo:k] == c["scene"][k])) + lo
        if len(before) >= 3:
            ratios.append(c["size_abr_key"][k] / np.median(c["size_abr_key"][before]))
    return {
        "key_ratio": float(np.clip(np.median(ratios), 1.0, 20.0)) if ratios else 3.0,
        "keys": len(ratios),
    }


def model_complexity(m: dict[str, Any], cx: dict[str, float]) -> np.ndarray:
    """Each frame's complexity as the model computes it from the measured
    SI/TI (cut frames included)."""
    c = _cols(m)
    base = complexity(c["si"], c["ti"], cx["ti_floor"], cx["si_exp"])
    return base * np.where(c["cut"], cx["cut_ratio"], 1.0)


def abr_relative(m: dict[str, Any]) -> np.ndarray:
    """x264's ABR frame sizes over the per-frame budget; the first frame (its
    IDR, which the fits skip) as the second."""
    y: np.ndarray = np.asarray(m["size_abr"], float) / (m["target_bps"] / FPS / 8)
    y[0] = y[1]
    return y


def fit_rate_control(m: dict[str, Any], cx: dict[str, float]) -> dict[str, Any]:
    """gamma, rc_buffer, rc_memory of one profile: the model's rate control
    (``content_rates``, the Rust code) driven by the model's complexity of
    the measured SI/TI, against x264's ABR sizes; least squares in log size
    over the plain frames, on a grid by coordinate descent."""
    c = _cols(m)
    plain = _plain(c)
    cplx = model_complexity(m, cx).tolist()
    ly = np.log(np.maximum(abr_relative(m), 1e-9))

    def rel(g: float, buf: float, mem: float) -> np.ndarray:
        return np.asarray(native().content_rates(cplx, FPS, g, buf, mem))

    def err(g: float, buf: float, mem: float) -> float:
        return float(np.mean((ly - np.log(rel(g, buf, mem)))[plain] ** 2))

    gammas = np.round(np.arange(0.1, 1.21, 0.05), 3)
    # x264's abr_buffer is 2 s of the target at the start and only grows
    # (with the square root of the time encoded): a shorter buffer would let
    # the rate control soak up what SI/TI do not explain.
    buffers = np.exp(np.linspace(math.log(RC_BUFFER_MIN_S), math.log(60.0), 24))
    memories = np.exp(np.linspace(math.log(0.5), math.log(120.0), 13))
    g, buf, mem = 0.6, 4.0, 20.0
    for _ in range(3):  # each pass over one axis at a time
        g = float(min(gammas, key=lambda v: err(v, buf, mem)))
        buf = float(min(buffers, key=lambda v: err(g, v, mem)))
        mem = float(min(memories, key=lambda v: err(g, buf, v)))
    return {
        "gamma": g,
        "rc_buffer_s": buf,
        "rc_memory_s": mem,
        "rms_log_error": math.sqrt(err(g, buf, mem)),
        "relative": rel(g, buf, mem).tolist(),
    }


def fit_noise(m: dict[str, Any], rc: dict[str, Any]) -> dict[str, float]:
    """sigma and sigma_tau: spread and lag-1 correlation (as a correlation
    time) of what the fitted rate control leaves unexplained in x264's ABR
    sizes, the model's frame-size error."""
    c = _cols(m)
    plain = _plain(c)
    r = np.log(np.maximum(abr_relative(m), 1e-9)) - np.log(np.asarray(rc["relative"]))
    sel = r[plain]
    mu, var = sel.mean(), max(float(np.var(sel)), 1e-12)
    pair = plain[1:] & plain[:-1]
    rho = float(np.mean((r[1:][pair] - mu) * (r[:-1][pair] - mu)) / var)
    rho = float(np.clip(rho, 1e-3, 0.999))
    return {
        "sigma": float(min(np.sqrt(var), 2.0)),
        "sigma_tau_s": -1.0 / FPS / math.log(rho),
        "rho": rho,
    }


def fit_track(m: dict[str, Any]) -> dict[str, float]:
    """The content track's constants from the measured SI/TI (module doc)."""
    c = _cols(m)
    n = len(c["ti"])
    plain = ~c["cut"] & (np.arange(n) > 0)
    lsi = np.log(np.maximum(c["si"], 0.1))
    lti = np.log(np.maximum(c["ti"], 0.1))
    scene_si, scene_ti, w_si, w_ti = [], [], np.full(n, np.nan), np.full(n, np.nan)
    for s in np.unique(c["scene"]):
        sel = plain & (c["scene"] == s)
        if sel.sum() < 2:
            continue
        scene_si.append(lsi[sel].mean())
        scene_ti.append(lti[sel].mean())
        w_si[sel] = lsi[sel] - lsi[sel].mean()
        w_ti[sel] = lti[sel] - lti[sel].mean()
    ok = ~np.isnan(w_ti)
    pair = ok[1:] & ok[:-1] & (c["scene"][1:] == c["scene"][:-1])
    rho = float(np.mean(w_ti[1:][pair] * w_ti[:-1][pair]) / max(np.nanvar(w_ti), 1e-12))
    rho = float(np.clip(rho, 1e-3, 0.999))
    lengths = [s["frames"] / FPS for s in m["scenes"]]
    return {
        "scene_length_s": float(np.mean(lengths)),
        "si": float(np.exp(np.mean(scene_si))),
        "si_spread": float(np.std(scene_si)),
        "ti": float(np.exp(np.mean(scene_ti))),
        "ti_spread": float(np.std(scene_ti)),
        "si_wobble": float(np.nanstd(w_si)),
        "ti_wobble": float(np.nanstd(w_ti)),
        "wobble_tau_s": -1.0 / FPS / math.log(rho),
        "cut_ti": float(np.median(c["ti"][c["cut"]])) if c["cut"].any() else 60.0,
        "scenes": len(lengths),
    }


def constants(
    track: dict[str, float],
    cx: dict[str, float],
    rc: dict[str, float],
    noise: dict[str, float],
    key: dict[str, float],
) -> dict[str, Any]:
    """A profile's constants as the model's parameters (numbers rounded to
    what the measurement supports)."""

    def dur(s: float) -> str:
        return f"{max(1, round(s * 1000))}ms"

    def num(x: float, lo: float, hi: float) -> float:
        return float(f"{min(max(x, lo), hi):.3g}")

    return {
        "scene_length": dur(track["scene_length_s"]),
        "si": num(track["si"], 0.01, 1000),
        "si_spread": num(track["si_spread"], 0, 3),
        "ti": num(track["ti"], 0.01, 255),
        "ti_spread": num(track["ti_spread"], 0, 3),
        "si_wobble": num(track["si_wobble"], 0, 3),
        "ti_wobble": num(track["ti_wobble"], 0, 3),
        "wobble_tau": dur(track["wobble_tau_s"]),
        "cut_ti": num(track["cut_ti"], 0, 255),
        "gamma": num(rc["gamma"], 0, 2),
        "ti_floor": num(cx["ti_floor"], 0.01, 255),
        "si_exp": num(cx["si_exp"], 0, 3),
        "cut_ratio": num(cx["cut_ratio"], 1, 20),
        "rc_buffer": dur(rc["rc_buffer_s"]),
        "rc_memory": dur(rc["rc_memory_s"]),
        "sigma": num(noise["sigma"], 0, 2),
        "sigma_tau": dur(noise["sigma_tau_s"]),
        "key_ratio": num(key["key_ratio"], 1, 20),
    }


def second_rates(sizes: Sequence[float], fps: float = FPS) -> np.ndarray:
    """Bits/s in consecutive whole seconds (the bitrate a player shows)."""
    n = round(fps)
    s = np.asarray(sizes, float)
    k = len(s) // n
    rates: np.ndarray = s[: k * n].reshape(k, n).sum(axis=1) * 8 * fps / n
    return rates


def spread(rates: np.ndarray, target: float) -> dict[str, float]:
    """1 s bitrates as multiples of the target: min, p5, p25, p50, p75, p95, max."""
    r = np.asarray(rates, float) / target
    p = np.percentile(r, [0, 5, 25, 50, 75, 95, 100])
    return dict(zip(("min", "p5", "p25", "p50", "p75", "p95", "max"), map(float, p), strict=True))


def validate(
    params: dict[str, Any], target: float, seconds: float, seeds: Sequence[int]
) -> dict[str, Any]:
    """The fitted model at the target: its 1 s bitrates over several seeds."""
    rates = []
    for s in seeds:
        r = native().content_model(params, FPS, seconds, target, s)
        rates.append(second_rates(r["size"])[round(WARMUP_S) :])
    allr = np.concatenate(rates)
    return {
        "seconds": seconds,
        "seeds": list(seeds),
        "spread": spread(allr, target),
        "mean": float(allr.mean() / target),
    }


def profile_toml(
    name: str, consts: dict[str, Any], command: str, m: dict[str, Any], x264: dict[str, float]
) -> str:
    header = [
        f'# rtcc content-encoder profile "{name}", measured by `{command}`',
        f"# on {time.strftime('%Y-%m-%d')}: x264 (PyAV) at {m['target_bps'] / 1e6:.3g} Mbps, "
        f"{m['resolution']} at {FPS:g} fps, preset faster, tune zerolatency, intra-refresh,",
        f"# on {len(m['scenes'])} scenes of rtcc's generated content ({len(m['ti']) / FPS:.0f} s).",
        f"# x264's 1 s bitrate / target: p5 {x264['p5']:.2f}, p50 {x264['p50']:.2f}, "
        f"p95 {x264['p95']:.2f} (min {x264['min']:.2f}, max {x264['max']:.2f}).",
        '# Load with encoder = { kind = "content", profile = "<this file>" }.',
        "",
    ]
    return "\n".join(header) + "\n" + dumps_toml({"encoder": {"profile": name, **consts}})


def _rust_duration(v: str) -> str:
    ms = int(v.removesuffix("ms"))
    return (
        f"Duration::from_secs({ms // 1000})" if ms % 1000 == 0 else f"Duration::from_millis({ms})"
    )


TRACK_KEYS = (
    "scene_length",
    "si",
    "si_spread",
    "ti",
    "ti_spread",
    "si_wobble",
    "ti_wobble",
    "wobble_tau",
    "cut_ti",
)
MODEL_KEYS = (
    "gamma",
    "ti_floor",
    "si_exp",
    "cut_ratio",
    "rc_buffer",
    "rc_memory",
    "sigma",
    "sigma_tau",
)


def rust_consts(name: str, c: dict[str, Any]) -> str:
    """The profile as encoder/content.rs declares it, to ship a new
    measurement."""

    def val(v: Any) -> str:
        return _rust_duration(v) if isinstance(v, str) else repr(float(v))

    lines = [
        f"const {name.upper()}: ContentConfig = ContentConfig {{",
        f"    profile: ContentProfile::{name.capitalize()},",
        "    track: TrackConfig {",
        *(f"        {k}: {val(c[k])}," for k in TRACK_KEYS),
        "    },",
        *(f"    {k}: {val(c[k])}," for k in MODEL_KEYS),
        "    key_interval: None,",
        f"    key_ratio: {val(c['key_ratio'])},",
        "};",
    ]
    return "\n".join(lines) + "\n"


def calibrate_content(
    out: Path,
    *,
    short: bool = False,
    seconds: float | None = None,
    seed: int = 1,
    log: Callable[[str], None] = print,
    command: str = "rtcc calibrate-encoder --content",
    progress: bool | ProgressCallback = False,
) -> dict[str, Any]:
    """Measure, fit and write ``profile-content-<profile>.toml``,
    ``content.json`` and ``content_variation.png`` in ``out``. ``progress``: ``True`` for
    a bar on stderr (on a terminal), or a callable taking (steps done, steps)."""
    why = x264_available()
    if why:
        raise RuntimeError(f"content calibration needs x264: {why}")
    photos = media.photo_dir()
    out.mkdir(parents=True, exist_ok=True)
    resolution = "360p" if short else "1080p"
    seconds = seconds or (12.0 if short else 120.0)
    measured = []
    # Steps: each profile's measurement, then the fits.
    with Steps(progress, "calibrate content", len(MIXES) + 1) as report:
        for k, name in enumerate(MIXES):
            t0 = time.perf_counter()
            m = measure(name, resolution, seconds, seed + k, photos)
            x = spread(second_rates(m["size_abr"])[round(WARMUP_S) :], m["target_bps"])
            m["x264_spread"] = x
            measured.append(m)
            report.advance()
            log(
                f"{name}: x264 at {m['target_bps'] / 1e6:.3g} Mbps, {resolution}, "
                f"{len(m['scenes'])} scenes: "
                f"1 s bitrate / target p5 {x['p5']:.2f} p50 {x['p50']:.2f} p95 {x['p95']:.2f} "
                f"(min {x['min']:.2f}, max {x['max']:.2f}) [{time.perf_counter() - t0:.0f} s]"
            )
        results = fit_profiles(measured, out, command=command, log=log, seconds=seconds)
        report.advance()
    results.update(short=short, photos=photos)
    write_atomic(out / "content.json", json.dumps(results, indent=1, allow_nan=True))
    _plot(results, out)
    return results


def refit(content_json: Path, out: Path, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Fit again from the measurements a calibration saved (``content.json``),
    without encoding: for changes to the fits or the model."""
    saved = json.loads(content_json.read_text())
    measured = [p["measured"] for p in saved["profiles"].values()]
    out.mkdir(parents=True, exist_ok=True)
    seconds = len(measured[0]["ti"]) / FPS
    results = fit_profiles(measured, out, command=saved["command"], log=log, seconds=seconds)
    results.update(short=saved.get("short"), photos=saved.get("photos"))
    write_atomic(out / "content.json", json.dumps(results, indent=1, allow_nan=True))
    _plot(results, out)
    return results


def fit_profiles(
    measured: Sequence[dict[str, Any]],
    out: Path,
    *,
    command: str,
    log: Callable[[str], None],
    seconds: float,
) -> dict[str, Any]:
    """Fit every profile's constants from its measurements; write the
    profile files. Returns the results (without the plot)."""

    cx = fit_complexity(measured)
    log(
        f"complexity (TI + {cx['ti_floor']:.2f}) * (SI/50)^{cx['si_exp']:.2f} "
        f"(rms {cx['rms_log_error']:.3f} in log size); cut_ratio {cx['cut_ratio']:.2f} "
        f"({cx['cuts']} cuts)"
    )
    results: dict[str, Any] = {
        "command": command,
        "x264": X264_OPTIONS,
        "qp": QP,
        "complexity": cx,
        "profiles": {},
    }
    for m in measured:
        name = m["profile"]
        track = fit_track(m)
        rc = fit_rate_control(m, cx)
        noise = fit_noise(m, rc)
        key = fit_key(m)
        log(
            f"{name}: rate control gamma {rc['gamma']:.2f}, rc_buffer {rc['rc_buffer_s']:.2f} s, "
            f"rc_memory {rc['rc_memory_s']:.1f} s (rms {rc['rms_log_error']:.3f} in log size); "
            f"frame-size error sigma {noise['sigma']:.3f}, tau {noise['sigma_tau_s']:.2f} s"
        )
        consts = constants(track, cx, rc, noise, key)
        model = validate(
            {"profile": name, **consts}, m["target_bps"], max(seconds, 60.0), range(1, 6)
        )
        v = model["spread"]
        log(
            f"{name}: " + ", ".join(f"{k} = {v}" for k, v in consts.items()) + "\n"
            f"{name}: model 1 s bitrate / target p5 {v['p5']:.2f} p50 {v['p50']:.2f} "
            f"p95 {v['p95']:.2f} "
            f"(min {v['min']:.2f}, max {v['max']:.2f}), mean {model['mean']:.3f}"
        )
        write_atomic(
            out / f"profile-content-{name}.toml",
            profile_toml(name, consts, command, m, m["x264_spread"]),
        )
        results["profiles"][name] = {
            "measured": m,
            "track": track,
            "rate_control": {k: v for k, v in rc.items() if k != "relative"},
            "noise": noise,
            "key": key,
            "constants": consts,
            "model": model,
        }
    write_atomic(
        out / "content-profiles.rs.txt",
        "\n".join(rust_consts(n, p["constants"]) for n, p in results["profiles"].items()),
    )
    return results


def _plot(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    profiles = results["profiles"]
    fig, axes = plt.subplots(len(profiles), 1, figsize=(8, 2.8 * len(profiles)), squeeze=False)
    for ax, (name, p) in zip(axes[:, 0], profiles.items(), strict=True):
        m = p["measured"]
        target = m["target_bps"]
        x = second_rates(m["size_abr"]) / 1e6
        ax.plot(np.arange(len(x)), x, label="x264 (1 s)")
        model = native().content_model({"profile": name, **p["constants"]}, FPS, len(x), target, 1)
        y = second_rates(model["size"]) / 1e6
        ax.plot(np.arange(len(y)), y, label="content model, seed 1 (1 s)", alpha=0.8)
        ax.axhline(target / 1e6, color="k", ls="--", lw=1)
        for s in np.flatnonzero(np.asarray(m["cut"])):
            ax.axvline(s / FPS, color="0.85", lw=0.6, zorder=0)
        ax.set_ylabel("Mbps")
        ax.set_title(f"{name}: {m['resolution']}, target {target / 1e6:.3g} Mbps", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout()
    with atomic_path(out / "content_variation.png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
