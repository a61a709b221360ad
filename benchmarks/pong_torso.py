"""Does IMPALA's Nature-CNN torso learn Pong's features? A check that fits a CPU (issue #20).

Pong runs with a CUDA learner kept the policy uniform for 6.2M env steps (docs, learners on a GPU). This
script trains IMPALA on Pong for ``--steps`` env steps on ``local`` (the GPU runs' settings, CPU learner) and
then plays its policy on fresh envs to ask whether the network tells Pong's states apart at all:

- ``value_std``: the spread of V(s) over the states visited (a value that ignores the state is a constant);
- ``value_corr`` and ``explained_var``: V(s) against the discounted clipped return that followed (the
  value target), over the same states; ``logit_std``: how much the policy's logits vary from state to state;
- ``feature_spread``: the torso's output units' spread over the states, relative to their mean.

Run it once per version to compare (``PYTHONPATH=<checkout>/src python benchmarks/pong_torso.py --label ...``);
rows are appended to ``--out`` as JSON lines. ``--readme-from FILE`` measures nothing and writes the docs' table
from such a file (one row per label, its values seed by seed; block ``script:pong-torso``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import throughput  # noqa: E402  (the benchmarks folder's own helpers)
from doc_blocks import existing_file, finished, markdown_table, report_line, write_blocks  # noqa: E402

import distrl  # noqa: E402
from distrl.bench import machine  # noqa: E402
from distrl.envs.make import make_vec_env  # noqa: E402

ENV = "ALE/Pong-v5"


def play(model, steps: int, envs: int, seed: int, gamma: float) -> dict:
    """The trained policy (sampling) on ``envs`` fresh envs for ``steps`` vector steps; the state statistics."""
    vec = make_vec_env(ENV, envs, seed, training=False)
    obs, _ = vec.reset(seed=seed)
    observations, rewards, ends = [], [], []
    with torch.no_grad():
        for _ in range(steps):
            action, _ = model.act(torch.from_numpy(obs))
            observations.append(obs.copy())
            obs, reward, terminated, truncated, _ = vec.step(action.numpy())
            rewards.append(np.clip(reward, -1, 1))
            ends.append(terminated | truncated)
    vec.close()
    rewards, ends = np.array(rewards), np.array(ends)
    returns, running = np.zeros_like(rewards), np.zeros(envs)
    for t in reversed(range(steps)):  # the return that followed each state, cut at episode ends
        running = rewards[t] + gamma * running * (1.0 - ends[t])
        returns[t] = running
    keep = steps - 300  # the last states' returns are cut short by the window: left out
    x = torch.from_numpy(np.concatenate(observations[:keep]))
    with torch.no_grad():
        features = model.pi_torso(x)
        logits = model.pi_head(features)
        values = model.v_head(features).squeeze(-1).numpy()
    target = returns[:keep].reshape(-1)
    return {"value_std": float(values.std()), "value_corr": float(np.corrcoef(values, target)[0, 1]),
            "explained_var": float(1.0 - np.var(target - values) / np.var(target)),
            "logit_std": float(logits.std(0).mean()),
            "feature_spread": float(features.std(0).mean() / features.mean().clamp(min=1e-12)),
            "target_std": float(target.std())}


def table(rows: list[dict]) -> str:
    """One row per label (in the file's order), each column its values seed by seed."""
    columns = [("value vs the return that followed: correlation", "value_corr", ".2f"),
               ("explained variance", "explained_var", ".3f"), ("value spread", "value_std", ".3f"),
               ("logit spread across states", "logit_std", ".4f"), ("return (100 episodes)", "return_mean", ".2f")]
    lines = []
    for label in dict.fromkeys(r["label"] for r in rows):
        mine = sorted((r for r in rows if r["label"] == label), key=lambda r: r["seed"])
        lines.append((label, ", ".join(str(r["seed"]) for r in mine),
                      *(", ".join(format(r[key], fmt) for r in mine) for _, key, fmt in columns)))
    return markdown_table(["version", "seeds", *(c[0] for c in columns)], lines)


def measured_on(rows: list[dict]) -> str:
    """What the rows say about where they were measured: the machine (rows written since they carry it) and the
    env steps per run."""
    machines = {r.get("machine") for r in rows}
    steps = sorted({r["steps"] for r in rows})
    where = next(iter(machines)) if len(machines) == 1 and None not in machines else \
        "a machine the rows do not name (written before they carried it; the docs' text says which)"
    return f"{where}; {', '.join(f'{n:,}' for n in steps)} env steps per run"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--label", help="the version measured (a row's name)")
    p.add_argument("--steps", type=int, default=300_000, help="env steps of training")
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="pong_torso.jsonl")
    p.add_argument("--readme-from", type=existing_file, metavar="JSONL",
                   help="measure nothing: write the docs' table from such a file")
    args = p.parse_args()
    if args.readme_from:
        rows = [json.loads(line) for line in args.readme_from.read_text().splitlines() if line.strip()]
        line = report_line(args.readme_from, measured_on(rows),
                           " by `python benchmarks/pong_torso.py --label LABEL --seed SEED`, one checkout per label")
        return write_blocks({"script:pong-torso": f"{line}\n\n{table(rows)}"})
    if not args.label:
        p.error("--label is required (the version measured), unless --readme-from")
    settings = dict(throughput.PRESETS[ENV], batch_unrolls=4)
    with tempfile.TemporaryDirectory() as d:
        run = Path(d) / "run"
        t0 = time.perf_counter()
        s = finished(distrl.train("impala", env=ENV, runtime="local", num_actors=args.actors, total_steps=args.steps,
                         seed=args.seed, log_interval_s=10.0, run_dir=str(run), **settings))
        wall = time.perf_counter() - t0
        model = distrl.load_policy(run).model.eval()
        row = {"label": args.label, "machine": machine.one_line(machine.describe()), "steps": s["env_steps"],
               "updates": s["learner_updates"], "wall_s": round(wall, 1),
               "return_mean": s["episode_return_mean"], "seed": args.seed,
               **play(model, 1200, 8, 10_000 + args.seed, settings.get("gamma", 0.99))}
    print(json.dumps(row), flush=True)
    with open(args.out, "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
