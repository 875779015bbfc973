"""The ``content`` encoder model from Python, and ``rtcc calibrate-encoder
--content``, which fits its static and dynamic profiles to x264."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import rtcc
from conftest import requires_native

pytestmark = requires_native

tomllib = pytest.importorskip("tomllib")


def _need_x264() -> None:
    from rtcc.calibrate_content import x264_available

    why = x264_available()
    if why:
        pytest.skip(f"content calibration measures x264 through PyAV: {why}")


def _second_rates(sizes: list[int]) -> np.ndarray:
    from rtcc.calibrate_content import second_rates

    return second_rates(sizes)


def test_model_from_python_varies_as_the_profiles_say() -> None:
    def spread(profile: str) -> tuple[float, float, float]:
        r = rtcc.native().content_model({"profile": profile}, 30.0, 300.0, 4e6, 2)
        assert all(s > 0 for s in r["si"]) and all(t > 0 for t in r["ti"])
        w = _second_rates(r["size"]) / 4e6
        return float(np.percentile(w, 5)), float(np.mean(w)), float(np.percentile(w, 95))

    lo, mean, hi = spread("dynamic")
    slo, smean, shi = spread("static")
    assert mean == pytest.approx(1.0, abs=0.04) and smean == pytest.approx(1.0, abs=0.04)
    assert hi - lo > 2 * (shi - slo), (lo, hi, slo, shi)
    # Overrides reach the model; refusals name the parameter.
    calm = rtcc.native().content_model({"profile": "dynamic", "ti": 2.0}, 30.0, 20.0, 4e6, 2)
    assert np.median(calm["ti"]) < 4
    with pytest.raises(rtcc.native().ScenarioError, match=r"encoder\.ti_spread"):
        rtcc.native().content_model({"ti_spread": -1.0}, 30.0, 5.0, 4e6)
    with pytest.raises(rtcc.native().ScenarioError, match=r"encoder\.profile"):
        rtcc.native().content_model({"profile": "busy"}, 30.0, 5.0, 4e6)


def test_rate_control_fit_recovers_known_constants() -> None:
    from rtcc import calibrate_content as cc

    rng = np.random.default_rng(3)
    # Scenes of lognormal complexity, 2 min at 30 fps.
    levels = np.repeat(rng.lognormal(0, 0.6, 40), 90)
    q = levels * rng.lognormal(0, 0.1, len(levels))
    rel = np.asarray(rtcc.native().content_rates(q.tolist(), cc.FPS, 0.6, 4.0, 20.0))
    target = 4e6
    n = len(q)
    m = {
        "target_bps": target,
        "size_cqp": q.tolist(),
        "size_abr": (rel * target / cc.FPS / 8).tolist(),
        "size_abr_key": (rel * target / cc.FPS / 8).tolist(),
        "si": [50.0] * n,
        "ti": (10.0 * q).tolist(),
        "cut": [False] * n,
        "key": [i == 0 for i in range(n)],
        "scene": (np.arange(n) // 90).tolist(),
    }
    # SI at the reference and no floor: the model's complexity is 10·q, and
    # the scale cancels in the rate control.
    fit = cc.fit_rate_control(m, {"ti_floor": 0.0, "si_exp": 0.3, "cut_ratio": 1.0})
    assert fit["gamma"] == pytest.approx(0.6, abs=0.051)
    assert fit["rc_buffer_s"] == pytest.approx(4.0, rel=0.3)
    assert fit["rms_log_error"] < 0.02


def test_complexity_fit_recovers_a_linear_ti_cost() -> None:
    from rtcc import calibrate_content as cc

    rng = np.random.default_rng(5)
    n = 3000
    ti = rng.uniform(1, 40, n)
    si = rng.uniform(20, 80, n)
    cut = np.zeros(n, bool)
    cut[::100] = True
    cost = 900.0 * (ti + 6.0) * (si / 50.0) ** 0.3 * np.where(cut, 2.5, 1.0)
    m = {
        "size_cqp": (cost * rng.lognormal(0, 0.02, n)).tolist(),
        "size_abr": cost.tolist(),
        "size_abr_key": cost.tolist(),
        "si": si.tolist(),
        "ti": ti.tolist(),
        "cut": cut.tolist(),
        "key": [False] * n,
        "scene": (np.arange(n) // 100).tolist(),
    }
    fit = cc.fit_complexity([m])
    assert fit["ti_floor"] == pytest.approx(6.0, rel=0.1)
    assert fit["si_exp"] == pytest.approx(0.3, abs=0.05)
    assert fit["cut_ratio"] == pytest.approx(2.5, rel=0.05)


def test_content_calibration_writes_profiles_the_model_loads(tmp_path: Path, run_cli) -> None:
    _need_x264()
    out = tmp_path / "cal"
    proc = run_cli("calibrate-encoder", "--content", "--short", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # not a terminal: no progress bar
    assert "x264 at" in proc.stdout and "rate control gamma" in proc.stdout
    for name in ("static", "dynamic"):
        prof = tomllib.loads((out / f"profile-content-{name}.toml").read_text())["encoder"]
        assert prof["profile"] == name
        assert 0 < prof["gamma"] <= 2 and prof["ti_floor"] > 0 and prof["key_ratio"] >= 1
        assert 0 < prof["ti"] < 255 and 0 < prof["si"] < 1000
        assert "command" not in prof
        # The file is a profile a flow loads.
        scen = tmp_path / f"{name}.toml"
        scen.write_text(
            'duration = "6s"\n[link]\ncapacity = "10Mbps"\ndelay = "20ms"\n[[flow]]\n'
            'controller = { name = "fixed", rate = "2Mbps" }\n'
            f'encoder = {{ kind = "content", profile = "{out}/profile-content-{name}.toml" }}\n'
        )
        flow = rtcc.simulate(scen).summary["flows"][0]
        assert flow["encoder"] == "content"
        assert flow["video_kbps"] == pytest.approx(2000, rel=0.25)
    data = (out / "content.json").read_text()
    assert "x264_spread" in data
    assert (out / "content_variation.png").stat().st_size > 10_000
    header = (out / "profile-content-dynamic.toml").read_text().splitlines()[0]
    assert "rtcc calibrate-encoder --content --short" in header


def test_content_calibration_refuses_codec_options(run_cli) -> None:
    proc = run_cli("calibrate-encoder", "--content", "--codec", "vp8")
    assert proc.returncode != 0 and "--codec" in proc.stderr
    proc = run_cli("calibrate-encoder", "--seconds", "10")
    assert proc.returncode != 0 and "--seconds" in proc.stderr


def test_the_track_reports_p910_levels() -> None:
    # The model's SI/TI sit where P.910 puts such content: talking heads and
    # animation low, games higher (si_ti.rs).
    stat = rtcc.native().content_model({"profile": "static"}, 30.0, 120.0, 4e6, 1)
    dyn = rtcc.native().content_model({"profile": "dynamic"}, 30.0, 120.0, 4e6, 1)
    assert np.median(stat["ti"]) < np.median(dyn["ti"])
    cuts = sum(dyn["cut"]) / 120.0
    assert 0.1 < cuts < 1.5, cuts
    assert all(math.isfinite(x) for x in dyn["si"] + dyn["ti"])
