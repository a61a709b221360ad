"""How far the learning tests' runs spread over seeds and over the numerics of different machines.

A learning test on the deterministic ``inline`` runtime gives the same number every time on one
machine, but not across machines: the same kernels round differently on other CPUs and library
builds (AVX-512 vs AVX2 vs plain SSE code paths in PyTorch, MKL's code path, the thread count), and a
learning curve amplifies the difference. A bar set just under what one seed gave on one machine
then fails elsewhere. This script runs each learning test's exact configuration over several seeds
and several numeric variants, each in a fresh process, and prints the spread the tests' bars are
set from (their docstrings quote it).

    python benchmarks/learning_spread.py                       # every case, seeds 0-4, every variant
    python benchmarks/learning_spread.py --cases a2c seed --seeds 0 1 2 --variants base sse
    python benchmarks/learning_spread.py --cases a3c --variants base --load 1   # beside one busy process

``--load N`` runs every case beside N processes that keep a core busy: an approximation of CI, where
the other pytest-xdist worker runs other tests (a varying load, which these burners do not copy). On
``local`` and ``ray`` the workers' interleaving (A3C's Hogwild updates, the policy lag of asynchronous
actors) depends on how the operating system shares the cores, so a bar set from runs on an idle
machine can fail on a busy one.

Variants (each changes the float results of the same code, as another machine would):
``base`` (this machine's defaults), ``avx2`` / ``sse`` (``ATEN_CPU_CAPABILITY``: PyTorch's vectorised
kernels for older CPUs), ``mkl-avx2`` (``MKL_ENABLE_INSTRUCTIONS=AVX2``), ``threads2`` (two torch
threads instead of one), ``openblas`` (``OPENBLAS_CORETYPE=Haswell``: numpy's BLAS kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# Each case is the configuration of one learning test in tests/agents/ (keep them equal).
CASES = {
    "a2c": dict(test="tests/agents/test_a2c.py::test_a2c_learns_cartpole", system="a2c", runtime="inline",
                total_steps=98_304, score="train"),
    "a3c": dict(test="tests/agents/test_a3c.py::test_a3c_learns_cartpole", system="a3c", runtime="local",
                total_steps=150_000, score="train"),
    "gorila": dict(test="tests/agents/test_gorila.py::test_gorila_learns_cartpole", system="gorila", runtime="inline",
                   total_steps=150_000, score="eval"),
    "seed": dict(test="tests/agents/test_seed.py::test_seed_learns_cartpole", system="seed", runtime="inline",
                 total_steps=100_000, score="eval"),
    "impala": dict(test="tests/agents/test_impala.py::test_impala_local_learns_cartpole", system="impala",
                   runtime="local", total_steps=250_000, score="eval"),
    "apex-dqn": dict(test="tests/agents/test_apex_dqn.py::test_apex_dqn_learns_cartpole", system="apex-dqn",
                     runtime="local", total_steps=150_000, score="eval"),
    "apex-ddpg": dict(test="tests/agents/test_apex_ddpg.py::test_apex_ddpg_learns_pendulum", system="apex-ddpg",
                      env="Pendulum-v1", runtime="inline", total_steps=30_000, score="eval"),
    "qt-opt": dict(test="tests/agents/test_qt_opt.py::test_qt_opt_learns_to_steer_a_point", system="qt-opt",
                   env="distrl/PointToOrigin-v0", runtime="inline", total_steps=10_000, score="eval",
                   settings=dict(num_actors=2, num_envs=2, unroll_length=8, min_replay=100, min_targets=128,
                                 batch_size=32, updater_batch=64, hidden=(32, 32), cem_samples=16, cem_elites=4,
                                 env_steps_per_update=4.0)),
}

VARIANTS = {
    "base": ({}, {}),
    "avx2": ({"ATEN_CPU_CAPABILITY": "avx2"}, {}),
    "sse": ({"ATEN_CPU_CAPABILITY": "default"}, {}),
    "mkl-avx2": ({"MKL_ENABLE_INSTRUCTIONS": "AVX2"}, {}),
    "threads2": ({}, {"torch_threads": 2}),
    "openblas": ({"OPENBLAS_CORETYPE": "Haswell"}, {}),
}


BURNER = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass"


def run_one(case: dict, seed: int, settings: dict, episodes: int) -> dict:
    """One training run (and greedy evaluation) in this process; returns the score the test checks."""
    import distrl

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        kw = dict(case.get("settings", {}), **settings)
        summary = distrl.train(case["system"], env=case.get("env", "CartPole-v1"), runtime=case["runtime"],
                               total_steps=case["total_steps"], run_dir=f"{tmp}/r", seed=seed, **kw)
        wall = time.perf_counter() - t0
        out = {"train": summary["episode_return_mean"], "wall_s": round(wall, 1)}
        if case["score"] == "eval":
            out["eval"] = distrl.evaluate(f"{tmp}/r", episodes=episodes)["mean_return"]
    return out


def fmt(value: float) -> str:
    """Returns in the hundreds to the unit; small ones (the point task's, around -1) to two decimals."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--episodes", type=int, default=10, help="greedy evaluation episodes for eval-scored cases")
    parser.add_argument("--total-steps", type=int, default=None, help="override every case's budget")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                        help="extra settings for every run (to try a candidate default)")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="run beside N busy processes (a loaded machine, as in CI; default 0)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one JSON-described job here
    args = parser.parse_args()
    if args.one:
        job = json.loads(args.one)
        print(json.dumps(run_one(job["case"], job["seed"], job["settings"], job["episodes"])))
        return
    if args.load < 0:
        parser.error(f"--load must be 0 or more busy processes, got {args.load}")
    extra = dict(a.split("=", 1) for a in args.assignments)
    burners = []
    try:
        for _ in range(args.load):  # each spins until its parent is gone, however this process ends
            burners.append(subprocess.Popen([sys.executable, "-c", BURNER], stderr=subprocess.DEVNULL))
        report(args, extra)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def report(args: argparse.Namespace, extra: dict) -> None:
    """Runs every case x variant x seed, each in a fresh process, and prints one table row per case x variant."""
    print("| case | variant | seeds | score | values | min | median | wall s (mean) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.cases:
        case = dict(CASES[name])
        if args.total_steps:
            case["total_steps"] = args.total_steps
        for variant in args.variants:
            env_vars, settings = VARIANTS[variant]
            scores, walls, trains = [], [], []
            for seed in args.seeds:
                job = {"case": case, "seed": seed, "settings": {**settings, **extra}, "episodes": args.episodes}
                proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(job)], capture_output=True,
                                      text=True, env={**os.environ, **env_vars})
                if proc.returncode != 0:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    scores.append(float("nan"))
                    trains.append(float("nan"))
                    continue
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                scores.append(result[case["score"]])
                trains.append(result["train"])
                walls.append(result["wall_s"])
            values = ", ".join(fmt(s) for s in scores)
            if case["score"] == "eval":  # the training mean too, for comparison
                values += " (training mean: " + ", ".join(fmt(t) for t in trains) + ")"
            print(f"| {name} ({case['total_steps']:,} steps) | {variant} | {min(args.seeds)}-{max(args.seeds)} | "
                  f"{case['score']} | {values} | {fmt(np.nanmin(scores))} | {fmt(np.nanmedian(scores))} | "
                  f"{np.mean(walls) if walls else float('nan'):.1f} |", flush=True)


if __name__ == "__main__":
    main()
