"""Array specs: the layout contracts that let a runtime preallocate memory (shared memory, slots)
for a component's output without knowing the algorithm that fills it."""

from __future__ import annotations

from dataclasses import dataclass

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


def allocate(spec: UnrollSpec, leading: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """Zeroed arrays for ``spec`` (with ``leading`` axes in front)."""
    return {name: s.empty(leading) for name, s in spec.items()}
