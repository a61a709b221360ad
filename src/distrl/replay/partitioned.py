"""A uniform replay that many processes write and sample at once, in shared memory (GORILA's global replay).

Each writer owns one partition (a ring of ``capacity`` items) and is its only writer, so no lock is
shared between processes (a process killed holding one would wedge the rest). A writer fills slots
first and publishes the new ``next``/``size`` after, so readers never see a slot that is not written
yet. Once a ring is full, the ``window`` slots after ``next`` are excluded from sampling (that is where
the writer's next chunk goes), and each partition carries a sequence number made odd while it is
being written (a seqlock): items read from a partition whose sequence moved during the read are
drawn again, so no reader ever returns a half-overwritten item, and no writer ever waits.

The arrays are torch tensors in shared memory, which processes started by the ``local`` runtime
receive as file descriptors when the replay is pickled to them (as the parameter shards are). The
runtime serves it as a replay service (``runtime/services/replay.py``): in shared memory on one
machine, in a Ray actor on a cluster, with the same ``add``/``sample``/``size`` surface.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file, save_file

from distrl.core.types import ArraySpec
from distrl.replay.buffer import SampledBatch
from distrl.replay.memory import check_fits


class PartitionedReplay:
    def __init__(self, spec: dict[str, ArraySpec], partitions: int, capacity: int, window: int):
        if capacity <= window:
            raise ValueError(f"each partition must hold more than one chunk: capacity {capacity} <= window {window}")
        self.spec, self.partitions, self.capacity, self.window = spec, partitions, capacity, window
        self.args = (spec, partitions, capacity, window)  # an empty twin elsewhere: PartitionedReplay(*args)
        check_fits(partitions * capacity * sum(s.nbytes for s in spec.values()),
                   f"a replay of {partitions} partitions x {capacity:,} items")
        self._tensors = {k: torch.from_numpy(s.empty((partitions, capacity))).share_memory_() for k, s in spec.items()}
        self._counts = torch.zeros((partitions, 3), dtype=torch.int64).share_memory_()  # [next, size, sequence]
        self._views()

    def _views(self) -> None:
        self.arrays = {k: t.numpy() for k, t in self._tensors.items()}
        self.counts = self._counts.numpy()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("arrays", "counts")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._views()

    @property
    def size(self) -> int:
        return int(self.counts[:, 1].sum())

    def add(self, partition: int, items: dict[str, np.ndarray]) -> None:
        """Append to ``partition`` (only its owner calls this); at most ``window`` items at a time."""
        n = len(next(iter(items.values())))
        if n > self.window:
            raise ValueError(f"{n} items at once, more than the window of {self.window}")
        nxt, size, seq = (int(x) for x in self.counts[partition])
        slots = (nxt + np.arange(n)) % self.capacity
        self.counts[partition, 2] = seq + 1  # odd: a write is under way
        for k, a in self.arrays.items():
            a[partition, slots] = items[k]
        # publish after the data: readers use these counters to decide what they may read
        self.counts[partition, 1] = min(size + n, self.capacity)
        self.counts[partition, 0] = (nxt + n) % self.capacity
        self.counts[partition, 2] = seq + 2

    def sample(self, batch: int, rng: np.random.Generator, max_tries: int = 1000) -> dict[str, np.ndarray]:
        """``batch`` items uniformly over every partition's readable items."""
        out = {k: np.empty((batch,) + s.shape, dtype=s.dtype) for k, s in self.spec.items()}
        need = np.arange(batch)
        for _ in range(max_tries):
            seq = self.counts[:, 2].copy()
            part, slots = self._draw(len(need), rng)
            values = {k: a[part, slots] for k, a in self.arrays.items()}
            steady = (self.counts[:, 2] == seq) & (seq % 2 == 0)  # no write touched these partitions meanwhile
            ok = steady[part]
            for k in out:
                out[k][need[ok]] = values[k][ok]
            need = need[~ok]
            if need.size == 0:
                return out
        raise RuntimeError(f"writers kept every partition busy for {max_tries} tries")

    def _draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        counts = self.counts[:, :2].copy()
        full = counts[:, 1] >= self.capacity
        usable = np.where(full, self.capacity - self.window, counts[:, 1])
        total = int(usable.sum())
        if total == 0:
            raise ValueError("cannot sample from an empty replay")
        ends = np.cumsum(usable)
        flat = rng.integers(0, total, n)
        part = np.searchsorted(ends, flat, side="right")
        local = flat - (ends - usable)[part]
        start = np.where(full, counts[:, 0] + self.window, 0)[part]  # skip the slots being overwritten next
        return part, (start + local) % self.capacity

    def save(self, folder: str | Path, name: str = "replay") -> None:
        """Write the contents and counters while writers go on (see :meth:`_snapshot`)."""
        arrays, counts = {k: np.empty_like(a) for k, a in self.arrays.items()}, np.empty_like(self.counts)
        for p in range(self.partitions):
            counts[p] = self._snapshot(p, arrays)
        folder = Path(folder)
        save_file(arrays, str(folder / f"{name}.safetensors"))
        meta = {"partitions": self.partitions, "capacity": self.capacity, "counts": counts[:, :2].tolist()}
        (folder / f"{name}.json").write_text(json.dumps(meta))

    def _snapshot(self, p: int, out: dict[str, np.ndarray]) -> np.ndarray:
        """Copy partition ``p`` into ``out`` consistently with the counters returned. The whole partition is
        copied once; then only the slots a writer may have touched since the last look (from the old ``next``
        to one window past the new one) are copied again, until a look finds no write begun meanwhile."""
        before = self.counts[p].copy()
        for k, a in self.arrays.items():
            out[k][p] = a[p]
        while True:
            now = self.counts[p].copy()
            if now[2] == before[2] and now[2] % 2 == 0:
                return before
            writes = (now[2] - before[2]) // 2 + 1
            if writes * self.window >= self.capacity:
                slots = np.arange(self.capacity)
            else:
                slots = (before[0] + np.arange((now[0] - before[0]) % self.capacity + self.window)) % self.capacity
            for k, a in self.arrays.items():
                out[k][p, slots] = a[p, slots]
            before = now

    def load(self, folder: str | Path, name: str = "replay") -> None:
        """Restore what :meth:`save` wrote (before any writer starts)."""
        folder = Path(folder)
        meta = json.loads((folder / f"{name}.json").read_text())
        if (meta["partitions"], meta["capacity"]) != (self.partitions, self.capacity):
            raise ValueError(f"saved replay has {meta['partitions']} partitions of {meta['capacity']}; "
                             f"this one {self.partitions} of {self.capacity}")
        counts = np.asarray(meta["counts"])
        if counts.shape != (self.partitions, 2) or not np.issubdtype(counts.dtype, np.integer) or \
                (counts < 0).any() or (counts[:, 0] >= self.capacity).any() or (counts[:, 1] > self.capacity).any():
            raise ValueError(f"saved replay counters {meta['counts']!r} do not fit {self.partitions} partitions of "
                             f"{self.capacity} slots ([next, size] each, next < capacity, size <= capacity)")
        for k, a in load_file(str(folder / f"{name}.safetensors")).items():
            self.arrays[k][:] = a
        self.counts[:, :2] = counts.astype(np.int64)


class PartitionWriter:
    """One writer's handle on a :class:`PartitionedReplay` (or its Ray twin), with the ``Replay`` surface a learner
    uses:
    ``add`` into its own partition, ``size`` and ``sample`` over all of them."""

    def __init__(self, replay: PartitionedReplay, partition: int, seed: int):
        self.replay, self.partition = replay, partition
        self.rng = np.random.default_rng(seed)

    @property
    def size(self) -> int:
        return self.replay.size

    def add(self, items: dict[str, np.ndarray]) -> None:
        self.replay.add(self.partition, items)

    def sample(self, batch: int) -> SampledBatch:
        items = self.replay.sample(batch, self.rng)
        size = max(self.size, 1)
        return SampledBatch(
            items, np.zeros(batch, dtype=np.int64), np.full(batch, 1.0 / size), np.ones(batch, np.float32)
        )
