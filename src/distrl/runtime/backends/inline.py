"""The ``inline`` runtime: every component in this process, stepped in turn.

Deterministic for a given seed (components take turns in a fixed order, one torch RNG), so any
program can be debugged and profiled in lockstep. Each :meth:`poll` steps the next component that
may step: one whose channel is short of a batch, whose replay admits its output, or that emits
nowhere; periodic roles (an evaluator) step when the trainer requests them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.core.program import Program
from distrl.core.types import allocate
from distrl.runtime.backends.batching import concatenate
from distrl.runtime.backends.host import ServiceHost
from distrl.runtime.backends.placement import (
    ServiceFactories,
    Worker,
    component_seed,
    drain_into_replays,
    emits_to_channel,
    emits_to_replay,
    feeds_channel,
    slot_offsets,
    timed_uses,
    users,
)
from distrl.runtime.services.constant import InProcessConstant
from distrl.runtime.services.inference.inline import InlineInference
from distrl.runtime.services.param_server import SharedParamServer
from distrl.runtime.services.replay import LocalReplay, SharedPartitionedReplay
from distrl.runtime.services.shared import in_process
from distrl.runtime.services.weights import InProcessWeights


@dataclass
class InlineWorker(Worker):
    """A component as ``inline`` steps it (``handle``: the component itself), with where its output goes decided
    once."""

    buffers: list = field(default_factory=list)  # its outputs, as many as may wait in the channel
    turn: int = 0  # the buffer its next step writes
    to_channel: bool = False
    to_replay: bool = False
    feeds: bool = False  # its work ends up in the consumed channel (directly, or through an inference service)
    via_replays: list = field(default_factory=list)  # the replays an inference service it uses feeds
    readers: list = field(default_factory=list)  # the weights adapters it reads


class InlineBackend(ServiceHost):
    name = "inline"
    worker_record = InlineWorker

    def __init__(self, seed: int):
        super().__init__(seed)
        self.transport_s = 0.0
        self.ready: list = []  # (info, arrays) in the consumed channel
        self.requested: list[InlineWorker] = []
        self.next = 0

    share = staticmethod(in_process)

    def open(self, program: Program) -> dict:
        return self.open_program(program, ServiceFactories(
            weights=lambda name, spec: InProcessWeights(),
            param_server=lambda name, spec: SharedParamServer(spec),
            replay=LocalReplay,
            partitioned_replay=SharedPartitionedReplay,
            constant=lambda name, spec: InProcessConstant(spec),
            inference=lambda name, spec: InlineInference(spec, slot_offsets(program, name), users(program, name)),
        ))

    def start(self, weights) -> None:
        for w in self.start_services(weights):
            handles = {name: self.adapters[name].worker_handle(w.role.name, w.index) for name in w.role.uses}
            w.handle = w.role.make(w.index, component_seed(self.seed, w.position, w.index), handles)
            if self.hyper:
                w.handle.set_hyperparameters(dict(self.hyper))
            # outputs waiting in a channel are not overwritten before the learner takes them
            depth = self.program.services[w.role.emits].batch if emits_to_channel(self.program, w.role) else 1
            w.buffers = [allocate(w.role.output) for _ in range(depth)] if w.role.output else []
            w.turn = 0
            # where its output goes, decided once (the program does not change while it runs)
            w.to_channel = emits_to_channel(self.program, w.role)
            w.to_replay = emits_to_replay(self.program, w.role)
            w.feeds = feeds_channel(self.program, w.role)
            w.via_replays = [self.adapters[self.routes[n]] for n in w.role.uses if n in self.routes]
            w.readers = [self.adapters[n] for n in timed_uses(self.program, w.role)]
        self.batch = self.program.services[self.program.consumes].batch if self.program.consumes else 0

    def set_hyperparameters(self, values, components) -> None:
        for adapter in self.adapters.values():
            adapter.set_hyperparameters(values)
        if components:
            self.hyper.update(components)  # components made later get them too
            for w in self.workers:
                w.handle.set_hyperparameters(components)

    def _may_step(self, w: InlineWorker) -> bool:
        if w.role.interval_steps is not None or w.role.name in self.held:
            return False
        if w.feeds:  # no further ahead of the learner than one batch
            return len(self.ready) + self._fed() < self.batch
        if w.to_replay:
            return self.adapters[w.role.emits].admits()
        if w.via_replays:  # an env actor whose steps an inference server turns into a replay's items
            drain_into_replays(self.routes, self.adapters, self.reports)
            return all(r.admits() for r in w.via_replays)
        return True

    def _fed(self) -> int:
        return sum(len(source.ready) for source in self.sources)

    def _step(self, w: InlineWorker) -> None:
        out = None
        if w.buffers:
            out = w.buffers[w.turn % len(w.buffers)]
            w.turn += 1
        pulled = sum(r.seconds for r in w.readers)
        info = w.handle.step(out)
        self.transport_s += sum(r.seconds for r in w.readers) - pulled
        if w.to_channel:
            self.ready.append((out, info))
            return
        if w.to_replay:
            self.adapters[w.role.emits].offer(out)
        self.reports.append(info)

    def poll(self, timeout: float) -> tuple[list[dict], int]:
        while self.requested:
            self._step(self.requested.pop(0))
        if not self.paused:
            for k in range(len(self.workers)):
                w = self.workers[(self.next + k) % len(self.workers)]
                if self._may_step(w):
                    self._step(w)
                    self.next = (self.next + k + 1) % len(self.workers)
                    break
        reports, self.reports = self.reports, []
        return reports, 0

    def next_batch(self, timeout: float):
        spec = self.program.services[self.program.consumes]
        for source in self.sources:
            while (item := source.take(0.0)) is not None:
                self.ready.append(item)
        if len(self.ready) < spec.batch:
            return None
        items, self.ready = self.ready[:spec.batch], self.ready[spec.batch:]
        return concatenate(spec.spec, [a for a, _ in items]), [info for _, info in items], None

    def release(self, token) -> None:
        pass

    def request(self, role: str) -> None:
        self.requested.extend(w for w in self.workers if w.role.name == role and w not in self.requested)

    def pause(self, paused: bool) -> None:
        self.paused = paused

    def hold(self, roles: frozenset[str]) -> None:
        self.held = frozenset(roles)

    def stats(self) -> dict:
        return {"block_s": 0.0, "transport_s": self.transport_s}

    def pids(self) -> list[int]:
        return []

    def close(self) -> None:
        self.release_shared()
        for w in self.workers:
            if w.handle is not None:
                w.handle.close()
                w.handle = None
        for adapter in self.adapters.values():
            adapter.close()
        self.workers = []
