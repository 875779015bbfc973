"""``rtcc calibrate-encoder``: measure the real encoders and write profiles
that the ``lagging`` encoder model and the rate-quality model load.

Three measurements, each on rtcc's generated content (photographs with
camera and object motion, "talking-head" and "game"):

1. **Step response** (Dumbo thesis Fig. 3-8): the target alternates
   500 kbps ↔ 2 Mbps every 5 s; the encoder's output, in a trailing 1 s
   window, is compared with the ``lagging`` model's through the same window,
   and ``tau_up``/``tau_down`` are the time constants that fit best (least
   squares over a log grid). ``sigma`` is the spread of delta-frame sizes in
   steady state and ``key_ratio`` the size of a requested key frame over the
   delta frames around it.
2. **Frame-size variation** against the content's spatial/temporal
   information (ITU-T P.910 SI/TI) and the target, for the real codec and
   for x264 at a fixed target through PyAV (as BurstRTC Fig. 2 measured).
3. **Rate-quality curves** per resolution: 720p source, encoded at 180p,
   360p and 720p over a range of rates, decoded, upscaled to 720p and
   scored; the quality model's ``psnr_at_1bpp``, ``db_per_doubling``,
   ``coded_max_db`` and ``upscale_2x_db`` are fitted (Nelder-Mead on squared
   dB error), ``ssim_offset_db``/``ssim_scale_db`` by a line through
   log10(1/SSIM - 1) against PSNR, and ``freeze_floor_db``/``freeze_tau``
   from a frozen picture against the moving source.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rtcc import media, native
from rtcc.console import ProgressCallback, Steps
from rtcc.limits import atomic_path, write_atomic
from rtcc.scenario import dumps_toml

FPS = 30.0
# Dumbo thesis Fig. 3-8: 500 kbps -> 2 Mbps.
STEP_LOW, STEP_HIGH, STEP_PERIOD = 500_000, 2_000_000, 5.0
WINDOW_S = 1.0
CONTENTS = ("talking-head", "game")
# Frames excluded after a start or a rate change before "steady state".
SETTLE_S = 2.0


def _content(kind: str, resolution: str, seed: int = 1) -> str:
    return f'{{ kind = "{kind}", resolution = "{resolution}", seed = {seed} }}'


def _window_rate(sizes: np.ndarray, fps: float, window: float = WINDOW_S) -> np.ndarray:
    """Bits/s over the trailing window at each frame (shorter at the start)."""
    n = max(1, round(window * fps))
    bits = np.cumsum(sizes * 8.0)
    prev = np.concatenate([np.zeros(n), bits[:-n]]) if len(bits) > n else np.zeros(len(bits))
    span = np.minimum(np.arange(1, len(bits) + 1), n) / fps
    return (bits - prev[: len(bits)]) / span


def lagging_rates(
    targets: Sequence[float], fps: float, tau_up: float, tau_down: float
) -> np.ndarray:
    """The lagging model's rate at each frame (no noise, no key frames), from
    the model itself (encoder.rs), so the fit is to exactly what runs."""
    return np.array(native().lagging_rates(list(targets), fps, tau_up, tau_down))


def model_window_rate(
    targets: Sequence[float], fps: float, tau_up: float, tau_down: float
) -> np.ndarray:
    """The lagging model's output seen through the same 1 s window as the
    measured encoder."""
    return _window_rate(lagging_rates(targets, fps, tau_up, tau_down) / fps / 8.0, fps)


def fit_lag(t: np.ndarray, sizes: np.ndarray, targets: np.ndarray, fps: float) -> dict[str, float]:
    """Time constants of the lagging model that best reproduce the measured
    windowed output rate after the first period (which holds the first key
    frame)."""
    measured = _window_rate(sizes, fps)
    target_list = targets.tolist()  # once, not per grid point
    keep = t >= STEP_PERIOD
    grid = np.exp(np.linspace(math.log(0.02), math.log(8.0), 120))
    # Rising/falling segments: the period after an up/down step.
    up_seg = keep & (targets == targets.max())
    down_seg = keep & (targets == targets.min())

    def err(tu: float, td: float, seg: np.ndarray) -> float:
        model = model_window_rate(target_list, fps, tu, td)
        return float(np.mean((model[seg] - measured[seg]) ** 2))

    tau_up, tau_down = 1.0, 0.3
    for _ in range(2):
        tau_up = float(min(grid, key=lambda g: err(g, tau_down, up_seg)))
        tau_down = float(min(grid, key=lambda g: err(tau_up, g, down_seg)))

    def t90(rate: np.ndarray, up: bool) -> list[float]:
        out = []
        steps = np.flatnonzero(np.diff(targets) != 0) + 1
        for s in steps:
            if (targets[s] > targets[s - 1]) != up or t[s] < STEP_PERIOD:
                continue
            lo, hi = targets[s - 1], targets[s]
            goal = lo + 0.9 * (hi - lo)
            seg = rate[s : s + round(STEP_PERIOD * fps)]
            hit = np.flatnonzero(seg >= goal) if up else np.flatnonzero(seg <= goal)
            out.append(float(hit[0] / fps) if len(hit) else float("nan"))
        return out

    model = model_window_rate(target_list, fps, tau_up, tau_down)
    return {
        "tau_up_s": tau_up,
        "tau_down_s": tau_down,
        "t90_up_s": t90(measured, True),
        "t90_down_s": t90(measured, False),
        "model_t90_up_s": t90(model, True),
        "model_t90_down_s": t90(model, False),
        "rms_error_kbps": math.sqrt(err(tau_up, tau_down, keep)) / 1000,
    }


def _steady(t: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Frames at least SETTLE_S after the start and after any target change."""
    last_change = np.zeros(len(t))
    cur = 0.0
    for i in range(len(t)):
        if i and targets[i] != targets[i - 1]:
            cur = t[i]
        last_change[i] = cur
    return t - last_change >= SETTLE_S


