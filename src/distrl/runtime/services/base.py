"""What every service adapter offers the backend that built it: one adapter per service per transport.

An adapter is the trainer's side of a service on one transport (in-process, shared memory, Ray). It
hands out handles (to the learner, and to each worker component: picklable, since workers may live
in other processes), and hears the run's events: weights to publish, hyperparameters to apply, numbers for the
metrics (:class:`ServiceAdapter`). What only some services have is a contract of its own in ``core/protocols.py``.
An adapter declares the four the runtime asks of any adapter by subclassing their bases here: state a checkpoint
keeps (:class:`Stateful`), spawned copies (:class:`OwnsSpawnedCopies`), per-call arguments (:class:`SendsCallArgs`),
updates it applies itself (:class:`AppliesUpdates`); the runtime calls those only on adapters that declare them. An
inference adapter also subclasses ``ChannelSource`` and a replay adapter ``ReplayIntake``: a backend calls them on
the adapters it built for those kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from distrl.core.protocols import PerCallArgs, SpawnedCopies, StatefulService, WorkerUpdates
from distrl.core.protocols import ServiceAdapter as AdapterContract


class LazyHandle:
    """A worker's handle that travels as ``ref`` alone (a shared-memory handle, a Ray object reference) and resolves
    it in the process that uses it, on first use: :meth:`resolved` is ``resolve(ref)``, made once per process."""

    def __init__(self, ref):
        self.ref = ref
        self._resolved = None

    def __getstate__(self):
        return {"ref": self.ref}

    def __setstate__(self, state):
        self.__init__(state["ref"])

    def resolve(self, ref) -> Any:
        raise NotImplementedError

    def resolved(self) -> Any:
        if self._resolved is None:
            self._resolved = self.resolve(self.ref)
        return self._resolved


class ServiceAdapter(AdapterContract):
    """The lifecycle every adapter has, each step "nothing to do" unless the adapter says otherwise."""

    emits: str | None = None

    def learner_handle(self) -> Any:
        return None

    def worker_handle(self, role: str, index: int) -> Any:
        return None

    def start(self) -> None:
        pass

    def publish(self, weights_fn, version: int) -> None:
        pass

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        pass

    def stats(self, whole_run: bool = False) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


class Stateful(StatefulService):
    """A stateful service's checkpoint steps, each empty unless the adapter has something to keep there."""

    def checkpoint_parts(self) -> tuple[dict, dict]:
        return {}, {}

    def counters(self) -> dict:
        return {}

    def load_counters(self, counters: dict) -> None:
        pass

    def save(self, folder) -> None:
        pass

    def load(self, folder) -> None:
        pass

    def sync(self) -> None:
        pass


class OwnsSpawnedCopies(SpawnedCopies):
    """Declares :class:`~distrl.core.protocols.SpawnedCopies`: the local backend tells it of each spawned component."""


class SendsCallArgs(PerCallArgs):
    """Declares :class:`~distrl.core.protocols.PerCallArgs`: the Ray backend sends its ``call_args()`` with each step
    call."""


class AppliesUpdates(WorkerUpdates):
    """Declares :class:`~distrl.core.protocols.WorkerUpdates`: its updates count as the run's."""


def stateful(adapters) -> list[Stateful]:
    """The adapters whose state a checkpoint keeps (they declare :class:`Stateful`)."""
    return [a for a in adapters if isinstance(a, Stateful)]


def applied_updates(adapters) -> int:
    """Updates the adapters that apply them (parameter servers) applied, in all."""
    return sum(a.applied_updates() for a in adapters if isinstance(a, AppliesUpdates))
