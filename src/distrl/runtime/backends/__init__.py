"""The runtimes, registered in one place: one backend class each, imported on demand (so ``inline`` and
``local`` never import Ray or gRPC)."""

from __future__ import annotations

import importlib

from distrl.core.program import RUNTIMES

_CLASSES = {"inline": ("distrl.runtime.backends.inline", "InlineBackend"),
            "local": ("distrl.runtime.backends.local", "LocalBackend"),
            "ray": ("distrl.runtime.backends.ray", "RayBackend")}
assert tuple(_CLASSES) == RUNTIMES


def backend_class(runtime: str):
    if runtime not in _CLASSES:
        raise ValueError(f"unknown runtime {runtime!r} (valid: {', '.join(RUNTIMES)})")
    module, name = _CLASSES[runtime]
    return getattr(importlib.import_module(module), name)


def refusal(runtime: str, program, num_learners: int = 1) -> str | None:
    """Why ``runtime`` cannot run ``program`` with ``num_learners`` learners (one line), or None: each backend's own
    rule, asked before anything is written or started."""
    return backend_class(runtime).refuses(program, num_learners)


def make_backend(runtime: str, seed: int, torch_threads: int = 1, ray_address: str | None = None,
                 step_timeout_s: float = 300.0, max_restarts: int = 10, token: str = "", shared=None):
    """``shared``: handles of services shared with other programs (``share``), by name, given to every component."""
    cls = backend_class(runtime)
    watch = {"step_timeout_s": step_timeout_s, "max_restarts": max_restarts}
    options = {"inline": {}, "local": {"torch_threads": torch_threads, **watch},
               "ray": {"torch_threads": torch_threads, "address": ray_address, "token": token, **watch}}[runtime]
    backend = cls(seed, **options)
    backend.shared = dict(shared or {})
    return backend


def share(runtime: str, service, token: str, bind: str | None = None):
    """Host ``service`` (``core.protocols.SharedService``) for programs on ``runtime``: its ``handle`` goes to each of
    them (``make_trainer(shared=...)``), ``close()`` ends it. ``bind`` (HOST:PORT) where a network host listens."""
    return backend_class(runtime).share(service, token, bind)


__all__ = ["RUNTIMES", "backend_class", "make_backend", "refusal", "share"]
