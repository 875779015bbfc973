"""A trained rate policy as an rtcc controller: ``py:policy_controller:PolicyController``.

At every receiver report it computes the same observation as ``rtcc.gym.RtccEnv`` (the
environment's own feature code, run on this flow's reports), asks the policy for an
action and maps it to a target exactly as the environment's ``step`` does.

A policy is a file with a JSON sidecar of the environment settings it was trained with
(``policy.json``: features, action, min/max/start rate), written by ``train.py``:

- ``*.zip``: a stable-baselines3 PPO model (needs ``stable-baselines3``);
- ``*.npz``: the same MLP as numpy arrays (``W0``, ``b0``, ``W1``, ``b1``, ...; tanh
  between layers, none after the last; the action is clipped to the action space, as
  SB3's deterministic ``predict`` does), needing nothing but numpy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rtcc.gym import FEATURES, PolicyAgent
from rtcc.pycontrollers import Param

HERE = Path(__file__).resolve().parent
DEFAULT_MODEL = HERE / "out" / "policy.zip"
_loaded: dict[str, tuple[Any, dict[str, Any]]] = {}


class NumpyMlp:
    """The deterministic action of an MLP policy held as numpy arrays."""

    def __init__(
        self, layers: list[tuple[np.ndarray, np.ndarray]], low: float, high: float
    ) -> None:
        self.layers, self.low, self.high = layers, low, high

    @classmethod
    def load(cls, path: Path, low: float, high: float) -> NumpyMlp:
        with np.load(path) as data:
            n = sum(1 for k in data.files if k.startswith("W"))
            if n == 0 or any(
                f"W{i}" not in data.files or f"b{i}" not in data.files for i in range(n)
            ):
                raise ValueError(
                    f"{path}: expected arrays W0, b0, ..., W{{n}}, b{{n}}; "
                    f"found {sorted(data.files)}"
                )
            layers = [
                (np.asarray(data[f"W{i}"], np.float64), np.asarray(data[f"b{i}"], np.float64))
                for i in range(n)
            ]
        for i, (w, b) in enumerate(layers):
            if w.ndim != 2 or b.shape != (w.shape[0],):
                raise ValueError(f"{path}: W{i} {w.shape} and b{i} {b.shape} do not form a layer")
        return cls(layers, low, high)

    def act(self, obs: np.ndarray) -> float:
        x = np.asarray(obs, np.float64)
        for i, (w, b) in enumerate(self.layers):
            x = w @ x + b
            if i < len(self.layers) - 1:
                x = np.tanh(x)
        return float(np.clip(x[0], self.low, self.high))


class _Sb3:
    def __init__(self, path: Path) -> None:
        import torch
        from stable_baselines3 import PPO

        torch.set_num_threads(1)  # one report at a time: threads only add overhead
        self.model = PPO.load(str(path), device="cpu")

    def act(self, obs: np.ndarray) -> float:
        action, _ = self.model.predict(obs, deterministic=True)
        return float(np.asarray(action).reshape(-1)[0])


def load_policy(model: str | Path) -> tuple[Any, dict[str, Any]]:
    """(policy, settings) for a ``.zip`` or ``.npz`` policy and its ``.json`` sidecar."""
    path = Path(model)
    key = str(path.resolve())
    if key in _loaded:
        return _loaded[key]
    sidecar = path.with_suffix(".json")
    if not path.is_file():
        raise ValueError(f'model: {path} does not exist (run train.py, or give model = "...")')
    if not sidecar.is_file():
        raise ValueError(f"model: {sidecar} (the policy's environment settings) does not exist")
    try:
        settings = json.loads(sidecar.read_text())["env"]
        features = list(settings["features"])
        action = settings["action"]
        float(settings["min_rate"]), float(settings["max_rate"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"{sidecar}: env: missing or bad field ({type(exc).__name__}: {exc})"
        ) from None
    if not features or any(f not in FEATURES for f in features):
        raise ValueError(f"{sidecar}: env.features: {features} (known: {', '.join(FEATURES)})")
    if action not in ("absolute", "multiplicative"):
        raise ValueError(
            f"{sidecar}: env.action: {action!r} is neither 'absolute' nor 'multiplicative'"
        )
    low = 0.0 if action == "absolute" else -1.0
    if path.suffix == ".zip":
        policy: Any = _Sb3(path)
    elif path.suffix == ".npz":
        policy = NumpyMlp.load(path, low, 1.0)
        if policy.layers[0][0].shape[1] != len(features):
            raise ValueError(
                f"{path}: W0 takes {policy.layers[0][0].shape[1]} inputs, "
                f"the policy has {len(features)} features"
            )
    else:
        raise ValueError(f"model: {path}: expected a .zip (stable-baselines3) or .npz policy")
    _loaded[key] = (policy, settings)
    return _loaded[key]


class PolicyController(PolicyAgent):
    """a trained rate policy (examples/learned_rate): the target from the gym's features"""

    params = [  # noqa: RUF012 (read once by register_controller)
        Param(
            "model",
            "",
            "policy file (.zip or .npz); empty: out/policy.zip beside this file",
            kind="text",
        )
    ]

    def __init__(self, params: dict[str, Any], context: Any) -> None:
        policy, env = load_policy(params["model"] or DEFAULT_MODEL)
        # RtccEnv's own features and action mapping: the controller sees what the agent saw.
        super().__init__(context, policy.act, env["features"], env["action"],
                         float(env["min_rate"]), float(env["max_rate"]))  # fmt: skip
