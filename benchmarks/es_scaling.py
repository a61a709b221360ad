"""ES scaling: generations/s and env steps/s with 1..N workers, on `local` and on a two-node Ray cluster
started on this machine (one CPU per node), in one run.

Pendulum-v1 is used because every episode is 200 steps whatever the policy, so a generation is a fixed
amount of work and the numbers measure the runtime, not how fast the policy improves (on CartPole a
better policy makes longer episodes and fewer generations per second). Steady state: the first quarter of
the metrics rows (start-up, the first noise-table read) is dropped. The scaling column is
rate(N) / (N * rate(1)) for the same runtime: 1.0 is linear.

    python benchmarks/es_scaling.py --seconds 10
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)


def measure(runtime: str, workers: int, seconds: float, **extra) -> dict:
    with tempfile.TemporaryDirectory() as d:
        s = finished(distrl.train("es", env="Pendulum-v1", runtime=runtime, num_actors=workers, total_steps=10**9,
                         max_wall_s=seconds, log_interval_s=0.5, run_dir=str(Path(d) / "r"), **extra))
        with open(Path(d) / "r" / "metrics.csv") as f:
            rows = [(int(r["env_steps"]), float(r["wall_s"]), int(r["learner_updates"] or 0),
                     float(r.get("bytes_per_env_step") or "nan")) for r in csv.DictReader(f)]
    rows = rows[len(rows) // 4:]
    dt = max(rows[-1][1] - rows[0][1], 1e-9)
    moved = [r[3] for r in rows if r[3] == r[3]]
    return {"sps": (rows[-1][0] - rows[0][0]) / dt, "gens": (rows[-1][2] - rows[0][2]) / dt,
            "bytes_per_step": sum(moved) / len(moved) if moved else float("nan"),
            "constant_bytes": s.get("constant_bytes")}


def two_node_cluster():
    os.environ.setdefault("RAY_AUTH_MODE", "token")  # before Ray is imported: it reads its settings then
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    p.add_argument("--runtimes", nargs="+", default=["local", "ray-2-nodes"])
    p.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                   help="ES settings (default: the system's defaults)")
    add_flag(p)
    args = p.parse_args()
    writer = start(["es-scaling"], p, args, keep=("workers", "runtimes"))
    settings = dict(a.split("=", 1) for a in args.assignments)
    lines = ["| runtime | workers | generations/s | env steps/s | scaling vs 1 worker | bytes moved per env step |",
             "|---|---|---|---|---|---|"]
    for runtime in args.runtimes:
        cluster = two_node_cluster() if runtime == "ray-2-nodes" else None
        extra = {"ray_address": cluster.address, **settings} if cluster else dict(settings)
        try:
            base = None
            for n in args.workers:
                r = measure("ray" if cluster else runtime, n, args.seconds, **extra)
                base = base or r
                scaling = r["gens"] / (n * base["gens"]) if base["gens"] else float("nan")
                label = "ray, two nodes on this machine (1 CPU each)" if cluster else runtime
                lines.append(f"| {label} | {n} | {r['gens']:.2f} | {r['sps']:,.0f} | {scaling:.2f} | "
                             f"{r['bytes_per_step']:.1f} |")
                print(lines[-1], flush=True)
        finally:
            if cluster is not None:
                import ray

                ray.shutdown()
                cluster.shutdown()
    print("\n".join(lines))
    if writer:
        writer.write({"es-scaling": "\n".join(lines)})


if __name__ == "__main__":
    main()
