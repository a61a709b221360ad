"""Does a system's training curve hold once it has solved the task? Seeds in turn, one config.

For each seed it trains with the given settings, reads ``metrics.csv`` and reports when the training
mean (last 100 episodes) first reached ``--solved`` and the lowest it fell to afterwards; the run
"holds" when that low stays at or above ``--floor``. Then the greedy evaluation (20 episodes).

    python benchmarks/curve_stability.py impala --seeds 0 1 2 3 4 5 6 7
    python benchmarks/curve_stability.py impala --one-step --set entropy_coef=0.01 --set lr=1e-3

``--one-step``: over IMPALA's, SEED's or A2C's defaults before 2026-11-28 and their budget then (1.5M env steps, A2C's
1M): one update per batch, the config the docs' curve-stability figures ran.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import finished  # noqa: E402  (the benchmarks folder's own helper)
from normaliser_study import ONE_STEP  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("system")
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--runtime", default="local")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4, 5, 6, 7])
    p.add_argument("--solved", type=float, default=475.0)
    p.add_argument("--floor", type=float, default=400.0)
    p.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--one-step", action="store_true", help="over IMPALA's, SEED's or A2C's one-update-per-batch config "
                   "(their defaults before 2026-11-28) and its budget then")
    args = p.parse_args()
    settings = dict(a.split("=", 1) for a in args.assignments)
    if args.one_step:
        if args.system not in ONE_STEP:
            p.error(f"--one-step is a former config of {', '.join(ONE_STEP)}: give one of them")
        budget = 1_000_000 if args.system == "a2c" else 1_500_000
        settings = {**ONE_STEP[args.system], "total_steps": budget, **settings}
    print("| seed | first >= solved at (env steps) | lowest after | holds | final training mean | greedy eval | wall s "
          "|")
    print("|---|---|---|---|---|---|---|")
    held = 0
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as d:
            s = finished(distrl.train(args.system, env=args.env, runtime=args.runtime, seed=seed, run_dir=f"{d}/r",
                             log_interval_s=0.25, **settings))
            rows = [
                (int(r["env_steps"]), float(r["episode_return_mean"]))
                for r in csv.DictReader(open(f"{d}/r/metrics.csv"))
                if r["episode_return_mean"]
            ]
            ev = distrl.evaluate(f"{d}/r", episodes=20)["mean_return"]
        first = next((i for i, (_, ret) in enumerate(rows) if ret >= args.solved), None)
        low = min(ret for _, ret in rows[first:]) if first is not None else float("nan")
        holds = first is not None and low >= args.floor
        held += holds
        at = f"{rows[first][0]:,}" if first is not None else "never"
        print(f"| {seed} | {at} | {low:.0f} | {'yes' if holds else 'no'} | {s['episode_return_mean']} | {ev:.0f} | "
              f"{s['wall_s']:.1f} |",
              flush=True)
    print(f"\n{held} of {len(args.seeds)} seeds hold (settings: {settings or 'defaults'})")


if __name__ == "__main__":
    main()
