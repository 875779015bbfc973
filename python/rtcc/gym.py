"""A Gymnasium environment over rtcc's simulator: an agent sets one video flow's target
rate at each receiver report.

Each step runs the simulation until the flow's next report (``Simulation.run_until_report``:
no threads; the run pauses within 1 ms of the report and resumes on the next step), then
returns that report's features. The action applies from then until the next report.

Observation (float32, one entry per name in ``features``, default all, in this order):

- ``receive_rate``: the report's received bytes over the time since the previous report,
  log-scaled from [10 kbps, 10 Mbps] to [0, 1] (OpenNetLab's ``liner_to_log``);
- ``delay``: the mean one-way delay of the report's packets over the smallest seen this
  episode (queueing delay), in seconds, clipped to [0, 1];
- ``delay_gradient``: its change since the previous report, s, clipped to [-1, 1];
- ``loss``: the report's fraction of packets lost, [0, 1];
- ``rtt``: the report's RTT sample, s, clipped to [0, 2];
- ``last_action``: the target in force, log-scaled as ``receive_rate``.

Action (a Box of shape (1,)): ``action="absolute"`` takes [0, 1], the target log-scaled
over [``min_rate``, ``max_rate``]; ``action="multiplicative"`` takes [-1, 1], the target
multiplied by 2**action. Reward (``reward=(w_rate, w_delay, w_loss)``) is OpenNetLab's
(the AlphaRTC challenge gym, ``rtc_env.py``: reward = rate − delay − loss on the scaled
features): w_rate·receive_rate − w_delay·delay − w_loss·loss, default (1, 1, 1).

Episodes: a trace file drawn from the bundled set ``trace_set`` (``rtcc traces``), a
one-way delay from ``delays`` and a queue from ``queues``, all with the episode's seed;
``duration`` simulated seconds. The same seed gives the same episode for the same actions.

:func:`make_vec` steps ``n`` environments in one process (``gymnasium.vector.SyncVectorEnv``).
Needs the ``gym`` extra: ``pip install 'rtcc[gym]'``.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

import rtcc
from rtcc.scenario import dumps_toml

__all__ = ["FEATURES", "RtccEnv", "make_vec"]

FEATURES = ("receive_rate", "delay", "delay_gradient", "loss", "rtt", "last_action")
_BOUNDS = {
    "receive_rate": (0.0, 1.0),
    "delay": (0.0, 1.0),
    "delay_gradient": (-1.0, 1.0),
    "loss": (0.0, 1.0),
    "rtt": (0.0, 2.0),
    "last_action": (0.0, 1.0),
}
# OpenNetLab's liner_to_log range (bits/s) for the rate features.
_LOG_LOW, _LOG_HIGH = 10e3, 10e6
_ids = itertools.count()


def _log_scale(bps: float) -> float:
    bps = min(max(bps, _LOG_LOW), _LOG_HIGH)
    return math.log(bps / _LOG_LOW) / math.log(_LOG_HIGH / _LOG_LOW)


class _Agent:
    """The flow's controller: hands each report to its environment, decides its target."""

    def __init__(self, env: RtccEnv) -> None:
        self.env = env

    def on_feedback(self, now_s: float, fb: Any) -> None:
        self.env._report(now_s, fb)

    def decision(self) -> float:
        return self.env._target


