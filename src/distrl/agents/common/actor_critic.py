"""The actor-critic loss every on-policy learner takes (A3C eq. 9; IMPALA section 4.2 with V-trace's targets): the
policy gradient, or PPO's clipped surrogate against an older policy (Schulman et al. 2017, eq. 7), a value loss and
an entropy bonus, with the normalisers' terms (``normalising.value_terms``). A2C, A3C, IMPALA and SEED differ only in
the targets and advantages they give it."""

from __future__ import annotations

import torch

from distrl.agents.common.normalising import value_terms
from distrl.models import ActorCritic
from distrl.ops import clipped_surrogate_loss, entropy_loss, policy_gradient_loss


def actor_critic_loss(model: ActorCritic, logp, entropy, values, targets, advantages, valid, *, standardise: bool,
                      value_coef: float, entropy_coef: float, reduce=None, ppo_clip: float = 0.0,
                      old_logp=None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """(loss, terms to report) on a batch or minibatch of any shape, ``valid`` masking it: the clipped surrogate
    against ``old_logp`` when it is given and ``ppo_clip`` is set, else the plain policy gradient."""
    advantages, vf, norm_terms = value_terms(model, values, targets, advantages, valid, standardise, reduce)
    if old_logp is not None and ppo_clip:
        pg = clipped_surrogate_loss(logp, old_logp, advantages, ppo_clip, valid)
    else:
        pg = policy_gradient_loss(logp, advantages, valid)
    ent = entropy_loss(entropy, valid)
    loss = pg + value_coef * vf + entropy_coef * ent
    return loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent, **norm_terms}
