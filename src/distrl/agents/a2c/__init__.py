"""A2C: synchronous advantage actor-critic, one update per batch (the baseline every other system is measured
against)."""

from distrl.agents.a2c.builder import build
from distrl.agents.a2c.config import A2CConfig as Config
from distrl.agents.a2c.networks import make_model

DEFAULT_TOTAL_STEPS = 1_000_000  # CartPole-v1 with the default config in a few seconds (docs/systems/a2c.md)
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = "Synchronous advantage actor-critic: one update per batch over a numpy-vectorised env (GAE or n-step)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# runs saved before PopArt existed (c6f25de) ran without it
OLDER_RUN_DEFAULTS: dict = {"value_norm": False}
# runs saved as a2c while its default was PPO's passes (0.2.0) are PPO runs: they load as ppo
PASSES = ("ppo_clip", "epochs", "minibatches")


def saved_as(system_config: dict) -> tuple[str, dict] | None:
    """What an a2c run saved by distrl 0.2 is now: ``ppo`` where it made several updates per batch, else a2c
    without PPO's settings (with one update they changed nothing); None: nothing to move."""
    if not any(k in system_config for k in PASSES):
        return None
    if system_config.get("epochs", 1) == 1 and system_config.get("minibatches", 1) == 1:
        return "a2c", {k: v for k, v in system_config.items() if k not in PASSES}
    return "ppo", system_config


__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "PASSES",
           "RENAMED_SETTINGS", "Config", "build", "make_model", "saved_as"]
