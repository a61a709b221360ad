"""SEED RL: actors only step envs; a central inference server batches their observations, acts, and
assembles unrolls for IMPALA's V-trace learner."""

from distrl.agents.seed.builder import build, make_model
from distrl.agents.seed.config import SeedConfig as Config

DEFAULT_TOTAL_STEPS = 1_500_000  # solves CartPole-v1 with the default config (README)
DOC = "Scalable efficient deep RL: env-only actors, central batched inference, V-trace learner (arXiv:1910.06591)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
