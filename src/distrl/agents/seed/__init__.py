"""SEED RL: actors only step envs; a central inference server batches their observations, acts, and
assembles unrolls for IMPALA's V-trace learner."""

from distrl.agents.impala.config import ONE_STEP_VTRACE
from distrl.agents.seed.builder import build
from distrl.agents.seed.config import SeedConfig as Config
from distrl.agents.seed.networks import make_model

DEFAULT_TOTAL_STEPS = 200_000  # solves CartPole-v1 with the default config (README); LunarLander takes 1M
DOC = "Scalable efficient deep RL: env-only actors, central batched inference, V-trace learner (arXiv:1910.06591)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# a saved run without a setting ran with its value then: the one-step config with 128 envs per actor, RMSProp's
# epsilon 1e-5 before it became a setting
OLDER_RUN_DEFAULTS: dict = {**ONE_STEP_VTRACE, "num_envs": 128, "optimizer_eps": 1e-5}

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
