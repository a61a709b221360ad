"""Shared test fakes: components whose outputs prove where they came from, and programs built of them,
one per service kind, so the same contract checks run on every backend."""

from __future__ import annotations

import os
from functools import partial

import numpy as np
import torch

from distrl.agents.common.shared_optim import _SharedStateOptimizer
from distrl.core.program import (
    Channel,
    Hyperparameter,
    ParamServer,
    PartitionedReplayService,
    Program,
    ReplayService,
    Role,
    Weights,
)
from distrl.core.protocols import Stateless
from distrl.core.types import ArraySpec
from distrl.replay import PartitionWriter, Replay

T, E = 8, 4
SPEC = {
    "payload": ArraySpec((T, E, 84), "float32"),
    "actor": ArraySpec((E,), "int64", batch_axis=0),
    "seq": ArraySpec((E,), "int64", batch_axis=0),
}


def payload(actor: int, seq: int) -> np.ndarray:
    return actor * 100_000 + seq + np.arange(84, dtype=np.float32) / 100


class CountingActor(Stateless):
    """Writes payloads naming itself and its step count; pulls the newest weights before each step."""

    def __init__(self, index: int, seed: int, weights=None):
        self.index, self.seed, self.seq, self.version, self.w0 = index, seed, 0, -1, None
        self.weights = weights
        self.hyper: dict = {}

    def set_hyperparameters(self, values):
        self.hyper.update(values)

    def step(self, out):
        newer = self.weights.pull(self.version) if self.weights is not None else None
        if newer is not None:
            self.version, self.w0 = newer[1], float(newer[0][0])
        out["payload"][:] = payload(self.index, self.seq)
        out["actor"][:] = self.index
        out["seq"][:] = self.seq
        self.seq += 1
        return {"env_steps": T * E, "version": self.version, "episode_returns": np.zeros(0),
                "episode_lengths": np.zeros(0, dtype=np.int64), "pid": os.getpid(), "seed": self.seed,
                "actor_index": self.index, "weight0": self.w0, "hyper_epsilon": self.hyper.get("epsilon", -1.0)}


def make_counting_actor(index, seed, handles):
    return CountingActor(index, seed, handles.get("weights"))


class _NoState:
    def checkpoint_parts(self):
        return {}, {}

    def counters(self):
        return {"version": self.version}

    def load_counters(self, c):
        self.version = c.get("version", 0)


class CheckingLearner(_NoState):
    """Records what arrives and checks every unroll's payload is intact."""

    def __init__(self, handles=None):
        self.version = 0

    def step(self, batch):
        for e in range(batch["payload"].shape[1]):
            actor, seq = int(batch["actor"][e]), int(batch["seq"][e])
            np.testing.assert_array_equal(
                batch["payload"][:, e], np.broadcast_to(payload(actor, seq), batch["payload"][:, e].shape)
            )
        self.version += 1
        return {}

    def get_weights(self):
        return np.full(16, float(self.version), dtype=np.float32)

    def set_hyperparameters(self, values):
        pass


def counting_program(num_actors=2, batch=2, hyper_to_components=False) -> Program:
    actors = Role("actor", make_counting_actor, count=num_actors, uses=("weights",), emits="unrolls", output=SPEC)
    hyper = {"epsilon": Hyperparameter(0.5, components=True)} if hyper_to_components else {}
    return Program(roles=(actors,), services={"unrolls": Channel(SPEC, batch=batch), "weights": Weights()},
                   make_learner=CheckingLearner, consumes="unrolls", hyperparameters=hyper)


# --- a replay service: producers emit chunks into it, the learner samples -------------------------------
ITEM = {"x": ArraySpec((2,), "float32"), "actor": ArraySpec((), "int64")}
CHUNK = {"x": ArraySpec((16, 2), "float32", batch_axis=0), "actor": ArraySpec((16,), "int64", batch_axis=0),
         "priority": ArraySpec((16,), "float32", batch_axis=0)}


class ChunkActor(Stateless):
    def __init__(self, index, seed):
        self.index, self.n = index, 0

    def step(self, out):
        out["x"][:, 0] = self.index
        out["x"][:, 1] = self.n + np.arange(16)
        out["actor"][:] = self.index
        out["priority"][:] = 1.0
        self.n += 16
        return {"env_steps": 16, "version": 0, "transitions": 16, "pid": os.getpid()}


