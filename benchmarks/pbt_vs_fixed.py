"""PBT against the same population with its hyperparameters fixed, from a bad initial spread.

Both arms start the same members (same seeds, the same first hyperparameters drawn from the --explore
distributions); the fixed arm never exploits or explores (a random search). Compute is env steps summed
over the population. For PBT: the population's total env steps when the first member's slice score
(mean return of the episodes it finished in that slice) reaches --target. For the fixed arm: each member's
own env steps to the target (or "not reached" within --total-steps), and their median, the figure the
PBT paper's claim is about (PBT finds a good schedule for less than what a typical fixed choice costs).

    python benchmarks/pbt_vs_fixed.py --readme    # the docs' table (seeds 0-2)

Members run the system's one-update-per-batch config where it has one (``normaliser_study.ONE_STEP``: A2C's,
IMPALA's and SEED's defaults before 2026-11-28, which the docs' table ran): the claim is about the schedule PBT
finds, and one update per batch is what the spread of learning rates was drawn for.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

from distrl.pbt import run_pbt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402
from normaliser_study import ONE_STEP  # noqa: E402  (the benchmarks folder's own helpers)


def population_steps_to_target(pop: Path, target: float) -> int | None:
    """Rows are in the order members became ready: the running sum of slices is the compute so far."""
    done: dict[str, int] = {}
    total = 0
    with (pop / "population.csv").open() as f:
        for row in csv.DictReader(f):
            total += int(row["env_steps"]) - done.get(row["member"], 0)
            done[row["member"]] = int(row["env_steps"])
            if row["score"] and float(row["score"]) >= target:
                return total
    return None


def member_steps_to_target(pop: Path, target: float) -> list[int | None]:
    first: dict[str, int | None] = {}
    with (pop / "population.csv").open() as f:
        for row in csv.DictReader(f):
            first.setdefault(row["member"], None)
            if first[row["member"]] is None and row["score"] and float(row["score"]) >= target:
                first[row["member"]] = int(row["env_steps"])
    return [first[m] for m in sorted(first, key=int)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default="a2c")
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument(
        "--explore", nargs="+", default=["lr=loguniform(1e-5,1e-1)", "entropy_coef=choice(0.0,0.01,0.1,0.3)"]
    )
    p.add_argument("--population", type=int, default=6)
    p.add_argument("--ready-steps", type=int, default=20_000)
    p.add_argument("--total-steps", type=int, default=300_000)
    p.add_argument("--target", type=float, default=475.0)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    add_flag(p)
    args = p.parse_args()
    writer = start(["pbt-vs-fixed"], p, args, keep=tuple(k for k in vars(args) if k != "readme"))
    print(f"{args.system} on {args.env}, population {args.population}, explore {' '.join(args.explore)}, ready every "
          f"{args.ready_steps:,} steps, {args.total_steps:,} per member, target {args.target}")
    table = Table("seed", "PBT: population env steps to target", "PBT wall s",
                  "fixed: each member's env steps to target", "fixed: median member", "fixed wall s")
    for seed in args.seeds:
        out = {}
        for arm, flags in (("pbt", {}), ("fixed", {"exploit": False, "explore_hyperparameters": False})):
            with tempfile.TemporaryDirectory() as d:
                pop = Path(d) / "pop"
                t0 = time.perf_counter()
                finished(run_pbt(args.system, args.env, population=args.population, explore=args.explore,
                                 ready_steps=args.ready_steps, total_steps=args.total_steps, seed=seed,
                                 run_dir=str(pop), settings=dict(ONE_STEP.get(args.system, {})), **flags))
                out[arm] = (population_steps_to_target(pop, args.target), member_steps_to_target(pop, args.target),
                            time.perf_counter() - t0)
        pbt_steps, _, pbt_wall = out["pbt"]
        _, members, fixed_wall = out["fixed"]
        big = float("inf")
        median = statistics.median([m if m is not None else big for m in members])
        fmt = lambda v, big=big: "not reached" if v is None or v == big else f"{int(v):,}"  # noqa: E731
        table.row(seed, fmt(pbt_steps), f"{pbt_wall:.0f}", ", ".join(fmt(m) for m in members), fmt(median),
                  f"{fixed_wall:.0f}")
    if writer:
        writer.write({"pbt-vs-fixed": str(table)})


if __name__ == "__main__":
    main()
