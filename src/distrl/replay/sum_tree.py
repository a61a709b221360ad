"""A sum tree over priorities with vectorised batch update and stratified sampling.

Written by hand (numpy) because no well-kept library offers a batched sum tree without a C build:
every operation walks the tree one *level* at a time for the whole batch, so a batch of 512 costs
~log2(capacity) numpy calls instead of 512 * log2(capacity) Python steps (Schaul et al. 2016,
arXiv:1511.05952, appendix B.2.1: proportional prioritisation with a sum tree).

With numba installed (a dependency of distrl) the walks run as compiled loops
(:mod:`distrl.replay.sum_tree_kernels`, same arithmetic); ``backend="numpy"`` keeps the level-wise numpy
version, which the tests use as the reference.

Layout: a complete binary tree in one float64 array; node k has children 2k and 2k+1, the root
is node 1 and leaf i is node ``size + i`` with ``size`` the capacity rounded up to a power of two.
"""

from __future__ import annotations

import numpy as np

from distrl.replay.memory import check_fits


def _kernels():
    try:
        from distrl.replay import sum_tree_kernels
    except ImportError:  # numba missing: the numpy walks
        return None
    return sum_tree_kernels


class SumTree:
    def __init__(self, capacity: int, backend: str = "auto"):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        if backend not in ("auto", "numba", "numpy"):
            raise ValueError(f"backend must be auto, numba or numpy, got {backend!r}")
        self.kernels = None if backend == "numpy" else _kernels()
        if backend == "numba" and self.kernels is None:
            raise ImportError("backend='numba' needs numba installed")
        self.capacity = capacity
        self.size = 1 << max(int(np.ceil(np.log2(capacity))), 0)
        self.depth = int(np.log2(self.size))
        check_fits(2 * self.size * 8, f"a priority tree over {capacity:,} items")
        self.tree = np.zeros(2 * self.size, dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self.tree[1])

    def get(self, indices: np.ndarray) -> np.ndarray:
        return self.tree[np.asarray(indices) + self.size]

    def update(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """Set the priorities of ``indices`` (duplicates: the last one wins) and refresh their ancestors."""
        indices = np.asarray(indices, dtype=np.int64)
        priorities = np.asarray(priorities, dtype=np.float64)
        if indices.size == 0:
            return
        _check(priorities)
        self.set_checked(indices, priorities)

    def set_checked(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """:meth:`update` for int64 indices and float64 priorities already known to be finite and >= 0
        (the prioritized sampler's, which it has just computed); skips the checks on the hot path."""
        if self.kernels is not None:
            self.kernels.set_leaves(self.tree, self.size, indices, priorities)
            return
        nodes = indices + self.size
        tree = self.tree
        tree[nodes] = priorities
        for _ in range(self.depth):
            # Siblings share a parent; writing the same sum twice is harmless and cheaper than np.unique.
            nodes >>= 1
            children = nodes << 1
            tree[nodes] = tree[children] + tree[children + 1]

    def update_range(self, start: int, priorities: np.ndarray) -> None:
        """Set leaves ``start .. start + len - 1`` (no wrap): each level is then one contiguous slice,
        which makes batched inserts several times cheaper than :meth:`update`."""
        priorities = np.asarray(priorities, dtype=np.float64)
        n = priorities.shape[0]
        if n == 0:
            return
        if start < 0 or start + n > self.capacity:
            raise ValueError(f"range {start}..{start + n} is outside the capacity {self.capacity}")
        _check(priorities)
        if self.kernels is not None:
            self.kernels.set_range(self.tree, self.size, start, priorities)
            return
        lo, hi = start + self.size, start + n - 1 + self.size
        tree = self.tree
        tree[lo:hi + 1] = priorities
        for _ in range(self.depth):
            lo, hi = lo >> 1, hi >> 1
            tree[lo:hi + 1] = tree[2 * lo:2 * hi + 2:2] + tree[2 * lo + 1:2 * hi + 2:2]

    def sample(self, batch: int, rng: np.random.Generator) -> np.ndarray:
        """Stratified proportional sampling: one draw in each of ``batch`` equal slices of the total mass."""
        return self.draw(batch, rng)[0]

    def draw(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`sample`, with the drawn leaves' priorities."""
        total = self.tree[1]
        if total <= 0:
            raise ValueError("cannot sample from a sum tree whose priorities are all zero")
        u = (np.arange(batch) + rng.random(batch)) * (total / batch)
        return self._find(u)

    def find(self, mass: np.ndarray) -> np.ndarray:
        """Leaf index whose prefix-sum interval holds each value of ``mass``."""
        return self._find(mass)[0]

    def _find(self, mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tree = self.tree
        if self.kernels is not None:
            leaves, values = self.kernels.find(tree, self.size, np.ascontiguousarray(mass, dtype=np.float64))
        else:
            u = np.array(mass, dtype=np.float64)
            nodes = np.ones(u.shape[0], dtype=np.int64)
            for _ in range(self.depth):
                nodes <<= 1
                left = tree[nodes]
                right = u >= left
                u -= left * right
                nodes += right
            leaves, values = nodes - self.size, tree[nodes]
        # float round-off can step onto a zero-priority leaf at the right edge: clamp onto real data
        bad = values <= 0
        if bad.any():
            leaves[bad] = self._rightmost_positive(leaves[bad])
            values[bad] = tree[leaves[bad] + self.size]
        return leaves, values

    def _rightmost_positive(self, leaves: np.ndarray) -> np.ndarray:
        positive = np.flatnonzero(self.tree[self.size:self.size + self.capacity] > 0)
        pos = np.searchsorted(positive, leaves, side="right") - 1
        return positive[np.clip(pos, 0, positive.size - 1)]


def _check(priorities: np.ndarray) -> None:
    if not np.all((priorities >= 0) & (priorities < np.inf)):  # NaN fails both comparisons
        raise ValueError("priorities must be finite and >= 0")
