"""SEED RL: actors only step envs; a central inference server batches their observations, acts, and
assembles unrolls for APPO's learner (or, with ``learner=vtrace``, IMPALA's)."""

from distrl.agents.appo import OLDER_RUN_DEFAULTS as APPO_OLDER_RUN_DEFAULTS
from distrl.agents.seed.builder import build
from distrl.agents.seed.config import SeedConfig as Config
from distrl.agents.seed.networks import make_model

DEFAULT_TOTAL_STEPS = 300_000  # solves CartPole-v1 with the default config (docs/systems/seed.md); LunarLander takes 2M
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = ("Scalable efficient deep RL: env-only actors, central batched inference, an APPO or V-trace learner "
       "(arXiv:1910.06591).")

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# a saved run without a setting ran with its value then: the one-step config with 128 envs per actor, RMSProp's
# epsilon 1e-5 before it became a setting; APPO's learner before `learner` existed (with the one-step values
# it makes IMPALA's one update)
OLDER_RUN_DEFAULTS: dict = {**APPO_OLDER_RUN_DEFAULTS, "num_envs": 128, "learner": "appo"}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
