"""distrl: distributed deep reinforcement learning on one component model.

    import distrl
    summary = distrl.train("ppo", env="CartPole-v1", total_steps=200_000)
    policy = distrl.load_policy(summary["run_dir"])
    print(distrl.evaluate(summary["run_dir"], episodes=10))

The rest of the Python API: ``make_trainer`` (a run to step yourself), ``record``, ``export``, ``serve``,
``train_league``, ``join`` and ``PolicyClient``. The functions are declared once, in ``distrl.api``; importing distrl
is cheap: they, torch, Gymnasium and the runtime load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.2.0"

_PUBLIC = {"train": "distrl.api", "make_trainer": "distrl.api", "load_policy": "distrl.api", "evaluate": "distrl.api",
           "record": "distrl.api", "export": "distrl.api", "serve": "distrl.api", "join": "distrl.api",
           "train_league": "distrl.api", "PolicyClient": "distrl.deploy.client"}

if TYPE_CHECKING:  # what type checkers, IDEs and the API docs see
    from distrl.api import evaluate, export, join, load_policy, make_trainer, record, serve, train, train_league
    from distrl.deploy.client import PolicyClient


def __getattr__(name: str):
    """The public API, imported on first use."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # once: later lookups do not come back here
        return value
    raise AttributeError(f"module 'distrl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


__all__ = ["PolicyClient", "__version__", "evaluate", "export", "join", "load_policy", "make_trainer", "record",
           "serve", "train", "train_league"]
