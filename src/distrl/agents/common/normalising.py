"""The actor-critic learners' use of the model's normalisers (``models/normalisers.py``): observations are
added to the running statistics before the forward pass; with PopArt the value loss is taken in normalised
units and the policy-gradient advantages divided by sigma (Hessel et al. 2019, arXiv:1809.04474, eq. 9-10),
and after the update the statistics move toward this batch's targets (one update late: rescaling the head
inside the update would change weights autograd still holds)."""

from __future__ import annotations

import torch

from distrl.models import ActorCritic
from distrl.ops import baseline_loss, standardised


def observe(model: ActorCritic, obs: torch.Tensor, reduce) -> None:
    if model.obs_norm is not None:
        model.obs_norm.update(obs, reduce=reduce)


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


def track_targets(model: ActorCritic, targets: torch.Tensor, valid: torch.Tensor, applied: dict, reduce) -> dict:
    """After an update (``applied``: what ``GradientLearner.apply`` returned), move PopArt's moments toward
    the batch's targets unless the update was skipped as non-finite."""
    if model.popart is not None and "grad_norm" in applied:
        model.popart.update(model.v_head, targets.detach(), valid, reduce)
    return applied
