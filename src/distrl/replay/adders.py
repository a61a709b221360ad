"""Actor-side writers ("adders") that turn vector-env steps into replay items.

:class:`NStepAdder` builds n-step transitions (Ape-X, arXiv:1803.00933 eq. 1 inputs) for all envs of
a vector env at once: a ring of the last n steps per env, one vectorised emission per step, and a
flush of the pending steps when an episode ends, whether it was terminated (no bootstrap) or
truncated (bootstrap from the final observation). Reset steps of next-step autoreset are skipped. ``tags``: named
per-env flags of each step (the kind of opponent a league's game had), carried with the transition that starts there.
"""

from __future__ import annotations

import numpy as np


class NStepAdder:
    def __init__(self, num_envs: int, n: int, gamma: float, obs_shape: tuple, obs_dtype, action_shape: tuple = (),
                 action_dtype=np.int64, tags: tuple[str, ...] = ()):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.gamma, self.E = n, gamma, num_envs
        self.obs = np.zeros((n, num_envs) + tuple(obs_shape), dtype=obs_dtype)
        self.actions = np.zeros((n, num_envs) + tuple(action_shape), dtype=action_dtype)
        self.rewards = np.zeros((n, num_envs), dtype=np.float64)
        self.pending = np.zeros(num_envs, dtype=np.int64)  # steps waiting for their n-step window
        self.t = 0  # ring position of the next step (shared by all envs: they step together)
        self.discount_powers = gamma ** np.arange(n + 1)
        self.tags = {name: np.zeros((n, num_envs), dtype=bool) for name in tags}

    def step(self, obs, action, reward, next_obs, terminated, truncated, valid,
             tags: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Record one vector step; return the transitions it completes (``obs, action, reward,
        discount, next_obs`` and each tag), ``reward`` being the discounted n-step sum and ``discount`` gamma^k (0
        after a termination)."""
        p = self.t % self.n
        self.obs[p], self.actions[p], self.rewards[p] = obs, action, reward
        for name, ring in self.tags.items():
            ring[p] = tags[name]
        self.t += 1
        self.pending = np.where(valid, self.pending + 1, 0)
        done = valid & (terminated | truncated)
        out = []
        full = np.flatnonzero(valid & ~done & (self.pending == self.n))
        if full.size:
            out.append(self._emit(full, np.full(full.size, self.n), next_obs, np.zeros(full.size, bool), p))
            self.pending[full] -= 1
        ended = np.flatnonzero(done)
        if ended.size:
            for k in range(self.n, 0, -1):  # the oldest pending step has the longest window
                who = ended[self.pending[ended] >= k]
                if who.size:
                    out.append(self._emit(who, np.full(who.size, k), next_obs, terminated[who], p))
            self.pending[ended] = 0
        if not out:
            return {**_empty_like(self.obs, self.actions), **{name: ring[0, :0] for name, ring in self.tags.items()}}
        return {key: np.concatenate([o[key] for o in out]) for key in out[0]}

    def _emit(self, envs: np.ndarray, length: np.ndarray, next_obs, terminal: np.ndarray, p: int) -> dict:
        """Transitions starting ``length`` steps back (inclusive of step p) for ``envs``."""
        k = int(length[0])  # one window length per call
        start = (p - k + 1) % self.n
        positions = (start + np.arange(k)) % self.n  # oldest first
        rewards = self.rewards[positions][:, envs]  # [k, m]
        ret = (self.discount_powers[:k, None] * rewards).sum(0)
        discount = np.where(terminal, 0.0, self.discount_powers[k])
        return {"obs": self.obs[start, envs], "action": self.actions[start, envs], "reward": ret.astype(np.float32),
                "discount": discount.astype(np.float32), "next_obs": next_obs[envs],
                **{name: ring[start, envs] for name, ring in self.tags.items()}}


def _empty_like(obs, actions) -> dict[str, np.ndarray]:
    return {"obs": obs[0, :0], "action": actions[0, :0], "reward": np.zeros(0, np.float32),
            "discount": np.zeros(0, np.float32), "next_obs": obs[0, :0]}
