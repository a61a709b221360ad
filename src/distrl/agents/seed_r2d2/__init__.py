"""SEED RL with R2D2's learner: env-only actors, a central inference server keeping each env's LSTM state
and cutting its stream into R2D2's sequences, a prioritized sequence replay, R2D2's learner."""

from distrl.agents.r2d2 import RUN_DEFAULTS
from distrl.agents.seed_r2d2.builder import build
from distrl.agents.seed_r2d2.config import SeedR2D2Config as Config
from distrl.agents.seed_r2d2.networks import make_model

# R2D2's budget, with R2D2's defaults and its actors' weight period (config.py)
DEFAULT_TOTAL_STEPS = 1_000_000
# RUN_DEFAULTS: R2D2's periodic evaluation, whose best weights distrl eval plays
ACTIONS = ('Discrete',)  # the action spaces it takes (observations: any that gymnasium flattens into a vector)
LEGAL_ACTION_MASKS = True  # illegal actions: no greedy pick, no random draw, no target (Q at ILLEGAL_Q)
DOC = "SEED RL's central inference with R2D2's recurrent replay learner (the SEED paper's headline agent)."

RENAMED_SETTINGS: dict = {}  # a new system: nothing renamed
OLDER_RUN_DEFAULTS: dict = {"obs_norm": False}  # runs saved before the normaliser existed ran without it

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "RUN_DEFAULTS", "Config", "build", "make_model"]
