"""SB3 PPO, its defaults (n_steps 2048, batch 64, 10 epochs, lr 3e-4, gamma 0.99, GAE 0.95, clip 0.2, ent 0),
8 envs, on LunarLander-v3, seed 0, 1M steps: the training mean of the last 100 episodes every ~50k steps and the
greedy eval at the end."""
import sys
import numpy as np
import gymnasium as gym
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.callbacks import BaseCallback

class Log(BaseCallback):
    def __init__(self):
        super().__init__(); self.next = 0
    def _on_step(self):
        if self.num_timesteps >= self.next:
            buf = self.model.ep_info_buffer
            r = np.mean([e["r"] for e in buf]) if buf else float("nan")
            l = np.mean([e["l"] for e in buf]) if buf else float("nan")
            print(f"{self.num_timesteps//1000}k: {r:.0f} (len {l:.0f})", flush=True)
            self.next += 50_000
        return True

steps = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
env = make_vec_env("LunarLander-v3", n_envs=8, seed=0)
model = PPO("MlpPolicy", env, seed=0, device="cpu", verbose=0)
model.learn(steps, callback=Log())
ev = gym.make("LunarLander-v3")
rets = []
for i in range(20):
    o, _ = ev.reset(seed=1000 + i); done = False; R = 0.0
    while not done:
        a, _ = model.predict(o, deterministic=True)
        o, r, te, tr, _ = ev.step(a); R += r; done = te or tr
    rets.append(R)
print("greedy", np.mean(rets), np.min(rets))
