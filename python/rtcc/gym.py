"""A Gymnasium environment over rtcc's simulator: an agent sets one video flow's target
rate at each receiver report.

Each step runs the simulation until the flow's next report (``Simulation.run_until_report``:
no threads; the run stops right after the report's event and resumes on the next step),
then returns that report's features. The next action applies from that report's instant
until the report after it, as a controller deciding in ``on_feedback`` would.

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

:func:`make_vec` steps ``n`` environments in one process (:class:`RtccVecEnv`, a Gymnasium
``VectorEnv``).
Needs the ``gym`` extra: ``pip install 'rtcc[gym]'``.
"""

from __future__ import annotations

import itertools
import math
import sys
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

import rtcc
from rtcc.scenario import dumps_toml

__all__ = [
    "FEATURES", "Features", "PolicyAgent", "RtccEnv", "RtccVecEnv", "action_target", "make_vec",
    "policy_controller",
]  # fmt: skip

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
_NATIVE_LE = sys.byteorder == "little"


def _log_scale(bps: float) -> float:
    bps = min(max(bps, _LOG_LOW), _LOG_HIGH)
    return math.log(bps / _LOG_LOW) / math.log(_LOG_HIGH / _LOG_LOW)


class Features:
    """The observation's state, fed report by report: what :class:`RtccEnv` gives its agent,
    and what a trained policy run as a controller computes from its own reports (set
    ``target`` to the rate in force before each :meth:`observation`)."""

    def __init__(self, features: Sequence[str] = FEATURES, target: float = 300e3) -> None:
        unknown = [f for f in features if f not in FEATURES]
        if unknown or not features:
            raise ValueError(f"features: {unknown or 'none'} (known: {', '.join(FEATURES)})")
        self.features = tuple(features)
        self._index = [FEATURES.index(f) for f in self.features]
        self.reset(target)

    def reset(self, target: float) -> None:
        """The state at an episode's start, ``target`` (bits/s) in force."""
        self.target = target
        self._last_report_s, self._owd_min, self._queued = 0.0, math.inf, 0.0
        self._values = [0.0] * len(FEATURES)  # in FEATURES' order

    def report(self, now_s: float, fb: Any) -> None:
        """Takes in one receiver report (a :class:`rtcc.pycontrollers.Feedback`)."""
        # A report holds a few to a few hundred packets: a Python loop over its raw
        # (little-endian) columns costs a third of numpy's per-call overhead on arrays
        # this short.
        if _NATIVE_LE:
            raw = fb._raw
            columns = (memoryview(raw[2]).cast("d").tolist(), memoryview(raw[1]).cast("d").tolist(),
                       memoryview(raw[3]).cast("Q").tolist())  # fmt: skip
        else:
            columns = (fb.arrival_s.tolist(), fb.send_s.tolist(), fb.size.tolist())
        got, owd_sum, arrived, owd_min = 0, 0.0, 0, math.inf
        for arrival, send, size in zip(*columns):
            if arrival == arrival:  # not NaN (lost)
                got += size
                owd = arrival - send
                owd_sum += owd
                arrived += 1
                if owd < owd_min:
                    owd_min = owd
        interval = max(now_s - self._last_report_s, 1e-3)
        self._last_report_s = now_s
        if arrived:
            mean = owd_sum / arrived
            self._owd_min = min(self._owd_min, owd_min)
            queued = mean - self._owd_min
        else:
            queued = self._queued
        got *= 8
        rtt = fb.rtt_s
        values = self._values
        values[0] = _log_scale(got / interval)
        values[1] = min(max(queued, 0.0), 1.0)
        values[2] = min(max(queued - self._queued, -1.0), 1.0)
        values[3] = fb.fraction_lost
        values[4] = 0.0 if math.isnan(rtt) else min(rtt, 2.0)
        self._queued = queued

    def observation(self) -> np.ndarray:
        """The features (float32, in ``features``' order) with ``target`` in force."""
        values = self._values
        values[5] = _log_scale(self.target)
        return np.array([values[i] for i in self._index], dtype=np.float32)


def action_target(a: float, current: float, mode: str, low: float, high: float) -> float:
    """The target an action sets: ``absolute`` a in [0, 1] log-scaled over [low, high],
    ``multiplicative`` a in [-1, 1] as the current target times 2**a; clipped to both."""
    if not math.isfinite(a):
        raise ValueError(f"action: {a} is not a finite number")
    if mode == "absolute":
        target = low * (high / low) ** min(max(a, 0.0), 1.0)
    else:
        target = current * 2.0 ** min(max(a, -1.0), 1.0)
    return min(max(target, low), high)


