"""Replay services on each transport (Ape-X, arXiv:1803.00933, section 3; Reverb, arXiv:2102.04736).

A :class:`~distrl.core.program.ReplayService` is fed by the roles that emit into it and sampled by the
learner through one handle, the same on every backend: ``sample(batch, beta)`` (``None`` while the
rate limiter says wait), ``update_priorities``, ``size``, ``stats``. The handle counts its own inserts;
the limiter lives with it, on the trainer's side, and decides when a producer's next output may go in
(the backend grants a producer its next step only then), so the learner keeps its samples-per-insert
ratio on every transport.

- :class:`LocalReplay` (``inline``, ``local``): the replay in the trainer's process; outputs arrive there
  (through shared memory on ``local``) and are inserted when the limiter admits them.
- :class:`RayReplay` (``ray``): the replay in a Ray actor on the trainer's node (:class:`ReplayServer`).
  Producers on any node insert their outputs into it directly; their step results carry the count.
  The learner's handle keeps one group of ``prefetch`` batches in flight (drawn while the current
  one trains) and sends priority updates back in groups, without waiting.

A :class:`~distrl.core.program.PartitionedReplayService` (GORILA's global replay, written and sampled
by workers) is a :class:`~distrl.replay.PartitionedReplay` in shared memory on one machine
(:class:`SharedPartitionedReplay`), and the same in a Ray actor on a cluster (:class:`RayPartitionedReplay`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from distrl.core.protocols import ReplayIntake
from distrl.replay import PartitionedReplay, RateLimiter, Unlimited
from distrl.runtime.compute import setup_compute
from distrl.runtime.services.base import ServiceAdapter, Stateful


class _Rates:
    """Insert and sample rates between two metrics rows."""

    def __init__(self):
        self.inserted = self.sampled = 0
        self._last = time.perf_counter()

    def take(self) -> tuple[float, float]:
        now = time.perf_counter()
        dt, self._last = max(now - self._last, 1e-9), now
        rates = (self.inserted / dt, self.sampled / dt)
        self.inserted = self.sampled = 0
        return rates


def _add(replay, items: dict, priorities) -> int:
    """Insert one producer output's items; returns how many (a sequence chunk may carry steps and no item)."""
    n = len(replay.add(items, priorities=priorities))
    if replay.size > replay.soft_capacity:
        replay.trim()  # back to the soft capacity: the oldest items go (Ape-X)
    return n


def _summary(replay) -> tuple[int, float, float, float]:
    return replay.size, replay.priority_total, replay.bytes_per_item, replay.bytes_per_step


class _LimitedReplay(ServiceAdapter, Stateful, ReplayIntake):
    """What both transports share: the limiter, the counters and the metrics."""

    def __init__(self, name: str, spec):
        self.name, self.spec = name, spec
        self.limiter = RateLimiter(spec.samples_per_insert, spec.min_size, spec.error_buffer) \
            if spec.samples_per_insert is not None else Unlimited(spec.min_size)
        self.rates = _Rates()

    def start(self) -> None:
        """Insert the preloaded outputs (demonstrations) unless a checkpoint already brought them back."""
        if self.spec.preload is not None and self.size == 0:
            for output in self.spec.preload():
                self.offer(output)

    def learner_handle(self):
        return self

    def admits(self) -> bool:
        """May the next producer output go in (see :meth:`RateLimiter.caught_up`)?"""
        return self.limiter.caught_up()

    def record_inserts(self, n: int) -> None:
        """Producers inserted ``n`` items into the replay themselves (their step results say how many)."""
        self._inserted(n)

    def _inserted(self, n: int) -> None:
        if n:
            self.limiter.record_insert(n)
            self.rates.inserted += n

    def _allow_sample(self, batch_size: int) -> bool:
        if not self.limiter.try_sample(batch_size):
            return False
        self.rates.sampled += batch_size
        return True

    def counters(self) -> dict:
        return {"limiter": self.limiter.state()}

    def load_counters(self, c: dict) -> None:
        if "limiter" in c:
            self.limiter.load(c["limiter"])

    def require_saved(self, folder) -> bool:
        """Whether ``folder`` holds this replay's files; a checkpoint whose counters say items went in but whose
        files are gone raises (its data would be lost without a word, the run resuming on an empty replay)."""
        if saved(folder, self.name):
            return True
        if self.limiter.inserts > 0:
            raise ValueError(f"{self.name}.json or {self.name}.safetensors is missing, though {self.limiter.inserts:,} "
                             "items went in: restore the files, or resume from another checkpoint")
        return False

    def stats(self, whole_run: bool = False) -> dict[str, float]:
        if whole_run:
            return {}
        insert_rate, sample_rate = self.rates.take()
        size, total, per_item, per_step = self._summary()
        out = {"replay_size": float(size), "insert_rate": insert_rate, "sample_rate": sample_rate,
               "sample_insert_ratio": self.limiter.samples / max(self.limiter.inserts, 1),
               "priority_mean": total / max(size, 1), "replay_bytes_per_item": float(per_item),
               "replay_bytes_per_step": float(per_step)}
        # a second replay (demonstrations) reports under its own name, not over the first one's columns
        return out if self.name == "replay" else {f"{self.name}_{k}": v for k, v in out.items()}


