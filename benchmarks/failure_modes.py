"""How a system's greedy policy ends its CartPole episodes (the full or the masked CartPole): one run, then 20 greedy
episodes on env seeds 12345..., each as (length, what ended it: "x" the cart off the track, "th" the pole down, "-"
the time limit, by the env's own bounds; the final cart position), and a count of the ends. Used to tell a policy
that drops the pole from one that drives the cart off the track (R2D2's on the memory task, #15; Ape-X DQN's
CartPole stall, #22).

    python benchmarks/failure_modes.py --system apex-dqn --env CartPole-v1 --runtime inline --steps 1e5 --seed 3
    python benchmarks/failure_modes.py --system r2d2 --steps 5e5 --seed 0 --set obs_norm=true
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

import distrl
from distrl.config import parse_assignments
from distrl.envs import make_env

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import finished  # noqa: E402  (the benchmarks folder's own helper)


def episodes(run_dir: str, env_id: str, count: int = 20) -> list[tuple[int, str, float]]:
    policy = distrl.load_policy(run_dir)
    env = make_env(env_id)
    cartpole = env.unwrapped
    out = []
    for ep in range(count):
        obs, _ = env.reset(seed=12345 + ep)
        policy.reset()
        t, terminated, truncated = 0, False, False
        while not (terminated or truncated):
            obs, _, terminated, truncated, _ = env.step(policy.act(obs))
            t += 1
        x = float(cartpole.state[0])
        end = "-" if not terminated else ("x" if abs(x) > cartpole.x_threshold else "th")
        out.append((t, end, round(x, 2)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True)
    p.add_argument("--env", default="distrl/CartPoleNoVelocity-v1")
    p.add_argument("--runtime", default=None, help="default: the system's")
    p.add_argument("--steps", type=float, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="settings over the defaults")
    args = p.parse_args()
    extra = parse_assignments(args.set)
    taken = sorted(set(extra) & {"env", "runtime", "seed", "total_steps", "run_dir"})
    if taken:
        p.error(f"give {', '.join(taken)} with the script's own flags, not --set")
    run = {"runtime": args.runtime} if args.runtime else {}
    with tempfile.TemporaryDirectory() as d:
        s = finished(distrl.train(args.system, env=args.env, seed=args.seed, total_steps=int(args.steps), run_dir=d,
                                  **run, **extra))
        eps = episodes(d, args.env)
    print(args.system, args.env, args.seed, extra, "training mean", s["episode_return_mean"], eps,
          dict(collections.Counter(e[1] for e in eps)), flush=True)


if __name__ == "__main__":
    main()
