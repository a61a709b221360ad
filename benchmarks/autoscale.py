"""Autoscale from a bad start against the best fixed actor count, measured in one run of this script.

For each system and case it runs every fixed actor count for ``--fixed-s`` seconds (``--ray-fixed-s`` on ray; their
steady env steps/s, the first quarter of the rows left out) and then an autoscaled run from the case's bad start for
``--auto-s`` seconds, and reports when the autoscaled run first stepped at >= 0.9 of the best fixed rate (over a
trailing window of ``--window-s``, seconds from the trainer's start, process start-up excluded as in every run's
wall_s), where it settled and its rate over the last quarter:

- ``slow``: distrl/SlowCartPole-v0 (1 ms of sleep per step, a simulator in another program), from 1 actor (APPO
  and SEED with unrolls of 16 x 32 steps there: ``SETTINGS``);
- ``learner-bound``: CartPole-v1 (a step costs microseconds: the learner is the bottleneck), from 8 actors.

    python benchmarks/autoscale.py --docs      # the table in docs/guide/autoscale.md
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("RAY_AUTH_MODE", "token")  # the two-node cluster started as the docs' are (read at Ray's import)

import distrl  # noqa: E402
from distrl.bench.cell import steady_sps  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)

CASES = {"slow": ("distrl/SlowCartPole-v0", 1), "learner-bound": ("CartPole-v1", 8)}
# APPO's default unroll (16 envs x 512 steps) takes one actor 9 s on the slow env: a 20-s fixed run would see two bursts
# of them and its rate be off by one (8 actors measured at 57,315 env steps/s where 7,200 is the most they can step);
# there its unrolls are IMPALA's size, 16 x 32 = 512 steps, in the fixed and the autoscaled runs alike, and SEED's too
# (its 16 x 256 take one actor 4 s there: its first window, three reports, came 24 s after the start from one actor)
SETTINGS = {("appo", "slow"): {"unroll_length": 32}, ("seed", "slow"): {"unroll_length": 32}}


def rows(run: Path) -> list[tuple[int, float, float]]:
    with (run / "metrics.csv").open() as f:
        return [(int(float(r["env_steps"])), float(r["wall_s"]), float("nan")) for r in csv.DictReader(f)]


def first_at(points: list[tuple[int, float, float]], rate: float, window_s: float) -> float | None:
    """The first time (s) the steps over the trailing ``window_s`` reach ``rate`` per second, or None."""
    for i, (steps, wall, _) in enumerate(points):
        back = [p for p in points[: i + 1] if wall - p[1] >= window_s]
        if back and (steps - back[-1][0]) / (wall - back[-1][1]) >= rate:
            return wall
    return None


def train(system: str, env: str, runtime: str, folder: Path, seconds: float, **settings) -> dict:
    return finished(distrl.train(system, env=env, runtime=runtime, total_steps=10**12, max_wall_s=seconds,
                        run_dir=str(folder), progress=False, **settings))


@contextlib.contextmanager
def two_nodes(wanted: bool, actors: int):
    """A two-node Ray cluster on this machine for the ray cells (Ray's ``cluster_utils``: two raylets, each with
    CPUs for half the actors and one more), its address; None when no cell runs on ray."""
    if not wanted:
        yield None
        return
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": actors // 2 + 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=actors // 2 + 1)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()


def at_ray(runtime: str, address: str | None) -> dict:
    return {"ray_address": address} if runtime == "ray" else {}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--systems", nargs="+", default=["impala", "appo", "seed", "apex-dqn"], help="each on local")
    p.add_argument("--ray", nargs="*", default=["impala", "appo", "seed", "apex-dqn"],
                   help="systems measured on ray as well (a two-node cluster on this machine the script starts)")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--counts", nargs="+", type=int, default=[1, 2, 4, 8], help="fixed actor counts to compare")
    p.add_argument("--fixed-s", type=float, default=20.0)
    p.add_argument("--ray-fixed-s", type=float, default=35.0,
                   help="a fixed run's seconds on ray, whose actors take longer to start (SEED's first report came at "
                        "13 s: a 20-s run measured three rows)")
    p.add_argument("--auto-s", type=float, default=75.0)
    p.add_argument("--window-s", type=float, default=8.0)
    add_flag(p)
    args = p.parse_args()
    writer = start(["autoscale"], p, args,
                   keep=("systems", "ray", "cases", "counts", "fixed_s", "ray_fixed_s", "auto_s", "window_s"))
    table = Table("system", "runtime", "case", "fixed actors: env steps/s", "best fixed", "autoscaled from",
                  "reached 0.9 at", "settled at", "last quarter env steps/s", "of the best")
    high = max(args.counts)
    with tempfile.TemporaryDirectory() as d, two_nodes(bool(args.ray), high) as address:
        for system, runtime in [(s, "local") for s in args.systems] + [(s, "ray") for s in args.ray]:
            for case in args.cases:
                env, bad = CASES[case]
                own = SETTINGS.get((system, case), {})
                fixed = {}
                for n in args.counts:
                    run = Path(d) / f"{system}-{runtime}-{case}-{n}"
                    seconds = args.ray_fixed_s if runtime == "ray" else args.fixed_s
                    s = train(system, env, runtime, run, seconds, num_actors=n, **at_ray(runtime, address), **own)
                    fixed[n] = steady_sps(rows(run), s["sps"])
                best_n = max(fixed, key=fixed.get)
                run = Path(d) / f"{system}-{runtime}-{case}-auto"
                s = train(system, env, runtime, run, args.auto_s, num_actors=bad, autoscale="on", max_actors=high,
                          **at_ray(runtime, address), **own)
                points = rows(run)
                at = first_at(points, 0.9 * fixed[best_n], args.window_s)
                late = [q for q in points if q[1] >= 0.75 * points[-1][1]]
                last = (late[-1][0] - late[0][0]) / (late[-1][1] - late[0][1]) if len(late) > 1 else float("nan")
                table.row(system, runtime, case, ", ".join(f"{n}: {v:,.0f}" for n, v in fixed.items()),
                          f"{best_n} ({fixed[best_n]:,.0f})", bad, f"{at:.0f} s" if at is not None else "not reached",
                          s["autoscale"]["actors"], f"{last:,.0f}", f"{last / fixed[best_n]:.2f}")
    if writer:
        writer.write({"autoscale": str(table)})


if __name__ == "__main__":
    main()
