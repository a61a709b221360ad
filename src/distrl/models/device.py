"""Where a learner computes, the run's ``device`` (cpu, cuda, cuda:N, auto), and in what arithmetic, its
``precision`` (fp32, bf16, or auto: bf16 for a CPU learner where the CPU has bfloat16 arithmetic).

The learner lives in the trainer's process. Placing it on a GPU is three things: its modules move there
(a resumed optimizer's state follows, since ``Optimizer.load_state_dict`` casts to its parameters'
device); its batches, which arrive as numpy arrays (shared-memory slots, a replay's sample, Ray's object
store), are copied into pinned host buffers and from there to the GPU with non-blocking copies (a copy
from pageable memory goes through the driver's own staging buffer, about half the bandwidth); and the
weights it publishes come back as one flat copy. Every learner update then synchronises once, when its
loss and gradient norm are read to decide whether the update is finite (``GradientLearner.apply``).

``precision=bf16`` runs the learner's networks under ``torch.autocast``: matrix products and convolutions
in bfloat16; their outputs, the losses computed from them, the weights and the optimizer state in float32
(no loss scaling: bfloat16 has float32's exponent range). ``auto`` takes it for a CPU learner where the CPU
multiplies bfloat16 in hardware: there Pong's Nature CNN learns ~1.8x faster (``configs/impala/atari.yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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


def cpu_has_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware: AVX512-BF16 or AMX tiles, which oneDNN's bf16 kernels use
    (without them bf16 is converted to float32 around float32 arithmetic, and gains nothing)."""
    probes = (getattr(torch.cpu, "_is_avx512_bf16_supported", None), getattr(torch.cpu, "_is_amx_tile_supported", None))
    return any(probe is not None and probe() for probe in probes)


def resolve_precision(precision: str, device: torch.device, placeable: bool) -> str:
    """``auto`` is bf16 where it was measured faster: a learner that can be placed (``placeable``: the run has a
    central learner computing network gradients) on a CPU with bfloat16 arithmetic (``cpu_has_bf16``); fp32
    elsewhere, a GPU included (IMPALA's Nature CNN learner on an H200 ran 3-24% slower in bf16, ``docs/guide/gpus.md``).
    fp32 and bf16 are themselves."""
    if precision != "auto":
        return precision
    return "bf16" if placeable and device.type == "cpu" and cpu_has_bf16() else "fp32"


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


class Staged(dict):
    """A batch already staged for the learner's device by :meth:`Staging.stage` (its tensors by key), with, on a
    GPU, the event after its copies: the learner's stream waits on it before the first use."""

    event = None


class Staging:
    """Batches from numpy to ``device``. On the CPU: zero-copy views where numpy allows it (read-only arrays,
    from Ray's object store, are copied: torch wants writable memory). On a GPU: each key's array is copied
    into a pinned buffer kept for that key (reallocated when its shape changes), then sent with a
    non-blocking copy; the buffers are reused only after the previous batch's copies have finished.

    ``stage`` does the same for the *next* batch from another thread while the learner's update of the
    current one runs (the trainer's ``prefetch``): on a GPU into a second pair of pinned buffer sets used in
    turn, with the copies on a stream of their own, so that the host copy into pinned memory (the larger
    cost: 18 MB of Pong frames per 640-sample batch) and the transfer overlap the update's kernels."""

    def __init__(self, device: torch.device | str = "cpu"):
        self.device = torch.device(device)
        self._pinned: dict[str, torch.Tensor] = {}
        self._copied = None  # a CUDA event after the last batch's copies
        self._sets: list[dict[str, torch.Tensor]] = [{}, {}]  # stage's pinned buffers, used in turn
        self._set_copied: list = [None, None]
        self._turn = 0
        self._stream = None  # stage's copy stream

    def tensors(self, arrays: Mapping[str, np.ndarray]) -> dict[str, torch.Tensor]:
        if isinstance(arrays, Staged):
            return self._use(arrays)
        if self.device.type == "cpu":
            return _cpu_tensors(arrays)
        if self._copied is not None:
            self._copied.synchronize()
        out = {k: _pinned_copy(self._pinned, k, v).to(self.device, non_blocking=True) for k, v in arrays.items()}
        self._copied = torch.cuda.Event()
        self._copied.record(torch.cuda.current_stream(self.device))  # the copies' stream, on this device
        return out

    def stage(self, arrays: Mapping[str, np.ndarray]) -> Staged:
        """The batch's tensors on the device, safe to call from one thread other than the learner's (one
        ``stage`` at a time). The arrays may be handed back to their producer once it returns on a GPU (they
        were copied into pinned memory); on the CPU the tensors are views of them, as with ``tensors``."""
        if self.device.type == "cpu":
            return Staged(_cpu_tensors(arrays))
        turn, self._turn = self._turn, 1 - self._turn
        if self._set_copied[turn] is not None:  # that set's previous batch has left for the GPU
            self._set_copied[turn].synchronize()
        with torch.cuda.device(self.device):  # this thread's current GPU (cuda:N): no context made on GPU 0
            if self._stream is None:
                self._stream = torch.cuda.Stream(self.device)
            pinned = {k: _pinned_copy(self._sets[turn], k, v) for k, v in arrays.items()}
            with torch.cuda.stream(self._stream):
                staged = Staged({k: buf.to(self.device, non_blocking=True) for k, buf in pinned.items()})
                staged.event = torch.cuda.Event()
                staged.event.record(self._stream)
        self._set_copied[turn] = staged.event
        return staged

    def _use(self, staged: Staged) -> dict[str, torch.Tensor]:
        """A staged batch on the learner's stream: wait for its copies (on the GPU, not the host), and tell the
        allocator that stream uses the tensors (they were allocated on the copy stream)."""
        if staged.event is not None:
            stream = torch.cuda.current_stream(self.device)
            stream.wait_event(staged.event)
            for t in staged.values():
                t.record_stream(stream)
        return dict(staged)


