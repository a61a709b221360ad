"""Asynchronous PBT (Jaderberg et al. 2017, arXiv:1711.09846, sections 3-4): no barrier between members.

Every member trains ``ready_steps`` env steps and is then *ready*: it is ranked against the latest
scores of all members; if it is in the bottom ``fraction`` it copies a member of the top ``fraction``
(exploit: weights, optimizer state and hyperparameters) and perturbs the hyperparameters (explore);
then it trains on. ``exploit=False`` (every ready member perturbs its own hyperparameters) and
``explore=False`` (copies unchanged) are the paper's ablations (Figure 2); both False is a grid of
fixed members. ``inherit_hyperparameters=False`` copies weights only and perturbs the member's own
hyperparameters, as in the paper's toy example.

The controller speaks to a pool (:mod:`distrl.pbt.members`): ``submit(i, steps)``, ``wait_any()``,
``copy(source, target, hyperparameters)`` (the copy's checksum, None where nothing was copied),
``set_hyperparameters(i, values)``; the toy problem in the tests brings its own pool, which is how the rule is
checked apart from any RL system.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distrl.ops.pbt import truncation_source


@dataclass
class MemberRecord:
    hyperparameters: dict[str, float]
    env_steps: int = 0
    score: float = float("-inf")
    done: bool = False
    node: str = ""


@dataclass
class Controller:
    pool: Any
    records: list[MemberRecord]
    ready_steps: int
    total_steps: int
    perturb: Callable[[Mapping[str, float], np.random.Generator], dict[str, float]]
    rng: np.random.Generator
    fraction: float = 0.2
    exploit: bool = True
    explore: bool = True
    inherit_hyperparameters: bool = True  # exploit copies them too (the paper's RL runs); False: weights only (its toy)
    on_ready: Callable[[int, MemberRecord], None] = lambda i, r: None
    on_exploit: Callable[[dict], None] = lambda event: None
    on_decided: Callable[[], None] = lambda: None  # after a ready member's exploit/explore
    exploits: int = 0
    started: float = field(default_factory=time.perf_counter)

    def run(self) -> None:
        for i, r in enumerate(self.records):
            if not r.done and r.env_steps < self.total_steps:
                self.pool.submit(i, self._slice(r))
        while self.pool.pending():
            i, result = self.pool.wait_any()
            r = self.records[i]
            r.env_steps, r.score, r.node = int(result["env_steps"]), float(result["score"]), result.get("node", "")
            r.hyperparameters = dict(result.get("hyperparameters", r.hyperparameters))
            r.done = bool(result.get("done")) or r.env_steps >= self.total_steps
            self.on_ready(i, r)
            if not r.done:
                self.ready(i)
                self.pool.submit(i, self._slice(r))
            self.on_decided()

    def ready(self, i: int) -> None:
        """Exploit and explore for member ``i``, which has just finished a slice."""
        r = self.records[i]
        scores = [m.score for m in self.records]
        source = truncation_source(i, scores, self.rng, self.fraction) if self.exploit else None
        if source is not None:
            before = dict(r.hyperparameters)
            start = self.records[source].hyperparameters if self.inherit_hyperparameters else r.hyperparameters
            new = self.perturb(start, self.rng) if self.explore else dict(start)
            checksum = self.pool.copy(source, i, new)
            if checksum is None:  # the source's actor died before it answered: no copy, the member trains on
                return
            self.exploits += 1
            r.hyperparameters = new
            self.on_exploit({"wall_s": round(time.perf_counter() - self.started, 3), "member": i,
                             "env_steps": r.env_steps, "source": source, "member_score": _num(scores[i]),
                             "source_score": _num(scores[source]), "before": before, "after": new,
                             "checksum": checksum})
        elif self.explore and not self.exploit:
            r.hyperparameters = self.perturb(r.hyperparameters, self.rng)
            self.pool.set_hyperparameters(i, r.hyperparameters)

    def _slice(self, r: MemberRecord) -> int:
        return max(1, min(self.ready_steps, self.total_steps - r.env_steps))


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None
