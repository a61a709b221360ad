"""Atari's vector envs as an actor steps them: ALE's own (what distrl's actors use), EnvPool's, and one
Gymnasium-wrapped env per copy, the same preprocessing, random actions.

    python benchmarks/atari_vector.py --docs         # Pong and Breakout, 8 and 16 envs, 3 x 5 s each
    python benchmarks/atari_vector.py --envs ALE/Pong-v5 --copies 8 --seconds 2

Every backend with the preprocessing ``make_vec_env`` gives a training env: 30 no-op starts, frame skip 4
(max-pooled), 84x84 grey, a stack of 4, a lost life ends the episode, sticky actions (0.25), no FIRE on reset, at most
108k frames an episode. One thread is what an actor process gets (one process per core); every core is for scale.
Each rate is the median of ``--reps`` runs, the backends taking turns, so that a busy moment hits them alike. EnvPool
(``pip install envpool``, Python 3.11+; the ``bench`` extra) is left out where it is not installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from distrl.envs.make import _atari_env, _atari_vec_env, _register_atari

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, start  # noqa: E402  (the benchmarks folder's own helper)

FRAME_SKIP = 4
ALE_ONE = "ALE's vector env, 1 thread (distrl's actors)"
ENVPOOL_ONE = "EnvPool, 1 thread"


def rate(env, n: int, seconds: float) -> float:
    """Env steps/s of ``n`` copies stepped with uniformly random actions for ``seconds``."""
    env.reset()  # unseeded: EnvPool takes its seed when made, and the rate does not depend on it
    rng = np.random.default_rng(0)
    actions = env.single_action_space.n
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(rng.integers(0, actions, n))
        steps += n
    elapsed = time.perf_counter() - t0
    env.close()
    return steps / elapsed


def envpool_env(env_id: str, n: int, threads: int):
    """EnvPool's Atari task of the same game (``ALE/Pong-v5`` -> ``Pong-v5``), its settings set to ours."""
    import envpool

    return envpool.make(env_id.split("/")[-1], env_type="gymnasium", num_envs=n, num_threads=threads, seed=0,
                        noop_max=30, frame_skip=FRAME_SKIP, img_height=84, img_width=84, gray_scale=True,
                        stack_num=4, episodic_life=True, reward_clip=False, use_fire_reset=False,
                        repeat_action_probability=0.25, max_episode_steps=108_000 // FRAME_SKIP)


def has_envpool() -> bool:
    try:
        import envpool  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="+", default=["ALE/Pong-v5", "ALE/Breakout-v5"])
    p.add_argument("--copies", nargs="+", type=int, default=[8, 16], help="envs in one vector env")
    p.add_argument("--seconds", type=float, default=5.0, help="per run")
    p.add_argument("--reps", type=int, default=3)
    add_flag(p)
    args = p.parse_args()
    writer = start(["atari-vector"], p, args, keep=("envs", "copies", "seconds", "reps"))
    _register_atari()
    cores = os.cpu_count() or 1
    backends = {"Gymnasium wrappers, SyncVectorEnv": lambda e, n: gym.vector.SyncVectorEnv(
                    [lambda: _atari_env(e, True) for _ in range(n)]),
                ALE_ONE: lambda e, n: _atari_vec_env(e, n, True),
                f"ALE's vector env, {cores} threads": lambda e, n: _atari_vec_env(e, n, True, num_threads=cores)}
    pool = has_envpool()
    if pool:
        backends[ENVPOOL_ONE] = lambda e, n: envpool_env(e, n, 1)
        backends[f"EnvPool, {cores} threads"] = lambda e, n: envpool_env(e, n, cores)
    else:
        print("envpool is not installed: its columns are left out (pip install envpool)", file=sys.stderr)
    table = Table("env", "envs", *(f"{name} (env steps/s)" for name in backends),
                  *(["EnvPool / ALE, 1 thread"] if pool else []))
    for env_id in args.envs:
        for n in args.copies:
            runs = {name: [] for name in backends}
            for _ in range(args.reps):
                for name, make in backends.items():
                    runs[name].append(rate(make(env_id, n), n, args.seconds))
            median = {name: statistics.median(r) for name, r in runs.items()}
            cells = [f"{median[name]:,.0f}" for name in backends]
            if pool:
                cells.append(f"{median[ENVPOOL_ONE] / median[ALE_ONE]:.2f}")
            table.row(env_id, n, *cells)
    if writer:
        writer.write({"atari-vector": str(table)})


if __name__ == "__main__":
    main()
