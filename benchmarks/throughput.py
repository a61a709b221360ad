"""Throughput against this machine's own ceiling, measured in one run.

For each env and actor count it measures
  (a) actors alone: N processes doing env step + policy forward into local buffers (no learner, no transport),
  (b) learner alone: IMPALA learner steps on a pre-filled batch, in samples/s,
  (c) end-to-end IMPALA on each runtime, steady-state env steps/s from metrics.csv (start-up excluded),
and prints a markdown table with (c) as a ratio of the combined ceiling 1/(1/a + 1/b): on a machine
whose cores are all busy, collection and learning share the CPU.

    python benchmarks/throughput.py                        # CartPole + Pong, 1..cores actors, all runtimes
    python benchmarks/throughput.py --envs CartPole-v1 --runtimes local --seconds 6
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import distrl
from distrl.agents.impala import Config, build
from distrl.bench import ceiling
from distrl.bench.cell import steady_sps
from distrl.config import build as build_config
from distrl.config import load_yaml
from distrl.core.system import BuildContext
from distrl.core.types import allocate
from distrl.envs import env_spec
from distrl.plotting import read_curve
from distrl.presets import preset_path
from distrl.runtime.backends.batching import concatenate
from distrl.runtime.compute import setup_compute

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)

PRESETS = {  # per-env settings over IMPALA's defaults (the paper's one V-trace step per batch), which keep the
    # learner off the critical path: this table is about the actors and the transport against the machine's ceiling
    # (APPO's passes make the learner the bottleneck; docs/results.md)
    "CartPole-v1": {},
    # optimizer_eps 1e-5, not IMPALA's CartPole default of 0.01: with mean (not summed) losses the Nature CNN's
    # per-weight gradients are ~1e-4, so an RMSProp epsilon of 0.01 shrinks every step ~100x: an H200 run with
    # 0.01 kept the policy uniform (entropy ln 6) for 6,500 updates, 16.8M frames (docs, learners on a GPU)
    "ALE/Pong-v5": load_yaml(preset_path("impala", "atari")),
}
# SEED's one-step config: 128 envs per actor (one request carries them all) and RMSProp's epsilon 1e-3
SEED_PRESETS = {"CartPole-v1": load_yaml(preset_path("seed", "vtrace"))}


class _NoWeights:
    """A weights handle with nothing newer: the actor keeps its initial weights (no transport measured)."""

    seconds = 0.0

    def pull(self, newer_than: int):
        return None


def _program(env_id: str, settings: dict, num_actors: int, total_steps: int = 10**9):
    cfg = build_config(Config, dict(settings, num_actors=num_actors))
    return build(cfg, BuildContext(env_id, env_spec(env_id), total_steps)), cfg


def _actor(program, index: int):
    role = program.role("actor")
    return role.make(index, 1000 * index, {"weights": _NoWeights()}), role.output


def actors_alone(env_id: str, settings: dict, n: int, seconds: float) -> float:
    """IMPALA's actors alone: ``distrl bench``'s measurement (n processes over one window, no learner)."""
    return ceiling.actors_alone("impala", env_id, settings, n, seconds)


def learner_alone(env_id: str, settings: dict, seconds: float) -> float:
    setup_compute(1)  # as a run's learner process: one thread, the allocator thresholds
    program, cfg = _program(env_id, settings, 1)
    actor, spec = _actor(program, 0)
    unrolls = [allocate(spec) for _ in range(cfg.batch_unrolls)]
    for u in unrolls:
        actor.unroll(u)
    batch = concatenate(spec, unrolls)
    learner = program.make_learner({})
    learner.step(batch)
    per_step = cfg.unroll_length * cfg.num_envs * cfg.batch_unrolls
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        learner.step(batch)
        n += 1
    return n * per_step / (time.perf_counter() - t0)


def end_to_end(
    env_id: str, settings: dict, n: int, runtime: str, seconds: float, system: str = "impala"
) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as d:
        s = finished(distrl.train(system, env=env_id, runtime=runtime, num_actors=n, total_steps=10**9,
                                  max_wall_s=seconds, log_interval_s=0.5, run_dir=str(Path(d) / "r"), **settings))
        points = read_curve(Path(d) / "r")
    return steady_sps(points, s["sps"]), s  # steady state: the first quarter of the rows left out


def steady_rates(run: Path, updates: str, skip: float) -> tuple[float, float]:
    """(env steps/s, ``updates`` column per s) from a run's metrics.csv, the first ``skip`` of the rows left out."""
    with open(run / "metrics.csv") as f:
        rows = [(int(r["env_steps"]), float(r["wall_s"]), float(r[updates] or 0)) for r in csv.DictReader(f)]
    rows = rows[int(len(rows) * skip):]
    dt = max(rows[-1][1] - rows[0][1], 1e-9)
    return (rows[-1][0] - rows[0][0]) / dt, (rows[-1][2] - rows[0][2]) / dt


