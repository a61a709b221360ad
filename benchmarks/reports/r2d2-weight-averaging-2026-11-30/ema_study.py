"""Train one R2D2 run per seed, then evaluate each set of weights its last checkpoint holds (online, target and the
moving averages ``ema.patch`` adds) as ``distrl eval`` does: 20 greedy episodes from seed 12345 on. Needs distrl
with ``ema.patch`` applied on PYTHONPATH (variants.md says how). One JSON line per seed on stdout.

    python ema_study.py ENV STEPS SEEDS OUT     # e.g. distrl/CartPoleNoVelocity-v1 1e6 0,1,2,3 ../ema-runs
"""

import json
import sys
import time
from pathlib import Path

import distrl
import distrl.api as api
from distrl.api import Policy, evaluate
from distrl.runtime.run.checkpoint import latest_checkpoint, load_checkpoint

WEIGHTS = ("model", "target", "ema_99", "ema_999", "ema_9997")


def policy_with(weights: str):
    """A ``load_policy`` that loads the checkpoint's ``weights`` file into the policy's model."""
    def load(run_dir):
        policy = Policy(run_dir)
        load_checkpoint(latest_checkpoint(Path(run_dir) / "checkpoints"), {weights: policy.model})
        return policy
    return load


def main() -> None:
    env, steps, seeds, out = sys.argv[1], int(float(sys.argv[2])), sys.argv[3].split(","), Path(sys.argv[4])
    out.mkdir(parents=True, exist_ok=True)
    for seed in map(int, seeds):
        run = out / f"s{seed}"
        start = time.monotonic()
        if not (run / "done").exists():  # a second call evaluates the runs it finds again
            distrl.train("r2d2", env=env, total_steps=steps, seed=seed, run_dir=str(run), force=True)
            (run / "done").write_text("1")
        row = {"env": env, "seed": seed, "wall": round(time.monotonic() - start)}
        for weights in WEIGHTS:
            api.load_policy = policy_with(weights)  # evaluate() loads its policy through this name
            r = evaluate(str(run), episodes=20)
            row[weights] = (round(r["mean_return"], 1), round(r["min_return"], 1))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
