"""A3C: asynchronous advantage actor-critic, gradients applied Hogwild to a shared model."""

from distrl.agents.a3c.builder import build
from distrl.agents.a3c.config import A3CConfig as Config
from distrl.agents.a3c.networks import make_model

# CartPole-v1 with the default config (docs/systems/a3c.md)
DEFAULT_TOTAL_STEPS = 1_000_000
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = ("Asynchronous advantage actor-critic: workers apply n-step gradients lock-free to a shared model "
       "(arXiv:1602.01783).")

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# runs saved before PPO's passes existed made the paper's update; runs saved by 0.2 with them resume with them
OLDER_RUN_DEFAULTS: dict = {"epochs": 1, "minibatches": 1}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
