"""A2C learner: GAE or n-step advantages and one update per batch of policy gradient + baseline + entropy (A3C
eq. 9). The loss pieces are shared with A3C's workers and PPO's passes (``agents/ppo/learner.py``)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.actor_critic import actor_critic_loss
from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks
from distrl.agents.common.normalising import track_statistics
from distrl.models import ActorCritic
from distrl.ops import gae


def advantages_and_returns(b: dict[str, torch.Tensor], values: torch.Tensor, bootstrap: torch.Tensor, cfg):
    """GAE(lambda) advantages (n-step returns' with ``advantage=nstep``: lambda 1) over a time-major unroll, its
    value targets (advantage + value) and valid mask, from values that carry no gradient."""
    discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
    lam = cfg.gae_lambda if cfg.advantage == "gae" else 1.0
    adv = gae(b["rewards"], discounts, values, bootstrap, lam=lam * trace)
    return adv, adv + values, valid


def a2c_loss(model: ActorCritic, b: dict[str, torch.Tensor], cfg,
             entropy_coef: float | None = None,
             reduce=None) -> tuple[torch.Tensor, dict[str, torch.Tensor], torch.Tensor]:
    """A3C eq. 9 on a time-major unroll, one update: policy gradient with GAE or n-step advantages, a value
    baseline and an entropy bonus (``entropy_coef``, default ``cfg``'s). Shared by A2C's learner and A3C's
    workers. Returns the loss, the terms to report and the value targets (the returns)."""
    logp, entropy, values, bootstrap = model.evaluate_unroll(b["obs"], b["actions"])
    adv, returns, valid = advantages_and_returns(b, values.detach(), bootstrap.detach(), cfg)
    loss, terms = update_loss(logp, entropy, values, returns, adv, valid, cfg,
                              cfg.entropy_coef if entropy_coef is None else entropy_coef, reduce, model=model)
    return loss, terms, returns


def update_loss(logp, entropy, values, returns, adv, valid, cfg, entropy_coef, reduce, *, model,
                ppo_clip: float = 0.0, old_logp=None):
    """The shared actor-critic loss with A2C's settings, on a whole unroll or a minibatch of its steps; with
    ``old_logp`` and ``ppo_clip`` PPO's clipped surrogate against it (PPO's learner, A3C's optional passes)."""
    return actor_critic_loss(model, logp, entropy, values, returns, adv, valid, standardise=cfg.normalize_advantages,
                             value_coef=cfg.value_coef, entropy_coef=entropy_coef, reduce=reduce,
                             ppo_clip=ppo_clip, old_logp=old_logp)


class A2CLearner(GradientLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        """The paper's A2C: one update on the whole batch (a NaN or inf in it makes the loss non-finite, and
        ``apply`` skips the update)."""
        b = self.batch_tensors(batch)
        loss, terms, returns = a2c_loss(self.model, b, self.cfg, self.hyper.get("entropy_coef"), self.reduce_sums)
        applied = self.apply(loss, terms)
        return track_statistics(self.model, b["obs"], returns, b["valid"].float(), applied, self.reduce_sums)
