"""Scripted demonstrators: the energy-pumping MountainCar controller, from the full state and from positions."""

import gymnasium as gym
import numpy as np

import distrl
from distrl.datasets import demonstrators, load_episodes
from distrl.datasets.demonstrators import PositionsMountainCar, mountain_car
from distrl.envs import MOUNTAIN_CAR_NO_VELOCITY


def test_from_positions_it_acts_as_the_full_state_controller_on_the_same_trajectory():
    """Reference: MountainCar-v0's own velocity (the hidden state). Away from the left wall, where the env zeroes
    the velocity, the position difference is that velocity, so the two controllers push the same way."""
    env = gym.make("MountainCar-v0")
    demo = PositionsMountainCar()
    state, _ = env.reset(seed=2)
    for _ in range(200):
        from_positions = demo(state[None, :1])[0]
        assert from_positions == mountain_car(state[None])[0] or state[0] <= env.unwrapped.min_position + 1e-6
        state, _, term, trunc, _ = env.step(int(from_positions))
        if term or trunc:
            break
    assert term  # it reached the flag


def test_every_masked_episode_it_records_reaches_the_flag(tmp_path):
    rec = distrl.record(tmp_path / "demos", policy="distrl.datasets.demonstrators:mountain_car_positions",
                        env=MOUNTAIN_CAR_NO_VELOCITY, episodes=4, seed=7)
    assert rec["episodes"] == 4 and rec["mean_return"] > -200  # each episode ended at the flag
    assert all(r > -200 for r in load_episodes(tmp_path / "demos").returns())


class ResetSpy:
    def __init__(self):
        self.resets, self.calls = [], 0

    def reset(self):
        self.resets.append(self.calls)

    def __call__(self, obs):
        self.calls += 1
        return np.ones(len(obs), dtype=np.int64)


def test_record_calls_a_scripted_demonstrators_reset_at_every_episode_start(tmp_path, monkeypatch):
    spy = ResetSpy()
    monkeypatch.setattr(demonstrators, "spy", spy, raising=False)
    distrl.record(tmp_path / "d", policy="distrl.datasets.demonstrators:spy", env="MountainCar-v0", episodes=3)
    assert spy.resets == [0, 200, 400]  # before each episode's first action (each runs to the 200-step limit)


def test_reset_forgets_the_last_position():
    demo = PositionsMountainCar()
    demo(np.array([[-0.5]]))
    assert demo(np.array([[-0.6]]))[0] == 0  # moving left: push left
    demo.reset()
    assert demo(np.array([[-0.6]]))[0] == 2  # a new episode starts at rest: push right
