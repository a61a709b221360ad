"""What every service adapter offers the backend that built it: one adapter per service per transport.

An adapter is the trainer's side of a service on one transport (in-process, shared memory, Ray). It
hands out handles (to the learner, and to each worker component: picklable, since workers may live
in other processes), and answers the trainer: weights to publish, hyperparameters to apply,
what to checkpoint and restore, and numbers for the metrics. Everything defaults to "nothing to do",
so an adapter states only what its service has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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


class ServiceAdapter:
    emits: str | None = None  # the channel this service feeds (an inference server's unrolls), if any

    def learner_handle(self) -> Any:
        """What the learner (in the trainer's process) uses."""
        return None

    def worker_handle(self, role: str, index: int) -> Any:
        """What component ``index`` of ``role`` gets (picklable); called again for a restarted component."""
        return None

    def spawned(self, role: str, index: int) -> None:
        """Component ``index`` of ``role`` was started in its own process with what :meth:`worker_handle`
        gave it: drop this process's copy of anything it must own alone (a pipe end)."""

    def call_args(self) -> Any:
        """Sent with each step call to components using this service, where the transport has no shared
        memory (Ray: the weights' object reference); their handle's ``receive`` takes it."""
        return None

    def start(self) -> None:
        """After a checkpoint was restored into the service, before any component starts."""

    def publish(self, weights_fn, version: int) -> None:
        """The learner has new weights (``weights_fn()`` makes them, only if someone needs them)."""

    def set_hyperparameters(self, values: Mapping[str, float]) -> None: ...

    def checkpoint_parts(self) -> tuple[dict, dict]:
        """(modules, optimizers) the service holds, saved and loaded by name with the learner's."""
        return {}, {}

    def counters(self) -> dict:
        return {}

    def load_counters(self, counters: dict) -> None: ...

    def save(self, folder) -> None:
        """Write what the service holds besides tensors by name (a replay's contents) into ``folder``."""

    def load(self, folder) -> None: ...

    def sync(self) -> None:
        """Bring state held elsewhere (Ray actors) into the parts before a checkpoint or the end."""

    def stats(self, whole_run: bool = False) -> dict[str, Any]:
        """Numbers for the metrics row (or, ``whole_run``, for the summary)."""
        return {}

    def applied_updates(self) -> int:
        """Updates this service applied (a parameter server's, where workers learn); 0 for the others."""
        return 0

    def take(self, timeout: float):
        """One ``(arrays, info)`` for the channel this service feeds, or ``None`` after ``timeout``."""
        return None

    def close(self) -> None: ...