class RtccEnv(gymnasium.Env):
    """One video flow over a trace-driven bottleneck, its rate set by the agent."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        *,
        trace_set: str = "opennetlab",
        duration: float = 30.0,
        delays: Sequence[str] = ("10ms", "25ms", "50ms"),
        queues: Sequence[str] = ("50pkt", "200pkt"),
        features: Sequence[str] = FEATURES,
        action: str = "absolute",
        reward: tuple[float, float, float] = (1.0, 1.0, 1.0),
        min_rate: float = 50e3,
        max_rate: float = 8e6,
        start_rate: float = 300e3,
    ) -> None:
        from rtcc.traces import locate, trace_files

        unknown = [f for f in features if f not in FEATURES]
        if unknown or not features:
            raise ValueError(f"features: {unknown or 'none'} (known: {', '.join(FEATURES)})")
        if action not in ("absolute", "multiplicative"):
            raise ValueError(f"action: {action!r} is neither 'absolute' nor 'multiplicative'")
        if not 0 < min_rate <= start_rate <= max_rate:
            raise ValueError("rates: need 0 < min_rate <= start_rate <= max_rate")
        if not duration > 0 or not delays or not queues or len(reward) != 3:
            raise ValueError("duration must be positive; delays and queues non-empty; reward 3 weights")
        self.files = [p.name for p in trace_files(locate(None, trace_set))]
        if not self.files:
            raise ValueError(f"trace_set: {trace_set!r} has no trace files")
        self.trace_set, self.duration = trace_set, float(duration)
        self.delays, self.queues = list(delays), list(queues)
        self.features, self.action_mode, self.weights = tuple(features), action, reward
        self.min_rate, self.max_rate, self.start_rate = min_rate, max_rate, start_rate
        low, high = zip(*(_BOUNDS[f] for f in self.features))
        self.observation_space = spaces.Box(np.array(low, np.float32), np.array(high, np.float32))
        a_low = 0.0 if action == "absolute" else -1.0
        self.action_space = spaces.Box(a_low, 1.0, shape=(1,), dtype=np.float32)
        self.name = f"gym-{next(_ids)}"
        me = weakref.ref(self)  # the registry outlives the environment

        class Agent(_Agent):
            def __init__(self, params: dict[str, Any], context: Any) -> None:
                super().__init__(me())

        rtcc.register_controller(self.name, Agent, params=[], summary="a Gymnasium agent (rtcc.gym)")
        self._sim: Any = None
        self._target = start_rate
        self.episode: dict[str, Any] = {}

    # The simulation calls these through _Agent.
    def _report(self, now_s: float, fb: Any) -> None:
        arrived = ~np.isnan(fb.arrival_s)
        got = float(fb.size[arrived].sum()) * 8
        interval = max(now_s - self._last_report_s, 1e-3)
        self._last_report_s = now_s
        owd = fb.arrival_s[arrived] - fb.send_s[arrived]
        if len(owd):
            mean = float(owd.mean())
            self._owd_min = min(self._owd_min, float(owd.min()))
            queued = mean - self._owd_min
        else:
            queued = self._queued
        self._values = {
            "receive_rate": _log_scale(got / interval),
            "delay": min(max(queued, 0.0), 1.0),
            "delay_gradient": min(max(queued - self._queued, -1.0), 1.0),
            "loss": fb.fraction_lost,
            "rtt": 0.0 if math.isnan(fb.rtt_s) else min(fb.rtt_s, 2.0),
        }
        self._queued = queued

    def _observation(self) -> np.ndarray:
        values = {**self._values, "last_action": self._action_scaled()}
        return np.array([values[f] for f in self.features], dtype=np.float32)

    def _action_scaled(self) -> float:
        return _log_scale(self._target)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        self.episode = {
            "trace": self.files[int(rng.integers(len(self.files)))],
            "delay": self.delays[int(rng.integers(len(self.delays)))],
            "queue": self.queues[int(rng.integers(len(self.queues)))],
            "seed": int(rng.integers(2**31)),
        }
        scenario = {
            "duration": f"{self.duration}s",
            "seed": self.episode["seed"],
            "link": {
                "capacity": {"kind": "trace", "set": self.trace_set, "file": self.episode["trace"]}
                # OpenNetLab traces hold recording artefacts above 1 Gbps (rtcc traces); the
                # other formats have no such field.
                | ({"drop_above": "1Gbps"} if self.trace_set == "opennetlab" else {}),
                "delay": self.episode["delay"],
                "queue": self.episode["queue"],
            },
            "record": {"packets": False},
            "flow": [{
                "controller": self.name, "encoder": "ideal",
                "start_rate": f"{self.start_rate}bps", "min_rate": f"{self.min_rate}bps",
                "max_rate": f"{self.max_rate}bps",
            }],  # fmt: skip
        }
        self._target = self.start_rate
        self._last_report_s, self._owd_min, self._queued = 0.0, math.inf, 0.0
        self._values = {f: 0.0 for f in FEATURES}
        self._sim = rtcc.native().Simulation(dumps_toml(scenario), f"<{self.name}>")
        return self._observation(), dict(self.episode)

    def step(self, action: Any):
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        a = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0],
                          self.action_space.low[0], self.action_space.high[0]))  # fmt: skip
        if self.action_mode == "absolute":
            target = self.min_rate * (self.max_rate / self.min_rate) ** a
        else:
            target = self._target * 2.0**a
        self._target = min(max(target, self.min_rate), self.max_rate)
        more = self._sim.run_until_report(math.inf)
        v = self._values
        w_rate, w_delay, w_loss = self.weights
        reward = w_rate * v["receive_rate"] - w_delay * v["delay"] - w_loss * v["loss"]
        info = {"time_s": float(self._sim.now_s), "target_bps": self._target}
        if not more:
            self._sim = None
        return self._observation(), float(reward), not more, False, info


def make_vec(n: int, **kwargs: Any) -> gymnasium.vector.SyncVectorEnv:
    """``n`` environments (``RtccEnv(**kwargs)``) stepped together in this process."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n: {n!r} is not a positive number of environments")
    return gymnasium.vector.SyncVectorEnv([lambda: RtccEnv(**kwargs) for _ in range(n)])
