"""The memory tasks: CartPole and MountainCar with the velocities hidden, usable by every system."""

import gymnasium as gym
import numpy as np
import pytest

import distrl
from distrl.envs import (
    CARTPOLE_NO_VELOCITY,
    MOUNTAIN_CAR_NO_VELOCITY,
    env_spec,
    make_env,
    make_vec_env,
)


def test_it_observes_exactly_cartpoles_positions_and_nothing_else():
    masked, full = make_env(CARTPOLE_NO_VELOCITY), gym.make("CartPole-v1")
    obs, _ = masked.reset(seed=3)
    ref, _ = full.reset(seed=3)
    assert obs.shape == (2,) and masked.observation_space.shape == (2,)
    rng = np.random.default_rng(0)
    for _ in range(30):  # same seed, same actions: the masked run is CartPole's positions, step for step
        np.testing.assert_array_equal(obs, ref[[0, 2]])
        a = int(rng.integers(2))
        obs, r, term, trunc, _ = masked.step(a)
        ref, r_ref, term_ref, trunc_ref, _ = full.step(a)
        assert (r, term, trunc) == (r_ref, term_ref, trunc_ref)
        if term:
            break
    assert masked.spec.max_episode_steps == 500  # CartPole-v1's own limit, applied once


def test_masked_mountain_car_observes_the_position_alone_step_for_step():
    masked, full = make_env(MOUNTAIN_CAR_NO_VELOCITY), gym.make("MountainCar-v0")
    obs, _ = masked.reset(seed=5)
    ref, _ = full.reset(seed=5)
    assert masked.observation_space.shape == (1,)
    assert masked.observation_space.low[0] == full.observation_space.low[0]  # the position's bounds
    rng = np.random.default_rng(1)
    for _ in range(200):
        np.testing.assert_array_equal(obs, ref[:1])
        a = int(rng.integers(3))
        obs, r, term, trunc, _ = masked.step(a)
        ref, r_ref, term_ref, trunc_ref, _ = full.step(a)
        assert (r, term, trunc) == (r_ref, term_ref, trunc_ref)
        if term or trunc:
            break
    assert trunc and masked.spec.max_episode_steps == 200  # MountainCar-v0's own limit


def test_vector_copies_and_spec():
    env = make_vec_env(CARTPOLE_NO_VELOCITY, 4, seed=0)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 2)
    env.close()
    assert env_spec(CARTPOLE_NO_VELOCITY).obs_shape == (2,)


@pytest.mark.parametrize("system", ["impala", "apex-dqn", "es"])
def test_systems_train_and_evaluate_on_it(tmp_path, system):
    s = distrl.train(system, env=CARTPOLE_NO_VELOCITY, runtime="inline", total_steps=3000, run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 3000
    assert distrl.evaluate(tmp_path / "r", episodes=2)["episodes"] == 2