class LocalReplay(_LimitedReplay):
    def __init__(self, name: str, spec):
        super().__init__(name, spec)
        self.replay = spec.make()

    @property
    def size(self) -> int:
        return self.replay.size

    def offer(self, output: dict[str, np.ndarray]) -> None:
        """Insert one producer output (the backend calls this once :meth:`admits` said yes)."""
        items, priorities = self.spec.items(output)
        n = _add(self.replay, items, priorities)
        self._inserted(n)

    def sample(self, batch_size: int, beta: float = 0.4):
        if not self._allow_sample(batch_size):
            return None
        return self.replay.sample(batch_size, beta=beta)

    def update_priorities(self, slots, priorities) -> None:
        self.replay.update_priorities(slots, priorities)

    def _summary(self):
        return _summary(self.replay)

    def save(self, folder) -> None:
        self.replay.save(folder, self.name)

    def load(self, folder) -> None:
        if self.require_saved(folder):
            self.replay.load(folder, self.name)


class ReplayServer:
    """The Ray actor's body: a plain :class:`~distrl.replay.Replay` built by ``make()``."""

    def __init__(self, make):
        setup_compute()  # the allocator thresholds only (no torch here): each sample builds a large batch
        self.replay = make()

    def add(self, items: dict, priorities) -> int:
        return _add(self.replay, items, priorities)

    def sample(self, batch: int, beta: float, count: int = 1):
        return [self.replay.sample(batch, beta=beta) for _ in range(count)], self.summary()

    def update_many(self, updates: list) -> None:
        for slots, priorities in updates:
            self.replay.update_priorities(slots, priorities)

    def summary(self) -> tuple[int, float, float, float]:
        return _summary(self.replay)

    def save(self, folder: str, name: str) -> None:
        self.replay.save(folder, name)

    def load(self, folder: str, name: str) -> None:
        self.replay.load(folder, name)


class ReplayInserter:
    """A producer's handle on a :class:`ReplayServer` (used by the Ray backend's worker host): turns an
    output into items and inserts them, so the data never detours through the trainer."""

    def __init__(self, server, items):
        self.server, self.items = server, items

    def insert(self, output: dict[str, np.ndarray]) -> int:
        import ray

        items, priorities = self.items(output)
        return ray.get(self.server.add.remote(items, priorities))  # in the replay before the trainer hears of it


class RayReplay(_LimitedReplay):
    def __init__(self, ray, name: str, spec, prefetch: int = 4):
        super().__init__(name, spec)
        self.ray, self.prefetch = ray, prefetch
        self.server = start_on_this_node(ray, ReplayServer, spec.make)
        self._ready: list = []
        self._next = None  # (batch size, beta, future of the next group)
        self._updates: list = []
        self._summary_cache = ray.get(self.server.summary.remote())

    @property
    def size(self) -> int:
        return self._summary_cache[0]

    def worker_handle(self, role: str, index: int):
        return ReplayInserter(self.server, self.spec.items)

    def offer(self, output: dict[str, np.ndarray]) -> None:
        """Insert one output made in the trainer's process (an inference server's, SEED)."""
        items, priorities = self.spec.items(output)
        self._inserted(self.ray.get(self.server.add.remote(items, priorities)))

    def sample(self, batch_size: int, beta: float = 0.4):
        if not self.limiter.can_sample(batch_size):
            return None
        if not self._ready:
            self._flush()
            if self._next is None or self._next[:2] != (batch_size, beta):
                self._next = (batch_size, beta, self.server.sample.remote(batch_size, beta, self.prefetch))
            self._ready, self._summary_cache = self.ray.get(self._next[2])
            self._next = (batch_size, beta, self.server.sample.remote(batch_size, beta, self.prefetch))
        self._allow_sample(batch_size)
        return self._ready.pop(0)

    def update_priorities(self, slots, priorities) -> None:
        self._updates.append((slots, priorities))
        if len(self._updates) >= self.prefetch:
            self._flush()

    def _flush(self) -> None:
        if self._updates:
            self.server.update_many.remote(self._updates)
            self._updates = []

    def _summary(self):
        self._summary_cache = self.ray.get(self.server.summary.remote())
        return self._summary_cache

    def save(self, folder) -> None:
        self._flush()
        self.ray.get(self.server.save.remote(str(folder), self.name))

    def load(self, folder) -> None:
        if self.require_saved(folder):
            self.ray.get(self.server.load.remote(str(folder), self.name))
        self._ready, self._next, self._updates = [], None, []
        self._summary()

    def close(self) -> None:
        _kill(self.ray, self.server)


