"""Variants of one system's config on one env (the defaults issue, #22, and R2D2's, #15): for each variant and
seed, the peak of the training mean (last 100 episodes) and where it was, the final training mean, the greedy
evaluation over 20 episodes (mean and worst episode), the wall time and ten points of the curve (evenly spaced,
the first and the last included). Variants are
settings laid over ``normaliser_study.NORMALISED`` (the actor-critic normalised config, itself over IMPALA's and
SEED's one-step config; ``--over defaults``: over the system's defaults; ``--over one-step``: over IMPALA's, SEED's
or A2C's defaults before 2026-11-28, one update per batch); runs one at a time.

    python benchmarks/ac_variants.py --env LunarLander-v3 --steps 2e6 --seeds 0 1 2 \\
        --variants '{"base": {}, "lr 6e-4": {"lr": 6e-4}, "gamma 0.999": {"gamma": 0.999}}'
    python benchmarks/ac_variants.py --system r2d2 --env distrl/CartPoleNoVelocity-v1 --over defaults \\
        --steps 1e6 --seeds 0 1 2 3 --variants '{"base": {}, "importance weights": {"importance_weights": true}}'

With ``--readme`` the table goes into the docs' block for the system, env and budget
(``script:variants-SYSTEM-ENV-STEPS``, e.g. ``script:variants-qt-opt-Pendulum-v1-45k``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, env_label, start, steps_label  # noqa: E402
from normaliser_study import NORMALISED, ONE_STEP, run_cell  # noqa: E402  (the benchmarks folder's own helpers)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default="impala")
    p.add_argument("--env", default="LunarLander-v3")
    p.add_argument("--steps", type=float, default=2e6)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--variants", default='{"base": {}}', help="JSON: name -> settings over the base config")
    p.add_argument("--over", choices=["normalised", "defaults", "one-step"], default="normalised",
                   help="the base config: the actor-critic normalised one, the system's defaults, or (IMPALA, SEED, "
                   "A2C) their defaults before 2026-11-28, one update per batch")
    add_flag(p)
    args = p.parse_args()
    if args.over == "one-step" and args.system not in ONE_STEP:
        p.error(f"--over one-step is a former config of {', '.join(ONE_STEP)}: give --system as one of them")
    block = f"variants-{args.system}-{env_label(args.env)}-{steps_label(int(args.steps))}"
    writer = start([block], p, args)
    base = {"normalised": dict(ONE_STEP.get(args.system, {}), **NORMALISED), "defaults": {},
            "one-step": ONE_STEP.get(args.system, {})}[args.over]
    table = Table("variant", "seed", "peak (at env steps)", "final", "greedy (worst)", "wall s", "curve")
    for name, extra in json.loads(args.variants).items():
        for seed in args.seeds:
            r = run_cell(args.system, args.env, int(args.steps), dict(base, **extra), seed)
            ten = sorted({round(k) for k in np.linspace(0, len(r["curve"]) - 1, 10)})
            points = [round(r["curve"][i][1]) for i in ten]
            at = r["peak_at"]
            at = f"{at / 1e6:.2f}M" if at >= 1_000_000 else f"{at / 1e3:.0f}k"
            table.row(name, seed, f"{r['peak']:.0f} ({at})", f"{r['final']:.0f}",
                      f"{r['greedy']:.0f} ({r['greedy_min']:.0f})", f"{r['wall_s']:.0f}", points)
    if writer:
        writer.write({block: str(table)})


if __name__ == "__main__":
    main()
