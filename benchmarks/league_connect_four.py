"""Connect Four by self-play: does ``distrl league``'s main agent beat a fixed heuristic player, and how do its
snapshots rate?

For each seed (one by default: a league of this size takes ~5 minutes of a 2-core machine), a league (``--mode``,
AlphaStar's PFSP by default) of ``--system`` players (Ape-X DQN by default, the system's settings) with fixed players
in it (``--fixed``: random play and the heuristic player by default) trains ``--total-steps`` env steps per player on
``pettingzoo:classic.connect_four_v3?opening=N`` (each training game after 0 to N random plies). The heuristic player
(``--opponent heuristic``: win where it can, block where it must, never play under the other player's winning square,
else nearest the centre, ties at random) is a frozen member of the league, chosen by PFSP as the snapshots are
(``--fixed random`` leaves it out: then the main agent never meets it before its test). The main agent is tested
greedily against it, 200 games with the seats alternating, as against random play. Then every snapshot of the first
seed's main agent plays the heuristic too, beside its Elo rating in the league. The claim (issue #60): at least 90%
wins against the heuristic.

    python benchmarks/league_connect_four.py --seeds 0 1 2
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
from safetensors.torch import load_file

import distrl
from distrl.envs import make_env
from distrl.envs.opponents import opponent

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)

GAME = "pettingzoo:classic.connect_four_v3"


def results(model: torch.nn.Module, rival: str, games: int) -> list[str]:
    """W/D/L of ``model`` playing greedily against ``rival``, in the first seat and then the second."""
    env = make_env(GAME)
    env.unwrapped.opponent = opponent(rival, GAME, seed=7)
    counts = np.zeros((2, 3), int)
    for seed in range(games):
        obs, info = env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            with torch.inference_mode():
                action = int(model.greedy(torch.as_tensor(obs).unsqueeze(0))[0])
            obs, reward, terminated, truncated, _ = env.step(action)
            total, done = total + reward, terminated or truncated
        counts[info["seat"], 0 if total > 0 else 1 if total == 0 else 2] += 1
    env.close()
    return ["/".join(map(str, row)) for row in counts]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default="apex-dqn")
    p.add_argument("--opening", type=int, default=4, help="random plies before each training game, at most")
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--mode", default="pfsp")
    p.add_argument("--fixed", default="random,heuristic", help="the league's fixed players")
    p.add_argument("--total-steps", type=int, default=1_000_000, help="env steps per learning player")
    p.add_argument("--slice-steps", type=int, default=10_000)
    p.add_argument("--snapshot-steps", type=int, default=100_000)
    p.add_argument("--games", type=int, default=200, help="games against each fixed player, seats alternating")
    add_flag(p)
    args = p.parse_args()
    writer = start(["league-connect-four", "league-connect-four-snapshots"], p, args,
                   keep=("system", "opening", "seeds", "mode", "fixed", "total_steps", "slice_steps",
                         "snapshot_steps", "games"))
    game = f"{GAME}?opening={args.opening}" if args.opening else GAME
    table = Table("seed", "env steps", "wall s", "vs heuristic, first seat (W/D/L)", "second seat (W/D/L)",
                  "vs random, first seat (W/D/L)", "second seat (W/D/L)")
    snapshots = Table("snapshot", "env steps", "Elo in the league", "vs heuristic, first seat (W/D/L)",
                      "second seat (W/D/L)")
    with tempfile.TemporaryDirectory() as d:
        for seed in args.seeds:
            folder = Path(d) / f"seed-{seed}"
            t0 = time.perf_counter()
            summary = finished(distrl.train_league(args.system, game, fixed=args.fixed, mode=args.mode, seed=seed,
                                          total_steps=args.total_steps, slice_steps=args.slice_steps,
                                          snapshot_steps=args.snapshot_steps, run_dir=str(folder)))
            wall = time.perf_counter() - t0
            policy = distrl.load_policy(summary["main_run_dir"])
            table.row(seed, f"{summary['players'][0]['env_steps']:,}", f"{wall:.0f}",
                      *results(policy.model, "heuristic", args.games), *results(policy.model, "random", args.games))
            if seed != args.seeds[0]:
                continue
            ratings = json.loads((folder / "state.json").read_text())["ratings"]
            joined = [line.split(",") for line in (folder / "joined.csv").read_text().splitlines()[1:]]
            for _, snapshot, player, steps, *_ in joined:
                if player == "main":
                    policy.model.load_state_dict(load_file(folder / "pool" / f"{snapshot}.safetensors"))
                    snapshots.row(snapshot, f"{int(steps):,}", f"{ratings[snapshot]:.0f}",
                                  *results(policy.model, "heuristic", args.games))
            for name in args.fixed.split(","):
                snapshots.row(name, "", f"{ratings[name]:.0f}", "", "")
    if writer:
        writer.write({"league-connect-four": str(table), "league-connect-four-snapshots": str(snapshots)})
    else:
        print(snapshots)


if __name__ == "__main__":
    main()
