"""What a system module (``distrl/agents/<system>/``) provides, and what its builder is given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from distrl.core.program import Program


@dataclass(frozen=True)
class BuildContext:
    """Everything a builder needs besides its own config: the env, the budget, the evaluator's settings."""

    env_id: str
    env: Any  # distrl.envs.EnvSpec: spaces, shapes, dtypes
    total_steps: int
    eval_interval_steps: int = 0  # 0: no periodic evaluator
    eval_episodes: int = 10
    autoscale: bool = False  # the actors are built for max_actors and any first few may run (autoscale=on)


class SystemModule(Protocol):
    Config: type  # a frozen dataclass of settings (distrl.config.setting fields)
    DOC: str
    ACTIONS: tuple[str, ...]  # the gymnasium action spaces it takes (Discrete, MultiDiscrete, MultiBinary, Box)
    LEGAL_ACTION_MASKS: bool  # it gives a game's illegal actions no probability (envs/multi_agent.py)
    DEFAULT_TOTAL_STEPS: int
    # optional saved_as(system_config) -> (system, system_config) | None: a run saved under its name by an older
    # distrl that is now another system's (agents/registry.saved_run)
    RENAMED_SETTINGS: Mapping[str, str]  # settings renamed since older runs were saved: old -> new
    OLDER_RUN_DEFAULTS: Mapping[str, Any]  # values that reproduce runs saved before a setting existed
    # optional RUN_DEFAULTS: Mapping[str, Any]: run settings left unset that the system fills (its evaluation)

    def build(self, cfg, ctx: BuildContext) -> Program:
        """The system as a program of roles and services (assembly only)."""

    def make_model(self, env, cfg):
        """The network a checkpoint's ``model`` holds; ``model.greedy(obs)`` acts (evaluation, ``load_policy``)."""
