"""PPO: A2C's synchronous actor with the clipped surrogate over several passes of each batch."""

from distrl.agents.ppo.builder import build
from distrl.agents.ppo.config import PPOConfig as Config
from distrl.agents.ppo.networks import make_model

DEFAULT_TOTAL_STEPS = 300_000  # solves CartPole-v1 with the default config (docs/systems/ppo.md); LunarLander takes 2M
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = "Proximal policy optimisation: the clipped surrogate over 4 passes of each synchronous batch (arXiv:1707.06347)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# ppo runs saved by distrl 0.2 were saved as a2c (agents/a2c: saved_as): a setting such a run lacks ran with a2c's
# value then (before PopArt existed, c6f25de, without it); one saved before minibatch_size existed cut its minibatches
# at 64 steps
OLDER_RUN_DEFAULTS: dict = {"epochs": 1, "minibatches": 1, "value_norm": False, "minibatch_size": 64}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
