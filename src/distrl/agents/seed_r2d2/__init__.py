"""SEED RL with R2D2's learner: env-only actors, a central inference server keeping each env's LSTM state
and cutting its stream into R2D2's sequences, a prioritized sequence replay, R2D2's learner."""

from distrl.agents.seed_r2d2.builder import build
from distrl.agents.seed_r2d2.config import SeedR2D2Config as Config
from distrl.agents.seed_r2d2.networks import make_model

# R2D2's budget on the memory task (seeds 0-3 on `local`: at 500k 222, 500, 275, 236; at 1M 429, 500, 500, 496)
DEFAULT_TOTAL_STEPS = 1_000_000
DOC = "SEED RL's central inference with R2D2's recurrent replay learner (the SEED paper's headline agent)."

RENAMED_SETTINGS: dict = {}  # a new system: nothing renamed
OLDER_RUN_DEFAULTS: dict = {}  # a new system: no older runs

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
