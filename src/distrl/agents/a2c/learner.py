"""A2C learner: GAE or n-step advantages, policy gradient + baseline + entropy (A3C eq. 9)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks
from distrl.agents.common.normalising import track_statistics, value_terms
from distrl.models import ActorCritic
from distrl.ops import entropy_loss, gae, policy_gradient_loss


def a2c_loss(model: ActorCritic, b: dict[str, torch.Tensor], cfg,
             entropy_coef: float | None = None, reduce=None) -> tuple[torch.Tensor, dict[str, torch.Tensor], torch.Tensor]:
    """A3C eq. 9 on a time-major unroll: policy gradient with GAE or n-step advantages, a value
    baseline and an entropy bonus (``entropy_coef``, default ``cfg``'s). Shared by A2C (one learner) and
    A3C (every worker). Returns the loss, the terms to report and the value targets (the returns)."""
    logp, entropy, values, bootstrap = model.evaluate_unroll(b["obs"], b["actions"])
    discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
    lam = cfg.gae_lambda if cfg.advantage == "gae" else 1.0
    adv = gae(b["rewards"], discounts, values.detach(), bootstrap.detach(), lam=lam * trace)
    returns = adv + values.detach()
    adv, vf, norm_terms = value_terms(model, values, returns, adv, valid, cfg.normalize_advantages, reduce)
    pg = policy_gradient_loss(logp, adv, valid)
    ent = entropy_loss(entropy, valid)
    loss = pg + cfg.value_coef * vf + (cfg.entropy_coef if entropy_coef is None else entropy_coef) * ent
    return loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent, **norm_terms}, returns


class A2CLearner(GradientLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        loss, terms, returns = a2c_loss(self.model, b, self.cfg, self.hyper.get("entropy_coef"), self.reduce_sums)
        applied = self.apply(loss, terms)
        return track_statistics(self.model, b["obs"], returns, b["valid"].float(), applied, self.reduce_sums)
