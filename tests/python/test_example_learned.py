"""examples/learned_rate: a trained policy as a controller, trained and evaluated."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import agent_and_controller_targets, requires_native

pytestmark = requires_native
pytest.importorskip("gymnasium", reason="pip install 'rtcc[gym]'")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "learned_rate"
NAME = "py:policy_controller:PolicyController"

def _train_env() -> dict:
    """train.py's environment settings (the ones a saved policy carries)."""
    spec = importlib.util.spec_from_file_location("learned_rate_train", EXAMPLE / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    keys = ("features", "action", "min_rate", "max_rate", "start_rate")
    return {k: module.ENV[k] for k in keys}


ENV = _train_env()


@pytest.fixture(autouse=True)
def _example_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))


def constant_policy(folder: Path, action: float, name: str = "policy") -> Path:
    """A one-layer numpy policy whose action is ``action`` whatever it sees."""
    path = folder / f"{name}.npz"
    np.savez(path, W0=np.zeros((1, len(ENV["features"]))), b0=np.array([action]))
    (folder / f"{name}.json").write_text(json.dumps({"env": ENV}))
    return path


def run(model: Path, seed: int = 1, capacity: str = "2Mbps") -> dict:
    import rtcc

    result = rtcc.simulate({
        "duration": "6s",
        "link": {"capacity": capacity, "delay": "25ms", "queue": "100pkt"},
        "flow": [{"controller": {"name": NAME, "model": str(model)}, "encoder": "ideal",
                  "start_rate": "300kbps", "min_rate": "50kbps", "max_rate": "8Mbps"}],
    }, seed=seed, record_packets=False)  # fmt: skip
    return result.summary["flows"][0]


def test_a_numpy_policy_sets_the_rate_as_the_environment_maps_its_action(tmp_path):
    # absolute action a -> 50 kbps * 160**a: 0.3 is ~229 kbps, 0.6 ~1.05 Mbps.
    low = run(constant_policy(tmp_path, 0.3, "low"))
    high = run(constant_policy(tmp_path, 0.6, "high"))
    assert low["target_kbps_mean"] == pytest.approx(50 * 160**0.3, rel=0.02)
    assert high["target_kbps_mean"] == pytest.approx(50 * 160**0.6, rel=0.02)
    assert high["goodput_kbps"] > 3 * low["goodput_kbps"]


def test_the_policy_acts_on_the_environments_features(tmp_path):
    """A policy reading only receive_rate: its target follows what the flow receives,
    so it differs between a fast and a slow link (a constant without the features)."""
    w = np.zeros((1, 6))
    w[0, 0] = 0.6  # receive_rate, log-scaled over 10 kbps-10 Mbps as RtccEnv has it
    np.savez(tmp_path / "p.npz", W0=w, b0=np.array([0.15]))
    (tmp_path / "p.json").write_text(json.dumps({"env": ENV}))
    fast = run(tmp_path / "p.npz", capacity="4Mbps")
    slow = run(tmp_path / "p.npz", capacity="150kbps")
    still = 50 * 160**0.15  # the target with every feature 0
    assert fast["target_kbps_mean"] > 1.5 * still
    assert fast["target_kbps_mean"] > 1.2 * slow["target_kbps_mean"]


def test_the_controller_decides_as_the_environments_agent_would(tmp_path):
    """The same episode twice: RtccEnv stepped by a policy that reads every feature, and
    the scenario of that episode run by the policy as a controller. Their targets, report
    by report, must be the same numbers."""
    from policy_controller import PolicyController, load_policy

    from rtcc.gym import RtccEnv

    w = np.array([[0.5, -0.8, -0.5, -1.0, -0.2, 0.3]])[:, : len(ENV["features"])]
    np.savez(tmp_path / "f.npz", W0=w, b0=np.array([0.1]))
    (tmp_path / "f.json").write_text(json.dumps({"env": ENV}))
    policy, _ = load_policy(tmp_path / "f.npz")

    env = RtccEnv(duration=4.0, queues=("20pkt",), **{k: v for k, v in ENV.items() if k != "features"},
                  features=ENV["features"])  # fmt: skip
    model = {"name": "test-logged-policy", "model": str(tmp_path / "f.npz")}
    agent, decided = agent_and_controller_targets(env, policy.act, PolicyController,
                                                  "test-logged-policy", model, seed=5)  # fmt: skip
    assert len(agent) > 50 and len(set(agent)) > 10  # the features moved the policy
    assert decided[: len(agent)] == agent


def test_a_bad_policy_file_is_refused_in_one_line(tmp_path):
    import rtcc

    np.savez(tmp_path / "bad.npz", W0=np.zeros((1, 3)), b0=np.zeros(1))
    (tmp_path / "bad.json").write_text(json.dumps({"env": ENV}))
    with pytest.raises(Exception, match="W0 takes 3 inputs"):
        run(tmp_path / "bad.npz")
    with pytest.raises(Exception, match="does not exist"):
        run(tmp_path / "missing.npz")
    (tmp_path / "nojson.npz").write_bytes((tmp_path / "bad.npz").read_bytes())
    with pytest.raises(Exception, match=r"nojson\.json"):
        run(tmp_path / "nojson.npz")
    assert rtcc  # imported for the native module


