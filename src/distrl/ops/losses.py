"""Actor-critic loss terms (A3C, arXiv:1602.01783 eq. 9 and section 4; IMPALA section 4.2).

Each term takes an optional ``mask`` ``[T, B]`` (1 for real transitions, 0 for the reset step of a
next-step-autoreset vector env or padding) and averages over the real ones.
"""

from __future__ import annotations

import torch


def _masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return x.mean()
    if mask.shape != x.shape:
        raise ValueError(f"mask must have shape {tuple(x.shape)}, got {tuple(mask.shape)}")
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def policy_gradient_loss(logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """-E[log pi(a|x) * A]: the gradient flows through ``logp`` only, never the advantages."""
    if logp.shape != advantages.shape:
        raise ValueError(f"advantages must have shape {tuple(logp.shape)} like logp, got {tuple(advantages.shape)}")
    return -_masked_mean(logp * advantages.detach(), mask)


def baseline_loss(values: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """0.5 * E[(v_s - V(x_s))^2]: the targets are constants, the gradient flows through ``values``."""
    if values.shape != targets.shape:
        raise ValueError(f"targets must have shape {tuple(values.shape)} like values, got {tuple(targets.shape)}")
    return 0.5 * _masked_mean((targets.detach() - values) ** 2, mask)


def entropy_loss(entropy: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """-E[H(pi(.|x))]: minimising it raises the policy's entropy (exploration bonus)."""
    return -_masked_mean(entropy, mask)


def standardised(x: torch.Tensor, valid: torch.Tensor, reduce=None) -> torch.Tensor:
    """``x`` less its mean, over its standard deviation, both over the valid entries of the whole batch
    (``reduce`` sums the moments over data-parallel learners' shards)."""
    # one pass (E[x^2] - mean^2, so shards can sum their moments), in float64: in float32 a large mean and a
    # small spread would round the variance to 0
    xd, vd = x.double(), valid.double()
    sums = torch.stack([vd.sum(), (xd * vd).sum(), (xd * xd * vd).sum()])
    if reduce is not None:
        sums = reduce(sums)
    n = sums[0].clamp(min=1.0)
    mean = sums[1] / n
    std = (sums[2] / n - mean * mean).clamp(min=0.0).sqrt()
    return ((xd - mean) / (std + 1e-8)).to(x.dtype)
