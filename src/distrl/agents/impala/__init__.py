"""IMPALA: actors with local policy copies send unrolls; one learner corrects the lag with V-trace."""

from distrl.agents.impala.builder import build, make_model
from distrl.agents.impala.config import ImpalaConfig as Config

DOC = "Importance-weighted actor-learner: N actors send unrolls, a V-trace learner (arXiv:1802.01561)."

__all__ = ["Config", "DOC", "build", "make_model"]
