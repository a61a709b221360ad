"""The ``ray`` runtime: the same actor components as Ray actors, unrolls through the object store.

``--runtime ray`` starts a local Ray instance; ``ray_address`` (or ``RAY_ADDRESS``) joins an existing
cluster instead. Actors are spread over the cluster's nodes and restarted by Ray's fault tolerance
(``max_restarts=-1``); a restarted actor notices it was reconstructed and takes a fresh seed.
Each actor keeps ``slots_per_actor`` unroll requests in flight, so it starts its next unroll
while the learner is still busy with the last one.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import deque

import numpy as np

from distrl.core.types import Topology
from distrl.runtime.batching import allocate, concatenate


def connect_ray(address: str | None, num_actors: int) -> bool:
    """Join the cluster at ``address``, or start a local Ray instance; True when we started it."""
    import ray

    if ray.is_initialized():
        return False
    kwargs = dict(include_dashboard=False, logging_level="ERROR", configure_logging=True)
    if address:
        ray.init(address=address, **kwargs)
        return False
    ray.init(num_cpus=max(os.cpu_count() or 1, num_actors), **kwargs)
    return True


def was_reconstructed() -> bool:
    """Inside a Ray actor: is this a restart after the actor's process died?"""
    import ray

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecation notice inside Ray's own property
        return ray.get_runtime_context().was_current_actor_reconstructed


class _ActorHost:
    """Wraps any distrl actor; the only Ray-aware code an actor ever runs in."""

    def __init__(self, make_actor, index: int, seed: int, spec, torch_threads: int, shared=None, replay=None):
        import ray
        import torch

        from distrl.runtime.process import set_process_name

        set_process_name(f"distrl-actor-{index}")
        torch.set_num_threads(torch_threads)
        ctx = ray.get_runtime_context()
        if was_reconstructed():
            seed += 7919 * (1 + int.from_bytes(os.urandom(2), "little"))
        self.node_id = ctx.get_node_id()
        self.actor = make_actor(index, seed, shared)
        self.spec = spec
        self.version = -1
        self.replay = replay  # (ReplayServer handle, to_replay_items): insert there, send the learner a count

    def unroll(self, weights: np.ndarray | None, version: int):
        if weights is not None and version != self.version:
            self.actor.set_weights(weights, version)
            self.version = version
        out = allocate(self.spec)
        info = self.actor.unroll(out)
        info["node_id"] = self.node_id
        if self.replay is not None:
            import ray

            server, to_items = self.replay
            items, priorities = to_items(out)
            if len(priorities):
                ray.get(server.add.remote(items, priorities))  # in replay before the learner hears of it
            return {"remote_inserts": np.array([len(priorities)])}, info
        return out, info

    def pid(self) -> int:
        return os.getpid()


