"""A trainer's state: written to and restored from checkpoints, and copied in memory (what PBT's exploit moves
between trainers). Both take the learner's and the services' modules and optimizers by name."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from distrl.errors import ConfigError
from distrl.runtime.run.checkpoint import (
    check_counters,
    inspect_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from distrl.runtime.services.base import Stateful, stateful


def parts(trainer) -> tuple[dict, dict]:
    """(modules, optimizers) of the learner and every service, by name."""
    modules, optimizers = trainer.learner.checkpoint_parts() if trainer.learner else ({}, {})
    for adapter in stateful(trainer.backend.services().values()):
        m, o = adapter.checkpoint_parts()
        modules, optimizers = {**modules, **m}, {**optimizers, **o}
    return modules, optimizers


def copy_state(trainer) -> dict[str, Any]:
    for adapter in stateful(trainer.backend.services().values()):
        adapter.sync()
    modules, optimizers = parts(trainer)
    return {"modules": {k: {n: t.detach().clone() for n, t in m.state_dict().items()} for k, m in modules.items()},
            "optimizers": {k: copy.deepcopy(o.state_dict()) for k, o in optimizers.items()},
            "hyperparameters": dict(trainer.settings.base)}


def load_state(trainer, state: dict[str, Any]) -> None:
    """``copy_state``'s state into ``trainer`` (its base hyperparameters too; the caller pushes them)."""
    if trainer.learner is None:
        raise ConfigError(f"{trainer.system} learns in its workers (a parameter server): its state cannot be loaded "
                          "in memory")
    modules, optimizers = parts(trainer)
    if set(modules) != set(state["modules"]) or set(optimizers) != set(state["optimizers"]):
        raise ValueError(f"state of {sorted(state['modules'])} / {sorted(state['optimizers'])} does not fit "
                         f"{sorted(modules)} / {sorted(optimizers)}")
    for name, module in modules.items():
        module.load_state_dict(state["modules"][name])
    for name, optimizer in optimizers.items():  # load_state_dict keeps the given tensors: copy them first
        optimizer.load_state_dict(copy.deepcopy(state["optimizers"][name]))
    base = trainer.settings.base
    base.update({k: float(v) for k, v in state["hyperparameters"].items() if k in base})


def checkpoint(trainer) -> Path:
    """A checkpoint of ``trainer`` in ``run_dir/checkpoints``, named by env steps (by learner updates where the run
    steps no env, offline, so that names still advance)."""
    adapters = {name: a for name, a in trainer.backend.services().items() if isinstance(a, Stateful)}
    for adapter in adapters.values():
        adapter.sync()
    modules, optimizers = parts(trainer)
    counters = {**trainer.identity, "env_steps": trainer.env_steps, "wall_s": trainer.wall_s,
                "updates": trainer.updates, "actor_restarts": trainer.restarts,
                "episodes": trainer.ledger.episodes.state(),
                "learner": trainer.learner.counters() if trainer.learner else {},
                "services": {name: adapters[name].counters() if name in adapters else {}
                             for name in trainer.backend.services()},
                "hyperparameters": dict(trainer.settings.base)}

    def save_services(folder: Path) -> None:
        for adapter in adapters.values():
            adapter.save(folder)

    position = trainer.updates if trainer.program.max_updates is not None else trainer.env_steps
    return save_checkpoint(trainer.run_dir / "checkpoints", position, modules, optimizers, counters,
                           keep=trainer.cfg.keep_checkpoints, extra=save_services)


def restore(trainer, folder: Path) -> None:
    """Load checkpoint ``folder`` into ``trainer`` (its learner and services built, nothing started); a checkpoint
    that does not fit the run (another system or env, shapes, a service's saved state) is a ConfigError."""
    newest, passed_over = list_checkpoints(trainer.run_dir / "checkpoints")[-1], ""
    if newest != folder:  # a newer one is incomplete (a crash while writing) or holds non-finite weights
        why = inspect_checkpoint(newest)[1] or "its weights are not finite"
        passed_over = f"{newest.name} cannot be used ({why}); "
    meta, why = inspect_checkpoint(folder)
    if meta is None:  # (changed since it was chosen)
        raise ConfigError(f"checkpoint {folder} cannot be used ({why})")
    # the run it belongs to (system, env) is checked before any weight is read: another env's weights would
    # otherwise fail as shapes that do not fit, which says less
    check_counters(meta["counters"], trainer.identity, folder, trainer.former_identity)
    modules, optimizers = parts(trainer)
    try:
        saved = load_checkpoint(folder, modules, optimizers)
    except Exception as e:  # a foreign or damaged checkpoint: shapes or files that do not fit this run
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        raise ConfigError(f"checkpoint {folder} does not fit this run ({first})") from None
    trainer.env_steps, trainer.restarts = saved["env_steps"], saved["actor_restarts"]
    trainer.wall_offset = saved["wall_s"]
    trainer.ledger.episodes.load(saved.get("episodes", {}))
    if trainer.learner is not None:
        trainer.learner.load_counters(saved.get("learner", {}))
    services = saved.get("services")
    for name, adapter in trainer.backend.services().items():
        if not isinstance(adapter, Stateful):
            continue
        # checkpoints from before services kept their counters with the learner's
        adapter.load_counters(services.get(name, {}) if services is not None else saved.get("learner", {}))
        try:
            adapter.load(folder)
        except Exception as e:  # saved by an older layout, or by a run with other settings (another dataset)
            raise ConfigError(f"checkpoint {folder}: the saved '{name}' does not fit this run's "
                              f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    base = trainer.settings.base
    base.update({k: v for k, v in saved.get("hyperparameters", {}).items() if k in base})
    print(f"distrl: {passed_over}resuming {trainer.run_dir} from {folder.name} ({trainer.env_steps:,} env steps)",
          file=sys.stderr, flush=True)