def chunk_items(chunk):
    return {"x": chunk["x"], "actor": chunk["actor"]}, chunk["priority"]


class SamplingLearner(_NoState):
    def __init__(self, handles):
        self.replay, self.version, self.seen = handles["replay"], 0, set()

    def step(self, batch):
        b = self.replay.sample(8)
        if b is None:
            return None
        assert np.all(b.items["x"][:, 0] == b.items["actor"])  # items intact: x names the actor that made it
        self.seen.update(int(a) for a in b.items["actor"])
        self.replay.update_priorities(b.slots, np.full(8, 2.0, np.float32))
        self.version += 1
        return {"sampled": 8.0}

    def get_weights(self):
        return np.zeros(2, np.float32)

    def set_hyperparameters(self, values):
        pass


def make_replay():
    return Replay.prioritized(ITEM, 10_000)


def replay_program(num_actors=2, samples_per_insert=1.0) -> Program:
    actors = Role("actor", _chunk_actor, count=num_actors, emits="replay", output=CHUNK)
    replay = ReplayService(make=make_replay, items=chunk_items, samples_per_insert=samples_per_insert, min_size=32,
                           error_buffer=8)
    return Program(roles=(actors,), services={"replay": replay}, make_learner=SamplingLearner, learner_uses=("replay",))


def _chunk_actor(index, seed, handles):
    return ChunkActor(index, seed)


# --- a parameter server and a partitioned replay, used by workers that learn themselves -----------------
def tiny_model():
    torch.manual_seed(0)
    return torch.nn.Linear(2, 1)


class SharedSGD(_SharedStateOptimizer):
    """Plain SGD (a step moves a parameter by exactly lr * gradient), shareable like the real ones."""

    def __init__(self, params, lr: float):
        super().__init__(params, dict(lr=lr), ())

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


def sgd(params, lr=0.1):
    return SharedSGD(params, lr=lr)


class PushingWorker(Stateless):
    """Sends gradients of ones (every applied one moves each parameter by -lr): a push on even steps; on odd
    steps two at once with ``send_many``, whose reply it takes at its next step, as a GORILA bundle does.
    Writes and samples a shared replay."""

    def __init__(self, index, seed, handles):
        self.index, self.params, self.model = index, handles["params"], torch.nn.Linear(2, 1)
        self.replay = PartitionWriter(handles["replay"], index, seed) if "replay" in handles else None
        self.steps, self.in_flight = 0, None

    def step(self, out=None):
        if self.in_flight is not None:
            applied, dropped, staleness, versions = self.in_flight()
            assert applied + dropped == 4, (applied, dropped)  # 2 gradients x 2 shards
            self.in_flight = None
        versions = self.params.pull(self.model)
        ones = [torch.ones_like(p) for p in self.model.parameters()]
        if self.steps % 2:
            self.in_flight = self.params.send_many(self.model, [ones, ones], versions)
            staleness = 0.0
        else:
            for p, g in zip(self.model.parameters(), ones):
                p.grad = g
            applied, dropped, staleness = self.params.push(self.model, versions)
        self.steps += 1
        info = {"env_steps": 10, "version": int(np.sum(versions)), "staleness": staleness, "pid": os.getpid(),
                "actor_index": self.index}
        if self.replay is not None:
            self.replay.add({"x": np.full((4, 2), self.index, np.float32)})
            info["replay_size"] = self.replay.size
        return info


def param_program(num_workers=2, with_replay=False, lr=0.1) -> Program:
    services = {"params": ParamServer(make_model=tiny_model, make_optimizer=partial(sgd, lr=lr), num_shards=2)}
    uses = ("params",)
    if with_replay:
        services["replay"] = PartitionedReplayService({"x": ArraySpec((2,), "float32")}, num_workers, 64, 8)
        uses = ("params", "replay")
    workers = Role("worker", PushingWorker, count=num_workers, uses=uses)
    return Program(roles=(workers,), services=services, hyperparameters={"lr": Hyperparameter(lr)})


# --- a periodic role -----------------------------------------------------------------------------------
class Probe(Stateless):
    def __init__(self, index, seed, handles):
        self.weights, self.version = handles["weights"], -1

    def step(self, out=None):
        newer = self.weights.pull(self.version)
        if newer is not None:
            self.version = newer[1]
        return {"metrics": {"probe_version": float(self.version)}, "pid": os.getpid()}


