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
