"""Kuhn poker by self-play: how far from a Nash equilibrium is the league's main agent, against naive self-play at the
same budget?

For each mode (AlphaStar's prioritized fictitious self-play, ``pfsp``, and naive self-play, ``naive``) and seed, a
league of PPO players trains on ``openspiel:kuhn_poker`` (OpenSpiel's game, each player seeing its information
state); every snapshot the main agent leaves, and its weights at the end, are scored by their NashConv, computed
exactly with OpenSpiel's best response (``distrl.league.exploitability``): 0 is an equilibrium, uniform random play
scores 0.917. So is the mixture of them all (one of them drawn before each game and played throughout: the
population's policy, which fictitious play's theory says converges where the latest weights need not). The claim
(issue #60): the league's policy ends lower than naive self-play's.

    python benchmarks/league_kuhn.py --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from safetensors.torch import load_file

import distrl
from distrl.api import resolve_configs
from distrl.envs import env_spec
from distrl.league.exploitability import mixture_nash_conv, nash_conv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)

GAME = "openspiel:kuhn_poker"


def main_curve(folder: Path, settings: dict) -> tuple[list[tuple[int, float]], float]:
    """(the main agent's env steps, NashConv) of each of its snapshots, then of its last weights; and the NashConv
    of the mixture of them all."""
    module, _, cfg = resolve_configs("ppo", {**settings, "env": GAME})
    spec = env_spec(GAME)
    joined = [line.split(",") for line in (folder / "joined.csv").read_text().splitlines()[1:]]
    points, models = [], []
    for _, snapshot, player, steps, *_ in joined:
        if player == "main":
            model = module.make_model(spec, cfg).eval()
            model.load_state_dict(load_file(folder / "pool" / f"{snapshot}.safetensors"))
            points.append((int(steps), nash_conv(model, "kuhn_poker")))
            models.append(model)
    policy = distrl.load_policy(folder / "players" / "main", snapshot="last")
    points.append((json.loads((folder / "summary.json").read_text())["players"][0]["env_steps"],
                   nash_conv(policy.model, "kuhn_poker")))
    return points, mixture_nash_conv([*models, policy.model], "kuhn_poker")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--modes", nargs="+", default=["pfsp", "naive"])
    p.add_argument("--total-steps", type=int, default=100_000, help="env steps per learning player")
    p.add_argument("--slice-steps", type=int, default=10_000)
    p.add_argument("--snapshot-steps", type=int, default=10_000)
    add_flag(p)
    args = p.parse_args()
    writer = start(["league-kuhn"], p, args, keep=("seeds", "modes", "total_steps", "slice_steps", "snapshot_steps"))
    settings = {"num_envs": 8, "unroll_length": 128}
    quarter = [args.total_steps // 4 * k for k in (1, 2, 3)]
    table = Table("mode", "seed", "wall s", *(f"NashConv at {s // 1000}k" for s in quarter),
                  f"at the end ({args.total_steps // 1000}k)", "mixture of its snapshots and end")
    finals: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as d:
        for mode in args.modes:
            for seed in args.seeds:
                folder = Path(d) / f"{mode}-{seed}"
                t0 = time.perf_counter()
                finished(distrl.train_league("ppo", GAME, mode=mode, seed=seed, total_steps=args.total_steps,
                                    slice_steps=args.slice_steps, snapshot_steps=args.snapshot_steps,
                                    run_dir=str(folder), settings=settings))
                wall = time.perf_counter() - t0
                curve, mixture = main_curve(folder, settings)
                at = [min(curve, key=lambda c, s=s: abs(c[0] - s))[1] for s in quarter]
                finals.setdefault(mode, []).append((curve[-1][1], mixture))
                table.row(mode, seed, f"{wall:.0f}", *(f"{x:.3f}" for x in at), f"{curve[-1][1]:.3f}",
                          f"{mixture:.3f}")
    for mode, values in finals.items():
        end, mixed = np.mean(values, axis=0)
        table.row(mode, "mean", "", "", "", "", f"{end:.3f}", f"{mixed:.3f}")
    if writer:
        writer.write({"league-kuhn": str(table)})


if __name__ == "__main__":
    main()
