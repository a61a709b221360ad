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


def policy_gradient_loss(
    logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """-E[log pi(a|x) * A]: the gradient flows through ``logp`` only, never the advantages."""
    if logp.shape != advantages.shape:
        raise ValueError(f"advantages must have shape {tuple(logp.shape)} like logp, got {tuple(advantages.shape)}")
    return -_masked_mean(logp * advantages.detach(), mask)


def clipped_surrogate_loss(logp: torch.Tensor, behaviour_logp: torch.Tensor, advantages: torch.Tensor, clip: float,
                           mask: torch.Tensor | None = None) -> torch.Tensor:
    """PPO's clipped surrogate (Schulman et al. 2017, arXiv:1707.06347, eq. 7) against the behaviour policy mu
    that acted, as APPO applies it to an off-policy batch: -E[min(r A, clip(r, 1 - eps, 1 + eps) A)] with
    r = pi(a|x) / mu(a|x). While r stays inside the band it is the importance-weighted policy gradient; outside it
    the gradient that would move pi further from mu is zero, so several passes over one batch stay near the
    policy that collected it. Masked-out steps (a reset step's ``behaviour_logp`` is not a real one) count as
    r = 1 and are left out of the mean."""
    if not (logp.shape == behaviour_logp.shape == advantages.shape):
        raise ValueError(f"logp, behaviour_logp and advantages must share a shape, got {tuple(logp.shape)}, "
                         f"{tuple(behaviour_logp.shape)}, {tuple(advantages.shape)}")
    if not clip > 0:
        raise ValueError(f"clip must be > 0, got {clip}")
    log_ratio = logp - behaviour_logp
    if mask is not None:
        log_ratio = torch.where(mask.bool(), log_ratio, torch.zeros_like(log_ratio))
    ratio = torch.exp(log_ratio)
    adv = advantages.detach()
    return -_masked_mean(torch.minimum(ratio * adv, ratio.clamp(1.0 - clip, 1.0 + clip) * adv), mask)


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


def large_margin_loss(q_tm1: torch.Tensor, a_tm1: torch.Tensor, margin: float,
                      mask: torch.Tensor | None = None) -> torch.Tensor:
    """DQfD's supervised loss on demonstrated steps (Hester et al. 2018, eq. 2): ``max_a [Q(s, a) + l(a_E, a)] -
    Q(s, a_E)``, with ``l(a_E, a) = margin`` for every ``a != a_E`` and 0 for the demonstrated ``a_E``: it is 0 once
    the demonstrated action's value leads every other by ``margin``, and pulls the other values down until then.

    ``q_tm1`` ``[..., A]`` the values of the states s = x_tm1 the demonstrator acted in, ``a_tm1`` ``[...]`` its actions
    a_E there, ``mask`` ``[...]`` (the steps it applies to); the mean over the masked steps."""
    if q_tm1.shape[:-1] != a_tm1.shape:
        raise ValueError(f"a_tm1 must have shape {tuple(q_tm1.shape[:-1])}, got {tuple(a_tm1.shape)}")
    a_tm1 = a_tm1.long().unsqueeze(-1)
    others = torch.full_like(q_tm1, margin).scatter(-1, a_tm1, 0.0)  # l(a_E, a)
    q_tm1_demo = q_tm1.gather(-1, a_tm1).squeeze(-1)
    return _masked_mean((q_tm1 + others).max(-1).values - q_tm1_demo, mask)
