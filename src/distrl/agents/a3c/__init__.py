"""A3C: asynchronous advantage actor-critic, gradients applied Hogwild to a shared model."""

from distrl.agents.a3c.builder import build
from distrl.agents.a3c.config import A3CConfig as Config
from distrl.agents.a3c.networks import make_model

DEFAULT_TOTAL_STEPS = 1_000_000
DOC = "Asynchronous advantage actor-critic: workers apply n-step gradients lock-free to a shared model (arXiv:1602.01783)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {}  # no setting added that older runs would need a value for

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
