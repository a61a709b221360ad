"""Peers beside distrl in the same bench run: Stable-Baselines3's A2C, DQN and PPO on CartPole-v1, its PPO on
LunarLander-v3, each at rl-baselines3-zoo's hyperparameters for that env (the library's own tuned settings:
``hyperparams/{a2c,dqn,ppo}.yml``).

Each runs in its own process, logs the same curve a distrl run writes (env steps, wall seconds, mean training
return of the last 100 episodes, a row per second) and is measured by the protocol the bench's ``--peers`` gives
distrl's cells on the same env: a greedy evaluation of 10 episodes every ``PROTOCOL_EVAL_EVERY`` env steps, the
clock running, the time to the threshold counted from the command's start. SB3 evaluates in its training loop
(its ``EvalCallback``'s way), distrl in an evaluator process beside the run. A peer stops at its first greedy
evaluation at the threshold (which bounds the bench: Stable-Baselines3's PPO steps LunarLander ~1,000 times a
second here), or at the bench's cap on a cell's training time; its final evaluation is then over the bench's
episodes. Installed by the ``peers`` extra (``pip install -e ".[peers]"``).

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
# the env steps between greedy evaluations of the protocol, and the episodes of each (distrl's cells and the peers)
PROTOCOL_EVAL_EVERY = {"CartPole-v1": 10_000, "LunarLander-v3": 50_000}
PROTOCOL_EVAL_EPISODES = 10


def _zoo(algo: str, env_id: str):
    """rl-baselines3-zoo's entry for ``env_id`` (LunarLander-v2's for v3: the same task, box2d's new version):
    (class name, n_envs, budget, constructor kwargs), or None where the zoo tunes none."""

    def linear(start: float):
        return lambda progress_remaining: progress_remaining * start

    zoo = {
        ("a2c", "CartPole-v1"): ("A2C", 8, 500_000, {"ent_coef": 0.0}),
        ("dqn", "CartPole-v1"): ("DQN", 1, 50_000, {
            "learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
            "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
            "exploration_fraction": 0.16, "exploration_final_eps": 0.04, "policy_kwargs": {"net_arch": [256, 256]}}),
        ("ppo", "CartPole-v1"): ("PPO", 8, 100_000, {
            "n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20, "ent_coef": 0.0,
            "learning_rate": linear(1e-3), "clip_range": linear(0.2)}),
        ("ppo", "LunarLander-v3"): ("PPO", 16, 1_000_000, {
            "n_steps": 1024, "batch_size": 64, "gae_lambda": 0.98, "gamma": 0.999, "n_epochs": 4, "ent_coef": 0.01}),
    }
    return zoo.get((algo, env_id))


def runs_on(name: str, env_id: str) -> bool:
    """Whether peer ``name`` (``sb3-ALGO``) has the zoo's settings for ``env_id``."""
    return _zoo(name.split("-", 1)[1], env_id) is not None


def available() -> bool:
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        return False
    return True


def run(algo: str, env_id: str, seed: int, out: Path, eval_episodes: int = 20, threshold: float | None = None,
        max_wall_s: float | None = None) -> dict:
    import numpy as np
    import stable_baselines3
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)  # one thread as distrl's processes; not distrl's malloc thresholds: a peer runs as shipped
    name, n_envs, budget, kwargs = _zoo(algo, env_id)
    every = PROTOCOL_EVAL_EVERY.get(env_id)
    started = time.time()
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    eval_env = make_vec_env(env_id, n_envs=1, seed=10_000 + seed)
    model = getattr(stable_baselines3, name)("MlpPolicy", env, seed=seed, device="cpu", **kwargs)

    class Curve(BaseCallback):
        def _on_training_start(self) -> None:
            self.t0, self.next_row, self.rows, self.evals = time.perf_counter(), 1.0, [], []
            self.next_eval = every

        def _on_step(self) -> bool:
            wall = time.perf_counter() - self.t0
            if max_wall_s is not None and wall >= max_wall_s:
                return False  # the bench's cap on a cell, as distrl's cells have it
            if wall >= self.next_row:
                self.next_row = wall + 1.0
                returns = [e["r"] for e in self.model.ep_info_buffer]  # the last 100 episodes, as distrl's
                self.rows.append((self.num_timesteps, wall, float(np.mean(returns)) if returns else float("nan")))
            if every is not None and self.num_timesteps >= self.next_eval:  # the protocol's greedy evaluation
                self.next_eval += every
                mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=PROTOCOL_EVAL_EPISODES,
                                          deterministic=True)
                self.evals.append((self.num_timesteps, time.time(), float(mean)))
                if threshold is not None and mean >= threshold:
                    return False  # reached: the bench's time is bounded by the slowest peer's threshold
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
              "curve": curve.rows, "greedy_evals": curve.evals, "version": stable_baselines3.__version__,
              "n_envs": n_envs, "hyperparameters": f"rl-baselines3-zoo {env_id.replace('-v3', '-v2')}"}
    out.write_text(json.dumps(result))
    return result


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), *(int(a) for a in sys.argv[5:6]),
        *(float(a) for a in sys.argv[6:8]))
