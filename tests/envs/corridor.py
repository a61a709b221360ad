"""A user's own env, registered on import, to test the ``module:EnvId`` form."""

import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    observation_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 0
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos += 1 if action == 1 else 0
        done = self.pos >= 5
        return np.array([self.pos], np.float32), float(done), done, False, {}


gym.register("DistrlCorridor-v0", entry_point=Corridor, max_episode_steps=20)
