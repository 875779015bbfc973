"""Real codecs from Python: saved video, container content, calibration and
the profiles it writes."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import rtcc
from conftest import ANSI, on_a_terminal, requires_native

pytestmark = requires_native

av = pytest.importorskip("av")
tomllib = pytest.importorskip("tomllib")


def _need(codec: str) -> None:
    why = rtcc.native().codecs()[codec]
    if why is None:
        return
    if os.environ.get("RTCC_REQUIRE_CODECS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _scenario(content: str, secs: int = 4, codec: str = "vp8", extra: str = "") -> str:
    return f"""
name = "real"
duration = "{secs}s"
[link]
capacity = "3Mbps"
delay = "20ms"
[[flow]]
name = "call"
controller = {{ name = "fixed", rate = "800kbps" }}
encoder = "{codec}"
resolution = "360p"
content = {content}
{extra}
"""


def _frames(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="gray") for f in c.decode(video=0)]


def test_save_video_writes_watchable_mp4s(tmp_path: Path) -> None:
    _need("vp8")
    out = tmp_path / "videos"
    res = rtcc.simulate(_scenario('"game"'), save_video=out)
    flow = res.summary["flows"][0]
    assert flow["quality_source"] == "decoded"
    received = _frames(out / "call.received.mp4")
    side = _frames(out / "call.side_by_side.mp4")
    # One picture per frame instant of the 4 s call (the screen starts with
    # the first decoded frame).
    assert 110 <= len(received) <= 121, len(received)
    assert len(side) == len(received)
    assert received[0].shape == (360, 640)
    assert side[0].shape == (360, 1280)
    # The label is drawn in white on a dark box at the top of the right half.
    label = side[60][8:30, 648:900]
    assert label.max() > 200 and label.min() < 60
    assert not list(out.glob("*.h264")) and not list(out.glob("*.ivf"))


def _write_mp4(path: Path, n: int = 45, w: int = 320, h: int = 180) -> None:
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=30)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        yy, xx = np.mgrid[0:h, 0:w]
        for i in range(n):
            img = ((xx * 2 + yy + i * 6) % 256).astype(np.uint8)
            rgb = np.stack([img, np.roll(img, 40, axis=1), 255 - img], axis=-1)
            for p in s.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)


def test_mp4_content_is_converted_and_coded(tmp_path: Path) -> None:
    _need("h264")
    _write_mp4(tmp_path / "clip.mp4")
    scen = tmp_path / "real.toml"
    scen.write_text(_scenario('{ file = "clip.mp4" }', secs=3, codec="h264"))
    res = rtcc.simulate(scen)
    flow = res.summary["flows"][0]
    assert flow["encoder"] == "h264"
    assert flow["frames_displayed"] > 60
    assert 30 < flow["psnr_db_mean"] <= 60


def test_y4m_content_loops(tmp_path: Path) -> None:
    _need("vp8")
    w, h = 160, 96
    with (tmp_path / "tiny.y4m").open("wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F30:1 C420jpeg\n".encode())
        for i in range(10):  # 1/3 s, looped over the 3 s call
            f.write(b"FRAME\n")
            f.write(bytes((x + i * 8) % 256 for x in range(w * h)))
            f.write(bytes([128]) * (w * h // 2))
    scen = tmp_path / "real.toml"
    scen.write_text(_scenario('{ file = "tiny.y4m" }', secs=3))
    flow = rtcc.simulate(scen).summary["flows"][0]
    assert flow["frames_displayed"] > 80
    assert flow["decode_errors"] == 0


def test_calibration_writes_profiles_the_models_load(tmp_path: Path) -> None:
    _need("vp8")
    out = tmp_path / "cal"
    # On a terminal: its steps (step response, two contents, x264 on two) in a bar.
    code, stdout, stderr = on_a_terminal("calibrate-encoder", "--short", "--codec", "vp8",
                                         "--out", out)  # fmt: skip
    assert code == 0, stderr
    assert "step response" in stdout and "\x1b" not in stdout
    assert "5/5 steps" in ANSI.sub("", stderr)
    prof = tomllib.loads((out / "profile-vp8.toml").read_text())
    tau_up = float(prof["encoder"]["tau_up"].removesuffix("ms")) / 1000
    # libvpx follows a 500 kbps -> 2 Mbps step in seconds, not frames.
    assert 0.2 < tau_up < 3.0, prof
    assert set(prof["quality"]) == {"talking-head", "game"}
    assert (out / "step_response.png").stat().st_size > 10_000
    # The lagging model and the quality model load the profile.
    scen = tmp_path / "model.toml"
    scen.write_text(
        _scenario('"game"', secs=5).replace(
            'encoder = "vp8"',
            f'encoder = {{ kind = "lagging", profile = "{out / "profile-vp8.toml"}" }}',
        )
    )
    flow = rtcc.simulate(scen).summary["flows"][0]
    assert flow["encoder"] == "lagging" and flow["quality_source"] == "model"
    plain = rtcc.simulate(
        _scenario('"game"', secs=5).replace('encoder = "vp8"', 'encoder = "lagging"')
    )
    # The measured constants replace the defaults.
    assert flow["psnr_db_mean"] != plain.summary["flows"][0]["psnr_db_mean"]


@pytest.mark.parametrize("codec", ["vp8", "h264"])
def test_builtin_profiles_load(codec: str, tmp_path: Path) -> None:
    def run(encoder: str) -> dict:
        text = _scenario('"talking-head"', secs=6).replace(
            'encoder = "vp8"', f"encoder = {encoder}"
        )
        return rtcc.simulate(text).summary["flows"][0]

    builtin = run(f'{{ kind = "lagging", profile = "{codec}" }}')
    shipped = (
        Path(__file__).resolve().parents[2] / "crates" / "rtcc-sim" / "profiles" / f"{codec}.toml"
    )
    as_file = run(f'{{ kind = "lagging", profile = "{shipped}" }}')
    plain = run('"lagging"')
    assert builtin["encoder"] == "lagging"
    # The built-in profile is the shipped file, and it changes the model.
    assert builtin["psnr_db_mean"] == as_file["psnr_db_mean"]
    assert abs(builtin["psnr_db_mean"] - plain["psnr_db_mean"]) > 0.1, (builtin, plain)


def test_lagging_model_from_python_is_the_rust_model() -> None:
    # 500 kbps -> 2 Mbps at frame 30: r = 2M - 1.5M e^(-t/1.3) after the step.
    targets = [500_000.0] * 30 + [2_000_000.0] * 60
    r = rtcc.native().lagging_rates(targets, 30.0, 1.3, 0.3)
    assert r[29] == pytest.approx(500_000, rel=1e-6)
    expect = 2e6 - 1.5e6 * np.exp(-1.0 / 1.3)
    assert r[59] == pytest.approx(expect, rel=1e-3)


def test_encoders_list_the_codecs(run_cli) -> None:
    proc = run_cli("encoders")
    assert proc.returncode == 0, proc.stderr
    assert "vp8" in proc.stdout and "h264" in proc.stdout


def test_container_conversion_stops_at_the_call_length(tmp_path: Path, monkeypatch) -> None:
    from rtcc import media

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _write_mp4(tmp_path / "clip.mp4", n=45, w=64, h=48)
    whole = media.to_y4m(tmp_path / "clip.mp4")
    part = media.to_y4m(tmp_path / "clip.mp4", max_seconds=0.5)
    frame = 64 * 48 * 3 // 2 + len(b"FRAME\n")
    header = len(whole.read_bytes().split(b"\n", 1)[0]) + 1
    assert (whole.stat().st_size - header) // frame == 45
    assert (part.stat().st_size - header) // frame == 16  # 0.5 s at 30 fps, and one more
    assert media.to_y4m(tmp_path / "clip.mp4", max_seconds=0.5) == part  # cached


def test_lag_fit_recovers_known_time_constants() -> None:
    from rtcc import calibrate

    fps = 30.0
    t = np.arange(0, 30, 1 / fps)
    targets = np.where((t // 5) % 2 == 1, 2e6, 5e5)
    sizes = calibrate.lagging_rates(targets.tolist(), fps, 1.3, 0.3) / fps / 8
    fit = calibrate.fit_lag(t, sizes, targets, fps)
    assert fit["tau_up_s"] == pytest.approx(1.3, rel=0.1)
    assert fit["tau_down_s"] == pytest.approx(0.3, rel=0.1)
    # 90 % of a rise: tau ln 10 = 3.0 s, plus the window's own delay.
    assert all(3.0 < x < 4.2 for x in fit["t90_up_s"]), fit


def test_scenario_duration_limits_the_conversion(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _write_mp4(tmp_path / "clip.mp4", n=45, w=64, h=48)
    text = (
        'duration = "0.5s"\n[link]\ncapacity = "3Mbps"\ndelay = "10ms"\n'
        '[[flow]]\ncontroller = "fixed"\nencoder = "lagging"\ncontent = { file = "clip.mp4" }\n'
    )
    from rtcc import media

    mapped = media.scenario_media_map(text, str(tmp_path / "s.toml"))
    (y4m,) = mapped.values()
    data = Path(y4m).read_bytes()
    assert data.count(b"FRAME\n") == 16  # 0.5 s at 30 fps, and one more
