"""PPO as a program: A2C's (``agents/a2c/builder.py``), one actor and the learner taking turns, with PPO's
learner.

    actor --unroll (T steps of num_envs)--> channel "unrolls" --> learner: GAE once, epochs x minibatches
      ^                                                                   clipped-surrogate updates --> weights
      +------------------------ pulls the newest weights before every unroll ------------------------+
"""

from __future__ import annotations

from distrl.agents.a2c.builder import RUNTIMES
from distrl.agents.a2c.builder import build as a2c_program
from distrl.agents.common.passes import check_minibatches
from distrl.agents.ppo.config import PPOConfig
from distrl.agents.ppo.learner import PPOLearner
from distrl.agents.ppo.networks import make_model
from distrl.core.program import Program
from distrl.core.system import BuildContext
from distrl.envs import EnvSpec

__all__ = ["RUNTIMES", "build"]  # A2C's runtimes: the same program


def _learner(env: EnvSpec, cfg: PPOConfig, handles: dict) -> PPOLearner:
    return PPOLearner(cfg, make_model(env, cfg))


def build(cfg: PPOConfig, ctx: BuildContext) -> Program:
    check_minibatches(cfg, cfg.num_envs, "num_envs")
    return a2c_program(cfg, ctx, make_learner=_learner)
