"""OpenAI ES: workers evaluate antithetic parameter perturbations and send back only scalars."""

from distrl.agents.es.builder import build
from distrl.agents.es.config import EsConfig as Config
from distrl.agents.es.networks import make_model

DEFAULT_TOTAL_STEPS = 1_000_000  # solves CartPole-v1 with the default config (docs/systems/es.md)
ACTIONS = ('Discrete', 'Box')  # the action spaces it takes (Box: bounded, 1-d)
LEGAL_ACTION_MASKS = False  # two-player games' legal-action masks: not honoured yet (the actor-critic systems do)
DOC = "Evolution strategies: workers return (noise index, R+, R-) for a shared noise table (arXiv:1703.03864)."

RENAMED_SETTINGS: dict = {}  # a new system: no run was saved under other names
OLDER_RUN_DEFAULTS: dict = {}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
