"""What the three backends share about placing a program: which components exist, their seeds, and
who may step next. No transport here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from distrl.core.program import (
    Channel,
    ConstantArray,
    Inference,
    ParamServer,
    PartitionedReplayService,
    Program,
    ReplayService,
    Role,
    Weights,
)
from distrl.runtime.backends.process import Restarts


def component_seed(run_seed: int, role_position: int, index: int, restarts: int = 0) -> int:
    """The one seed formula: component ``index`` of the program's ``role_position``-th role, after
    ``restarts`` restarts (a restarted component must not replay its predecessor's episodes). The first
    role's components get ``run_seed + 1000 * index``, as actors always have."""
    return run_seed + 1_000_003 * role_position + 1000 * index + 7919 * restarts


@dataclass
class Worker:
    """One component of a role, as every backend tracks it; each backend's record adds what its transport needs
    (``LocalWorker``, ``RayWorker``, ``InlineWorker``: declared fields, none attached on the fly)."""

    role: Role
    position: int  # the role's place in the program
    index: int
    restarts: int = 0
    handle: Any = None  # the backend's own: an object, a process, a Ray actor
    restart_log: Restarts = field(default_factory=Restarts)
    parked: bool = False  # an elastic role's component not running now (beyond its role's active count)
    retiring: bool = False  # asked to stop: no new steps; parked once its steps in flight are back
    starting: bool = False  # started by ``scale`` and no step of it back yet (a process or Ray actor still starting)
    latest: bool = False  # started by the latest ``scale`` (whose window waits for it to step)

    @property
    def name(self) -> str:
        return f"{self.role.name}-{self.index}"


def workers_of(program: Program, record: type[Worker] = Worker) -> list[Worker]:
    """Every component the program may run, as the backend's ``record``; those of an elastic role beyond its
    ``active`` count start parked."""
    return [record(role, position, i, parked=role.active is not None and i >= role.active)
            for position, role in enumerate(program.roles) for i in range(role.count)]


def emits_to_channel(program: Program, role: Role) -> bool:
    return role.emits is not None and isinstance(program.services[role.emits], Channel)


def emits_to_replay(program: Program, role: Role) -> bool:
    return role.emits is not None and isinstance(program.services[role.emits], ReplayService)


def feeds_channel(program: Program, role: Role) -> bool:
    """Does ``role``'s work end up in the consumed channel, directly or through a service it uses (env actors
    whose steps an inference server turns into unrolls)?"""
    if program.consumes is None:
        return False
    if role.emits == program.consumes:
        return True
    return any(isinstance(program.services[name], Inference) and program.services[name].emits == program.consumes
               for name in role.uses)


def slot_offsets(program: Program, service: str) -> dict[str, int]:
    """Where each role's components start among the service's slots (an inference server keeps one per
    component that uses it; two roles using it must not share slots)."""
    offsets, n = {}, 0
    for role in program.roles:
        if service in role.uses:
            offsets[role.name] = n
            n += role.count
    return offsets


def timed_uses(program: Program, role: Role) -> tuple[str, ...]:
    """The services whose worker handles time their pulls (weights readers): transport, not work."""
    return tuple(n for n in role.uses if isinstance(program.services[n], Weights))


def counted_uses(program: Program, role: Role) -> tuple[str, ...]:
    """The services whose worker handles count the bytes they move between processes (``bytes``): weights
    readers, parameter-server clients, inference clients."""
    return tuple(n for n in role.uses if isinstance(program.services[n], (Weights, ParamServer, Inference)))


def users(program: Program, service: str) -> int:
    """Components that use ``service`` (an inference server keeps one slot for each)."""
    return sum(r.count for r in program.roles if service in r.uses)


def slot_count(program: Program, role: Role, running: int) -> int:
    """The output slots ``running`` components of ``role`` may fill (``local`` keeps them in shared memory):
    ``in_flight`` each, and enough for a batch to wait while every producer writes; not where the program counts
    batches per version (ES): there a producer's next step waits for the trainer's release."""
    n = running * role.in_flight
    if emits_to_channel(program, role) and not program.batches_per_version:
        n = max(n, program.services[role.emits].batch + running)
    return n


def slot_bytes(role: Role) -> int:
    """The bytes of one of ``role``'s output slots (one unroll, or one step's output); 0 for a role that emits
    nothing (SEED's env actors: their steps go to the inference server, through its own arrays)."""
    return sum(spec.nbytes for spec in role.output.values()) if role.emits is not None and role.output else 0


def shared_slot_bytes(program: Program) -> int:
    """The shared memory ``local`` allocates for the slots of every emitting role, each for all its components."""
    return sum(slot_count(program, r, r.count) * slot_bytes(r) for r in program.roles if r.emits is not None)


def inference_queue_size(program: Program, service: str) -> int:
    """Completed unrolls an inference server may hold, at the least: two batches of its channel (two for a
    replay); its loop allows one more per actor connected (``InferenceLoop``), not per actor it has slots for."""
    target = program.services[program.services[service].emits]
    return 2 * target.batch if isinstance(target, Channel) else 2


def inference_replays(program: Program) -> dict[str, str]:
    """Inference services whose completed unrolls go into a replay service (SEED with a replay learner)."""
    return {name: s.emits for name, s in program.services.items()
            if isinstance(s, Inference) and isinstance(program.services.get(s.emits), ReplayService)}


def drain_into_replays(routes: dict[str, str], adapters: dict, reports: list) -> None:
    """Move what each such inference server completed into its replay while the replay's limiter admits it;
    their infos (env steps, episodes) become step reports for the trainer. What is not admitted waits in
    the server's bounded queue, which in turn holds its env actors back: the same back-pressure a replay
    puts on actors that emit into it themselves."""
    for source, target in routes.items():
        replay = adapters[target]
        while replay.admits():
            item = adapters[source].take(0.0)
            if item is None:
                break
            replay.offer(item[0])
            reports.append(item[1])


Factory = Callable[[str, Any], Any]  # (service name, its declaration) -> the adapter


@dataclass(frozen=True)
class ServiceFactories:
    """The one table where a backend says how it serves each service kind: a factory per kind, every kind named (a
    backend that leaves one out fails where it is written, not when a program first declares that kind). Channels
    are the backend's own business (it delivers them)."""

    weights: Factory
    param_server: Factory
    replay: Factory
    partitioned_replay: Factory
    constant: Factory
    inference: Factory

    def for_kind(self, spec) -> Factory | None:
        return {Weights: self.weights, ParamServer: self.param_server, ReplayService: self.replay,
                PartitionedReplayService: self.partitioned_replay, ConstantArray: self.constant,
                Inference: self.inference}.get(type(spec))


def open_services(program: Program, factories: ServiceFactories) -> dict:
    """One adapter per declared service (not the channels), made by the backend's factory for its kind; a kind it
    has none for is an error naming the service, not a service silently missing."""
    adapters = {}
    for name, spec in program.services.items():
        if isinstance(spec, Channel):
            continue
        factory = factories.for_kind(spec)
        if factory is None:
            raise ValueError(f"service '{name}' is a {type(spec).__name__}, which this runtime does not serve")
        adapters[name] = factory(name, spec)
    return adapters
