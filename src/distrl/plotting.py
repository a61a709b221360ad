"""Learning curves from ``metrics.csv``: return against env steps and against wall time, runs overlaid."""

from __future__ import annotations

import csv
from pathlib import Path

from distrl.errors import ConfigError


def _read(run_dir: Path) -> dict[str, list[float]]:
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        raise ConfigError(f"'{run_dir}' has no metrics.csv (is it a run dir?)")
    cols: dict[str, list[float]] = {"env_steps": [], "wall_s": [], "episode_return_mean": []}
    with path.open() as f:
        for row in csv.DictReader(f):
            if row.get("episode_return_mean"):
                for k in cols:
                    cols[k].append(float(row[k]))
    return cols


def plot_runs(run_dirs: list[str], output: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = [(Path(d), _read(Path(d))) for d in run_dirs]
    fig, (ax_steps, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
    for path, cols in data:
        ax_steps.plot(cols["env_steps"], cols["episode_return_mean"], label=path.name)
        ax_time.plot(cols["wall_s"], cols["episode_return_mean"], label=path.name)
    ax_steps.set_xlabel("env steps")
    ax_time.set_xlabel("wall time (s)")
    for ax in (ax_steps, ax_time):
        ax.set_ylabel("mean episode return (last 100)")
        ax.grid(alpha=0.3)
    ax_steps.legend(fontsize=8)
    fig.tight_layout()
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output


def is_population(path: str | Path) -> bool:
    return (Path(path) / "pbt.json").is_file()


def plot_population(pop_dir: str | Path, output: str) -> str:
    """A PBT population: every member's score and each explored hyperparameter against its env steps
    (from ``population.csv``), exploits marked where they happened (``lineage.csv``)."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pop_dir = Path(pop_dir)
    if not (pop_dir / "population.csv").is_file():
        raise ConfigError(f"population '{pop_dir}' has no population.csv yet (no member finished a slice)")
    names = [spec.split("=", 1)[0].strip() for spec in json.loads((pop_dir / "pbt.json").read_text())["explore"]]
    members: dict[int, list[dict]] = {}
    with (pop_dir / "population.csv").open() as f:
        for row in csv.DictReader(f):
            members.setdefault(int(row["member"]), []).append(row)
    with (pop_dir / "lineage.csv").open() as f:
        exploits = list(csv.DictReader(f))
    fig, axes = plt.subplots(1, 1 + len(names), figsize=(5 * (1 + len(names)), 4), squeeze=False)
    ax_score, ax_hyper = axes[0][0], axes[0][1:]
    for m, rows in sorted(members.items()):
        steps = [int(r["env_steps"]) for r in rows]
        line, = ax_score.plot(steps, [float(r["score"]) if r["score"] else float("nan") for r in rows], label=f"m{m}")
        for ax, name in zip(ax_hyper, names):
            ax.step(steps, [float(r[name]) for r in rows], where="pre", color=line.get_color())
        for e in (e for e in exploits if int(e["member"]) == m):
            ax_score.axvline(int(e["env_steps"]), color=line.get_color(), alpha=0.25, lw=0.8)
    ax_score.set_ylabel("score (mean return of the slice)")
    for ax, name in zip(ax_hyper, names):
        ax.set_ylabel(name)
        values = [float(r[name]) for rows in members.values() for r in rows]
        if values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")
    for ax in axes[0]:
        ax.set_xlabel("member env steps")
        ax.grid(alpha=0.3)
    ax_score.legend(fontsize=8)
    fig.suptitle(f"PBT: {len(members)} members, {len(exploits)} exploits (faint lines)")
    fig.tight_layout()
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output
