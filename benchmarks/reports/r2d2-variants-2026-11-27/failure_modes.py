"""How R2D2's greedy policy fails on the masked CartPole: one 500k-step run, then 20 greedy episodes, each as
(length, what ended it: "x" the cart off the track, "th" the pole down, "-" the time limit, the final cart position).

    python failure_modes.py SEED "{'obs_norm': True}"
"""

import ast
import sys
import tempfile

import distrl
from distrl.envs import make_env

seed = int(sys.argv[1])
extra = ast.literal_eval(sys.argv[2]) if len(sys.argv) > 2 else {}
with tempfile.TemporaryDirectory() as d:
    distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", seed=seed, total_steps=500_000, run_dir=d, **extra)
    policy = distrl.load_policy(d)
    env = make_env("distrl/CartPoleNoVelocity-v1")
    episodes = []
    for ep in range(20):
        obs, _ = env.reset(seed=12345 + ep)
        policy.reset()
        t, done = 0, False
        while not done:
            obs, _, terminated, truncated, _ = env.step(policy.act(obs))
            t, done = t + 1, terminated or truncated
        x, _, theta, _ = env.unwrapped.state
        episodes.append((t, "x" if abs(x) > 2.4 else ("th" if abs(theta) > 0.2095 else "-"), round(float(x), 2)))
print(seed, extra, episodes, flush=True)
