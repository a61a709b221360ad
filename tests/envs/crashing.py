"""An env that raises once, in whichever actor process first sees the marker file (then deletes it)."""

import os

import gymnasium as gym
import numpy as np


class CrashOnce(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, marker: str = ""):
        self.marker = marker or os.environ.get("DISTRL_CRASH_MARKER", "")
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.marker and os.path.exists(self.marker):
            try:
                os.remove(self.marker)
            except FileNotFoundError:
                pass
            else:
                raise RuntimeError("simulated env failure")
        return np.zeros(2, np.float32), 1.0, self.t >= 10, False, {}


gym.register("DistrlCrashOnce-v0", entry_point=CrashOnce)


class AlwaysCrash(CrashOnce):
    """An env with a bug: every step raises the same error."""

    def step(self, action):
        raise ValueError("simulated bug in the env's step")


gym.register("DistrlAlwaysCrash-v0", entry_point=AlwaysCrash)
