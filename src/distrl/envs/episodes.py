"""Vectorised episode return/length bookkeeping for a batch of envs."""

from __future__ import annotations

import numpy as np


class EpisodeTracker:
    """Accumulates per-env returns and lengths and reports the ones that finished.

    Works with Gymnasium's next-step autoreset: the reset step after an episode end carries
    reward 0 and is marked invalid by the caller, so it is simply not counted.
    """

    def __init__(self, num_envs: int):
        self.returns = np.zeros(num_envs, dtype=np.float64)
        self.lengths = np.zeros(num_envs, dtype=np.int64)

    def step(self, rewards: np.ndarray, dones: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.returns += rewards * valid
        self.lengths += valid
        if not dones.any():
            return _EMPTY_F, _EMPTY_I
        finished_r = self.returns[dones].copy()
        finished_l = self.lengths[dones].copy()
        self.returns[dones] = 0.0
        self.lengths[dones] = 0
        return finished_r, finished_l


_EMPTY_F = np.zeros(0, dtype=np.float64)
_EMPTY_I = np.zeros(0, dtype=np.int64)
