"""The small continuous task the continuous systems' learning tests use."""

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.envs import POINT_TO_ORIGIN, env_spec, make_env


def play(policy, episodes: int) -> float:
    env, rng, total = gym.make(POINT_TO_ORIGIN), np.random.default_rng(0), 0.0
    for i in range(episodes):
        obs, _ = env.reset(seed=i)
        done = False
        while not done:
            obs, r, term, trunc, _ = env.step(policy(obs, rng))
            total += r
            done = term or trunc
    return total / episodes


def test_a_hand_worked_episode_start():
    env = make_env(POINT_TO_ORIGIN)
    env.reset(seed=0)
    env.unwrapped.x = np.array([0.8, -0.3], np.float32)
    obs, r, term, trunc, _ = env.step(np.array([-1.0, 3.0], np.float32))  # the action is clipped to [-1, 1]
    np.testing.assert_allclose(obs, [0.3, 0.2], atol=1e-6)
    assert abs(r + np.hypot(0.3, 0.2)) < 1e-6
    assert not term and not trunc


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=2, max_size=2), st.integers(0, 2**31 - 1))
def test_the_point_stays_in_the_square_and_reward_is_minus_its_norm(action, seed):
    env = make_env(POINT_TO_ORIGIN)
    env.reset(seed=seed)
    obs, r, *_ = env.step(np.array(action, np.float32))
    assert np.all(np.abs(obs) <= 1.0)
    assert abs(r + float(np.linalg.norm(obs))) < 1e-6


def test_episodes_last_ten_steps_and_the_reference_returns():
    assert env_spec(POINT_TO_ORIGIN).obs_shape == (2,) and env_spec(POINT_TO_ORIGIN).action_shape == (2,)
    env = make_env(POINT_TO_ORIGIN)
    env.reset(seed=0)
    for t in range(10):
        *_, term, trunc, _ = env.step(np.zeros(2, np.float32))
        assert not term and trunc == (t == 9)
    # the figures the docstring and the learning tests quote
    assert -9.0 < play(lambda o, rng: rng.uniform(-1, 1, 2), 500) < -7.8
    assert -0.3 < play(lambda o, rng: np.clip(-2 * o, -1, 1), 500) < -0.15


def test_it_renders_for_videos():
    env = make_env(POINT_TO_ORIGIN, render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.x = np.array([1.0, 1.0], np.float32)  # top right
    frame = env.render()
    assert frame.shape == (64, 64, 3) and frame.dtype == np.uint8
    assert frame[2, 61].tolist() == [255, 255, 255] and frame[61, 2].tolist() != [255, 255, 255]
