"""The learner of gradient-sharing systems (A3C, GORILA) only keeps the parameters: workers learn.

It owns the model and the optimizer statistics as a sharded parameter server in shared memory (A3C:
one shard, no staleness limit, i.e. Hogwild; GORILA: S shards dropping gradients more than K
versions old), for the workers, checkpoints and evaluation. On Ray the runtime starts one actor per
shard instead and copies their weights back into this model before each checkpoint.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from distrl.agents.common.optim import scheduled_lr
from distrl.agents.common.shared_optim import SharedAdam, SharedRMSprop
from distrl.runtime.sharded_params import SharedShards


class ParamServerLearner:
    def __init__(self, model, lr: float, alpha: float, eps: float, num_shards: int = 1, max_staleness: int | None = None,
                 lr_schedule: str = "constant", total_steps: int | None = None, optimizer: str = "rmsprop"):
        self.model = model
        self.lr_schedule, self.total_steps = lr_schedule, total_steps
        self.env_steps = 0
        if optimizer == "adam":
            self.make_optimizer = partial(SharedAdam, lr=lr, eps=eps)
        else:
            self.make_optimizer = partial(SharedRMSprop, lr=lr, alpha=alpha, eps=eps)
        self.num_shards, self.max_staleness = num_shards, max_staleness
        self.shards = SharedShards(model, self.make_optimizer, num_shards, max_staleness)
        self._remote_progress: tuple[int, int] | None = None

    def param_spec(self):
        return self.make_optimizer, self.num_shards, self.max_staleness

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
        self.env_steps += int(batch["steps"].sum())
        self._schedule()
        return {"updates_total": float(self.version), "dropped_gradients": float(self.dropped),
                "lr_scale": float(self.shards.lr_scale)}

    def _schedule(self) -> None:
        """The workers' learning rate follows the run's progress (env steps reported so far)."""
        if self.total_steps:
            self.shards.lr_scale.fill_(scheduled_lr(1.0, self.lr_schedule, self.env_steps / self.total_steps))

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {f"optimizer_shard{s}": opt for s, opt in enumerate(self.shards.optimizers)}

    def counters(self) -> dict:
        return {"updates": self.version, "dropped": self.dropped, "shard_versions": self.shards.versions.tolist(),
                "env_steps": self.env_steps}

    def save_state(self, folder) -> None:
        if self.shards.replay is not None:  # a global replay: resuming loses none of it
            self.shards.replay.save(folder)

    def load_state(self, folder) -> None:
        if self.shards.replay is not None:
            self.shards.replay.load(folder)

    def load_counters(self, c: dict) -> None:
        self.env_steps = c.get("env_steps", 0)
        self._schedule()
        if "shard_versions" in c:
            self.shards.versions[:] = torch.tensor(c["shard_versions"])
