"""Compiled sum-tree loops (numba), used by :class:`~distrl.replay.sum_tree.SumTree` when numba is there.

Why compiled: the numpy version walks the tree a level at a time for the whole batch, which costs
~20 numpy calls per level-walk at 1M capacity, each paying call overhead for a few hundred elements.
These loops do the same walks in machine code (one call per batch). Semantics are the numpy
version's exactly (same float operations in the same order), which the tests check against it.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def set_leaves(tree, size, indices, priorities):  # pragma: no cover - compiled
    """Set leaves then refresh each one's ancestors (duplicates: the last one wins). Leaf by leaf: a
    level-at-a-time walk that refreshes a shared parent once measured slower here (18 us vs 16 us)."""
    for i in range(indices.shape[0]):
        tree[indices[i] + size] = priorities[i]
    for i in range(indices.shape[0]):
        node = (indices[i] + size) >> 1
        while node >= 1:
            tree[node] = tree[2 * node] + tree[2 * node + 1]
            node >>= 1


@numba.njit(cache=True, nogil=True)
def set_range(tree, size, start, priorities):  # pragma: no cover - compiled
    """Set a contiguous run of leaves, then each level's affected range once."""
    lo = start + size
    hi = lo + priorities.shape[0] - 1
    for i in range(priorities.shape[0]):
        tree[lo + i] = priorities[i]
    while lo > 1:
        lo >>= 1
        hi >>= 1
        for node in range(lo, hi + 1):
            tree[node] = tree[2 * node] + tree[2 * node + 1]


@numba.njit(cache=True, nogil=True)
def find(tree, size, mass):  # pragma: no cover - compiled
    """Leaf whose prefix-sum interval holds each value of ``mass`` (descend: left if u < left sum), and
    its priority (read here while the leaf's cache line is fresh).

    Level by level for the whole batch, not draw by draw: the batch's loads at one level do not depend
    on each other, so the CPU overlaps their cache misses (a draw-by-draw descent waits on each in
    turn, and was slower than numpy at 1M capacity). Measured at 1M capacity, 512 draws: 52 us with an
    ``if`` per level, 19 us branch-free."""
    n = mass.shape[0]
    u = mass.copy()
    nodes = np.ones(n, dtype=np.int64)
    while nodes.shape[0] > 0 and nodes[0] < size:
        for i in range(n):
            node = nodes[i] << 1
            left = tree[node]
            right = u[i] >= left  # branch-free: which way a draw goes is a coin flip the CPU cannot
            u[i] -= left * right  # predict, and mispredicted branches cost 2.7x this walk at 1M capacity
            nodes[i] = node + right
    values = np.empty(n, dtype=np.float64)
    for i in range(n):
        values[i] = tree[nodes[i]]
    return nodes - size, values
