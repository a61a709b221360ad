"""Turning a batch of unroll arrays into the tensors the loss functions in ``distrl.ops`` take."""

from __future__ import annotations

import numpy as np
import torch

from distrl.models.device import Staging


def to_tensors(batch: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """CPU tensors, zero-copy where possible (shared-memory slots); read-only arrays (Ray's object store) are
    copied. A learner on a GPU stages its batches with ``OnDevice.batch_tensors`` instead."""
    return _CPU.tensors(batch)


_CPU = Staging("cpu")


def discounts_and_masks(b: dict[str, torch.Tensor], gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(discounts, trace masks, valid masks), each ``[T, B]`` float32.

    - discount_t = gamma (1 - terminated_t): a truncated episode still bootstraps from its final
      observation (which is ``obs[t+1]``, thanks to next-step autoreset);
    - trace_t = 1 - truncated_t: multiplied into lambda (GAE) or c (V-trace) so credit does not
      flow from the next episode back across a truncation;
    - valid_t = 0 on the env's reset step, which is not a real transition and is left out of losses.
    """
    valid = b["valid"].float()
    discounts = gamma * (1.0 - b["terminated"].float()) * valid
    trace = 1.0 - b["truncated"].float()
    return discounts, trace, valid


# the arrays whose first axis is the env stream, not time: those whose spec has batch_axis=0 (unroll_spec,
# served_unroll_spec in core/program.py)
_STREAM_FIRST = ("version", "initial_state")


def env_stream_slices(b: dict[str, torch.Tensor], parts: int) -> list[dict[str, torch.Tensor]]:
    """A time-major batch (``[T, B, ...]``, ``version`` ``[B]``) cut into ``parts`` minibatches of whole env
    streams (views, no copies): each keeps its unrolls' time order, which V-trace and GAE need. More parts
    than streams is an error."""
    streams = b["rewards"].shape[1]
    if parts > streams:
        raise ValueError(f"minibatches ({parts}) must not exceed the env streams in a batch ({streams})")
    bounds = np.linspace(0, streams, parts + 1).round().astype(int)
    return [{k: (v[lo:hi] if k in _STREAM_FIRST else v[:, lo:hi]) for k, v in b.items()}
            for lo, hi in zip(bounds[:-1], bounds[1:])]
