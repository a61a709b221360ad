"""SEED on the ``ray`` runtime: env actors are Ray actors spread over the cluster, each streaming to
the learner's inference server over gRPC (:mod:`distrl.runtime.inference_grpc`).

Ray places and restarts the actors (``max_restarts=-1``); the data path is the gRPC stream, not the
object store, because a round trip per env step through the object store costs milliseconds. The
server listens where ``bind`` says (127.0.0.1 by default, which only reaches actors on the learner's
own node: on a multi-node cluster pass ``--set bind=0.0.0.0:0``, and actors dial the learner node's
address). Any machine can also add actors by hand with ``distrl join HOST:PORT``.
"""

from __future__ import annotations

import os
import sys

from distrl.core.types import Topology
from distrl.runtime.inference_client import run_env_actor
from distrl.runtime.inference_grpc import GrpcLink, GrpcTransport
from distrl.runtime.inference_loop import ServedBackend
from distrl.runtime.ray_backend import connect_ray, was_reconstructed


class _EnvActorHost:
    def __init__(self, make_actor, index: int, seed: int):
        from distrl.runtime.process import set_process_name

        set_process_name(f"distrl-actor-{index}")
        if was_reconstructed():  # restarted after a crash: do not replay the same episodes
            seed += 7919 * (1 + int.from_bytes(os.urandom(2), "little"))
        self.make_actor, self.index, self.seed = make_actor, index, seed

    def run(self, address: str) -> int:
        actor = self.make_actor(self.index, self.seed, None)
        link = GrpcLink(address)
        try:
            run_env_actor(actor, link)
        finally:
            link.close()
            actor.close()
        return self.index

    def pid(self) -> int:
        return os.getpid()


class RayInferenceBackend(ServedBackend):
    name = "ray"

    def __init__(self, topology: Topology, seed: int, torch_threads: int = 1, address: str | None = None):
        super().__init__(topology, seed)
        self.address = address or os.environ.get("RAY_ADDRESS")
        self.started_ray = False
        self.actors: list = []
        self.runs: dict = {}
        self._restarts = 0
        self._closing = False

    def _actor_config(self, slot: int) -> dict:
        """The handshake for an actor taking ``slot`` (Ray's actors bring their own; ``distrl join`` uses it)."""
        return {"env_id": self.spec.env_id, "num_envs": self.spec.num_envs,
                "seed": self.seed + 1000 * slot + int.from_bytes(os.urandom(2), "little")}

    def start(self, learner) -> None:
        import ray

        self.ray = ray
        n = self.topology.num_actors
        self.started_ray = connect_ray(self.address, n)
        self._make_loop(learner, lambda req, act, slots: GrpcTransport(req, act, slots, self.spec.bind, self._actor_config),
                        extra_slots=self.spec.remote_slots)
        self.loop.start()
        host, port = self.transport.address.rsplit(":", 1)
        if host in ("0.0.0.0", "[::]", ""):
            host = ray.util.get_node_ip_address()
        self.server_address = f"{host}:{port}"
        remote = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(_EnvActorHost)
        self.actors = [remote.options(scheduling_strategy="SPREAD").remote(self.topology.make_actor, i, self.seed + 1000 * i)
                       for i in range(n)]
        self.runs = {a.run.remote(self.server_address): i for i, a in enumerate(self.actors)}

    def poll(self) -> int:
        if not self.runs:
            return 0
        done, _ = self.ray.wait(list(self.runs), num_returns=len(self.runs), timeout=0)
        for ref in done:
            i = self.runs.pop(ref)
            try:
                self.ray.get(ref)
            except Exception as e:  # the actor's process died (Ray restarts it) or its env raised
                self._restarts += 1
                print(f"distrl: actor {i} failed ({type(e).__name__}); restarting it", file=sys.stderr, flush=True)
            if not self._closing:
                self.runs[self.actors[i].run.remote(self.server_address)] = i
        n, self._restarts = self._restarts, 0
        return n

    def pids(self) -> list[int]:
        return self.ray.get([a.pid.remote() for a in self.actors], timeout=10) if self.actors else []

    def close(self) -> None:
        if self.loop is None:
            return
        self._closing = True
        self._stop_loop()
        self.transport.close()  # streams end: every actor's run() returns
        for a in self.actors:
            try:
                self.ray.kill(a, no_restart=True)
            except Exception:
                pass
        self.actors, self.runs = [], {}
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False
        self.loop = None
