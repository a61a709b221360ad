"""The runtime: places a program's roles and services and runs it.

- ``trainer.py``: :class:`Trainer`, the steppable run (start, step, stats, set_hyperparameters, pause,
  checkpoint, close); metrics, checkpoints and progress hang on it as observers (``run/observers.py``);
- ``backends/``: ``inline``, ``local``, ``ray``, one class each behind ``core.protocols.Backend``,
  registered in ``backends/__init__.py``; what they share (placement, service hosting, batching); process hygiene
  for ``local``; and everything else that runs elsewhere: learner replicas (``replicas.py``) and pools of trainers
  for PBT and the league (``pools.py``). No other module starts a process or a Ray actor;
- ``services/``: one adapter per service per transport (weights, constant arrays, parameter server, replay,
  inference); they import nothing from ``backends/`` (the backends build them, not the other way round);
- ``shared_memory.py``: named arrays in POSIX shared memory, the one transport primitive both use;
- ``learners.py`` (data-parallel learners, ``num_learners``), ``compute.py`` (a process's share of the cores, set
  where it starts), ``allocator.py`` (keeping freed memory in the process);
- ``run/``: the trainer's parts (the run directory, checkpoints and state, metrics, progress, the best policy, the
  ledger and summary, hyperparameters, the release and pace rules, the non-finite watch, overlapped transfers, the
  autoscaler).
"""

from distrl.runtime.backends import RUNTIMES, make_backend
from distrl.runtime.run.observers import (
    CheckpointObserver,
    MetricsObserver,
    Observer,
    ProgressObserver,
)
from distrl.runtime.trainer import Trainer

__all__ = ["RUNTIMES", "CheckpointObserver", "MetricsObserver", "Observer", "ProgressObserver", "Trainer",
           "make_backend"]
