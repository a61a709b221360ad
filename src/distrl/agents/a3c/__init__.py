"""A3C: asynchronous advantage actor-critic, gradients applied Hogwild to a shared model."""

from distrl.agents.a3c.builder import build
from distrl.agents.a3c.config import A3CConfig as Config
from distrl.agents.a3c.networks import make_model

# solves CartPole-v1 with the default config on every runtime (README); LunarLander takes 1M
DEFAULT_TOTAL_STEPS = 300_000
DOC = ("Asynchronous advantage actor-critic: workers apply gradients lock-free to a shared model (arXiv:1602.01783; "
       "PPO's passes over each worker's segment by default).")

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {"epochs": 1, "minibatches": 1}  # runs saved before PPO's passes: the paper's update

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
