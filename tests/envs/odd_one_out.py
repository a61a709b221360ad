"""A three-player game in PettingZoo's parallel API only (no ``env()``): ``pettingzoo:tests.envs.odd_one_out``."""

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv


class OddOneOut(ParallelEnv):
    """Three players each show 0 or 1, five rounds; the one who shows what neither other does wins the round (+1, the
    others -0.5); all alike, nobody does. Each observes the round's number and what everyone showed last."""

    metadata = {"name": "odd_one_out", "render_modes": []}
    ROUNDS = 5

    def __init__(self):
        self.possible_agents, self.render_mode = ["p0", "p1", "p2"], None
        self.agents = list(self.possible_agents)

    def observation_space(self, agent):
        return gym.spaces.Box(0.0, float(self.ROUNDS), (4,), np.float32)

    def action_space(self, agent):
        return gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents, self.round, self.last = list(self.possible_agents), 0, np.zeros(3, np.float32)
        return {a: self._observe() for a in self.agents}, {a: {} for a in self.agents}

    def _observe(self):
        return np.concatenate([[self.round], self.last]).astype(np.float32)

    def step(self, actions):
        shown = np.array([actions[a] for a in self.possible_agents], np.float32)
        odd = [i for i in range(3) if (shown == shown[i]).sum() == 1]
        rewards = {a: (1.0 if i in odd else -0.5 if odd else 0.0) for i, a in enumerate(self.possible_agents)}
        self.round, self.last = self.round + 1, shown
        over = self.round >= self.ROUNDS
        observations = {a: self._observe() for a in self.agents}
        terminations = {a: over for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        if over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos


parallel_env = OddOneOut


def shows_one(observation, mask) -> int:
    """A fixed player (``module:function``): always shows 1."""
    return 1
