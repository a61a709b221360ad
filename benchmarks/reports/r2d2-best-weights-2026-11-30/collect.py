"""Collects the runs of base.sh and new.sh: each seed's greedy eval of its best evaluated weights and of its last
checkpoint, its periodic evaluations (evaluations.csv) and a plot of them (evaluations.png), wall time, env steps/s.

    python collect.py RUNS_ROOT   # the folder base.sh and new.sh wrote: base-s<S>*, new-s<S>*
"""

import csv
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

root, here = Path(sys.argv[1]), Path(__file__).parent
rows, curves = [], []
for prefix in ("base", "new"):
    for summary in sorted(root.glob(f"{prefix}-s*.json")):
        seed = int(summary.stem.split("-s")[1])
        run = root / f"{prefix}-s{seed}"
        s = json.loads(summary.read_text().strip().splitlines()[-1])
        wall = float((root / f"{prefix}-s{seed}.time").read_text().split()[1])
        row = {"code": prefix, "seed": seed, "env_steps": s["env_steps"], "command_s": wall, "sps": s["sps"]}
        for kind in ("best", "last", "eval"):
            f = root / f"{prefix}-s{seed}.{kind}"
            if f.is_file():
                row[kind] = json.loads(f.read_text())["mean_return"]
        if "best_policy" in s:
            row["chosen_at"], row["chosen_score"] = s["best_policy"]["env_steps"], s["best_policy"]["eval_return_mean"]
        rows.append(row)
        for r in csv.DictReader(open(run / "metrics.csv")):
            if r.get("eval_return_mean"):
                curves.append({"code": prefix, "seed": seed, "env_steps": int(r["env_steps"]),
                               "eval_return_mean": float(r["eval_return_mean"])})
(here / "runs.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
with open(here / "evaluations.csv", "w", newline="") as f:
    w = csv.DictWriter(f, ["code", "seed", "env_steps", "eval_return_mean"])
    w.writeheader()
    w.writerows(curves)
fig, ax = plt.subplots(figsize=(9, 4.5))
for seed in sorted({c["seed"] for c in curves if c["code"] == "new"}):
    pts = [(c["env_steps"], c["eval_return_mean"]) for c in curves if c["code"] == "new" and c["seed"] == seed]
    ax.plot(*zip(*pts), lw=1, label=f"seed {seed}")
ax.axhline(475, color="k", lw=0.5, ls="--")
ax.set(xlabel="env steps", ylabel="greedy return, 10 episodes", title="R2D2, masked CartPole: periodic evaluations")
ax.legend(fontsize=7, ncol=4)
fig.tight_layout()
fig.savefig(here / "evaluations.png", dpi=90)
for r in rows:
    print(r)
