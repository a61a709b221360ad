"""What a system declares: a program of roles and the services they share, and nothing about processes.

A *role* is a kind of component with a factory and a count: actors, GORILA's bundles, SEED's env
actors, an evaluator. A *service* is one of a small set the runtime provides, each with the same
handle methods on every backend:

- :class:`Channel`: items (unrolls) from producers to the learner, taken ``batch`` at a time;
- :class:`Weights`: the learner's flat weights, versioned; readers pull the newest;
- :class:`ParamServer`: a sharded parameter server workers pull from and push gradients to (A3C, GORILA);
- :class:`ReplayService`: a replay the learner samples and producers feed, with its rate limiter
  (Ape-X); a program may declare any number of them under different names;
- :class:`PartitionedReplayService`: one replay every worker writes (its own partition) and samples (GORILA);
- :class:`Inference`: a central inference server (SEED RL) that turns env actors' steps into unrolls;
- :class:`ConstantArray`: a read-only array every component reads and no process copies (ES's noise table).

A backend (``inline``, ``local``, ``ray``) places roles and builds one adapter per service for its
transport; a new system adds roles and services, never a branch in a backend.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from distrl.core.types import ArraySpec, UnrollSpec

RUNTIMES = ("inline", "local", "ray")


@dataclass(frozen=True)
class Role:
    """A kind of component: ``make(index, seed, handles)`` builds one (``handles``: service name -> handle
    for each name in ``uses``); it must be picklable (a module-level function or a ``functools.partial``).

    Each call of the component's ``step(out)`` is one unit of work (an unroll, a round of gradients, an
    evaluation). ``emits`` names the channel or replay its output goes to; the runtime preallocates
    ``out`` from ``output`` (in shared memory on ``local``). ``in_flight`` is how many steps a component
    may be granted ahead (shared-memory slots on ``local``, calls in flight on ``ray``).
    ``interval_steps`` makes a periodic role: one step each time the run passes that many env steps
    (an evaluator), instead of stepping as fast as it is granted. ``env_steps_per_update`` paces a role that
    steps envs to the learner: its components get no new step while the run's env steps exceed
    ``free_env_steps + env_steps_per_update * learner updates`` (QT-Opt's actors, which write into a replay with
    no rate limiter of its own: the replay ratio stays the same on a fast or a slow machine).
    An ``elastic`` role's components may be started and stopped while the run goes on (``--set autoscale=on``):
    ``count`` is then the most that may run and ``active`` how many run at the start; the backend's ``scale``
    changes it, a stopped component handing back its steps in flight first, then told to ``finish`` (a component that
    subclasses ``protocols.Finishes``: what it still holds goes out, as a SEED env actor's last outcome completes its
    unroll).
    """

    name: str
    make: Callable[..., Any]
    count: int = 1
    uses: tuple[str, ...] = ()
    emits: str | None = None
    output: UnrollSpec | None = None
    in_flight: int = 2
    interval_steps: int | None = None
    cpus: float = 1.0  # what a Ray actor of this role reserves
    env_steps_per_update: float | None = None
    free_env_steps: int = 0
    scores_weights: bool = False  # its component is a PolicyScorer: the run re-scores its kept best with one
    elastic: bool = False  # an autoscaled run may change how many of its components run (its actors)
    active: int | None = None  # components running at the start (None: all ``count``); the rest wait, parked


@dataclass(frozen=True)
class Channel:
    """Items of ``spec`` from producers to the learner, ``batch`` per learner step, concatenated along
    each array's batch axis. Producers are the roles that emit to it, or an :class:`Inference` service."""

    spec: UnrollSpec
    batch: int = 1


@dataclass(frozen=True)
class Weights:
    """The learner's flat weights and their version; readers pull the newest between steps."""


@dataclass(frozen=True)
class ParamServer:
    """The model's tensors dealt into ``num_shards`` shards, each with its own optimizer statistics and
    version; a gradient computed from parameters more than ``max_staleness`` versions old is dropped
    (GORILA, arXiv:1507.04296 section 4; one shard and no limit is A3C's Hogwild).
    ``make_model()`` gives the initial parameters, ``make_optimizer(params)`` each shard's optimizer.
    Its learning rate is the hyperparameter ``lr``."""

    make_model: Callable[[], Any]
    make_optimizer: Callable[[list], Any]
    num_shards: int = 1
    max_staleness: int | None = None


