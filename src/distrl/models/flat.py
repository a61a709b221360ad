"""Weights as one flat float32 vector: what the weights service moves between processes.

``torch.nn.utils.vector_to_parameters`` rebinds every parameter's ``.data`` to a view of the vector
(and its callers copied the vector first); copying into the parameters in place with one fused call
keeps them where they are and costs ~20 us for a 64x64 MLP, paid before every unroll.
"""

from __future__ import annotations

import numpy as np
import torch


def load_flat(params, flat: np.ndarray) -> None:
    """Copy ``flat`` (read-only arrays welcome: Ray's object store hands those out) into ``params`` in place."""
    params = list(params)
    src = torch.from_numpy(flat if flat.flags.writeable else flat.copy())
    sizes = [p.numel() for p in params]
    if sum(sizes) != src.numel():
        raise ValueError(f"flat weights hold {src.numel()} values; the parameters {sum(sizes)}")
    with torch.no_grad():
        torch._foreach_copy_(params, [v.view_as(p) for v, p in zip(src.split(sizes), params)])


def to_flat(params) -> np.ndarray:
    """The parameters as a new flat float32 array."""
    return torch.cat([p.detach().reshape(-1) for p in params]).numpy()
