"""Ape-X DDPG: Ape-X's distributed prioritized replay for continuous control."""

from distrl.agents.apex_ddpg.builder import build
from distrl.agents.apex_ddpg.config import ApexDDPGConfig as Config
from distrl.agents.apex_ddpg.networks import make_model

DEFAULT_TOTAL_STEPS = 60_000
ACTIONS = ('Box',)  # the action spaces it takes (1-d; vector observations)
LEGAL_ACTION_MASKS = False  # a game's legal-action mask: not honoured yet (the actor-critic systems do)
DOC = "Distributed prioritized replay with a DDPG learner and n-step critic targets (arXiv:1803.00933)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {}  # no setting added that older runs would need a value for

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
