"""The replay side of an Ape-X-style learner, shared by Ape-X DQN and Ape-X DDPG.

Each chunk from an actor is inserted with its initial priorities; then the learner runs as many
updates as the sample-to-insert rate limiter allows, writes back |delta| priorities and trims the
replay to its soft capacity. Subclasses supply only ``update(batch) -> (loss, |delta|)``.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import torch

from distrl.agents.common.optim import scheduled_lr
from distrl.agents.common.transition_actor import chunk_items, item_spec
from distrl.core.types import ArraySpec
from distrl.replay import RateLimiter, Replay, SampledBatch


class ReplayLearner:
    def __init__(self, cfg, spec: dict[str, ArraySpec], total_steps: int, optimizers: list[torch.optim.Optimizer]):
        self.cfg = cfg
        # hard capacity above the soft one, so actors can overfill it between trims (Ape-X section 3)
        items = item_spec(spec)
        pixels = len(items["obs"].shape) == 3 and items["obs"].dtype == "uint8"  # frame stacks: keep each frame once
        # picklable, so a runtime can build the same replay elsewhere (a Ray actor on ``ray``)
        self.make_replay = partial(Replay.prioritized, items, int(cfg.replay_size * 1.25) + 1, alpha=cfg.priority_alpha,
                                   soft_capacity=cfg.replay_size, frame_stacks=("obs", "next_obs") if pixels else None)
        self.replay = self.make_replay()
        self.limiter = RateLimiter(cfg.samples_per_insert, cfg.min_replay, error_buffer=cfg.batch_size)
        self.optimizers = optimizers
        self.base_lrs = [g["lr"] for opt in optimizers for g in opt.param_groups]
        self.total_steps = total_steps
        self.version = 0
        self.updates = 0
        self._last = time.perf_counter()
        self._inserted_since = self._sampled_since = 0

    def update(self, batch: SampledBatch) -> tuple[float, np.ndarray]:
        raise NotImplementedError

    def step(self, chunk: dict[str, np.ndarray]) -> dict[str, float]:
        if "remote_inserts" in chunk:  # the actor put its transitions into a replay server itself
            n = int(chunk["remote_inserts"][0])
        else:
            items, priorities = chunk_to_insert(chunk)
            n = len(priorities)
            if n:
                self.replay.add(items, priorities=priorities)
        if n:
            self.limiter.record_insert(n)
            self._inserted_since += n
        progress = self.limiter.inserts / self.total_steps
        groups = [g for opt in self.optimizers for g in opt.param_groups]
        for group, base in zip(groups, self.base_lrs):
            group["lr"] = scheduled_lr(base, self.cfg.lr_schedule, progress)
        losses = []
        while self.limiter.try_sample(self.cfg.batch_size):
            batch = self.replay.sample(self.cfg.batch_size, beta=self.cfg.priority_beta)
            loss, td_abs = self.update(batch)
            self.replay.update_priorities(batch.slots, td_abs)
            self._sampled_since += self.cfg.batch_size
            self.updates += 1
            self.version += 1
            losses.append(loss)
        if self.replay.size > self.cfg.replay_size:
            self.replay.trim()
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        metrics = {"replay_size": float(self.replay.size), "insert_rate": self._inserted_since / dt,
                   "sample_rate": self._sampled_since / dt,
                   "sample_insert_ratio": self.limiter.samples / max(self.limiter.inserts, 1),
                   "priority_mean": self.replay.priority_total / max(self.replay.size, 1),
                   "replay_bytes_per_item": float(self.replay.bytes_per_item)}
        self._inserted_since = self._sampled_since = 0
        if losses:
            metrics["loss"] = float(np.mean(losses))
        return metrics

    def counters(self) -> dict:
        return {"updates": self.updates, "version": self.version, "limiter": self.limiter.state()}

    def load_counters(self, c: dict) -> None:
        self.updates, self.version = c.get("updates", 0), c.get("version", 0)
        if "limiter" in c:
            self.limiter.load(c["limiter"])

    def save_state(self, folder) -> None:
        self.replay.save(folder)

    def load_state(self, folder) -> None:
        self.replay.load(folder)


def chunk_to_insert(chunk: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A chunk's real transitions and the priorities its actor gave them, ready for ``Replay.add``."""
    return chunk_items(chunk), chunk["priority"][chunk["valid"]]


def tensors(batch: SampledBatch) -> dict[str, torch.Tensor]:
    # batches from a replay server arrive read-only (Ray's object store); torch wants writable memory
    arrays = dict(batch.items, weights=batch.weights)
    return {k: torch.from_numpy(v if v.flags.writeable else v.copy()) for k, v in arrays.items()}