def _cpu_tensors(arrays: Mapping[str, np.ndarray]) -> dict[str, torch.Tensor]:
    out = {}
    for k, v in arrays.items():
        v = np.ascontiguousarray(v)
        out[k] = torch.from_numpy(v if v.flags.writeable else v.copy())
    return out


def _pinned_copy(buffers: dict[str, torch.Tensor], key: str, array) -> torch.Tensor:
    """``array`` copied into the pinned buffer kept for ``key`` in ``buffers`` (made, or remade for a new shape
    or dtype, as needed)."""
    v = np.asarray(array)
    buf = buffers.get(key)
    if buf is None or tuple(buf.shape) != v.shape or buf.dtype != _torch_dtype(v.dtype):
        buf = buffers[key] = torch.empty(v.shape, dtype=_torch_dtype(v.dtype), pin_memory=True)
    buf.numpy()[...] = v
    return buf


class WeightsToHost:
    """A GPU learner's weights to the host without waiting for the GPU (the trainer's publish on a GPU).

    ``start`` queues a copy of the flat weights into one of two pinned buffers on the learner's stream, right
    after an update: in stream order it follows that update's optimizer step and precedes the next update's
    kernels, so it needs no snapshot, and the host does not wait for the step to finish (``get_weights``
    would). ``ready`` hands the copy over once its event has completed; the trainer publishes it then, at the
    latest after the next update, whose one synchronisation comes after the copy in stream order. A copy is
    never dropped for a newer one: the buffer a service may still read lazily (``inline`` reads weights when
    an actor pulls) is always the last one published, never the one being written."""

    def __init__(self, device: torch.device):
        self.device = device
        self._buffers: list[torch.Tensor | None] = [None, None]
        self._turn = 0
        self._pending = None  # (buffer index, event, version)

    def start(self, weights: torch.Tensor, version: int) -> None:
        if self._pending is not None:
            raise RuntimeError("a weights copy is still pending: hand it over with ready(wait=True) first")
        turn, self._turn = self._turn, 1 - self._turn
        buf = self._buffers[turn]
        if buf is None or buf.numel() != weights.numel():
            buf = self._buffers[turn] = torch.empty(weights.numel(), dtype=torch.float32,
                                                    pin_memory=self.device.type == "cuda")
        buf.copy_(weights.detach().reshape(-1), non_blocking=True)
        event = None  # on the CPU the copy is done when copy_ returns
        if self.device.type == "cuda":
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(self.device))
        self._pending = (turn, event, version)

    def ready(self, wait: bool = False) -> tuple[np.ndarray, int] | None:
        """(weights, version) of the pending copy if it has completed (or, with ``wait``, once it has); the
        array is a read-only view of the pinned buffer, valid until the copy after next starts."""
        if self._pending is None:
            return None
        turn, event, version = self._pending
        if event is not None:
            if not wait and not event.query():
                return None
            event.synchronize()
        self._pending = None
        view = self._buffers[turn].numpy()
        view.flags.writeable = False
        return view, version


def _torch_dtype(dtype: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.empty(0, dtype=dtype)).dtype
