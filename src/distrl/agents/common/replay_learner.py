"""The replay side of an Ape-X-style learner, shared by Ape-X DQN and Ape-X DDPG.

Each chunk from an actor is inserted with its initial priorities; then the learner runs as many
updates as the sample-to-insert rate limiter allows, writes back |delta| priorities and trims the
replay to its soft capacity. Subclasses supply only ``update(batch) -> (loss, |delta|)``.
"""

from __future__ import annotations

import time

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
        self.replay = Replay.prioritized(items, int(cfg.replay_size * 1.25) + 1, alpha=cfg.priority_alpha,
                                         soft_capacity=cfg.replay_size, frame_stacks=("obs", "next_obs") if pixels else None)
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
        valid = chunk["valid"]
        n = int(valid.sum())
        if n:
            self.replay.add(chunk_items(chunk), priorities=chunk["priority"][valid])
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
                   "priority_mean": self.replay.sampler.tree.total / max(self.replay.size, 1),
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


def tensors(batch: SampledBatch) -> dict[str, torch.Tensor]:
    out = {k: torch.from_numpy(v) for k, v in batch.items.items()}
    out["weights"] = torch.from_numpy(batch.weights)
    return out
