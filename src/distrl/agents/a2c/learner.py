"""A2C learner: GAE or n-step advantages, policy gradient + baseline + entropy (A3C eq. 9); by default with PPO's
clipped surrogate over several passes of each batch (``ppo_clip``, ``epochs``, ``minibatches``; ``passes.py``)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.actor_critic import actor_critic_loss
from distrl.agents.common.learner_inputs import discounts_and_masks
from distrl.agents.common.normalising import track_statistics
from distrl.agents.common.passes import PassesLearner, flat_steps
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
    baseline and an entropy bonus (``entropy_coef``, default ``cfg``'s). Shared by A2C's and A3C's one-update paths
    (``epochs=1 minibatches=1``; their defaults take PPO's passes). Returns the loss, the terms to report and the
    value targets (the returns)."""
    logp, entropy, values, bootstrap = model.evaluate_unroll(b["obs"], b["actions"])
    adv, returns, valid = advantages_and_returns(b, values.detach(), bootstrap.detach(), cfg)
    loss, terms = update_loss(model, logp, entropy, values, returns, adv, valid, cfg,
                              cfg.entropy_coef if entropy_coef is None else entropy_coef, reduce)
    return loss, terms, returns


def update_loss(model, logp, entropy, values, returns, adv, valid, cfg, entropy_coef, reduce, old_logp=None):
    """The shared actor-critic loss with A2C's (and A3C's) settings, on a whole unroll or a minibatch of its steps;
    ``cfg.ppo_clip`` only with ``old_logp`` (the policy the passes started from)."""
    return actor_critic_loss(model, logp, entropy, values, returns, adv, valid, standardise=cfg.normalize_advantages,
                             value_coef=cfg.value_coef, entropy_coef=entropy_coef, reduce=reduce,
                             ppo_clip=cfg.ppo_clip if old_logp is not None else 0.0, old_logp=old_logp)


class A2CLearner(PassesLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        if self.cfg.epochs == 1 and self.cfg.minibatches == 1:
            return self._one_update(b)
        return self._passes(b)

    def _one_update(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """The paper's A2C: one update on the whole batch (a NaN or inf in it makes the loss non-finite, and
        ``apply`` skips the update)."""
        loss, terms, returns = a2c_loss(self.model, b, self.cfg, self.hyper.get("entropy_coef"), self.reduce_sums)
        applied = self.apply(loss, terms)
        return track_statistics(self.model, b["obs"], returns, b["valid"].float(), applied, self.reduce_sums)

    def _passes(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """PPO's passes (``passes.py``): the advantages, value targets and old policy fixed at the batch's start,
        each minibatch of single steps an update with the clipped surrogate."""
        return self.ppo_passes(b, self._fixed_targets, self._minibatch_update)

    def _fixed_targets(self, b: dict[str, torch.Tensor]):
        old_logp, _, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        adv, returns, valid = advantages_and_returns(b, values, bootstrap, self.cfg)
        return flat_steps(b, valid, old_logp=old_logp, advantages=adv, returns=returns), returns

    def _minibatch_update(self, mb: dict[str, torch.Tensor]) -> dict[str, float]:
        logp, entropy, value = self.model.evaluate(mb["obs"], mb["actions"])
        loss, terms = update_loss(self.model, logp, entropy, value, mb["returns"], mb["advantages"], mb["valid"],
                                  self.cfg, self.hyper.get("entropy_coef", self.cfg.entropy_coef), self.reduce_sums,
                                  mb["old_logp"])
        return self.apply(loss, terms)
