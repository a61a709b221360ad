"""Several learners per run (``num_learners=N``): data-parallel replicas of the learner in lockstep.

    trainer + learner rank 0 (this process)  -- each update: its shard to every replica (scatter) -->
    learner ranks 1..N-1 (one process each)      every rank: loss on its shard, backward,
                                                 all-reduce (mean) of the gradients and the loss,
                                                 clip, finite check, optimizer step

Rank 0 is the trainer's own learner: it takes N times the program's batch (N x ``batch_unrolls`` from the
consumed channel, or N x ``batch_size`` from each replay it samples), keeps one shard and sends the others.
The ranks start from rank 0's weights, optimizer state and counters (after a resumed checkpoint has loaded)
and apply the same averaged gradient, so they stay equal without sending weights; only rank 0 publishes,
checkpoints and reports (its metrics are its own shard's; the loss of its finite check is the mean). One
update is thus the update of one learner on N times the batch: the gradient of a mean loss over N equal
shards is the mean of the shards' gradients (exactly where the shards weigh the same; losses averaged over
valid steps only, as the actor-critics' are, weigh a shard with fewer valid steps a little more).

Gradients travel with ``torch.distributed``: gloo on CPUs, NCCL between GPUs (on ``local`` rank r uses
``cuda:r``; on ``ray`` each replica is an actor holding one GPU); the shards and the replay's priorities
with gloo's object collectives. A replay learner's priorities come back to rank 0, which writes them for
the whole batch. On ``local`` the replicas are processes, rendezvous is a ``FileStore`` in a private
temporary folder and gloo is bound to the loopback interface: no port is open beyond this machine. On
``ray`` the replicas are Ray actors (on any node) and rendezvous goes through a store kept by a Ray actor,
so joining the group needs the cluster's token; gloo's and NCCL's own connections between nodes are not
authenticated (torch.distributed has no authentication): keep a cluster's nodes on a private network. Rank
0 runs in the trainer's process, outside Ray's accounting: with ``device=cuda`` on a one-node Ray cluster a
replica may be given rank 0's GPU (NCCL refuses two ranks on one GPU); start Ray with the trainer's GPU
left out (``CUDA_VISIBLE_DEVICES`` for ``ray start``).
A replica that dies or hangs makes rank 0's next collective fail after ``step_timeout_s``: the run stops
with its checkpoint (learners are not restarted, unlike actors).
"""

from __future__ import annotations

import datetime
import os
import shutil
import tempfile
from collections.abc import Mapping

import numpy as np
import torch

from distrl.replay import SampledBatch
from distrl.runtime.compute import setup_compute


def for_learners(program, n: int):
    """``program`` for ``n`` learners: its consumed channel's batch ``n`` times as large (one share each), and
    each replay it samples with ``n`` times the rate limiter's error buffer. Rank 0 asks a replay for ``n``
    batches at once; with the buffer of one batch the limiter, which lets producers in only while the learner
    is at most one buffer behind, would never allow a sample that large."""
    import dataclasses

    from distrl.core.program import ReplayService

    services = dict(program.services)
    if program.consumes:
        channel = services[program.consumes]
        services[program.consumes] = dataclasses.replace(channel, batch=channel.batch * n)
    for name in program.learner_uses:
        replay = services[name]
        if isinstance(replay, ReplayService) and replay.samples_per_insert is not None:
            services[name] = dataclasses.replace(replay, error_buffer=replay.error_buffer * n)
    return dataclasses.replace(program, services=services)


def make_learner(program, handles: dict, num_learners: int, device: torch.device, precision: str):
    """The program's learner (None where its workers learn) with the backend's ``handles``, placed on ``device``
    before a checkpoint loads into it; with several learners, the replays it samples are wrapped to be shared with
    the replicas (returned too, for :meth:`LearnerGroup.start`)."""
    handles = dict(handles)
    shared = [ShardingReplay(handles[name]) for name in program.learner_uses] if num_learners > 1 else []
    handles.update(zip(program.learner_uses, shared))
    learner = program.make_learner(handles) if program.make_learner else None
    if learner is not None and (device.type != "cpu" or precision != "fp32"):
        learner.place(device, precision)
    return learner, shared


