"""Peers beside distrl in the same bench run: Stable-Baselines3's A2C, DQN and PPO on CartPole-v1.

Each runs in its own process with rl-baselines3-zoo's CartPole-v1 hyperparameters (the library's own
tuned settings: ``hyperparams/{a2c,dqn,ppo}.yml``), logs the same curve a distrl run writes (env steps,
wall seconds, mean training return of the last 100 episodes, a row per second) and is evaluated greedily
over the same episodes. Installed by the ``peers`` extra (``pip install -e ".[peers]"``).

Sample Factory's APPO is not here: its latest release (2.1.1) pins gymnasium 0.29 and numpy 1.26, so it
cannot be installed beside distrl (gymnasium >= 1.0); the docs quote its figures from its issue tracker.

    python -m distrl.bench.peers ppo CartPole-v1 0 OUT.json     # one run (what the bench spawns)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

PEERS = ("sb3-a2c", "sb3-dqn", "sb3-ppo")
ENV = "CartPole-v1"


def _zoo(algo: str):
    """rl-baselines3-zoo's CartPole-v1 entry: (class name, n_envs, budget, constructor kwargs)."""

    def linear(start: float):
        return lambda progress_remaining: progress_remaining * start

    if algo == "a2c":
        return "A2C", 8, 500_000, {"ent_coef": 0.0}
    if algo == "dqn":
        return "DQN", 1, 50_000, {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000,
                                  "learning_starts": 1000, "gamma": 0.99, "target_update_interval": 10,
                                  "train_freq": 256, "gradient_steps": 128, "exploration_fraction": 0.16,
                                  "exploration_final_eps": 0.04, "policy_kwargs": {"net_arch": [256, 256]}}
    if algo == "ppo":
        return "PPO", 8, 100_000, {"n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98,
                                   "n_epochs": 20, "ent_coef": 0.0, "learning_rate": linear(1e-3),
                                   "clip_range": linear(0.2)}
    raise ValueError(f"unknown peer '{algo}'")


def available() -> bool:
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        return False
    return True


def run(algo: str, env_id: str, seed: int, out: Path, eval_episodes: int = 20) -> dict:
    import numpy as np
    import stable_baselines3
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)  # one thread as distrl's processes; not distrl's malloc thresholds: a peer runs as shipped
    name, n_envs, budget, kwargs = _zoo(algo)
    started = time.time()
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    model = getattr(stable_baselines3, name)("MlpPolicy", env, seed=seed, device="cpu", **kwargs)

    class Curve(BaseCallback):
        def _on_training_start(self) -> None:
            self.t0, self.next_row, self.rows = time.perf_counter(), 1.0, []

        def _on_step(self) -> bool:
            wall = time.perf_counter() - self.t0
            if wall >= self.next_row:
                self.next_row = wall + 1.0
                returns = [e["r"] for e in self.model.ep_info_buffer]  # the last 100 episodes, as distrl's
                self.rows.append((self.num_timesteps, wall, float(np.mean(returns)) if returns else float("nan")))
            return True

    curve = Curve()
    t0 = time.time()
    model.learn(budget, callback=curve)
    train_s = time.time() - t0
    returns = [e["r"] for e in model.ep_info_buffer]
    curve.rows.append((model.num_timesteps, train_s, float(np.mean(returns)) if returns else float("nan")))
    mean, _ = evaluate_policy(model, make_vec_env(env_id, n_envs=1, seed=12345), n_eval_episodes=eval_episodes,
                              deterministic=True)
    result = {"peer": f"sb3-{algo}", "env": env_id, "seed": seed, "env_steps": model.num_timesteps,
              "train_s": round(train_s, 2), "startup_s": round(t0 - started, 2), "final_eval": float(mean),
              "curve": curve.rows, "version": stable_baselines3.__version__, "n_envs": n_envs,
              "hyperparameters": "rl-baselines3-zoo CartPole-v1"}
    out.write_text(json.dumps(result))
    return result


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), *(int(a) for a in sys.argv[5:6]))
