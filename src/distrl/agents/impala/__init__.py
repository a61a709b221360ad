"""IMPALA: actors with local policy copies send unrolls; one learner corrects the lag with V-trace, one update per
batch."""

from distrl.agents.impala.builder import build
from distrl.agents.impala.config import ImpalaConfig as Config
from distrl.agents.impala.networks import make_model

# CartPole-v1 with the default config in a few seconds on local (docs/systems/impala.md)
DEFAULT_TOTAL_STEPS = 1_500_000
# the action spaces it takes (observations: any that gymnasium flattens into a vector)
ACTIONS = ('Discrete', 'MultiDiscrete', 'MultiBinary', 'Box')
LEGAL_ACTION_MASKS = True  # illegal actions get no probability (a game's legal-action mask)
DOC = "Importance-weighted actor-learner: N actors send unrolls, one V-trace update per batch (arXiv:1802.01561)."

RENAMED_SETTINGS: dict = {}  # none renamed since runs were first saved
# runs saved as impala while its default was APPO (0.2.0) are APPO runs: they load as appo; these settings' values
# are the one-step update's
PASSES = {"ppo_clip": 0.0, "epochs": 1, "minibatches": 1, "minibatch_by": "stream"}
# a saved run without a setting ran with its value then: the one-step update's, RMSProp's epsilon 1e-5 before it
# became a setting (APPO's OLDER_RUN_DEFAULTS add PASSES)
OLDER_RUN_DEFAULTS: dict = {"num_envs": 64, "unroll_length": 8, "gamma": 0.99, "lr": 2e-3, "lr_schedule": "linear",
                            "optimizer": "rmsprop", "optimizer_eps": 1e-5, "entropy_coef": 0.0, "vtrace_lambda": 1.0,
                            "normalize_advantages": False, "value_norm": False}


def saved_as(system_config: dict) -> tuple[str, dict] | None:
    """What an impala run saved by distrl 0.2 is now: ``appo`` where it clipped or made several updates per batch,
    else impala without APPO's settings (they changed nothing); None: nothing to move."""
    if not any(k in system_config for k in PASSES):
        return None
    one_step = (
        system_config.get("ppo_clip", 0.0) == 0.0
        and system_config.get("epochs", 1) == 1
        and system_config.get("minibatches", 1) <= 1
        and system_config.get("minibatch_by", "stream") == "stream"
    )
    if one_step:
        return "impala", {k: v for k, v in system_config.items() if k not in PASSES}
    return "appo", system_config


__all__ = ["ACTIONS", "DEFAULT_TOTAL_STEPS", "DOC", "LEGAL_ACTION_MASKS", "OLDER_RUN_DEFAULTS", "PASSES",
           "RENAMED_SETTINGS", "Config", "build", "make_model", "saved_as"]
