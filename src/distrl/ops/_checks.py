"""Argument checks shared by the ops: a wrong shape fails at entry, naming the argument; and ``all_finite``, the
NaN-and-inf check a learner makes before data or weights go anywhere."""

from __future__ import annotations

from collections.abc import Iterable

import torch


def check_tensor(name: str, x, rank: int | None = None, shape: tuple | None = None) -> None:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if rank is not None and x.dim() != rank:
        raise ValueError(f"{name} must have rank {rank}, got shape {tuple(x.shape)}")
    if shape is not None and tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(x.shape)}")


def check_float(name: str, x: torch.Tensor) -> None:
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got {x.dtype}")


def check_time_major(names_and_tensors: dict, reference: str) -> tuple[int, int]:
    """All tensors are floating ``[T, B]`` with the shape of ``reference``; returns (T, B)."""
    ref = names_and_tensors[reference]
    check_tensor(reference, ref, rank=2)
    for name, x in names_and_tensors.items():
        check_tensor(name, x, shape=tuple(ref.shape))
        check_float(name, x)
        if x.dtype != ref.dtype:
            raise ValueError(f"{name} has dtype {x.dtype}, expected {ref.dtype} like {reference}")
    return ref.shape[0], ref.shape[1]


def check_lam(lam, shape: tuple, dtype) -> torch.Tensor | float:
    """``lam`` is a float in [0, 1] or a ``[T, B]`` tensor of per-step values."""
    if isinstance(lam, torch.Tensor):
        check_tensor("lam", lam, shape=shape)
        return lam.to(dtype)
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    return lam


def all_finite(tensors: Iterable[torch.Tensor]) -> bool:
    """True when no floating-point tensor among ``tensors`` holds a NaN or an infinity (integer and bool tensors
    cannot)."""
    return all(bool(torch.isfinite(t).all()) for t in tensors if t.is_floating_point())