class SharedPartitionedReplay(ServiceAdapter, Stateful):
    """``inline`` and ``local``: the partitions in shared memory, handed to worker processes as file descriptors."""

    def __init__(self, name: str, spec):
        self.name = name
        self.replay = PartitionedReplay(dict(spec.spec), spec.partitions, spec.capacity, spec.window)

    def worker_handle(self, role: str, index: int):
        return self.replay

    def save(self, folder) -> None:
        self.replay.save(folder, self.name)

    def load(self, folder) -> None:
        if saved(folder, self.name):
            self.replay.load(folder, self.name)

    def stats(self, whole_run: bool = False) -> dict:
        return {} if whole_run else {"replay_size": float(self.replay.size)}


class PartitionServer:
    """The Ray actor's body for a partitioned replay."""

    def __init__(self, args: tuple):
        setup_compute()
        self.replay = PartitionedReplay(*args)

    def add(self, partition: int, items: dict) -> int:
        self.replay.add(partition, items)
        return self.replay.size

    def sample(self, batch: int, count: int, seed: int):
        rng = np.random.default_rng(seed)
        return [self.replay.sample(batch, rng) for _ in range(count)], self.replay.size

    def size(self) -> int:
        return self.replay.size

    def save(self, folder: str, name: str) -> None:
        self.replay.save(folder, name)

    def load(self, folder: str, name: str) -> None:
        self.replay.load(folder, name)


class ServedPartitions:
    """A writer's handle on a :class:`PartitionServer` with the :class:`~distrl.replay.PartitionedReplay`
    surface a :class:`~distrl.replay.PartitionWriter` uses. Each process gets its own copy (it is pickled to
    them): adds go out without waiting for the one before (Ray keeps one caller's calls in order, so a
    later sample sees them), and batches come ``prefetch`` per round trip."""

    def __init__(self, server, prefetch: int = 4):
        self.server, self.prefetch = server, prefetch
        self._size, self._pending, self._batches = 0, None, []

    def __getstate__(self):
        return {"server": self.server, "prefetch": self.prefetch}

    def __setstate__(self, state):
        self.__init__(state["server"], state["prefetch"])

    @property
    def size(self) -> int:
        """A writer's count comes back with its adds and samples; a reader that never adds (QT-Opt's Bellman
        updaters) asks the server whenever it holds no prefetched batch."""
        if self._pending is None and not self._batches:
            import ray

            self._size = ray.get(self.server.size.remote())
        return self._size

    def add(self, partition: int, items: dict) -> None:
        import ray

        if self._pending is not None:  # at most one add in flight per writer: back-pressure, and a fresh size
            self._size = ray.get(self._pending)
        self._pending = self.server.add.remote(partition, items)

    def sample(self, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        import ray

        if self._batches and len(next(iter(self._batches[-1].values()))) != batch:
            self._batches = []  # prefetched at another batch size
        if not self._batches:
            self._batches, self._size = ray.get(
                self.server.sample.remote(batch, self.prefetch, int(rng.integers(2**63)))
            )
        return {k: v.copy() for k, v in self._batches.pop().items()}  # the object store's arrays are read-only


class RayPartitionedReplay(ServiceAdapter, Stateful):
    def __init__(self, ray, name: str, spec):
        self.ray, self.name = ray, name
        self.server = start_on_this_node(
            ray, PartitionServer, (dict(spec.spec), spec.partitions, spec.capacity, spec.window)
        )

    def worker_handle(self, role: str, index: int):
        return ServedPartitions(self.server)

    def save(self, folder) -> None:
        self.ray.get(self.server.save.remote(str(folder), self.name))

    def load(self, folder) -> None:
        if saved(folder, self.name):
            self.ray.get(self.server.load.remote(str(folder), self.name))

    def stats(self, whole_run: bool = False) -> dict:
        return {} if whole_run else {"replay_size": float(self.ray.get(self.server.size.remote()))}

    def close(self) -> None:
        _kill(self.ray, self.server)


def saved(folder, name: str) -> bool:
    """Does the checkpoint in ``folder`` hold this replay (a checkpoint of another system may not)?"""
    return (Path(folder) / f"{name}.json").is_file()


def start_on_this_node(ray, body, *args):
    """A Ray actor running ``body(*args)`` pinned to this (the trainer's) node, where checkpoints are written.
    Not restarted: a new one would be empty, so its death ends the run like a learner error (the last
    checkpoint, replay included, stays)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0)(body)
    return remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(*args)


def _kill(ray, actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:
        pass
