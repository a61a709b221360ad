"""Ape-X DQN: many epsilon-greedy actors, one learner on distributed prioritized replay."""

from distrl.agents.apex_dqn.builder import build, make_model
from distrl.agents.apex_dqn.config import ApexDQNConfig as Config

DEFAULT_TOTAL_STEPS = 600_000
DOC = "Distributed prioritized replay with n-step double-Q, dueling, epsilon ladder (arXiv:1803.00933)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
