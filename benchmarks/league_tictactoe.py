"""Tic-tac-toe by self-play: does ``distrl league``'s main agent never lose to a perfect (minimax) player, in either
seat, and beat a random one?

For each mode (AlphaStar's prioritized fictitious self-play, ``pfsp``, and naive self-play, ``naive``) and seed, a
league of PPO players (batches of 8 envs x 128 steps, entropy bonus 0.02) with a fixed random player in it trains
``--total-steps`` env steps per player; then its main agent plays greedily 200 games against minimax and 200 against
a uniformly random player (``distrl eval --opponent``, seats alternating: 100 as the first player, 100 as the
second). The claim (issue #60): no loss to minimax in either seat, and at least 95% wins against random.

    python benchmarks/league_tictactoe.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, start  # noqa: E402  (the benchmarks folder's own helper)

GAME = "pettingzoo:classic.tictactoe_v3"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--modes", nargs="+", default=["pfsp", "naive"])
    p.add_argument("--players", default="main=1")
    p.add_argument("--fixed", default="random")
    p.add_argument("--total-steps", type=int, default=200_000, help="env steps per learning player")
    p.add_argument("--slice-steps", type=int, default=10_000)
    p.add_argument("--snapshot-steps", type=int, default=20_000)
    add_flag(p)
    args = p.parse_args()
    writer = start(["league-tictactoe"], p, args, keep=("seeds", "modes", "players", "fixed", "total_steps",
                                                        "slice_steps", "snapshot_steps"))
    settings = {"num_envs": 8, "unroll_length": 128, "entropy_coef": 0.02}
    table = Table("mode", "seed", "env steps", "wall s", "vs minimax, first seat (W/D/L)", "second seat (W/D/L)",
                  "vs random, first seat (W/D/L)", "second seat (W/D/L)")
    with tempfile.TemporaryDirectory() as d:
        for mode in args.modes:
            for seed in args.seeds:
                folder = Path(d) / f"{mode}-{seed}"
                t0 = time.perf_counter()
                summary = distrl.train_league("ppo", GAME, players=args.players, fixed=args.fixed, mode=mode,
                                              seed=seed, total_steps=args.total_steps, slice_steps=args.slice_steps,
                                              snapshot_steps=args.snapshot_steps, run_dir=str(folder),
                                              settings=settings)
                wall = time.perf_counter() - t0
                main_dir = summary["main_run_dir"]
                perfect = distrl.evaluate(main_dir, episodes=200, opponent="minimax")
                rand = distrl.evaluate(main_dir, episodes=200, opponent="random")
                seats = ["/".join(str(s[k]) for k in ("wins", "draws", "losses")) for r in (perfect, rand)
                         for s in r["seats"]]
                table.row(mode, seed, f"{summary['players'][0]['env_steps']:,}", f"{wall:.0f}", *seats)
    if writer:
        writer.write({"league-tictactoe": str(table)})


if __name__ == "__main__":
    main()