def split_batch(batch: Mapping[str, np.ndarray], spec: Mapping, n: int) -> list[dict[str, np.ndarray]]:
    """``n`` equal shards of a channel batch along each array's batch axis (its envs)."""
    parts = {k: np.split(np.asarray(v), n, axis=spec[k].batch_axis) for k, v in batch.items()}
    return [{k: parts[k][i] for k in batch} for i in range(n)]


def split_sampled(batch: SampledBatch, n: int) -> list[SampledBatch]:
    """``n`` equal shards of a replay sample (importance weights stay normalised over the whole sample)."""
    items = {k: np.split(v, n) for k, v in batch.items.items()}
    slots, probabilities, weights = (np.split(a, n) for a in (batch.slots, batch.probabilities, batch.weights))
    return [SampledBatch({k: items[k][i] for k in items}, slots[i], probabilities[i], weights[i]) for i in range(n)]


class AllReduce:
    """What data-parallel learners combine with (``OnDevice.combine_over``): after ``loss.backward()``, the gradients
    of ``params`` and the loss averaged over the ranks (one flat all-reduce), so that every rank clips, checks and
    steps the same values; batch statistics summed."""

    def __init__(self, world: int):
        self.world = world

    def gradients(self, loss: torch.Tensor, params) -> torch.Tensor:
        import torch.distributed as dist

        # a parameter the loss does not reach has no gradient on any rank (same code, same shapes): it stays
        # without one, so the optimizer skips it as one learner's would
        params = [p for p in params if p.grad is not None]
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [loss.detach().float().reshape(1)])
        dist.all_reduce(flat)
        flat /= self.world
        offset = 0
        for p in params:
            n = p.numel()
            p.grad = flat[offset:offset + n].view_as(p).to(p.dtype)
            offset += n
        return flat[-1]

    def sums(self, sums: torch.Tensor) -> torch.Tensor:
        """Batch statistics summed over the ranks (``OnDevice.reduce_sums``)."""
        import torch.distributed as dist

        sums = sums.clone()
        dist.all_reduce(sums)
        return sums


class _Objects:
    """Rank 0's messages to the replicas over gloo's object collectives."""

    def __init__(self, world: int, group):
        self.world, self.group = world, group

    def scatter(self, messages: list | None):
        import torch.distributed as dist

        out = [None]
        dist.scatter_object_list(out, messages, src=0, group=self.group)
        return out[0]

    def gather(self, value):
        import torch.distributed as dist

        rank = dist.get_rank()
        into = [None] * self.world if rank == 0 else None
        dist.gather_object(value, into, dst=0, group=self.group)
        return into

    def broadcast(self, value=None):
        import torch.distributed as dist

        box = [value]
        dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]