def program_with_probe(interval_steps=T * E * 4) -> Program:
    base = counting_program(num_actors=1, batch=1)
    probe = Role("probe", Probe, count=1, uses=("weights",), interval_steps=interval_steps, in_flight=1, cpus=0)
    return Program(roles=base.roles + (probe,), services=base.services, make_learner=base.make_learner,
                   consumes=base.consumes)


class FailingActor(CountingActor):
    """Its first life (the seed of restart 0) raises on its third step, as an env bug would."""

    def step(self, out):
        if self.seed == 1000 * self.index and self.index == 1 and self.seq == 2:
            raise RuntimeError("an env raised")
        return super().step(out)


def make_failing_actor(index, seed, handles):
    return FailingActor(index, seed, handles.get("weights"))


def failing_program() -> Program:
    actors = Role("actor", make_failing_actor, count=2, uses=("weights",), emits="unrolls", output=SPEC)
    return Program(roles=(actors,), services={"unrolls": Channel(SPEC, batch=1), "weights": Weights()},
                   make_learner=CheckingLearner, consumes="unrolls")


# --- a constant array: every worker reads the same read-only table ------------------------------------------
TABLE_SIZE = 100_003
READ = {"sum": ArraySpec((1,), "float64", batch_axis=0), "probe": ArraySpec((1,), "float32", batch_axis=0)}


def make_table():
    return np.arange(TABLE_SIZE, dtype=np.float32) * 0.5


class TableReader(Stateless):
    def __init__(self, index, seed, handles):
        self.index, self.table = index, handles["table"]

    def step(self, out):
        a = self.table.get()
        out["sum"][0] = a.sum(dtype=np.float64)
        out["probe"][0] = a[12_345 + self.index]
        return {"env_steps": 1, "version": 0, "actor_index": self.index, "read_only": float(not a.flags.writeable),
                "pid": os.getpid()}


class TableLearner(_NoState):
    def __init__(self, handles):
        self.version, self.table = 0, handles["table"]

    def step(self, batch):
        expected = self.table.get().sum(dtype=np.float64)
        assert batch["sum"][0] == expected and batch["probe"][0] in (12_345 * 0.5, 12_346 * 0.5)
        self.version += 1
        return {}

    def get_weights(self):
        return np.zeros(4, dtype=np.float32)

    def set_hyperparameters(self, values):
        pass


def constant_program() -> Program:
    from distrl.core.program import ConstantArray

    readers = Role("reader", TableReader, count=2, uses=("table",), emits="reads", output=READ)
    return Program(roles=(readers,), services={"reads": Channel(READ, batch=1), "table": ConstantArray(make_table)},
                   make_learner=TableLearner, consumes="reads", learner_uses=("table",))


class Tally:
    """A service shared by several programs: it records who asked (``PROGRAM:ACTOR:PID``) and answers with the count."""

    request_bytes = 256

    def __init__(self):
        import threading

        self.lock, self.seen, self.closed = threading.Lock(), [], False

    def answer(self, request: bytes) -> bytes:
        program, _, rest = request.decode().partition(":")
        if not program or not rest:
            raise ValueError("a request is PROGRAM:ACTOR:PID")
        with self.lock:
            self.seen.append((program, *map(int, rest.split(":"))))
            return str(len(self.seen)).encode()

    def close(self) -> None:
        self.closed = True


class SharingActor(CountingActor):
    """A counting actor that asks the shared service named ``tally`` each step, found by name as an env finds a
    league's coordinator."""

    def __init__(self, program: str, index: int, seed: int, weights=None):
        super().__init__(index, seed, weights)
        self.program = program

    def step(self, out):
        from distrl.core.shared import handle

        info = super().step(out)
        info["tally"] = int(handle("tally").request(f"{self.program}:{self.index}:{os.getpid()}".encode()))
        return info


def make_sharing_actor(program, index, seed, handles):
    return SharingActor(program, index, seed, handles.get("weights"))


def sharing_program(name: str, num_actors: int = 1) -> Program:
    actors = Role("actor", partial(make_sharing_actor, name), count=num_actors, uses=("weights",), emits="unrolls",
                  output=SPEC)
    return Program(roles=(actors,), services={"unrolls": Channel(SPEC, batch=1), "weights": Weights()},
                   make_learner=CheckingLearner, consumes="unrolls")
