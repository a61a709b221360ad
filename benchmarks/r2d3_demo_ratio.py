"""R2D3's claim at small scale (Paine, Gulcehre et al. 2019, arXiv:1909.01387): on a sparse-reward,
hard-exploration task, learning from a handful of demonstrations finds what epsilon-greedy exploration
does not, and how much of each batch should be demonstrations (the demo ratio rho).

MountainCar-v0: -1 per step until the car reaches the flag, 200 steps at most. The demonstrations are
``--demo-episodes`` episodes of the scripted energy-pumping controller
(``distrl.datasets.demonstrators:mountain_car``), recorded with ``distrl.record`` into a Minari dataset.
``--env distrl/MountainCarNoVelocity-v0`` (the position alone: memory matters too, as in the paper's tasks)
records the same controller working from positions (``mountain_car_positions``). ``--env distrl/DeepSea-v0``
(bsuite's Deep Sea, N = 20: the reward at the end of 20 "right"s, each cell's "right" its own, which random
actions find once in 2^20 episodes) records the treasure path (``deep_sea``); there the greedy evaluation is
0.99 where the treasure was found and 0 (or just below) where the agent learned to go left.
Cells: R2D2 without demos (with R2D3's values of the settings R2D3 keeps apart from R2D2's defaults,
``SAME_AS_R2D3``, so the two differ by the demonstrations alone), R2D3 with rho in ``--ratios``, and Ape-X DQN
without and with demos (rho 1/4);
for each seed the greedy evaluation (20 episodes; on MountainCar -200 means the flag was never reached, on Deep
Sea 0 or just below that the treasure was not), its worst episode and the env steps at which the training
return (last 100 episodes) first rose above the env's threshold (``TASKS``: -199, or 0.1 on Deep Sea).

    python benchmarks/r2d3_demo_ratio.py --seeds 0 1 2 --steps 150000
    python benchmarks/r2d3_demo_ratio.py --env distrl/MountainCarNoVelocity-v0 --cells r2d2 r2d3
    python benchmarks/r2d3_demo_ratio.py --env distrl/DeepSea-v0 --steps 100000 --seeds 0 1 2

With ``--readme`` the table goes into the docs' block for its env and budget (``script:r2d3-ENV-STEPS``,
e.g. ``script:r2d3-DeepSea-v0-100k``).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import tempfile
from pathlib import Path

import distrl
from distrl.agents.r2d3.config import R2D3Config
from distrl.envs import DEEP_SEA, MOUNTAIN_CAR_NO_VELOCITY

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, env_label, finished, start, steps_label  # noqa: E402  (the benchmarks folder's helper)

# per env: the demonstrator, and the training mean (last 100 episodes) above which some episodes found the reward
TASKS = {"MountainCar-v0": ("mountain_car", -199.0), MOUNTAIN_CAR_NO_VELOCITY: ("mountain_car_positions", -199.0),
         DEEP_SEA: ("deep_sea", 0.1)}
# R2D3 keeps R2D2's former defaults of these (agents/r2d3/config.py); the R2D2 row takes them too
SAME_AS_R2D3 = {k: getattr(R2D3Config(), k) for k in ("gamma", "target_update_period", "obs_norm")}


def first_success(run: Path, threshold: float) -> str:
    for r in csv.DictReader(open(run / "metrics.csv")):
        value = float(r.get("episode_return_mean") or "nan")
        if not math.isnan(value) and value > threshold:
            return f"{int(float(r['env_steps'])) // 1000}k"
    return "never"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="MountainCar-v0", choices=list(TASKS))
    p.add_argument("--steps", type=int, default=150_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--ratios", type=float, nargs="+", default=[1 / 256, 1 / 64, 1 / 16, 1 / 4])
    p.add_argument("--demo-episodes", type=int, default=10)
    p.add_argument("--cells", nargs="+", default=["r2d2", "r2d3", "apex-dqn"], choices=["r2d2", "r2d3", "apex-dqn"],
                   help="which systems' rows (apex-dqn: without and with demos at rho 1/4)")
    add_flag(p)
    args = p.parse_args()
    block = f"r2d3-{env_label(args.env)}-{steps_label(args.steps)}"
    writer = start([block], p, args)
    demonstrator, threshold = TASKS[args.env]
    digits = 2 if args.env == DEEP_SEA else 0
    with tempfile.TemporaryDirectory() as tmp:
        demos = str(Path(tmp) / "demos")
        rec = distrl.record(demos, policy=f"distrl.datasets.demonstrators:{demonstrator}", env=args.env,
                            episodes=args.demo_episodes)
        setting = (f"{args.env}, {args.steps:,} env steps per run, seeds {', '.join(map(str, args.seeds))}; demos: "
                   f"{rec['episodes']} episodes, {rec['steps']} steps, mean return {rec['mean_return']:g}")
        print(setting)
        table = Table("system", "demo ratio", "greedy eval per seed", "worst greedy episode per seed",
                      f"training return first above {threshold:g}")
        cells = ([("r2d2", None)] * ("r2d2" in args.cells) + [("r2d3", r) for r in args.ratios if "r2d3" in args.cells]
                 + [("apex-dqn", None), ("apex-dqn", 0.25)] * ("apex-dqn" in args.cells))
        for system, ratio in cells:
            evals, worst, firsts = [], [], []
            for seed in args.seeds:
                run = Path(tmp) / f"{system}-{ratio}-{seed}"
                extra = {"demos": demos, "demo_ratio": ratio} if ratio is not None else (
                    SAME_AS_R2D3 if system == "r2d2" else {})
                finished(distrl.train(system, env=args.env, seed=seed, total_steps=args.steps, run_dir=str(run),
                                      **extra))
                ev = distrl.evaluate(run, episodes=20)
                evals.append(ev["mean_return"])
                worst.append(ev["min_return"])
                firsts.append(first_success(run, threshold))
            shown = "none" if ratio is None else (f"1/{round(1 / ratio)}" if ratio < 1 else "1")
            table.row(system, shown, ", ".join(f"{e:.{digits}f}" for e in evals),
                      ", ".join(f"{w:.{digits}f}" for w in worst), ", ".join(firsts))
    if writer:
        writer.write({block: f"{setting}\n\n{table}"})


if __name__ == "__main__":
    main()
