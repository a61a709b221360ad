"""A run that sizes itself (``--set autoscale=on``): the number of actors adapted while the run goes on.

The design survey's last open problem is "system designs that sense RL's optimisation needs, such as dynamic
resource awareness"; peers fix their actors at launch. The run already measures what decides it: the learner's
wait (starved: more actors would feed it), the actors' blocked time (they wait for the learner: fewer would leave it
the cores) and env steps/s. The controller moves in the direction those signals name and keeps a move only if the
env steps/s it then measures confirm it, so the signals choose where to look and the throughput decides:

- every window (``WINDOW_S`` and at least ``MIN_REPORTS`` reports, after ``SETTLE_S`` for new processes to start;
  with a replay, the first one after the learner starts is a warm-up), it measures env steps/s, the learner's wait
  fraction, the elastic role's blocked fraction and the share of time the learner's machine's cores were busy;
- starved (learner wait w > ``STARVED``) while the cores are busy (> ``SATURATED``), and above ``min_actors``: try
  n / 2 first; an actor more would find no idle core, and the actors may be what starves the learner by taking its
  cores (8 Ray actors and a learner on two cores stepped 0.84 of what 1 actor did);
- starved and below ``max_actors``: try n / (1 - w) actors, the count that would keep the learner busy if actors
  added steps linearly; blocked (actors blocked b > ``BLOCKED``, learner wait < ``BUSY``) and above
  ``min_actors``: try n (1 - b), as many steps from fewer actors;
- a move up is kept if env steps/s rose by ``GAIN``; a move down if they fell by less than ``GAIN`` (fewer actors
  for the same speed leave cores to the rest); a move not kept is undone and bounds later moves that way, and a
  move kept bounds later moves back: each next try goes at most halfway, so the count settles by bisection;
- no window is measured while retired actors' last steps are still arriving or new actors have not yet stepped
  (for at most ``WAIT_S`` after a change: an actor the cluster has no core for adds nothing, and is undone).

The backend's ``scale`` starts parked actors or retires running ones after their steps in flight are back (nothing
made is lost). Each change is a row of ``run_dir/autoscale.csv``; ``metrics.csv`` has an ``actors`` column and the
summary says where it settled and why.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import psutil

from distrl.runtime.run.observers import Observer
from distrl.runtime.run.run_dir import append_record

WINDOW_S = 4.0  # seconds of measurement per decision
SETTLE_S = 1.5  # seconds after a change before measuring (processes starting, pipelines refilling)
STARVED = 0.2  # the learner waits more than this share of its time: the actors do not feed it
BUSY = 0.1  # the learner waits less than this: it is the bottleneck
BLOCKED = 0.5  # the actors wait for a grant more than this share of their time
GAIN = 0.05  # a relative change of env steps/s that counts as real
SATURATED = 0.9  # the machine's cores are busy more than this share of their time: no core is left to add
WAIT_S = 30.0  # the longest a window waits for retiring actors to finish and new ones to step
MIN_REPORTS = 3  # a window lasts until reports with env steps arrived in this many iterations (two intervals)
COLUMNS = ("wall_s", "env_steps", "actors_before", "actors", "sps", "learner_wait", "actors_blocked", "cpu_busy", "why")


@dataclass(frozen=True)
class Window:
    """What one window measured."""

    actors: int
    sps: float
    learner_wait: float  # share of the learner's time spent waiting for data (nan: it did not run)
    actors_blocked: float  # share of the actors' time spent waiting for a grant (nan: not measured)
    cpu_busy: float = math.nan  # share of the learner's machine's CPU time busy (every core; nan: not measured)


class ScalePolicy:
    """The decisions, apart from the clock and the backend: given a window's measurement, the next count and why."""

    def __init__(self, low: int, high: int, start: int):
        self.low, self.high, self.actors = low, high, min(max(start, low), high)
        self.sps: dict[int, float] = {}  # the latest env steps/s measured at each count
        self.came_from: int | None = None  # the count before the move under trial
        self.up_limit, self.down_limit = high + 1, low - 1  # counts a move that way was not worth
        self.why = f"{_actors(self.actors)}: where the run started"

    def decide(self, w: Window) -> tuple[int, str] | None:
        """A new count and the reason, or None to stay."""
        self.sps[w.actors] = w.sps
        if self.came_from is not None:
            verdict = self._judge(w)
            if verdict is not None:
                return verdict
        return self._propose(w)

    def _judge(self, w: Window) -> tuple[int, str] | None:
        before, after, old = self.sps.get(self.came_from, 0.0), w.sps, self.came_from
        self.came_from = None
        if w.actors > old and after <= before * (1 + GAIN):  # (nothing flowing either way is no gain)
            self.up_limit = w.actors
            return self._move(old, f"{_actors(old)}: {w.actors} stepped {after:,.0f}/s, no faster than {before:,.0f}/s")
        if w.actors < old and after < before * (1 - GAIN):
            self.down_limit = w.actors
            return self._move(old, f"{_actors(old)}: {w.actors} stepped {after:,.0f}/s, slower than {before:,.0f}/s")
        self.why += f" ({after:,.0f} env steps/s, {before:,.0f}/s with {old})"
        # kept: a later move back goes at most halfway to where it came from, so every move narrows the range and
        # the count settles (bisection) instead of going back and forth under noise
        if w.actors > old:
            self.down_limit = max(self.down_limit, old)
        else:
            self.up_limit = min(self.up_limit, old)
        return None

    def _propose(self, w: Window) -> tuple[int, str] | None:
        n, starved = w.actors, w.learner_wait > STARVED
        if starved and w.cpu_busy > SATURATED and n > self.low:
            # starved, yet no core is idle: an actor more would take its steps' time from the others and the
            # learner, and the actors may be what starves it; fewer is tried first, kept only if they step as fast
            # (once no count below is left to try, more is tried below: the cores may be busy with another program)
            target = self._down(max(self.low, n // 2))
            if target < n:
                self.came_from = n
                return self._move(target, f"{_actors(target)}: the learner waited {w.learner_wait:.0%} with {n} "
                                          f"while the cores were busy {w.cpu_busy:.0%}")
        if starved and n < self.high:
            # a learner busy (1 - wait) of its time would be busy all of it with n / (1 - wait) actors as fast
            wanted = max(n + 1, math.ceil(n / max(1.0 - w.learner_wait, 0.01)))
            target = min(self.high, wanted) if self.up_limit > self.high else (n + self.up_limit) // 2
            if target > n:
                self.came_from = n
                return self._move(target, f"{_actors(target)}: the learner waited {w.learner_wait:.0%} with {n}")
        blocked = not math.isnan(w.actors_blocked) and w.actors_blocked > BLOCKED
        if blocked and not w.learner_wait >= BUSY and n > self.low:
            # actors busy (1 - blocked) of their time: as many steps from n * (1 - blocked) of them
            wanted = min(n - 1, math.ceil(n * (1.0 - w.actors_blocked)))
            target = self._down(max(self.low, wanted))
            if target < n:
                self.came_from = n
                return self._move(target, f"{_actors(target)}: the actors were blocked {w.actors_blocked:.0%} of "
                                          f"their time with {n}, the learner waited {w.learner_wait:.0%}")
        return None

    def _down(self, wanted: int) -> int:
        """A move down to ``wanted``, or halfway to the count below that a move down was not worth."""
        return wanted if self.down_limit < self.low else -(-(self.actors + self.down_limit) // 2)

    def _move(self, target: int, why: str) -> tuple[int, str]:
        self.actors, self.why = target, why
        return target, why


class Autoscaler(Observer):
    """The controller on a trainer (an observer: it reads what the trainer measured and calls ``backend.scale``)."""

    def __init__(self, role: str, low: int, high: int, start: int, warm_up: bool = False, window_s: float = WINDOW_S,
                 settle_s: float = SETTLE_S):
        """``warm_up``: leave the first window unjudged (a learner that samples a replay starts while it fills)."""
        self.role, self.window_s, self.settle_s, self.warm_up = role, window_s, settle_s, warm_up
        self.policy = ScalePolicy(low, high, start)
        self.changes = 0
        self._mark = None  # (time, env steps, learner wait s, busy s, actors blocked s, busy s, CPU busy s, idle s)
        self._quiet_until = self._changed_at = 0.0
        self._arrivals: list = []  # [iteration, when, env steps] of the reports in the window, one per iteration
        self._iteration = 0
        self._warm = not warm_up

    def on_start(self, trainer) -> None:
        self._mark, self._quiet_until, self._arrivals, self._warm = None, 0.0, [], not self.warm_up

    def on_report(self, trainer, info: dict) -> None:
        if self._mark is None or not info.get("env_steps"):
            return
        if self._arrivals and self._arrivals[-1][0] == self._iteration:  # reports of one iteration: one arrival
            self._arrivals[-1][2] += info["env_steps"]
        else:
            self._arrivals.append([self._iteration, time.perf_counter(), info["env_steps"]])

    def on_step(self, trainer) -> None:
        self._iteration += 1
        now = time.perf_counter()
        if trainer.updates == 0 or now < self._quiet_until:  # starting up, or a change still settling
            return
        if trainer.backend.scaling(self.role) and now < self._changed_at + WAIT_S:
            self._mark = None  # retired actors' last steps still arriving, or new ones not yet stepping
            return
        if self._mark is None:
            self._mark, self._arrivals = self._read(trainer, now), []
            return
        if now - self._mark[0] < self.window_s or len(self._arrivals) < MIN_REPORTS:
            return
        mark = self._read(trainer, now)
        w = _window(self.policy.actors, self._mark, mark, self._arrivals)
        self._mark, self._arrivals = mark, []
        if not self._warm:  # the first window after a replay learner starts is its warm-up: unjudged
            self._warm = True
            return
        decision = self.policy.decide(w)
        if decision is None:
            return
        actors, why = decision
        trainer.backend.scale(self.role, actors)
        self.changes += 1
        self._mark, self._quiet_until, self._changed_at = None, now + self.settle_s, now
        append_record(trainer.run_dir / "autoscale.csv", dict(zip(COLUMNS, (
            round(trainer.wall_s, 3), trainer.env_steps, w.actors, actors, round(w.sps, 1), _rounded(w.learner_wait),
            _rounded(w.actors_blocked), _rounded(w.cpu_busy), why), strict=True)))

    def on_row(self, trainer, row: dict) -> None:
        row["actors"] = self.policy.actors

    def on_close(self, trainer, summary) -> None:
        if summary is not None:
            summary["autoscale"] = {"actors": self.policy.actors, "why": self.policy.why, "changes": self.changes,
                                    "sps_by_actors": {str(k): round(v, 1) for k, v in sorted(self.policy.sps.items())}}

    def _read(self, trainer, at: float) -> tuple:
        totals = trainer.ledger.totals
        blocked, busy = trainer.backend.role_activity(self.role)
        return (at, trainer.env_steps, totals.wait_s, totals.learn_s + totals.publish_s, blocked, busy) + _cpu_s()


def _window(actors: int, start: tuple, end: tuple, arrivals: list) -> Window:
    """The window's figures. Env steps/s from the reports' arrivals (``[iteration, time, env steps]``, the reports
    of one trainer iteration taken as one): the steps after the first arrival over the time from it to the last,
    exact for a steady stream however coarse its reports (an unroll of 8,192 env steps from each of few actors),
    where steps over the window's length would be off by up to a report."""
    t_first, t_last = arrivals[0][1], arrivals[-1][1]
    sps = sum(a[2] for a in arrivals[1:]) / (t_last - t_first) if t_last > t_first else 0.0
    waited, learned = end[2] - start[2], end[3] - start[3]
    blocked, busy = end[4] - start[4], end[5] - start[5]
    cpu_busy, cpu_idle = end[6] - start[6], end[7] - start[7]
    return Window(actors, sps, waited / (waited + learned) if waited + learned > 0 else math.nan,
                  blocked / (blocked + busy) if blocked + busy > 0 else math.nan,
                  cpu_busy / (cpu_busy + cpu_idle) if cpu_busy + cpu_idle > 0 else math.nan)


def _cpu_s() -> tuple[float, float]:
    """(busy, idle) seconds of this machine's cores so far, as ``psutil.cpu_percent`` counts them (waiting for I/O is
    idle; a guest's time is already in user time)."""
    t = psutil.cpu_times()._asdict()
    idle = t.pop("idle") + t.pop("iowait", 0.0)
    return sum(v for k, v in t.items() if k not in ("guest", "guest_nice")), idle


def _rounded(x: float) -> float | str:
    return "" if math.isnan(x) else round(x, 4)


def _actors(n: int) -> str:
    return f"{n} actor" if n == 1 else f"{n} actors"
