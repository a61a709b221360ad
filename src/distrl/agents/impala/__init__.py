"""IMPALA: actors with local policy copies send unrolls; one learner corrects the lag with V-trace."""

from distrl.agents.impala.builder import build
from distrl.agents.impala.config import ONE_STEP_VTRACE
from distrl.agents.impala.config import ImpalaConfig as Config
from distrl.agents.impala.networks import make_model

DEFAULT_TOTAL_STEPS = 250_000  # solves CartPole-v1 with the default config (README); LunarLander takes 1M
DOC = "Importance-weighted actor-learner: N actors send unrolls, a V-trace learner (arXiv:1802.01561)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# a saved run without a setting ran with its value then: the one-step config, RMSProp's epsilon 1e-5 before it
# became a setting
OLDER_RUN_DEFAULTS: dict = {**ONE_STEP_VTRACE, "optimizer_eps": 1e-5}

__all__ = ["DEFAULT_TOTAL_STEPS", "Config", "DOC", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS", "build", "make_model"]
