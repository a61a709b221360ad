"""Replay as a service on ``ray``: one Ray actor holds the replay, actors insert into it directly and
the learner samples from it and sends back priorities (Ape-X, arXiv:1803.00933, section 3).

On ``inline`` and ``local`` the replay lives in the learner's process (the issue allows it; no hop
at all). On ``ray`` actors may run on other machines, so the data should not detour through the
learner: each actor host hands its chunk to the topology's ``to_items`` and sends the transitions
straight to :class:`ReplayServer`; only their count goes to the learner (its rate limiter counts
inserts). The learner's ``replay`` becomes a :class:`RemoteReplay` with the same methods, which
keeps one sample request in flight (the next batch is drawn while the current one trains, as the
paper's learner prefetches), and priority updates are sent without waiting. The server runs on the
learner's node, so checkpoints write it to the run directory there.

GORILA's global replay (a :class:`~distrl.runtime.shared_replay.SharedReplay`, shared memory on one
machine) is served the same way on ``ray``: :class:`PartitionServer` holds it and each bundle's
:class:`ServedPartitions` handle adds to its own partition and samples batches a group at a time.
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np

from distrl.runtime.shared_replay import SharedReplay


class ReplayServer:
    """The Ray actor's body: a plain :class:`~distrl.replay.Replay` built by ``make_replay()``."""

    def __init__(self, make_replay):
        self.replay = make_replay()

    def add(self, items: dict, priorities) -> int:
        self.replay.add(items, priorities)
        return len(priorities)

    def sample(self, batch: int, beta: float, count: int = 1):
        return [self.replay.sample(batch, beta=beta) for _ in range(count)], self._stats()

    def update_many(self, updates: list) -> None:
        for slots, priorities in updates:
            self.replay.update_priorities(slots, priorities)

    def update_priorities(self, slots, priorities) -> None:
        self.replay.update_priorities(slots, priorities)

    def trim(self) -> int:
        return self.replay.trim()

    def stats(self) -> dict[str, Any]:
        return self._stats()

    def _stats(self) -> dict[str, Any]:
        r = self.replay
        return {"size": r.size, "priority_total": r.priority_total, "bytes_per_item": r.bytes_per_item}

    def save(self, folder: str) -> None:
        self.replay.save(folder)

    def load(self, folder: str) -> None:
        self.replay.load(folder)


class RemoteReplay:
    """The learner's handle on a :class:`ReplayServer`: the subset of ``Replay`` a replay learner uses.

    Round trips are the cost here, so batches come ``prefetch`` at a time (the next group is requested
    when the current one is handed out, and is drawn while it trains), and priority updates go back
    in groups of ``prefetch`` without waiting; Ray runs one caller's calls in order."""

    def __init__(self, ray, server, prefetch: int = 4):
        self.ray, self.server, self.prefetch = ray, server, prefetch
        self._ready: list = []
        self._next = None  # (batch size, beta, future of the next group)
        self._updates: list = []
        self._stats = ray.get(server.stats.remote())

    @property
    def size(self) -> int:
        return self._stats["size"]

    @property
    def priority_total(self) -> float:
        return self._stats["priority_total"]

    @property
    def bytes_per_item(self) -> float:
        return self._stats["bytes_per_item"]

    def refresh(self) -> None:
        self._stats = self.ray.get(self.server.stats.remote())

    def sample(self, batch: int, beta: float = 0.4):
        if not self._ready:
            self._flush()
            if self._next is None or self._next[:2] != (batch, beta):
                self._next = (batch, beta, self.server.sample.remote(batch, beta, self.prefetch))
            self._ready, self._stats = self.ray.get(self._next[2])
            self._next = (batch, beta, self.server.sample.remote(batch, beta, self.prefetch))
        return self._ready.pop(0)

    def update_priorities(self, slots, priorities) -> None:
        self._updates.append((slots, priorities))
        if len(self._updates) >= self.prefetch:
            self._flush()

    def _flush(self) -> None:
        if self._updates:
            self.server.update_many.remote(self._updates)
            self._updates = []

    def trim(self) -> int:
        self._flush()
        return self.ray.get(self.server.trim.remote())

    def save(self, folder) -> None:
        self._flush()
        self.ray.get(self.server.save.remote(str(folder)))

    def load(self, folder) -> None:
        self.ray.get(self.server.load.remote(str(folder)))
        self._ready, self._next, self._updates = [], None, []
        self.refresh()


class PartitionServer:
    """The Ray actor's body for a partitioned replay: a :class:`SharedReplay` in its own process."""

    def __init__(self, args: tuple):
        self.replay = SharedReplay(*args)

    def add(self, partition: int, items: dict) -> int:
        self.replay.add(partition, items)
        return self.replay.size

    def sample(self, batch: int, count: int, seed: int):
        rng = np.random.default_rng(seed)
        return [self.replay.sample(batch, rng) for _ in range(count)], self.replay.size

    def save(self, folder: str) -> None:
        self.replay.save(folder)

    def load(self, folder: str) -> None:
        self.replay.load(folder)


class ServedPartitions:
    """A writer's handle on a :class:`PartitionServer` with the :class:`SharedReplay` surface a
    :class:`~distrl.runtime.shared_replay.PartitionWriter` uses. Each process gets its own copy (it is
    pickled to them): adds go out without waiting for the one before (Ray keeps one caller's calls in
    order, so a later sample sees them), and batches come ``prefetch`` per round trip."""

    def __init__(self, server, args: tuple, prefetch: int = 4):
        self.server, self.args, self.prefetch = server, args, prefetch
        self._size, self._pending, self._batches = 0, None, []

    def __getstate__(self):
        return {"server": self.server, "args": self.args, "prefetch": self.prefetch}

    def __setstate__(self, state):
        self.__init__(state["server"], state["args"], state["prefetch"])

    @property
    def size(self) -> int:
        return self._size

    def add(self, partition: int, items: dict) -> None:
        import ray

        if self._pending is not None:  # at most one add in flight per writer: back-pressure, and a fresh size
            self._size = ray.get(self._pending)
        self._pending = self.server.add.remote(partition, items)

    def sample(self, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        import ray

        if not self._batches:
            self._batches, self._size = ray.get(self.server.sample.remote(batch, self.prefetch, int(rng.integers(2**63))))
        return {k: v.copy() for k, v in self._batches.pop().items()}  # the object store's arrays are read-only

    def save(self, folder) -> None:
        import ray

        ray.get(self.server.save.remote(str(folder)))

    def load(self, folder) -> None:
        import ray

        ray.get(self.server.load.remote(str(folder)))


def copy_contents(source, target) -> None:
    """Move a replay's contents between two processes on one node: ``source.save``, then ``target.load``."""
    with tempfile.TemporaryDirectory() as d:
        source.save(d)
        target.load(d)


def start_on_this_node(ray, body, *args):
    """A Ray actor running ``body(*args)`` pinned to this (the learner's) node, where checkpoints are written.
    Not restarted: a new one would be empty, so its death ends the run like a learner error (the last
    checkpoint, replay included, stays)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0)(body)
    return remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(*args)
