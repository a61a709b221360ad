"""An env whose rewards turn to NaN after ``DISTRL_POISON_AFTER`` steps of each copy (a broken simulator)."""

import os

import gymnasium as gym
import numpy as np


class Poisoned(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.after = int(os.environ.get("DISTRL_POISON_AFTER", "0"))
        self.t = self.total = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        self.total += 1
        reward = float("nan") if self.total > self.after else 1.0
        return np.full(2, 0.5, np.float32), reward, self.t >= 10, False, {}


gym.register("DistrlPoisoned-v0", entry_point=Poisoned)
