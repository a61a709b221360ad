"""Learning curves from ``metrics.csv``: return against env steps and against wall time, runs overlaid."""

from __future__ import annotations

import csv
from pathlib import Path

from distrl.errors import ConfigError


def read_curve(run_dir: str | Path) -> list[tuple[int, float, float]]:
    """(env steps, training wall s, mean training return of the last 100 episodes; NaN before the first
    episode ends) for each row of a run's ``metrics.csv``."""
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        raise ConfigError(f"'{run_dir}' has no metrics.csv (is it a run dir?)")
    with path.open() as f:
        return [(int(row["env_steps"]), float(row["wall_s"]), float(row.get("episode_return_mean") or "nan"))
                for row in csv.DictReader(f)]


def plot_curves(series: list[tuple[str, list]], output: str | Path, threshold: float | None = None,
                title: str | None = None) -> str:
    """Curves side by side: return against env steps and against wall time; ``series`` is (label, points)
    or (label, points, color) with points as :func:`read_curve` gives them (a label starting with "_" stays
    out of the legend: the other seeds of a group); ``threshold`` draws the solved line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_steps, ax_time) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, points, *color in series:
        steps, wall, ret = zip(*points) if points else ((), (), ())
        style = {"color": color[0]} if color and color[0] else {}
        ax_steps.plot(steps, ret, label=label, **style)
        ax_time.plot(wall, ret, label=label, **style)
    for ax, xlabel in ((ax_steps, "env steps"), (ax_time, "wall time (s)")):
        if threshold is not None:
            ax.axhline(threshold, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean episode return (last 100)")
        ax.grid(alpha=0.3)
    if title:
        ax_steps.set_title(title)
    ax_time.legend(fontsize=7 if len(series) > 6 else 8, loc="lower right")
    fig.tight_layout()
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return str(output)


def plot_runs(run_dirs: list[str], output: str) -> str:
    return plot_curves([(Path(d).name, read_curve(d)) for d in run_dirs], output)


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
