"""distrl's ES against evotorch's PGPE on the same MuJoCo task, budget and core count, in one run.

evotorch (maintained, on Ray) is the closest peer: its ``GymNE`` problem evaluates a population of
policies on Ray actors; PGPE with ClipUp is its recommended searcher for MuJoCo (its tutorial's
settings, below). Both sides get the same env, network (tanh MLP 64x64), observation normalisation,
population (32 antithetic pairs = 64 episodes per generation), number of worker processes and budget of
env steps. The score is the greedy return of the final parameters (the centre, for PGPE) over 10
episodes with fixed seeds; wall time includes each library's start-up.

    pip install -e ".[mujoco,bench]"
    python benchmarks/es_vs_evotorch.py --env Swimmer-v5 --steps 4000000 --workers 2
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)


def run_distrl(env_id: str, steps: int, workers: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        s = finished(distrl.train("es", env=env_id, total_steps=steps, num_actors=workers, seed=seed, run_dir=f"{d}/r"))
        wall = time.perf_counter() - t0
        ev = distrl.evaluate(f"{d}/r", episodes=10, seed=1000)["mean_return"]
    return {"steps": s["env_steps"], "wall": wall, "eval": ev, "generations": s["learner_updates"]}


def run_evotorch(env_id: str, steps: int, workers: int, seed: int) -> dict:
    import gymnasium as gym
    import torch
    from evotorch.algorithms import PGPE
    from evotorch.neuroevolution import GymNE

    torch.manual_seed(seed)
    t0 = time.perf_counter()
    problem = GymNE(env=env_id, network="Linear(obs_length, 64) >> Tanh() >> Linear(64, 64) >> Tanh() >> Linear(64, "
                                        "act_length)",
                    observation_normalization=True, num_actors=workers)
    max_speed = 0.015  # the tutorial's ClipUp settings for MuJoCo
    searcher = PGPE(problem, popsize=64, center_learning_rate=max_speed * 0.75, stdev_learning_rate=0.1,
                    optimizer="clipup", optimizer_config={"max_speed": max_speed}, radius_init=0.27, symmetric=True)
    generations = 0
    while problem.status.get("total_interaction_count", 0) < steps:
        searcher.step()
        generations += 1
    wall = time.perf_counter() - t0
    policy = problem.to_policy(searcher.status["center"])
    env = gym.make(env_id)
    returns = []
    for i in range(10):
        obs, _ = env.reset(seed=1000 + i)
        done, total = False, 0.0
        while not done:
            with torch.no_grad():
                action = policy(torch.as_tensor(obs, dtype=torch.float32)).numpy()
            obs, r, term, trunc, _ = env.step(np.clip(action, env.action_space.low, env.action_space.high))
            total += r
            done = term or trunc
        returns.append(total)
    steps_done = int(problem.status["total_interaction_count"])
    problem.kill_actors()
    return {"steps": steps_done, "wall": wall, "eval": float(np.mean(returns)), "generations": generations}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="Swimmer-v5")
    p.add_argument("--steps", type=int, default=4_000_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--only", choices=("distrl", "evotorch"), default=None)
    add_flag(p)
    args = p.parse_args()
    writer = start(["es-vs-evotorch"], p, args, keep=("only",))
    lines = ["| library | seed | env steps | generations | wall s (with start-up) | greedy return (10 ep.) |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines))
    for seed in args.seeds:
        for name, fn in (("distrl ES", run_distrl), ("evotorch PGPE", run_evotorch)):
            if args.only and not name.startswith(args.only):
                continue
            r = fn(args.env, args.steps, args.workers, seed)
            lines.append(f"| {name} | {seed} | {r['steps']:,} | {r['generations']} | {r['wall']:.1f} | "
                         f"{r['eval']:.1f} |")
            print(lines[-1], flush=True)
    if writer:
        writer.write({"es-vs-evotorch": "\n".join(lines)})


if __name__ == "__main__":
    main()
