"""The ``inline`` runtime: every component in one process, stepped in turn.

Deterministic for a given seed (actors take turns in a fixed order, one torch RNG), so an
asynchronous topology can be debugged and profiled in lockstep.
"""

from __future__ import annotations

import time

from distrl.core.types import Topology
from distrl.runtime.sharded_params import shared_params
from distrl.runtime.batching import allocate, concatenate


class InlineBackend:
    name = "inline"

    def __init__(self, topology: Topology, seed: int):
        self.topology = topology
        self.seed = seed
        self.actors = []
        self.buffers = []
        self.next_actor = 0
        self.weights = None
        self.weights_version = -1
        self.transport_s = 0.0
        self.learner = None

    def start(self, learner) -> None:
        topo = self.topology
        self.learner = learner
        shared = learner.model if topo.synchronous else shared_params(learner) if topo.shared_model else None
        for i in range(topo.num_actors):
            self.actors.append(topo.make_actor(i, self.seed + 1000 * i, shared))
            self.buffers.append([allocate(topo.unroll_spec) for _ in range(topo.batch_unrolls)])

    def publish(self, weights_fn, version: int) -> None:
        if not (self.topology.synchronous or self.topology.shared_model):
            self.weights, self.weights_version = weights_fn(), version

    def next_batch(self):
        unrolls, infos = [], []
        for k in range(self.topology.batch_unrolls):
            i = self.next_actor
            self.next_actor = (i + 1) % len(self.actors)
            actor = self.actors[i]
            if self.topology.synchronous:
                actor.version = self.learner.version
            elif self.topology.shared_model:
                pass  # the actor reads and writes the shared model itself
            elif actor.version != self.weights_version and self.weights is not None:
                t0 = time.perf_counter()
                actor.set_weights(self.weights, self.weights_version)
                self.transport_s += time.perf_counter() - t0
            out = self.buffers[i][k]
            infos.append(actor.unroll(out))
            unrolls.append(out)
        return concatenate(self.topology.unroll_spec, unrolls), infos, None

    def release(self, handle) -> None:
        pass

    def poll(self) -> int:
        return 0

    def actor_stats(self) -> dict:
        return {"block_s": 0.0, "transport_s": self.transport_s}

    def close(self) -> None:
        for a in self.actors:
            a.close()
        self.actors = []
