"""The weights service on each transport: the learner publishes versioned flat weights, readers pull
the newest between their steps (a reader that is not behind copies nothing).

- :class:`InProcessWeights` (``inline``): the learner's weights are made only when a reader asks, once
  per version.
- :class:`SharedMemoryWeights` (``local``): one shared buffer with a sequence number (a seqlock, not a
  lock): the writer makes the sequence odd, copies, makes it even; a reader copies and retries if the
  sequence moved. No reader can block the writer, so an actor killed in the middle of a pull cannot
  freeze the learner (a killed lock holder would).
- :class:`RayWeights` (``ray``): made once per version, and only when a step call needs them; small
  weights travel inside the calls of the components that use the service, large ones are ``ray.put``
  once and their reference travels.
"""

from __future__ import annotations

import time

import numpy as np

from distrl.core.types import ArraySpec
from distrl.runtime.services.base import LazyHandle, SendsCallArgs, ServiceAdapter
from distrl.runtime.shared_memory import SharedArrays


class _TimedReader:
    seconds = 0.0  # time spent pulling: the transport share of a component's time
    bytes = 0  # weights pulled (the runtime's bytes moved per env step)

    def pull(self, newer_than: int) -> tuple[np.ndarray, int] | None:
        """The newest weights and their version, or None when none newer than ``newer_than`` was published."""
        t0 = time.perf_counter()
        got = self._pull(newer_than)
        self.seconds += time.perf_counter() - t0
        if got is not None:
            self.bytes += got[0].nbytes
        return got


class PerVersion:
    """A value made at most once per version: ``get(version, make)`` calls ``make()`` only for a new version."""

    def __init__(self):
        self.value, self.version = None, -1

    def get(self, version: int, make):
        if self.version != version:
            self.value, self.version = make(), version
        return self.value


class InProcessWeights(ServiceAdapter, _TimedReader):
    def __init__(self):
        self._fn = None
        self.version = -1
        self._flat = PerVersion()

    def publish(self, weights_fn, version: int) -> None:
        self._fn, self.version = weights_fn, version

    def worker_handle(self, role: str, index: int):
        return self

    def _pull(self, newer_than: int):
        if self._fn is None or self.version <= newer_than:
            return None
        return self._flat.get(self.version, self._fn), self.version


class SharedWeights:
    """The shared buffer: ``[sequence, version]`` and the flat weights."""

    def __init__(self, arrays: SharedArrays):
        self.arrays = arrays
        self.flat = arrays.arrays["flat"]
        self.meta = arrays.arrays["meta"]  # [sequence, version]

    @classmethod
    def create(cls, size: int) -> SharedWeights:
        arrays = SharedArrays.create({"flat": ArraySpec((size,), "float32"), "meta": ArraySpec((2,), "int64")})
        weights = cls(arrays)
        weights.meta[1] = -1
        return weights

    @classmethod
    def attach(cls, handle) -> SharedWeights:
        return cls(SharedArrays.attach(handle))

    def handle(self):
        return self.arrays.handle()

    def publish(self, flat: np.ndarray, version: int) -> None:
        self.meta[0] += 1  # odd: write in progress
        self.flat[:] = flat
        self.meta[1] = version
        self.meta[0] += 1  # even: consistent

    @property
    def version(self) -> int:
        return int(self.meta[1])

    def pull(self) -> tuple[np.ndarray, int]:
        while True:
            seq = int(self.meta[0])
            if seq % 2:
                continue
            flat = self.flat.copy()
            version = int(self.meta[1])
            if int(self.meta[0]) == seq:
                return flat, version

    def close(self) -> None:
        self.flat = self.meta = None
        self.arrays.close()


class SharedWeightsReader(LazyHandle, _TimedReader):
    """A worker process's handle: attaches to the shared buffer on first use."""

    def resolve(self, handle) -> SharedWeights:
        return SharedWeights.attach(handle)

    def _pull(self, newer_than: int):
        shared = self.resolved()
        if shared.version <= newer_than:
            return None
        return shared.pull()


class SharedMemoryWeights(ServiceAdapter):
    def __init__(self):
        self.shared: SharedWeights | None = None

    def publish(self, weights_fn, version: int) -> None:
        flat = weights_fn()
        if self.shared is None:
            self.shared = SharedWeights.create(flat.shape[0])
        self.shared.publish(flat, version)

    def worker_handle(self, role: str, index: int):
        return SharedWeightsReader(self.shared.handle())

    def close(self) -> None:
        if self.shared is not None:
            self.shared.close()
            self.shared = None


INLINE_BYTES = 256 * 1024


class RayWeightsReader(_TimedReader):
    """A Ray actor's handle: the newest version's object reference arrives with its step calls and is
    fetched only when the component pulls a version newer than its own."""

    def __init__(self):
        self._ref, self._version = None, -1
        self._flat = PerVersion()

    def receive(self, value) -> None:
        if value is not None and value[1] > self._version:
            self._ref, self._version = value

    def _pull(self, newer_than: int):
        if self._ref is None or self._version <= newer_than:
            return None
        return self._flat.get(self._version, self._fetch), self._version

    def _fetch(self) -> np.ndarray:
        if isinstance(self._ref, np.ndarray):
            return self._ref
        import ray

        return ray.get(self._ref)


class RayWeights(ServiceAdapter, SendsCallArgs):
    def __init__(self, ray):
        self.ray = ray
        self._fn, self._version = None, -1
        self._sent = PerVersion()  # what the calls carry: the flat weights or their object reference

    def publish(self, weights_fn, version: int) -> None:
        """Lazy: ``weights_fn`` runs when a step call next carries the weights, so a caller publishes each new
        version before any producer's next call (the trainer: update, publish, then release the slots), or the
        newer weights would travel under the older version."""
        self._fn, self._version = weights_fn, version

    def call_args(self):
        if self._fn is None:
            return None
        return self._sent.get(self._version, self._put), self._version  # made only when a call carries it

    def _put(self):
        flat = self._fn()
        # small weights travel inside the call (no object-store round trip: a put here, a get there);
        # large ones (a CNN) are put once and the reference travels
        return flat if flat.nbytes <= INLINE_BYTES else self.ray.put(flat)

    def worker_handle(self, role: str, index: int):
        return RayWeightsReader()
