"""Learning tests that hold on any machine of our kind, not only on the one where a bar was set.

The ``inline`` runtime is deterministic on one machine but not across machines: other CPUs and
library builds round the same kernels differently (here, PyTorch's plain-SSE kernels instead of
its AVX-512 ones changed every run), and a learning curve amplifies the difference. So a bar is set
from the spread over many seeds and numeric variants (``benchmarks/learning_spread.py``, whose
output each test's docstring quotes), never from the one number a single seed gave.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import distrl


def scores(system: str, seeds, tmp_path: Path, *, score: str, episodes: int = 10, **settings) -> list[float]:
    """Train ``system`` once per seed; return each run's training mean (``score="train"``, the last 100
    episodes) or greedy evaluation (``score="eval"``)."""
    out = []
    for seed in seeds:
        run_dir = tmp_path / f"seed{seed}"
        summary = distrl.train(system, run_dir=str(run_dir), seed=seed, **settings)
        if score == "train":
            out.append(summary["episode_return_mean"])
        else:
            out.append(distrl.evaluate(run_dir, episodes=episodes)["mean_return"])
    return out


def median(values: list[float]) -> float:
    return statistics.median(values)
