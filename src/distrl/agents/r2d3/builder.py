"""R2D3 as a program: R2D2's, with the demo replay the ``demos`` setting adds.

    actor i: eps_i-greedy recurrent policy --sequences--> replay "replay" (prioritized)
    demos: a Minari dataset --sequences, zero stored state--> replay "demos" (prioritized on its own,
           filled once when the run starts, saved in checkpoints)
    learner: each batch element from "demos" with probability demo_ratio, else from "replay"; R2D2's loss;
             each replay gets its own elements' priorities back
"""

from __future__ import annotations

from distrl.agents.r2d2.builder import build as build_r2d2
from distrl.agents.r2d3.config import R2D3Config
from distrl.core.program import Program
from distrl.core.system import BuildContext
from distrl.errors import ConfigError


def build(cfg: R2D3Config, ctx: BuildContext) -> Program:
    if not cfg.demos:
        raise ConfigError("r2d3 learns from demonstrations: --set demos=DIR (a Minari dataset, e.g. from `distrl "
                          "record "
                          "... --out DIR`); without them it is r2d2")
    return build_r2d2(cfg, ctx)
