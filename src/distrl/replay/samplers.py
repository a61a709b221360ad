"""Which stored items a batch is drawn from: uniformly, by priority (sum tree) or first-in first-out."""

from __future__ import annotations

import numpy as np

from distrl.replay.sum_tree import SumTree


class UniformSampler:
    def __init__(self, capacity: int):
        self.capacity = capacity
        self.size = 0

    def insert(self, slots: np.ndarray, priorities: np.ndarray | None = None) -> None:
        self.size = min(self.size + len(slots), self.capacity)

    def sample(self, batch: int, rng: np.random.Generator, storage) -> tuple[np.ndarray, np.ndarray]:
        if storage.size == 0:
            raise ValueError("cannot sample from an empty replay")
        start = (storage.next - storage.size) % storage.capacity
        slots = (start + rng.integers(0, storage.size, batch)) % storage.capacity
        return slots, np.full(batch, 1.0 / storage.size)

    def remove(self, slots: np.ndarray) -> None:
        pass

    def state(self) -> dict[str, np.ndarray]:
        return {}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        pass


class PrioritizedSampler:
    """Proportional prioritisation: P(i) = p_i^alpha / sum_k p_k^alpha (PER eq. 1).

    Priorities come in as |delta|-like magnitudes; the exponent alpha is applied here, once.
    """

    def __init__(self, capacity: int, alpha: float = 0.6, eps: float = 1e-6):
        self.tree = SumTree(capacity)
        self.alpha = alpha
        self.eps = eps
        self.max_priority = 1.0

    def _scaled(self, priorities: np.ndarray) -> np.ndarray:
        p = np.abs(np.asarray(priorities, dtype=np.float64)) + self.eps
        top = float(p.max(initial=0.0))
        if not top < np.inf:  # inf, or NaN anywhere (max propagates it)
            raise ValueError("priorities must be finite")
        self.max_priority = max(self.max_priority, top)
        return p ** self.alpha

    def insert(self, slots: np.ndarray, priorities: np.ndarray | None = None) -> None:
        if priorities is None:  # no initial priority from the actor: the maximum seen so far (PER)
            priorities = np.full(len(slots), self.max_priority)
        if len(priorities) != len(slots):
            raise ValueError(f"{len(priorities)} priorities for {len(slots)} new items")
        scaled = self._scaled(priorities)
        start = int(slots[0])
        wrap = min(len(slots), self.tree.capacity - start)  # ring writes are contiguous up to one wrap
        self.tree.update_range(start, scaled[:wrap])
        if wrap < len(slots):
            self.tree.update_range(0, scaled[wrap:])

    def update(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        self.tree.set_checked(np.asarray(slots, dtype=np.int64), self._scaled(priorities))

    def sample(self, batch: int, rng: np.random.Generator, storage) -> tuple[np.ndarray, np.ndarray]:
        slots, priorities = self.tree.draw(batch, rng)
        return slots, priorities / self.tree.total

    def remove(self, slots: np.ndarray) -> None:
        self.tree.update(slots, np.zeros(len(slots)))

    def state(self) -> dict[str, np.ndarray]:
        return {"priorities": self.tree.get(np.arange(self.tree.capacity)),
                "max_priority": np.array([self.max_priority])}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.tree.tree[:] = 0.0
        self.tree.update(np.arange(self.tree.capacity), arrays["priorities"])
        self.max_priority = float(arrays["max_priority"][0])


class FifoSampler:
    """Oldest first, each item once (an IMPALA-style queue expressed as a replay)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.pending: list[np.ndarray] = []

    def insert(self, slots: np.ndarray, priorities: np.ndarray | None = None) -> None:
        self.pending.append(np.asarray(slots))

    def sample(self, batch: int, rng: np.random.Generator, storage) -> tuple[np.ndarray, np.ndarray]:
        queue = np.concatenate(self.pending) if self.pending else np.zeros(0, dtype=np.int64)
        if len(queue) < batch:
            raise ValueError(f"FIFO holds {len(queue)} unread items, fewer than a batch of {batch}")
        self.pending = [queue[batch:]]
        return queue[:batch], np.ones(batch)

    def remove(self, slots: np.ndarray) -> None:
        pass

    def state(self) -> dict[str, np.ndarray]:
        return {"pending": np.concatenate(self.pending) if self.pending else np.zeros(0, dtype=np.int64)}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.pending = [arrays["pending"]]
