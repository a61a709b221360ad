"""The periodic evaluator: a role added to every system by its builder, no backend involved."""

import csv

import gymnasium as gym
import numpy as np
import pytest
import torch

import distrl
from distrl.agents.common.evaluator import Evaluator, from_weights


class Fixed(torch.nn.Module):
    """A Pendulum 'policy' that pushes against the angular velocity (a known, deterministic controller)."""

    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.tensor([-1.5]))

    def greedy(self, obs):
        return self.gain * obs[:, 2:3]


class Handle:
    seconds = 0.0

    def pull(self, newer_than):
        return (np.array([-1.5], np.float32), 3) if newer_than < 3 else None


def test_each_copy_plays_one_greedy_episode_with_the_pulled_weights():
    """Independent reference: the same controller on single envs seeded seed+i, stepped by hand."""
    ev = Evaluator("Pendulum-v1", Fixed(), episodes=3, seed=10, handle=Handle(), load=from_weights)
    info = ev.step()
    expected = []
    for i in range(3):
        env = gym.make("Pendulum-v1")
        obs, _ = env.reset(seed=10 + i)
        total, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(np.clip([-1.5 * obs[2]], -2, 2).astype(np.float32))
            total, done = total + r, term or trunc
        expected.append(total)
    assert info["metrics"]["eval_return_mean"] == pytest.approx(np.mean(expected), rel=1e-4)
    assert info["metrics"]["eval_version"] == 3
    assert ev.step()["metrics"]["eval_return_mean"] == info["metrics"]["eval_return_mean"]  # same seeds every time


CASES = {  # every system, tiny budgets, on the deterministic inline runtime
    "a2c": dict(env="CartPole-v1", num_envs=8, unroll_length=8),
    "impala": dict(env="CartPole-v1", num_envs=8, num_actors=2, unroll_length=8),
    "seed": dict(env="CartPole-v1", num_envs=8, num_actors=2, unroll_length=8),
    "apex-dqn": dict(env="CartPole-v1", num_envs=4, num_actors=2, min_replay=100, batch_size=32),
    "apex-ddpg": dict(env="Pendulum-v1", num_envs=2, num_actors=2, min_replay=100, batch_size=32, hidden=(32, 32)),
    "a3c": dict(env="CartPole-v1", num_envs=4, num_actors=2, t_max=8, segments_per_report=2),
    "gorila": dict(env="CartPole-v1", num_envs=4, num_actors=2, min_replay=100, batch_size=32),
}


@pytest.mark.parametrize("system", sorted(CASES))
def test_every_system_reports_periodic_evaluations(tmp_path, system):
    distrl.train(system, runtime="inline", total_steps=3000, eval_interval_steps=1000, eval_episodes=2,
                 run_dir=str(tmp_path / "r"), log_interval_s=1e-9, **CASES[system])
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    evals = [float(r["eval_return_mean"]) for r in rows if r.get("eval_return_mean")]
    assert len(evals) >= 2 and all(np.isfinite(evals))  # at 1000 and 2000 env steps (and maybe 3000)
