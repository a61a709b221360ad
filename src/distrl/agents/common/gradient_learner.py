"""What the A2C and IMPALA learners share: one model, one optimizer, gradient clipping, versioned flat
weights and checkpoint parts. Each subclass writes only its loss. The learning rate (and any other
hyperparameter) arrives through ``set_hyperparameters``, the trainer's one mutation point, which also
applies the schedule."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch

from distrl.agents.common.optim import make_optimizer
from distrl.models import to_flat


class GradientLearner:
    def __init__(self, cfg, model: torch.nn.Module):
        self.cfg = cfg
        self.model = model
        self.params = list(model.parameters())
        self.optimizer = make_optimizer(cfg.optimizer, self.params, cfg.lr)
        self.hyper = {"lr": cfg.lr}
        self.version = 0

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        self.hyper.update(values)
        if "lr" in values:
            for group in self.optimizer.param_groups:
                group["lr"] = values["lr"]

    def apply(self, loss: torch.Tensor) -> dict[str, float]:
        """Back-propagate, clip, step; one new weights version."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.version += 1
        return {"grad_norm": float(grad_norm), "lr": self.hyper["lr"]}

    def get_weights(self) -> np.ndarray:
        return to_flat(self.params)

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"version": self.version}

    def load_counters(self, c: dict) -> None:
        self.version = c.get("version", 0)
