"""QT-Opt trained from offline data alone beats the policy that recorded the data (arXiv:1806.10293 section 5:
QT-Opt's first grasping policy came from offline data only).

Per seed: a short online QT-Opt run makes a weak policy (``--weak-steps`` env steps); ``distrl.record`` plays it
with Gaussian action noise (``--noise`` of the half-range, so the data covers more than one action per state)
into a Minari dataset; an offline-only QT-Opt run (``online=false``, ``--updates`` trainer updates, no env step)
learns from that dataset, once per ``--conservative-weights`` value (CQL's alpha, ``conservative_weight``; 0 is
plain clipped double Q), all on the same dataset. The table gives the dataset's mean return (the behaviour
policy), the weak policy's greedy return, and each offline run's greedy return (each ``distrl.evaluate``, 20
episodes).

    python benchmarks/qt_opt_offline.py --readme    # the docs' table: Pendulum-v1, seeds 0-4, weights 0, 0.1, 0.5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="Pendulum-v1")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--weak-steps", type=int, default=6_000)
    p.add_argument("--episodes", type=int, default=50, help="episodes recorded into the dataset")
    p.add_argument("--noise", type=float, default=0.3)
    p.add_argument("--updates", type=int, default=10_000)
    p.add_argument("--conservative-weights", type=float, nargs="+", default=[0.0, 0.1, 0.5],
                   help="conservative_weight of each offline run (the default's value among them)")
    add_flag(p)
    args = p.parse_args()
    writer = start(["qt-opt-offline"], p, args,
                   keep=("env", "seeds", "weak_steps", "episodes", "noise", "updates", "conservative_weights"))
    weights = args.conservative_weights
    print(f"{args.env}: weak policy {args.weak_steps:,} env steps; dataset {args.episodes} episodes with noise "
          f"{args.noise}; offline run {args.updates:,} trainer updates")
    table = Table("seed", "dataset return (behaviour)", "weak policy, greedy",
                  *(f"offline, conservative_weight {w:g}: greedy (wall s)" for w in weights))
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            weak, data = str(Path(tmp) / "weak"), str(Path(tmp) / "data")
            finished(distrl.train("qt-opt", env=args.env, total_steps=args.weak_steps, seed=seed, run_dir=weak))
            rec = distrl.record(data, run_dir=weak, episodes=args.episodes, seed=1000 + seed, noise=args.noise)
            cells = []
            for w in weights:
                offline = str(Path(tmp) / f"offline-{w:g}")
                t0 = time.perf_counter()
                finished(distrl.train("qt-opt", env=args.env, seed=seed, run_dir=offline, online=False, offline=data,
                             offline_updates=args.updates, conservative_weight=w))
                wall = time.perf_counter() - t0
                cells.append(f"{distrl.evaluate(offline, episodes=20)['mean_return']:.0f} ({wall:.0f})")
            weak_eval = distrl.evaluate(weak, episodes=20)["mean_return"]
            table.row(seed, f"{rec['mean_return']:.0f}", f"{weak_eval:.0f}", *cells)
    if writer:
        writer.write({"qt-opt-offline": str(table)})


if __name__ == "__main__":
    main()
