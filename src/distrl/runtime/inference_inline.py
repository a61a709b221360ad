"""SEED on the ``inline`` runtime: env actors and the inference server take turns in one process.

Deterministic for a seed (the actors are served in slot order, in groups of ``max_batch``), so
SEED learning can be debugged and tested in lockstep; the server code is the same as on
``local`` and ``ray``, only the transport is a function call.
"""

from __future__ import annotations

import time

import numpy as np

from distrl.core.types import Topology
from distrl.runtime.batching import concatenate
from distrl.runtime.inference_server import InferenceServer


class InlineInferenceBackend:
    name = "inline"

    def __init__(self, topology: Topology, seed: int):
        self.topology = topology
        self.spec = topology.inference
        self.seed = seed
        self.server = None
        self.actors = []
        self.ready: list = []

    def start(self, learner) -> None:
        spec, n = self.spec, self.topology.num_actors
        policy = spec.make_policy()
        policy.set_weights(learner.get_weights(), learner.version)
        self.server = InferenceServer(policy, spec.obs, n, spec.num_envs, spec.unroll_length)
        self.actors = [self.topology.make_actor(i, self.seed + 1000 * i, None) for i in range(n)]
        self.requests = [a.reset() for a in self.actors]
        self.timings = np.zeros((n, 2))

    def publish(self, weights_fn, version: int) -> None:
        self.server.policy.set_weights(weights_fn(), version)

    def next_batch(self):
        want, n = self.topology.batch_unrolls, len(self.actors)
        while len(self.ready) < want:
            for start in range(0, n, self.spec.max_batch):
                group = np.arange(start, min(start + self.spec.max_batch, n))
                reqs = [self.requests[i] for i in group]
                stacked = {k: np.stack([r[k] for r in reqs]) for k in ("obs", "rewards", "terminated", "truncated")}
                out = self.server.serve(group, stacked["obs"], stacked["rewards"], stacked["terminated"],
                                        stacked["truncated"], self.timings[group])
                for j, i in enumerate(group.tolist()):
                    t0 = time.perf_counter()
                    self.requests[i] = self.actors[i].step(out["actions"][j])
                    self.timings[i, 1] = time.perf_counter() - t0
            self.ready.extend(self.server.take())
        items, self.ready = self.ready[:want], self.ready[want:]
        return concatenate(self.topology.unroll_spec, [u for u, _ in items]), [info for _, info in items], None

    def release(self, handle) -> None:
        pass

    def poll(self) -> int:
        return 0

    def metrics(self, whole_run: bool = False) -> dict[str, float]:
        return self.server.stats(whole_run) if self.server is not None else {}

    def actor_stats(self) -> dict:
        return {"block_s": 0.0, "transport_s": 0.0}

    def close(self) -> None:
        for a in self.actors:
            a.close()
        self.actors = []
