"""APPO as a program: IMPALA's (``agents/impala/builder.py``) with APPO's learner.

    actor 0..N-1: [vector env + local policy copy] --unroll(T, behaviour logp)--> channel "unrolls"
    learner: takes B unrolls, V-trace targets once, epochs x minibatches clipped-surrogate updates,
             publishes versioned weights --> actors pull between unrolls
"""

from __future__ import annotations

from distrl.agents.appo.config import APPOConfig
from distrl.agents.appo.learner import APPOLearner
from distrl.agents.appo.networks import make_model
from distrl.agents.common.passes import check_minibatches
from distrl.agents.impala.builder import build as impala_program
from distrl.core.program import Program
from distrl.core.system import BuildContext
from distrl.envs import EnvSpec


def _learner(env: EnvSpec, cfg: APPOConfig, handles: dict) -> APPOLearner:
    return APPOLearner(cfg, make_model(env, cfg))


def build(cfg: APPOConfig, ctx: BuildContext) -> Program:
    check_minibatches(cfg, cfg.num_envs * cfg.batch_unrolls, "num_envs * batch_unrolls")
    return impala_program(cfg, ctx, make_learner=_learner)
