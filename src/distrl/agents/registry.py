"""The systems distrl can train, by name. Each is a package that is a ``core.system.SystemModule``:
``Config``, ``DOC``, ``ACTIONS`` (the action spaces it takes), ``DEFAULT_TOTAL_STEPS``, ``RENAMED_SETTINGS``,
``OLDER_RUN_DEFAULTS``, ``build``
(returns a program) and ``make_model``; optionally ``RUN_DEFAULTS`` (run settings the system fills) and
``saved_as`` (what a run saved under its name by an older distrl is now: ``saved_run``). A builder module whose
programs run on fewer than every runtime says which in its ``RUNTIMES`` (``system_runtimes``)."""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

from distrl.errors import ConfigError

SYSTEMS = {
    "a2c": "distrl.agents.a2c",
    "ppo": "distrl.agents.ppo",
    "a3c": "distrl.agents.a3c",
    "impala": "distrl.agents.impala",
    "appo": "distrl.agents.appo",
    "apex-dqn": "distrl.agents.apex_dqn",
    "apex-ddpg": "distrl.agents.apex_ddpg",
    "gorila": "distrl.agents.gorila",
    "seed": "distrl.agents.seed",
    "es": "distrl.agents.es",
    "r2d2": "distrl.agents.r2d2",
    "seed-r2d2": "distrl.agents.seed_r2d2",
    "r2d3": "distrl.agents.r2d3",
    "qt-opt": "distrl.agents.qt_opt",
}


def get_system(name: str) -> ModuleType:
    if name not in SYSTEMS:
        close = difflib.get_close_matches(name, list(SYSTEMS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"unknown system '{name}'{hint} (valid: {', '.join(SYSTEMS)})")
    return importlib.import_module(SYSTEMS[name])


def system_runtimes(name: str) -> tuple[str, ...]:
    """The runtimes a system's programs run on, without building one (``distrl list``): its builder module's
    ``RUNTIMES`` (the tuple it gives its programs), else every runtime."""
    from distrl.core.program import RUNTIMES

    builder = importlib.import_module(get_system(name).build.__module__)
    return tuple(getattr(builder, "RUNTIMES", RUNTIMES))


# a system's former name (distrl 0.2), which its runs' checkpoints may still say after their config was migrated
FORMER_NAMES = {"ppo": "a2c", "appo": "impala"}


def saved_run(saved: dict) -> dict:
    """A run dir's saved config as this version reads it: a run saved under a system's name while that name ran
    another algorithm (``a2c`` PPO's passes, ``impala`` APPO's, in distrl 0.2) is the system that runs it now, with
    its settings as saved; ``saved`` itself is left as read."""
    system = saved.get("system")
    moved = getattr(get_system(system), "saved_as", None) if system in SYSTEMS else None
    answer = moved(dict(saved.get("system_config") or {})) if moved else None
    if answer is None:
        return saved
    now, system_config = answer
    return {**saved, "system": now, "system_config": system_config, "saved_as": system}
