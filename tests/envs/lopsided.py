"""A two-player game in PettingZoo's parallel API whose agents act and observe in different spaces: ``p0`` shows 0 or
1, ``p1`` picks 0, 1 or 2 and sees more; one round, ``p0`` wins when it shows what ``p1`` did not pick."""

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv


class Lopsided(ParallelEnv):
    metadata = {"name": "lopsided", "render_modes": []}
    ACTIONS = {"p0": gym.spaces.Discrete(2), "p1": gym.spaces.Discrete(3)}

    def __init__(self):
        self.possible_agents, self.render_mode = ["p0", "p1"], None
        self.agents = list(self.possible_agents)

    def observation_space(self, agent):
        return gym.spaces.Box(0.0, 1.0, (2 if agent == "p0" else 5,), np.float32)

    def action_space(self, agent):
        return self.ACTIONS[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        return ({a: np.zeros(self.observation_space(a).shape, np.float32) for a in self.agents},
                {a: {} for a in self.agents})

    def step(self, actions):
        won = int(actions["p0"] != actions["p1"])
        rewards = {"p0": float(2 * won - 1), "p1": float(1 - 2 * won)}
        observations = {a: np.ones(self.observation_space(a).shape, np.float32) for a in self.agents}
        self.agents = []
        ended, cut = dict.fromkeys(rewards, True), dict.fromkeys(rewards, False)
        return observations, rewards, ended, cut, {a: {} for a in rewards}


class BoxActions(Lopsided):
    ACTIONS = {"p0": gym.spaces.Discrete(2), "p1": gym.spaces.Box(-1.0, 1.0, (1,), np.float32)}


parallel_env = Lopsided
