"""Ape-X DDPG learner: critic on n-step targets from target networks, deterministic policy gradient."""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.common.optim import polyak_
from distrl.agents.common.replay_learner import ReplayLearner
from distrl.models import flat_tensor
from distrl.ops import ddpg_critic_target
from distrl.replay import SampledBatch


class ApexDDPGLearner(ReplayLearner):
    def __init__(self, cfg, model, replay, demos=None):
        self.model = model
        self.target = copy.deepcopy(model)
        self.params = list(model.parameters())
        self.actor_params, self.critic_params = model.actor_parameters(), model.critic_parameters()
        self.actor_opt = torch.optim.Adam(self.actor_params, lr=cfg.actor_lr, foreach=True)
        self.critic_opt = torch.optim.Adam(self.critic_params, lr=cfg.critic_lr, foreach=True)
        super().__init__(cfg, replay, {"actor_lr": self.actor_opt, "critic_lr": self.critic_opt}, demos)

    def update(self, batch: SampledBatch) -> tuple[float, np.ndarray]:
        cfg = self.cfg
        t = self.tensors(batch)
        with torch.no_grad():
            y = ddpg_critic_target(
                t["reward"], t["discount"], self.target.q(t["next_obs"], self.target.mu(t["next_obs"]))
            )
        q = self.model.q(t["obs"], t["action"])
        delta = y - q
        critic_loss = (t["weights"] * F.huber_loss(q, y, reduction="none")).mean()
        if not self.finite_step(critic_loss, self.critic_params, self.critic_opt):
            return None, None
        actor_loss = -self.model.q(t["obs"], self.model.mu(t["obs"])).mean()  # dQ/da through mu only
        if not self.finite_step(actor_loss, self.actor_params, self.actor_opt):
            return None, None
        polyak_(self.target, self.params, cfg.target_tau)
        return float(critic_loss.detach()), delta.detach().abs().cpu().numpy()

    def device_weights(self) -> torch.Tensor:
        return flat_tensor(self.params)

    def checkpoint_parts(self):
        return {"model": self.model, "target": self.target}, {
            "actor_optimizer": self.actor_opt,
            "critic_optimizer": self.critic_opt,
        }