@dataclass(frozen=True)
class ReplayService:
    """A replay in the learner's reach, fed by the roles that emit to it (Ape-X, arXiv:1803.00933).

    ``make()`` builds the :class:`~distrl.replay.Replay` (picklable: a backend may build it elsewhere);
    ``items(output)`` turns one producer output into ``(items, priorities)``. The rate limiter keeps
    ``samples_per_insert`` samples per inserted item once ``min_size`` items are in (Reverb,
    arXiv:2102.04736): the learner's sample waits for inserts, a producer's next output waits for the
    learner. The replay is saved with every checkpoint under its service name. ``samples_per_insert=None``:
    no ratio (a replay filled once and sampled at will); ``preload()`` gives outputs (in the producers'
    layout) inserted when the service starts empty, e.g. demonstrations (R2D3's second replay).
    """

    make: Callable[[], Any]
    items: Callable[[dict], tuple[dict, Any]]
    samples_per_insert: float | None
    min_size: int
    error_buffer: float
    preload: Callable[[], Any] | None = None


@dataclass(frozen=True)
class PartitionedReplayService:
    """One uniform replay that every worker of a role writes (its own partition, no lock) and samples
    (GORILA's global replay): :class:`~distrl.replay.PartitionedReplay` in shared memory on one machine."""

    spec: Mapping[str, ArraySpec]
    partitions: int
    capacity: int
    window: int


@dataclass(frozen=True)
class Inference:
    """A central inference server (SEED RL, arXiv:1910.06591): env actors only step envs and send
    observations; the server batches requests (up to ``max_batch``, waiting at most ``max_wait_s``
    after the first), runs ``make_policy()`` on its device, and assembles unrolls into ``emits``.
    ``bind`` is where a streaming transport listens (port 0 picks one); ``remote_slots`` are extra
    slots for actors that join by address; ``tls_cert``/``tls_key`` (PEM files) make the stream TLS.
    ``emits`` may be a channel (the unrolls as they are) or a replay service: then ``make_emitter()``, built
    once where the server runs, turns each completed ``(unroll, info)`` into the replay's output (it may keep
    state per slot: SEED with R2D2's learner cuts each env's stream into overlapping sequences). ``whole_games``:
    the env actors' Atari episodes are whole games, a lost life not ending one (R2D2's; told to joining actors)."""

    make_policy: Callable[[], Any]
    obs: ArraySpec
    num_envs: int
    unroll_length: int
    max_batch: int
    max_wait_s: float
    emits: str = "unrolls"
    env_id: str = ""
    bind: str = "127.0.0.1:0"
    remote_slots: int = 0
    tls_cert: str = ""
    tls_key: str = ""
    make_emitter: Callable[[], Any] | None = None
    whole_games: bool = False


@dataclass(frozen=True)
class ConstantArray:
    """A read-only array made once per machine by ``make()`` and read by every component that uses it
    (ES's noise table, Salimans et al. 2017, arXiv:1703.03864 section 2.1): one copy in the process on
    ``inline``, one shared-memory block on ``local``, one object-store copy per node on ``ray``. Handles
    have ``get()``, which returns the array (read-only, never copied into the reading process)."""

    make: Callable[[], Any]


def served_unroll_spec(obs: ArraySpec, outputs: dict[str, ArraySpec], state: ArraySpec | None, num_envs: int,
                     length: int) -> UnrollSpec:
    """The unroll the server assembles: the same names and layout as an IMPALA actor's unroll."""
    T, E = length, num_envs
    spec = {"obs": ArraySpec((T + 1, E) + obs.shape, obs.dtype)}
    spec.update({k: ArraySpec((T, E) + s.shape, s.dtype) for k, s in outputs.items()})
    spec.update({"rewards": ArraySpec((T, E), "float32"), "terminated": ArraySpec((T, E), "bool"),
                 "truncated": ArraySpec((T, E), "bool"), "valid": ArraySpec((T, E), "bool"),
                 "version": ArraySpec((E,), "int64", batch_axis=0)})
    if state is not None:
        spec["initial_state"] = ArraySpec((E,) + state.shape, state.dtype, batch_axis=0)
    return spec


