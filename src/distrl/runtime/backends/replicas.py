"""Where a run's data-parallel learner replicas run (``num_learners > 1``, ``runtime/learners.py``): ranks 1..N-1 as
processes of this machine (``local``) or as Ray actors on any node (``ray``), with the rendezvous each needs. The
learner group talks to them through ``torch.distributed``; here they are only started, watched and stopped."""

from __future__ import annotations

import os

from distrl.runtime.backends.process import process_context, start_process, stop_processes
from distrl.runtime.learners import ReplicaHost, replica_main


def place_replicas(runtime: str, world: int, folder: str | None, args: tuple, device, precision: str,
                   torch_threads: int, timeout_s: float):
    """Start ranks 1..``world``-1 (``args``: the learner's factory and the replays it uses); returns the replicas and
    where their group meets (a file in the private ``folder`` on ``local``, a store actor on ``ray``)."""
    if runtime == "ray":
        return RayReplicas.start(world, args, device, precision, torch_threads, timeout_s)
    where = ("file", os.path.join(folder, "store"))
    return ProcessReplicas.start(world, where, args, device, precision, torch_threads, timeout_s), where


class ProcessReplicas:
    """Ranks 1..N-1 as processes of this machine (``local``)."""

    def __init__(self, procs: list):
        self.procs = procs

    @classmethod
    def start(cls, world, where, args, device, precision, torch_threads, timeout_s) -> ProcessReplicas:
        ctx, tail = process_context(), (str(device), precision, torch_threads, timeout_s)
        return cls([start_process(ctx, replica_main, (rank, world, where, *args, *tail), f"distrl-learner-{rank}")
                    for rank in range(1, world)])

    def alive(self) -> bool:
        return all(p.is_alive() for p in self.procs)

    def kill(self) -> None:
        for p in self.procs:
            p.kill()

    def stop(self) -> None:
        stop_processes(self.procs, grace_s=10.0)


class RayReplicas:
    """Ranks 1..N-1 as Ray actors, one GPU each when the learner is on one (``ray``, any node of the cluster)."""

    def __init__(self, actors: list, runs: list):
        self.actors, self.runs = actors, runs

    @classmethod
    def start(cls, world, args, device, precision, torch_threads, timeout_s):
        import ray

        store = ray.remote(num_cpus=0)(StoreActor).remote()
        host = ray.remote(num_cpus=0, num_gpus=1 if device.type == "cuda" else 0, max_restarts=0)(ReplicaHost)
        actors = [host.remote() for _ in range(1, world)]
        runs = [a.run.remote(rank, world, ("ray", store), *args, "cuda" if device.type == "cuda" else "cpu", precision,
                             torch_threads, timeout_s) for rank, a in enumerate(actors, start=1)]
        return cls(actors + [store], runs), ("ray", store)

    def alive(self) -> bool:
        import ray

        done, _ = ray.wait(self.runs, num_returns=len(self.runs), timeout=0)
        return not done

    def kill(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a)

    def stop(self) -> None:
        import ray

        try:
            ray.wait(self.runs, num_returns=len(self.runs), timeout=10.0)
        finally:
            self.kill()


class StoreActor:
    """The rendezvous keys of a Ray run's learner group, behind Ray's authentication. Its methods are
    coroutines, so a ``get`` waiting for a key lets the ``set`` that brings it run."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.changed = None

    async def _wait(self, keys, timeout: float) -> bool:
        import asyncio

        if self.changed is None:
            self.changed = asyncio.Condition()
        async with self.changed:
            try:
                await asyncio.wait_for(self.changed.wait_for(lambda: all(k in self.data for k in keys)), timeout)
            except asyncio.TimeoutError:
                return False
        return True

    async def _notify(self) -> None:
        import asyncio

        if self.changed is None:
            self.changed = asyncio.Condition()
        async with self.changed:
            self.changed.notify_all()

    async def set(self, key: str, value: bytes) -> None:
        self.data[key] = value
        await self._notify()

    async def get(self, key: str, timeout: float):
        return self.data[key] if await self._wait([key], timeout) else None

    async def add(self, key: str, amount: int) -> int:
        value = int(self.data.get(key, b"0")) + amount
        self.data[key] = str(value).encode()
        await self._notify()
        return value

    async def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        current = self.data.get(key)
        if (current is None and expected == b"") or current == expected:
            self.data[key] = desired
            await self._notify()
            return desired
        return expected if current is None else current

    async def wait(self, keys: list[str], timeout: float) -> bool:
        return await self._wait(keys, timeout)

    async def check(self, keys: list[str]) -> bool:
        return all(k in self.data for k in keys)

    async def delete_key(self, key: str) -> bool:
        return self.data.pop(key, None) is not None

    async def num_keys(self) -> int:
        return len(self.data)


def _bytes(value) -> bytes:
    return (
        value
        if isinstance(value, bytes)
        else bytes(value)
        if isinstance(value, (bytearray, list))
        else str(value).encode()
    )


try:
    import torch.distributed as _dist

    _StoreBase = _dist.Store
except (ImportError, AttributeError):  # a torch built without distributed
    _StoreBase = object


class RayStore(_StoreBase):
    """A ``torch.distributed`` store whose keys a Ray actor keeps (``StoreActor``)."""

    timeout_s = 300.0

    def __init__(self, actor):
        super().__init__()
        self.actor = actor

    def _call(self, method, *args):
        import ray

        return ray.get(getattr(self.actor, method).remote(*args))

    def set(self, key, value):
        self._call("set", key, _bytes(value))

    def get(self, key):
        value = self._call("get", key, self.timeout_s)
        if value is None:
            raise RuntimeError(f"learner group: no key {key!r} within {self.timeout_s:.0f} s")
        return value

    def add(self, key, amount):
        return self._call("add", key, int(amount))

    def compare_set(self, key, expected, desired):
        return self._call("compare_set", key, _bytes(expected), _bytes(desired))

    def wait(self, keys, timeout=None):
        if not self._call("wait", list(keys), self.timeout_s):
            raise RuntimeError(f"learner group: keys {list(keys)} not set within {self.timeout_s:.0f} s")

    def check(self, keys):
        return self._call("check", list(keys))

    def delete_key(self, key):
        return self._call("delete_key", key)

    def num_keys(self):
        return self._call("num_keys")