def step_response(
    codec: str, kind: str, resolution: str, duration: float, photos: str | None
) -> dict[str, Any]:
    schedule = []
    at, high = 0.0, False
    while at < duration:
        schedule.append((at, STEP_HIGH if high else STEP_LOW))
        at += STEP_PERIOD
        high = not high
    # A requested key frame in the middle of each steady stretch.
    keys = [round((p * STEP_PERIOD + 3.5) * FPS) for p in range(1, int(duration / STEP_PERIOD))]
    r = native().encode_sequence(
        codec, _content(kind, resolution), FPS, duration, schedule, None, None, False, keys, photos
    )
    t = np.array(r["t"])
    sizes = np.array(r["size"], float)
    targets = np.array(r["target_bps"], float)
    key = np.array(r["key"], bool)
    # Requested key frames are measured on their own (key_ratio); for the
    # lag fit each stands in as the delta frames before it.
    smooth = sizes.copy()
    for k in np.flatnonzero(key)[1:]:
        smooth[k] = np.median(sizes[max(0, k - 5) : k])
    fit = fit_lag(t, smooth, targets, FPS)
    steady = _steady(t, targets) & ~key & (sizes > 0)
    rel = []
    for level in (STEP_LOW, STEP_HIGH):
        sel = steady & (targets == level)
        if sel.sum() > 5:
            rel.append(sizes[sel] / sizes[sel].mean() - 1)
    sigma = float(np.std(np.concatenate(rel))) if rel else float("nan")
    ratios = []
    for k in np.flatnonzero(key)[1:]:
        around = sizes[max(0, k - 15) : k + 15]
        kk = key[max(0, k - 15) : k + 15]
        deltas = around[~kk & (around > 0)]
        if len(deltas) > 5:
            ratios.append(sizes[k] / deltas.mean())
    return {
        "codec": codec,
        "content": kind,
        "resolution": resolution,
        "t": t.tolist(),
        "size": sizes.tolist(),
        "target_bps": targets.tolist(),
        "window_rate_bps": _window_rate(sizes, FPS).tolist(),
        "fit": fit,
        "sigma": sigma,
        "key_ratio": float(np.median(ratios)) if ratios else float("nan"),
        "drops": int((sizes == 0).sum()),
    }