Service = Channel | Weights | ParamServer | ReplayService | PartitionedReplayService | Inference


@dataclass(frozen=True)
class Hyperparameter:
    """A value a run may change while it runs (through the trainer's one mutation point): ``value`` is its
    base, ``schedule`` scales it with the run's progress (``linear``: to 0 at the end of the budget). It
    reaches the learner and the services; with ``components`` also every role's components (e.g. an
    exploration rate; not for values a schedule moves on every update)."""

    value: float
    schedule: str = "constant"
    components: bool = False

    def at(self, progress: float, value: float | None = None) -> float:
        base = self.value if value is None else value
        if self.schedule == "linear":
            return base * max(0.0, 1.0 - progress)
        return base


@dataclass(frozen=True)
class Program:
    """A system as the runtime sees it. ``make_learner(handles)`` (or ``None``: the workers learn, A3C
    and GORILA) runs in the trainer's process and takes its batches from the channel ``consumes``, or
    samples its replays itself when ``consumes`` is ``None``."""

    roles: tuple[Role, ...]
    services: Mapping[str, Service] = field(default_factory=dict)
    make_learner: Callable[[Mapping[str, Any]], Any] | None = None
    learner_uses: tuple[str, ...] = ()
    consumes: str | None = None
    hyperparameters: Mapping[str, Hyperparameter] = field(default_factory=dict)
    runtimes: tuple[str, ...] = RUNTIMES
    # consumed batches one learner version needs (ES: one generation); where a batch made from an older
    # version is wasted work, the trainer lets no more steps run per version than that (see Trainer._release)
    batches_per_version: int | None = None
    # a run whose roles step no env (offline RL: QT-Opt with online=false) ends after this many learner updates
    max_updates: int | None = None
    # learner metrics whose mean over the session goes into summary.json as <name>_mean (QT-Opt's target staleness)
    summary_metrics: tuple[str, ...] = ()
    # the learner can run on a GPU (models/device.py); False where it has no network gradient to compute (ES)
    learner_on_device: bool = True

    @property
    def placeable_learner(self) -> bool:
        """A central learner computing network gradients: what a device and a precision apply to."""
        return self.make_learner is not None and self.learner_on_device

    def role(self, name: str) -> Role:
        return next(r for r in self.roles if r.name == name)

    def producers(self, service: str) -> list[Role]:
        return [r for r in self.roles if r.emits == service]

    def starting(self, active: int) -> Program:
        """This program with ``active`` components of each elastic role running at the start (the rest parked)."""
        roles = tuple(dataclasses.replace(r, active=min(active, r.count)) if r.elastic else r for r in self.roles)
        return dataclasses.replace(self, roles=roles)

    def check(self) -> None:
        """Every name a role or the learner refers to is a declared service of the right kind."""
        for role in self.roles:
            for name in role.uses + ((role.emits,) if role.emits else ()):
                if name not in self.services:
                    raise ValueError(f"role '{role.name}' refers to undeclared service '{name}'")
            if role.emits and not isinstance(self.services[role.emits], (Channel, ReplayService)):
                raise ValueError(f"role '{role.name}' emits into '{role.emits}', which is not a channel or replay")
            if role.emits and role.output is None:
                raise ValueError(f"role '{role.name}' emits but declares no output spec")
        for name in self.learner_uses:
            if name not in self.services:
                raise ValueError(f"the learner refers to undeclared service '{name}'")
        if self.consumes is not None and not isinstance(self.services.get(self.consumes), Channel):
            raise ValueError(f"the learner consumes '{self.consumes}', which is not a declared channel")
        for role in self.roles:
            if role.env_steps_per_update is not None and self.make_learner is None:
                raise ValueError(f"role '{role.name}' is paced to learner updates, but the program has no learner")
        for role in self.roles:
            if role.active is not None and not (role.elastic and 0 < role.active <= role.count):
                raise ValueError(f"role '{role.name}' starts {role.active} of {role.count} components; only an "
                                 "elastic role may start some, at least one")
        if len({r.name for r in self.roles}) != len(self.roles):
            raise ValueError("role names must be unique")
