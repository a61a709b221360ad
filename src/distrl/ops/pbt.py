"""Population-Based Training's exploit/explore rule (Jaderberg et al. 2017, arXiv:1711.09846, section 3-4).

A pure function of a score table: no processes, no checkpoints. The caller copies weights and
applies the returned hyperparameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PBTDecision:
    member: int  # the member that is replaced
    source: int  # the member whose weights and hyperparameters it copies
    hyperparams: dict[str, Any]  # the source's hyperparameters after perturbation


def pbt_exploit_explore(
    scores: Sequence[float],
    hyperparams: Sequence[Mapping[str, float]],
    rng: np.random.Generator,
    *,
    fraction: float = 0.2,
    factors: tuple[float, float] = (0.8, 1.2),
    resample_prob: float = 0.0,
    resample: Mapping[str, Callable[[np.random.Generator], float]] | None = None,
) -> list[PBTDecision]:
    """Truncation selection: each member in the bottom ``fraction`` copies a uniformly chosen member of
    the top ``fraction`` (exploit), then every hyperparameter is multiplied by a random choice of
    ``factors`` or, with probability ``resample_prob``, redrawn from ``resample[name]`` (explore).
    Members outside the bottom fraction are left alone. Ties keep population order (stable sort).
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0]
    if len(hyperparams) != n:
        raise ValueError(f"hyperparams must have one entry per score ({n}), got {len(hyperparams)}")
    if not 0.0 < fraction <= 0.5:
        raise ValueError(f"fraction must be in (0, 0.5], got {fraction}")
    k = int(np.floor(n * fraction))
    if k == 0:
        return []
    order = np.argsort(scores, kind="stable")
    bottom, top = order[:k], order[n - k:]
    decisions = []
    for member in bottom:
        source = int(rng.choice(top))
        new = {}
        for name, value in hyperparams[source].items():
            if resample and name in resample and rng.random() < resample_prob:
                new[name] = resample[name](rng)
            else:
                new[name] = value * float(rng.choice(factors))
        decisions.append(PBTDecision(member=int(member), source=source, hyperparams=new))
    return decisions


def truncation_source(
    member: int, scores: Sequence[float], rng: np.random.Generator, fraction: float = 0.2
) -> int | None:
    """Asynchronous truncation selection for one ready member (Jaderberg et al. 2017, section 3.1 and
    appendix A.1: a member is compared with the latest scores of the others, no barrier): ``None`` unless
    ``member`` ranks in the bottom ``ceil(n * fraction)`` of the ``n`` members that have a finite score;
    then a member drawn uniformly from those of the top as many that score strictly higher. Ties keep
    population order."""
    if not 0.0 < fraction <= 0.5:
        raise ValueError(f"fraction must be in (0, 0.5], got {fraction}")
    scores = np.asarray(scores, dtype=np.float64)
    scored = np.flatnonzero(np.isfinite(scores))
    if member not in scored or scored.size < 2:
        return None
    k = min(int(np.ceil(scored.size * fraction)), scored.size // 2)
    order = scored[np.argsort(scores[scored], kind="stable")]
    if member not in order[:k]:
        return None
    better = [s for s in order[-k:] if scores[s] > scores[member]]  # equal scores: nothing to gain by copying
    return int(rng.choice(better)) if better else None