def _clip(
    codec: str,
    kind: str,
    source_res: str,
    encode_size: tuple[int, int] | None,
    rate: int,
    clip_s: float,
    photos: str | None,
) -> dict[str, float]:
    r = native().encode_sequence(
        codec,
        _content(kind, source_res),
        FPS,
        clip_s,
        [(0.0, rate)],
        encode_size,
        None,
        True,
        [],
        photos,
    )
    t = np.array(r["t"])
    size = np.array(r["size"], float)
    key = np.array(r["key"], bool)
    steady = (t >= SETTLE_S) & ~key
    coded = steady & (size > 0)
    psnr = np.array(r["psnr"], float)[coded]
    ssim = np.array(r["ssim"], float)[coded]
    return {
        "rate_bps": rate,
        # Bits of the coded frames, as PSNR averages over them: frames the
        # encoder dropped would otherwise lower the bits behind that PSNR.
        "out_bps": float(size[coded].mean() * 8 * FPS) if coded.any() else 0.0,
        "sent_bps": float(size[steady].sum() * 8 / max(1e-9, steady.sum() / FPS)),
        "cv": float(size[coded].std() / size[coded].mean()) if coded.any() else float("nan"),
        "psnr": float(psnr.mean()) if len(psnr) else float("nan"),
        "ssim": float(ssim.mean()) if len(ssim) else float("nan"),
        "si": float(np.nanmean(r["si"])),
        "ti": float(np.nanmean(np.array(r["ti"], float))),
        "drops": int((size[steady] == 0).sum()),
    }


RES = {"180p": (320, 180), "360p": (640, 360), "720p": (1280, 720)}


def rate_quality(
    codec: str,
    kind: str,
    source_res: str,
    resolutions: Sequence[str],
    rates: Sequence[int],
    clip_s: float,
    photos: str | None,
) -> list[dict[str, Any]]:
    out = []
    src = RES[source_res]
    for res in resolutions:
        size = RES[res]
        for rate in rates:
            p = _clip(codec, kind, source_res, None if size == src else size, rate, clip_s, photos)
            p.update(resolution=res, width=size[0], height=size[1])
            out.append(p)
    return out


def model_psnr(
    params: Sequence[float], bits: np.ndarray, px: np.ndarray, display_px: float
) -> np.ndarray:
    """The rate-quality model's PSNR (quality.rs) for delta frames at 30 fps."""
    a, b, cmax, up2 = params
    bpp = bits / np.minimum(px, display_px)
    p_coded = a + b * np.log2(bpp)
    mse = 10 ** (-p_coded / 10) + 10 ** (-cmax / 10)
    s = np.sqrt(display_px / px)
    up = np.where(s > 1.0001, 10 ** (-(up2 - 10 * np.log10(np.maximum(s - 1, 1e-9))) / 10), 0.0)
    return -10 * np.log10(mse + up)


def fit_quality(points: list[dict[str, Any]], display: tuple[int, int]) -> dict[str, float]:
    from scipy.optimize import minimize

    pts = [p for p in points if math.isfinite(p["psnr"]) and p["out_bps"] > 0]
    bits = np.array([p["out_bps"] / FPS for p in pts])
    px = np.array([p["width"] * p["height"] for p in pts], float)
    y = np.array([p["psnr"] for p in pts])
    dpx = float(display[0] * display[1])

    def loss(x: np.ndarray) -> float:
        return float(np.mean((model_psnr(x, bits, px, dpx) - y) ** 2))

    # Bounded to the ranges QualityModel::from_params accepts.
    best = minimize(
        loss,
        np.array([48.5, 2.65, 50.0, 37.0]),
        method="Powell",
        bounds=[(10, 100), (0.1, 10), (20, 60), (10, 60)],
        options={"maxiter": 20000, "xtol": 1e-4, "ftol": 1e-8},
    )
    a, b, cmax, up2 = (float(v) for v in best.x)
    # SSIM = 1/(1 + 10^((offset - PSNR)/scale)): squared error in SSIM dB,
    # bounded, since a narrow PSNR range leaves a free line ill-posed.
    ssim_db_meas = -10 * np.log10(np.maximum(1e-6, 1 - np.array([p["ssim"] for p in pts])))

    def ssim_loss(x: np.ndarray) -> float:
        off, scale = x
        pred = 1 / (1 + 10 ** ((off - y) / scale))
        return float(np.mean((-10 * np.log10(np.maximum(1e-6, 1 - pred)) - ssim_db_meas) ** 2))

    if np.ptp(y) >= 10:
        sfit = minimize(
            ssim_loss, np.array([26.7, 10.0]), method="Powell", bounds=[(0, 60), (1, 30)]
        )
    else:
        # Too narrow a PSNR range to tell slope from offset: keep the
        # model's scale (10 dB per decade) and fit the offset alone.
        sfit = minimize(
            lambda x: ssim_loss(np.array([x[0], 10.0])),
            np.array([26.7]),
            method="Powell",
            bounds=[(0, 60)],
        )
        sfit.x = np.array([sfit.x[0], 10.0])
    return {
        "psnr_at_1bpp": a,
        "db_per_doubling": b,
        "coded_max_db": cmax,
        "upscale_2x_db": up2,
        "ssim_offset_db": float(sfit.x[0]),
        "ssim_scale_db": float(sfit.x[1]),
        "rms_error_db": math.sqrt(loss(best.x)),
        "ssim_rms_error_db": math.sqrt(ssim_loss(sfit.x)),
    }


