"""SEED RL with R2D2's learner: env-only actors, a central inference server keeping each env's LSTM state
and cutting its stream into R2D2's sequences, a prioritized sequence replay, R2D2's learner."""

from distrl.agents.seed_r2d2.builder import build
from distrl.agents.seed_r2d2.config import SeedR2D2Config as Config
from distrl.agents.seed_r2d2.networks import make_model

# R2D2's former budget on the memory task, with the values SEED + R2D2 keeps; at R2D2's 1M the bench's local cells
# were better, its inline and ray ones worse (seeds 0-2: inline 169, 500, 199; local 468, 475, 500; ray 219, 243,
# 500; 500k: 232, 440, 428 / 257, 500, 495 / 256, 500, 344; benchmarks/reports/full-seed-r2d2-1m-2026-11-28)
DEFAULT_TOTAL_STEPS = 500_000
DOC = "SEED RL's central inference with R2D2's recurrent replay learner (the SEED paper's headline agent)."

RENAMED_SETTINGS: dict = {}  # a new system: nothing renamed
OLDER_RUN_DEFAULTS: dict = {}  # a new system: no older runs

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
