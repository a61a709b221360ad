"""The A3C "learner" is only the keeper of the shared model: workers do all the learning.

It owns the model and the shared RMSProp (for checkpoints and evaluation), hands their shared
tensors to the runtime, and turns workers' reports into metrics (updates/s, gradient staleness).
"""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.a3c.optim import SharedRMSprop
from distrl.runtime.params import SharedParams


class A3CLearner:
    def __init__(self, cfg, model):
        self.cfg = cfg
        self.model = model.share_memory()
        self.optimizer = SharedRMSprop(model.parameters(), cfg.lr, cfg.rmsprop_alpha, cfg.rmsprop_eps).share_memory()
        self.counter = torch.zeros(1, dtype=torch.int64).share_memory_()

    @property
    def version(self) -> int:
        return int(self.counter.item())

    def shared(self):
        return SharedParams(self.model, self.optimizer, self.counter)

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        return {"updates_total": float(self.version)}

    def load_weights(self, flat: np.ndarray, version: int) -> None:
        """Take weights from elsewhere (Ray's parameter server) so checkpoints hold them."""
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(torch.from_numpy(flat.copy()), self.model.parameters())
        self.counter.fill_(version)

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"updates": self.version}

    def load_counters(self, c: dict) -> None:
        self.counter.fill_(c.get("updates", 0))
