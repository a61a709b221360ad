"""Ape-X DQN learner: n-step double-Q on a dueling net over prioritized replay (Ape-X eq. 1), with the Q values
in h-space if ``value_rescale_eps`` is set (the transformed Bellman operator, as R2D2's), and both heads' losses with
``fixed_head_slack`` (``common/dqn_loss.py``)."""

from __future__ import annotations

import copy

import numpy as np
import torch

from distrl.agents.common.dqn_loss import dqn_loss, two_head_dqn_loss
from distrl.agents.common.optim import make_optimizer, polyak_
from distrl.agents.common.replay_learner import ReplayLearner
from distrl.models import flat_tensor
from distrl.replay import SampledBatch


class ApexDQNLearner(ReplayLearner):
    def __init__(self, cfg, model, replay, demos=None):
        self.model = model
        self.target = copy.deepcopy(model)
        self.params = list(model.parameters())
        self.optimizer = make_optimizer("adam", self.params, cfg.lr)
        super().__init__(cfg, replay, {"lr": self.optimizer}, demos)

    def update(self, batch: SampledBatch) -> tuple[float, np.ndarray]:
        cfg = self.cfg
        t = self.tensors(batch)
        if self.model.num_heads == 2:
            loss, delta = two_head_dqn_loss(self.model, self.target, t, t["weights"], cfg.value_rescale_eps,
                                            cfg.first_head_expectile)
        else:
            loss, delta = dqn_loss(self.model, self.target, t, t["weights"], double_q=True,
                                   rescale_eps=cfg.value_rescale_eps)
        if not self.finite_step(loss, self.params, self.optimizer):
            return None, None
        if self.model.obs_norm is not None:  # after the update, as R2D2's: one set of statistics per update
            self.model.obs_norm.update(t["obs"], reduce=self.reduce_sums)
        if cfg.target_tau is not None:
            polyak_(self.target, self.params, cfg.target_tau)
        elif (self.updates + 1) % cfg.target_update_period == 0:
            self.target.load_state_dict(self.model.state_dict())
        return float(loss.detach()), delta.detach().abs().cpu().numpy()

    def device_weights(self) -> torch.Tensor:
        return flat_tensor(self.params)

    def checkpoint_parts(self):
        return {"model": self.model, "target": self.target}, {"optimizer": self.optimizer}
