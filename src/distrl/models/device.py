"""Where a learner computes, the run's ``device`` (cpu, cuda, cuda:N, auto), and in what arithmetic, its
``precision`` (fp32 or bf16).

The learner lives in the trainer's process. Placing it on a GPU is three things: its modules move there
(a resumed optimizer's state follows, since ``Optimizer.load_state_dict`` casts to its parameters'
device); its batches, which arrive as numpy arrays (shared-memory slots, a replay's sample, Ray's object
store), are copied into pinned host buffers and from there to the GPU with non-blocking copies (a copy
from pageable memory goes through the driver's own staging buffer, about half the bandwidth); and the
weights it publishes come back as one flat copy. Every learner update then synchronises once, when its
loss and gradient norm are read to decide whether the update is finite (``GradientLearner.apply``).

``precision=bf16`` runs the learner's networks under ``torch.autocast``: matrix products and convolutions
in bfloat16; their outputs, the losses computed from them, the weights and the optimizer state in float32
(no loss scaling: bfloat16 has float32's exponent range).
"""

from __future__ import annotations

import re
from typing import Mapping

import numpy as np
import torch

from distrl.errors import ConfigError

DEVICES = "cpu, cuda, cuda:N or auto"


def resolve_device(name: str, what: str = "device") -> torch.device:
    """``auto`` is the first GPU where torch sees one, else the CPU; ``cuda``/``cuda:N`` must exist here.
    Anything else is one line naming what is valid."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name != "cuda" and not re.fullmatch(r"cuda:[0-9]+", name):
        raise ConfigError(f"{what} must be {DEVICES}; got {name!r}")
    index = int(name[5:]) if ":" in name else 0
    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        raise ConfigError(f"{what}={name} but this torch sees no such GPU (cuda available: "
                          f"{torch.cuda.is_available()}, GPUs: {torch.cuda.device_count()}); use {what}=cpu or auto")
    return torch.device("cuda", index)


def mixed_precision(modules, device: torch.device) -> int:
    """Run each layer of ``modules`` (every submodule holding parameters of its own: linear, convolution,
    LSTM) under bfloat16 autocast and hand its floating outputs back as float32: the networks' matrix
    products and convolutions (and their gradients) run in bfloat16, while what the learner computes from
    their outputs (V-trace, n-step targets, losses) stays in float32, as do the weights and the optimizer.
    Layers, not whole networks: learners call a network's methods (``evaluate_unroll``, ``q``, ``unroll``),
    which never pass through its ``forward``. Returns how many were wrapped."""
    n = 0
    for module in modules:
        for layer in module.modules():
            if next(layer.parameters(recurse=False), None) is not None:
                layer.forward = _autocast_forward(layer.forward, device.type)
                n += 1
    return n


def _autocast_forward(forward, device_type: str):
    def run(*args, **kwargs):
        with torch.autocast(device_type, dtype=torch.bfloat16):
            return _as_float32(forward(*args, **kwargs))
    return run


def _as_float32(x):
    if isinstance(x, torch.Tensor):
        return x.float() if x.dtype == torch.bfloat16 else x
    if isinstance(x, (tuple, list)):
        return type(x)(_as_float32(v) for v in x)
    return x


class Staging:
    """Batches from numpy to ``device``. On the CPU: zero-copy views where numpy allows it (read-only arrays,
    from Ray's object store, are copied: torch wants writable memory). On a GPU: each key's array is copied
    into a pinned buffer kept for that key (reallocated when its shape changes), then sent with a
    non-blocking copy; the buffers are reused only after the previous batch's copies have finished."""

    def __init__(self, device: torch.device | str = "cpu"):
        self.device = torch.device(device)
        self._pinned: dict[str, torch.Tensor] = {}
        self._copied = None  # a CUDA event after the last batch's copies

    def tensors(self, arrays: Mapping[str, np.ndarray]) -> dict[str, torch.Tensor]:
        if self.device.type == "cpu":
            out = {}
            for k, v in arrays.items():
                v = np.ascontiguousarray(v)
                out[k] = torch.from_numpy(v if v.flags.writeable else v.copy())
            return out
        if self._copied is not None:
            self._copied.synchronize()
        out = {}
        for k, v in arrays.items():
            v = np.asarray(v)
            buf = self._pinned.get(k)
            if buf is None or tuple(buf.shape) != v.shape or buf.dtype != _torch_dtype(v.dtype):
                buf = self._pinned[k] = torch.empty(v.shape, dtype=_torch_dtype(v.dtype), pin_memory=True)
            buf.numpy()[...] = v
            out[k] = buf.to(self.device, non_blocking=True)
        self._copied = torch.cuda.Event()
        self._copied.record(torch.cuda.current_stream(self.device))  # the copies' stream, on this device
        return out


def _torch_dtype(dtype: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.empty(0, dtype=dtype)).dtype
