"""Stable-Baselines3's PPO with its defaults (n_steps 2048, batch 64, 10 epochs, lr 3e-4, gamma 0.99, GAE 0.95, clip
0.2, no entropy bonus), 8 envs, on LunarLander-v3, seed 0: the training mean of the last 100 episodes (and their mean
length) every 50k env steps, then the greedy evaluation over 20 episodes (mean, worst). The reference that the APPO
report compares distrl's closest settings with.

    python benchmarks/reports/appo-2026-11-27/sb3_ppo_lunarlander.py 1e6
"""

import sys

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env


class PrintCurve(BaseCallback):
    def __init__(self, every: int = 50_000):
        super().__init__()
        self.every, self.next = every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            episodes = self.model.ep_info_buffer
            ret = np.mean([e["r"] for e in episodes]) if episodes else float("nan")
            length = np.mean([e["l"] for e in episodes]) if episodes else float("nan")
            print(f"{self.num_timesteps // 1000}k: {ret:.0f} (len {length:.0f})", flush=True)
            self.next += self.every
        return True


def greedy_returns(model: PPO, episodes: int = 20) -> list[float]:
    env, returns = gym.make("LunarLander-v3"), []
    for i in range(episodes):
        obs, _ = env.reset(seed=1000 + i)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
        returns.append(total)
    return returns


if __name__ == "__main__":
    steps = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    model = PPO("MlpPolicy", make_vec_env("LunarLander-v3", n_envs=8, seed=0), seed=0, device="cpu", verbose=0)
    model.learn(steps, callback=PrintCurve())
    returns = greedy_returns(model)
    print("greedy", np.mean(returns), np.min(returns))
