"""Ape-X DQN: many epsilon-greedy actors, one learner on distributed prioritized replay."""

from distrl.agents.apex_dqn.builder import build
from distrl.agents.apex_dqn.config import ApexDQNConfig as Config
from distrl.agents.apex_dqn.networks import make_model

DEFAULT_TOTAL_STEPS = 1_000_000
ACTIONS = ('Discrete',)  # the action spaces it takes (observations: any that gymnasium flattens into a vector)
LEGAL_ACTION_MASKS = True  # illegal actions: no greedy pick, no random draw, no target (Q at ILLEGAL_Q)
DOC = "Distributed prioritized replay with n-step double-Q, dueling, epsilon ladder (arXiv:1803.00933)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {"obs_norm": False,  # runs saved before the normaliser existed ran without it
                            "fixed_head_slack": None,  # and with one Q head,
                            "first_head_expectile": None}  # whose first, where two, learned the mean

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
