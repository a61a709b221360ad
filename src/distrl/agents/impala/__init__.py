"""IMPALA: actors with local policy copies send unrolls; one learner corrects the lag with V-trace."""

from distrl.agents.impala.builder import build
from distrl.agents.impala.config import ImpalaConfig as Config
from distrl.agents.impala.networks import make_model

DEFAULT_TOTAL_STEPS = 1_500_000  # solves CartPole-v1 with the default config (README)
DOC = "Importance-weighted actor-learner: N actors send unrolls, a V-trace learner (arXiv:1802.01561)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
OLDER_RUN_DEFAULTS: dict = {"optimizer_eps": 1e-5}  # RMSProp's epsilon before it became a setting

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
