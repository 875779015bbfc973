"""rtcc.gym: a Gymnasium environment stepping the simulator report by report."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import agent_and_controller_targets, requires_native

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
    with pytest.raises(ValueError, match="positive number"):
        make_vec(0)
    with pytest.raises(RuntimeError, match="call reset"):
        make_vec(2, duration=1.0).step(np.full((2, 1), 0.5, np.float32))


def test_a_partial_reset_leaves_the_other_environments_running():
    from rtcc.gym import make_vec

    envs = make_vec(2, duration=2.0)
    envs.reset(seed=1)
    for _ in range(5):
        obs, *_ = envs.step(np.full((2, 1), 0.5, np.float32))
    before = envs.envs[1]._now_s
    again, info = envs.reset(options={"reset_mask": np.array([True, False])})
    assert envs.envs[0]._now_s == 0.0 and envs.envs[1]._now_s == before > 0
    assert np.array_equal(again[1], obs[1]) and list(info["_trace"]) == [True, False]
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.array([True])})


def test_the_vector_gives_what_gymnasiums_sync_vector_gives_through_autoresets():
    """rtcc's vector writes into shared arrays; Gymnasium's SyncVectorEnv over the same
    environments is the reference, step for step, across episode ends."""
    from rtcc.gym import RtccEnv, make_vec

    ref = gymnasium.vector.SyncVectorEnv([lambda: RtccEnv(duration=1.0) for _ in range(3)])
    vec = make_vec(3, duration=1.0)
    a, b = ref.reset(seed=4), vec.reset(seed=4)
    assert np.array_equal(a[0], b[0]) and list(a[1]["trace"]) == list(b[1]["trace"])
    rng, ended = np.random.default_rng(1), 0
    for _ in range(120):
        action = rng.uniform(0, 1, (3, 1)).astype(np.float32)
        a, b = ref.step(action), vec.step(action)
        for x, y in zip(a[:4], b[:4]):
            assert np.array_equal(x, y)
        for key in ("time_s", "_time_s", "target_bps"):
            assert np.array_equal(a[4][key], b[4][key])
        ended += int(a[2].sum())
    assert ended >= 3  # every environment went through at least one autoreset


def test_a_bad_action_is_refused_with_a_clear_error():
    from rtcc.gym import RtccEnv

    env = RtccEnv(duration=1.0)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="action: nan is not a finite number"):
        env.step(np.array([np.nan], np.float32))


def test_an_episodes_scenario_runs_as_rtcc_run_would():
    """The bench runs each episode whole with Rust's fixed: the scenario must be the
    episode's (its trace, delay, queue and seed) and run as it stands."""
    import rtcc
    from rtcc.gym import RtccEnv

    env = RtccEnv(duration=2.0)
    with pytest.raises(RuntimeError, match="reset"):
        env.scenario()
    _, info = env.reset(seed=3)
    scenario = env.scenario({"name": "fixed", "rate": "500kbps"})
    assert scenario["link"]["capacity"]["file"] == info["trace"] and scenario["seed"] == info["seed"]
    result = rtcc.simulate(scenario, record_packets=False)
    assert result.summary["flows"][0]["packets_sent"] > 0


def test_the_gym_bench_reports_each_way():
    """`rtcc bench --workload gym`, one run: a row per way with its steps per second."""
    from rtcc import benchgym

    rows = {r["way"]: r for r in benchgym.run(1)}
    assert set(rows) == {"env", "vec8", "simulation"}
    env = rows["env"]
    # Reports come every 50 ms while the flow sends (about 54 ms per step over an episode).
    assert 0.045 < env["sim_s"] / env["steps"] < 0.07
    assert env["sim_s"] == pytest.approx(benchgym.EPISODES * benchgym.DURATION_S, rel=1e-3)
    assert rows["simulation"]["sim_s"] == env["sim_s"]
    assert all(r["steps_per_s"] > 0 for r in rows.values())
    # The simulation row counts the env's steps over the same simulated time; the vector
    # runs until eight episodes end, so at least as long.
    assert rows["simulation"]["steps"] == env["steps"]
    assert rows["vec8"]["sim_s"] >= env["sim_s"] * 0.999
    assert rows["vec8"]["steps"] >= env["steps"]


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


def test_the_features_are_the_reports_as_numpy_computes_them():
    """The environment reads each report's raw columns in a Python loop; numpy over the
    same report is the reference for receive rate, queueing delay and its gradient."""
    import math

    from rtcc.gym import RtccEnv, _log_scale

    env = RtccEnv(duration=8.0, queues=("20pkt",))  # a short queue: some reports lose packets
    checked, lossy = [], 0
    report = env.feat.report
    state = {"last": 0.0, "min": math.inf, "queued": 0.0}

    def checking(now_s, fb):
        nonlocal lossy
        arrived = ~np.isnan(fb.arrival_s)
        lossy += int((~arrived).any())
        rate = float(fb.size[arrived].sum()) * 8 / max(now_s - state["last"], 1e-3)
        owd = fb.arrival_s[arrived] - fb.send_s[arrived]
        queued = state["queued"]
        if len(owd):
            state["min"] = min(state["min"], float(owd.min()))
            queued = float(owd.mean()) - state["min"]
        report(now_s, fb)
        v = env.feat._values
        assert v[0] == pytest.approx(_log_scale(rate), rel=1e-12, abs=1e-12)
        assert v[1] == pytest.approx(min(max(queued, 0.0), 1.0), abs=1e-12)
        assert v[2] == pytest.approx(min(max(queued - state["queued"], -1.0), 1.0), abs=1e-12)
        state.update(last=now_s, queued=queued)
        checked.append(now_s)

    env.feat.report = checking
    env.reset(seed=2)
    done = False
    while not done:
        _, _, done, _, _ = env.step(np.array([0.9], np.float32))  # above most traces' rates
    assert len(checked) > 100 and lossy > 0


def test_a_policy_runs_as_a_controller_deciding_as_the_agent_did():
    """Any callable from observation to action, as a controller: the same episode through
    the environment and through rtcc.simulate gives the same targets, report by report."""
    from rtcc.gym import RtccEnv

    def policy(obs: np.ndarray) -> float:
        return 0.35 + 0.5 * float(obs[0]) - 0.8 * float(obs[1]) - float(obs[3])

    for action in ("absolute", "multiplicative"):
        env = RtccEnv(duration=3.0, queues=("20pkt",), action=action)
        # Multiplicative actions centred below 0, so the rate moves both ways.
        act = (lambda o: policy(o) - 0.4) if action == "multiplicative" else policy
        name = f"test-policy-{action}"
        agent, decided = agent_and_controller_targets(env, act, env.policy_controller(act), name,
                                                      name, seed=4)  # fmt: skip
        assert len(agent) > 40 and len(set(agent)) > 10
        assert decided[: len(agent)] == agent, action


def test_a_policy_that_fails_stops_the_run_in_one_line():
    import rtcc
    from rtcc.gym import policy_controller

    rtcc.register_controller("test-policy-nan", policy_controller(lambda obs: float("nan")))
    scenario = {"duration": "2s", "link": {"capacity": "1Mbps"},
                "flow": [{"controller": "test-policy-nan", "encoder": "ideal"}]}  # fmt: skip
    with pytest.raises(Exception, match="test-policy-nan.*action: nan is not a finite number"):
        rtcc.simulate(scenario, record_packets=False)
    with pytest.raises(ValueError, match="features"):
        policy_controller(lambda obs: 0.5, features=("bogus",))
    with pytest.raises(ValueError, match="action"):
        policy_controller(lambda obs: 0.5, action="relative")
