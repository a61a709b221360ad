"""Scripted demonstrators for ``distrl record --policy``: functions from a batch of observations to actions.

``mountain_car``: MountainCar-v0's classic energy-pumping controller: push in the direction the car moves
(velocity is the observation's second entry), so each swing climbs higher; it reaches the flag in about
100-160 steps from any start, where epsilon-greedy exploration almost never sees the goal's reward.

``mountain_car_positions``: the same controller for ``distrl/MountainCarNoVelocity-v0``, which observes the
position alone. It remembers the last position of each row of the batch and takes the velocity as the
difference: MountainCar's dynamics set x' = x + v' (Gymnasium's ``MountainCarEnv.step``), so the difference is
the velocity itself, except against the left wall, where the env zeroes it. A demonstrator with memory has a
``reset()``, which ``distrl record`` calls at every episode start.

``deep_sea``: the treasure path of ``distrl/DeepSea-v0`` (the default instance, ``mapping_seed`` 0): in each cell,
the action that moves right (``distrl.envs.deep_sea.action_mapping``); it returns 0.99.
"""

from __future__ import annotations

import functools

import numpy as np

from distrl.envs.deep_sea import action_mapping


def mountain_car(obs: np.ndarray) -> np.ndarray:
    velocity = obs[:, 1]
    return np.where(velocity >= 0, 2, 0).astype(np.int64)  # 0: push left, 2: push right


class PositionsMountainCar:
    """:func:`mountain_car` from positions alone: the velocity is the change of position since the last step
    (zero at an episode's first step: the car starts at rest)."""

    def __init__(self):
        self.last: np.ndarray | None = None

    def reset(self) -> None:
        self.last = None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        position = np.asarray(obs, dtype=np.float64)[:, 0]
        last = position if self.last is None or self.last.shape != position.shape else self.last
        self.last = position.copy()
        return mountain_car(np.stack([position, position - last], axis=1))


mountain_car_positions = PositionsMountainCar()


@functools.lru_cache(maxsize=8)
def _right(size: int) -> np.ndarray:
    return action_mapping(size)  # drawn once per size, not at every step


def deep_sea(obs: np.ndarray) -> np.ndarray:
    size = obs.shape[-1]
    cells = obs.reshape(len(obs), -1).argmax(axis=1)  # the agent's cell (a terminal, all-zero grid: cell 0, unused)
    return _right(size)[cells // size, cells % size].astype(np.int64)
