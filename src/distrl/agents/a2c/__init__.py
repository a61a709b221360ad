"""A2C: synchronous advantage actor-critic, the baseline every other system is measured against."""

from distrl.agents.a2c.builder import build, make_model
from distrl.agents.a2c.config import A2CConfig as Config

DEFAULT_TOTAL_STEPS = 1_000_000  # solves CartPole-v1 with the default config (README)
DOC = "Synchronous advantage actor-critic over a numpy-vectorised env (GAE or n-step returns)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
