"""R2D3's claim at small scale (Paine, Gulcehre et al. 2019, arXiv:1909.01387): on a sparse-reward,
hard-exploration task, learning from a handful of demonstrations finds what epsilon-greedy exploration
does not, and how much of each batch should be demonstrations (the demo ratio rho).

MountainCar-v0: -1 per step until the car reaches the flag, 200 steps at most. The demonstrations are
``--demo-episodes`` episodes of the scripted energy-pumping controller
(``distrl.datasets.demonstrators:mountain_car``), recorded with ``distrl.record`` into a Minari dataset.
Cells: R2D2 without demos, R2D3 with rho in ``--ratios``, and Ape-X DQN without and with demos (rho 1/4);
for each seed the greedy evaluation (20 episodes; -200 means the flag was never reached), its worst episode
(above -200: every greedy episode reached the flag) and the env steps at which the training return first rose
above -199.

    python benchmarks/r2d3_demo_ratio.py --seeds 0 1 2 --steps 150000
"""

from __future__ import annotations

import argparse
import csv
import math
import tempfile
from pathlib import Path

import distrl


def first_success(run: Path) -> str:
    for r in csv.DictReader(open(run / "metrics.csv")):
        value = float(r.get("episode_return_mean") or "nan")
        if not math.isnan(value) and value > -199:
            return f"{int(float(r['env_steps'])) // 1000}k"
    return "never"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="MountainCar-v0")
    p.add_argument("--steps", type=int, default=150_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--ratios", type=float, nargs="+", default=[1 / 256, 1 / 64, 1 / 16, 1 / 4])
    p.add_argument("--demo-episodes", type=int, default=10)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demos = str(Path(tmp) / "demos")
        rec = distrl.record(demos, policy="distrl.datasets.demonstrators:mountain_car", env=args.env,
                            episodes=args.demo_episodes)
        print(f"{args.env}, {args.steps:,} env steps per run; demos: {rec['episodes']} episodes, {rec['steps']} steps, "
              f"mean return {rec['mean_return']}")
        print("| system | demo ratio | greedy eval per seed | worst greedy episode per seed | "
              "training return first above -199 |")
        print("|---|---|---|---|---|")
        cells = [("r2d2", None)] + [("r2d3", r) for r in args.ratios] + [("apex-dqn", None), ("apex-dqn", 0.25)]
        for system, ratio in cells:
            evals, worst, firsts = [], [], []
            for seed in args.seeds:
                run = Path(tmp) / f"{system}-{ratio}-{seed}"
                extra = {} if ratio is None else {"demos": demos, "demo_ratio": ratio}
                distrl.train(system, env=args.env, seed=seed, total_steps=args.steps, run_dir=str(run), **extra)
                ev = distrl.evaluate(run, episodes=20)
                evals.append(ev["mean_return"])
                worst.append(ev["min_return"])
                firsts.append(first_success(run))
            shown = "none" if ratio is None else (f"1/{round(1 / ratio)}" if ratio < 1 else "1")
            print(f"| {system} | {shown} | {', '.join(f'{e:.0f}' for e in evals)} | "
                  f"{', '.join(f'{w:.0f}' for w in worst)} | {', '.join(firsts)} |", flush=True)


if __name__ == "__main__":
    main()
