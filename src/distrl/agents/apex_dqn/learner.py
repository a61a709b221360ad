"""Ape-X DQN learner: n-step double-Q on a dueling net over prioritized replay (Ape-X eq. 1)."""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.common.optim import make_optimizer
from distrl.agents.common.replay_learner import ReplayLearner, tensors
from distrl.core.types import ArraySpec
from distrl.ops import double_q_target, td_error
from distrl.replay import SampledBatch


class ApexDQNLearner(ReplayLearner):
    def __init__(self, cfg, model, spec: dict[str, ArraySpec], total_steps: int):
        self.model = model
        self.target = copy.deepcopy(model)
        self.params = list(model.parameters())
        self.optimizer = make_optimizer("adam", self.params, cfg.lr)
        super().__init__(cfg, spec, total_steps, [self.optimizer])

    def update(self, batch: SampledBatch) -> tuple[float, np.ndarray]:
        cfg = self.cfg
        t = tensors(batch)
        q = self.model(t["obs"])
        with torch.no_grad():
            y = double_q_target(t["reward"], t["discount"], self.model(t["next_obs"]), self.target(t["next_obs"]))
        delta = td_error(q, t["action"], y)
        loss = (t["weights"] * F.huber_loss(delta, torch.zeros_like(delta), reduction="none")).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        if cfg.target_tau is not None:
            with torch.no_grad():
                torch._foreach_lerp_(list(self.target.parameters()), self.params, cfg.target_tau)
        elif (self.updates + 1) % cfg.target_update_period == 0:
            self.target.load_state_dict(self.model.state_dict())
        return float(loss.detach()), delta.detach().abs().numpy()

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model, "target": self.target}, {"optimizer": self.optimizer}
