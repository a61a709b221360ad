"""The transition actor keeps each env's tags (a league game's ``versus_fixed``) with the transitions of the episode
they came from, through n-step windows and next-step autoreset."""

import gymnasium as gym
import numpy as np
import pytest

from distrl.agents.common import transition_actor
from distrl.agents.common.exploration import EpsilonGreedy
from distrl.agents.common.transition_actor import TransitionActor, TransitionSettings, chunk_items, chunk_spec
from distrl.core.types import allocate
from distrl.envs import EnvSpec
from distrl.models import QNetwork


class Flagged(gym.vector.VectorEnv):
    """Two envs with next-step autoreset, as gymnasium's: env e's episode k lasts 1 + (k + 2e) % 4 steps and is played
    against a fixed player where (k + e) % 2 == 0 (each step's info says so, as a league game's does). An observation
    is (e, k, t): which env, episode and step it was."""

    def __init__(self):
        self.num_envs = 2
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.single_action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, 2)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, 2)
        self.k, self.t, self.done = np.zeros(2, int), np.zeros(2, int), np.zeros(2, bool)

    def _out(self):
        e = np.arange(2)
        obs = np.stack([e, self.k, self.t], axis=1).astype(np.float32)
        fixed = (self.k + e) % 2 == 0
        return obs, {"versus_fixed": fixed, "_versus_fixed": np.ones(2, bool)}

    def reset(self, *, seed=None, options=None):
        self.k[:], self.t[:], self.done[:] = 0, 0, False
        return self._out()

    def step(self, actions):
        reward, terminated = np.zeros(2), np.zeros(2, bool)
        for e in range(2):
            if self.done[e]:  # the reset step: the next episode's first observation and flag
                self.k[e], self.t[e], self.done[e] = self.k[e] + 1, 0, False
            else:
                self.t[e] += 1
                reward[e] = 1.0
                terminated[e] = self.done[e] = self.t[e] == 1 + (self.k[e] + 2 * e) % 4
        obs, info = self._out()
        return obs, reward, terminated, np.zeros(2, bool), info


@pytest.mark.parametrize("n", [1, 3])
def test_each_transition_carries_its_episodes_flag(monkeypatch, n):
    monkeypatch.setattr(transition_actor, "make_vec_env", lambda *args, **kwargs: Flagged())
    spec = EnvSpec(gym.spaces.Box(-np.inf, np.inf, (3,), np.float32), gym.spaces.Discrete(2))
    settings = TransitionSettings(num_envs=2, unroll_length=5, n_step=n, gamma=1.0, tags=("versus_fixed",))
    actor = TransitionActor("flagged", spec, settings, 0, QNetwork((3,), 2, hidden=(8,)),
                            EpsilonGreedy(np.full(2, 0.5), 2))
    out = allocate(chunk_spec(spec, 2, 5, n, ("versus_fixed",)))
    items = []
    for _ in range(8):
        actor.unroll(out)
        items.append(chunk_items(out))
    obs = np.concatenate([i["obs"] for i in items])
    fixed = np.concatenate([i["versus_fixed"] for i in items])
    assert fixed.dtype == bool and len(fixed) == len(obs) > 30
    env, episode = obs[:, 0].astype(int), obs[:, 1].astype(int)
    assert np.array_equal(fixed, (episode + env) % 2 == 0)
    assert fixed.any() and not fixed.all()
    # every step of every finished episode made one transition, whatever its flag
    assert np.all(obs[:, 2] < 1 + (episode + 2 * env) % 4)
