"""A2C learner: GAE or n-step advantages, policy gradient + baseline + entropy (A3C eq. 9)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks
from distrl.models import ActorCritic
from distrl.ops import baseline_loss, entropy_loss, gae, policy_gradient_loss


def a2c_loss(model: ActorCritic, b: dict[str, torch.Tensor], cfg,
             entropy_coef: float | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A3C eq. 9 on a time-major unroll: policy gradient with GAE or n-step advantages, a value
    baseline and an entropy bonus (``entropy_coef``, default ``cfg``'s). Shared by A2C (one learner) and
    A3C (every worker)."""
    logp, entropy, values, bootstrap = model.evaluate_unroll(b["obs"], b["actions"])
    discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
    lam = cfg.gae_lambda if cfg.advantage == "gae" else 1.0
    adv = gae(b["rewards"], discounts, values.detach(), bootstrap.detach(), lam=lam * trace)
    returns = adv + values.detach()
    if cfg.normalize_advantages:
        n = valid.sum().clamp(min=1.0)
        mean = (adv * valid).sum() / n
        std = (((adv - mean) ** 2 * valid).sum() / n).sqrt()
        adv = (adv - mean) / (std + 1e-8)
    pg = policy_gradient_loss(logp, adv, valid)
    vf = baseline_loss(values, returns, valid)
    ent = entropy_loss(entropy, valid)
    loss = pg + cfg.value_coef * vf + (cfg.entropy_coef if entropy_coef is None else entropy_coef) * ent
    return loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent}


class A2CLearner(GradientLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        loss, terms = a2c_loss(self.model, self.batch_tensors(batch), self.cfg, self.hyper.get("entropy_coef"))
        return self.apply(loss, terms)
