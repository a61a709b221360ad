"""Spread over seeds: min / median / max, and the interquartile mean with a bootstrap interval.

Agarwal et al. (2021, arXiv:2108.13264, "Deep RL at the edge of the statistical precipice") recommend, for
few runs, the interquartile mean (the mean of the middle 50% of scores, robust to one outlier seed, less
noisy than the median) with a percentile bootstrap confidence interval over runs. ``rliable`` implements it
with stratified bootstraps across tasks; one cell's seeds are a single stratum, for which the bootstrap
below is the whole computation, so it is written here rather than pulling rliable's dependencies (arch,
scipy) into the install.
"""

from __future__ import annotations

import numpy as np


def iqm(scores) -> float:
    """Mean of the middle half: sorted, ``floor(n / 4)`` scores trimmed from each end (rliable's IQM, which is
    ``scipy.stats.trim_mean(scores, 0.25)``)."""
    x = np.sort(np.asarray(scores, dtype=np.float64))
    k = len(x) // 4
    return float(np.mean(x[k:len(x) - k])) if len(x) else float("nan")


def bootstrap_ci(scores, statistic=iqm, samples: int = 2000, confidence: float = 0.95, seed: int = 0):
    """Percentile bootstrap interval of ``statistic`` over the runs (resampled with replacement)."""
    x = np.asarray(scores, dtype=np.float64)
    if len(x) < 2:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    draws = x[rng.integers(0, len(x), size=(samples, len(x)))]
    values = np.array([statistic(d) for d in draws])
    tail = (1.0 - confidence) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def spread(scores) -> dict:
    """min / median / max / IQM and its interval over the finite scores (a cell that never got there is None)."""
    x = [float(s) for s in scores if s is not None and np.isfinite(s)]
    if not x:
        return {"n": 0}
    lo, hi = bootstrap_ci(x)
    return {"n": len(x), "min": min(x), "median": float(np.median(x)), "max": max(x), "iqm": iqm(x),
            "iqm_ci": [lo, hi] if len(x) >= 3 else None}
