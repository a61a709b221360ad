"""A continuous-control task small enough for a learning test: steer a point to the origin.

``distrl/PointToOrigin-v0``: the observation is a point x in [-1, 1]^2, the action a in [-1, 1]^2 moves it by
a / 2 (clipped to the square), the reward is -|x'| (Euclidean) and an episode lasts 10 steps. Uniformly random
actions return about -8.4, the optimal policy (a = clip(-2x, -1, 1), at the origin within two steps) about
-0.22 (``tests/envs/test_point.py`` plays both). It exists because the classic continuous
tasks need minutes of training before a policy is clearly better than random, too long for a test of a whole
system; here a few thousand updates do. Registered when ``distrl.envs`` is imported.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

POINT_TO_ORIGIN = "distrl/PointToOrigin-v0"
EPISODE_STEPS = 10


class PointToOrigin(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, render_mode: str | None = None):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.render_mode = render_mode
        self.x = np.zeros(2, np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1.0, 1.0, 2).astype(np.float32)
        return self.x.copy(), {}

    def step(self, action):
        move = 0.5 * np.clip(np.asarray(action, np.float32), -1.0, 1.0)
        self.x = np.clip(self.x + move, -1.0, 1.0).astype(np.float32)
        return self.x.copy(), -float(np.linalg.norm(self.x)), False, False, {}

    def render(self) -> np.ndarray:
        """A 64 x 64 picture: the origin as a grey cross, the point as a white square (for ``distrl eval --video``)."""
        frame = np.zeros((64, 64, 3), np.uint8)
        frame[31:33, :] = frame[:, 31:33] = 80
        col, row = np.clip(((self.x * np.array([1, -1]) + 1) * 31.5).astype(int), 2, 61)
        frame[row - 2:row + 3, col - 2:col + 3] = 255
        return frame


def register() -> None:
    if POINT_TO_ORIGIN not in gym.registry:
        gym.register(POINT_TO_ORIGIN, entry_point="distrl.envs.point:PointToOrigin", max_episode_steps=EPISODE_STEPS)


register()