class PolicyAgent:
    """The controller behind :func:`policy_controller`: at each report the observation of
    :class:`Features`, ``policy``'s action mapped by :func:`action_target`, clamped to the
    flow's rates. A subclass that loads its policy itself (from a file named by a
    parameter, say) calls ``__init__`` with it."""

    def __init__(self, context: Any, policy: Callable[[np.ndarray], Any], features: Sequence[str],
                 action: str, min_rate: float, max_rate: float) -> None:  # fmt: skip
        self.policy, self.action_mode = policy, action
        self.min_rate, self.max_rate = min_rate, max_rate
        self.lo, self.hi = max(context.min_bps, 1.0), context.max_bps
        self.feat = Features(features, min(max(context.start_bps, self.lo), self.hi))
        self._act()  # the first action applies from the start, as after RtccEnv.reset

    def _act(self) -> None:
        a = float(np.asarray(self.policy(self.feat.observation()), dtype=np.float64).reshape(-1)[0])
        target = action_target(a, self.feat.target, self.action_mode, self.min_rate, self.max_rate)
        self.feat.target = min(max(target, self.lo), self.hi)

    def on_feedback(self, now_s: float, fb: Any) -> None:
        self.feat.report(now_s, fb)
        self._act()

    def decision(self) -> float:
        return self.feat.target


def policy_controller(
    policy: Callable[[np.ndarray], Any],
    *,
    features: Sequence[str] = FEATURES,
    action: str = "absolute",
    min_rate: float = 50e3,
    max_rate: float = 8e6,
    summary: str = "a trained policy (rtcc.gym.policy_controller)",
) -> type:
    """A controller class that runs ``policy`` (any callable from an observation to an
    action: a numpy function, a torch or ONNX model the caller wraps) as :class:`RtccEnv`'s
    agent: at each report the observation of :class:`Features`, the action mapped to the
    target as :meth:`RtccEnv.step` maps it (``action``, ``min_rate``, ``max_rate`` as the
    policy was trained with), then clamped to the flow's own rates. Register it
    (``rtcc.register_controller(name, cls)``) or bind it to a module attribute for a
    ``py:module:attr`` name, which sweep workers can import. A policy that raises or gives a
    non-finite action stops the run with one line naming the controller."""
    feats = tuple(features)
    Features(feats)  # checks the names
    if action not in ("absolute", "multiplicative"):
        raise ValueError(f"action: {action!r} is neither 'absolute' nor 'multiplicative'")
    if not 0 < min_rate <= max_rate:
        raise ValueError("rates: need 0 < min_rate <= max_rate")

    class PolicyController(PolicyAgent):
        params: ClassVar[list[Any]] = []

        def __init__(self, params: dict[str, Any], context: Any) -> None:
            super().__init__(context, policy, feats, action, min_rate, max_rate)

    PolicyController.__doc__ = summary
    return PolicyController


class _Agent:
    """The flow's controller: hands each report to its environment, decides its target."""

    def __init__(self, env: RtccEnv) -> None:
        self.env = env

    def on_feedback(self, now_s: float, fb: Any) -> None:
        self.env.feat.report(now_s, fb)

    def decision(self) -> float:
        return self.env.feat.target


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
        self.feat = Features(self.features, start_rate)
        self.min_rate, self.max_rate, self.start_rate = min_rate, max_rate, start_rate
        low, high = zip(*(_BOUNDS[f] for f in self.features))
        self.observation_space = spaces.Box(np.array(low, np.float32), np.array(high, np.float32))
        a_low = 0.0 if action == "absolute" else -1.0
        self._a_low = a_low
        self.action_space = spaces.Box(a_low, 1.0, shape=(1,), dtype=np.float32)
        self.name = f"gym-{next(_ids)}"
        me = weakref.ref(self)  # the registry outlives the environment

        class Agent(_Agent):
            def __init__(self, params: dict[str, Any], context: Any) -> None:
                super().__init__(me())

        rtcc.register_controller(self.name, Agent, params=[], summary="a Gymnasium agent (rtcc.gym)")
        self._sim: Any = None
        self.episode: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        self.episode = {
            "trace": self.files[int(rng.integers(len(self.files)))],
            "delay": self.delays[int(rng.integers(len(self.delays)))],
            "queue": self.queues[int(rng.integers(len(self.queues)))],
            "seed": int(rng.integers(2**31)),
        }
        self._now_s = 0.0
        self.feat.reset(self.start_rate)
        self._sim = rtcc.native().Simulation(dumps_toml(self.scenario()), f"<{self.name}>")
        return self.feat.observation(), dict(self.episode)

    def policy_controller(self, policy: Callable[[np.ndarray], Any]) -> type:
        """:func:`policy_controller` with this environment's features, action and rates."""
        return policy_controller(policy, features=self.features, action=self.action_mode,
                                 min_rate=self.min_rate, max_rate=self.max_rate)  # fmt: skip

    def scenario(self, controller: Any = None) -> dict[str, Any]:
        """The current episode's scenario (after :meth:`reset`), its flow run by this
        environment's agent or by ``controller`` (a registry name or table): what
        ``rtcc run`` would run for the same episode."""
        if not self.episode:
            raise RuntimeError("call reset() before scenario()")
        return {
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
                "controller": self.name if controller is None else controller, "encoder": "ideal",
                "start_rate": f"{self.start_rate}bps", "min_rate": f"{self.min_rate}bps",
                "max_rate": f"{self.max_rate}bps",
            }],  # fmt: skip
        }

    def step(self, action: Any):
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        if type(action) is np.ndarray and action.size == 1:
            a = float(action.flat[0])
        else:
            a = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        done, reward = self._advance(a)
        info = {"time_s": self._now_s, "target_bps": self.feat.target}
        return self.feat.observation(), reward, done, False, info

    def _advance(self, a: float) -> tuple[bool, float]:
        """Applies action ``a`` and runs to the next report: (episode over, reward)."""
        self.feat.target = action_target(a, self.feat.target, self.action_mode, self.min_rate, self.max_rate)
        sim = self._sim
        more = sim.run_until_report(math.inf)
        self._now_s = float(sim.now_s)
        if not more:
            self._sim = None
        v = self.feat._values
        w_rate, w_delay, w_loss = self.weights
        return not more, float(w_rate * v[0] - w_delay * v[1] - w_loss * v[3])

