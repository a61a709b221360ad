"""ALE's own vector env against one Gymnasium-wrapped env per copy, same preprocessing, random actions.

    python benchmarks/atari_vector.py                  # ALE/Pong-v5, 8 envs, 5 s each
    python benchmarks/atari_vector.py --env ALE/Breakout-v5 --envs 16 --seconds 10

Prints env steps/s of: Gymnasium's ``SyncVectorEnv`` over ``AtariPreprocessing`` + ``FrameStackObservation``
(what ``make_vec_env`` built before), and ``AtariVectorEnv`` with one thread (what an actor process gets now)
and with every core (for scale: an actor is one process per core, so distrl keeps one thread).
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np

from distrl.envs.make import _atari_env, _atari_vec_env, _register_atari


def rate(env: gym.vector.VectorEnv, n: int, seconds: float) -> float:
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(rng.integers(0, env.single_action_space.n, n))
        steps += n
    return steps / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="ALE/Pong-v5")
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args()
    _register_atari()
    from ale_py.vector_env import AtariVectorEnv

    n = args.envs
    wrapped = gym.vector.SyncVectorEnv([lambda: _atari_env(args.env, True) for _ in range(n)])
    print(f"| {args.env}, {n} envs | env steps/s |\n|---|---|")
    print(f"| SyncVectorEnv of wrapped envs | {rate(wrapped, n, args.seconds):,.0f} |")
    print("| AtariVectorEnv, 1 thread (distrl's actors) | "
          f"{rate(_atari_vec_env(args.env, n, True), n, args.seconds):,.0f} |")
    cores = os.cpu_count() or 1
    native = AtariVectorEnv(gym.spec(args.env).kwargs["game"], n, num_threads=cores, reward_clipping=False,
                            use_fire_reset=False, repeat_action_probability=0.25)
    print(f"| AtariVectorEnv, {cores} threads | {rate(native, n, args.seconds):,.0f} |")


if __name__ == "__main__":
    main()
