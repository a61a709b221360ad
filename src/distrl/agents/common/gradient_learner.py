"""What the A2C and IMPALA learners share: one model, one optimizer, gradient clipping, versioned flat
weights and checkpoint parts. Each subclass writes only its loss. The learning rate (and any other
hyperparameter) arrives through ``set_hyperparameters``, the trainer's one mutation point, which also
applies the schedule."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import torch

from distrl.agents.common.on_device import OnDevice
from distrl.agents.common.optim import make_optimizer
from distrl.models import FlatParameters


class GradientLearner(OnDevice):
    def __init__(self, cfg, model: torch.nn.Module):
        self.cfg = cfg
        self.model = model
        self.flat = FlatParameters(model)  # published after every update: one memcpy, not a concatenation
        self.params = list(model.parameters())
        self.optimizer = make_optimizer(cfg.optimizer, self.params, cfg.lr, cfg.optimizer_eps)
        self.hyper = {"lr": cfg.lr}
        self.version = 0
        self.nonfinite = 0  # updates skipped because the loss or the gradient was not finite

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        self.hyper.update(values)
        if "lr" in values:
            for group in self.optimizer.param_groups:
                group["lr"] = values["lr"]

    def apply(self, loss: torch.Tensor, terms: Mapping[str, torch.Tensor] | None = None) -> dict[str, float]:
        """Back-propagate, clip, step; one new weights version. A non-finite loss or gradient (a NaN or inf
        in the batch, an overflow) is not applied: the update is skipped and counted. ``terms``: scalar
        tensors to report; they are read with the loss and the gradient norm in one device-to-host copy
        (on a GPU, the update's one synchronisation)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        loss = self.reduce_gradients(loss, self.params)  # several learners: the mean over them
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.cfg.max_grad_norm, foreach=True)
        terms = terms or {}
        values = torch.stack(
            [loss.detach().float(), norm.float(), *(t.detach().float() for t in terms.values())]
        ).tolist()
        loss_value, grad_norm = values[0], values[1]
        reported = dict(zip(terms, values[2:]))
        if not (math.isfinite(grad_norm) and math.isfinite(loss_value)):
            self.optimizer.zero_grad(set_to_none=True)
            self.nonfinite += 1
            return {**reported, "nonfinite_skipped": float(self.nonfinite), "lr": self.hyper["lr"]}
        self.optimizer.step()
        self.version += 1
        return {**reported, "grad_norm": grad_norm, "lr": self.hyper["lr"], "nonfinite_skipped": float(self.nonfinite)}

    def device_weights(self) -> torch.Tensor:
        return self.flat.buffer

    def get_weights(self) -> np.ndarray:
        return self.flat.to_numpy()  # a copy: the buffer changes as the model trains

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"version": self.version, "nonfinite_skipped": self.nonfinite}

    def load_counters(self, c: dict) -> None:
        self.version = c.get("version", 0)
        self.nonfinite = c.get("nonfinite_skipped", 0)
