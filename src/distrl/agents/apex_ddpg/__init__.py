"""Ape-X DDPG: Ape-X's distributed prioritized replay for continuous control."""

from distrl.agents.apex_ddpg.builder import build, make_model
from distrl.agents.apex_ddpg.config import ApexDDPGConfig as Config

DEFAULT_TOTAL_STEPS = 60_000
DOC = "Distributed prioritized replay with a DDPG learner and n-step critic targets (arXiv:1803.00933)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
