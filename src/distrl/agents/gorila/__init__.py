"""GORILA: many DQN learners send gradients to a sharded parameter server that drops stale ones."""

from distrl.agents.gorila.builder import build
from distrl.agents.gorila.config import GorilaConfig as Config
from distrl.agents.gorila.networks import make_model

DEFAULT_TOTAL_STEPS = 400_000
# runs saved before these settings existed used the paper's learner: load and resume them as such
OLDER_RUN_DEFAULTS = {"double_q": False, "dueling": False, "prioritized": False, "optimizer": "rmsprop",
                      "lr_schedule": "constant"}
RENAMED_SETTINGS = {"rmsprop_eps": "optimizer_eps"}
ACTIONS = ('Discrete',)  # the action spaces it takes (observations: any that gymnasium flattens into a vector)
LEGAL_ACTION_MASKS = True  # illegal actions: no greedy pick, no random draw, no target (Q at ILLEGAL_Q)
DOC = ("General Reinforcement Learning Architecture: bundled actor/replay/learner, sharded parameter server "
       "(arXiv:1507.04296).")

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
