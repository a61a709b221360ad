"""The actor-critic learners' use of the model's normalisers (``models/normalisers.py``): with PopArt the
value loss is taken in normalised units and the policy-gradient advantages divided by sigma (Hessel et al.
2019, arXiv:1809.04474, eq. 9-10). The statistics move after the update, and only when it was applied: the
batch's observations join the running moments and PopArt's averages move toward its targets. So the update
uses the statistics the actors acted with, a skipped (non-finite) update changes no weight, and rescaling the
head never touches weights autograd still holds."""

from __future__ import annotations

import torch

from distrl.models import ActorCritic
from distrl.ops import baseline_loss, standardised


def value_terms(model: ActorCritic, values: torch.Tensor, targets: torch.Tensor, advantages: torch.Tensor,
                valid: torch.Tensor, standardise: bool = False, reduce=None) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """(policy-gradient advantages, value loss, terms to report). The advantages are standardised over the
    batch (``standardise``), else divided by PopArt's sigma when the model has it, else as they are; the
    value loss is in PopArt's normalised units when the model has it (its mean and scale reported)."""
    if standardise:
        advantages = standardised(advantages, valid, reduce)
    if model.popart is None:
        return advantages, baseline_loss(values, targets, valid), {}
    popart = model.popart
    if not standardise:
        advantages = advantages / popart.sigma
    return (advantages, baseline_loss(popart.normalise(values), popart.normalise(targets), valid),
            {"value_mu": popart.mu, "value_sigma": popart.sigma})


def track_statistics(model: ActorCritic, obs: torch.Tensor, targets: torch.Tensor, valid: torch.Tensor,
                     applied: dict, reduce) -> dict:
    """After an update (``applied``: what ``GradientLearner.apply`` returned, whose ``value_mu`` and
    ``value_sigma`` are the statistics it used): add the batch's observations to the running moments and move
    PopArt toward its targets, unless the update was skipped as non-finite."""
    if "grad_norm" not in applied:
        return applied
    if model.obs_norm is not None:
        model.obs_norm.update(obs, reduce=reduce)
    if model.popart is not None:
        model.popart.update(model.v_head, targets.detach(), valid, reduce)
    return applied
