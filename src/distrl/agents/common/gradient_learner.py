"""What the A2C and IMPALA learners share: one model, one optimizer, a learning-rate schedule,
gradient clipping, versioned flat weights and checkpoint parts. Each subclass writes only its loss."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.optim import make_optimizer, scheduled_lr


class GradientLearner:
    def __init__(self, cfg, model: torch.nn.Module, total_steps: int):
        self.cfg = cfg
        self.model = model
        self.params = list(model.parameters())
        self.optimizer = make_optimizer(cfg.optimizer, self.params, cfg.lr)
        self.total_steps = total_steps
        self.samples = 0
        self.version = 0

    def apply(self, loss: torch.Tensor, samples: int) -> dict[str, float]:
        """Schedule the learning rate, back-propagate, clip, step; one new weights version."""
        self.samples += samples
        lr = scheduled_lr(self.cfg.lr, self.cfg.lr_schedule, self.samples / self.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.version += 1
        return {"grad_norm": float(grad_norm), "lr": lr}

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"samples": self.samples, "version": self.version}

    def load_counters(self, c: dict) -> None:
        self.samples, self.version = c.get("samples", 0), c.get("version", 0)