def gradient_system(system: str, n: int, runtime: str, seconds: float) -> dict:
    """A3C / GORILA: env steps/s and parameter-server updates/s, steady state, from metrics.csv, with the settings
    the table was first measured with: A3C with its default, the paper's update (one gradient per segment of 8 envs
    x 5 steps), GORILA with batches of 64 (its default: 128)."""
    settings = {"gorila": {"batch_size": 64}}.get(system, {})
    with tempfile.TemporaryDirectory() as d:
        s = finished(distrl.train(system, env="CartPole-v1", runtime=runtime, num_actors=n, total_steps=10**9,
                         max_wall_s=seconds, log_interval_s=0.5, run_dir=str(Path(d) / "r"), **settings))
        sps, updates_per_s = steady_rates(Path(d) / "r", "updates_total", 0.25)
    return {"sps": sps, "updates_per_s": updates_per_s, "summary": s}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="*", default=list(PRESETS), help="envs for the IMPALA table (none: skip it)")
    p.add_argument("--actors", nargs="+", type=int, default=list(range(1, (os.cpu_count() or 2) + 1)))
    p.add_argument("--runtimes", nargs="+", default=["inline", "local", "ray"])
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--gradient-systems", nargs="*", default=["a3c", "gorila"],
                   help="gradient-sharing systems to measure on CartPole (updates/s and env steps/s)")
    add_flag(p)
    args = p.parse_args()
    writer = start(["throughput-impala", "throughput-gradient"], p, args,
                   keep=("envs", "actors", "runtimes", "gradient_systems"))
    lines = ["| env | runtime | actors | (a) actors alone sps | (b) learner alone samples/s | ceiling 1/(1/a+1/b) | "
             "(c) end-to-end sps | c / ceiling | learner wait | policy lag | bottleneck |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for env_id in args.envs:
        settings = PRESETS.get(env_id, {})
        b = learner_alone(env_id, settings, args.seconds / 2)
        for n in args.actors:
            a = actors_alone(env_id, settings, n, args.seconds / 2)
            ceiling = 1.0 / (1.0 / a + 1.0 / b)
            for runtime in args.runtimes:
                if runtime == "inline" and n > 1:
                    continue
                c, s = end_to_end(env_id, settings, n, runtime, args.seconds)
                line = (f"| {env_id} | {runtime} | {n} | {a:,.0f} | {b:,.0f} | {ceiling:,.0f} | {c:,.0f} | "
                        f"{c / ceiling:.2f} | "
                        f"{s['learner_wait_frac']} | {s['policy_lag_mean']} | {s['bottleneck']} |")
                lines.append(line)
                print(line, flush=True)
    grad_lines = ["| system | runtime | workers | env steps/s | parameter-server updates/s | staleness (updates) | "
                  "bottleneck |",
                  "|---|---|---|---|---|---|---|"]
    for system in args.gradient_systems:
        for n in args.actors:
            for runtime in [r for r in args.runtimes if r != "inline"]:
                r = gradient_system(system, n, runtime, args.seconds)
                line = (f"| {system} | {runtime} | {n} | {r['sps']:,.0f} | {r['updates_per_s']:,.0f} | "
                        f"{r['summary']['policy_lag_mean']} | {r['summary']['bottleneck']} |")
                grad_lines.append(line)
                print(line, flush=True)
    print("\n" + "\n".join(lines))
    print("\n" + "\n".join(grad_lines))
    if writer:
        writer.write({"throughput-impala": "\n".join(lines), "throughput-gradient": "\n".join(grad_lines)})


if __name__ == "__main__":
    main()
