"""A3C: asynchronous advantage actor-critic, gradients applied Hogwild to a shared model."""

from distrl.agents.a3c.builder import build, make_model
from distrl.agents.a3c.config import A3CConfig as Config

DEFAULT_TOTAL_STEPS = 1_000_000
DOC = "Asynchronous advantage actor-critic: workers apply n-step gradients lock-free to a shared model (arXiv:1602.01783)."

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "build", "make_model"]
