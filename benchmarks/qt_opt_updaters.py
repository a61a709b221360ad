"""QT-Opt's Bellman updaters scale apart from the trainer: target throughput for 1..N updaters, and where the
bottleneck moves (arXiv:1806.10293 section 5 ran ~10 updaters per trainer).

Offline-only runs (``online=false``: no actors compete for the cores) from a dataset of random Pendulum-v1
episodes, each ``--wall`` seconds of training with ``num_updaters`` in ``--updaters``; per run the targets the
updaters wrote per second (the training buffer's insert rate), trainer updates per second, the trainer's wait
fraction (waiting for targets), the mean target staleness and the run's bottleneck verdict with the updaters'
blocked fraction (waiting for the training buffer's rate limiter). While the updaters are the bottleneck the trainer
waits and targets/s grows with their count; once it stops growing the cores (or the trainer at
``samples_per_insert`` samples per target) are the limit.

    python benchmarks/qt_opt_updaters.py --updaters 1 2 3 4 --wall 40
    python benchmarks/qt_opt_updaters.py --updaters 1 2 3 4 --wall 40 --conservative-weight 0

An offline-only run's trainer adds the conservative term by default (``conservative_weight``: Q at
``conservative_samples`` more actions per sample); ``--conservative-weight 0`` measures the plain regression the
trainer of an online run does. With ``--readme`` the table goes into the docs' block for its trainer
(``script:qt-opt-updaters-plain`` for weight 0, ``script:qt-opt-updaters-conservative`` for the default).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import distrl
from distrl.datasets import record_episodes, write_episodes
from distrl.runtime.run.metrics import blocked_fraction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)


def inserted_per_s(run: Path) -> float:
    rows = list(csv.DictReader(open(run / "metrics.csv")))
    total, last = 0.0, 0.0
    for r in rows:
        wall = float(r["wall_s"])
        total += float(r.get("targets_insert_rate") or 0.0) * (wall - last)  # the training buffer's column
        last = wall
    return total / max(last, 1e-9)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--updaters", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--wall", type=float, default=40.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--conservative-weight", type=float, default=None,
                   help="the trainer's conservative term (default: an offline-only run's default)")
    add_flag(p)
    args = p.parse_args()
    weight = args.conservative_weight
    block = ("qt-opt-updaters-conservative" if weight is None
             else "qt-opt-updaters-plain" if weight == 0 else f"qt-opt-updaters-{weight:g}")
    writer = start([block], p, args, keep=("updaters", "wall", "seed"))
    rng = np.random.default_rng(args.seed)
    print(f"Pendulum-v1, offline-only, {args.wall:.0f} s per run, {os.cpu_count()} cores, conservative_weight "
          f"{'default' if args.conservative_weight is None else args.conservative_weight}, defaults otherwise")
    table = Table("updaters", "targets/s", "trainer updates/s", "trainer wait fraction", "target staleness (updates)",
                  "updaters blocked", "verdict")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        write_episodes(data, record_episodes("Pendulum-v1", lambda obs: rng.uniform(-2, 2, 1).astype(np.float32),
                                             episodes=50), "uniform random")
        for n in args.updaters:
            run = Path(tmp) / f"u{n}"
            s = finished(distrl.train("qt-opt", env="Pendulum-v1", run_dir=str(run), seed=args.seed, online=False,
                             offline=str(data), offline_updates=10**9, max_wall_s=args.wall, num_updaters=n,
                             conservative_weight=args.conservative_weight))
            summary = json.loads((run / "summary.json").read_text())
            blocked = blocked_fraction(summary["role_time_s"]["updater"])
            table.row(
                n,
                f"{inserted_per_s(run):,.0f}",
                f"{s['learner_updates'] / s['wall_s']:,.0f}",
                f"{summary['learner_wait_frac']:.2f}",
                f"{summary['target_staleness_mean']:.0f}",
                f"{blocked:.2f}",
                summary["bottleneck"],
            )
    if writer:
        writer.write({block: str(table)})


if __name__ == "__main__":
    main()
