"""Concatenating unrolls into a learner batch along each array's batch axis."""

from __future__ import annotations

import numpy as np

from distrl.core.types import UnrollSpec


def concatenate(spec: UnrollSpec, unrolls: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if len(unrolls) == 1:
        return unrolls[0]
    return {name: np.concatenate([u[name] for u in unrolls], axis=s.batch_axis) for name, s in spec.items()}
