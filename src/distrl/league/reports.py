"""A league's pictures: the payoff matrix as a heatmap (``payoff.png``: row beats column, a draw counting half, every
game the league played) and each learning player's Elo rating over its env steps, with the snapshots marked where
they joined (``ratings.png``, from ``league.csv`` and ``joined.csv``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from distrl.runtime.run.run_dir import read_rows


def write_reports(league_dir: Path, coordinator) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with coordinator.lock:
        names = list(coordinator.matchmaker.payoff.players)
        matrix = coordinator.matchmaker.payoff.matrix()
    size = max(4.0, 0.45 * len(names) + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    image = ax.imshow(np.ma.masked_invalid(matrix), vmin=0.0, vmax=1.0, cmap="RdBu")
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player")
    ax.set_title("P[player beats opponent]\n(draws count half; blank: never played)", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(league_dir / "payoff.png", dpi=100)
    plt.close(fig)

    rows, joined = read_rows(league_dir / "league.csv"), read_rows(league_dir / "joined.csv")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for player in dict.fromkeys(r["player"] for r in rows):
        mine = [r for r in rows if r["player"] == player]
        ax.plot([int(r["env_steps"]) for r in mine], [float(r["rating"]) for r in mine], label=player)
    if joined:
        ax.scatter([int(r["env_steps"]) for r in joined], [float(r["rating"]) for r in joined], marker="v",
                   color="black", s=18, label="a snapshot joins", zorder=3)
    ax.set_xlabel("the player's env steps")
    ax.set_ylabel("Elo rating")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(league_dir / "ratings.png", dpi=100)
    plt.close(fig)
    return [league_dir / "payoff.png", league_dir / "ratings.png"]
