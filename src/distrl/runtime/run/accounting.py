"""What a trainer counts: env steps, episodes, policy lag and where the time went, per metrics row and
over the whole run; and the summary with its bottleneck verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distrl.runtime.run.metrics import (
    EpisodeStats,
    fed_bottleneck,
    inference_bottleneck,
)

# info keys the trainer accounts itself; any other number a component reports becomes an ``actor_<key>`` column
ACCOUNTED = {"env_steps", "version", "episode_returns", "episode_lengths", "env_s", "infer_s", "pid",
             "seed", "actor_index", "metrics", "transport_bytes", "idle_s", "policy"}


@dataclass
class Interval:
    """Sums since the last metrics row (or, for :class:`Totals`, since the run started)."""

    steps: int = 0
    startup_s: float = 0.0  # the learner's wait for its first batch (processes starting), not counted as wait
    wait_s: float = 0.0
    learn_s: float = 0.0
    publish_s: float = 0.0
    env_s: float = 0.0
    infer_s: float = 0.0
    worker_learn_s: float = 0.0
    transport_bytes: int = 0  # moved between processes: outputs and weights pulled (the components count them)
    lag: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)

    def add_info(self, info: dict, learner_version: int) -> None:
        steps = info.get("env_steps", 0)
        self.steps += steps
        # policy lag: versions between the weights that made the data and the ones it trains; gradient-sharing
        # workers measure it themselves (updates by others between their pull and their push)
        if "staleness" in info:
            self.lag.append(info["staleness"])
        elif "version" in info and steps:
            self.lag.append(learner_version - info["version"])
        self.add_work(info)
        for key, value in info.get("metrics", {}).items():  # named columns (e.g. eval_return_mean)
            self.metrics.setdefault(key, []).append(value)
        for key, value in info.items():
            if key not in ACCOUNTED and isinstance(value, (int, float)) and not isinstance(value, bool):
                self.metrics.setdefault(f"actor_{key}", []).append(value)

    def add_work(self, info: dict) -> None:
        """A component's seconds and bytes (what the whole run's totals keep of a report)."""
        self.env_s += info.get("env_s", 0.0)
        self.infer_s += info.get("infer_s", 0.0)
        self.worker_learn_s += info.get("learn_s", 0.0)
        self.transport_bytes += info.get("transport_bytes", 0)

    def add_metrics(self, metrics: dict) -> None:
        for k, v in metrics.items():
            self.metrics.setdefault(k, []).append(v)


class Ledger:
    """What a run counts besides its env steps: sums per metrics row (``interval``) and over the run (``totals``),
    episodes, policy lags, and whole-session sums of the learner metrics the summary reports as means."""

    def __init__(self, summary_metrics=()):
        self.episodes = EpisodeStats()
        self.totals, self.interval = Interval(), Interval()
        self.lags: list[float] = []
        self.sums = {k: [0.0, 0] for k in summary_metrics}

    def report(self, info: dict, version: int) -> None:
        """A component's report; ``version``: the learner's when it was collected."""
        self.interval.add_info(info, version)
        self.totals.add_work(info)
        if "episode_returns" in info:
            self.episodes.add(info["episode_returns"], info["episode_lengths"])

    def learned(self, metrics: dict, wait_s: float, learn_s: float) -> None:
        """An update: the seconds waited for its data and spent in it, and its metrics."""
        for iv in (self.interval, self.totals):
            iv.wait_s += wait_s
            iv.learn_s += learn_s
        self.interval.add_metrics(metrics)
        for key, sums in self.sums.items():
            if key in metrics:
                sums[0] += metrics[key]
                sums[1] += 1

    def published(self, seconds: float) -> None:
        self.interval.publish_s += seconds
        self.totals.publish_s += seconds

    def waited(self, seconds: float, starting: bool) -> None:
        """An iteration without an update (before the first one: start-up, not counted as the learner's wait)."""
        if starting:
            self.totals.startup_s += seconds
        else:
            self.interval.wait_s += seconds
            self.totals.wait_s += seconds

    def take_interval(self) -> Interval:
        """The sums since the last row; a new interval starts."""
        done, self.interval = self.interval, Interval()
        self.lags.extend(done.lag)
        return done

    def all_lags(self) -> list[float]:
        return self.lags + self.interval.lag


def row(env_steps: int, wall_s: float, dt: float, iv: Interval, episodes: EpisodeStats, updates: int,
        restarts: int) -> dict[str, Any]:
    busy = iv.wait_s + iv.learn_s
    out = {"env_steps": env_steps, "wall_s": wall_s, "sps": iv.steps / max(dt, 1e-9),
           "episode_return_mean": episodes.mean_return, "episodes": episodes.count, "learner_updates": updates,
           "learner_wait_frac": iv.wait_s / busy if busy > 0 else float("nan"),
           "policy_lag_mean": float(np.mean(iv.lag)) if iv.lag else float("nan"), "actor_restarts": restarts,
           # where the time went in this interval (actor seconds are summed over actors)
           "time_env_s": iv.env_s, "time_inference_s": iv.infer_s, "time_learn_s": iv.learn_s,
           "time_wait_s": iv.wait_s, "time_transport_s": iv.publish_s,
           "time_worker_learn_s": iv.worker_learn_s,  # learning done in components (A3C, GORILA, QT-Opt's updaters)
           "bytes_per_env_step": iv.transport_bytes / iv.steps if iv.steps else float("nan")}
    for k, v in iv.metrics.items():
        out[k] = float(np.mean(v))
    return out


def verdict(totals: Interval, actor: dict, services: dict, workers_learn: bool, served: bool,
            feeders: dict[str, dict[str, float]] | None = None, one_process: bool = False) -> tuple[str, str, float]:
    """The bottleneck verdict, the numbers behind it, and the learner's wait fraction. ``feeders``: the time split
    of each role that writes what the learner reads, where the backend times roles apart (``local``).
    ``one_process`` (``inline``): acting and learning take turns, so the learner's wait is the acting's share, the
    bound is the side with the larger share, and there is no pipeline or transport to speak of."""
    learner_total = totals.wait_s + totals.learn_s + totals.publish_s
    wait_frac = totals.wait_s / learner_total if learner_total > 0 and not workers_learn else float("nan")
    actor_time = max(totals.env_s + totals.infer_s + actor.get("block_s", 0.0) + actor.get("transport_s", 0.0), 1e-9)
    block_frac = actor.get("block_s", 0.0) / actor_time
    transport_frac = (actor.get("transport_s", 0.0) + totals.publish_s) / (actor_time + learner_total)
    if workers_learn:  # the workers learn themselves (no learner waits for them): split their time instead
        work = max(totals.env_s + totals.infer_s + totals.worker_learn_s, 1e-9)
        grad_frac = totals.worker_learn_s / work
        return ("gradient-bound" if grad_frac >= 0.5 else "env-bound",
                f"workers spend {1 - grad_frac:.0%} of their busy time stepping envs and choosing actions "
                f"and {grad_frac:.0%} computing and applying gradients", wait_frac)
    if one_process and not served and wait_frac == wait_frac:  # the side that takes the larger turn
        return ("actor-bound" if wait_frac >= 0.5 else "learner-bound",
                f"one process, acting and learning in turn: acting takes {wait_frac:.0%} of its time, learning "
                f"{1 - wait_frac:.0%}", wait_frac)
    if served and "actor_idle_frac" in services:
        return (*inference_bottleneck(wait_frac, services["actor_idle_frac"]), wait_frac)
    return (*fed_bottleneck(wait_frac, block_frac, transport_frac, feeders or {}), wait_frac)


def feeders(program, role_times: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The time split of each role that writes what the learner reads (its channel or one of its replays), from
    the backend's per-role times (only ``local`` has them: elsewhere none, and the verdict stays the plain one)."""
    reads = (*program.learner_uses, program.consumes)
    return {r.name: role_times[r.name] for r in program.roles
            if r.emits is not None and r.emits in reads and r.name in role_times}


def num(x: float | None):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)
