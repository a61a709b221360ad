"""Actor-side bookkeeping of R2D2's fixed-length, overlapping sequences with stored recurrent state.

Kapturowski et al. 2019 (R2D2, section 2.3): replay holds sequences of length L (80) that overlap
by O steps (40), each with the recurrent state the actor had at its first step ("stored state").
An episode end closes the current sequence early: it is shorter than L (the replay pads it and a
mask marks the real steps). All envs of a vector env are handled at once; reset steps of next-step
autoreset are skipped.

The adder only decides where sequences end and remembers the states; the steps themselves travel
once, in the actor's chunk, and :class:`~distrl.replay.sequence_storage.SequenceStorage` keeps them
once (a sequence is its env's last ``length`` steps at the step it ends).
"""

from __future__ import annotations

import numpy as np


class SequenceAdder:
    def __init__(self, num_envs: int, length: int, overlap: int, state_size: int, burn_in: int = 0):
        if not 0 <= overlap < length:
            raise ValueError(f"need 0 <= overlap < length, got overlap {overlap}, length {length}")
        self.L, self.period, self.E = length, length - overlap, num_envs
        self.burn_in = burn_in  # also emit the state stored at this step ("burn_in_state": R2D2's staleness metric)
        self.states = np.zeros((length, num_envs, state_size), dtype=np.float32)
        self.count = np.zeros(num_envs, dtype=np.int64)  # steps held for the current window (<= L)
        self.fresh = np.zeros(num_envs, dtype=np.int64)  # steps not yet part of an emitted sequence
        self.age = np.zeros(num_envs, dtype=np.int64)  # steps since the episode started
        self.t = 0

    def step(self, terminated, truncated, valid, state) -> dict[str, np.ndarray]:
        """Record one vector step taken with recurrent ``state`` (the core's input state); returns the
        sequences that end at this step: ``env``, ``length`` (real steps, <= L), ``initial_state`` (the
        state at their first step), ``burn_in_state`` (the state at step ``burn_in``) and ``episode_start``
        (whether their first step is their episode's first: the stored state there is the exact initial one,
        so the learner needs no burn-in to refresh it)."""
        p = self.t % self.L
        self.states[p] = state
        self.t += 1
        self.count = np.where(valid, np.minimum(self.count + 1, self.L), 0)
        self.fresh = np.where(valid, self.fresh + 1, 0)
        self.age = np.where(valid, self.age + 1, 0)
        done = valid & (terminated | truncated)
        periodic = valid & ~done & (self.count == self.L) & (self.fresh >= self.period)
        envs = np.flatnonzero(periodic | (done & (self.fresh > 0)))
        n = self.count[envs]
        starts = self.age[envs] == n
        self.fresh[periodic] = 0
        self.count[done] = 0
        self.fresh[done] = 0
        self.age[done] = 0
        first = (p - n + 1) % self.L  # ring position of each sequence's first step
        at_burn_in = (first + np.minimum(self.burn_in, n - 1)) % self.L
        return {"env": envs, "length": n, "initial_state": self.states[first, envs],
                "burn_in_state": self.states[at_burn_in, envs], "episode_start": starts}
