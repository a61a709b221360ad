"""GORILA: many DQN learners send gradients to a sharded parameter server that drops stale ones."""

from distrl.agents.gorila.builder import build, make_model
from distrl.agents.gorila.config import GorilaConfig as Config

DEFAULT_TOTAL_STEPS = 400_000
DOC = "General Reinforcement Learning Architecture: bundled actor/replay/learner, sharded parameter server (arXiv:1507.04296)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
