"""Prioritised replay (Schaul et al. 2016, arXiv:1511.05952) and Ape-X / R2D2 priority rules."""

from __future__ import annotations

import numpy as np
import torch

from distrl.ops._checks import check_tensor


def per_priority(td_errors: torch.Tensor, alpha: float = 0.6, eps: float = 1e-6) -> torch.Tensor:
    """p_i^alpha with p_i = |delta_i| + eps (PER section 3.3, proportional variant)."""
    return (td_errors.abs() + eps) ** alpha


def importance_weights(sample_probs, buffer_size: int, beta: float = 0.4):
    """w_i = (N P(i))^-beta / max_j w_j (PER section 3.4); normalised by the batch maximum.

    Takes a torch tensor or a numpy array (the replay calls it on numpy, in its sampling hot path)."""
    if isinstance(sample_probs, np.ndarray):
        if sample_probs.ndim != 1:
            raise ValueError(f"sample_probs must have rank 1, got shape {sample_probs.shape}")
    else:
        check_tensor("sample_probs", sample_probs, rank=1)
    if buffer_size < 1:
        raise ValueError(f"buffer_size must be >= 1, got {buffer_size}")
    w = (buffer_size * sample_probs) ** (-beta)
    return w / w.max()


def sequence_priority(td_errors: torch.Tensor, eta: float = 0.9, mask: torch.Tensor | None = None) -> torch.Tensor:
    """R2D2 section 2.3: p = eta max_t |delta_t| + (1 - eta) mean_t |delta_t| per sequence.
    ``td_errors`` ``[T, B]``; ``mask`` ``[T, B]`` excludes padding. Returns ``[B]``."""
    check_tensor("td_errors", td_errors, rank=2)
    abs_td = td_errors.abs()
    if mask is None:
        return eta * abs_td.max(dim=0).values + (1 - eta) * abs_td.mean(dim=0)
    check_tensor("mask", mask, shape=tuple(td_errors.shape))
    m = mask.to(abs_td.dtype)
    mx = (abs_td * m).max(dim=0).values
    mean = (abs_td * m).sum(dim=0) / m.sum(dim=0).clamp(min=1.0)
    return eta * mx + (1 - eta) * mean


def epsilon_ladder(num_actors: int, eps: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """Ape-X exploration rates eps_i = eps^(1 + alpha i / (N - 1)), i = 0..N-1 (section 4.1).
    With one actor the exponent is 1 (eps_0 = eps)."""
    if num_actors < 1:
        raise ValueError(f"num_actors must be >= 1, got {num_actors}")
    i = np.arange(num_actors, dtype=np.float64)
    exponent = 1.0 + alpha * i / max(num_actors - 1, 1)
    return eps ** exponent
