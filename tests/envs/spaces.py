"""Envs with the spaces Stable-Baselines3 users take for granted: Dict observations, MultiDiscrete and MultiBinary
actions. Each is learnable in a few thousand steps, so a test can tell learning from running."""

import gymnasium as gym
import numpy as np


class Lights(gym.Env):
    """Switch each of 3 lights to the state its target says: a MultiDiscrete([3, 3, 2]) (or MultiBinary(3)) action
    sets every light at once, the reward is the fraction set right; the observation is a Dict of the targets (an
    array) and the step count (a Discrete). 8 steps an episode: a perfect policy scores 8."""

    def __init__(self, binary: bool = False):
        self.nvec = np.array([2, 2, 2]) if binary else np.array([3, 3, 2])
        self.action_space = gym.spaces.MultiBinary(3) if binary else gym.spaces.MultiDiscrete(self.nvec)
        self.observation_space = gym.spaces.Dict({"target": gym.spaces.MultiDiscrete(self.nvec),
                                                  "t": gym.spaces.Discrete(9)})

    def _obs(self):
        return {"target": self.target.copy(), "t": self.t}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.target = self.np_random.integers(0, self.nvec)
        return self._obs(), {}

    def step(self, action):
        reward = float(np.mean(np.asarray(action) == self.target))
        self.t += 1
        self.target = self.np_random.integers(0, self.nvec)
        return self._obs(), reward, False, self.t >= 8, {}


gym.register("DistrlLights-v0", entry_point=Lights)
gym.register("DistrlLightsBinary-v0", entry_point=Lights, kwargs={"binary": True})


class Unsupported(gym.Env):
    """Spaces distrl does not take: a Text observation (Gymnasium cannot flatten it into numbers) or a Tuple action."""

    def __init__(self, what: str):
        self.observation_space = gym.spaces.Text(5) if what == "obs" else gym.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = {"action": gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(2))),
                             "start": gym.spaces.Discrete(3, start=1)}.get(what, gym.spaces.Discrete(2))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


gym.register("DistrlTextObservations-v0", entry_point=Unsupported, kwargs={"what": "obs"})
gym.register("DistrlTupleActions-v0", entry_point=Unsupported, kwargs={"what": "action"})
gym.register("DistrlActionsFromOne-v0", entry_point=Unsupported, kwargs={"what": "start"})
