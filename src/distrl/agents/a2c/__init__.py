"""A2C: synchronous advantage actor-critic, the baseline every other system is measured against."""

from distrl.agents.a2c.builder import build
from distrl.agents.a2c.config import A2CConfig as Config
from distrl.agents.a2c.networks import make_model

DEFAULT_TOTAL_STEPS = 150_000  # solves CartPole-v1 with the default config (README); LunarLander takes 1M
DOC = "Synchronous advantage actor-critic over a numpy-vectorised env (GAE, PPO's passes by default)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# runs saved before PPO's passes: one update per batch; before PopArt existed (c6f25de): without it
OLDER_RUN_DEFAULTS: dict = {"epochs": 1, "minibatches": 1, "value_norm": False}

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