def fit_freeze(curve: list[tuple[int, float, float]]) -> dict[str, float]:
    """mse(t) = floor·(1 - e^(-t/τ)) through the frozen-picture curve."""
    k = np.array([c[0] for c in curve], float)[1:]
    mse = 10 ** (-np.array([c[1] for c in curve])[1:] / 10)
    t = k / FPS
    best = (math.inf, 0.0, 0.0)
    for tau in np.exp(np.linspace(math.log(0.01), math.log(30.0), 240)):
        w = 1 - np.exp(-t / tau)
        floor = float((w @ mse) / (w @ w))
        e = float(np.mean((floor * w - mse) ** 2))
        best = min(best, (e, float(tau), floor))
    _, tau, floor = best
    return {"freeze_floor_db": -10 * math.log10(floor), "freeze_tau_s": tau}


def x264_variation(
    kind: str, resolution: str, rates: Sequence[int], clip_s: float, photos: str | None
) -> list[dict[str, float]]:
    """Frame sizes of x264 at a fixed target (PyAV, zerolatency, as BurstRTC Fig. 2)."""
    import av

    n = round(clip_s * FPS)
    w, h, frames = native().content_frames(_content(kind, resolution), FPS, 0, n, photos)
    out = []
    for rate in rates:
        buf = av.open("/dev/null", "w", format="h264")
        st = buf.add_stream("libx264", rate=int(FPS))
        st.width, st.height, st.pix_fmt = w, h, "yuv420p"
        st.bit_rate = rate
        st.options = {
            "preset": "veryfast",
            "tune": "zerolatency",
            "x264-params": f"vbv-maxrate={rate // 1000}:vbv-bufsize={rate // 1000}",
        }
        sizes = []
        for i, raw in enumerate(frames):
            arr = (
                np.frombuffer(raw, np.uint8).reshape(h * 3 // 2, w)
                if w % 2 == 0 and h % 2 == 0
                else None
            )
            if arr is None:
                raise ValueError("x264 comparison needs even frame sizes")
            vf = av.VideoFrame.from_ndarray(arr, format="yuv420p")
            vf.pts = i
            sizes += [p.size for p in st.encode(vf)]
        sizes += [p.size for p in st.encode()]
        buf.close()
        s = np.array(sizes[round(SETTLE_S * FPS) :], float)
        out.append(
            {
                "rate_bps": rate,
                "cv": float(s.std() / s.mean()),
                "p95_over_mean": float(np.percentile(s, 95) / s.mean()),
            }
        )
    return out


def _secs(v: Sequence[float]) -> str:
    return "[" + ", ".join(f"{x:.2f}" for x in v) + "]"


def _num(v: float) -> float:
    """Four significant digits: what the measurements support."""
    return float(f"{v:.4g}")


def profile_toml(
    codec: str,
    step: dict[str, Any],
    quality: dict[str, dict[str, float]],
    command: str,
    display: tuple[int, int],
) -> str:
    fit = step["fit"]
    header = [
        f"# rtcc encoder profile for {codec}, measured by `{command}`",
        f"# on {time.strftime('%Y-%m-%d')}: step response 500 kbps <-> 2 Mbps every 5 s on",
        f"# {step['content']} {step['resolution']} (t90 up {_secs(fit['t90_up_s'])} s,",
        f"# down {_secs(fit['t90_down_s'])} s in a 1 s window); rate-quality from",
        f"# {display[1]}p sources coded at lower and equal sizes, decoded and scored",
        f"# at {display[1]}p.",
    ]
    key_ratio = _num(min(max(step["key_ratio"], 1.0), 20.0))
    profile = {
        "codec": codec,
        "encoder": {
            "tau_up": f"{round(fit['tau_up_s'] * 1000)}ms",
            "tau_down": f"{round(fit['tau_down_s'] * 1000)}ms",
            "sigma": _num(min(max(step["sigma"], 0.0), 1.0)),
            "key_ratio": key_ratio,
        },
        "quality": {
            kind: {
                **{k: _num(q[k]) for k in QUALITY_KEYS},
                "freeze_tau": f"{round(q['freeze_tau_s'] * 1000)}ms",
                "key_cost": key_ratio,
                "display": f"{display[0]}x{display[1]}",
            }
            for kind, q in quality.items()
        },
    }
    return "\n".join(header) + "\n" + dumps_toml(profile)


# The fitted rate-quality numbers a profile's [quality.<content>] table holds.
QUALITY_KEYS = (
    "psnr_at_1bpp",
    "db_per_doubling",
    "coded_max_db",
    "upscale_2x_db",
    "ssim_offset_db",
    "ssim_scale_db",
    "freeze_floor_db",
)


def calibrate(
    codecs: Sequence[str],
    out: Path,
    *,
    short: bool = False,
    log: Callable[[str], None] = print,
    command: str = "rtcc calibrate-encoder",
    progress: bool | ProgressCallback = False,
) -> dict[str, Any]:
    """Run the measurements for each codec; write ``profile-<codec>.toml``,
    ``calibration.json`` and plots in ``out``. Returns the measurements. ``progress``:
    ``True`` for a bar on stderr (on a terminal), or a callable taking (steps done, steps)."""
    photos = media.photo_dir()
    out.mkdir(parents=True, exist_ok=True)
    duration = 20.0 if short else 40.0
    source_res = "360p" if short else "720p"
    resolutions = ["180p", "360p"] if short else ["180p", "360p", "720p"]
    rates = [300_000, 1_200_000] if short else [250_000, 500_000, 1_000_000, 2_000_000, 4_000_000]
    clip_s = 4.0 if short else 8.0
    display = RES[source_res]
    results: dict[str, Any] = {"photos": photos, "short": short, "codecs": {}}
    # Steps: per codec its step response and each content's rate-quality, then x264's.
    steps = len(codecs) * (1 + len(CONTENTS)) + len(CONTENTS)
    with Steps(progress, "calibrate", steps) as report:
        for codec in codecs:
            t0 = time.perf_counter()
            step = step_response(codec, "talking-head", "360p", duration, photos)
            report.advance()
            fit = step["fit"]
            log(
                f"{codec}: step response t90 up {_secs(fit['t90_up_s'])} s, "
                f"down {_secs(fit['t90_down_s'])} s -> "
                f"tau_up {fit['tau_up_s']:.2f} s, tau_down {fit['tau_down_s']:.2f} s, "
                f"sigma {step['sigma']:.3f}, key_ratio {step['key_ratio']:.2f}"
            )
            quality: dict[str, dict[str, float]] = {}
            rq: dict[str, list[dict[str, Any]]] = {}
            frozen: dict[str, Any] = {}
            for kind in CONTENTS:
                rq[kind] = rate_quality(codec, kind, source_res, resolutions, rates, clip_s, photos)
                q = fit_quality(rq[kind], display)
                curve = native().frozen_curve(
                    _content(kind, source_res), FPS, 6 if short else 12, 20.0, 45, photos
                )
                q.update(fit_freeze(curve))
                report.advance()
                frozen[kind] = curve
                quality[kind] = q
                log(
                    f"{codec}/{kind}: PSNR = {q['psnr_at_1bpp']:.1f} "
                    f"+ {q['db_per_doubling']:.2f}·log2(bpp), "
                    f"max {q['coded_max_db']:.1f}, 2x upscale {q['upscale_2x_db']:.1f} dB "
                    f"(rms {q['rms_error_db']:.2f} dB); "
                    f"freeze floor {q['freeze_floor_db']:.1f} dB, tau {q['freeze_tau_s']:.2f} s"
                )
            text = profile_toml(codec, step, quality, command, display)
            write_atomic(out / f"profile-{codec}.toml", text)
            results["codecs"][codec] = {
                "step": step,
                "rate_quality": rq,
                "quality_fit": quality,
                "frozen": frozen,
                "wall_s": time.perf_counter() - t0,
            }
        try:
            results["x264"] = {}
            for kind in CONTENTS:
                results["x264"][kind] = x264_variation(kind, "360p", rates, clip_s, photos)
                report.advance()
        except ImportError:
            results["x264"] = None
    write_atomic(out / "calibration.json", json.dumps(results, indent=1, allow_nan=True))
    _plots(results, out)
    return results


def _plots(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codecs = results["codecs"]
    fig, axes = plt.subplots(len(codecs), 1, figsize=(8, 2.6 * len(codecs)), squeeze=False)
    for ax, (codec, r) in zip(axes[:, 0], codecs.items(), strict=True):
        s = r["step"]
        t = np.array(s["t"])
        ax.plot(t, np.array(s["target_bps"]) / 1e3, "k--", lw=1, label="target")
        ax.plot(t, np.array(s["window_rate_bps"]) / 1e3, label=f"{codec} output (1 s window)")
        f = s["fit"]
        model = model_window_rate(s["target_bps"], FPS, f["tau_up_s"], f["tau_down_s"])
        ax.plot(
            t, model / 1e3, label=f"lagging model, tau {f['tau_up_s']:.2f}/{f['tau_down_s']:.2f} s"
        )
        ax.set_ylabel("kbps")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout()
    with atomic_path(out / "step_response.png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)

    fig, axes = plt.subplots(1, len(codecs), figsize=(5 * len(codecs), 3.6), squeeze=False)
    for ax, (codec, r) in zip(axes[0], codecs.items(), strict=True):
        for kind, pts in r["rate_quality"].items():
            for res in sorted({p["resolution"] for p in pts}, key=lambda x: int(x[:-1])):
                sel = [p for p in pts if p["resolution"] == res]
                ax.plot(
                    [p["out_bps"] / 1e3 for p in sel],
                    [p["psnr"] for p in sel],
                    "o-",
                    label=f"{kind} {res}",
                )
        ax.set_xscale("log")
        ax.set_xlabel("kbps")
        ax.set_ylabel("PSNR (dB)")
        ax.set_title(codec)
        ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(out / "rate_quality.png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)

    # Frame-size variation (coefficient of variation of delta frames) against
    # the target, per content (its SI/TI in the legend), real codecs at the
    # source's size and x264 at a fixed target.
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for codec, r in codecs.items():
        for kind, pts in r["rate_quality"].items():
            top = max(int(p["resolution"][:-1]) for p in pts)
            sel = [p for p in pts if int(p["resolution"][:-1]) == top]
            lab = f"{codec} {kind} (SI {sel[0]['si']:.0f}, TI {sel[0]['ti']:.1f})"
            ax.plot([p["rate_bps"] / 1e3 for p in sel], [p["cv"] for p in sel], "o-", label=lab)
    for kind, pts in (results.get("x264") or {}).items():
        ax.plot(
            [p["rate_bps"] / 1e3 for p in pts], [p["cv"] for p in pts], "s--", label=f"x264 {kind}"
        )
    ax.set_xscale("log")
    ax.set_xlabel("target kbps")
    ax.set_ylabel("frame size CV")
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(out / "frame_size_cv.png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
