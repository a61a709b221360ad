"""The small shared vocabulary: array specs, and what actors and learners promise the runtime.

Components are plain classes. The runtime calls these methods and never looks inside, so the
same actor and learner run in one process, in many processes over shared memory, or on Ray.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np


@dataclass(frozen=True)
class ArraySpec:
    shape: tuple[int, ...]
    dtype: str  # numpy dtype name, e.g. "float32"
    batch_axis: int = 1  # axis along which unrolls are concatenated into a batch (after time)

    def empty(self, leading: tuple[int, ...] = ()) -> np.ndarray:
        return np.zeros(leading + self.shape, dtype=self.dtype)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


UnrollSpec = dict[str, ArraySpec]


class Actor(Protocol):
    """Steps environments and writes one unroll of experience into preallocated arrays."""

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        """Fill ``out`` (arrays shaped by the topology's spec) and return small info: ``env_steps``,
        ``version`` (weights that produced the data), ``episode_returns``, ``episode_lengths``,
        ``env_s``, ``infer_s``."""

    def set_weights(self, flat: np.ndarray, version: int) -> None: ...

    def close(self) -> None: ...


class Learner(Protocol):
    """Turns a batch of unrolls (arrays concatenated along the batch axis) into an update."""

    version: int

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]: ...

    def get_weights(self) -> np.ndarray: ...

    def checkpoint_parts(self) -> tuple[dict, dict]:
        """(modules, optimizers) to save and load by name."""


@dataclass(frozen=True)
class InferenceSpec:
    """A central inference server (SEED RL): actors only step envs, the server runs ``make_policy()``.

    ``obs`` is one env's observation spec; each actor steps ``num_envs`` envs and sends them as one
    request. A forward pass takes up to ``max_batch`` requests, waiting at most ``max_wait_s`` after
    the first. ``bind`` is where a streaming transport listens (``host:port``; port 0 picks one).
    """

    make_policy: Callable[[], Any]
    obs: ArraySpec
    num_envs: int
    unroll_length: int
    max_batch: int
    max_wait_s: float
    env_id: str = ""
    bind: str = "127.0.0.1:0"
    remote_slots: int = 0  # extra slots for actors joining by address (streaming transports only)


@dataclass(frozen=True)
class Topology:
    """What a system declares; a runtime places it.

    ``make_actor(index, seed, shared_model)`` and ``make_learner()`` must be picklable
    (module-level functions or ``functools.partial`` of them) so processes and Ray can build them.
    ``shared_model`` is the learner's own model for synchronous systems (A2C) on ``inline``, what
    ``learner.shards`` (a SharedShards parameter server in shared memory) on local and a RemoteShards
    handle on ray for ``shared_model`` topologies (A3C, GORILA),
    and ``None`` everywhere else.
    """

    make_actor: Callable[..., Actor]
    make_learner: Callable[[], Learner]
    unroll_spec: UnrollSpec
    num_actors: int
    batch_unrolls: int = 1  # unrolls per learner step
    synchronous: bool = False  # actor and learner take turns on one model (A2C)
    shared_model: bool = False  # actors update the learner's model in shared memory themselves (A3C, Hogwild)
    runtimes: tuple[str, ...] = ("inline", "local", "ray")
    slots_per_actor: int = 2  # shared-memory unroll slots per actor (local runtime)
    inference: InferenceSpec | None = None  # actors only step envs; a central server acts (SEED RL)
    # the learner keeps a replay (``learner.make_replay``); where the runtime serves it elsewhere (a Ray
    # actor on ``ray``), actors insert there directly: this turns an actor's output into (items, priorities)
    to_replay_items: Callable[[dict], tuple[dict, Any]] | None = None
