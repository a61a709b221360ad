"""Evolution Strategies (Salimans et al. 2017, arXiv:1703.03864): ranks, noise table, gradient."""

from __future__ import annotations

import numpy as np


def centered_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks of every element of ``x`` (any shape) mapped linearly onto [-0.5, 0.5].

    Fitness shaping of section 2.3 (appendix: rank transformation). Ties get the mean of the ranks
    they span, so equal returns always get equal weights. Returns float32 with ``x``'s shape.
    """
    x = np.asarray(x)
    flat = x.ravel()
    n = flat.size
    if n == 0:
        return np.zeros(x.shape, dtype=np.float32)
    if n == 1:
        return np.zeros(x.shape, dtype=np.float32)
    uniq, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    mean_rank = starts + (counts - 1) / 2.0  # 0-based rank averaged over each tie group
    ranks = mean_rank[inverse.ravel()]
    return (ranks / (n - 1) - 0.5).astype(np.float32).reshape(x.shape)


class NoiseTable:
    """A block of Gaussian noise that every worker rebuilds from one seed.

    Perturbation i is ``table[index : index + dim]``, so workers send back only (index, return)
    pairs and the master rebuilds the noise it needs (section 2.1, "shared random seeds").
    """

    def __init__(self, size: int = 25_000_000, seed: int = 123):
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.seed = seed
        self.noise = np.random.default_rng(seed).standard_normal(size, dtype=np.float32)

    @classmethod
    def of(cls, noise: np.ndarray) -> NoiseTable:
        """A table over an existing array (a shared-memory or object-store copy), without rebuilding it."""
        table = cls.__new__(cls)
        table.seed, table.noise = None, noise
        return table

    def get(self, index: int, dim: int) -> np.ndarray:
        return self.noise[index: index + dim]

    def sample_index(self, rng: np.random.Generator, dim: int) -> int:
        if dim > self.noise.size:
            raise ValueError(f"dim {dim} is larger than the noise table ({self.noise.size})")
        return int(rng.integers(0, self.noise.size - dim + 1))


CHUNK = 512  # perturbations gathered at once: memory stays O(CHUNK * dim) whatever the population


def es_gradient(noise_indices: np.ndarray, returns_pos: np.ndarray, returns_neg: np.ndarray,
                table: NoiseTable, dim: int, sigma: float) -> np.ndarray:
    """Antithetic estimate of grad E[F(theta + sigma eps)] from (index, F+, F-) triples.

    g = 1 / (2 n sigma) * sum_i (u(F+_i) - u(F-_i)) eps_i, with u the centered ranks over all 2n
    returns (section 2, eq. 2 with mirrored sampling). Returns ``[dim]`` float32. (The paper's code leaves
    out the 1/sigma and adds its L2 term to that unscaled sum: multiply by sigma to compare.)
    """
    noise_indices = np.asarray(noise_indices)
    returns_pos = np.asarray(returns_pos, dtype=np.float64)
    returns_neg = np.asarray(returns_neg, dtype=np.float64)
    n = noise_indices.shape[0]
    if returns_pos.shape != (n,) or returns_neg.shape != (n,):
        raise ValueError(f"returns_pos and returns_neg must have shape ({n},) like noise_indices")
    ranks = centered_ranks(np.stack([returns_pos, returns_neg], axis=1))
    weights = (ranks[:, 0] - ranks[:, 1]).astype(np.float32)
    total = np.zeros(dim, dtype=np.float32)
    span = np.arange(dim)
    for start in range(0, n, CHUNK):  # one gather per chunk instead of a loop over perturbations
        eps = table.noise[noise_indices[start:start + CHUNK, None] + span[None, :]]
        total += weights[start:start + CHUNK] @ eps
    return total / (2.0 * n * sigma)
