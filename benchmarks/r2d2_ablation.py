"""R2D2's four-way ablation (Kapturowski et al. 2019, section 3): the state a replayed sequence starts
from (``initial_state=stored|zero``) crossed with a burn-in or none, on the memory task. For each cell:
greedy evaluation (20 episodes) per seed and the Q-value discrepancy ``delta_q`` (Q at the first trained
step from the replay's state against Q from the state the actor had there), mean over the run's last
quarter of metrics rows.

    python benchmarks/r2d2_ablation.py --readme    # the docs' table (seeds 0-3, 500k env steps per run)

The defaults otherwise are R2D2's of the commit that runs it (the docs' table: those of its first line's commit,
before R2D2 took the observation normaliser, gamma 0.997 and a target period of 200).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="distrl/CartPoleNoVelocity-v1")
    p.add_argument("--steps", type=int, default=500_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    p.add_argument("--burn-in", type=int, default=8, help="the burn-in of the cells that have one")
    add_flag(p)
    args = p.parse_args()
    writer = start(["r2d2-ablation"], p, args, keep=("env", "steps", "seeds", "burn_in"))
    print(f"R2D2 on {args.env}, {args.steps:,} env steps per run")
    table = Table("initial state", "burn-in", "greedy eval per seed", "delta_q (last quarter)")
    for initial in ("stored", "zero"):
        for burn in (args.burn_in, 0):
            evals, gaps = [], []
            for seed in args.seeds:
                with tempfile.TemporaryDirectory() as d:
                    run = Path(d) / "r"
                    finished(distrl.train("r2d2", env=args.env, seed=seed, total_steps=args.steps, run_dir=str(run),
                                 initial_state=initial, burn_in=burn))
                    evals.append(distrl.evaluate(run, episodes=20)["mean_return"])
                    rows = [float(r["delta_q"]) for r in csv.DictReader(open(run / "metrics.csv")) if r.get("delta_q")]
                    gaps.append(statistics.mean(rows[-max(1, len(rows) // 4):]) if rows else float("nan"))
            table.row(initial, burn, ", ".join(f"{e:.0f}" for e in evals), f"{statistics.mean(gaps):.3f}")
    if writer:
        writer.write({"r2d2-ablation": str(table)})


if __name__ == "__main__":
    main()
