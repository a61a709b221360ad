"""Hypothesis test for #15: the masked CartPole with the previous action appended to the observation
(what R2D2's LSTM input would carry if it took the previous action, as the paper's does)."""
import gymnasium as gym
import numpy as np

import distrl.envs  # noqa: F401  (registers distrl/CartPoleNoVelocity-v1)


class PrevAction(gym.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        low = np.append(env.observation_space.low, -1.0).astype(np.float32)
        high = np.append(env.observation_space.high, 1.0).astype(np.float32)
        self.observation_space = gym.spaces.Box(low, high, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return np.append(obs, 0.0).astype(np.float32), info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        return np.append(obs, 2.0 * float(action) - 1.0).astype(np.float32), r, term, trunc, info


def make(**kw):
    return PrevAction(gym.make("distrl/CartPoleNoVelocity-v1", **kw))


gym.register("PrevAct-v0", entry_point=make, max_episode_steps=None)
