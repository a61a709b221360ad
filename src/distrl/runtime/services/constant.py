"""The constant-array service on each transport: a read-only array made once per machine.

Why a service and not a module-level array: ES's noise table is ~100 MB and every worker reads it; built
in each worker it would cost ``num_workers`` times the memory and the start-up time (and on ``ray`` once
per actor instead of once per node).

- :class:`InProcessConstant` (``inline``): the array itself.
- :class:`SharedMemoryConstant` (``local``): one shared-memory block, filled by the trainer; a worker
  attaches on its first ``get`` and maps the same pages (nothing is copied).
- :class:`RayConstant` (``ray``): ``ray.put`` once; ``ray.get`` in a worker maps the node's object-store
  copy read-only (numpy arrays are zero-copy there), so each node holds one copy.
"""

from __future__ import annotations

import numpy as np

from distrl.core.types import ArraySpec
from distrl.runtime.services.base import LazyHandle, ServiceAdapter
from distrl.runtime.shared_memory import SharedArrays


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class Given:
    """A handle that already holds the array (this process made or mapped it)."""

    def __init__(self, array: np.ndarray):
        self.array = _read_only(array)

    def get(self) -> np.ndarray:
        return self.array


class InProcessConstant(ServiceAdapter):
    def __init__(self, spec):
        self.handle = Given(np.asarray(spec.make()))

    def learner_handle(self):
        return self.handle

    def worker_handle(self, role: str, index: int):
        return self.handle


class SharedMemoryReader(LazyHandle):
    """A worker process's handle: attaches to the block on its first ``get``."""

    def resolve(self, handle) -> SharedArrays:
        return SharedArrays.attach(handle)

    def get(self) -> np.ndarray:
        return _read_only(self.resolved().arrays["array"])


class SharedMemoryConstant(ServiceAdapter):
    def __init__(self, spec):
        array = np.asarray(spec.make())
        self.shared = SharedArrays.create({"array": ArraySpec(array.shape, array.dtype.name)})
        self.shared.arrays["array"][...] = array
        self.nbytes = array.nbytes

    def learner_handle(self):
        return Given(self.shared.arrays["array"])

    def worker_handle(self, role: str, index: int):
        return SharedMemoryReader(self.shared.handle())

    def stats(self, whole_run: bool = False) -> dict:
        return {"constant_bytes": self.nbytes} if whole_run else {}

    def close(self) -> None:
        self.shared.close()


class RayReader(LazyHandle):
    """A Ray actor's handle: the object reference, resolved on the first ``get`` (zero-copy, read-only)."""

    def resolve(self, ref) -> np.ndarray:
        import ray

        return ray.get(ref)

    def get(self) -> np.ndarray:
        return self.resolved()


class RayConstant(ServiceAdapter):
    def __init__(self, ray, spec):
        self.array = np.asarray(spec.make())
        self.ref = ray.put(self.array)

    def learner_handle(self):
        return Given(self.array)

    def worker_handle(self, role: str, index: int):
        return RayReader(self.ref)
