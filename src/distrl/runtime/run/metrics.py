"""Metrics rows to CSV and TensorBoard, and the run-level statistics every system reports."""

from __future__ import annotations

import csv
import math
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from distrl.runtime.run.run_dir import drop_torn_line

# Columns every metrics.csv starts with, in this order; system-specific loss terms follow.
BASE_COLUMNS = ["env_steps", "wall_s", "sps", "episode_return_mean", "episodes", "learner_updates",
                "learner_wait_frac", "policy_lag_mean", "actor_restarts"]


class MetricsWriter:
    """Appends one row per log interval to ``metrics.csv`` and the same scalars to TensorBoard.

    The header comes from the first row written (or is read back when a run resumes, so a resumed run
    continues the same table). A column that first appears later (an evaluation's result, a restart
    count) extends the header: the file is rewritten once with the new column, earlier rows blank in it.
    """

    def __init__(self, run_dir: Path, tensorboard: bool = True):
        self.path = Path(run_dir) / "metrics.csv"
        self.columns: list[str] | None = None
        if self.path.is_file() and self.path.stat().st_size > 0:
            drop_torn_line(self.path)  # once, as the run resumes: its own rows are written whole
            with self.path.open() as f:
                self.columns = next(csv.reader(f), None)
        self.tb = None
        if tensorboard:
            from torch.utils.tensorboard import (
                SummaryWriter,  # imported late: it is slow to import
            )

            self.tb = SummaryWriter(str(Path(run_dir) / "tensorboard"))

    def write(self, row: dict[str, Any]) -> None:
        if self.columns is None:
            extra = sorted(k for k in row if k not in BASE_COLUMNS)
            self.columns = [c for c in BASE_COLUMNS if c in row] + extra
            with self.path.open("w", newline="") as f:
                csv.writer(f).writerow(self.columns)
        elif new := sorted(k for k in row if k not in self.columns):
            self._extend(new)
        with self.path.open("a", newline="") as f:
            csv.writer(f).writerow([_fmt(row.get(c)) for c in self.columns])
        if self.tb is not None:
            step = int(row["env_steps"])
            for key, value in row.items():
                if key != "env_steps" and isinstance(value, (int, float)) and not math.isnan(value):
                    self.tb.add_scalar(key, value, step)

    def _extend(self, new: list[str]) -> None:
        with self.path.open(newline="") as f:
            rows = list(csv.reader(f))[1:]
        self.columns = self.columns + new
        tmp = self.path.with_suffix(".csv.tmp")
        with tmp.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            w.writerows(r + [""] * len(new) for r in rows)
        tmp.replace(self.path)

    def close(self) -> None:
        if self.tb is not None:
            self.tb.flush()
            self.tb.close()


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


class EpisodeStats:
    """Returns and lengths of the most recent ``window`` finished episodes; ``count`` over all of them, and
    ``total``/``summed`` (the sum of every finite return, and how many those were), so that the mean of any span of
    episodes is a difference of two readings (a non-finite return is left out of it, not carried forever)."""

    def __init__(self, window: int = 100):
        self.returns: deque[float] = deque(maxlen=window)
        self.lengths: deque[int] = deque(maxlen=window)
        self.count = 0
        self.total, self.summed = 0.0, 0

    def add(self, returns, lengths) -> None:
        values = [float(r) for r in returns]  # a few per actor output: Python's floats cost less than numpy's calls
        self.returns.extend(values)
        self.lengths.extend(int(n) for n in lengths)
        self.count += len(values)
        finite = [v for v in values if math.isfinite(v)]
        self.total += sum(finite)
        self.summed += len(finite)

    @property
    def mean_return(self) -> float:
        return float(np.mean(self.returns)) if self.returns else float("nan")

    def state(self) -> dict:
        return {"returns": list(self.returns), "lengths": list(self.lengths), "count": self.count, "total": self.total,
                "summed": self.summed}

    def load(self, state: dict) -> None:
        self.returns.extend(state.get("returns", []))
        self.lengths.extend(state.get("lengths", []))
        self.count = state.get("count", 0)
        window = [r for r in self.returns if math.isfinite(r)]  # a checkpoint from before the total was kept
        self.total, self.summed = float(state.get("total", sum(window))), int(state.get("summed", len(window)))


