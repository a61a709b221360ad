"""Actor-side writer of fixed-length, overlapping sequences with stored recurrent state (R2D2).

Kapturowski et al. 2019 (R2D2, section 2.3): replay holds sequences of length L (80) that overlap
by O steps (40), each with the recurrent state the actor had at its first step ("stored state").
An episode end closes the current sequence early: it is padded to L with zeros and a mask marks
the real steps. All envs of a vector env are handled at once; reset steps of next-step autoreset
are skipped.
"""

from __future__ import annotations

import numpy as np


class SequenceAdder:
    def __init__(self, num_envs: int, length: int, overlap: int, obs_shape: tuple, obs_dtype, state_size: int,
                 gamma: float, action_shape: tuple = (), action_dtype=np.int64, burn_in: int = 0):
        if not 0 <= overlap < length:
            raise ValueError(f"need 0 <= overlap < length, got overlap {overlap}, length {length}")
        self.L, self.period, self.E, self.gamma = length, length - overlap, num_envs, gamma
        self.burn_in = burn_in  # also emit the state stored at this step ("burn_in_state": R2D2's staleness metric)
        self.obs = np.zeros((length, num_envs) + tuple(obs_shape), dtype=obs_dtype)
        self.actions = np.zeros((length, num_envs) + tuple(action_shape), dtype=action_dtype)
        self.rewards = np.zeros((length, num_envs), dtype=np.float32)
        self.discounts = np.zeros((length, num_envs), dtype=np.float32)
        self.states = np.zeros((length, num_envs, state_size), dtype=np.float32)
        self.count = np.zeros(num_envs, dtype=np.int64)  # steps held for the current window (<= L)
        self.fresh = np.zeros(num_envs, dtype=np.int64)  # steps not yet part of an emitted sequence
        self.t = 0

    def step(self, obs, action, reward, terminated, truncated, valid, state) -> dict[str, np.ndarray]:
        """Record one vector step taken from ``obs`` with recurrent ``state`` (the core's input state)."""
        p = self.t % self.L
        self.obs[p], self.actions[p], self.rewards[p], self.states[p] = obs, action, reward, state
        self.discounts[p] = self.gamma * (1.0 - terminated.astype(np.float32))
        self.t += 1
        self.count = np.where(valid, np.minimum(self.count + 1, self.L), 0)
        self.fresh = np.where(valid, self.fresh + 1, 0)
        done = valid & (terminated | truncated)
        periodic = valid & ~done & (self.count == self.L) & (self.fresh >= self.period)
        closing = done & (self.fresh > 0)
        out = []
        for envs in (np.flatnonzero(periodic), np.flatnonzero(closing)):
            for n in np.unique(self.count[envs]):
                who = envs[self.count[envs] == n]
                out.append(self._emit(who, int(n), p))
        self.fresh[periodic] = 0
        self.count[done] = 0
        self.fresh[done] = 0
        if not out:
            return self._emit(np.zeros(0, dtype=np.int64), 1, p)
        return {k: np.concatenate([o[k] for o in out]) for k in out[0]}

    def _emit(self, envs: np.ndarray, n: int, p: int) -> dict[str, np.ndarray]:
        positions = (p - n + 1 + np.arange(n)) % self.L  # oldest first
        k = len(envs)

        def padded(buf):
            seq = np.zeros((k, self.L) + buf.shape[2:], dtype=buf.dtype)
            seq[:, :n] = np.swapaxes(buf[positions][:, envs], 0, 1)
            return seq

        mask = np.zeros((k, self.L), dtype=bool)
        mask[:, :n] = True
        def state_at(i):
            return self.states[positions[min(i, n - 1)], envs] if k else np.zeros((0,) + self.states.shape[2:], np.float32)

        return {"obs": padded(self.obs), "action": padded(self.actions), "reward": padded(self.rewards),
                "discount": padded(self.discounts), "mask": mask, "initial_state": state_at(0),
                "burn_in_state": state_at(self.burn_in)}
