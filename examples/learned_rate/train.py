"""Train a small PPO rate policy on rtcc.gym over a training split of the shipped traces.

    python examples/learned_rate/train.py --minutes 10 --vec 2 --seed 1

Writes to ``--out`` (default ``out/`` beside this file): ``policy.zip`` (the SB3 model),
``policy.npz`` (its MLP as numpy arrays, for ``policy_controller.py`` without torch),
``policy.json`` (environment settings, the exact split, seed, steps and wall time) and the
training curve, ``curve.csv`` (every training episode's reward, and every ``--eval-every``
steps the deterministic policy's mean reward over ``--eval-episodes`` held-out episodes,
the same ones each time) drawn as ``learning_curve.png`` (``curve.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
# The two sets the README's numbers were measured on (any bundled set works).
SETS = ("opennetlab", "pensieve-norway")
# What the policy sees and does: the environment's defaults (rtcc.gym).
ENV = {
    "features": ["receive_rate", "delay", "delay_gradient", "loss", "rtt", "last_action"],
    "action": "absolute",
    "min_rate": 50e3,
    "max_rate": 8e6,
    "start_rate": 300e3,
    "duration": 30.0,
    "delays": ["10ms", "25ms", "50ms"],
    "queues": ["50pkt", "200pkt"],
}


def make_split(seed: int, held_out: float = 0.34) -> dict[str, list[list[str]]]:
    """Per set, a seeded third of its files held out for evaluation (at least one)."""
    from rtcc.traces import locate, trace_files

    rng = np.random.default_rng(seed)
    split: dict[str, list[list[str]]] = {"train": [], "test": []}
    for name in SETS:
        files = sorted(p.name for p in trace_files(locate(None, name)))
        order = rng.permutation(len(files))
        n_test = max(1, round(held_out * len(files)))
        for rank, i in enumerate(order):
            split["test" if rank < n_test else "train"].append([name, files[i]])
    for part in split.values():
        part.sort()
    return split


def split_env(train: list[list[str]], **kwargs: Any) -> Any:
    """An RtccEnv whose episodes draw (set, file) from ``train`` with the episode's seed."""
    from rtcc.gym import RtccEnv

    class SplitEnv(RtccEnv):
        def __init__(self) -> None:
            super().__init__(trace_set=train[0][0], **kwargs)
            self.split = [tuple(p) for p in train]
            self.pick = np.random.default_rng(0)

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[Any, dict[str, Any]]:
            if seed is not None:
                self.pick = np.random.default_rng(seed)
            # RtccEnv.reset draws the file from self.files of self.trace_set.
            self.trace_set, file = self.split[int(self.pick.integers(len(self.split)))]
            self.files = [file]
            return super().reset(seed=seed, options=options)

    return SplitEnv()


def evaluate_policy(model: Any, env: Any, episodes: int) -> float:
    """Mean summed reward of the deterministic policy over ``episodes`` episodes of ``env``,
    episode i reset with seed i: the same traces, delays, queues and seeds every time."""
    total = 0.0
    for i in range(episodes):
        obs, _ = env.reset(seed=i)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
    return total / episodes


def export_npz(model: Any, path: Path) -> None:
    """The policy's deterministic path (pi MLP, tanh, then action_net) as W0,b0,...."""
    import torch

    policy = model.policy
    if not isinstance(policy.mlp_extractor.policy_net[1], torch.nn.Tanh):
        raise ValueError("export_npz: expects SB3's default tanh MLP policy")
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    linears.append(policy.action_net)
    arrays = {}
    for i, lin in enumerate(linears):
        arrays[f"W{i}"] = lin.weight.detach().cpu().numpy().astype(np.float64)
        arrays[f"b{i}"] = lin.bias.detach().cpu().numpy().astype(np.float64)
    np.savez(path, **arrays)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="wall-time budget (default 10)")
    ap.add_argument(
        "--timesteps", type=int, default=1_000_000, help="stop after this many env steps"
    )
    ap.add_argument("--vec", type=int, default=2, help="environments stepped together (default 2)")
    ap.add_argument("--subproc", action="store_true", help="one process per environment")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=ENV["duration"], help="episode length, s")
    ap.add_argument(
        "--eval-every", type=int, default=50_000, help="steps between evaluations (default 50000)"
    )
    ap.add_argument(
        "--eval-episodes", type=int, default=4, help="held-out episodes per evaluation (default 4)"
    )
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args(argv)
    if (
        args.minutes <= 0
        or args.timesteps < 1
        or args.vec < 1
        or args.duration <= 0
        or args.eval_every < 1
        or args.eval_episodes < 1
    ):
        ap.error(
            "--minutes, --timesteps, --vec, --duration, --eval-every and --eval-episodes "
            "must be positive"
        )

    import torch
    from curve import CurveLog, plot_curve
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    torch.set_num_threads(1)
    env_settings = {**ENV, "duration": args.duration}
    split = make_split(args.seed)
    kwargs = {
        k: env_settings[k]
        for k in (
            "features",
            "action",
            "min_rate",
            "max_rate",
            "start_rate",
            "duration",
            "delays",
            "queues",
        )
    }
    fns = [lambda: split_env(split["train"], **kwargs) for _ in range(args.vec)]
    # VecMonitor puts each finished episode's summed reward in its info["episode"]["r"].
    venv = VecMonitor(SubprocVecEnv(fns) if args.subproc else DummyVecEnv(fns))
    venv.seed(args.seed)
    eval_env = split_env(split["test"], **kwargs)
    args.out.mkdir(parents=True, exist_ok=True)
    log = CurveLog(args.out / "curve.csv")

    deadline = time.monotonic() + 60 * args.minutes

    class Curve(BaseCallback):
        """Stops at the wall-time budget; logs episodes and evaluations to curve.csv."""

        def _on_training_start(self) -> None:
            self.started = time.monotonic()
            self.next_eval = 0
            self._evaluate()

        def _evaluate(self) -> None:
            reward = evaluate_policy(self.model, eval_env, args.eval_episodes)
            log.add(self.num_timesteps, "eval", reward, time.monotonic() - self.started)
            self.next_eval = self.num_timesteps + args.eval_every

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    log.add(
                        self.num_timesteps,
                        "episode",
                        info["episode"]["r"],
                        time.monotonic() - self.started,
                    )
            return time.monotonic() < deadline

        def _on_rollout_start(self) -> None:
            # After an update, so the point is the policy as it now stands.
            if self.num_timesteps >= self.next_eval:
                self._evaluate()

    curve = Curve()

    # A short run (a test) still completes one rollout and update.
    n_steps = max(32, min(1024, args.timesteps) // args.vec)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=min(64, n_steps * args.vec),
        learning_rate=3e-4,
        policy_kwargs={"net_arch": [32, 32]},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    started = time.monotonic()
    model.learn(total_timesteps=args.timesteps, callback=curve, progress_bar=False)
    curve._evaluate()  # the policy saved
    wall = time.monotonic() - started
    venv.close()
    log.close()
    plot_curve(log.path, args.out / "learning_curve.png")

    model.save(args.out / "policy.zip")
    export_npz(model, args.out / "policy.npz")
    meta = {
        "env": env_settings,
        "split": split,
        "seed": args.seed,
        "vec": args.vec,
        "timesteps": int(model.num_timesteps),
        "wall_s": round(wall, 1),
    }
    (args.out / "policy.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(
        f"trained {model.num_timesteps} steps in {wall:.0f} s; "
        f"wrote {args.out}/policy.zip, policy.npz, policy.json, curve.csv, learning_curve.png"
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
