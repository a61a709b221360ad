"""The defaults issue's study of the actor-critic normalisers: IMPALA's one-step config (its default until 2026-11-28;
A2C's one-update config, its default until then, for ``--system a2c``) against the same system
with observation normalisation, PopArt and standardised advantages (Adam 3e-4, entropy 0.01), on the beyond-
CartPole suite. One seed per cell, cells in turn (never two timed runs at once).

For each cell: the peak of the training mean (last 100 episodes) and where it was, the final training mean,
the greedy evaluation (20 episodes) and the wall time; the curves go to ``curves.png``.

    python benchmarks/normaliser_study.py --out benchmarks/reports/normalisers-2026-11-27 [--readme]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

import distrl
from distrl.config import load_yaml
from distrl.presets import preset_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import add_flag, finished, markdown_table, start  # noqa: E402  (the benchmarks folder's own helper)

# one update per batch, which the study's "default" rows ran and its normalised config was laid over: IMPALA's and
# A2C's defaults, SEED's vtrace preset
ONE_STEP = {"impala": {}, "seed": load_yaml(preset_path("seed", "vtrace")), "a2c": {}}
NORMALISED = {"obs_norm": True, "value_norm": True, "normalize_advantages": True, "optimizer": "adam", "lr": 3e-4,
              "optimizer_eps": 1e-5, "entropy_coef": 0.01}
CELLS = [("LunarLander-v3", 5_000_000), ("Pendulum-v1", 5_000_000), ("LunarLanderContinuous-v3", 5_000_000)]


def run_cell(system: str, env: str, steps: int, settings: dict, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        start = time.monotonic()
        finished(distrl.train(system, env=env, total_steps=steps, seed=seed, run_dir=f"{d}/r", **settings))
        wall = time.monotonic() - start
        curve = [
            (int(r["env_steps"]), float(r["episode_return_mean"]))
            for r in csv.DictReader(open(f"{d}/r/metrics.csv"))
            if r["episode_return_mean"] not in ("", "nan")
        ]
        greedy = distrl.evaluate(f"{d}/r", episodes=20)
    peak_at, peak = max(curve, key=lambda p: p[1])
    return {"system": system, "env": env, "steps": steps, "seed": seed, "settings": settings, "curve": curve,
            "peak": peak, "peak_at": peak_at, "final": curve[-1][1], "greedy": greedy["mean_return"],
            "greedy_min": greedy.get("min_return"), "wall_s": wall}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--system", default="impala")
    p.add_argument("--seed", type=int, default=0)
    add_flag(p)
    args = p.parse_args()
    writer = start(["normalisers"], p, args, keep=("system", "seed"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for env, steps in CELLS:
        base = ONE_STEP.get(args.system, {})
        for name, settings in (("default", base), ("normalised", dict(base, **NORMALISED))):
            r = run_cell(args.system, env, steps, settings, args.seed)
            r["config"] = name
            results.append(r)
            print(f"{env} {name}: peak {r['peak']:.0f} at {r['peak_at']:,}, final {r['final']:.0f}, "
                  f"greedy {r['greedy']:.0f}, {r['wall_s']:.0f} s", flush=True)
    (out / "study.json").write_text(json.dumps(results, indent=1))
    table = markdown_table(["env", "config", "env steps", "peak training mean (at env steps)", "final training mean",
                            "greedy eval", "wall s"],
                           [(r["env"], r["config"], f"{r['steps']:,}", f"{r['peak']:.0f} ({r['peak_at']:,})",
                             f"{r['final']:.0f}", f"{r['greedy']:.0f}", f"{r['wall_s']:.0f}") for r in results])
    print(table)
    (out / "report.md").write_text(f"`python benchmarks/normaliser_study.py --out {args.out}` ({args.system}, seed "
                                   f"{args.seed}); normalised = {json.dumps(NORMALISED)}\n\n{table}\n")
    if writer:
        writer.write({"normalisers": str(table)})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CELLS), figsize=(5 * len(CELLS), 3.6))
    for ax, (env, _) in zip(axes, CELLS):
        for r in results:
            if r["env"] == env:
                xs, ys = zip(*r["curve"])
                ax.plot(xs, ys, label=r["config"])
        ax.set_title(env)
        ax.set_xlabel("env steps")
        ax.set_ylabel("training return (last 100)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=110)


if __name__ == "__main__":
    main()