class RayBackend:
    name = "ray"

    def __init__(self, topology: Topology, seed: int, torch_threads: int = 1, address: str | None = None):
        self.topology = topology
        self.seed = seed
        self.torch_threads = torch_threads
        self.address = address or os.environ.get("RAY_ADDRESS")
        self.started_ray = False
        self.actors: list = []
        self.inflight: dict[int, deque] = {}  # per actor, oldest request first
        self.ready: list = []
        self.node_ids: set[str] = set()
        self._restarts = 0
        self._failed: set[int] = set()
        self._weights_ref = None
        self._weights_version = None
        self._weights_fn = None
        self._version = 0
        self.shard_servers: list = []  # parameter-server shards (gradient-sharing systems)
        self.replay_server = None  # a replay served by a Ray actor (Ape-X, GORILA's global replay)

    def start(self, learner) -> None:
        import ray

        self.started_ray = connect_ray(self.address, self.topology.num_actors)
        self.ray = ray
        host = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(_ActorHost)
        self._weights_fn, self._version = learner.get_weights, learner.version
        shared = None
        if self.topology.shared_model:
            # gradient-sharing systems: parameter-server shard actors hold the model; workers push
            # gradients and pull weights through RemoteShards, starting from the learner's weights
            from distrl.runtime.sharded_params import remote_shards

            shared, self.shard_servers = remote_shards(ray, learner)
            self.remote_params = shared
            if learner.shards.replay is not None:  # a global replay (GORILA): served by a Ray actor
                shared.replay = self._serve_partitions(learner)
        replay = None
        if self.topology.to_replay_items is not None and hasattr(learner, "make_replay"):
            replay = (self._serve_replay(learner), self.topology.to_replay_items)
        for i in range(self.topology.num_actors):
            actor = host.options(scheduling_strategy="SPREAD").remote(
                self.topology.make_actor, i, self.seed + 1000 * i, self.topology.unroll_spec, self.torch_threads, shared,
                replay)
            self.actors.append(actor)
        for i in range(self.topology.num_actors):
            for _ in range(self.topology.slots_per_actor):
                self._submit(i)

    def _serve_replay(self, learner):
        """Move the learner's replay into a Ray actor (with what a resumed run restored into it)."""
        from distrl.runtime.replay_service import RemoteReplay, ReplayServer, copy_contents, start_on_this_node

        self.replay_server = start_on_this_node(self.ray, ReplayServer, learner.make_replay)
        remote = RemoteReplay(self.ray, self.replay_server)
        if learner.replay.size:
            copy_contents(learner.replay, remote)
        learner.replay = remote
        return self.replay_server

    def _serve_partitions(self, learner):
        """Move a global replay from shared memory into a Ray actor that every worker reaches."""
        from distrl.runtime.replay_service import PartitionServer, ServedPartitions, copy_contents, start_on_this_node

        local = learner.shards.replay
        self.replay_server = start_on_this_node(self.ray, PartitionServer, local.args)
        served = ServedPartitions(self.replay_server, local.args)
        if local.size:
            copy_contents(local, served)
        learner.shards.replay = served  # checkpoints save it through the server
        return served

    def _submit(self, i: int) -> None:
        queue = self.inflight.setdefault(i, deque())
        if self.topology.shared_model:  # workers pull from the parameter server themselves
            queue.append(self.actors[i].unroll.remote(None, 0))
            return
        if self._weights_version != self._version:  # put weights once per version, only when asked for
            self._weights_ref = self.ray.put(self._weights_fn())
            self._weights_version = self._version
        queue.append(self.actors[i].unroll.remote(self._weights_ref, self._weights_version))

    def publish(self, weights_fn, version: int) -> None:
        self._weights_fn, self._version = weights_fn, version

    def next_batch(self):
        from ray.exceptions import RayActorError

        want = self.topology.batch_unrolls
        while len(self.ready) < want:
            # Wait only on each actor's oldest request: an actor runs its requests in order, but a
            # later result can reach this node first, and per-actor order is part of the contract.
            heads = {q[0]: i for i, q in self.inflight.items() if q}
            done, _ = self.ray.wait(list(heads), num_returns=1, timeout=0.05)
            if not done:
                return None
            i = heads[done[0]]
            self.inflight[i].popleft()
            try:
                arrays, info = self.ray.get(done[0])
            except RayActorError as e:
                if i not in self._failed:  # its other in-flight requests fail too: count the death once
                    self._failed.add(i)
                    self._restarts += 1
                    print(f"distrl: ray actor {i} died ({type(e).__name__}); Ray restarts it", file=sys.stderr, flush=True)
                self._submit(i)
                continue
            self._failed.discard(i)
            self.node_ids.add(info.pop("node_id", "?"))
            self.ready.append((arrays, info))
            self._submit(i)
        items, self.ready = self.ready[:want], self.ready[want:]
        return concatenate(self.topology.unroll_spec, [a for a, _ in items]), [info for _, info in items], None

    def release(self, handle) -> None:
        pass

    def sync_learner(self, learner) -> None:
        """Copy the parameter servers' weights into the coordinator's learner (each log interval, checkpoints,
        the end), and send them the learner's learning-rate scale."""
        if not self.shard_servers:
            return
        from distrl.runtime.sharded_params import pull_into

        applied, dropped = pull_into(self.remote_params, learner.model)
        learner.set_progress(applied, dropped)
        scale = float(learner.shards.lr_scale)  # the learner's schedule reaches the shards once per log interval
        for server in self.shard_servers:
            server.set_lr_scale.remote(scale)

    def return_state(self, learner) -> None:
        """Bring a served replay back into the learner before the servers stop (for the final checkpoint)."""
        if self.replay_server is None:
            return
        from distrl.runtime.replay_service import ServedPartitions, copy_contents
        from distrl.runtime.shared_replay import SharedReplay

        if isinstance(getattr(getattr(learner, "shards", None), "replay", None), ServedPartitions):
            local = SharedReplay(*learner.shards.replay.args)
            copy_contents(learner.shards.replay, local)
            learner.shards.replay = local
        else:
            local = learner.make_replay()
            copy_contents(learner.replay, local)
            learner.replay = local

    def poll(self) -> int:
        n, self._restarts = self._restarts, 0
        return n

    def actor_stats(self) -> dict:
        return {"nodes": len(self.node_ids)}

    def pids(self) -> list[int]:
        return self.ray.get([a.pid.remote() for a in self.actors], timeout=30)

    def close(self) -> None:
        if not self.actors and not self.started_ray:
            return
        servers = self.shard_servers + [self.replay_server]
        for a in self.actors + [srv for srv in servers if srv is not None]:
            try:
                self.ray.kill(a, no_restart=True)
            except Exception:
                pass
        self.shard_servers, self.replay_server = [], None
        self.actors, self.inflight = [], {}
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False