def learner_waits(frac: float) -> str:
    """The learner's share of waiting in words; NaN (no learner time: nothing left to train, or a run stopped
    before its first batch) says so rather than "waits nan%"."""
    return f"learner waits {frac:.0%} of its time for data" if frac == frac else "the learner did not run"


def bottleneck(learner_wait_frac: float, actor_block_frac: float, transport_frac: float) -> tuple[str, str]:
    """Name the bottleneck from the time split, with the numbers behind the verdict; a verdict never
    contradicts its numbers.

    - learner-bound: actors spend their time blocked on a full pipeline while the learner never waits;
    - actor-bound: the learner waits for data while actors are busy stepping envs;
    - pipeline-bound: both sides wait (the learner for data, actors for free slots): too few outputs in
      flight between them, or start-up still dominates a short run;
    - transport-bound: moving data (copies, queues, weight syncs) takes the largest share.
    """
    numbers = (f"{learner_waits(learner_wait_frac)}, actors are blocked {actor_block_frac:.0%} of theirs on a full "
               f"pipeline, transport takes {transport_frac:.0%}")
    if transport_frac >= max(learner_wait_frac, actor_block_frac, 0.25):
        return "transport-bound", numbers
    return who_waits(learner_wait_frac >= 0.2, actor_block_frac >= 0.2, "pipeline-bound"), numbers


def blocked_fraction(role_time: dict[str, float]) -> float:
    """The share of a role's time (``block_s`` + ``busy_s``, as in ``summary.json``'s ``role_time_s``) spent
    waiting; 0 for a role with no recorded time."""
    total = role_time["block_s"] + role_time["busy_s"]
    return role_time["block_s"] / total if total > 0 else 0.0


def fed_bottleneck(learner_wait_frac: float, actor_block_frac: float, transport_frac: float,
                   feeders: dict[str, dict[str, float]]) -> tuple[str, str]:
    """:func:`bottleneck` where each role's time is known (the ``local`` runtime times every component): when the
    learner waits for data, the limit is the role that writes what it reads, which need not be the actors (QT-Opt's
    trainer reads targets from Bellman updaters, and its actors are paced to the trainer on purpose).
    ``feeders``: per role that emits into a service the learner uses, its summed ``busy_s`` (in ``step``, less
    what the component reported as ``idle_s``: a step that found nothing to do) and ``block_s`` (waiting for a
    grant, a full pipeline or a rate limiter, plus those idle seconds).

    - ``<role>-bound`` (e.g. actor-bound, updater-bound): the learner waits and every feeding role is busy
      (blocked under 20% of its time);
    - pipeline-bound: the learner waits and a feeding role is blocked too.
    Otherwise as :func:`bottleneck`.
    """
    verdict, numbers = bottleneck(learner_wait_frac, actor_block_frac, transport_frac)
    timed = {role: t for role, t in feeders.items() if t["block_s"] + t["busy_s"] > 0}  # a role never granted: unknown
    if verdict == "transport-bound" or not learner_wait_frac >= 0.2 or not timed:  # (NaN: no learner time at all)
        return verdict, numbers
    blocked = {role: blocked_fraction(t) for role, t in timed.items()}
    numbers += "; the learner reads from " + ", ".join(f"{role} (blocked {f:.0%})" for role, f in blocked.items())
    if all(f < 0.2 for f in blocked.values()):
        return "/".join(blocked) + "-bound", numbers
    return "pipeline-bound", numbers


def inference_bottleneck(learner_wait_frac: float, actor_idle_frac: float) -> tuple[str, str]:
    """SEED's verdict: actors wait for actions rather than for queue space, so "idle" means waiting on the
    inference server (its batching, forward passes and the transport)."""
    numbers = f"{learner_waits(learner_wait_frac)}, actors wait {actor_idle_frac:.0%} of theirs for actions"
    return who_waits(learner_wait_frac >= 0.2, actor_idle_frac >= 0.5, "inference-bound"), numbers


def who_waits(learner_waits: bool, actors_wait: bool, both: str) -> str:
    """The verdict of who waits on whom: both (``both``: what sits between them), the learner (for the actors:
    actor-bound), the actors (for the learner: learner-bound), or neither (balanced)."""
    if learner_waits and actors_wait:
        return both
    if learner_waits:
        return "actor-bound"
    return "learner-bound" if actors_wait else "balanced"