def test_evaluate_runs_both_controllers_on_a_held_out_trace(tmp_path):
    model = constant_policy(tmp_path, 0.3)
    meta = json.loads((tmp_path / "policy.json").read_text())
    meta["split"] = {
        "train": [["opennetlab", "WIRED_900kbs.json"]],
        "test": [["opennetlab", "WIRED_200kbps.json"]],
    }
    (tmp_path / "policy.json").write_text(json.dumps(meta))
    out = subprocess.run(
        [sys.executable, str(EXAMPLE / "evaluate.py"), "--model", str(model), "--seeds", "1",
         "--duration", "4", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    import pandas as pd

    table = pd.read_csv(tmp_path / "eval_table.csv")
    assert set(table["controller"]) == {"learned", "gcc"}
    assert set(table["trace"]) == {"opennetlab/WIRED_200kbps.json", "mean over traces"}
    learned = table[(table["controller"] == "learned") & (table["trace"] != "mean over traces")]
    # 0.3 -> ~229 kbps on a ~200 kbps wired trace: the link is filled.
    assert learned["utilization"].iloc[0] > 0.7
    bad = subprocess.run(
        [sys.executable, str(EXAMPLE / "evaluate.py"), "--model", str(model),
         "--traces", "opennetlab/WIRED_900kbs.json", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "used in training" in bad.stderr


def test_train_then_evaluate_with_stable_baselines3(tmp_path):
    pytest.importorskip(
        "stable_baselines3", reason="pip install stable-baselines3 (the learn extra)"
    )
    train = subprocess.run(
        [sys.executable, str(EXAMPLE / "train.py"), "--timesteps", "256", "--vec", "2",
         "--duration", "3", "--seed", "5", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr
    meta = json.loads((tmp_path / "policy.json").read_text())
    train_set = {tuple(t) for t in meta["split"]["train"]}
    test_set = {tuple(t) for t in meta["split"]["test"]}
    assert train_set and test_set and not train_set & test_set
    assert 256 <= meta["timesteps"] <= 1024
    # The curve: evaluations before training and of the policy saved, episodes between.
    from curve import read_curve

    curve = read_curve(tmp_path / "curve.csv")
    assert [s for s, _ in curve["eval"]][0] == 0
    assert curve["eval"][-1][0] == meta["timesteps"] and curve["episode"]
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
    # The numpy export acts as the SB3 model does.
    from policy_controller import load_policy

    sb3, _ = load_policy(tmp_path / "policy.zip")
    mlp, _ = load_policy(tmp_path / "policy.npz")
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs = rng.uniform(0, 1, 6).astype(np.float32)
        assert mlp.act(obs) == pytest.approx(sb3.act(obs), abs=1e-5)
    held = sorted(test_set)[0]
    ev = subprocess.run(
        [sys.executable, str(EXAMPLE / "evaluate.py"), "--model", str(tmp_path / "policy.zip"),
         "--seeds", "1", "--duration", "3", "--traces", "/".join(held), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    assert "mean over traces" in ev.stdout


def test_the_curve_log_is_written_read_back_and_drawn(tmp_path):
    from curve import CurveLog, plot_curve, read_curve, rolling_mean

    log = CurveLog(tmp_path / "sub" / "curve.csv")
    log.add(0, "eval", -3.5, 0.1)
    for k in range(1, 6):
        log.add(100 * k, "episode", float(k), 0.2 * k)
    log.add(500, "eval", 12.25, 1.3)
    with pytest.raises(ValueError, match="kind 'train'"):
        log.add(600, "train", 1.0, 1.4)
    log.close()
    rows = read_curve(tmp_path / "sub" / "curve.csv")
    assert rows["eval"] == [(0, -3.5), (500, 12.25)]
    assert rows["episode"] == [(100 * k, float(k)) for k in range(1, 6)]
    assert rolling_mean([1.0, 2.0, 3.0, 4.0], 2) == [1.0, 1.5, 2.5, 3.5]
    png = plot_curve(tmp_path / "sub" / "curve.csv", tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    # A malformed log is refused naming the file, line and field; the CLI says it in one line.
    bad = tmp_path / "bad.csv"
    bad.write_text("steps,kind,reward,wall_s\n10,episode,abc,0.1\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2: .*reward 'abc'"):
        read_curve(bad)
    out = subprocess.run([sys.executable, str(EXAMPLE / "curve.py"), str(bad)],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "bad.csv:2" in out.stderr
    (tmp_path / "nocols.csv").write_text("steps,reward\n1,2\n")
    with pytest.raises(ValueError, match="missing column.*kind"):
        read_curve(tmp_path / "nocols.csv")
