"""A hard-exploration task small enough for this machine: bsuite's Deep Sea (Osband et al. 2020, "Behaviour
Suite for Reinforcement Learning", section 2.5; the deterministic version).

``distrl/DeepSea-v0``: an N x N grid (N = ``size``, 20 by default), the agent starting at the top-left cell. Each
step it falls one row and moves one column left or right; the observation is the grid with a 1 at its cell (all
zeros once it has fallen off the bottom, the terminal observation). Which of the two actions means "right" is
drawn per cell, once, from ``mapping_seed`` (the problem instance: the same for every reset and every copy of the
env), so no fixed action sequence works and a network cannot generalise "always press 1". Moving right costs
0.01 / N; taking "right" in the last column pays 1. The only way to the 1 is "right" at every one of the N
steps, which uniformly random actions do once in 2^N episodes (once in ~10^6 at N = 20): epsilon-greedy
exploration learns to go left (return 0), a policy that found the treasure returns 1 - 0.01 = 0.99. That is the
R2D3 paper's setting at small scale: a reward no exploration by chance finds, that a few demonstrations show.

The demonstrator (``distrl.datasets.demonstrators:deep_sea``) reads the same instance from :func:`action_mapping`.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

DEEP_SEA = "distrl/DeepSea-v0"
MOVE_COST = 0.01  # bsuite's unscaled move cost, divided by N per "right"


def action_mapping(size: int, mapping_seed: int = 0) -> np.ndarray:
    """``[size, size]`` of 0/1: the action that moves right in each cell."""
    return np.random.default_rng(mapping_seed).integers(0, 2, (size, size))


class DeepSea(gym.Env):
    def __init__(self, size: int = 20, mapping_seed: int = 0):
        if size < 2:
            raise ValueError(f"DeepSea size must be >= 2; got {size}")
        self.size = size
        self.right = action_mapping(size, mapping_seed)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size, size), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.row = self.column = 0

    def _observation(self) -> np.ndarray:
        grid = np.zeros((self.size, self.size), np.float32)
        if self.row < self.size:
            grid[self.row, self.column] = 1.0
        return grid

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.row = self.column = 0
        return self._observation(), {}

    def step(self, action):
        right = int(action) == self.right[self.row, self.column]
        reward = 1.0 if right and self.column == self.size - 1 else 0.0
        if right:
            reward -= MOVE_COST / self.size
            self.column = min(self.column + 1, self.size - 1)
        else:
            self.column = max(self.column - 1, 0)
        self.row += 1
        return self._observation(), reward, self.row == self.size, False, {}


def register() -> None:
    if DEEP_SEA not in gym.registry:
        gym.register(DEEP_SEA, entry_point="distrl.envs.deep_sea:DeepSea")


register()
