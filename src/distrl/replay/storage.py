"""Preallocated ring storage for replay items: one numpy array per field, written in batches.

Arrays are allocated *and touched* up front (``prefault``): first-touch page faults made the first
fill of a large pixel buffer ~20x slower than steady state on this machine. Writes of a batch that
wraps around the end are split into two slices, never a Python loop per item.
"""

from __future__ import annotations

import numpy as np

from distrl.core.types import ArraySpec
from distrl.replay.memory import check_fits


class RingStorage:
    kept: np.ndarray | None = None  # every item written is kept (``SequenceStorage`` may leave some out: its mask)

    def __init__(self, spec: dict[str, ArraySpec], capacity: int, prefault: bool = True):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.spec = spec
        self.capacity = capacity
        check_fits(capacity * sum(s.nbytes for s in spec.values()), f"a replay ring of {capacity:,} items")
        self.arrays = {name: np.empty((capacity,) + s.shape, dtype=s.dtype) for name, s in spec.items()}
        if prefault:
            for a in self.arrays.values():
                a.fill(0)
        self.next = 0  # slot the next item goes to
        self.size = 0
        self.inserted = 0  # items ever written (to tell eviction order)

    def write(self, items: dict[str, np.ndarray]) -> np.ndarray:
        """Append a batch (the oldest items are overwritten once full); returns the slots used."""
        n = len(next(iter(items.values())))
        if n > self.capacity:
            raise ValueError(f"a batch of {n} items does not fit a capacity of {self.capacity}")
        slots = (self.next + np.arange(n)) % self.capacity
        first = min(n, self.capacity - self.next)
        for name, array in self.arrays.items():
            values = items[name]
            array[self.next:self.next + first] = values[:first]
            if first < n:
                array[:n - first] = values[first:]
        self.next = (self.next + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        self.inserted += n
        return slots

    def stale_items(self) -> int:
        """Items that must go before the next sample (none here; see FrameStackStorage)."""
        return 0

    def read(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        # np.take copies rows faster than fancy indexing for multi-dimensional fields (4x at 1M x 4 floats)
        return {name: np.take(array, slots, axis=0) for name, array in self.arrays.items()}

    def oldest_slots(self, count: int) -> np.ndarray:
        """The ``count`` oldest occupied slots, oldest first."""
        count = min(count, self.size)
        start = (self.next - self.size) % self.capacity
        return (start + np.arange(count)) % self.capacity

    @property
    def bytes_per_item(self) -> int:
        return sum(s.nbytes for s in self.spec.values())

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())

    def state(self) -> tuple[dict[str, np.ndarray], dict]:
        """The slots ever written (the ring fills from slot 0: a prefix until it wraps) and the counters: a checkpoint
        of a replay holding a few items is that small, not the size of its capacity."""
        written = min(self.inserted, self.capacity)
        arrays = {name: array[:written] for name, array in self.arrays.items()}
        return arrays, {"next": self.next, "size": self.size, "inserted": self.inserted}

    def load(self, arrays: dict[str, np.ndarray], counters: dict) -> None:
        """``arrays`` as :meth:`state` gave them: the written prefix (older checkpoints: every slot). The counters
        are checked against the capacity first: a ring claiming more items than it holds would sample slots never
        written."""
        next_, size, inserted = (counters.get(k) for k in ("next", "size", "inserted"))
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (next_, size, inserted)) or \
                not (0 <= size <= min(inserted, self.capacity) and next_ == inserted % self.capacity):
            raise ValueError(f"its counters (next {next_!r}, size {size!r}, inserted {inserted!r}) do not fit a ring "
                             f"of {self.capacity:,} slots")
        for name, array in self.arrays.items():
            load_prefix(array, arrays[name], inserted, name)
        self.next, self.size, self.inserted = next_, size, inserted


def load_prefix(into: np.ndarray, saved: np.ndarray, written: int, name: str) -> None:
    """Copy a saved ring's written prefix into the leading slots of ``into`` (the rest were never written).
    ``written``: how many entries the saved ring had ever taken; its prefix is that many, or all of a ring of this
    size (checkpoints before prefixes, or a full ring); anything else is a ring of another capacity."""
    if len(saved) not in (min(written, len(into)), len(into)) or saved.shape[1:] != into.shape[1:]:
        raise ValueError(f"saved {name} {saved.shape} ({written:,} written) does not fit the replay's {into.shape}")
    into[:len(saved)] = saved


class _FromRing:
    """An attribute of ``self.items`` (the item ring) under the same name: read, and written where ``writable``."""

    def __init__(self, writable: bool = False):
        self.writable = writable

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj.items, self.name)

    def __set__(self, obj, value) -> None:
        if not self.writable:
            raise AttributeError(f"{self.name} is the item ring's, read-only here")
        setattr(obj.items, self.name, value)


class OverItemRing:
    """For storages that keep their items' own fields in a :class:`RingStorage` (``self.items``) and more
    beside it (frames, steps): the ring's surface, which the samplers and ``Replay`` use, passed through."""

    items: RingStorage
    kept: np.ndarray | None = None  # as ``RingStorage``'s
    capacity = _FromRing()
    size = _FromRing(writable=True)
    next = _FromRing()
    inserted = _FromRing()

    def oldest_slots(self, count: int) -> np.ndarray:
        return self.items.oldest_slots(count)