class RtccVecEnv(gymnasium.vector.VectorEnv):
    """``n`` :class:`RtccEnv` stepped in turn in this process, written into shared arrays
    (what ``gymnasium.vector.SyncVectorEnv`` does, without its per-step merging of info
    dicts). Autoreset is Gymnasium's default, next-step: the step after an episode ends
    resets that environment and returns its first observation, reward 0. ``info`` holds
    ``time_s`` and ``target_bps`` arrays (with their ``_`` masks); a reset's episode
    fields come as ``SyncVectorEnv`` gives them."""

    metadata = {"render_modes": [], "autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, n: int, **kwargs: Any) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n: {n!r} is not a positive number of environments")
        self.envs = [RtccEnv(**kwargs) for _ in range(n)]
        self.num_envs = n
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, n)
        self._autoreset = np.zeros(n, dtype=bool)

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: {len(seeds)} seeds for {self.num_envs} environments")
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seeds[0])
        options = dict(options or {})
        # Gymnasium's partial reset: only the environments the mask selects.
        mask = np.asarray(options.pop("reset_mask", np.ones(self.num_envs, dtype=bool)), dtype=bool)
        if mask.shape != (self.num_envs,):
            raise ValueError(f"options: reset_mask has shape {mask.shape}, not ({self.num_envs},)")
        obs = np.empty(self.observation_space.shape, dtype=np.float32)
        info: dict[str, Any] = {}
        for i, (env, s) in enumerate(zip(self.envs, seeds)):
            if mask[i]:
                obs[i], env_info = env.reset(seed=s, options=options or None)
                info = self._add_info(info, env_info, i)
                self._autoreset[i] = False
            else:
                obs[i] = env.feat.observation()
        return obs, info

    def step(self, actions: Any):
        a = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)[:, 0].tolist()
        n = self.num_envs
        obs = np.empty(self.observation_space.shape, dtype=np.float32)
        reward = np.zeros(n)
        done = np.zeros(n, dtype=bool)
        now = np.zeros(n)
        target = np.zeros(n)
        resets = []
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:
                obs[i], env_info = env.reset()
                resets.append((i, env_info))
            else:
                if env._sim is None:
                    raise RuntimeError(f"environment {i}: call reset() before step()")
                done[i], reward[i] = env._advance(a[i])
                obs[i] = env.feat.observation()
                now[i], target[i] = env._now_s, env.feat.target
        ran = ~self._autoreset
        info: dict[str, Any] = {"time_s": now, "target_bps": target, "_time_s": ran, "_target_bps": ran.copy()}
        for i, env_info in resets:
            info = self._add_info(info, env_info, i)
        self._autoreset = done.copy()
        return obs, reward, done, np.zeros(n, dtype=bool), info

    def close_extras(self, **kwargs: Any) -> None:
        self.envs = []


def make_vec(n: int, **kwargs: Any) -> RtccVecEnv:
    """``n`` environments (``RtccEnv(**kwargs)``) stepped together in this process."""
    return RtccVecEnv(n, **kwargs)