class ShardingReplay:
    """Rank 0's replay handle: samples N times the batch, keeps the first shard, sends the others; writes the
    priorities of the whole sample once every rank has given its shard's. The learner is built with it;
    ``objects`` is set once the group is up."""

    def __init__(self, replay):
        self.replay, self.objects = replay, None

    @property
    def size(self) -> int:
        return self.replay.size

    def stats(self) -> dict:
        return self.replay.stats()

    def sample(self, batch_size: int, beta: float = 0.4):
        sampled = self.replay.sample(batch_size * self.objects.world, beta=beta)
        shards = [None] * self.objects.world if sampled is None else split_sampled(sampled, self.objects.world)
        self.objects.scatter([("sample", s) for s in shards])
        return shards[0]

    def update_priorities(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        parts = self.objects.gather((slots, priorities))
        self.replay.update_priorities(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


class ReplicaReplay:
    """A replica's replay handle: its shard of rank 0's sample; its priorities go back to rank 0."""

    size = 0

    def __init__(self, objects: _Objects | None = None):
        self.objects = objects  # set once the group is up

    def stats(self) -> dict:
        return {}

    def sample(self, batch_size: int, beta: float = 0.4):
        kind, shard = self.objects.scatter(None)
        if kind != "sample":
            raise RuntimeError(f"learner replica expected a sample, got {kind!r}")
        return shard

    def update_priorities(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        self.objects.gather((slots, priorities))


def _on_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: _on_cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_on_cpu(v) for v in x)
    return x


def _state(learner) -> dict:
    modules, optimizers = learner.checkpoint_parts()
    return {"modules": {k: _on_cpu(m.state_dict()) for k, m in modules.items()},
            "optimizers": {k: _on_cpu(o.state_dict()) for k, o in optimizers.items()},
            "counters": learner.counters()}


def _load_state(learner, state: dict) -> None:
    modules, optimizers = learner.checkpoint_parts()
    for k, m in modules.items():
        m.load_state_dict(state["modules"][k])
    for k, o in optimizers.items():
        o.load_state_dict(state["optimizers"][k])
    learner.load_counters(state["counters"])


def rank_device(device: torch.device, rank: int) -> torch.device:
    """Rank r on ``cuda:r`` (one GPU each: NCCL needs it); on the CPU all share it."""
    if device.type == "cuda":
        return torch.device("cuda", (device.index or 0) + rank)
    return device


def _store(where, world: int, timeout_s: float):
    """("file", path): a FileStore (one machine); ("ray", actor): the store a Ray actor keeps."""
    import torch.distributed as dist

    kind, arg = where
    if kind == "file":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # gloo's own connections stay on this machine
        return dist.FileStore(arg, world)
    from distrl.runtime.backends.replicas import RayStore  # (backends place; they import this module)

    store = RayStore(arg)
    store.timeout_s = timeout_s
    return store


def _init(rank: int, world: int, where, device: torch.device, timeout_s: float, replicas=None):
    """Join the group. Each replica says it is up through the store first; rank 0 waits for that while
    watching ``replicas``, so one that dies while starting is an error at once, not after the timeout."""
    import torch.distributed as dist

    store = _store(where, world, timeout_s)
    backend = "nccl" if device.type == "cuda" else "gloo"
    timeout = datetime.timedelta(seconds=timeout_s)
    if device.type == "cuda":
        torch.cuda.set_device(device.index or 0)
    if rank > 0:
        store.set(f"up/{rank}", b"1")
    elif replicas is not None:
        _wait_up(store, world, replicas, timeout_s)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=timeout)
    objects = dist.new_group(backend="gloo", timeout=timeout) if backend != "gloo" else dist.group.WORLD
    return _Objects(world, objects)


def _wait_up(store, world: int, replicas, timeout_s: float) -> None:
    import time

    keys = [f"up/{r}" for r in range(1, world)]
    deadline = time.monotonic() + timeout_s
    while not store.check(keys):
        if not replicas.alive():
            raise RuntimeError("a learner replica exited while starting (see its error above)")
        if time.monotonic() > deadline:
            raise RuntimeError(f"learner replicas did not start within {timeout_s:.0f} s")
        time.sleep(0.05)  # polls the store and the replicas' liveness; bounded by the deadline


def replica_main(rank: int, world: int, where, make_learner, uses: tuple[str, ...], device: str,
                 precision: str, torch_threads: int, timeout_s: float) -> None:
    """One learner replica (a process on ``local``): build the learner, take rank 0's state, then step on each
    shard it is sent."""
    from distrl.runtime.backends.process import (
        die_with_parent,
        ignore_interrupts,
        set_process_name,
    )

    die_with_parent()
    ignore_interrupts()
    set_process_name(f"distrl-learner-{rank}")
    replica_loop(rank, world, where, make_learner, uses, rank_device(torch.device(device), rank), precision,
                 torch_threads, timeout_s)


def replica_loop(rank: int, world: int, where, make_learner, uses: tuple[str, ...], placed: torch.device,
                 precision: str, torch_threads: int, timeout_s: float) -> None:
    import torch.distributed as dist

    setup_compute(torch_threads)
    replays = {name: ReplicaReplay() for name in uses}
    learner = make_learner(replays)  # built and placed before joining: a failure here is seen by rank 0 at once
    if placed.type != "cpu" or precision != "fp32":
        learner.place(placed, precision)
    objects = _init(rank, world, where, placed, timeout_s)
    for replay in replays.values():
        replay.objects = objects
    try:
        _load_state(learner, objects.broadcast())
        learner.combine_over(AllReduce(world))
        while True:
            message = objects.scatter(None)
            if message[0] == "stop":
                break
            _, hyper, shard = message
            if hyper:
                learner.set_hyperparameters(hyper)
            learner.step(shard)
    finally:
        dist.destroy_process_group()


class LearnerGroup:
    """The trainer's learner when ``num_learners > 1``: rank 0's learner, with the replicas stepping beside it.
    Everything but ``step`` and ``set_hyperparameters`` is rank 0's (weights, checkpoints, counters)."""

    def __init__(self, learner, world: int, objects: _Objects, replicas, folder: str | None, spec: Mapping | None):
        self.learner, self.world, self.objects, self.replicas, self.folder, self.spec = (
            learner, world, objects, replicas, folder, spec)
        self._pending: dict[str, float] = {}
        self._closed = False
        self._stepping = False  # between the shards going out and the update's end: the ranks are mid-collective

    @classmethod
    def start(cls, learner, program, replays: list[ShardingReplay], world: int, device: torch.device,
              precision: str, torch_threads: int, timeout_s: float, runtime: str = "local") -> LearnerGroup:
        """Start ranks 1..N-1 for ``learner`` (rank 0, built with ``replays`` as its replay handles): processes
        on ``local``, Ray actors on ``ray``; join them, and hand them rank 0's state."""
        import torch.distributed as dist

        from distrl.runtime.backends.replicas import place_replicas  # (backends place; they import this module)

        args = (program.make_learner, tuple(program.learner_uses))
        folder, replicas = None, None
        try:
            if runtime != "ray":
                folder = tempfile.mkdtemp(prefix="distrl-learners-")  # 0700: the rendezvous file is this user's alone
            replicas, where = place_replicas(runtime, world, folder, args, device, precision, torch_threads,
                                             timeout_s)
            objects = _init(0, world, where, device, timeout_s, replicas)
            for replay in replays:
                replay.objects = objects
            objects.broadcast(_state(learner))
            learner.combine_over(AllReduce(world))
        except BaseException:
            if replicas is not None:
                replicas.kill()
            if dist.is_initialized():
                dist.destroy_process_group()
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        spec = program.services[program.consumes].spec if program.consumes else None
        return cls(learner, world, objects, replicas, folder, spec)

    # --- what the trainer calls ---------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.learner.version

    def step(self, batch):
        shards = split_batch(batch, self.spec, self.world) if batch is not None else [None] * self.world
        self._stepping = True
        self.objects.scatter([("step", self._pending, s) for s in shards])
        self._pending = {}
        out = self.learner.step(shards[0])
        self._stepping = False
        return out

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        self.learner.set_hyperparameters(values)
        self._pending.update(values)

    def get_weights(self) -> np.ndarray:
        return self.learner.get_weights()

    def device_weights(self):
        return self.learner.device_weights()

    def checkpoint_parts(self):
        return self.learner.checkpoint_parts()

    def counters(self) -> dict:
        return self.learner.counters()

    def load_counters(self, counters: dict) -> None:
        self.learner.load_counters(counters)

    def close(self) -> None:
        """Tell the replicas to stop, then make sure they have. A step cut short (a stop signal, an error) leaves
        them inside a collective that the message would not match: then they are ended without one."""
        if self._closed:
            return
        self._closed = True
        import torch.distributed as dist

        try:
            if self._stepping:
                self.replicas.kill()
            elif self.replicas.alive():
                self.objects.scatter([("stop",)] * self.world)
        except Exception:
            pass
        finally:
            self.replicas.stop()
            if dist.is_initialized():
                dist.destroy_process_group()
            if self.folder:
                shutil.rmtree(self.folder, ignore_errors=True)



class ReplicaHost:
    """A Ray actor's body running one learner replica (its GPU, if any, is its ``cuda:0``)."""

    def run(self, rank, world, where, make_learner, uses, device, precision, torch_threads, timeout_s) -> None:
        replica_loop(rank, world, where, make_learner, uses, torch.device(device), precision, torch_threads, timeout_s)
