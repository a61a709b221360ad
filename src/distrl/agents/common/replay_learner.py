"""The learner side of Ape-X-style systems (Ape-X DQN, Ape-X DDPG): sample the replay service as far as
its rate limiter allows, update, write |delta| priorities back.

The replay is a service the program owns (``runtime/services/replay.py``): actors feed it with their
initial priorities, its handle keeps the samples-per-insert ratio and counts its own inserts, and the
same handle works whether the replay lives in this process or in a Ray actor. Subclasses supply only
``update(batch) -> (loss, |delta|)``.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch

from distrl.agents.common.transition_actor import chunk_items
from distrl.core.protocols import ReplayHandle
from distrl.replay import SampledBatch


class ReplayLearner:
    max_updates_per_step = 64  # then the trainer gets a turn (metrics, checkpoints, weights to actors)

    def __init__(self, cfg, replay: ReplayHandle, optimizers: Mapping[str, torch.optim.Optimizer]):
        """``optimizers``: each optimizer under the hyperparameter name of its learning rate."""
        self.cfg = cfg
        self.replay = replay
        self.optimizers = dict(optimizers)
        self.lrs = {name: opt.param_groups[0]["lr"] for name, opt in self.optimizers.items()}
        self.version = 0
        self.updates = 0

    def update(self, batch: SampledBatch) -> tuple[float, np.ndarray]:
        raise NotImplementedError

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        for name, opt in self.optimizers.items():
            if name in values:
                self.lrs[name] = values[name]
                for group in opt.param_groups:
                    group["lr"] = values[name]

    def step(self, batch=None) -> dict[str, float] | None:
        losses = []
        while len(losses) < self.max_updates_per_step:
            sampled = self.replay.sample(self.cfg.batch_size, beta=self.cfg.priority_beta)
            if sampled is None:
                break
            loss, td_abs = self.update(sampled)
            self.replay.update_priorities(sampled.slots, td_abs)
            self.updates += 1
            self.version += 1
            losses.append(loss)
        if not losses:
            return None
        return {"loss": float(np.mean(losses)), **self.lrs}

    def counters(self) -> dict:
        return {"updates": self.updates, "version": self.version}

    def load_counters(self, c: dict) -> None:
        self.updates, self.version = c.get("updates", 0), c.get("version", 0)


def chunk_to_insert(chunk: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A chunk's real transitions and the priorities its actor gave them, ready for ``Replay.add``."""
    return chunk_items(chunk), chunk["priority"][chunk["valid"]]


def tensors(batch: SampledBatch) -> dict[str, torch.Tensor]:
    # batches from a replay server arrive read-only (Ray's object store); torch wants writable memory
    arrays = dict(batch.items, weights=batch.weights)
    return {k: torch.from_numpy(v if v.flags.writeable else v.copy()) for k, v in arrays.items()}
