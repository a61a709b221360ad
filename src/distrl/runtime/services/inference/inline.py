"""The inference service on ``inline``: env actors call the server directly, one request at a time.

Deterministic for a seed (actors are stepped in a fixed order), so SEED learning can be debugged and
tested in lockstep; the server code is the same as on ``local`` and ``ray``, only the transport is a
function call.
"""

from __future__ import annotations

import numpy as np

from distrl.core.protocols import ChannelSource
from distrl.runtime.services.base import ServiceAdapter
from distrl.runtime.services.inference.server import InferenceServer


class InlineLink:
    bytes = 0  # the server is in the same process: nothing crosses

    def __init__(self, service: InlineInference, slot: int):
        self.service, self.slot = service, slot

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray):
        return self.service.serve(self.slot, arrays, timings)

    def close(self) -> None:
        pass


class InlineInference(ServiceAdapter, ChannelSource):
    def __init__(self, spec, offsets: dict[str, int], num_slots: int):
        self.emits = spec.emits
        self.offsets = offsets  # role -> its first slot
        policy = spec.make_policy()
        self.server = InferenceServer(policy, spec.obs, num_slots, spec.num_envs, spec.unroll_length,
                                      spec.make_emitter() if spec.make_emitter is not None else None)
        self.ready: list = []

    def worker_handle(self, role: str, index: int):
        return InlineLink(self, self.offsets[role] + index)

    def serve(self, slot: int, arrays: dict[str, np.ndarray], timings: np.ndarray):
        if arrays["final"][0]:  # a retired actor's last request (inline retires none; the server's rule all the same)
            self.server.finish(np.array([slot]), arrays["obs"][None], arrays["rewards"][None],
                               arrays["terminated"][None], arrays["truncated"][None])
            self.ready.extend(self.server.take())
            return None
        out = self.server.serve(np.array([slot]), arrays["obs"][None], arrays["rewards"][None],
                                arrays["terminated"][None], arrays["truncated"][None], timings[None])
        self.ready.extend(self.server.take())
        return out["actions"][0]

    def publish(self, weights_fn, version: int) -> None:
        # a copy, as the threaded service's: the policy may keep it past this call (a deferred swap), and the
        # learner writes its buffer again at the next update
        self.server.policy.set_weights(np.array(weights_fn(), copy=True), version)

    def take(self, timeout: float):
        return self.ready.pop(0) if self.ready else None

    def stats(self, whole_run: bool = False) -> dict:
        out = dict(self.server.stats(whole_run))
        if whole_run:
            out.update(actor_wait_s=0.0, unrolls_dropped=self.server.unrolls_dropped)
        return out
