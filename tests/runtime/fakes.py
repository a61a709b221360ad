"""Shared test fakes: an actor whose data proves where it came from, and a learner that checks it."""

from __future__ import annotations

import os

import numpy as np

from distrl.core.types import ArraySpec, Topology

T, E = 8, 4
SPEC = {
    "payload": ArraySpec((T, E, 84), "float32"),
    "actor": ArraySpec((E,), "int64", batch_axis=0),
    "seq": ArraySpec((E,), "int64", batch_axis=0),
}


class CountingActor:
    def __init__(self, index: int, seed: int):
        self.index, self.seed, self.seq, self.version, self.w0 = index, seed, 0, -1, None

    def set_weights(self, flat, version):
        self.version, self.w0 = version, float(flat[0])

    def unroll(self, out):
        out["payload"][:] = self.index * 100_000 + self.seq + np.arange(84, dtype=np.float32) / 100
        out["actor"][:] = self.index
        out["seq"][:] = self.seq
        self.seq += 1
        return {"env_steps": T * E, "version": self.version, "episode_returns": np.zeros(0),
                "episode_lengths": np.zeros(0, dtype=np.int64), "pid": os.getpid(), "seed": self.seed, "actor_index": self.index,
                "weight0": self.w0}

    def close(self):
        pass


def make_counting_actor(index, seed, shared_model=None):
    return CountingActor(index, seed)


class CheckingLearner:
    """Records what arrives and checks every unroll's payload is intact."""

    def __init__(self):
        self.version = 0
        self.seen = []  # (actor, pid, seq, version_used, weight0)

    def step(self, batch):
        payload = batch["payload"]
        for e in range(payload.shape[1]):
            actor, seq = int(batch["actor"][e]), int(batch["seq"][e])
            expected = actor * 100_000 + seq + np.arange(84, dtype=np.float32) / 100
            np.testing.assert_array_equal(payload[:, e], np.broadcast_to(expected, payload[:, e].shape))
        self.version += 1
        return {}

    def get_weights(self):
        return np.full(16, float(self.version), dtype=np.float32)


def counting_topology(num_actors=2, batch_unrolls=2) -> Topology:
    return Topology(make_actor=make_counting_actor, make_learner=CheckingLearner, unroll_spec=SPEC,
                    num_actors=num_actors, batch_unrolls=batch_unrolls)
