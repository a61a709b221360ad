"""The A3C "learner" is only the keeper of the shared model: workers do all the learning.

It owns the model and the shared RMSProp, in shared memory (one shard, no staleness limit:
Hogwild), for the workers, checkpoints and evaluation; on Ray the runtime copies the parameter
servers' weights back into it before each checkpoint.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from distrl.agents.a3c.optim import SharedRMSprop
from distrl.runtime.sharded_params import SharedShards


class A3CLearner:
    num_shards = 1
    max_staleness = None  # A3C applies every gradient, however late

    def __init__(self, cfg, model):
        self.cfg = cfg
        self.model = model
        self.shards = SharedShards(model, self.param_spec()[0], self.num_shards, self.max_staleness)
        self._remote_progress: tuple[int, int] | None = None

    def param_spec(self):
        make_opt = partial(SharedRMSprop, lr=self.cfg.lr, alpha=self.cfg.rmsprop_alpha, eps=self.cfg.rmsprop_eps)
        return make_opt, self.num_shards, self.max_staleness

    @property
    def version(self) -> int:
        if self._remote_progress is not None:
            return self._remote_progress[0]
        return int(self.shards.versions.sum())

    @property
    def dropped(self) -> int:
        return self._remote_progress[1] if self._remote_progress is not None else int(self.shards.dropped.sum())

    def set_progress(self, applied: int, dropped: int) -> None:
        self._remote_progress = (applied, dropped)

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        return {"updates_total": float(self.version), "dropped_gradients": float(self.dropped)}

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {f"optimizer_shard{s}": opt for s, opt in enumerate(self.shards.optimizers)}

    def counters(self) -> dict:
        return {"updates": self.version, "dropped": self.dropped, "shard_versions": self.shards.versions.tolist()}

    def load_counters(self, c: dict) -> None:
        if "shard_versions" in c:
            self.shards.versions[:] = torch.tensor(c["shard_versions"])
