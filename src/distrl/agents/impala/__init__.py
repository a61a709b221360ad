"""IMPALA: actors with local policy copies send unrolls; one learner corrects the lag with V-trace."""

from distrl.agents.impala.builder import build, make_model
from distrl.agents.impala.config import ImpalaConfig as Config

DEFAULT_TOTAL_STEPS = 1_500_000  # solves CartPole-v1 with the default config (README)
DOC = "Importance-weighted actor-learner: N actors send unrolls, a V-trace learner (arXiv:1802.01561)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
