"""How Ape-X DQN's greedy policy ends its CartPole episodes at a stall: a short `inline` run with the defaults, then
20 greedy episodes; prints their lengths and what ended them (x: the cart off the track, th: the pole down, -: the
time limit).

    python failure_modes.py SEED STEPS ["{'gamma': 0.997}"]
"""
import ast
import collections
import sys
import tempfile

import distrl
from distrl.envs import make_env

seed, steps = int(sys.argv[1]), int(float(sys.argv[2]))
extra = ast.literal_eval(sys.argv[3]) if len(sys.argv) > 3 else {}
with tempfile.TemporaryDirectory() as d:
    s = distrl.train("apex-dqn", env="CartPole-v1", seed=seed, total_steps=steps, run_dir=d, runtime="inline", **extra)
    policy = distrl.load_policy(d)
    env = make_env("CartPole-v1")
    ends, lengths = collections.Counter(), []
    for ep in range(20):
        obs, _ = env.reset(seed=12345 + ep)
        policy.reset()
        t, done = 0, False
        while not done:
            obs, _, terminated, truncated, _ = env.step(policy.act(obs))
            t, done = t + 1, terminated or truncated
        x, _, theta, _ = env.unwrapped.state
        ends["x" if abs(x) > 2.4 else ("th" if abs(theta) > 0.2095 else "-")] += 1
        lengths.append(t)
print(seed, steps, extra, "training mean", s["episode_return_mean"], "greedy lengths", sorted(lengths), dict(ends), flush=True)
