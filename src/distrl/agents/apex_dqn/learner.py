"""Ape-X DQN learner: prioritized replay, n-step double-Q with a dueling net, priority updates."""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.common.optim import make_optimizer, scheduled_lr
from distrl.core.types import ArraySpec
from distrl.ops import double_q_target, td_error
from distrl.replay import RateLimiter, Replay

ITEM_FIELDS = ("obs", "action", "reward", "discount", "next_obs")


class ApexDQNLearner:
    def __init__(self, cfg, model, spec: dict[str, ArraySpec], total_steps: int):
        self.cfg = cfg
        self.model = model
        self.target = copy.deepcopy(model)
        self.params = list(model.parameters())
        self.optimizer = make_optimizer("adam", self.params, cfg.lr)
        item_spec = {k: ArraySpec(spec[k].shape[1:], spec[k].dtype) for k in ITEM_FIELDS}
        # hard capacity above the soft one, so actors can overfill between trims (Ape-X section 3)
        self.replay = Replay.prioritized(item_spec, int(cfg.replay_size * 1.25) + 1, alpha=cfg.priority_alpha,
                                         soft_capacity=cfg.replay_size)
        self.limiter = RateLimiter(cfg.samples_per_insert, cfg.min_replay, error_buffer=cfg.batch_size)
        self.total_steps = total_steps
        self.version = 0
        self.updates = 0
        self._last = time.perf_counter()
        self._inserted_since = self._sampled_since = 0

    def step(self, chunk: dict[str, np.ndarray]) -> dict[str, float]:
        valid = chunk["valid"]
        n = int(valid.sum())
        if n:
            self.replay.add({k: chunk[k][valid] for k in ITEM_FIELDS}, priorities=chunk["priority"][valid])
            self.limiter.record_insert(n)
            self._inserted_since += n
        losses = []
        lr = scheduled_lr(self.cfg.lr, self.cfg.lr_schedule, self.limiter.inserts / self.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        while self.limiter.try_sample(self.cfg.batch_size):
            losses.append(self._update())
        if self.replay.size > self.cfg.replay_size:
            self.replay.trim()
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        metrics = {"replay_size": float(self.replay.size), "insert_rate": self._inserted_since / dt,
                   "sample_rate": self._sampled_since / dt,
                   "sample_insert_ratio": self.limiter.samples / max(self.limiter.inserts, 1),
                   "priority_mean": self.replay.sampler.tree.total / max(self.replay.size, 1)}
        self._inserted_since = self._sampled_since = 0
        if losses:
            metrics["loss"] = float(np.mean(losses))
        return metrics

    def _update(self) -> float:
        cfg = self.cfg
        b = self.replay.sample(cfg.batch_size, beta=cfg.priority_beta)
        self._sampled_since += cfg.batch_size
        t = {k: torch.from_numpy(v) for k, v in b.items.items()}
        q = self.model(t["obs"])
        with torch.no_grad():
            y = double_q_target(t["reward"], t["discount"], self.model(t["next_obs"]), self.target(t["next_obs"]))
        delta = td_error(q, t["action"], y)
        weights = torch.from_numpy(b.weights)
        loss = (weights * F.huber_loss(delta, torch.zeros_like(delta), reduction="none")).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.replay.update_priorities(b.slots, delta.detach().abs().numpy())
        self.updates += 1
        self.version += 1
        if cfg.target_tau is not None:
            with torch.no_grad():
                torch._foreach_lerp_(list(self.target.parameters()), self.params, cfg.target_tau)
        elif self.updates % cfg.target_update_period == 0:
            self.target.load_state_dict(self.model.state_dict())
        return float(loss.detach())

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model, "target": self.target}, {"optimizer": self.optimizer}

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
