"""Versioned weights in shared memory, published by one writer and pulled by many readers.

A seqlock instead of a lock: the writer makes the sequence number odd, copies, makes it even;
a reader copies and retries if the sequence moved. No reader can block the writer, so an actor
killed in the middle of a pull cannot freeze the learner (a killed lock holder would).
"""

from __future__ import annotations

import numpy as np

from distrl.core.types import ArraySpec
from distrl.runtime.shared_memory import SharedArrays


class SharedWeights:
    def __init__(self, arrays: SharedArrays):
        self.arrays = arrays
        self.flat = arrays.arrays["flat"]
        self.meta = arrays.arrays["meta"]  # [sequence, version]

    @classmethod
    def create(cls, size: int) -> "SharedWeights":
        arrays = SharedArrays.create({"flat": ArraySpec((size,), "float32"), "meta": ArraySpec((2,), "int64")})
        return cls(arrays)

    @classmethod
    def attach(cls, handle) -> "SharedWeights":
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
