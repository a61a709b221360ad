"""Deep Sea (bsuite, deterministic): the treasure only at the end of N "right"s, each cell's "right" its own."""

import gymnasium as gym
import numpy as np
import pytest

import distrl
from distrl.datasets.demonstrators import deep_sea
from distrl.envs import DEEP_SEA, env_spec, make_env, make_vec_env
from distrl.envs.deep_sea import DeepSea, action_mapping


def play(env, actions):
    obs, _ = env.reset(seed=0)
    total, steps, cells = 0.0, 0, []
    for a in actions:
        cells.append(tuple(np.argwhere(obs == 1.0)[0]))
        obs, r, term, trunc, _ = env.step(a)
        total, steps = total + r, steps + 1
        if term or trunc:
            break
    return total, steps, cells, obs


def test_the_treasure_path_returns_0_99_by_hand():
    """N = 3 worked by hand: "right" at every step, column 0 -> 1 -> 2, then "right" in the last column pays 1;
    each right costs 0.01 / 3."""
    env = DeepSea(size=3)
    right = env.right
    path = [(0, 0), (1, 1), (2, 2)]
    total, steps, cells, last = play(env, [int(right[r, c]) for r, c in path])
    assert cells == path and steps == 3
    assert total == pytest.approx(1.0 - 3 * 0.01 / 3)
    assert not last.any()  # fallen off the bottom: the terminal grid is empty


def test_one_left_anywhere_loses_the_treasure_and_left_costs_nothing():
    env = DeepSea(size=6)
    for wrong_at in range(6):
        actions, row, col = [], 0, 0
        for row in range(6):
            good = int(env.right[row, col])
            a = 1 - good if row == wrong_at else good
            actions.append(a)
            col = max(col - 1, 0) if row == wrong_at else min(col + 1, 5)
        total, steps, *_ = play(env, actions)
        assert steps == 6 and total < 0.0  # only move costs: the 1 needs all six rights
    env.reset()
    total, *_ = play(env, [1 - int(env.right[r, 0]) for r in range(6)])  # always left: stays in column 0
    assert total == 0.0


def test_the_instance_is_fixed_by_mapping_seed_not_by_reset_seeds():
    a, b = DeepSea(8), DeepSea(8)
    a.reset(seed=1)
    b.reset(seed=99)
    np.testing.assert_array_equal(a.right, b.right)
    np.testing.assert_array_equal(a.right, action_mapping(8))
    assert not np.array_equal(DeepSea(8, mapping_seed=1).right, a.right)
    assert 0 < a.right.mean() < 1  # both actions mean "right" somewhere


def test_random_actions_do_not_find_the_treasure_at_the_default_size():
    env = make_env(DEEP_SEA)
    rng = np.random.default_rng(0)
    best = max(play(env, rng.integers(0, 2, 20))[0] for _ in range(500))
    assert best < 0.5  # 2^-20 a try


def test_the_demonstrator_finds_it_every_time_and_vector_copies_share_the_instance():
    vec = make_vec_env(DEEP_SEA, 3, seed=0)
    obs, _ = vec.reset(seed=0)
    total = np.zeros(3)
    for _ in range(20):
        obs, r, term, trunc, _ = vec.step(deep_sea(obs))
        total += r
    assert np.allclose(total, 0.99) and term.all()
    vec.close()
    assert env_spec(DEEP_SEA).obs_shape == (20, 20)
    assert isinstance(gym.make(DEEP_SEA, size=5).unwrapped, DeepSea)


def test_a_replay_system_trains_and_evaluates_on_it(tmp_path):
    s = distrl.train("apex-dqn", env=DEEP_SEA, runtime="inline", total_steps=2000, run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 2000
    assert distrl.evaluate(tmp_path / "r", episodes=2)["episodes"] == 2
