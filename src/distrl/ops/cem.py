"""The cross-entropy method over a Q-function's actions, and QT-Opt's clipped double-Q target.

QT-Opt (Kalashnikov et al. 2018, arXiv:1806.10293, section 4.2) has no policy network: the action is
argmax_a Q(s, a), found by CEM (Rubinstein & Kroese 2004), for acting and for the Bellman target alike.
Each iteration draws ``samples`` actions per state from a Gaussian, keeps the ``elites`` best by Q and refits
the Gaussian to them (mean and standard deviation per action dimension); the paper uses 2 iterations of 64
samples and 6 elites. Everything here is batched: one call scores ``[B, samples]`` actions at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from distrl.ops._checks import check_float, check_tensor


def cem_maximize(score, low: torch.Tensor, high: torch.Tensor, batch: int, iterations: int = 2, samples: int = 64,
                 elites: int = 6, generator: torch.Generator | None = None,
                 noise: Sequence[torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Approximately maximise ``score(actions [B, N, A]) -> [B, N]`` over the box ``[low, high]`` (each ``[A]``)
    for ``batch`` independent problems. The first Gaussian is centred in the box with half its width as the
    standard deviation; samples are clipped into the box. Returns the best action seen over all iterations
    ``[B, A]`` and its score ``[B]`` (so more iterations never return a worse action).

    ``noise``: the standard-normal draws to use, one ``[1, N, A]`` tensor per iteration shared by every problem,
    instead of drawing ``[B, N, A]`` from ``generator`` (a greedy policy's fixed draws; an exported graph's
    constants)."""
    check_tensor("low", low, rank=1)
    check_float("low", low)
    check_tensor("high", high, shape=tuple(low.shape))
    # a check of values, not shapes: a graph being traced for export has none yet (the eager run before it checked)
    if not torch.compiler.is_compiling() and not bool((high >= low).all()):
        raise ValueError("high must be >= low in every action dimension")
    if iterations < 1 or samples < 1 or not 1 <= elites <= samples:
        raise ValueError(f"need iterations >= 1 and 1 <= elites <= samples; got {iterations}, {samples}, {elites}")
    A = low.shape[0]
    if noise is not None and (len(noise) != iterations or any(tuple(n.shape) != (1, samples, A) for n in noise)):
        raise ValueError(f"noise must be {iterations} tensors of shape (1, {samples}, {A})")
    mean = ((low + high) / 2).expand(batch, A)
    std = ((high - low) / 2).expand(batch, A)
    best_action, best_score = mean.clone(), torch.full((batch,), -torch.inf, dtype=low.dtype)
    with torch.no_grad():
        for i in range(iterations):
            z = torch.randn((batch, samples, A), generator=generator, dtype=low.dtype) if noise is None else noise[i]
            actions = torch.maximum(torch.minimum(mean.unsqueeze(1) + std.unsqueeze(1) * z, high), low)
            scores = score(actions)
            check_tensor("score(actions)", scores, shape=(batch, samples))
            top, idx = scores.topk(elites, dim=1)
            chosen = actions.gather(1, idx.unsqueeze(2).expand(-1, -1, A))  # [B, elites, A], the best first
            better = top[:, 0] > best_score
            best_action = torch.where(better.unsqueeze(1), chosen[:, 0], best_action)
            best_score = torch.where(better, top[:, 0], best_score)
            mean, std = chosen.mean(1), chosen.std(1, unbiased=False)
    return best_action, best_score


def clipped_double_q_target(r_t: torch.Tensor, discount_t: torch.Tensor, q1_t: torch.Tensor,
                            q2_t: torch.Tensor) -> torch.Tensor:
    """QT-Opt's target (arXiv:1806.10293, section 4.2, after Fujimoto et al. 2018's clipped double Q) for transitions
    x_tm1 -> x_t: y = r_t + discount_t min(Q1'(x_t, a*), Q2'(x_t, a*)), with a* the CEM argmax of the first target
    network. All ``[B]``; ``discount_t`` = gamma^n (1 - done). The minimum of two differently lagged networks keeps the
    overestimation of a max over actions from compounding."""
    check_tensor("r_t", r_t, rank=1)
    check_float("r_t", r_t)
    for name, x in (("discount_t", discount_t), ("q1_t", q1_t), ("q2_t", q2_t)):
        check_tensor(name, x, shape=tuple(r_t.shape))
    with torch.no_grad():
        return r_t + discount_t * torch.minimum(q1_t, q2_t)
