"""Greedy evaluation of one QT-Opt run's last checkpoint with CEM of other sizes, and with the actors' noise, on the
episode seeds `distrl eval` uses (12345 + episode): python cem_eval.py RUN_DIR [EPISODES]."""
import json
import sys
import time

import numpy as np

from distrl.api import load_policy
from distrl.envs import make_env

run, episodes = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
policy = load_policy(run)
q = policy.model.online
base = dict(q.cem)
variants = {"default (2x64, 6 elites)": (base, 0.0), "3x64, 6": (dict(base, iterations=3), 0.0),
            "2x256, 16": (dict(base, samples=256, elites=16), 0.0),
            "4x256, 16": (dict(iterations=4, samples=256, elites=16), 0.0),
            "default + noise 0.1": (base, 0.1)}
env = make_env(policy.env_id)
low, high = env.action_space.low, env.action_space.high
for name, (cem, noise) in variants.items():
    q.cem = cem
    rng = np.random.default_rng(0)
    returns, t0 = [], time.time()
    for ep in range(episodes):
        obs, _ = env.reset(seed=12345 + ep)
        done, total = False, 0.0
        while not done:
            a = policy.act(obs)
            if noise:
                a = np.clip(a + rng.normal(0, noise * (high - low) / 2), low, high).astype(np.float32)
            obs, r, term, trunc, _ = env.step(a)
            total += float(r); done = term or trunc
        returns.append(total)
    r = np.array(returns)
    print(json.dumps({"variant": name, "mean": round(r.mean(), 1), "std": round(r.std(), 1), "min": round(r.min(), 1),
                      "below_100": int((r < 100).sum()), "s": round(time.time() - t0, 1)}), flush=True)
