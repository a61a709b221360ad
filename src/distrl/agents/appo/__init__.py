"""APPO: IMPALA's actors and V-trace targets with PPO's clipped surrogate over several passes of each batch."""

from distrl.agents.appo.builder import build
from distrl.agents.appo.config import APPOConfig as Config
from distrl.agents.appo.networks import make_model
from distrl.agents.impala import OLDER_RUN_DEFAULTS as IMPALA_OLDER_RUN_DEFAULTS
from distrl.agents.impala import PASSES

DEFAULT_TOTAL_STEPS = 500_000  # solves CartPole-v1 with the default config (docs/systems/appo.md); LunarLander takes 2M
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = ("Asynchronous PPO: IMPALA's actors, V-trace targets and PPO's clipped surrogate over 4 passes of each batch "
       "(RLlib's and Sample Factory's APPO).")

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# appo runs saved by distrl 0.2 were saved as impala (agents/impala: saved_as): a setting such a run lacks ran with
# impala's value then; one saved before minibatch_size existed cut its minibatches of steps at 64, and one saved before
# obs_norm existed ran without the normaliser (its checkpoint has none)
OLDER_RUN_DEFAULTS: dict = {**IMPALA_OLDER_RUN_DEFAULTS, **PASSES, "minibatch_size": 64, "obs_norm": False}

__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "RENAMED_SETTINGS",
           "Config", "build", "make_model"]
