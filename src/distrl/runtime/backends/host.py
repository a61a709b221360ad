"""What every backend does alike with its program's services; the components are each backend's own.

A backend serves each service kind its own way (shared memory, Ray actors, gRPC: the ``factories`` table it
passes to :meth:`ServiceHost.open_program`), but opening them, publishing weights through them, starting them
before the first component and handing out the learner's handles is one sequence, kept here so the three
backends cannot drift apart in it (a service started after a component that reads it, a weight version
published to some adapters only).
"""

from __future__ import annotations

from distrl.core import shared
from distrl.core.program import Program
from distrl.runtime.backends.placement import (
    ServiceFactories,
    Worker,
    inference_replays,
    open_services,
    workers_of,
)


class ServiceHost:
    sources: list  # the adapters whose outputs the learner consumes
    routes: dict[str, str]  # inference service -> the replay its emitter feeds
    name: str
    elastic = False  # it can start and stop an elastic role's components while the run goes on (``scale``)

    def __init__(self, seed: int):
        """What every backend holds before it opens a program."""
        self.seed = seed
        self.program: Program | None = None
        self.adapters: dict = {}
        self.workers: list[Worker] = []
        self.reports: list[dict] = []  # infos of finished steps that emitted into no channel, for ``poll``
        self.hyper: dict = {}  # the components' hyperparameters (a restarted one gets them too)
        self.paused = False
        self.held: frozenset[str] = frozenset()
        self.shared: dict = {}  # services shared with other programs: name -> handle, given to every component
        self._holds_shared = False

    @staticmethod
    def refuses(program: Program, num_learners: int) -> str | None:
        """Why this runtime cannot run ``program`` as asked (one line), or None: checked before anything starts."""
        return None

    def open_program(self, program: Program, factories: ServiceFactories) -> dict:
        """Open one adapter per declared service; returns the learner's handles, by service name. ``sources`` are
        the adapters the learner consumes from; ``routes`` maps an inference service to the replay it feeds."""
        program.check()
        if not self.elastic and any(r.active is not None for r in program.roles):
            raise ValueError(f"the {self.name} runtime runs every component of a role from the start; starting some "
                             "(autoscale) needs local")
        self.program = program
        self.adapters = open_services(program, factories)
        self.sources = [a for a in self.adapters.values() if a.emits == program.consumes]
        self.routes = inference_replays(program)
        return {name: self.adapters[name].learner_handle() for name in program.learner_uses}

    def services(self) -> dict:
        return self.adapters

    def release_shared(self) -> None:
        """At close: this program no longer reaches the shared services by name in this process."""
        if self._holds_shared:
            self._holds_shared = False
            shared.release(self.shared)

    def publish(self, weights_fn, version: int) -> None:
        for adapter in self.adapters.values():
            adapter.publish(weights_fn, version)

    worker_record: type[Worker] = Worker  # the backend's record of a component

    def start_services(self, weights) -> list[Worker]:
        """Start every service, publish the first weights (``(array, version)``, or None) and list the components
        to start, in the program's order: a component starts only after everything it reads is served."""
        shared.register(self.shared)  # this process's components and learner reach them by name too
        self._holds_shared = True
        for adapter in self.adapters.values():
            adapter.start()
        if weights is not None:
            self.publish(lambda: weights[0], weights[1])
        self.workers = workers_of(self.program, self.worker_record)
        return self.workers

    # --- elastic roles (backends whose ``elastic`` is True) -------------------------------------------------------
    def scale(self, role: str, active: int) -> None:
        """Run the first ``active`` components of elastic ``role``: parked ones start (with a fresh seed, as a
        restarted one does), those beyond take no new steps and are parked once their steps in flight are back
        (nothing they made is lost: it reaches the learner as any other output)."""
        for w in (w for w in self.workers if w.role.name == role):
            w.latest = False  # only this change's new components are waited for (one a cluster cannot place
            # would otherwise hold every later window back)
            if w.index < active and w.parked:
                w.parked, w.starting, w.latest = False, True, True
                w.restarts = w.restart_log.fresh_start()
                self._spawn(w)
            elif w.index < active:
                w.retiring = False
            elif not w.parked:
                w.retiring = True
                if not self._in_flight(w):
                    self._park(w)
        self._grant_steps()

    def scaling(self, role: str) -> bool:
        """Are components of ``role`` that the last change started not stepping yet, or components it retired still
        handing back their last steps? A window measured then would not be the new count's (a Ray actor on two cores
        took seconds to start: 8 actors were measured slower than 1). A component retired before it ever stepped has
        nothing to hand back, and is not waited for."""
        return any(not w.parked and (w.retiring and not w.starting or w.latest and w.starting)
                   for w in self.workers if w.role.name == role)

    def _spawn(self, w: Worker) -> None:
        raise NotImplementedError

    def _park(self, w: Worker) -> None:
        raise NotImplementedError

    def _in_flight(self, w: Worker) -> int:
        raise NotImplementedError

    def _grant_steps(self) -> None:
        raise NotImplementedError

