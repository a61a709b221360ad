"""Variants of the actor-critic normalised config on one env (the defaults issue, #22): for each variant and seed,
the peak of the training mean (last 100 episodes) and where it was, the final training mean, the greedy
evaluation over 20 episodes (mean and worst episode), the wall time and ten points of the curve. Variants are
settings laid over ``normaliser_study.NORMALISED``; runs one at a time.

    python benchmarks/ac_variants.py --env LunarLander-v3 --steps 2e6 --seeds 0 1 2 \\
        --variants '{"base": {}, "lr 6e-4": {"lr": 6e-4}, "gamma 0.999": {"gamma": 0.999}}'
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from normaliser_study import NORMALISED  # noqa: E402  (the benchmarks folder's own helpers)

import distrl  # noqa: E402


def run(system: str, env: str, steps: int, seed: int, settings: dict) -> dict:
    with tempfile.TemporaryDirectory() as d:
        start = time.monotonic()
        distrl.train(system, env=env, total_steps=steps, seed=seed, run_dir=f"{d}/r", **settings)
        wall = time.monotonic() - start
        curve = [(int(r["env_steps"]), float(r["episode_return_mean"])) for r in csv.DictReader(open(f"{d}/r/metrics.csv"))
                 if r["episode_return_mean"] not in ("", "nan")]
        greedy = distrl.evaluate(f"{d}/r", episodes=20)
    peak_at, peak = max(curve, key=lambda p: p[1])
    return {"peak": peak, "peak_at": peak_at, "final": curve[-1][1], "greedy": greedy["mean_return"],
            "greedy_min": greedy.get("min_return"), "wall_s": wall,
            "curve": [round(c[1]) for c in curve[::max(1, len(curve) // 10)]]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default="impala")
    p.add_argument("--env", default="LunarLander-v3")
    p.add_argument("--steps", type=float, default=2e6)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--variants", default='{"base": {}}', help="JSON: name -> settings over the normalised config")
    args = p.parse_args()
    print("| variant | seed | peak (at env steps) | final | greedy (worst) | wall s | curve |\n|---|---|---|---|---|---|---|")
    for name, extra in json.loads(args.variants).items():
        for seed in args.seeds:
            r = run(args.system, args.env, int(args.steps), seed, dict(NORMALISED, **extra))
            print(f"| {name} | {seed} | {r['peak']:.0f} ({r['peak_at'] / 1e6:.2f}M) | {r['final']:.0f} | "
                  f"{r['greedy']:.0f} ({r['greedy_min']:.0f}) | {r['wall_s']:.0f} | {r['curve']} |", flush=True)


if __name__ == "__main__":
    main()
