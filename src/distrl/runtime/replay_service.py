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
"""

from __future__ import annotations

from typing import Any


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


def start_replay_server(ray, make_replay):
    """A ReplayServer pinned to this (the learner's) node. Not restarted: a new one would be empty, so its
    death ends the run like a learner error (the last checkpoint, replay included, stays)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0)(ReplayServer)
    return remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(make_replay)
