"""Population-Based Training's exploit rule (Jaderberg et al. 2017, arXiv:1711.09846, section 3-4): asynchronous
truncation selection. A pure function of a score table: no processes, no checkpoints. The controller
(``pbt/controller.py``) copies weights and hyperparameters; explore is ``pbt/population.py``'s perturber."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
