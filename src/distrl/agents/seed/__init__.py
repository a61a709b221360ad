"""SEED RL: actors only step envs; a central inference server batches their observations, acts, and
assembles unrolls for IMPALA's V-trace learner."""

from distrl.agents.seed.builder import build
from distrl.agents.seed.config import SeedConfig as Config
from distrl.agents.seed.networks import make_model

DEFAULT_TOTAL_STEPS = 1_500_000  # solves CartPole-v1 with the default config (README)
DOC = "Scalable efficient deep RL: env-only actors, central batched inference, V-trace learner (arXiv:1910.06591)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {"optimizer_eps": 1e-5}  # RMSProp's epsilon before it became a setting

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
