"""rtcc.gym: a Gymnasium environment stepping the simulator report by report."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import requires_native

pytestmark = requires_native
gymnasium = pytest.importorskip("gymnasium", reason="pip install 'rtcc[gym]'")


def test_the_environment_passes_gymnasiums_checker():
    from gymnasium.utils.env_checker import check_env

    from rtcc.gym import RtccEnv

    check_env(RtccEnv(duration=2.0), skip_render_check=True)


def episode(env, seed: int, policy) -> tuple[list[np.ndarray], list[float], dict]:
    obs, info = env.reset(seed=seed)
    observations, rewards, done = [obs], [], False
    while not done:
        obs, reward, terminated, truncated, step_info = env.step(policy(obs))
        observations.append(obs)
        rewards.append(reward)
        done = terminated or truncated
    return observations, rewards, {**info, **step_info}


def test_each_step_is_one_report_and_the_action_drives_the_rate():
    from rtcc.gym import FEATURES, RtccEnv

    env = RtccEnv(duration=5.0, delays=("25ms",), queues=("100pkt",))
    low = episode(env, 1, lambda o: np.array([0.1], np.float32))
    high = episode(env, 1, lambda o: np.array([0.6], np.float32))
    # One step per report: every 50 ms while packets arrive (early ones for NACKs), ~100 in 5 s.
    assert 80 <= len(low[1]) <= 200, len(low[1])
    assert low[2]["time_s"] == pytest.approx(5.0, abs=0.06)
    rate = FEATURES.index("receive_rate")
    mean_low = np.mean([o[rate] for o in low[0][20:]])
    mean_high = np.mean([o[rate] for o in high[0][20:]])
    assert mean_high > mean_low + 0.1, (mean_low, mean_high)
    # The same seed and actions give the same episode.
    again = episode(env, 1, lambda o: np.array([0.6], np.float32))
    assert again[1] == high[1]
    assert all((a == b).all() for a, b in zip(again[0], high[0]))


def test_features_action_and_reward_are_configurable():
    from rtcc.gym import RtccEnv

    env = RtccEnv(duration=2.0, features=("loss", "rtt"), action="multiplicative",
                  reward=(0.0, 0.0, 0.0))  # fmt: skip
    assert env.observation_space.shape == (2,) and env.action_space.low[0] == -1.0
    _, rewards, _ = episode(env, 3, lambda o: np.array([0.05], np.float32))
    assert rewards and set(rewards) == {0.0}
    with pytest.raises(ValueError, match="features"):
        RtccEnv(features=("bogus",))
    with pytest.raises(ValueError, match="action"):
        RtccEnv(action="relative")


def test_a_vector_of_environments_steps_in_one_process():
    from rtcc.gym import make_vec

    envs = make_vec(3, duration=1.0)
    obs, _ = envs.reset(seed=[1, 2, 3])
    assert obs.shape == (3, 6)
    for _ in range(10):
        obs, reward, terminated, truncated, _ = envs.step(np.full((3, 1), 0.5, np.float32))
    assert obs.shape == (3, 6) and reward.shape == (3,) and np.isfinite(reward).all()
    envs.close()


def random_steps(env, seed: int, n: int) -> list[np.ndarray]:
    """n steps of a seeded random policy, resetting (with the next seed) at each episode's end."""
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    while len(out) < n:
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append(obs)
        if terminated or truncated:
            seed += 1
            obs, _ = env.reset(seed=seed)
            out.append(obs)
    return out[:n]


def test_a_random_policy_for_1000_steps_is_deterministic_for_a_seed():
    from rtcc.gym import RtccEnv

    # Mahimahi's format, which takes no drop_above, as well as the default OpenNetLab set.
    for trace_set in ("opennetlab", "mahimahi"):
        env = RtccEnv(duration=10.0, trace_set=trace_set)
        a, b = random_steps(env, 7, 1000), random_steps(env, 7, 1000)
        assert len(a) == 1000
        assert all((x == y).all() for x, y in zip(a, b)), trace_set
        assert all(env.observation_space.contains(x) for x in a), trace_set
        c = random_steps(env, 8, 1000)
        assert any((x != y).any() for x, y in zip(a, c)), trace_set
